// Versioning and Object Lock at the S3 edge: the versionId parameter, the
// x-amz-version-id / x-amz-delete-marker / x-amz-object-lock-* response
// headers, the lock headers of writes and the bypass header. The rules
// themselves are object/lock.h's.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "http/request.h"
#include "object/engine.h"
#include "s3/errors.h"
#include "s3/ops/op_context.h"

namespace strata::s3 {

// ?versionId=: nullopt when absent; InvalidArgument when empty or malformed.
std::variant<object::Version, Error> RequestVersion(const Route& route);
// The same for a value (x-amz-copy-source's versionId, DeleteObjects' VersionId).
std::variant<object::VersionSelector, Error> ParseRequestVersionId(std::string_view id);

// Whether responses about `bucket`'s objects name their versions (the bucket
// had versioning configured at least once, as AWS: never-versioned buckets
// send no x-amz-version-id).
inline bool NamesVersions(const object::BucketRecord& bucket) {
  return bucket.versioning != object::Versioning::kUnversioned;
}

// x-amz-version-id (when the bucket names versions) and the lock headers of
// a version (x-amz-object-lock-mode, -retain-until-date, -legal-hold).
void AddVersionHeaders(const object::BucketRecord& bucket, const object::ObjectRecord& rec,
                       http::Headers* h);

// The error for a GET/HEAD of a delete marker: NoSuchKey (404) when it is the
// latest, MethodNotAllowed (405) when named by versionId; both with
// x-amz-delete-marker: true and its x-amz-version-id.
Error DeleteMarkerError(const object::ObjectRecord& marker, bool named);

// The version a request on an existing object names (?versionId= or the
// latest) and its record: NoSuchKey / NoSuchVersion / NoSuchBucket, or
// DeleteMarkerError for a delete marker. `version` receives the selector of
// the version found (the latest's own id when none was named), so that a
// change made next applies to exactly that version even if a newer one is
// committed meanwhile.
std::variant<object::ObjectRecord, Error> RequestedVersion(OpContext& ctx,
                                                           object::Version* version);

// x-amz-object-lock-mode / -retain-until-date / -legal-hold of a write
// (PUT, COPY, CreateMultipartUpload): nullopt when none. Validated as AWS
// does: mode and date together, the date in the future, the bucket with
// Object Lock (InvalidRequest otherwise).
std::variant<std::optional<object::ObjectLock>, Error> LockFromRequest(
    const http::Request& req, const object::BucketRecord& bucket, int64_t now_ns);

// x-amz-bypass-governance-retention: true, from a caller allowed
// s3:BypassGovernanceRetention on `key` (s3/access.h; root always is, unless
// a bucket policy denies it). Without the permission the header is ignored,
// so a GOVERNANCE-locked version stays protected (AccessDenied).
bool BypassGovernance(OpContext& ctx, std::string_view key);

// "2030-01-01T00:00:00Z" / with a fraction / "+00:00": unix ns; nullopt if malformed.
std::optional<int64_t> ParseRetainUntil(std::string_view s);
std::string FormatRetainUntil(int64_t ns);

}  // namespace strata::s3

// Helpers shared by the operations that write object data (PutObject,
// UploadPart, CopyObject, UploadPartCopy, CompleteMultipartUpload, POST).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/checksum.h"
#include "object/engine.h"
#include "s3/ops/op_context.h"

namespace strata::s3 {

// Content-MD5 of the request: nullopt when absent, the 16 raw bytes, or InvalidDigest.
std::variant<std::optional<std::string>, Error> ContentMd5(const http::Request& req);
// A small configuration body against its Content-MD5 / x-amz-checksum-*:
// BadDigest (or the checksum's error) on a mismatch. `required`: as AWS for
// the calls that need one (lock, retention, CORS), InvalidRequest without.
std::optional<Error> CheckBodyIntegrity(OpContext& ctx, const std::string& body, bool required);

// Content-Type, Content-Encoding, ..., x-amz-meta-* of the request.
std::variant<object::ObjectHeaders, Error> HeadersFromRequest(const http::Request& req);

// Tags from an x-amz-tagging header ("k1=v1&k2=v2", URL-encoded).
std::variant<object::Tags, Error> ParseTaggingHeader(std::string_view header);
// AWS limits: at most 10 tags, unique keys of 1-128 and values of 0-256 characters.
// AWS's tag rules; at most `max_tags` (10 on objects, 50 on buckets).
std::optional<Error> ValidateTags(const object::Tags& tags, size_t max_tags = 10);

// x-amz-storage-class, validated; "" when absent or STANDARD.
std::variant<std::string, Error> StorageClassFromRequest(const http::Request& req);
// x-amz-expiration of the current version `rec` of `key` in the request's
// bucket (s3/ops/lifecycle_ops.cc): nullopt if no lifecycle rule expires it.
std::optional<std::string> ExpirationHeader(OpContext& ctx, const std::string& key,
                                            const object::ObjectRecord& rec);
// The cold tier (s3/ops/restore_ops.cc): whether `rec`'s data is archived
// (in a cold pool, no live restored copy: GET and copies refuse it), and
// its x-amz-restore header when a restore was requested.
bool Archived(const OpContext& ctx, const object::ObjectRecord& rec);
void AddRestoreHeader(const object::ObjectRecord& rec, http::Headers* h);
// The pool a storage class's data goes to ("" = the first pool).
std::string PoolOfClass(const ServiceConfig& config, const std::string& storage_class);

// An additional checksum (x-amz-checksum-*) that the request declares, in a
// header or as an aws-chunked trailer; computed over the body while it streams.
class ChecksumCheck {
 public:
  // Reads the request headers; `default_algorithm` applies when the request
  // names none (multipart uploads created with x-amz-checksum-algorithm).
  static std::variant<ChecksumCheck, Error> FromRequest(
      const http::Request& req, std::optional<ChecksumAlgorithm> default_algorithm = {});

  void Update(const char* data, size_t n) {
    if (hasher_) hasher_->Update(data, n);
  }
  // After the body: compares with the declared value (header or trailer).
  // On success value_base64() is the checksum to store (empty: none).
  std::optional<Error> Finish(const OpContext& ctx);
  std::optional<ChecksumAlgorithm> algorithm() const { return algorithm_; }
  const std::string& value_base64() const { return value_base64_; }
  const std::string& raw() const { return raw_; }

 private:
  std::optional<ChecksumAlgorithm> algorithm_;
  std::string declared_base64_;  // from a header, "" if none / trailer
  bool from_trailer_ = false;
  std::shared_ptr<Checksummer> hasher_;
  std::string value_base64_;
  std::string raw_;
};

// Reads the whole request body into `writer` (and the checksum), refusing
// more than max_bytes and checking the declared size.
std::optional<Error> StreamBodyInto(OpContext& ctx, object::ObjectWriter& writer,
                                    ChecksumCheck& checksum, uint64_t max_bytes);

// The size the client declared (x-amz-decoded-content-length or
// Content-Length); nullopt for chunked transfer; MissingContentLength if none.
std::variant<std::optional<uint64_t>, Error> DeclaredSize(const http::Request& req);

// If-Match / If-None-Match of a write, checked atomically at commit time.
using WriteCheck = std::function<Status(const std::optional<object::ObjectRecord>&)>;
WriteCheck WriteConditions(const http::Request& req);
// Maps the Status a WriteCheck returned (PreconditionFailed / NotFound).
Error WriteConditionError(const Status& status);

// True if the If-Match style header (list of etags or "*") names `etag`.
bool EtagMatches(const std::string& header, const std::string& etag);

// Adds x-amz-checksum-<alg> (and -type) of `rec` to the headers.
void AddChecksumHeaders(const object::ObjectRecord& rec, http::Headers* headers);

// InvalidArgument for encryption headers on an operation that does not apply
// them (s3/ops/sse.h HandlesEncryptionHeaders): refused, never ignored.
std::optional<Error> RefuseEncryptionHeaders(const http::Headers& headers);
// CreateBucket: the new bucket's object ownership (x-amz-object-ownership,
// default BucketOwnerEnforced) and stored ACL for `owner`;
// InvalidBucketAclWithObjectOwnership for an ACL beyond the owner's under
// BucketOwnerEnforced.
std::variant<std::pair<object::Ownership, std::string>, Error> NewBucketAcl(
    const OpContext& ctx, const std::string& owner);

}  // namespace strata::s3

// Access control at the S3 edge: who the caller is, which IAM actions a
// request needs on which resources, and the condition keys a policy may test
// (aws:SourceIp, s3:prefix, s3:ExistingObjectTag/<key>, ...). The decision
// itself is auth/authorizer.h's; this file only gathers what it needs. The
// bucket policies are compiled once per change (s3/bucket_configs.h) so a
// request parses no JSON.
#pragma once

#include <string>
#include <string_view>

#include "auth/authorizer.h"
#include "auth/policy.h"
#include "s3/bucket_configs.h"
#include "s3/ops/op_context.h"

namespace strata::s3 {

// "arn:aws:s3:::bucket" / "arn:aws:s3:::bucket/key".
std::string BucketArn(std::string_view bucket);
std::string ObjectArn(std::string_view bucket, std::string_view key);

// Checks everything the request's route needs before its handler runs: the
// route's action on its bucket or object (refined by versionId as AWS does:
// s3:GetObjectVersion, s3:DeleteObjectVersion, ...), the copy source's, and
// the extra actions of tagging and Object Lock headers. AccessDenied when
// refused. DeleteObjects and PostObject check their keys themselves, and
// PutObjectTagging / PutObjectRetention their action once the body is read
// (its tags / retention are condition keys): Allows.
OpResult AuthorizeRequest(OpContext& ctx);

// The route's IAM action as AWS refines it (s3:GetObjectVersion when a
// versionId is named, ...).
std::string_view RouteAction(const OpContext& ctx);

// Whether the caller may do `action` on `key` of the request's bucket ("" =
// the bucket itself), with the request's condition keys plus `extra` (keys
// known only once the body is read: the tags of PutObjectTagging, the
// retention of PutObjectRetention).
bool Allows(OpContext& ctx, std::string_view action, std::string_view key,
            const auth::MapConditionContext* extra = nullptr);

// What a new object's write options need besides s3:PutObject, as AWS:
// tags s3:PutObjectTagging, a retention s3:PutObjectRetention, a legal hold
// s3:PutObjectLegalHold (PUT / COPY / CreateMultipartUpload headers and POST
// form fields alike; `extra` as for Allows).
bool AllowsWriteOptions(OpContext& ctx, std::string_view key, bool tagging, bool retention,
                        bool legal_hold, const auth::MapConditionContext* extra = nullptr);

// The AccessDenied error every refusal returns.
Error AccessDeniedError();

}  // namespace strata::s3

// Turns an HTTP request into a typed S3 operation on (bucket, key).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "http/request.h"
#include "s3/errors.h"

namespace strata::s3 {

// Every operation strata serves, once. This table is the only list: it
// generates the Op enum below, the handler declarations (ops/op_context.h),
// the dispatch (s3/operations.cc) and the IAM actions.
//
//   X(Name, Action, SourceAction)
//   Name          the operation's AWS name (Op::k<Name>; handler `OpResult
//                 <Name>(OpContext&)`, defined in ops/*.cc; "Name" in logs)
//   Action        the IAM action the request needs on its bucket or object, as
//                 in AWS's "Actions defined by Amazon S3" (several operations
//                 share one: HeadObject is s3:GetObject, the multipart writes
//                 s3:PutObject, DeleteBucketTagging s3:PutBucketTagging);
//                 strata:Admin is strata's own
//   SourceAction  the action also needed on the copy source (x-amz-copy-source), or ""
//
// As at AWS, some requests need more than their row: DeleteObjects needs
// s3:DeleteObject on each key it names; GetObjectAttributes needs s3:GetObject
// as well; PutObject, CopyObject, CreateMultipartUpload and PostObject with
// tags (x-amz-tagging, a tagging field) also need s3:PutObjectTagging;
// writes with x-amz-object-lock-* also need s3:PutObjectRetention /
// s3:PutObjectLegalHold, and x-amz-bypass-governance-retention needs
// s3:BypassGovernanceRetention. Policy evaluation adds those.
#define STRATA_S3_OPERATIONS(X)                                \
  X(ListBuckets, "s3:ListAllMyBuckets", "")                    \
  X(CreateBucket, "s3:CreateBucket", "")                       \
  X(DeleteBucket, "s3:DeleteBucket", "")                       \
  X(HeadBucket, "s3:ListBucket", "")                           \
  X(GetBucketLocation, "s3:GetBucketLocation", "")             \
  X(ListObjectsV1, "s3:ListBucket", "")                        \
  X(ListObjectsV2, "s3:ListBucket", "")                        \
  X(DeleteObjects, "s3:DeleteObject", "")                      \
  X(PutObject, "s3:PutObject", "")                             \
  X(GetObject, "s3:GetObject", "")                             \
  X(HeadObject, "s3:GetObject", "")                            \
  X(DeleteObject, "s3:DeleteObject", "")                       \
  X(CopyObject, "s3:PutObject", "s3:GetObject")                \
  X(CreateMultipartUpload, "s3:PutObject", "")                 \
  X(UploadPart, "s3:PutObject", "")                            \
  X(UploadPartCopy, "s3:PutObject", "s3:GetObject")            \
  X(CompleteMultipartUpload, "s3:PutObject", "")               \
  X(AbortMultipartUpload, "s3:AbortMultipartUpload", "")       \
  X(ListParts, "s3:ListMultipartUploadParts", "")              \
  X(ListMultipartUploads, "s3:ListBucketMultipartUploads", "") \
  X(PutObjectTagging, "s3:PutObjectTagging", "")               \
  X(GetObjectTagging, "s3:GetObjectTagging", "")               \
  X(DeleteObjectTagging, "s3:DeleteObjectTagging", "")         \
  X(PutBucketTagging, "s3:PutBucketTagging", "")               \
  X(GetBucketTagging, "s3:GetBucketTagging", "")               \
  X(DeleteBucketTagging, "s3:PutBucketTagging", "")            \
  X(GetObjectAttributes, "s3:GetObjectAttributes", "")         \
  X(GetBucketVersioning, "s3:GetBucketVersioning", "")         \
  X(PutBucketVersioning, "s3:PutBucketVersioning", "")         \
  X(ListObjectVersions, "s3:ListBucketVersions", "")           \
  X(GetObjectLockConfiguration, "s3:GetBucketObjectLockConfiguration", "") \
  X(PutObjectLockConfiguration, "s3:PutBucketObjectLockConfiguration", "") \
  X(GetObjectRetention, "s3:GetObjectRetention", "")           \
  X(PutObjectRetention, "s3:PutObjectRetention", "")           \
  X(GetObjectLegalHold, "s3:GetObjectLegalHold", "")           \
  X(PutObjectLegalHold, "s3:PutObjectLegalHold", "")           \
  X(PostObject, "s3:PutObject", "")                            \
  X(GetBucketPolicy, "s3:GetBucketPolicy", "")                 \
  X(PutBucketPolicy, "s3:PutBucketPolicy", "")                 \
  X(DeleteBucketPolicy, "s3:DeleteBucketPolicy", "")           \
  X(GetBucketPolicyStatus, "s3:GetBucketPolicyStatus", "")     \
  X(GetBucketCors, "s3:GetBucketCORS", "")                     \
  X(PutBucketCors, "s3:PutBucketCORS", "")                     \
  X(DeleteBucketCors, "s3:PutBucketCORS", "")                  \
  X(GetBucketAcl, "s3:GetBucketAcl", "")                       \
  X(PutBucketAcl, "s3:PutBucketAcl", "")                       \
  X(GetObjectAcl, "s3:GetObjectAcl", "")                       \
  X(PutObjectAcl, "s3:PutObjectAcl", "")                       \
  X(GetBucketOwnershipControls, "s3:GetBucketOwnershipControls", "") \
  X(PutBucketOwnershipControls, "s3:PutBucketOwnershipControls", "") \
  X(DeleteBucketOwnershipControls, "s3:PutBucketOwnershipControls", "") \
  X(GetBucketEncryption, "s3:GetEncryptionConfiguration", "")  \
  X(PutBucketEncryption, "s3:PutEncryptionConfiguration", "")  \
  X(DeleteBucketEncryption, "s3:PutEncryptionConfiguration", "") \
  X(GetBucketLifecycleConfiguration, "s3:GetLifecycleConfiguration", "") \
  X(PutBucketLifecycleConfiguration, "s3:PutLifecycleConfiguration", "") \
  X(DeleteBucketLifecycle, "s3:PutLifecycleConfiguration", "") \
  X(GetBucketNotificationConfiguration, "s3:GetBucketNotification", "") \
  X(PutBucketNotificationConfiguration, "s3:PutBucketNotification", "") \
  X(GetBucketLogging, "s3:GetBucketLogging", "")               \
  X(PutBucketLogging, "s3:PutBucketLogging", "")               \
  X(RestoreObject, "s3:RestoreObject", "")                     \
  X(GetPublicAccessBlock, "s3:GetBucketPublicAccessBlock", "") \
  X(PutPublicAccessBlock, "s3:PutBucketPublicAccessBlock", "") \
  X(DeletePublicAccessBlock, "s3:PutBucketPublicAccessBlock", "") \
  X(PreflightCors, "", "") /* OPTIONS: answered by the CORS rules, unauthenticated */ \
  X(Admin, "strata:Admin", "") /* /_strata/admin/<action> (key = action) */

enum class Op {
#define STRATA_S3_OP_ENUM(name, action, source_action) k##name,
  STRATA_S3_OPERATIONS(STRATA_S3_OP_ENUM)
#undef STRATA_S3_OP_ENUM
};

// The operation's name ("GetObject").
std::string_view OpName(Op op);
// The IAM action a request for `op` needs ("s3:GetObject").
std::string_view RequiredAction(Op op);
// The action also needed on the copy source; "" for operations without one.
std::string_view CopySourceAction(Op op);

struct Route {
  Op op;
  std::string bucket;  // empty for service-level operations
  std::string key;     // decoded object key; empty for bucket operations
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order (of req.Query())

  bool Has(std::string_view name) const;
  const std::string* Query(std::string_view name) const;
};

struct RouterConfig {
  std::string domain;  // virtual-host style: Host "<bucket>.<domain>" (empty: path style only)
};

std::variant<Route, Error> RouteRequest(const http::Request& req, const RouterConfig& config);

// Bucket naming rules of S3 (3-63 chars, lowercase, digits, '.', '-', ...).
bool IsValidBucketName(std::string_view name);

// Names S3 CreateBucket refuses: "kv-*" belongs to the KV-cache tier (its
// namespaces' buckets, created through the object engine, never through S3;
// kvcache/proto/frame.h kBucketPrefix). Existing ones stay usable over S3.
inline constexpr std::string_view kReservedBucketPrefix = "kv-";
bool IsReservedBucketName(std::string_view name);

}  // namespace strata::s3

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

enum class Op {
  kListBuckets,
  kCreateBucket,
  kDeleteBucket,
  kHeadBucket,
  kGetBucketLocation,
  kListObjectsV1,
  kListObjectsV2,
  kDeleteObjects,
  kPutObject,
  kGetObject,
  kHeadObject,
  kDeleteObject,
  kCopyObject,
  kCreateMultipartUpload,
  kUploadPart,
  kUploadPartCopy,
  kCompleteMultipartUpload,
  kAbortMultipartUpload,
  kListParts,
  kListMultipartUploads,
  kPutObjectTagging,
  kGetObjectTagging,
  kDeleteObjectTagging,
  kPutBucketTagging,
  kGetBucketTagging,
  kDeleteBucketTagging,
  kGetObjectAttributes,
  kPostObject,
  kAdmin,  // strata's own admin API: /_strata/admin/<action> (key = action)
};

struct Route {
  Op op;
  std::string bucket;  // empty for service-level operations
  std::string key;     // decoded object key; empty for bucket operations
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order

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

#include "s3/router.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "common/encoding.h"
#include "common/http_host.h"

namespace strata::s3 {

namespace {

struct OperationRow {
  std::string_view name, action, source_action;
};

// The table's rows in enum order (Op::k<Name> is the row's index).
constexpr OperationRow kOperations[] = {
#define STRATA_S3_OP_ROW(name, action, source_action) {#name, action, source_action},
    STRATA_S3_OPERATIONS(STRATA_S3_OP_ROW)
#undef STRATA_S3_OP_ROW
};

const OperationRow& RowOf(Op op) { return kOperations[static_cast<size_t>(op)]; }

}  // namespace

std::string_view OpName(Op op) { return RowOf(op).name; }
std::string_view RequiredAction(Op op) { return RowOf(op).action; }
std::string_view CopySourceAction(Op op) { return RowOf(op).source_action; }

bool Route::Has(std::string_view name) const { return Query(name) != nullptr; }

const std::string* Route::Query(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return &v;
  }
  return nullptr;
}

bool IsValidBucketName(std::string_view name) {
  if (name.size() < 3 || name.size() > 63) return false;
  auto alnum = [](char c) { return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  int dots = 0;
  bool all_digits_and_dots = true;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (!(alnum(c) || c == '.' || c == '-')) return false;
    if (c == '.') {
      ++dots;
      if (i > 0 && name[i - 1] == '.') return false;
    } else if (!std::isdigit(static_cast<unsigned char>(c))) {
      all_digits_and_dots = false;
    }
  }
  if (dots == 3 && all_digits_and_dots) return false;  // looks like an IP address
  if (name.starts_with("xn--") || name.starts_with("sthree-") || name.ends_with("-s3alias") ||
      name.ends_with("--ol-s3")) {
    return false;
  }
  return true;
}

bool IsReservedBucketName(std::string_view name) {
  return name.starts_with(kReservedBucketPrefix);
}

namespace {

// Sub-resources S3 defines that strata does not implement yet: answered with
// NotImplemented rather than silently treated as a plain object/bucket request.
constexpr std::array<std::string_view, 10> kUnimplementedSubresources = {
    "accelerate", "analytics", "intelligent-tiering", "inventory", "metrics",
    "replication", "requestPayment", "select", "torrent", "website"};
// Valueless sub-resources strata serves.
constexpr std::array<std::string_view, 21> kServedSubresources = {
    "location",    "delete",     "uploads",    "tagging",           "attributes",
    "versioning",  "versions",   "object-lock", "retention",        "legal-hold",
    "policy",      "policyStatus", "cors",      "acl",              "ownershipControls",
    "publicAccessBlock", "encryption", "lifecycle", "restore",      "notification",
    "logging"};

bool IsUnimplemented(std::string_view name) {
  return std::find(kUnimplementedSubresources.begin(), kUnimplementedSubresources.end(), name) !=
         kUnimplementedSubresources.end();
}

bool IsServed(std::string_view name) {
  return std::find(kServedSubresources.begin(), kServedSubresources.end(), name) !=
         kServedSubresources.end();
}

// "Host: bucket.domain:port" -> "bucket" when virtual-host style applies.
std::string VirtualHostBucket(const http::Request& req, const RouterConfig& config) {
  const std::string* host = req.Header("host");
  return host ? strata::VirtualHostBucket(*host, config.domain) : std::string();
}

std::variant<Op, Error> PickOp(const http::Request& req, const Route& r) {
  const std::string& m = req.method;
  if (m == "OPTIONS" && !r.bucket.empty()) return Op::kPreflightCors;  // bucket or object
  if (r.bucket.empty()) {
    if (m == "GET") return Op::kListBuckets;
    return MakeError(ErrorCode::kMethodNotAllowed);
  }
  if (r.key.empty()) {
    if (m == "GET" && r.Has("location")) return Op::kGetBucketLocation;
    if (m == "POST" && r.Has("delete")) return Op::kDeleteObjects;
    if (m == "GET" && r.Has("uploads")) return Op::kListMultipartUploads;
    if (r.Has("versioning")) {
      if (m == "PUT") return Op::kPutBucketVersioning;
      if (m == "GET") return Op::kGetBucketVersioning;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (r.Has("object-lock")) {
      if (m == "PUT") return Op::kPutObjectLockConfiguration;
      if (m == "GET") return Op::kGetObjectLockConfiguration;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (m == "GET" && r.Has("versions")) return Op::kListObjectVersions;
    if (r.Has("acl")) {
      if (m == "PUT") return Op::kPutBucketAcl;
      if (m == "GET") return Op::kGetBucketAcl;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (r.Has("ownershipControls")) {
      if (m == "PUT") return Op::kPutBucketOwnershipControls;
      if (m == "GET") return Op::kGetBucketOwnershipControls;
      if (m == "DELETE") return Op::kDeleteBucketOwnershipControls;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (r.Has("publicAccessBlock")) {
      if (m == "PUT") return Op::kPutPublicAccessBlock;
      if (m == "GET") return Op::kGetPublicAccessBlock;
      if (m == "DELETE") return Op::kDeletePublicAccessBlock;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (r.Has("lifecycle")) {
      if (m == "PUT") return Op::kPutBucketLifecycleConfiguration;
      if (m == "GET") return Op::kGetBucketLifecycleConfiguration;
      if (m == "DELETE") return Op::kDeleteBucketLifecycle;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (r.Has("logging")) {
      if (m == "PUT") return Op::kPutBucketLogging;
      if (m == "GET") return Op::kGetBucketLogging;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (r.Has("notification")) {
      if (m == "PUT") return Op::kPutBucketNotificationConfiguration;
      if (m == "GET") return Op::kGetBucketNotificationConfiguration;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (r.Has("encryption")) {
      if (m == "PUT") return Op::kPutBucketEncryption;
      if (m == "GET") return Op::kGetBucketEncryption;
      if (m == "DELETE") return Op::kDeleteBucketEncryption;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (r.Has("cors")) {
      if (m == "PUT") return Op::kPutBucketCors;
      if (m == "GET") return Op::kGetBucketCors;
      if (m == "DELETE") return Op::kDeleteBucketCors;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (r.Has("policyStatus")) {
      if (m == "GET") return Op::kGetBucketPolicyStatus;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (r.Has("policy")) {
      if (m == "PUT") return Op::kPutBucketPolicy;
      if (m == "GET") return Op::kGetBucketPolicy;
      if (m == "DELETE") return Op::kDeleteBucketPolicy;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (r.Has("tagging")) {
      if (m == "PUT") return Op::kPutBucketTagging;
      if (m == "GET") return Op::kGetBucketTagging;
      if (m == "DELETE") return Op::kDeleteBucketTagging;
      return MakeError(ErrorCode::kMethodNotAllowed);
    }
    if (m == "GET") {
      const std::string* lt = r.Query("list-type");
      if (lt && *lt == "2") return Op::kListObjectsV2;
      if (lt) return MakeError(ErrorCode::kInvalidArgument, "Invalid list-type");
      return Op::kListObjectsV1;
    }
    if (m == "PUT") return Op::kCreateBucket;
    if (m == "DELETE") return Op::kDeleteBucket;
    if (m == "HEAD") return Op::kHeadBucket;
    if (m == "POST") return Op::kPostObject;
    return MakeError(ErrorCode::kMethodNotAllowed);
  }
  const bool copy = req.Header("x-amz-copy-source") != nullptr;
  if (r.Has("tagging")) {
    if (m == "PUT") return Op::kPutObjectTagging;
    if (m == "GET") return Op::kGetObjectTagging;
    if (m == "DELETE") return Op::kDeleteObjectTagging;
    return MakeError(ErrorCode::kMethodNotAllowed);
  }
  if (r.Has("acl")) {
    if (m == "PUT") return Op::kPutObjectAcl;
    if (m == "GET") return Op::kGetObjectAcl;
    return MakeError(ErrorCode::kMethodNotAllowed);
  }
  if (r.Has("retention")) {
    if (m == "PUT") return Op::kPutObjectRetention;
    if (m == "GET") return Op::kGetObjectRetention;
    return MakeError(ErrorCode::kMethodNotAllowed);
  }
  if (r.Has("legal-hold")) {
    if (m == "PUT") return Op::kPutObjectLegalHold;
    if (m == "GET") return Op::kGetObjectLegalHold;
    return MakeError(ErrorCode::kMethodNotAllowed);
  }
  if (r.Has("uploadId")) {
    if (m == "PUT" && r.Has("partNumber")) return copy ? Op::kUploadPartCopy : Op::kUploadPart;
    if (m == "POST") return Op::kCompleteMultipartUpload;
    if (m == "DELETE") return Op::kAbortMultipartUpload;
    if (m == "GET") return Op::kListParts;
    return MakeError(ErrorCode::kInvalidRequest, "Unsupported request with uploadId");
  }
  if (m == "POST" && r.Has("uploads")) return Op::kCreateMultipartUpload;
  if (r.Has("restore")) {
    if (m == "POST") return Op::kRestoreObject;
    return MakeError(ErrorCode::kMethodNotAllowed);
  }
  if (m == "GET" && r.Has("attributes")) return Op::kGetObjectAttributes;
  if (m == "PUT") return copy ? Op::kCopyObject : Op::kPutObject;
  if (m == "GET") return Op::kGetObject;
  if (m == "HEAD") return Op::kHeadObject;
  if (m == "DELETE") return Op::kDeleteObject;
  if (m == "POST") return MakeError(ErrorCode::kNotImplemented, "Unknown POST operation on an object");
  return MakeError(ErrorCode::kMethodNotAllowed);
}

}  // namespace

std::variant<Route, Error> RouteRequest(const http::Request& req, const RouterConfig& config) {
  Route r;
  const QueryString& query = req.Query();  // parsed once per request, shared with auth
  if (query.malformed()) return MakeError(ErrorCode::kInvalidArgument, "Malformed query string");
  r.query = query.Pairs();
  if (!req.raw_path.starts_with("/")) {
    return MakeError(ErrorCode::kInvalidRequest, "Request target must be an absolute path");
  }
  auto path = UriDecode(req.raw_path);
  if (!path) return MakeError(ErrorCode::kInvalidArgument, "Malformed URI path");
  std::string_view rest = std::string_view(*path).substr(1);
  // "_strata" can never be a bucket name (S3 names start with a letter or digit).
  constexpr std::string_view kAdminPrefix = "_strata/admin/";
  if (rest.starts_with(kAdminPrefix)) {
    r.op = Op::kAdmin;
    r.key = std::string(rest.substr(kAdminPrefix.size()));
    return r;
  }
  r.bucket = VirtualHostBucket(req, config);
  if (r.bucket.empty()) {
    size_t slash = rest.find('/');
    r.bucket = std::string(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  }
  r.key = std::string(rest);
  if (!r.bucket.empty() && !IsValidBucketName(r.bucket)) {
    return MakeError(ErrorCode::kInvalidBucketName, "The specified bucket is not valid: " + r.bucket);
  }
  if (r.key.size() > 1024) return MakeError(ErrorCode::kKeyTooLongError);
  if (!IsValidUtf8(r.key) || r.key.find('\0') != std::string::npos) {
    return MakeError(ErrorCode::kInvalidArgument, "Object key must be valid UTF-8 without NUL");
  }
  for (const auto& [name, value] : r.query) {
    if (IsUnimplemented(name)) {
      return MakeError(ErrorCode::kNotImplemented,
                       "The '" + name + "' sub-resource is not implemented");
    }
  }
  // A valueless parameter names an operation ("?website"); the ones strata
  // serves are handled above or below, any other is an operation it does not
  // know. Parameters with values that strata does not know are ignored, as
  // AWS does (SDKs add some, e.g. x-id).
  for (const QueryParam& param : query.params()) {
    // "?versionId" without '=' names no operation: an empty version id
    // (InvalidArgument from the operation, as AWS).
    if (param.name == "versionId") continue;
    if (!param.has_value && !IsServed(param.name)) {
      return MakeError(ErrorCode::kNotImplemented,
                       "The '" + param.name + "' operation is not implemented");
    }
  }
  auto op = PickOp(req, r);
  if (auto* e = std::get_if<Error>(&op)) return *e;
  r.op = std::get<Op>(op);
  if (r.op == Op::kCreateBucket && IsReservedBucketName(r.bucket)) {
    return MakeError(ErrorCode::kInvalidBucketName,
                     "Bucket names starting with \"" + std::string(kReservedBucketPrefix) +
                         "\" are reserved for the KV-cache tier: " + r.bucket);
  }
  return r;
}

}  // namespace strata::s3

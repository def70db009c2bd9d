// ACLs, object ownership and the public access block.
//
// Every strata bucket has object ownership BucketOwnerEnforced, AWS's default
// for new buckets since April 2023: ACLs are disabled, the bucket owner owns
// every object, and access is granted by policies only. As AWS then does:
// reading an ACL shows FULL_CONTROL for the bucket owner; setting one is
// accepted only when it says exactly that (no ACL, "private",
// "bucket-owner-full-control", or the equivalent XML) and otherwise fails
// with AccessControlListNotSupported (InvalidBucketAclWithObjectOwnership on
// CreateBucket). The ACL-enabled settings (ObjectWriter,
// BucketOwnerPreferred) are not supported: PutBucketOwnershipControls with one,
// and DeleteBucketOwnershipControls (which would enable ACLs), answer
// NotImplemented instead of pretending.
//
// The public access block is stored per bucket and enforced where it can act:
// BlockPublicPolicy refuses a public bucket policy (AccessDenied) and
// RestrictPublicBuckets makes a public policy grant nothing to anonymous
// callers (s3/access.cc); the ACL flags are reported truthfully and have
// nothing to block, ACLs never granting anything here.
#include "s3/bucket_configs.h"
#include "s3/ops/object_write.h"
#include "s3/ops/op_context.h"
#include "s3/ops/versioning.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

constexpr size_t kMaxAclBody = 64 * 1024;
constexpr char kEnforced[] = "BucketOwnerEnforced";

bool IsCannedAclName(std::string_view acl) {
  for (std::string_view known : {"private", "public-read", "public-read-write", "aws-exec-read",
                                 "authenticated-read", "bucket-owner-read",
                                 "bucket-owner-full-control", "log-delivery-write"}) {
    if (acl == known) return true;
  }
  return false;
}

bool HasGrantHeader(const http::Headers& headers) {
  for (const auto& [name, value] : headers) {
    if (name.starts_with("x-amz-grant-")) return true;
  }
  return false;
}

std::string AclXml(const OpContext& ctx, const std::string& owner) {
  auto name = ctx.config.identities->DisplayName(owner);
  const std::string display = XmlEscape(name ? *name : owner);
  const std::string id = XmlEscape(owner);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<AccessControlPolicy xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
         "<Owner><ID>" + id + "</ID><DisplayName>" + display + "</DisplayName></Owner>"
         "<AccessControlList><Grant>"
         "<Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"CanonicalUser\">"
         "<ID>" + id + "</ID><DisplayName>" + display + "</DisplayName></Grantee>"
         "<Permission>FULL_CONTROL</Permission></Grant></AccessControlList></AccessControlPolicy>";
}

// PutBucketAcl / PutObjectAcl: what the request asks is accepted when it
// leaves the owner with full control and nobody else with anything.
OpResult CheckAclChange(OpContext& ctx, const std::string& owner, bool object) {
  const std::string* canned = ctx.http.Header("x-amz-acl");
  const bool grants = HasGrantHeader(ctx.http.headers);
  auto body = ReadSmallBody(ctx, kMaxAclBody);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  const std::string& xml = std::get<std::string>(body);
  const bool has_body = xml.find_first_not_of(" \t\r\n") != std::string::npos;
  if (!canned && !grants && !has_body) {
    return MakeError(ErrorCode::kMissingSecurityHeader,
                     "Your request was missing a required header: x-amz-acl");
  }
  if ((canned ? 1 : 0) + (grants ? 1 : 0) + (has_body ? 1 : 0) > 1) {
    return MakeError(ErrorCode::kUnexpectedContent,
                     "This request does not support content when an ACL is given in headers");
  }
  if (canned) {
    if (!IsCannedAclName(*canned)) return MakeError(ErrorCode::kInvalidArgument);
    const bool owner_only = *canned == "private" || (object && *canned == "bucket-owner-full-control");
    if (!owner_only) return MakeError(ErrorCode::kAccessControlListNotSupported);
    return std::nullopt;
  }
  if (grants) return MakeError(ErrorCode::kAccessControlListNotSupported);
  auto acl = ParseAccessControlPolicy(xml);
  if (!acl) return MakeError(ErrorCode::kMalformedACLError);
  const bool owner_only = acl->grants.size() == 1 && acl->grants[0].type == "CanonicalUser" &&
                          acl->grants[0].id == owner && acl->grants[0].permission == "FULL_CONTROL";
  if (!owner_only) return MakeError(ErrorCode::kAccessControlListNotSupported);
  return std::nullopt;
}

// The public access block's four flags, in record bit order.
constexpr std::pair<const char*, uint8_t> kPabFlags[] = {
    {"BlockPublicAcls", object::kBlockPublicAcls},
    {"IgnorePublicAcls", object::kIgnorePublicAcls},
    {"BlockPublicPolicy", object::kBlockPublicPolicy},
    {"RestrictPublicBuckets", object::kRestrictPublicBuckets}};

}  // namespace

std::optional<Error> RefuseAcls(const http::Request& req, Op op) {
  const std::string* canned = req.Header("x-amz-acl");
  const bool grants = HasGrantHeader(req.headers);
  if (!canned && !grants) return std::nullopt;
  if (canned && !IsCannedAclName(*canned)) {
    return MakeError(ErrorCode::kInvalidArgument, "Invalid canned ACL: " + *canned);
  }
  switch (op) {
    case Op::kCreateBucket:
      if (grants || *canned != "private") {
        return MakeError(ErrorCode::kInvalidBucketAclWithObjectOwnership);
      }
      return std::nullopt;
    case Op::kPutObject:
    case Op::kCopyObject:
    case Op::kCreateMultipartUpload:
      if (grants || (*canned != "private" && *canned != "bucket-owner-full-control")) {
        return MakeError(ErrorCode::kAccessControlListNotSupported);
      }
      return std::nullopt;
    default:
      return std::nullopt;  // the ACL calls check their own; others take no ACL
  }
}

OpResult GetBucketAcl(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  return SendXml(ctx, AclXml(ctx, BucketOwnerId(ctx, std::get<object::BucketRecord>(bucket))));
}

OpResult PutBucketAcl(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const std::string owner = BucketOwnerId(ctx, std::get<object::BucketRecord>(bucket));
  if (auto e = CheckAclChange(ctx, owner, /*object=*/false)) return e;
  return SendEmpty(ctx, 200);
}

OpResult GetObjectAcl(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  object::Version version;
  auto rec = RequestedVersion(ctx, &version);
  if (auto* e = std::get_if<Error>(&rec)) return *e;
  http::Headers h;
  if (NamesVersions(std::get<object::BucketRecord>(bucket))) {
    h.emplace_back("x-amz-version-id", std::get<object::ObjectRecord>(rec).VersionId());
  }
  return SendXml(ctx, AclXml(ctx, BucketOwnerId(ctx, std::get<object::BucketRecord>(bucket))), 200, h);
}

OpResult PutObjectAcl(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  object::Version version;
  auto rec = RequestedVersion(ctx, &version);
  if (auto* e = std::get_if<Error>(&rec)) return *e;
  const std::string owner = BucketOwnerId(ctx, std::get<object::BucketRecord>(bucket));
  if (auto e = CheckAclChange(ctx, owner, /*object=*/true)) return e;
  return SendEmpty(ctx, 200);
}

OpResult GetBucketOwnershipControls(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  XmlWriter w;
  w.Open("OwnershipControls");
  w.Open("Rule");
  w.Element("ObjectOwnership", kEnforced);
  w.Close("Rule");
  w.Close("OwnershipControls");
  return SendXml(ctx, w.Finish());
}

OpResult PutBucketOwnershipControls(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  auto body = ReadSmallBody(ctx, kMaxAclBody);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  if (auto e = CheckBodyIntegrity(ctx, std::get<std::string>(body), /*required=*/false)) return e;
  auto setting = ParseOwnershipControls(std::get<std::string>(body));
  if (!setting) return MakeError(ErrorCode::kMalformedXML);
  if (*setting == kEnforced) return SendEmpty(ctx, 200);
  if (*setting == "ObjectWriter" || *setting == "BucketOwnerPreferred") {
    return MakeError(ErrorCode::kNotImplemented,
                     "strata buckets are BucketOwnerEnforced: ACL-enabled object ownership (" +
                         *setting + ") is not supported; grant access with policies");
  }
  return MakeError(ErrorCode::kMalformedXML, "ObjectOwnership must be BucketOwnerEnforced, "
                                             "BucketOwnerPreferred or ObjectWriter");
}

OpResult DeleteBucketOwnershipControls(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  return MakeError(ErrorCode::kNotImplemented,
                   "strata buckets are BucketOwnerEnforced: removing the setting would enable "
                   "ACLs, which strata does not support");
}

OpResult GetPublicAccessBlock(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const uint8_t flags = std::get<object::BucketRecord>(bucket).public_access_block;
  if (!(flags & object::kPublicAccessBlockSet)) {
    return MakeError(ErrorCode::kNoSuchPublicAccessBlockConfiguration);
  }
  XmlWriter w;
  w.Open("PublicAccessBlockConfiguration");
  for (const auto& [name, bit] : kPabFlags) w.Element(name, flags & bit ? "true" : "false");
  w.Close("PublicAccessBlockConfiguration");
  return SendXml(ctx, w.Finish());
}

OpResult PutPublicAccessBlock(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  auto body = ReadSmallBody(ctx, kMaxAclBody);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  if (auto e = CheckBodyIntegrity(ctx, std::get<std::string>(body), /*required=*/true)) return e;
  auto parsed = ParsePublicAccessBlock(std::get<std::string>(body));
  if (!parsed) return MakeError(ErrorCode::kMalformedXML);
  uint8_t flags = object::kPublicAccessBlockSet;
  for (const auto& [name, bit] : kPabFlags) {
    auto it = parsed->find(name);
    if (it != parsed->end() && it->second) flags |= bit;
  }
  Status st = ctx.engine.SetPublicAccessBlock(ctx.route.bucket, flags);
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 200);
}

OpResult DeletePublicAccessBlock(OpContext& ctx) {
  Status st = ctx.engine.SetPublicAccessBlock(ctx.route.bucket, 0);
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 204);
}

}  // namespace strata::s3

// ACLs, object ownership and the public access block.
//
// Object ownership is per bucket (s3/ops/acl_request.h): BucketOwnerEnforced,
// AWS's default for new buckets since April 2023 and strata's, disables
// ACLs: reading one shows FULL_CONTROL for the bucket owner; setting one is
// accepted only when it says exactly that (no ACL, "private",
// "bucket-owner-full-control", or the equivalent XML), else
// AccessControlListNotSupported (InvalidBucketAclWithObjectOwnership on
// CreateBucket). CreateBucket's x-amz-object-ownership or
// PutBucketOwnershipControls choose ObjectWriter or BucketOwnerPreferred,
// which enable ACLs: canned ACLs, grant headers and AccessControlPolicy
// documents are stored per bucket and per object version, reported as
// stored, and grant what auth/acl.h lists (s3/access.cc).
//
// The public access block is stored per bucket and enforced: BlockPublicAcls
// refuses a public ACL (AccessDenied), IgnorePublicAcls makes public grants
// count for nothing, BlockPublicPolicy refuses a public bucket policy and
// RestrictPublicBuckets makes a public policy grant nothing to anonymous
// callers (s3/access.cc).
#include "s3/bucket_configs.h"
#include "s3/ops/acl_request.h"
#include "s3/ops/object_write.h"
#include "s3/ops/op_context.h"
#include "s3/ops/versioning.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

constexpr size_t kMaxAclBody = 64 * 1024;

constexpr std::pair<const char*, object::Ownership> kOwnershipNames[] = {
    {"BucketOwnerEnforced", object::Ownership::kBucketOwnerEnforced},
    {"BucketOwnerPreferred", object::Ownership::kBucketOwnerPreferred},
    {"ObjectWriter", object::Ownership::kObjectWriter}};

// PutBucketAcl / PutObjectAcl: the ACL the request asks (headers or body)
// for a resource owned by `owner`; under BucketOwnerEnforced only one that
// leaves the owner alone with it is accepted.
std::variant<auth::Acl, Error> RequestedAcl(OpContext& ctx, const object::BucketRecord& bucket,
                                            const std::string& owner) {
  const std::string bucket_owner = BucketOwnerId(ctx, bucket);
  auto body = ReadSmallBody(ctx, kMaxAclBody);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  const std::string& xml = std::get<std::string>(body);
  const bool has_body = xml.find_first_not_of(" \t\r\n") != std::string::npos;
  const bool headers = HasAclHeaders(ctx.http);
  if (!headers && !has_body) {
    return MakeError(ErrorCode::kMissingSecurityHeader,
                     "Your request was missing a required header: x-amz-acl");
  }
  if (headers && has_body) {
    return MakeError(ErrorCode::kUnexpectedContent,
                     "This request does not support content when an ACL is given in headers");
  }
  std::optional<auth::Acl> acl;
  if (headers) {
    auto asked = AclFromHeaders(ctx, ctx.http, owner, bucket_owner);
    if (auto* e = std::get_if<Error>(&asked)) return *e;
    acl = std::move(std::get<std::optional<auth::Acl>>(asked));
  } else {
    auto parsed = AclFromXml(ctx, xml, owner);
    if (auto* e = std::get_if<Error>(&parsed)) return *e;
    acl = std::move(std::get<auth::Acl>(parsed));
  }
  if (!AclsEnabled(bucket)) {
    if (!auth::AclGrantsOnlyTo(*acl, owner)) return MakeError(ErrorCode::kAccessControlListNotSupported);
    return *acl;
  }
  if ((bucket.public_access_block & object::kBlockPublicAcls) && auth::AclIsPublic(*acl)) {
    return MakeError(ErrorCode::kAccessDenied, "Access Denied (BlockPublicAcls)");
  }
  return *acl;
}

// The public access block's four flags, in record bit order.
constexpr std::pair<const char*, uint8_t> kPabFlags[] = {
    {"BlockPublicAcls", object::kBlockPublicAcls},
    {"IgnorePublicAcls", object::kIgnorePublicAcls},
    {"BlockPublicPolicy", object::kBlockPublicPolicy},
    {"RestrictPublicBuckets", object::kRestrictPublicBuckets}};

}  // namespace

std::variant<std::pair<object::Ownership, std::string>, Error> NewBucketAcl(
    const OpContext& ctx, const std::string& owner) {
  object::Ownership ownership = object::Ownership::kBucketOwnerEnforced;
  if (const std::string* o = ctx.http.Header("x-amz-object-ownership")) {
    bool known = false;
    for (const auto& [name, value] : kOwnershipNames) {
      if (*o == name) {
        ownership = value;
        known = true;
      }
    }
    if (!known) return MakeError(ErrorCode::kInvalidArgument, "Invalid x-amz-object-ownership: " + *o);
  }
  auto asked = AclFromHeaders(ctx, ctx.http, owner, owner);
  if (auto* e = std::get_if<Error>(&asked)) return *e;
  const auto& acl = std::get<std::optional<auth::Acl>>(asked);
  if (!acl) return std::make_pair(ownership, std::string());
  if (ownership == object::Ownership::kBucketOwnerEnforced) {
    if (!auth::AclGrantsOnlyTo(*acl, owner)) return MakeError(ErrorCode::kInvalidBucketAclWithObjectOwnership);
    return std::make_pair(ownership, std::string());
  }
  return std::make_pair(ownership, StoredAcl(*acl));
}

OpResult GetBucketAcl(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  return SendXml(ctx, RenderAcl(ctx, BucketAclOf(ctx, std::get<object::BucketRecord>(bucket))));
}

OpResult PutBucketAcl(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const auto& b = std::get<object::BucketRecord>(bucket);
  auto acl = RequestedAcl(ctx, b, BucketOwnerId(ctx, b));
  if (auto* e = std::get_if<Error>(&acl)) return *e;
  if (!AclsEnabled(b)) return SendEmpty(ctx, 200);  // owner-only: what is in force already
  Status st = ctx.engine.SetBucketAcl(ctx.route.bucket, StoredAcl(std::get<auth::Acl>(acl)));
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 200);
}

OpResult GetObjectAcl(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const auto& b = std::get<object::BucketRecord>(bucket);
  object::Version version;
  auto rec = RequestedVersion(ctx, &version);
  if (auto* e = std::get_if<Error>(&rec)) return *e;
  const auto& r = std::get<object::ObjectRecord>(rec);
  http::Headers h;
  if (NamesVersions(b)) h.emplace_back("x-amz-version-id", r.VersionId());
  return SendXml(ctx, RenderAcl(ctx, ObjectAclOf(ctx, b, r)), 200, h);
}

OpResult PutObjectAcl(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const auto& b = std::get<object::BucketRecord>(bucket);
  object::Version version;
  auto rec = RequestedVersion(ctx, &version);
  if (auto* e = std::get_if<Error>(&rec)) return *e;
  const auto& r = std::get<object::ObjectRecord>(rec);
  auto acl = RequestedAcl(ctx, b, ObjectOwnerOf(ctx, b, r));
  if (auto* e = std::get_if<Error>(&acl)) return *e;
  http::Headers h;
  if (NamesVersions(b)) h.emplace_back("x-amz-version-id", r.VersionId());
  if (!AclsEnabled(b)) return SendEmpty(ctx, 200, h);
  // The version named, or the one that was latest when it was read.
  object::Version which = version ? version : object::Version(object::VersionSelector{
                                                  !r.versioned, r.versioned ? r.version_stamp : 0});
  Status st = ctx.engine.SetObjectAcl(ctx.route.bucket, ctx.route.key, which, r.owner,
                                      StoredAcl(std::get<auth::Acl>(acl)));
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchKey);
  return SendEmpty(ctx, 200, h);
}

OpResult GetBucketOwnershipControls(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const object::Ownership o = std::get<object::BucketRecord>(bucket).ownership;
  const char* name = nullptr;
  for (const auto& [n, value] : kOwnershipNames) {
    if (value == o) name = n;
  }
  if (!name) return MakeError(ErrorCode::kOwnershipControlsNotFoundError);
  XmlWriter w;
  w.Open("OwnershipControls");
  w.Open("Rule");
  w.Element("ObjectOwnership", name);
  w.Close("Rule");
  w.Close("OwnershipControls");
  return SendXml(ctx, w.Finish());
}

OpResult PutBucketOwnershipControls(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const auto& b = std::get<object::BucketRecord>(bucket);
  auto body = ReadSmallBody(ctx, kMaxAclBody);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  if (auto e = CheckBodyIntegrity(ctx, std::get<std::string>(body), /*required=*/false)) return e;
  auto setting = ParseOwnershipControls(std::get<std::string>(body));
  if (!setting) return MakeError(ErrorCode::kMalformedXML);
  std::optional<object::Ownership> ownership;
  for (const auto& [name, value] : kOwnershipNames) {
    if (*setting == name) ownership = value;
  }
  if (!ownership) {
    return MakeError(ErrorCode::kMalformedXML, "ObjectOwnership must be BucketOwnerEnforced, "
                                               "BucketOwnerPreferred or ObjectWriter");
  }
  // Enforcing ownership disables ACLs: not while the bucket's ACL grants
  // anyone else anything (it would silently stop applying).
  if (*ownership == object::Ownership::kBucketOwnerEnforced && AclsEnabled(b) &&
      !auth::AclGrantsOnlyTo(BucketAclOf(ctx, b), BucketOwnerId(ctx, b))) {
    return MakeError(ErrorCode::kInvalidBucketAclWithObjectOwnership);
  }
  Status st = ctx.engine.SetBucketOwnership(ctx.route.bucket, *ownership);
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 200);
}

OpResult DeleteBucketOwnershipControls(OpContext& ctx) {
  Status st = ctx.engine.SetBucketOwnership(ctx.route.bucket, object::Ownership::kUnset);
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 204);
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

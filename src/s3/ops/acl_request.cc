#include "s3/ops/acl_request.h"

#include "common/encoding.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

constexpr std::pair<const char*, uint8_t> kGrantHeaders[] = {
    {"x-amz-grant-read", auth::kAclRead},
    {"x-amz-grant-write", auth::kAclWrite},
    {"x-amz-grant-read-acp", auth::kAclReadAcp},
    {"x-amz-grant-write-acp", auth::kAclWriteAcp},
    {"x-amz-grant-full-control", auth::kAclFullControl}};

bool KnownCanonicalId(const OpContext& ctx, std::string_view id) {
  if (id == kAnonymousCanonicalId) return false;
  return ctx.config.identities && ctx.config.identities->DisplayName(id).has_value();
}

// One grantee of a grant header or document: a known user, or a group.
std::variant<auth::AclGrant, Error> Grantee(const OpContext& ctx, std::string_view kind,
                                            std::string_view value, uint8_t permission) {
  auth::AclGrant g;
  g.permission = permission;
  if (EqualsIgnoreCase(kind, "id")) {
    if (!KnownCanonicalId(ctx, value)) return MakeError(ErrorCode::kInvalidArgument, "Invalid id");
    g.grantee = auth::Grantee::kUser;
    g.id = value;
    return g;
  }
  if (EqualsIgnoreCase(kind, "uri")) {
    auto group = auth::ParseGranteeUri(value);
    if (!group) return MakeError(ErrorCode::kInvalidArgument, "Invalid group uri");
    g.grantee = *group;
    return g;
  }
  if (EqualsIgnoreCase(kind, "emailAddress")) {
    return MakeError(ErrorCode::kUnresolvableGrantByEmailAddress);
  }
  return MakeError(ErrorCode::kInvalidArgument, "Invalid grantee " + std::string(kind));
}

// `id="…", uri="…"`: the grantees of one x-amz-grant-* header.
std::variant<std::monostate, Error> AddHeaderGrants(const OpContext& ctx, std::string_view value,
                                                    uint8_t permission, auth::Acl* acl) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view item = TrimBlanks(value.substr(0, comma));
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return MakeError(ErrorCode::kInvalidArgument, "Invalid grant " + std::string(item));
    }
    std::string_view kind = TrimBlanks(item.substr(0, eq));
    std::string_view v = TrimBlanks(item.substr(eq + 1));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    auto grant = Grantee(ctx, kind, v, permission);
    if (auto* e = std::get_if<Error>(&grant)) return *e;
    acl->grants.push_back(std::get<auth::AclGrant>(grant));
    if (acl->grants.size() > auth::kMaxAclGrants) {
      return MakeError(ErrorCode::kInvalidArgument, "An ACL holds at most 100 grants");
    }
  }
  return std::monostate{};
}

}  // namespace

bool HasAclHeaders(const http::Request& req) {
  if (req.Header("x-amz-acl")) return true;
  for (const auto& [name, bit] : kGrantHeaders) {
    if (req.Header(name)) return true;
  }
  return false;
}

std::string StoredAcl(auth::Acl acl) {
  if (acl == auth::PrivateAcl(acl.owner)) return "";
  acl.owner.clear();
  return auth::EncodeAcl(acl);
}

bool AclsEnabled(const object::BucketRecord& bucket) {
  return bucket.ownership != object::Ownership::kBucketOwnerEnforced;
}

auth::Acl StoredOrPrivate(std::string_view stored, const std::string& owner) {
  if (!stored.empty()) {
    if (auto acl = auth::DecodeAcl(stored)) {
      acl->owner = owner;
      return *acl;
    }
  }
  return auth::PrivateAcl(owner);
}

auth::Acl BucketAclOf(const OpContext& ctx, const object::BucketRecord& bucket) {
  const std::string owner = BucketOwnerId(ctx, bucket);
  return AclsEnabled(bucket) ? StoredOrPrivate(bucket.acl, owner) : auth::PrivateAcl(owner);
}

std::string ObjectOwnerOf(const OpContext& ctx, const object::BucketRecord& bucket,
                          const object::ObjectRecord& rec) {
  if (!AclsEnabled(bucket) || rec.owner.empty()) return BucketOwnerId(ctx, bucket);
  return rec.owner;
}

auth::Acl ObjectAclOf(const OpContext& ctx, const object::BucketRecord& bucket,
                      const object::ObjectRecord& rec) {
  const std::string owner = ObjectOwnerOf(ctx, bucket, rec);
  return AclsEnabled(bucket) ? StoredOrPrivate(rec.acl, owner) : auth::PrivateAcl(owner);
}

std::variant<std::optional<auth::Acl>, Error> AclFromHeaders(const OpContext& ctx,
                                                             const http::Request& req,
                                                             const std::string& owner,
                                                             const std::string& bucket_owner) {
  const std::string* canned = req.Header("x-amz-acl");
  bool grants = false;
  for (const auto& [name, bit] : kGrantHeaders) grants = grants || req.Header(name) != nullptr;
  if (canned && grants) {
    return MakeError(ErrorCode::kInvalidRequest,
                     "Specifying both Canned ACLs and Header Grants is not allowed");
  }
  if (canned) {
    auto acl = auth::CannedAcl(*canned, owner, bucket_owner);
    if (!acl) return MakeError(ErrorCode::kInvalidArgument, "Invalid canned ACL: " + *canned);
    return std::optional<auth::Acl>(std::move(*acl));
  }
  if (!grants) return std::optional<auth::Acl>();
  auth::Acl acl;
  acl.owner = owner;
  for (const auto& [name, bit] : kGrantHeaders) {
    const std::string* v = req.Header(name);
    if (!v) continue;
    auto added = AddHeaderGrants(ctx, *v, bit, &acl);
    if (auto* e = std::get_if<Error>(&added)) return *e;
  }
  return std::optional<auth::Acl>(std::move(acl));
}

std::variant<auth::Acl, Error> AclFromXml(const OpContext& ctx, std::string_view xml,
                                          const std::string& owner) {
  auto doc = ParseAccessControlPolicy(xml);
  if (!doc) return MakeError(ErrorCode::kMalformedACLError);
  if (!doc->owner_id.empty() && doc->owner_id != owner) return MakeError(ErrorCode::kAccessDenied);
  if (doc->grants.size() > auth::kMaxAclGrants) {
    return MakeError(ErrorCode::kMalformedACLError, "An ACL holds at most 100 grants");
  }
  auth::Acl acl;
  acl.owner = owner;
  for (const AclGrant& g : doc->grants) {
    const uint8_t permission = auth::ParseAclPermission(g.permission);
    std::variant<auth::AclGrant, Error> grant = MakeError(ErrorCode::kMalformedACLError);
    if (g.type == "CanonicalUser" && !g.id.empty()) {
      grant = Grantee(ctx, "id", g.id, permission);
    } else if (g.type == "Group" && !g.uri.empty()) {
      grant = Grantee(ctx, "uri", g.uri, permission);
    } else if (g.type == "AmazonCustomerByEmail" && !g.email.empty()) {
      grant = Grantee(ctx, "emailAddress", g.email, permission);
    }
    if (auto* e = std::get_if<Error>(&grant)) return *e;
    acl.grants.push_back(std::get<auth::AclGrant>(grant));
  }
  return acl;
}

std::string RenderAcl(const OpContext& ctx, const auth::Acl& acl) {
  auto display = [&](const std::string& id) {
    auto name = ctx.config.identities ? ctx.config.identities->DisplayName(id) : std::nullopt;
    return name ? *name : id;
  };
  XmlWriter w;
  w.Open("AccessControlPolicy");
  w.Open("Owner");
  w.Element("ID", acl.owner);
  w.Element("DisplayName", display(acl.owner));
  w.Close("Owner");
  w.Open("AccessControlList");
  for (const auth::AclGrant& g : acl.grants) {
    w.Open("Grant");
    const bool user = g.grantee == auth::Grantee::kUser;
    w.OpenWithAttributes("Grantee",
                         {{"xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance"},
                          {"xsi:type", user ? "CanonicalUser" : "Group"}});
    if (user) {
      w.Element("ID", g.id);
      w.Element("DisplayName", display(g.id));
    } else {
      w.Element("URI", std::string(auth::GranteeUri(g.grantee)));
    }
    w.Close("Grantee");
    w.Element("Permission", std::string(auth::AclPermissionName(g.permission)));
    w.Close("Grant");
  }
  w.Close("AccessControlList");
  w.Close("AccessControlPolicy");
  return w.Finish();
}

std::variant<NewObjectAcl, Error> AclForNewObject(const OpContext& ctx, const http::Request& req,
                                                  const object::BucketRecord& bucket) {
  const std::string bucket_owner = BucketOwnerId(ctx, bucket);
  const auth::Principal& p = ctx.caller->principal;
  const std::string writer =
      p.kind == auth::Principal::Kind::kAnonymous ? std::string(kAnonymousCanonicalId) : p.canonical_id;
  const std::string* canned = req.Header("x-amz-acl");
  if (!AclsEnabled(bucket)) {
    // BucketOwnerEnforced: the bucket owner's, and an ACL only if it says so.
    auto asked = AclFromHeaders(ctx, req, bucket_owner, bucket_owner);
    if (auto* e = std::get_if<Error>(&asked)) return *e;
    const auto& acl = std::get<std::optional<auth::Acl>>(asked);
    if (acl && !auth::AclGrantsOnlyTo(*acl, bucket_owner)) {
      return MakeError(ErrorCode::kAccessControlListNotSupported);
    }
    return NewObjectAcl{};
  }
  NewObjectAcl out;
  std::string owner = writer;
  if (bucket.ownership == object::Ownership::kBucketOwnerPreferred && canned &&
      *canned == "bucket-owner-full-control") {
    owner = bucket_owner;
  }
  auto asked = AclFromHeaders(ctx, req, owner, bucket_owner);
  if (auto* e = std::get_if<Error>(&asked)) return *e;
  auto& acl = std::get<std::optional<auth::Acl>>(asked);
  if (acl && (bucket.public_access_block & object::kBlockPublicAcls) && auth::AclIsPublic(*acl)) {
    return MakeError(ErrorCode::kAccessDenied, "Access Denied (BlockPublicAcls)");
  }
  if (owner != bucket_owner) out.owner = owner;
  if (acl) out.acl = StoredAcl(std::move(*acl));
  return out;
}

}  // namespace strata::s3

#include "auth/acl.h"

#include "common/encoding.h"

namespace strata::auth {

namespace {

constexpr char kAclFormat = 1;

constexpr std::pair<uint8_t, std::string_view> kPermissionNames[] = {
    {kAclRead, "READ"},
    {kAclWrite, "WRITE"},
    {kAclReadAcp, "READ_ACP"},
    {kAclWriteAcp, "WRITE_ACP"},
    {kAclFullControl, "FULL_CONTROL"}};

AclGrant UserGrant(const std::string& id, uint8_t permission) {
  return AclGrant{Grantee::kUser, id, permission};
}
AclGrant GroupGrant(Grantee g, uint8_t permission) { return AclGrant{g, "", permission}; }

}  // namespace

std::string EncodeAcl(const Acl& acl) {
  std::string out(1, kAclFormat);
  PutLengthPrefixed(&out, acl.owner);
  PutVarint64(&out, acl.grants.size());
  for (const AclGrant& g : acl.grants) {
    out.push_back(static_cast<char>(g.grantee));
    PutLengthPrefixed(&out, g.id);
    out.push_back(static_cast<char>(g.permission));
  }
  return out;
}

std::optional<Acl> DecodeAcl(std::string_view in) {
  if (in.empty() || in[0] != kAclFormat) return std::nullopt;
  in.remove_prefix(1);
  Acl acl;
  std::string_view owner;
  uint64_t count;
  if (!GetLengthPrefixed(&in, &owner) || !GetVarint64(&in, &count) || count > kMaxAclGrants) {
    return std::nullopt;
  }
  acl.owner = owner;
  for (uint64_t i = 0; i < count; ++i) {
    AclGrant g;
    std::string_view id;
    if (in.empty() || static_cast<uint8_t>(in[0]) > static_cast<uint8_t>(Grantee::kLogDelivery)) {
      return std::nullopt;
    }
    g.grantee = static_cast<Grantee>(in[0]);
    in.remove_prefix(1);
    if (!GetLengthPrefixed(&in, &id) || in.empty()) return std::nullopt;
    g.id = id;
    g.permission = static_cast<uint8_t>(in[0]);
    in.remove_prefix(1);
    if (AclPermissionName(g.permission).empty()) return std::nullopt;
    acl.grants.push_back(std::move(g));
  }
  if (!in.empty()) return std::nullopt;
  return acl;
}

Acl PrivateAcl(const std::string& owner) {
  return Acl{owner, {UserGrant(owner, kAclFullControl)}};
}

std::optional<Acl> CannedAcl(std::string_view name, const std::string& owner,
                             const std::string& bucket_owner) {
  Acl acl = PrivateAcl(owner);
  if (name == "private") return acl;
  if (name == "public-read") {
    acl.grants.push_back(GroupGrant(Grantee::kAllUsers, kAclRead));
  } else if (name == "public-read-write") {
    acl.grants.push_back(GroupGrant(Grantee::kAllUsers, kAclRead));
    acl.grants.push_back(GroupGrant(Grantee::kAllUsers, kAclWrite));
  } else if (name == "authenticated-read") {
    acl.grants.push_back(GroupGrant(Grantee::kAuthenticatedUsers, kAclRead));
  } else if (name == "aws-exec-read") {
    // EC2's read of AMI bundles: no such service here; the owner's grant only.
  } else if (name == "bucket-owner-read") {
    if (bucket_owner != owner) acl.grants.push_back(UserGrant(bucket_owner, kAclRead));
  } else if (name == "bucket-owner-full-control") {
    if (bucket_owner != owner) acl.grants.push_back(UserGrant(bucket_owner, kAclFullControl));
  } else if (name == "log-delivery-write") {
    acl.grants.push_back(GroupGrant(Grantee::kLogDelivery, kAclWrite));
    acl.grants.push_back(GroupGrant(Grantee::kLogDelivery, kAclReadAcp));
  } else {
    return std::nullopt;
  }
  return acl;
}

std::string_view AclPermissionName(uint8_t permission) {
  for (const auto& [bit, name] : kPermissionNames) {
    if (bit == permission) return name;
  }
  return {};
}

uint8_t ParseAclPermission(std::string_view name) {
  for (const auto& [bit, n] : kPermissionNames) {
    if (n == name) return bit;
  }
  return 0;
}

std::string_view GranteeUri(Grantee g) {
  switch (g) {
    case Grantee::kAllUsers: return kAllUsersUri;
    case Grantee::kAuthenticatedUsers: return kAuthenticatedUsersUri;
    case Grantee::kLogDelivery: return kLogDeliveryUri;
    case Grantee::kUser: break;
  }
  return {};
}

std::optional<Grantee> ParseGranteeUri(std::string_view uri) {
  for (Grantee g : {Grantee::kAllUsers, Grantee::kAuthenticatedUsers, Grantee::kLogDelivery}) {
    if (uri == GranteeUri(g)) return g;
  }
  return std::nullopt;
}

bool AclAllows(const Acl& acl, const Principal& caller, uint8_t needed, bool ignore_public) {
  const bool anonymous = caller.kind == Principal::Kind::kAnonymous;
  if (!anonymous && caller.canonical_id == acl.owner && (needed & (kAclReadAcp | kAclWriteAcp))) {
    return true;
  }
  for (const AclGrant& g : acl.grants) {
    if (g.permission != needed && g.permission != kAclFullControl) continue;
    switch (g.grantee) {
      case Grantee::kUser:
        if (!anonymous && g.id == caller.canonical_id) return true;
        break;
      case Grantee::kAllUsers:
        if (!ignore_public) return true;
        break;
      case Grantee::kAuthenticatedUsers:
        if (!ignore_public && !anonymous) return true;
        break;
      case Grantee::kLogDelivery:
        break;  // S3's log delivery service: no caller here is it
    }
  }
  return false;
}

bool AclGrantsOnlyTo(const Acl& acl, const std::string& owner) {
  for (const AclGrant& g : acl.grants) {
    if (g.grantee != Grantee::kUser || g.id != owner) return false;
  }
  return true;
}

bool AclIsPublic(const Acl& acl) {
  for (const AclGrant& g : acl.grants) {
    if (g.grantee == Grantee::kAllUsers || g.grantee == Grantee::kAuthenticatedUsers) return true;
  }
  return false;
}

uint8_t BucketAclPermissionFor(std::string_view action) {
  if (action == "s3:ListBucket" || action == "s3:ListBucketVersions" ||
      action == "s3:ListBucketMultipartUploads") {
    return kAclRead;
  }
  if (action == "s3:PutObject" || action == "s3:DeleteObject" ||
      action == "s3:DeleteObjectVersion") {
    return kAclWrite;
  }
  if (action == "s3:GetBucketAcl") return kAclReadAcp;
  if (action == "s3:PutBucketAcl") return kAclWriteAcp;
  return 0;
}

uint8_t ObjectAclPermissionFor(std::string_view action) {
  if (action == "s3:GetObject" || action == "s3:GetObjectVersion") return kAclRead;
  if (action == "s3:GetObjectAcl" || action == "s3:GetObjectVersionAcl") return kAclReadAcp;
  if (action == "s3:PutObjectAcl" || action == "s3:PutObjectVersionAcl") return kAclWriteAcp;
  return 0;
}

}  // namespace strata::auth

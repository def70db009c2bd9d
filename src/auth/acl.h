// Access control lists (S3's older grant model, beside policies): who was
// granted which of READ, WRITE, READ_ACP, WRITE_ACP, FULL_CONTROL on a
// bucket or an object version. Only buckets whose object ownership enables
// ACLs (ObjectWriter, BucketOwnerPreferred) evaluate them; under
// BucketOwnerEnforced (the default) they are not consulted (s3/access.cc).
//
// What a grant allows, as AWS maps it:
//   bucket READ       s3:ListBucket, s3:ListBucketVersions, s3:ListBucketMultipartUploads
//   bucket WRITE      s3:PutObject, s3:DeleteObject, s3:DeleteObjectVersion (any key)
//   object READ       s3:GetObject, s3:GetObjectVersion
//   READ_ACP          s3:GetBucketAcl / s3:GetObjectAcl, s3:GetObjectVersionAcl
//   WRITE_ACP         s3:PutBucketAcl / s3:PutObjectAcl, s3:PutObjectVersionAcl
//   FULL_CONTROL      all of the above
// The owner of the bucket or object always has READ_ACP and WRITE_ACP (it
// cannot lock itself out of its ACL). An ACL grant is an Allow: a policy's
// explicit Deny still wins (auth/authorizer.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/policy.h"

namespace strata::auth {

inline constexpr uint8_t kAclRead = 1, kAclWrite = 2, kAclReadAcp = 4, kAclWriteAcp = 8,
                         kAclFullControl = 16;

enum class Grantee : uint8_t { kUser = 0, kAllUsers = 1, kAuthenticatedUsers = 2, kLogDelivery = 3 };

inline constexpr char kAllUsersUri[] = "http://acs.amazonaws.com/groups/global/AllUsers";
inline constexpr char kAuthenticatedUsersUri[] =
    "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";
inline constexpr char kLogDeliveryUri[] = "http://acs.amazonaws.com/groups/s3/LogDelivery";

struct AclGrant {
  Grantee grantee = Grantee::kUser;
  std::string id;          // kUser: the canonical id
  uint8_t permission = 0;  // exactly one kAcl* bit
  bool operator==(const AclGrant&) const = default;
};

struct Acl {
  std::string owner;  // canonical id
  std::vector<AclGrant> grants;
  bool operator==(const Acl&) const = default;
};

inline constexpr size_t kMaxAclGrants = 100;  // AWS's limit per ACL

// The stored form (BucketRecord::acl, ObjectRecord::acl).
std::string EncodeAcl(const Acl& acl);
std::optional<Acl> DecodeAcl(std::string_view data);

// The owner with FULL_CONTROL and nobody else ("private").
Acl PrivateAcl(const std::string& owner);
// A canned ACL (x-amz-acl) for a resource owned by `owner` in a bucket owned
// by `bucket_owner`; nullopt for an unknown name.
std::optional<Acl> CannedAcl(std::string_view name, const std::string& owner,
                             const std::string& bucket_owner);

// The permission name ("READ", ...) and back (0: unknown).
std::string_view AclPermissionName(uint8_t permission);
uint8_t ParseAclPermission(std::string_view name);
// The group URI of a group grantee ("" for kUser) and back.
std::string_view GranteeUri(Grantee g);
std::optional<Grantee> ParseGranteeUri(std::string_view uri);

// Whether the ACL gives `caller` the permission `needed` (FULL_CONTROL
// covers every one; the owner always has READ_ACP / WRITE_ACP).
// ignore_public: grants to AllUsers / AuthenticatedUsers count for nothing
// (IgnorePublicAcls).
bool AclAllows(const Acl& acl, const Principal& caller, uint8_t needed, bool ignore_public);
// Only `owner` is granted anything (what BucketOwnerEnforced accepts).
bool AclGrantsOnlyTo(const Acl& acl, const std::string& owner);
// Grants to AllUsers or AuthenticatedUsers (BlockPublicAcls refuses them).
bool AclIsPublic(const Acl& acl);

// The ACL permission that grants `action` on a bucket / an object (0: none).
uint8_t BucketAclPermissionFor(std::string_view action);
uint8_t ObjectAclPermissionFor(std::string_view action);

}  // namespace strata::auth

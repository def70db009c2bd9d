#include "auth/acl.h"

#include <gtest/gtest.h>

namespace strata::auth {
namespace {

const std::string kOwner(64, 'a'), kOther(64, 'b'), kBucketOwner(64, 'c');

Principal User(const std::string& canonical) {
  Principal p;
  p.kind = Principal::Kind::kUser;
  p.canonical_id = canonical;
  return p;
}
Principal Anonymous() { return Principal{}; }

TEST(AclTest, EncodingRoundTripsAndRefusesDamage) {
  Acl acl = PrivateAcl(kOwner);
  acl.grants.push_back({Grantee::kAllUsers, "", kAclRead});
  acl.grants.push_back({Grantee::kUser, kOther, kAclWriteAcp});
  std::string enc = EncodeAcl(acl);
  auto back = DecodeAcl(enc);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, acl);
  EXPECT_FALSE(DecodeAcl(""));
  EXPECT_FALSE(DecodeAcl(enc.substr(0, enc.size() - 1)));  // cut short
  EXPECT_FALSE(DecodeAcl(enc + "x"));                      // trailing bytes
  std::string bad_perm = enc;
  bad_perm.back() = 3;  // READ|WRITE is not one permission
  EXPECT_FALSE(DecodeAcl(bad_perm));
  std::string bad_version = enc;
  bad_version[0] = 9;
  EXPECT_FALSE(DecodeAcl(bad_version));
}

TEST(AclTest, CannedAclsGrantWhatAwsLists) {
  auto grants = [](std::string_view name) {
    auto acl = CannedAcl(name, kOwner, kBucketOwner);
    EXPECT_TRUE(acl) << name;
    return acl ? acl->grants : std::vector<AclGrant>{};
  };
  const AclGrant full{Grantee::kUser, kOwner, kAclFullControl};
  EXPECT_EQ(grants("private"), (std::vector<AclGrant>{full}));
  EXPECT_EQ(grants("public-read"),
            (std::vector<AclGrant>{full, {Grantee::kAllUsers, "", kAclRead}}));
  EXPECT_EQ(grants("public-read-write"),
            (std::vector<AclGrant>{full, {Grantee::kAllUsers, "", kAclRead},
                                   {Grantee::kAllUsers, "", kAclWrite}}));
  EXPECT_EQ(grants("authenticated-read"),
            (std::vector<AclGrant>{full, {Grantee::kAuthenticatedUsers, "", kAclRead}}));
  EXPECT_EQ(grants("bucket-owner-read"),
            (std::vector<AclGrant>{full, {Grantee::kUser, kBucketOwner, kAclRead}}));
  EXPECT_EQ(grants("bucket-owner-full-control"),
            (std::vector<AclGrant>{full, {Grantee::kUser, kBucketOwner, kAclFullControl}}));
  EXPECT_EQ(grants("log-delivery-write"),
            (std::vector<AclGrant>{full, {Grantee::kLogDelivery, "", kAclWrite},
                                   {Grantee::kLogDelivery, "", kAclReadAcp}}));
  // The bucket owner writing its own object: no second grant to itself.
  EXPECT_EQ(CannedAcl("bucket-owner-full-control", kOwner, kOwner)->grants.size(), 1u);
  EXPECT_FALSE(CannedAcl("public", kOwner, kBucketOwner));
}

TEST(AclTest, WhoIsAllowedWhat) {
  Acl acl = PrivateAcl(kOwner);
  // The owner: everything by FULL_CONTROL; another user and anonymous: nothing.
  for (uint8_t p : {kAclRead, kAclWrite, kAclReadAcp, kAclWriteAcp}) {
    EXPECT_TRUE(AclAllows(acl, User(kOwner), p, false));
    EXPECT_FALSE(AclAllows(acl, User(kOther), p, false));
    EXPECT_FALSE(AclAllows(acl, Anonymous(), p, false));
  }
  // An owner whose ACL forgot it keeps READ_ACP / WRITE_ACP only.
  Acl lost{kOwner, {{Grantee::kUser, kOther, kAclFullControl}}};
  EXPECT_FALSE(AclAllows(lost, User(kOwner), kAclRead, false));
  EXPECT_TRUE(AclAllows(lost, User(kOwner), kAclReadAcp, false));
  EXPECT_TRUE(AclAllows(lost, User(kOwner), kAclWriteAcp, false));
  EXPECT_TRUE(AclAllows(lost, User(kOther), kAclWrite, false));
  // A permission is exactly itself (READ does not imply READ_ACP).
  Acl read{kOwner, {{Grantee::kUser, kOther, kAclRead}}};
  EXPECT_TRUE(AclAllows(read, User(kOther), kAclRead, false));
  EXPECT_FALSE(AclAllows(read, User(kOther), kAclReadAcp, false));
  EXPECT_FALSE(AclAllows(read, User(kOther), kAclWrite, false));
  // Groups: AllUsers includes anonymous callers, AuthenticatedUsers does not;
  // IgnorePublicAcls voids both; LogDelivery is nobody here.
  Acl pub = *CannedAcl("public-read", kOwner, kOwner);
  EXPECT_TRUE(AclAllows(pub, Anonymous(), kAclRead, false));
  EXPECT_TRUE(AclAllows(pub, User(kOther), kAclRead, false));
  EXPECT_FALSE(AclAllows(pub, Anonymous(), kAclRead, true));
  EXPECT_FALSE(AclAllows(pub, User(kOther), kAclRead, true));
  EXPECT_TRUE(AclAllows(pub, User(kOwner), kAclRead, true));  // its own grant is not public
  Acl authed = *CannedAcl("authenticated-read", kOwner, kOwner);
  EXPECT_FALSE(AclAllows(authed, Anonymous(), kAclRead, false));
  EXPECT_TRUE(AclAllows(authed, User(kOther), kAclRead, false));
  EXPECT_FALSE(AclAllows(authed, User(kOther), kAclRead, true));
  Acl logs = *CannedAcl("log-delivery-write", kOwner, kOwner);
  EXPECT_FALSE(AclAllows(logs, User(kOther), kAclWrite, false));
  EXPECT_FALSE(AclAllows(logs, Anonymous(), kAclWrite, false));
  // An anonymous caller is never the owner, even of an ACL with no owner.
  EXPECT_FALSE(AclAllows(Acl{"", {}}, Anonymous(), kAclReadAcp, false));
  EXPECT_TRUE(AclIsPublic(pub));
  EXPECT_TRUE(AclIsPublic(authed));
  EXPECT_FALSE(AclIsPublic(logs));
  EXPECT_FALSE(AclIsPublic(acl));
}

TEST(AclTest, ActionsMapToPermissions) {
  EXPECT_EQ(BucketAclPermissionFor("s3:ListBucket"), kAclRead);
  EXPECT_EQ(BucketAclPermissionFor("s3:ListBucketVersions"), kAclRead);
  EXPECT_EQ(BucketAclPermissionFor("s3:ListBucketMultipartUploads"), kAclRead);
  EXPECT_EQ(BucketAclPermissionFor("s3:PutObject"), kAclWrite);
  EXPECT_EQ(BucketAclPermissionFor("s3:DeleteObject"), kAclWrite);
  EXPECT_EQ(BucketAclPermissionFor("s3:DeleteObjectVersion"), kAclWrite);
  EXPECT_EQ(BucketAclPermissionFor("s3:GetBucketAcl"), kAclReadAcp);
  EXPECT_EQ(BucketAclPermissionFor("s3:PutBucketAcl"), kAclWriteAcp);
  EXPECT_EQ(BucketAclPermissionFor("s3:GetObject"), 0);
  EXPECT_EQ(BucketAclPermissionFor("s3:PutBucketPolicy"), 0);
  EXPECT_EQ(ObjectAclPermissionFor("s3:GetObject"), kAclRead);
  EXPECT_EQ(ObjectAclPermissionFor("s3:GetObjectVersion"), kAclRead);
  EXPECT_EQ(ObjectAclPermissionFor("s3:GetObjectAcl"), kAclReadAcp);
  EXPECT_EQ(ObjectAclPermissionFor("s3:PutObjectVersionAcl"), kAclWriteAcp);
  EXPECT_EQ(ObjectAclPermissionFor("s3:PutObject"), 0);
  EXPECT_EQ(ObjectAclPermissionFor("s3:PutObjectTagging"), 0);
  EXPECT_EQ(ParseAclPermission("WRITE_ACP"), kAclWriteAcp);
  EXPECT_EQ(ParseAclPermission("write"), 0);
  EXPECT_EQ(AclPermissionName(kAclFullControl), "FULL_CONTROL");
  EXPECT_EQ(ParseGranteeUri(kAllUsersUri), Grantee::kAllUsers);
  EXPECT_FALSE(ParseGranteeUri("http://acs.amazonaws.com/groups/global/Everyone"));
}

}  // namespace
}  // namespace strata::auth

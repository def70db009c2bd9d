// ACLs on the S3 side: what a request asks (x-amz-acl, x-amz-grant-*, an
// AccessControlPolicy document) turned into an auth::Acl, the document
// GetBucketAcl / GetObjectAcl send, and the owner and ACL of a new object
// under the bucket's object ownership (s3/ops/acl_ops.cc has the calls;
// auth/acl.h the model and what a grant allows).
//
// Object ownership (BucketRecord::ownership):
//   BucketOwnerEnforced (AWS's default for new buckets, and strata's): ACLs
//     are off. The bucket owner owns every object; an ACL is accepted only
//     when it says exactly that (none, "private", "bucket-owner-full-control"
//     or the equivalent document), else AccessControlListNotSupported.
//   BucketOwnerPreferred: ACLs on; a new object is the writer's unless it
//     was written with "bucket-owner-full-control", then the bucket owner's.
//   ObjectWriter (and no setting, after DeleteBucketOwnershipControls): ACLs
//     on; the writer owns what it writes.
#pragma once

#include <string>
#include <variant>

#include "auth/acl.h"
#include "object/record.h"
#include "s3/ops/op_context.h"

namespace strata::s3 {

// The canonical id AWS gives anonymous writers (the owner of what they write
// into a public-read-write bucket).
inline constexpr char kAnonymousCanonicalId[] = "65a011a29cdf8ec533ec3d1ccaae921c";

bool AclsEnabled(const object::BucketRecord& bucket);

// A stored ACL (BucketRecord / ObjectRecord::acl) of a resource owned by
// `owner`; "" (or undecodable): the owner's FULL_CONTROL alone.
auth::Acl StoredOrPrivate(std::string_view stored, const std::string& owner);
// The ACL in force: the stored one, or the owner's FULL_CONTROL alone.
auth::Acl BucketAclOf(const OpContext& ctx, const object::BucketRecord& bucket);
auth::Acl ObjectAclOf(const OpContext& ctx, const object::BucketRecord& bucket,
                      const object::ObjectRecord& rec);
// The object's owner: its own, else the bucket owner's.
std::string ObjectOwnerOf(const OpContext& ctx, const object::BucketRecord& bucket,
                          const object::ObjectRecord& rec);

// Whether the request carries x-amz-acl or an x-amz-grant-* header.
bool HasAclHeaders(const http::Request& req);
// The stored form of an ACL (BucketRecord / ObjectRecord::acl): "" for the
// owner's FULL_CONTROL alone, else auth/acl.h's encoding without the owner
// (the record's owner field says it).
std::string StoredAcl(auth::Acl acl);

// The ACL a request's headers ask for a resource owned by `owner` in a bucket
// owned by `bucket_owner`: nullopt when they ask none. InvalidArgument for an
// unknown canned ACL, grantee id or group; UnresolvableGrantByEmailAddress
// for e-mail grantees; InvalidRequest for a canned ACL with grant headers.
std::variant<std::optional<auth::Acl>, Error> AclFromHeaders(const OpContext& ctx,
                                                             const http::Request& req,
                                                             const std::string& owner,
                                                             const std::string& bucket_owner);
// The same for an AccessControlPolicy document (MalformedACLError when it is
// not one; AccessDenied when its Owner is not the resource's owner).
std::variant<auth::Acl, Error> AclFromXml(const OpContext& ctx, std::string_view xml,
                                          const std::string& owner);
std::string RenderAcl(const OpContext& ctx, const auth::Acl& acl);

// The owner and ACL of an object the caller writes now into `bucket`
// (PUT, COPY, CreateMultipartUpload, POST with `req` as the request's or the
// form's headers): ObjectRecord::owner / acl. AccessDenied for a public ACL
// under BlockPublicAcls.
struct NewObjectAcl {
  std::string owner;  // "" = the bucket owner
  std::string acl;    // "" = the owner's FULL_CONTROL alone
};
std::variant<NewObjectAcl, Error> AclForNewObject(const OpContext& ctx, const http::Request& req,
                                                  const object::BucketRecord& bucket);

}  // namespace strata::s3

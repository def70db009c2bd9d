#include "s3/router.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace strata::s3 {
namespace {

http::Request Req(std::string method, std::string target, std::string host = "localhost:9000") {
  http::Request r;
  r.method = std::move(method);
  r.target = target;
  size_t q = target.find('?');
  r.raw_path = target.substr(0, q);
  if (q != std::string::npos) r.raw_query = target.substr(q + 1);
  r.headers.emplace_back("host", host);
  return r;
}

Route Ok(const http::Request& req, RouterConfig cfg = {}) {
  auto r = RouteRequest(req, cfg);
  EXPECT_TRUE(std::holds_alternative<Route>(r)) << req.method << " " << req.target << " -> "
                                                << (std::holds_alternative<Error>(r) ? std::get<Error>(r).CodeString() : "");
  return std::holds_alternative<Route>(r) ? std::get<Route>(r) : Route{};
}

ErrorCode Err(const http::Request& req) {
  auto r = RouteRequest(req, {});
  EXPECT_TRUE(std::holds_alternative<Error>(r)) << req.method << " " << req.target;
  return std::holds_alternative<Error>(r) ? std::get<Error>(r).code : ErrorCode::kInternalError;
}

TEST(Router, PathStyleOperations) {
  EXPECT_EQ(Ok(Req("GET", "/")).op, Op::kListBuckets);
  EXPECT_EQ(Ok(Req("PUT", "/bucket")).op, Op::kCreateBucket);
  EXPECT_EQ(Ok(Req("DELETE", "/bucket")).op, Op::kDeleteBucket);
  EXPECT_EQ(Ok(Req("HEAD", "/bucket")).op, Op::kHeadBucket);
  EXPECT_EQ(Ok(Req("GET", "/bucket?location")).op, Op::kGetBucketLocation);
  EXPECT_EQ(Ok(Req("GET", "/bucket?list-type=2&prefix=a")).op, Op::kListObjectsV2);
  EXPECT_EQ(Ok(Req("GET", "/bucket/")).op, Op::kListObjectsV1);
  EXPECT_EQ(Ok(Req("POST", "/bucket?delete")).op, Op::kDeleteObjects);
  Route r = Ok(Req("PUT", "/bucket/dir/a%20b%2Bc"));
  EXPECT_EQ(r.op, Op::kPutObject);
  EXPECT_EQ(r.bucket, "bucket");
  EXPECT_EQ(r.key, "dir/a b+c");
  EXPECT_EQ(Ok(Req("GET", "/bucket/k")).op, Op::kGetObject);
  EXPECT_EQ(Ok(Req("HEAD", "/bucket/k")).op, Op::kHeadObject);
  EXPECT_EQ(Ok(Req("DELETE", "/bucket/k")).op, Op::kDeleteObject);
}

TEST(Router, MultipartCopyTaggingOperations) {
  http::Request copy = Req("PUT", "/bucket/k");
  copy.headers.emplace_back("x-amz-copy-source", "/src/key");
  EXPECT_EQ(Ok(copy).op, Op::kCopyObject);
  EXPECT_EQ(Ok(Req("POST", "/bucket/k?uploads")).op, Op::kCreateMultipartUpload);
  EXPECT_EQ(Ok(Req("PUT", "/bucket/k?partNumber=1&uploadId=x")).op, Op::kUploadPart);
  http::Request part_copy = Req("PUT", "/bucket/k?partNumber=1&uploadId=x");
  part_copy.headers.emplace_back("x-amz-copy-source", "/src/key");
  EXPECT_EQ(Ok(part_copy).op, Op::kUploadPartCopy);
  EXPECT_EQ(Ok(Req("POST", "/bucket/k?uploadId=x")).op, Op::kCompleteMultipartUpload);
  EXPECT_EQ(Ok(Req("DELETE", "/bucket/k?uploadId=x")).op, Op::kAbortMultipartUpload);
  EXPECT_EQ(Ok(Req("GET", "/bucket/k?uploadId=x")).op, Op::kListParts);
  EXPECT_EQ(Ok(Req("GET", "/bucket?uploads")).op, Op::kListMultipartUploads);
  EXPECT_EQ(Ok(Req("PUT", "/bucket/k?tagging")).op, Op::kPutObjectTagging);
  EXPECT_EQ(Ok(Req("GET", "/bucket/k?tagging")).op, Op::kGetObjectTagging);
  EXPECT_EQ(Ok(Req("DELETE", "/bucket/k?tagging")).op, Op::kDeleteObjectTagging);
  EXPECT_EQ(Ok(Req("PUT", "/bucket?tagging")).op, Op::kPutBucketTagging);
  EXPECT_EQ(Ok(Req("GET", "/bucket?tagging")).op, Op::kGetBucketTagging);
  EXPECT_EQ(Ok(Req("DELETE", "/bucket?tagging")).op, Op::kDeleteBucketTagging);
  EXPECT_EQ(Ok(Req("GET", "/bucket/k?attributes")).op, Op::kGetObjectAttributes);
  EXPECT_EQ(Ok(Req("POST", "/bucket")).op, Op::kPostObject);
}

TEST(Router, VirtualHostStyle) {
  RouterConfig cfg{"s3.example.com"};
  Route r = Ok(Req("GET", "/some/key", "bucket.s3.example.com:9000"), cfg);
  EXPECT_EQ(r.bucket, "bucket");
  EXPECT_EQ(r.key, "some/key");
  EXPECT_EQ(r.op, Op::kGetObject);
  // The bare domain is path style.
  r = Ok(Req("GET", "/bucket/key", "s3.example.com"), cfg);
  EXPECT_EQ(r.bucket, "bucket");
  EXPECT_EQ(r.key, "key");
}

TEST(Router, QueryIsDecoded) {
  Route r = Ok(Req("GET", "/bkt?list-type=2&prefix=a%2Fb+c&delimiter=%2F"));
  EXPECT_EQ(*r.Query("prefix"), "a/b c");
  EXPECT_EQ(*r.Query("delimiter"), "/");
}

TEST(Router, QueryIsTheRequestsParsedQuery) {
  http::Request req = Req("GET", "/bkt?list-type=2&prefix=a+b&prefix=c");
  Route r = Ok(req);
  EXPECT_EQ(r.query, req.Query().Pairs());  // the one parse auth reads too; order and repeats kept
  EXPECT_EQ(r.query.size(), 3u);
  // A broken %-escape in a name or value is refused; so is a valueless one.
  EXPECT_EQ(Err(Req("GET", "/bkt?prefix=%ZZ")), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Err(Req("GET", "/bkt?%ZZ=1")), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Err(Req("GET", "/bkt?%ZZ")), ErrorCode::kInvalidArgument);
  // Empty parts are skipped.
  EXPECT_EQ(Ok(Req("GET", "/bkt?&&list-type=2&")).op, Op::kListObjectsV2);
}

TEST(Router, VersioningAndObjectLockOperations) {
  EXPECT_EQ(Ok(Req("PUT", "/bkt?versioning")).op, Op::kPutBucketVersioning);
  EXPECT_EQ(Ok(Req("GET", "/bkt?versioning")).op, Op::kGetBucketVersioning);
  EXPECT_EQ(Ok(Req("GET", "/bkt?versions")).op, Op::kListObjectVersions);
  EXPECT_EQ(Ok(Req("GET", "/bkt?versions&prefix=a&key-marker=b")).op, Op::kListObjectVersions);
  EXPECT_EQ(Ok(Req("PUT", "/bkt?object-lock")).op, Op::kPutObjectLockConfiguration);
  EXPECT_EQ(Ok(Req("GET", "/bkt?object-lock")).op, Op::kGetObjectLockConfiguration);
  EXPECT_EQ(Ok(Req("PUT", "/bkt/k?retention")).op, Op::kPutObjectRetention);
  EXPECT_EQ(Ok(Req("GET", "/bkt/k?retention&versionId=null")).op, Op::kGetObjectRetention);
  EXPECT_EQ(Ok(Req("PUT", "/bkt/k?legal-hold")).op, Op::kPutObjectLegalHold);
  EXPECT_EQ(Ok(Req("GET", "/bkt/k?legal-hold")).op, Op::kGetObjectLegalHold);
  EXPECT_EQ(Ok(Req("GET", "/bkt/k?versionId=00ff")).op, Op::kGetObject);
  EXPECT_EQ(Ok(Req("DELETE", "/bkt/k?versionId=null")).op, Op::kDeleteObject);
  EXPECT_EQ(Ok(Req("GET", "/bkt/k?versionId")).op, Op::kGetObject);  // empty: the op refuses it
}

TEST(Router, Rejections) {
  EXPECT_EQ(Err(Req("PUT", "/Bad_Bucket")), ErrorCode::kInvalidBucketName);
  EXPECT_EQ(Err(Req("PUT", "/bkt/" + std::string(1025, 'k'))), ErrorCode::kKeyTooLongError);
  EXPECT_EQ(Ok(Req("PUT", "/bucket/" + std::string(1024, 'k'))).op, Op::kPutObject);
  EXPECT_EQ(Err(Req("GET", "/bucket?website")), ErrorCode::kNotImplemented);
  EXPECT_EQ(Err(Req("PUT", "/bucket?replication")), ErrorCode::kNotImplemented);
  EXPECT_EQ(Ok(Req("PUT", "/bucket?logging")).op, Op::kPutBucketLogging);
  EXPECT_EQ(Ok(Req("GET", "/bucket?logging")).op, Op::kGetBucketLogging);
  EXPECT_EQ(Err(Req("DELETE", "/bucket?versioning")), ErrorCode::kMethodNotAllowed);
  EXPECT_EQ(Err(Req("DELETE", "/bucket/k?retention")), ErrorCode::kMethodNotAllowed);
  EXPECT_EQ(Err(Req("PUT", "/bucket?notanop")), ErrorCode::kNotImplemented);
  EXPECT_EQ(Ok(Req("GET", "/bucket/k?x-id=GetObject&unknown=1")).op, Op::kGetObject);
  EXPECT_EQ(Err(Req("GET", "/bucket/a%ZZ")), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Err(Req("GET", "/bucket/a%00b")), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Err(Req("GET", "/bucket/a%FFb")), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Err(Req("PATCH", "/bucket/k")), ErrorCode::kMethodNotAllowed);
}

TEST(Router, BucketNames) {
  EXPECT_TRUE(IsValidBucketName(std::string(63, 'a')));
  for (const char* good : {"abc", "my-bucket.1", "a.b-c"}) {
    EXPECT_TRUE(IsValidBucketName(good)) << good;
  }
  for (const char* bad : {"ab", "ABC", "a_b", "-abc", "abc-", "a..b", "192.168.1.1", "xn--abc",
                          "abc-s3alias", "sthree-x"}) {
    EXPECT_FALSE(IsValidBucketName(bad)) << bad;
  }
  EXPECT_FALSE(IsValidBucketName(std::string(64, 'a')));
}

TEST(Router, KvBucketNamesAreReservedForCreation) {
  auto e = RouteRequest(Req("PUT", "/kv-0123456789abcdef"), {});
  ASSERT_TRUE(std::holds_alternative<Error>(e));
  EXPECT_EQ(std::get<Error>(e).code, ErrorCode::kInvalidBucketName);
  EXPECT_NE(std::get<Error>(e).message.find("reserved for the KV-cache tier"), std::string::npos);
  EXPECT_EQ(Err(Req("PUT", "/kv-anything")), ErrorCode::kInvalidBucketName);
  auto vhost = RouteRequest(Req("PUT", "/", "kv-x.s3.example.com"), RouterConfig{"s3.example.com"});
  ASSERT_TRUE(std::holds_alternative<Error>(vhost));
  EXPECT_EQ(std::get<Error>(vhost).code, ErrorCode::kInvalidBucketName);
  // Only creation: the tier's buckets stay readable and listable over S3.
  EXPECT_EQ(Ok(Req("GET", "/kv-0123456789abcdef")).op, Op::kListObjectsV1);
  EXPECT_EQ(Ok(Req("GET", "/kv-0123456789abcdef/abc/def")).op, Op::kGetObject);
  EXPECT_EQ(Ok(Req("DELETE", "/kv-0123456789abcdef")).op, Op::kDeleteBucket);
  // Names merely containing "kv-" are ordinary.
  EXPECT_EQ(Ok(Req("PUT", "/my-kv-bucket")).op, Op::kCreateBucket);
  EXPECT_EQ(Ok(Req("PUT", "/kvstore")).op, Op::kCreateBucket);
}

// The operation table: every row has a name and an IAM action, names are
// unique, and the actions are AWS's where AWS has the operation.
TEST(Router, OperationTable) {
  std::vector<Op> ops = {
#define STRATA_S3_OP_LIST(name, action, source_action) Op::k##name,
      STRATA_S3_OPERATIONS(STRATA_S3_OP_LIST)
#undef STRATA_S3_OP_LIST
  };
  EXPECT_EQ(ops.size(), 67u);
  std::set<std::string_view> names;
  for (Op op : ops) {
    EXPECT_TRUE(names.insert(OpName(op)).second) << OpName(op);
    std::string_view action = RequiredAction(op);
    EXPECT_TRUE(action.starts_with("s3:") || op == Op::kAdmin || op == Op::kPreflightCors)
        << OpName(op) << " " << action;
  }
  EXPECT_EQ(OpName(Op::kGetObject), "GetObject");
  EXPECT_EQ(OpName(Op::kUploadPartCopy), "UploadPartCopy");
  EXPECT_EQ(RequiredAction(Op::kListBuckets), "s3:ListAllMyBuckets");
  EXPECT_EQ(RequiredAction(Op::kHeadBucket), "s3:ListBucket");
  EXPECT_EQ(RequiredAction(Op::kListObjectsV2), "s3:ListBucket");
  EXPECT_EQ(RequiredAction(Op::kHeadObject), "s3:GetObject");
  EXPECT_EQ(RequiredAction(Op::kCompleteMultipartUpload), "s3:PutObject");
  EXPECT_EQ(RequiredAction(Op::kListParts), "s3:ListMultipartUploadParts");
  EXPECT_EQ(RequiredAction(Op::kListMultipartUploads), "s3:ListBucketMultipartUploads");
  EXPECT_EQ(RequiredAction(Op::kAbortMultipartUpload), "s3:AbortMultipartUpload");
  EXPECT_EQ(RequiredAction(Op::kDeleteBucketTagging), "s3:PutBucketTagging");
  EXPECT_EQ(RequiredAction(Op::kAdmin), "strata:Admin");
  EXPECT_EQ(RequiredAction(Op::kListObjectVersions), "s3:ListBucketVersions");
  EXPECT_EQ(RequiredAction(Op::kPutObjectLockConfiguration), "s3:PutBucketObjectLockConfiguration");
  EXPECT_EQ(RequiredAction(Op::kGetObjectLegalHold), "s3:GetObjectLegalHold");
  EXPECT_EQ(CopySourceAction(Op::kCopyObject), "s3:GetObject");
  EXPECT_EQ(CopySourceAction(Op::kUploadPartCopy), "s3:GetObject");
  EXPECT_EQ(CopySourceAction(Op::kPutObject), "");
  EXPECT_EQ(RequiredAction(Op::kGetBucketPolicyStatus), "s3:GetBucketPolicyStatus");
  EXPECT_EQ(RequiredAction(Op::kDeleteBucketPolicy), "s3:DeleteBucketPolicy");
  EXPECT_EQ(RequiredAction(Op::kGetBucketEncryption), "s3:GetEncryptionConfiguration");
  EXPECT_EQ(RequiredAction(Op::kPutBucketEncryption), "s3:PutEncryptionConfiguration");
  EXPECT_EQ(RequiredAction(Op::kDeleteBucketEncryption), "s3:PutEncryptionConfiguration");
}

TEST(Router, RestoreObjectRoute) {
  EXPECT_EQ(Ok(Req("POST", "/bucket/k?restore")).op, Op::kRestoreObject);
  EXPECT_EQ(Ok(Req("POST", "/bucket/k?restore&versionId=x")).op, Op::kRestoreObject);
  EXPECT_EQ(Err(Req("GET", "/bucket/k?restore")), ErrorCode::kMethodNotAllowed);
  EXPECT_EQ(RequiredAction(Op::kRestoreObject), "s3:RestoreObject");
}

TEST(Router, BucketLifecycleRoutes) {
  EXPECT_EQ(Ok(Req("PUT", "/bucket?lifecycle")).op, Op::kPutBucketLifecycleConfiguration);
  EXPECT_EQ(Ok(Req("PUT", "/bucket?notification")).op, Op::kPutBucketNotificationConfiguration);
  EXPECT_EQ(Ok(Req("GET", "/bucket?notification")).op, Op::kGetBucketNotificationConfiguration);
  EXPECT_EQ(Ok(Req("GET", "/bucket?lifecycle")).op, Op::kGetBucketLifecycleConfiguration);
  EXPECT_EQ(Ok(Req("DELETE", "/bucket?lifecycle")).op, Op::kDeleteBucketLifecycle);
  EXPECT_EQ(RequiredAction(Op::kDeleteBucketLifecycle), "s3:PutLifecycleConfiguration");
  EXPECT_EQ(RequiredAction(Op::kGetBucketLifecycleConfiguration), "s3:GetLifecycleConfiguration");
  EXPECT_EQ(RequiredAction(Op::kPutBucketNotificationConfiguration), "s3:PutBucketNotification");
  EXPECT_EQ(RequiredAction(Op::kGetBucketNotificationConfiguration), "s3:GetBucketNotification");
}

TEST(Router, BucketEncryptionRoutes) {
  EXPECT_EQ(Ok(Req("PUT", "/bucket?encryption")).op, Op::kPutBucketEncryption);
  EXPECT_EQ(Ok(Req("GET", "/bucket?encryption")).op, Op::kGetBucketEncryption);
  EXPECT_EQ(Ok(Req("DELETE", "/bucket?encryption")).op, Op::kDeleteBucketEncryption);
  EXPECT_EQ(Err(Req("POST", "/bucket?encryption")), ErrorCode::kMethodNotAllowed);
}

TEST(Router, BucketPolicyRoutes) {
  EXPECT_EQ(Ok(Req("PUT", "/bucket?policy")).op, Op::kPutBucketPolicy);
  EXPECT_EQ(Ok(Req("GET", "/bucket?policy")).op, Op::kGetBucketPolicy);
  EXPECT_EQ(Ok(Req("DELETE", "/bucket?policy")).op, Op::kDeleteBucketPolicy);
  EXPECT_EQ(Ok(Req("GET", "/bucket?policyStatus")).op, Op::kGetBucketPolicyStatus);
  EXPECT_EQ(Err(Req("POST", "/bucket?policy")), ErrorCode::kMethodNotAllowed);
  EXPECT_EQ(Err(Req("PUT", "/bucket?policyStatus")), ErrorCode::kMethodNotAllowed);
  EXPECT_EQ(Ok(Req("PUT", "/bucket?cors")).op, Op::kPutBucketCors);
  EXPECT_EQ(Ok(Req("GET", "/bucket?cors")).op, Op::kGetBucketCors);
  EXPECT_EQ(Ok(Req("DELETE", "/bucket?cors")).op, Op::kDeleteBucketCors);
  EXPECT_EQ(Ok(Req("OPTIONS", "/bucket")).op, Op::kPreflightCors);
  EXPECT_EQ(Ok(Req("OPTIONS", "/bucket/some/key")).op, Op::kPreflightCors);
  EXPECT_EQ(Err(Req("OPTIONS", "/")), ErrorCode::kMethodNotAllowed);
  EXPECT_EQ(Ok(Req("GET", "/bucket?acl")).op, Op::kGetBucketAcl);
  EXPECT_EQ(Ok(Req("PUT", "/bucket/k?acl")).op, Op::kPutObjectAcl);
  EXPECT_EQ(Ok(Req("GET", "/bucket/k?acl")).op, Op::kGetObjectAcl);
  EXPECT_EQ(Ok(Req("DELETE", "/bucket?ownershipControls")).op, Op::kDeleteBucketOwnershipControls);
  EXPECT_EQ(Ok(Req("PUT", "/bucket?publicAccessBlock")).op, Op::kPutPublicAccessBlock);
  EXPECT_EQ(Err(Req("DELETE", "/bucket/k?acl")), ErrorCode::kMethodNotAllowed);
}

}  // namespace
}  // namespace strata::s3

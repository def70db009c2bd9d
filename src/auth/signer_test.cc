#include "auth/signer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "auth/auth_test_util.h"
#include "auth/sigv4.h"
#include "common/encoding.h"
#include "common/hash.h"

namespace strata::auth {
namespace {

using namespace testing_util;  // NOLINT(build/namespaces)

Signer AwsSigner() { return Signer({kAwsAccessKey, kAwsSecret, "us-east-1"}); }

// The request as the server sees it: the caller's headers and the signer's,
// names lowercased.
Request AsReceived(std::string method, std::string path, std::string query,
                   const Headers& caller_headers, const SigningResult& signed_by) {
  Request r{std::move(method), std::move(path), std::move(query), {}};
  for (const auto& [name, value] : caller_headers) r.headers.emplace_back(AsciiLower(name), value);
  for (const auto& [name, value] : signed_by.headers) {
    r.headers.emplace_back(AsciiLower(name), value);
  }
  return r;
}

// ---- AWS's published examples ----------------------------------------------------
// "Signature Calculations for the Authorization Header: Transferring Payload in
// a Single Chunk (AWS Signature Version 4)", Amazon S3 API Reference.

TEST(SignerAwsExampleTest, GetObject) {
  Signer signer = AwsSigner();
  const SigningResult s =
      signer.Sign({"GET",
                   "/test.txt",
                   "",
                   {{"Host", "examplebucket.s3.amazonaws.com"}, {"Range", "bytes=0-9"}},
                   kEmptySha256},
                  kAwsTime);
  EXPECT_EQ(s.canonical_request,
            "GET\n"
            "/test.txt\n"
            "\n"
            "host:examplebucket.s3.amazonaws.com\n"
            "range:bytes=0-9\n"
            "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
            "x-amz-date:20130524T000000Z\n"
            "\n"
            "host;range;x-amz-content-sha256;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(s.string_to_sign,
            "AWS4-HMAC-SHA256\n"
            "20130524T000000Z\n"
            "20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(s.signature, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(s.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(s.amz_date, kAwsDate);
  EXPECT_EQ(s.scope, kAwsScope);
  const Headers expected_headers = {{"x-amz-date", kAwsDate},
                                    {"x-amz-content-sha256", kEmptySha256},
                                    {"Authorization", s.authorization}};
  EXPECT_EQ(s.headers, expected_headers);
}

TEST(SignerAwsExampleTest, PutObjectWithDateAndStorageClass) {
  const std::string payload_hash = Sha256Hex("Welcome to Amazon S3.");
  Signer signer = AwsSigner();
  const SigningResult s = signer.Sign({"PUT",
                                       "/test$file.text",
                                       "",
                                       {{"Host", "examplebucket.s3.amazonaws.com"},
                                        {"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                                        {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
                                       payload_hash},
                                      kAwsTime);
  EXPECT_EQ(s.signed_headers, "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class");
  EXPECT_EQ(s.signature, "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SignerAwsExampleTest, BucketRequestsWithQueries) {
  Signer signer = AwsSigner();
  const Headers host = {{"Host", "examplebucket.s3.amazonaws.com"}};
  EXPECT_EQ(signer.Sign({"GET", "/", "lifecycle", host, kEmptySha256}, kAwsTime).signature,
            "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
  EXPECT_EQ(signer.Sign({"GET", "/", "max-keys=2&prefix=J", host, kEmptySha256}, kAwsTime).signature,
            "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

// ---- against the Verifier ------------------------------------------------------------

// "Authenticating Requests: Using Query Parameters (AWS Signature Version 4)":
// the presigned GET of examplebucket/test.txt, valid 86400 s from 20130524T000000Z.
TEST(SignerAwsExampleTest, PresignedGet) {
  Signer signer = AwsSigner();
  const std::string q = signer.Presign(
      {"GET", "/test.txt", "", {{"Host", "examplebucket.s3.amazonaws.com"}}}, kAwsTime, 86400);
  EXPECT_EQ(q,
            "X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request"
            "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
            "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
}

TEST(SignerVerifierTest, VerifierAcceptsWhatItSigns) {
  struct Case {
    std::string method, path, query;
    Headers headers;
    std::string payload;
  };
  const Case kCases[] = {
      {"GET", "/", "", {{"Host", "127.0.0.1:9000"}}, "UNSIGNED-PAYLOAD"},
      {"PUT", "/bucket/photos/my%20summer%20%C3%A9%2B%C3%BC%20(1)!*'$.jpg", "",
       {{"Host", "127.0.0.1:9000"}, {"Content-Type", "image/jpeg"},
        {"X-Amz-Meta-Note", "  two   spaces\there  "}},
       Sha256Hex("body")},
      {"GET", "/bucket", "list-type=2&prefix=dir+one%2F%C3%A9%2Bx&delimiter=%2F&max-keys=10",
       {{"host", "h"}}, kEmptySha256},
      {"POST", "/bucket/key", "uploads", {{"host", "h"}, {"x-amz-meta-a", "1"},
                                          {"x-amz-meta-a", "2"}}, "UNSIGNED-PAYLOAD"},
      {"PUT", "/bucket/key", "partNumber=3&uploadId=abc", {{"host", "h"}},
       "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
      {"GET", "/_strata/admin/status", "", {{"Host", "localhost:9000"}}, "UNSIGNED-PAYLOAD"},
  };
  for (const char* region : {"us-east-1", "eu-central-1"}) {
    Signer signer({kAwsAccessKey, kAwsSecret, region});
    for (const Case& c : kCases) {
      for (int64_t now : {kAwsTime, int64_t{1709987696}, int64_t{4107542400}}) {
        const SigningResult s = signer.Sign({c.method, c.path, c.query, c.headers, c.payload}, now);
        const Request r = AsReceived(c.method, c.path, c.query, c.headers, s);
        VerifyResult result = VerifyAt(r, now);
        ASSERT_TRUE(IsOk(result)) << c.method << " " << c.path << "?" << c.query << " " << region;
        const AuthContext& ctx = std::get<AuthContext>(result);
        EXPECT_EQ(ctx.seed_signature_hex, s.signature);
        EXPECT_EQ(ctx.scope, s.scope);
        EXPECT_EQ(ctx.amz_date, s.amz_date);

        Request tampered = r;
        tampered.path += "x";
        EXPECT_TRUE(FailsWith(VerifyAt(tampered, now), AuthErrorKind::kSignatureDoesNotMatch));
      }
    }
  }
}

TEST(SignerVerifierTest, CallerDatesAndPayloadHeadersAreReplaced) {
  Signer signer = AwsSigner();
  const Headers caller = {{"Host", "h"}, {"X-Amz-Date", "19990101T000000Z"},
                          {"x-amz-content-sha256", "stale"}};
  const SigningResult s = signer.Sign({"GET", "/b/k", "", caller, "UNSIGNED-PAYLOAD"}, kAwsTime);
  EXPECT_EQ(s.signed_headers, "host;x-amz-content-sha256;x-amz-date");
  Request r = AsReceived("GET", "/b/k", "", {{"Host", "h"}}, s);
  EXPECT_TRUE(IsOk(VerifyAt(r, kAwsTime)));
}

TEST(SignerTest, SigningKeyFollowsTheDay) {
  Signer signer = AwsSigner();
  EXPECT_EQ(signer.SigningKey("20130524"),
            DeriveSigningKey(kAwsSecret, "20130524", "us-east-1", "s3"));
  EXPECT_EQ(signer.SigningKey("20130525"),
            DeriveSigningKey(kAwsSecret, "20130525", "us-east-1", "s3"));
  // Signing across midnight uses each day's key.
  const Headers host = {{"Host", "h"}};
  const SigningResult before = signer.Sign({"GET", "/", "", host}, kAwsTime - 1);
  const SigningResult after = signer.Sign({"GET", "/", "", host}, kAwsTime);
  EXPECT_EQ(before.scope, "20130523/us-east-1/s3/aws4_request");
  EXPECT_EQ(after.scope, kAwsScope);
  EXPECT_TRUE(IsOk(VerifyAt(AsReceived("GET", "/", "", host, before), kAwsTime - 1)));
  EXPECT_TRUE(IsOk(VerifyAt(AsReceived("GET", "/", "", host, after), kAwsTime)));
}

}  // namespace
}  // namespace strata::auth

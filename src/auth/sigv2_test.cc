#include "auth/sigv2.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "auth/auth_test_util.h"
#include "common/encoding.h"
#include "common/hash.h"

namespace strata::auth {
namespace {

using namespace testing_util;  // NOLINT(build/namespaces)

// ---- AWS documentation vectors ---------------------------------------------------
// "Signing and authenticating REST requests" (Signature Version 2), section
// "Authentication examples", credentials AKIAIOSFODNN7EXAMPLE /
// wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY. Each published StringToSign is
// checked against ours and, where the page's signature is the HMAC of that
// string (recomputed with Python's hmac/hashlib while writing these tests),
// the request verifies with it.

constexpr char kV2Domain[] = "s3.us-west-1.amazonaws.com";
constexpr char kExampleHost[] = "awsexamplebucket1.s3.us-west-1.amazonaws.com";

VerifyResult VerifyV2At(const Request& r, int64_t now, std::string domain = kV2Domain,
                        SecretLookup secrets = AwsSecrets()) {
  VerifierOptions options;
  options.domain = std::move(domain);
  Verifier verifier(std::move(secrets), options);
  return verifier.Verify(r.View(), now);
}

std::string V2Authorization(std::string_view signature) {
  return std::string("AWS ") + kAwsAccessKey + ":" + std::string(signature);
}

// The string to sign of a header-auth request with the bucket taken from the
// Host, as the verifier derives it.
std::string HeaderStringToSign(const Request& r, std::string_view domain = kV2Domain) {
  std::string host, date;
  bool amz_date = false;
  for (const auto& [name, value] : r.headers) {
    if (name == "host") host = value;
    if (name == "date") date = value;
    amz_date |= name == "x-amz-date";
  }
  std::string bucket = host.substr(0, host.find(':'));
  const std::string suffix = "." + std::string(domain);
  bucket = bucket.ends_with(suffix) ? bucket.substr(0, bucket.size() - suffix.size()) : "";
  return StringToSignV2(r.View(), amz_date ? "" : date, QueryString::Parse(r.query), bucket,
                        /*query_auth=*/false);
}

Request AwsObjectGet() {
  return {"GET",
          "/photos/puppy.jpg",
          "",
          {{"host", kExampleHost},
           {"date", "Tue, 27 Mar 2007 19:36:42 +0000"},
           {"authorization", V2Authorization("qgk2+6Sv9/oM7G3qLEjTH1a1l1g=")}}};
}
constexpr int64_t kObjectGetTime = 1175024202;  // Tue, 27 Mar 2007 19:36:42 GMT

TEST(SigV2AwsExampleTest, ObjectGet) {
  const Request r = AwsObjectGet();
  EXPECT_EQ(HeaderStringToSign(r),
            "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n"
            "/awsexamplebucket1/photos/puppy.jpg");
  VerifyResult result = VerifyV2At(r, kObjectGetTime);
  ASSERT_TRUE(IsOk(result));
  const AuthContext& ctx = std::get<AuthContext>(result);
  EXPECT_EQ(ctx.access_key, kAwsAccessKey);
  EXPECT_EQ(ctx.version, SignatureVersion::kV2);
  EXPECT_EQ(ctx.payload_mode, PayloadMode::kUnsignedPayload);
  EXPECT_FALSE(ctx.presigned);
}

// The page's other header examples: each request, its published
// StringToSign, its signature (the HMAC of that string) and its time.
struct AwsExample {
  const char* name;
  const char* method;
  const char* path;
  const char* query;
  Headers headers;  // besides Authorization
  const char* string_to_sign;
  const char* signature;
  int64_t time;
};

TEST(SigV2AwsExampleTest, HeaderExamples) {
  const AwsExample kExamples[] = {
      {"Object PUT (Content-Type is positional)",
       "PUT",
       "/photos/puppy.jpg",
       "",
       {{"content-type", "image/jpeg"},
        {"content-length", "94328"},
        {"host", kExampleHost},
        {"date", "Tue, 27 Mar 2007 21:15:45 +0000"}},
       "PUT\n\nimage/jpeg\nTue, 27 Mar 2007 21:15:45 +0000\n/awsexamplebucket1/photos/puppy.jpg",
       "iqRzw+ileNPu1fhspnRs8nOjjIA=",
       1175030145},
      {"List (ordinary query parameters are not signed)",
       "GET",
       "/",
       "prefix=photos&max-keys=50&marker=puppy",
       {{"user-agent", "Mozilla/5.0"},
        {"host", kExampleHost},
        {"date", "Tue, 27 Mar 2007 19:42:41 +0000"}},
       "GET\n\n\nTue, 27 Mar 2007 19:42:41 +0000\n/awsexamplebucket1/",
       "m0WP8eCtspQl5Ahe6L1SozdX9YA=",
       1175024561},
      {"Fetch (a sub-resource is signed)",
       "GET",
       "/",
       "acl",
       {{"host", kExampleHost}, {"date", "Tue, 27 Mar 2007 19:44:46 +0000"}},
       "GET\n\n\nTue, 27 Mar 2007 19:44:46 +0000\n/awsexamplebucket1/?acl",
       "82ZHiFIjc+WbcwFKGUVEQspPn+0=",
       1175024686},
      {"List all my buckets",
       "GET",
       "/",
       "",
       {{"host", "s3.us-west-1.amazonaws.com"}, {"date", "Wed, 28 Mar 2007 01:29:59 +0000"}},
       "GET\n\n\nWed, 28 Mar 2007 01:29:59 +0000\n/",
       "qGdzdERIC03wnaRNKh6OqZehG9s=",
       1175045399},
      {"Unicode keys (the path is signed as sent)",
       "GET",
       "/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re",
       "",
       {{"host", "s3.us-west-1.amazonaws.com"}, {"date", "Wed, 28 Mar 2007 01:49:49 +0000"}},
       "GET\n\n\nWed, 28 Mar 2007 01:49:49 +0000\n/dictionary/fran%C3%A7ais/pr%c3%a9f%c3%a8re",
       "DNEZGsoieTZ92F3bUfSPQcbGmlM=",
       1175046589},
  };
  for (const AwsExample& example : kExamples) {
    SCOPED_TRACE(example.name);
    Request r{example.method, example.path, example.query, example.headers};
    r.headers.emplace_back("authorization", V2Authorization(example.signature));
    EXPECT_EQ(HeaderStringToSign(r), example.string_to_sign);
    EXPECT_TRUE(IsOk(VerifyV2At(r, example.time)));
  }
}

TEST(SigV2AwsExampleTest, UploadCanonicalizesAmzHeaders) {
  // The page's "Upload" example (a CNAME bucket, which strata does not route:
  // the bucket is passed in). Its printed signature is not the HMAC of its
  // StringToSign, so only the canonicalization is checked: lowercase names,
  // sorted, repeated headers joined by ',', no other Content-* header.
  const Request r{"PUT",
                  "/db-backup.dat.gz",
                  "",
                  {{"user-agent", "curl/7.15.5"},
                   {"host", "static.example.com:8080"},
                   {"date", "Tue, 27 Mar 2007 21:06:08 +0000"},
                   {"x-amz-acl", "public-read"},
                   {"content-type", "application/x-download"},
                   {"content-md5", "4gJE4saaMU4BqNR0kLY+lw=="},
                   {"x-amz-meta-reviewedby", "joe@example.com"},
                   {"x-amz-meta-reviewedby", "jane@example.com"},
                   {"x-amz-meta-filechecksum", "0x02661779"},
                   {"x-amz-meta-checksumalgorithm", "crc32"},
                   {"content-disposition", "attachment; filename=database.dat"},
                   {"content-encoding", "gzip"},
                   {"content-length", "5913339"}}};
  EXPECT_EQ(
      StringToSignV2(r.View(), "Tue, 27 Mar 2007 21:06:08 +0000", QueryString(),
                     "static.example.com", false),
      "PUT\n4gJE4saaMU4BqNR0kLY+lw==\napplication/x-download\n"
      "Tue, 27 Mar 2007 21:06:08 +0000\n"
      "x-amz-acl:public-read\n"
      "x-amz-meta-checksumalgorithm:crc32\n"
      "x-amz-meta-filechecksum:0x02661779\n"
      "x-amz-meta-reviewedby:joe@example.com,jane@example.com\n"
      "/static.example.com/db-backup.dat.gz");
}

TEST(SigV2AwsExampleTest, QueryStringAuthentication) {
  // The page's query example; its signature belongs to the bucket of the
  // original revision of the page, "johnsmith" (HMAC recomputed in Python).
  const Request r{"GET",
                  "/photos/puppy.jpg",
                  "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D"
                  "&Expires=1175139620",
                  {{"host", "johnsmith.s3.amazonaws.com"}}};
  VerifyResult result = VerifyV2At(r, 1175139620 - 600, "s3.amazonaws.com");
  ASSERT_TRUE(IsOk(result));
  EXPECT_TRUE(std::get<AuthContext>(result).presigned);
  EXPECT_EQ(std::get<AuthContext>(result).version, SignatureVersion::kV2);
  EXPECT_TRUE(IsOk(VerifyV2At(r, 1175139620, "s3.amazonaws.com")));  // up to and including Expires
  EXPECT_TRUE(FailsWith(VerifyV2At(r, 1175139621, "s3.amazonaws.com"), AuthErrorKind::kExpired));
  // Path style: the bucket is already in the path, and Host does not add it.
  Request path_style = r;
  path_style.path = "/johnsmith/photos/puppy.jpg";
  SetHeader(&path_style, "host", "s3.amazonaws.com");
  EXPECT_TRUE(IsOk(VerifyV2At(path_style, 1175139000, "s3.amazonaws.com")));
  EXPECT_TRUE(IsOk(VerifyV2At(path_style, 1175139000, "")));
  // Without --domain the virtual-host form has no bucket to sign.
  EXPECT_TRUE(FailsWith(VerifyV2At(r, 1175139000, ""), AuthErrorKind::kSignatureDoesNotMatch));
}

// ---- the parts of the string to sign ----------------------------------------------

TEST(SigV2StringToSignTest, SubresourcesAreSortedAndDecoded) {
  const Request r{"GET",
                  "/b/k%20ey",
                  "versionId=3%2F4&prefix=x&uploadId=u-1&partNumber=2&response-content-disposition="
                  "attachment%3B%20filename%3D%22a%20b%22&x-id=GetObject&uploads",
                  {{"host", "127.0.0.1:9000"}}};
  EXPECT_EQ(StringToSignV2(r.View(), "D", QueryString::Parse(r.query), "", false),
            "GET\n\n\nD\n/b/k%20ey?partNumber=2&response-content-disposition=attachment; "
            "filename=\"a b\"&uploadId=u-1&uploads&versionId=3/4");
}

TEST(SigV2StringToSignTest, PathStyleBucketIsSignedWithATrailingSlash) {
  // botocore and s3cmd sign "/bucket/" for a request sent to "/bucket".
  for (const char* path : {"/bucket", "/bucket/"}) {
    const Request r{"GET", path, "location", {{"host", "127.0.0.1:9000"}}};
    EXPECT_EQ(StringToSignV2(r.View(), "D", QueryString::Parse(r.query), "", false),
              "GET\n\n\nD\n/bucket/?location");
  }
  const Request object{"GET", "/bucket/key", "", {{"host", "127.0.0.1:9000"}}};
  EXPECT_EQ(StringToSignV2(object.View(), "D", QueryString(), "", false),
            "GET\n\n\nD\n/bucket/key");
}

TEST(SigV2StringToSignTest, QueryAuthSignsAmzQueryParametersAsHeaders) {
  // botocore's SigV2 presigner moves x-amz-* headers into the query string.
  const Request r{"PUT", "/b/k", "", {{"host", "h"}, {"x-amz-acl", "private"}}};
  const QueryString params =
      QueryString::Parse("AWSAccessKeyId=AK&x-amz-meta-Note=n1&x-amz-acl=ignored%3A+header+wins");
  EXPECT_EQ(StringToSignV2(r.View(), "99", params, "", /*query_auth=*/true),
            "PUT\n\n\n99\nx-amz-acl:private\nx-amz-meta-note:n1\n/b/k");
  EXPECT_EQ(StringToSignV2(r.View(), "99", params, "", /*query_auth=*/false),
            "PUT\n\n\n99\nx-amz-acl:private\n/b/k");
}

// ---- header authentication: dates, failures ------------------------------------------

// Signs `r` with the AWS example secret over the string to sign checked above.
Request SignedV2(Request r) {
  SetHeader(&r, "authorization", V2Authorization(SignV2(kAwsSecret, HeaderStringToSign(r))));
  return r;
}

TEST(SigV2HeaderTest, XAmzDateReplacesTheDateLine) {
  // s3cmd's form: no Date, x-amz-date in RFC 1123 with "+0000"; the Date line
  // is empty and x-amz-date is signed among the amz headers.
  Request r{"DELETE",
            "/awsexamplebucket1/photos/puppy.jpg",
            "",
            {{"host", "s3.us-west-1.amazonaws.com"},
             {"date", "Tue, 27 Mar 2007 21:20:27 +0000"},
             {"x-amz-date", "Tue, 27 Mar 2007 21:20:26 +0000"}}};
  EXPECT_EQ(HeaderStringToSign(r),
            "DELETE\n\n\n\nx-amz-date:Tue, 27 Mar 2007 21:20:26 +0000\n"
            "/awsexamplebucket1/photos/puppy.jpg");
  r = SignedV2(r);
  EXPECT_TRUE(IsOk(VerifyV2At(r, 1175030426)));
  EXPECT_TRUE(
      FailsWith(VerifyV2At(r, 1175030426 + 15 * 60 + 1), AuthErrorKind::kRequestTimeTooSkewed));
  EXPECT_TRUE(IsOk(VerifyV2At(r, 1175030426 - 15 * 60)));
  SetHeader(&r, "x-amz-date", "Tue, 27 Mar 2007 21:20:27 +0000");  // signed: tampering shows
  EXPECT_TRUE(FailsWith(VerifyV2At(r, 1175030426), AuthErrorKind::kSignatureDoesNotMatch));
  // With x-amz-date, Date is ignored (AWS): odd or absent, it changes nothing.
  for (const char* date : {"not a date", "Thu, 01 Jan 1970 00:00:00 GMT", ""}) {
    Request odd = r;
    SetHeader(&odd, "x-amz-date", "Tue, 27 Mar 2007 21:20:26 +0000");
    SetHeader(&odd, "date", date);
    odd = SignedV2(odd);
    EXPECT_TRUE(IsOk(VerifyV2At(odd, 1175030426))) << date;
  }
}

TEST(SigV2HeaderTest, ClockSkewAndDates) {
  EXPECT_TRUE(IsOk(VerifyV2At(AwsObjectGet(), kObjectGetTime + 15 * 60)));
  EXPECT_TRUE(FailsWith(VerifyV2At(AwsObjectGet(), kObjectGetTime + 15 * 60 + 1),
                        AuthErrorKind::kRequestTimeTooSkewed));
  EXPECT_TRUE(FailsWith(VerifyV2At(AwsObjectGet(), kObjectGetTime - 15 * 60 - 1),
                        AuthErrorKind::kRequestTimeTooSkewed));
  Request r = AwsObjectGet();
  RemoveHeader(&r, "date");
  EXPECT_TRUE(FailsWith(VerifyV2At(r, kObjectGetTime), AuthErrorKind::kMissingDate));
  SetHeader(&r, "date", "27/03/2007 19:36:42");
  EXPECT_TRUE(FailsWith(VerifyV2At(r, kObjectGetTime), AuthErrorKind::kMissingDate));
  // The same instant written with GMT (botocore's form) signs differently but verifies.
  r = AwsObjectGet();
  SetHeader(&r, "date", "Tue, 27 Mar 2007 19:36:42 GMT");
  r = SignedV2(r);
  EXPECT_TRUE(IsOk(VerifyV2At(r, kObjectGetTime)));
}

TEST(SigV2HeaderTest, FailuresAreTyped) {
  EXPECT_TRUE(FailsWith(VerifyV2At(AwsObjectGet(), kObjectGetTime, kV2Domain,
                                   Secrets({{kAwsAccessKey, "not-the-secret"}})),
                        AuthErrorKind::kSignatureDoesNotMatch));
  EXPECT_TRUE(FailsWith(VerifyV2At(AwsObjectGet(), kObjectGetTime, kV2Domain, Secrets({})),
                        AuthErrorKind::kInvalidAccessKeyId));
  for (const char* bad : {"AWS ", "AWS AKIAIOSFODNN7EXAMPLE", "AWS :sig", "AWS AKID:"}) {
    Request r = AwsObjectGet();
    SetHeader(&r, "authorization", bad);
    EXPECT_TRUE(FailsWith(VerifyV2At(r, kObjectGetTime), AuthErrorKind::kMalformedHeader)) << bad;
  }
  // Anything signed changes the signature: method, path, sub-resources,
  // Content-Type, and every x-amz-* header (none can be added unsigned).
  std::vector<Request> tampered(5, AwsObjectGet());
  tampered[0].method = "DELETE";
  tampered[1].path = "/photos/kitten.jpg";
  tampered[2].query = "acl";
  SetHeader(&tampered[3], "content-type", "text/html");
  SetHeader(&tampered[4], "x-amz-copy-source", "/other-bucket/secret");
  for (const Request& r : tampered) {
    EXPECT_TRUE(FailsWith(VerifyV2At(r, kObjectGetTime), AuthErrorKind::kSignatureDoesNotMatch));
  }
  // Headers outside the string to sign may change.
  Request r = AwsObjectGet();
  SetHeader(&r, "user-agent", "other");
  SetHeader(&r, "range", "bytes=0-1");
  EXPECT_TRUE(IsOk(VerifyV2At(r, kObjectGetTime)));
}

TEST(SigV2HeaderTest, SignedPayloadDigestIsReported) {
  Request r = AwsObjectGet();
  SetHeader(&r, "x-amz-content-sha256", kEmptySha256);
  r = SignedV2(r);
  VerifyResult result = VerifyV2At(r, kObjectGetTime);
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(std::get<AuthContext>(result).payload_mode, PayloadMode::kSignedPayload);
  EXPECT_EQ(std::get<AuthContext>(result).payload_sha256_hex, kEmptySha256);
  // No seed signature to chain aws-chunked signatures from.
  SetHeader(&r, "x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
  r = SignedV2(r);
  EXPECT_TRUE(FailsWith(VerifyV2At(r, kObjectGetTime), AuthErrorKind::kInvalidContentSha256));
}

// ---- query authentication -------------------------------------------------------------

TEST(SigV2QueryTest, MalformedOrMixedParameters) {
  const Request missing_expires{
      "GET", "/b/k", "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=abc", {{"host", "h"}}};
  EXPECT_TRUE(FailsWith(VerifyV2At(missing_expires, 0), AuthErrorKind::kMalformedQuery));
  const Request bad_expires{"GET",
                            "/b/k",
                            "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=abc&Expires=tomorrow",
                            {{"host", "h"}}};
  EXPECT_TRUE(FailsWith(VerifyV2At(bad_expires, 0), AuthErrorKind::kMalformedQuery));
  Request both = missing_expires;
  SetHeader(&both, "authorization", V2Authorization("abc"));
  EXPECT_TRUE(FailsWith(VerifyV2At(both, 0), AuthErrorKind::kMalformedQuery));
}

TEST(SigV2QueryTest, UnencodedPlusInTheSignature) {
  // NpgCjnDzrM+WFzoENXmpNDUsSn8= with '+' and '=' left raw in the URL.
  const Request r{"GET",
                  "/johnsmith/photos/puppy.jpg",
                  "AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1175139620&"
                  "Signature=NpgCjnDzrM+WFzoENXmpNDUsSn8=",
                  {{"host", "s3.amazonaws.com"}}};
  EXPECT_TRUE(IsOk(VerifyV2At(r, 1175139000, "")));
}

TEST(SigV2Test, SignV2IsBase64HmacSha1) {
  // RFC 2202, HMAC-SHA1 test case 2: key "Jefe".
  EXPECT_EQ(HexEncode(*Base64Decode(SignV2("Jefe", "what do ya want for nothing?"))),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
  EXPECT_TRUE(SignatureV2Equal("abc=", "abc="));
  EXPECT_FALSE(SignatureV2Equal("abc=", "abd="));
  EXPECT_FALSE(SignatureV2Equal("abc=", "abc"));
}

}  // namespace
}  // namespace strata::auth

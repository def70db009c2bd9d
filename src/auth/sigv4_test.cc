#include "auth/sigv4.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "auth/auth_test_util.h"
#include "common/encoding.h"
#include "common/hash.h"

namespace strata::auth {
namespace {

using namespace testing_util;  // NOLINT(build/namespaces)

// Signs a request as a client would. The canonical forms it relies on are
// checked against the AWS vectors below, so this only builds inputs for
// tests of the surrounding logic (Date header, regions, the key cache).
std::string SignForTest(const Request& r, std::string_view secret, std::string_view amz_date,
                        std::string_view region, std::string_view signed_headers,
                        std::string_view payload_hash) {
  std::string headers;
  size_t start = 0;
  while (start <= signed_headers.size()) {
    size_t end = std::min(signed_headers.find(';', start), signed_headers.size());
    std::string name(signed_headers.substr(start, end - start));
    for (const auto& [key, value] : r.headers) {
      if (key == name) headers += name + ":" + value + "\n";
    }
    start = end + 1;
  }
  std::string canonical = r.method + "\n" + CanonicalUri(r.path) + "\n" +
                          CanonicalQuery(r.query, true) + "\n" + headers + "\n" +
                          std::string(signed_headers) + "\n" + std::string(payload_hash);
  std::string date(amz_date.substr(0, 8));
  std::string scope = date + "/" + std::string(region) + "/s3/aws4_request";
  std::string sts =
      "AWS4-HMAC-SHA256\n" + std::string(amz_date) + "\n" + scope + "\n" + Sha256Hex(canonical);
  return Hex(HmacSha256(DeriveSigningKey(secret, date, region, "s3"), sts));
}

// ---- canonical forms ---------------------------------------------------------

TEST(CanonicalUriTest, DecodesOnceAndEncodesOnce) {
  EXPECT_EQ(CanonicalUri("/test.txt"), "/test.txt");
  EXPECT_EQ(CanonicalUri("/test$file.text"), "/test%24file.text");
  EXPECT_EQ(CanonicalUri("/test%24file.text"), "/test%24file.text");
  EXPECT_EQ(CanonicalUri("/a b/c%20d"), "/a%20b/c%20d");
  EXPECT_EQ(CanonicalUri("/b/%C3%A9+x~y"), "/b/%C3%A9%2Bx~y");
  EXPECT_EQ(CanonicalUri("/b/a%2Fb"), "/b/a%2Fb");        // an encoded slash stays encoded
  EXPECT_EQ(CanonicalUri("/b/./../k//"), "/b/./../k//");  // S3 does not normalize
  EXPECT_EQ(CanonicalUri(""), "/");
  EXPECT_EQ(CanonicalUri("/"), "/");
}

TEST(CanonicalQueryTest, SortsDecodesAndReencodes) {
  EXPECT_EQ(CanonicalQuery("", false), "");
  EXPECT_EQ(CanonicalQuery("lifecycle", false), "lifecycle=");
  EXPECT_EQ(CanonicalQuery("prefix=J&max-keys=2", false), "max-keys=2&prefix=J");
  EXPECT_EQ(CanonicalQuery("b=2&a=1&a=0", false), "a=0&a=1&b=2");
  EXPECT_EQ(CanonicalQuery("prefix=a+b%2Bc&d=%2f", false), "d=%2F&prefix=a%20b%2Bc");
  EXPECT_EQ(CanonicalQuery("k=a/b&&x", false), "k=a%2Fb&x=");
  EXPECT_EQ(CanonicalQuery("X-Amz-Signature=ab&x=1", true), "x=1");
  EXPECT_EQ(CanonicalQuery("X-Amz-Signature=ab&x=1", false), "X-Amz-Signature=ab&x=1");
}

TEST(DeriveSigningKeyTest, MatchesAwsGeneralReferenceExample) {
  // AWS General Reference, "Examples of how to derive a signing key for
  // Signature Version 4" (IAM, 20120215, us-east-1).
  std::string key =
      DeriveSigningKey("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215", "us-east-1", "iam");
  EXPECT_EQ(HexEncode(key), "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

// ---- AWS documentation vectors: Authorization header --------------------------
// "Signature Calculations for the Authorization Header: Transferring Payload
// in a Single Chunk", examples GET Object, PUT Object, GET Bucket Lifecycle
// and Get Bucket (List Objects).

Request AwsGetObject() {
  return {"GET",
          "/test.txt",
          "",
          {{"host", "examplebucket.s3.amazonaws.com"},
           {"range", "bytes=0-9"},
           {"x-amz-content-sha256", kEmptySha256},
           {"x-amz-date", kAwsDate},
           {"authorization",
            AwsAuthorization("host;range;x-amz-content-sha256;x-amz-date",
                             "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")}}};
}

TEST(SigV4HeaderTest, AwsGetObjectExample) {
  VerifyResult result = VerifyAt(AwsGetObject(), kAwsTime);
  ASSERT_TRUE(IsOk(result));
  const AuthContext& ctx = std::get<AuthContext>(result);
  EXPECT_EQ(ctx.access_key, kAwsAccessKey);
  EXPECT_EQ(ctx.payload_mode, PayloadMode::kSignedPayload);
  EXPECT_EQ(ctx.payload_sha256_hex, kEmptySha256);
  EXPECT_FALSE(ctx.presigned);
  EXPECT_EQ(ctx.amz_date, kAwsDate);
  EXPECT_EQ(ctx.scope, kAwsScope);
  EXPECT_EQ(ctx.seed_signature_hex,
            "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(ctx.signing_key, DeriveSigningKey(kAwsSecret, "20130524", "us-east-1", "s3"));
}

TEST(SigV4HeaderTest, AcceptsSpacesAfterCommasAndUppercaseSignatureHex) {
  Request r = AwsGetObject();
  SetHeader(
      &r, "authorization",
      AwsAuthorization("host;range;x-amz-content-sha256;x-amz-date",
                       "F0E8BDB87C964420E857BD35B5D6ED310BD44F0170ABA48DD91039C6036BDB41", ",  "));
  EXPECT_TRUE(IsOk(VerifyAt(r, kAwsTime)));
}

TEST(SigV4HeaderTest, AwsPutObjectExample) {
  const std::string payload_hash = Sha256Hex("Welcome to Amazon S3.");
  ASSERT_EQ(payload_hash, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  Request r{
      "PUT",
      "/test$file.text",
      "",
      {{"host", "examplebucket.s3.amazonaws.com"},
       {"date", "Fri, 24 May 2013 00:00:00 GMT"},
       {"authorization",
        AwsAuthorization("date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
                         "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd", ", ")},
       {"x-amz-date", kAwsDate},
       {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
       {"x-amz-content-sha256", payload_hash}}};
  ASSERT_TRUE(IsOk(VerifyAt(r, kAwsTime)));
  r.path = "/test%24file.text";  // the same key, as an encoding client sends it
  EXPECT_TRUE(IsOk(VerifyAt(r, kAwsTime)));
}

Request AwsBucketGet(std::string query, std::string signature) {
  return {"GET",
          "/",
          std::move(query),
          {{"host", "examplebucket.s3.amazonaws.com"},
           {"x-amz-date", kAwsDate},
           {"x-amz-content-sha256", kEmptySha256},
           {"authorization", AwsAuthorization("host;x-amz-content-sha256;x-amz-date", signature)}}};
}

TEST(SigV4HeaderTest, AwsGetBucketLifecycleExample) {
  EXPECT_TRUE(IsOk(VerifyAt(
      AwsBucketGet("lifecycle", "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"),
      kAwsTime)));
}

TEST(SigV4HeaderTest, AwsListObjectsExample) {
  const std::string signature = "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7";
  EXPECT_TRUE(IsOk(VerifyAt(AwsBucketGet("max-keys=2&prefix=J", signature), kAwsTime)));
  // Parameter order on the wire does not matter; the canonical form sorts.
  EXPECT_TRUE(IsOk(VerifyAt(AwsBucketGet("prefix=J&max-keys=2", signature), kAwsTime)));
  EXPECT_TRUE(FailsWith(VerifyAt(AwsBucketGet("max-keys=3&prefix=J", signature), kAwsTime),
                        AuthErrorKind::kSignatureDoesNotMatch));
}

// ---- botocore vectors ----------------------------------------------------------
// Generated once with /usr/bin/python3 and botocore 1.29.27: an AWSRequest
// signed by botocore.auth.S3SigV4Auth (or S3SigV4QueryAuth, expires=3600) for
// Credentials("AKIDSTRATATEST", "strata/secret+key/EXAMPLE"), region
// eu-central-1, with botocore.auth.datetime mocked so utcnow() returns
// 2024-03-09 12:34:56; the wire path/query come from request.prepare().url.
// The key is quote("photos/my summer é+ü (1)!*'$.jpg", safe="/~").

constexpr char kBotoAccessKey[] = "AKIDSTRATATEST";
constexpr char kBotoSecret[] = "strata/secret+key/EXAMPLE";
constexpr int64_t kBotoTime = 1709987696;  // 2024-03-09T12:34:56Z
constexpr char kBotoPath[] =
    "/strata-bucket/photos/my%20summer%20%C3%A9%2B%C3%BC%20%281%29%21%2A%27%24.jpg";

SecretLookup BotoSecrets() { return Secrets({{kBotoAccessKey, kBotoSecret}}); }

Request BotoPutObject() {
  return {
      "PUT",
      kBotoPath,
      "",
      {{"host", "127.0.0.1:9000"},
       {"content-type", "image/jpeg"},
       {"x-amz-meta-note", "  two   spaces\there  "},
       {"x-amz-date", "20240309T123456Z"},
       {"x-amz-content-sha256", "053a324e98c10a06165fa5c6ea1617b08d51d8e3460f0be60fe41ebaad8d3ee7"},
       {"authorization",
        "AWS4-HMAC-SHA256 Credential=AKIDSTRATATEST/20240309/eu-central-1/s3/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-meta-note, "
        "Signature=30e5da8cbe92b511db8bbc87eb0845aa109650090e43872402429971e5e20042"},
       {"content-length", "13"}}};
}

TEST(SigV4BotocoreTest, PutObjectWithUnicodeKeyAndUntidyHeader) {
  VerifyResult result = VerifyAt(BotoPutObject(), kBotoTime, BotoSecrets());
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(std::get<AuthContext>(result).scope, "20240309/eu-central-1/s3/aws4_request");
  EXPECT_EQ(std::get<AuthContext>(result).payload_sha256_hex, Sha256Hex("hello strata\n"));
}

TEST(SigV4BotocoreTest, SameKeyWithFewerEscapesOnTheWire) {
  Request r = BotoPutObject();
  r.path = "/strata-bucket/photos/my%20summer%20%C3%A9%2B%C3%BC%20(1)!*'$.jpg";
  EXPECT_TRUE(IsOk(VerifyAt(r, kBotoTime, BotoSecrets())));
  r.path = "/strata-bucket/photos/my%20summer%20%C3%A9+%C3%BC%20(1)!*'$.jpg";  // '+' is literal
  EXPECT_TRUE(IsOk(VerifyAt(r, kBotoTime, BotoSecrets())));
}

TEST(SigV4BotocoreTest, ListWithFormEncodedQuery) {
  // botocore's prepare() form-encodes params ('+' for space) but signs %20.
  Request r{"GET",
            "/strata-bucket",
            "list-type=2&prefix=dir+one%2F%C3%A9%2Bx&delimiter=%2F&max-keys=10",
            {{"host", "127.0.0.1:9000"},
             {"x-amz-date", "20240309T123456Z"},
             {"x-amz-content-sha256", kEmptySha256},
             {"authorization",
              "AWS4-HMAC-SHA256 Credential=AKIDSTRATATEST/20240309/eu-central-1/s3/aws4_request, "
              "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
              "Signature=abc668289d073ee96cf107f39ee854b2333ed2b09fdd78b4f177d5df6386eced"}}};
  EXPECT_TRUE(IsOk(VerifyAt(r, kBotoTime, BotoSecrets())));
}

TEST(SigV4BotocoreTest, PresignedGet) {
  Request r{"GET",
            kBotoPath,
            "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDSTRATATEST%2F20240309%2F"
            "eu-central-1%2Fs3%2Faws4_request&X-Amz-Date=20240309T123456Z&X-Amz-Expires=3600&"
            "X-Amz-SignedHeaders=host&X-Amz-Signature="
            "4217e495b0bd899fc6bd6fc91e3776320bb33bfe6b20126fb635ab4e650575f5",
            {{"host", "127.0.0.1:9000"}}};
  VerifyResult result = VerifyAt(r, kBotoTime + 100, BotoSecrets());
  ASSERT_TRUE(IsOk(result));
  EXPECT_TRUE(std::get<AuthContext>(result).presigned);
  EXPECT_TRUE(FailsWith(VerifyAt(r, kBotoTime + 3601, BotoSecrets()), AuthErrorKind::kExpired));
}

// ---- header auth: failures -------------------------------------------------------

TEST(SigV4HeaderTest, NoCredentialsIsMissing) {
  Request r{"GET", "/b/k", "x=1", {{"host", "h"}}};
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kMissing));
  r.headers.clear();  // no headers at all
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kMissing));
  RequestView no_headers{"GET", "/", "", nullptr};
  Verifier verifier(AwsSecrets());
  EXPECT_TRUE(FailsWith(verifier.Verify(no_headers, kAwsTime), AuthErrorKind::kMissing));
}

TEST(SigV4HeaderTest, OtherAlgorithmsAndSwitchedOffSigV2AreUnsupported) {
  Request r = AwsGetObject();
  SetHeader(&r, "authorization", "AWS4-ECDSA-P256-SHA256 Credential=x");
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kUnsupportedAlgorithm));

  VerifierOptions v2_off;
  v2_off.sigv2 = false;
  Verifier no_v2(AwsSecrets(), v2_off);
  SetHeader(&r, "authorization", "AWS AKIAIOSFODNN7EXAMPLE:frJIUN8DYpKDtOLCwo//yllqDzg=");
  EXPECT_TRUE(FailsWith(no_v2.Verify(r.View(), kAwsTime), AuthErrorKind::kUnsupportedAlgorithm));
  Request v2_query{"GET", "/b/k", "AWSAccessKeyId=AK&Expires=1&Signature=abc", {{"host", "h"}}};
  EXPECT_TRUE(
      FailsWith(no_v2.Verify(v2_query.View(), kAwsTime), AuthErrorKind::kUnsupportedAlgorithm));
}

TEST(SigV4HeaderTest, WrongSecretDoesNotMatch) {
  VerifyResult result =
      VerifyAt(AwsGetObject(), kAwsTime, Secrets({{kAwsAccessKey, "not-the-secret"}}));
  EXPECT_TRUE(FailsWith(result, AuthErrorKind::kSignatureDoesNotMatch));
}

TEST(SigV4HeaderTest, TamperedRequestDoesNotMatch) {
  Request r = AwsGetObject();
  SetHeader(&r, "range", "bytes=0-99");
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));

  r = AwsGetObject();
  r.path = "/test.txt2";
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));

  r = AwsGetObject();
  r.method = "DELETE";
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));

  r = AwsGetObject();
  r.query = "versionId=1";
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));

  r = AwsGetObject();
  RemoveHeader(&r, "range");  // signed but absent
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));

  r = AwsGetObject();
  SetHeader(&r, "authorization",
            AwsAuthorization("host;range;x-amz-content-sha256;x-amz-date",
                             "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb40"));
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));
}

TEST(SigV4HeaderTest, UnknownAccessKey) {
  EXPECT_TRUE(FailsWith(VerifyAt(AwsGetObject(), kAwsTime, Secrets({{"OTHER", kAwsSecret}})),
                        AuthErrorKind::kInvalidAccessKeyId));
}

TEST(SigV4HeaderTest, MalformedAuthorization) {
  const std::string sig = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";
  const std::string cred = std::string("Credential=") + kAwsAccessKey + "/" + kAwsScope;
  const std::string bad_values[] = {
      "",
      "AWS4-HMAC-SHA256",
      "AWS4-HMAC-SHA256 " + cred + ",SignedHeaders=host;range",  // no Signature
      "AWS4-HMAC-SHA256 " + cred + ",SignedHeaders=host,Signature=" + sig + ",Extra=1",
      "AWS4-HMAC-SHA256 " + cred + "," + cred + ",SignedHeaders=host,Signature=" + sig,
      "AWS4-HMAC-SHA256 " + cred + ",SignedHeaders=range;x-amz-date,Signature=" + sig,
      "AWS4-HMAC-SHA256 " + cred + ",SignedHeaders=host;;range,Signature=" + sig,
      "AWS4-HMAC-SHA256 " + cred + ",SignedHeaders=host,Signature=xyz",
      "AWS4-HMAC-SHA256 " + cred + ",SignedHeaders=host,Signature=" + sig + "00",
      "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3,SignedHeaders=host,Signature=" + sig,
      "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/ec2/aws4_request,SignedHeaders=host,"
      "Signature=" +
          sig,
      "AWS4-HMAC-SHA256 Credential=AK/2013052/us-east-1/s3/aws4_request,SignedHeaders=host,"
      "Signature=" +
          sig,
      "AWS4-HMAC-SHA256 Credential=AK/20130524//s3/aws4_request,SignedHeaders=host,"
      "Signature=" +
          sig,
      "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws5_request,SignedHeaders=host,"
      "Signature=" +
          sig,
      // The credential date must be the day of x-amz-date.
      "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130523/us-east-1/s3/aws4_request,"
      "SignedHeaders=host,Signature=" +
          sig,
  };
  for (const std::string& value : bad_values) {
    Request r = AwsGetObject();
    SetHeader(&r, "authorization", value);
    EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kMalformedHeader)) << value;
  }
}

TEST(SigV4HeaderTest, ContentSha256IsRequiredAndChecked) {
  Request r = AwsGetObject();
  RemoveHeader(&r, "x-amz-content-sha256");
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kInvalidContentSha256));
  for (const char* bad :
       {"", "abc", "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
        "STREAMING-AWS4-HMAC-SHA256-EVENTS", "unsigned-payload"}) {
    SetHeader(&r, "x-amz-content-sha256", bad);
    EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kInvalidContentSha256)) << bad;
  }
}

TEST(SigV4HeaderTest, DateIsRequired) {
  Request r = AwsGetObject();
  RemoveHeader(&r, "x-amz-date");
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kMissingDate));
  SetHeader(&r, "x-amz-date", "2013-05-24T00:00:00Z");
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kMissingDate));
  SetHeader(&r, "x-amz-date", "20131324T000000Z");  // month 13
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kMissingDate));
  RemoveHeader(&r, "x-amz-date");
  SetHeader(&r, "date", "Friday, 24-May-13 00:00:00 GMT");  // RFC 850: not accepted
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kMissingDate));
}

// x-amz-date takes precedence over Date (AWS: "if both are specified, the
// x-amz-date header takes precedence"): the time comes from x-amz-date, and a
// Date that is odd, old or not a date at all does not matter, signed or not.
TEST(SigV4HeaderTest, XAmzDateTakesPrecedenceOverDate) {
  for (const char* date : {"not a date", "Thu, 01 Jan 1970 00:00:00 GMT",
                           "Sunday, 06-Nov-94 08:49:37 GMT", ""}) {
    for (const char* signed_headers :
         {"host;x-amz-content-sha256;x-amz-date", "date;host;x-amz-content-sha256;x-amz-date"}) {
      Request r{"GET",
                "/bucket/key",
                "",
                {{"host", "h"},
                 {"date", date},
                 {"x-amz-date", kAwsDate},
                 {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}}};
      std::string sig =
          SignForTest(r, kAwsSecret, kAwsDate, "us-east-1", signed_headers, "UNSIGNED-PAYLOAD");
      SetHeader(&r, "authorization", AwsAuthorization(signed_headers, sig));
      VerifyResult result = VerifyAt(r, kAwsTime);
      ASSERT_TRUE(IsOk(result)) << date << " / " << signed_headers;
      EXPECT_EQ(std::get<AuthContext>(result).amz_date, kAwsDate);
      // The clock check uses x-amz-date too.
      EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime + 3600), AuthErrorKind::kRequestTimeTooSkewed));
      if (std::string_view(signed_headers).starts_with("date;")) {
        Request changed = r;
        SetHeader(&changed, "date", "Fri, 24 May 2013 00:00:01 GMT");  // signed: it must match
        EXPECT_TRUE(FailsWith(VerifyAt(changed, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));
      }
    }
  }
  // A bad x-amz-date is not rescued by a good Date.
  Request r = AwsGetObject();
  SetHeader(&r, "x-amz-date", "20130524");
  SetHeader(&r, "date", "Fri, 24 May 2013 00:00:00 GMT");
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kMissingDate));
}

TEST(SigV4HeaderTest, DateHeaderAloneIsEnough) {
  Request r{"GET",
            "/bucket/key",
            "",
            {{"host", "localhost"},
             {"date", "Fri, 24 May 2013 00:00:00 GMT"},
             {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}}};
  std::string sig =
      SignForTest(r, kAwsSecret, kAwsDate, "us-east-1", "date;host", "UNSIGNED-PAYLOAD");
  SetHeader(&r, "authorization", AwsAuthorization("date;host", sig));
  VerifyResult result = VerifyAt(r, kAwsTime);
  ASSERT_TRUE(IsOk(result));
  EXPECT_EQ(std::get<AuthContext>(result).payload_mode, PayloadMode::kUnsignedPayload);
  EXPECT_EQ(std::get<AuthContext>(result).amz_date, kAwsDate);
}

TEST(SigV4HeaderTest, ClockSkew) {
  const int64_t kSkew = 15 * 60;
  EXPECT_TRUE(IsOk(VerifyAt(AwsGetObject(), kAwsTime + kSkew)));
  EXPECT_TRUE(IsOk(VerifyAt(AwsGetObject(), kAwsTime - kSkew)));
  EXPECT_TRUE(FailsWith(VerifyAt(AwsGetObject(), kAwsTime + kSkew + 1),
                        AuthErrorKind::kRequestTimeTooSkewed));
  EXPECT_TRUE(FailsWith(VerifyAt(AwsGetObject(), kAwsTime - kSkew - 1),
                        AuthErrorKind::kRequestTimeTooSkewed));
  VerifierOptions ten_seconds;
  ten_seconds.max_skew_seconds = 10;
  Verifier strict(AwsSecrets(), ten_seconds);
  EXPECT_TRUE(FailsWith(strict.Verify(AwsGetObject().View(), kAwsTime + 11),
                        AuthErrorKind::kRequestTimeTooSkewed));
}

TEST(SigV4HeaderTest, AnyRegionInTheScopeIsAccepted) {
  for (const char* region : {"us-east-1", "eu-central-1", "mars-west-1", "garage"}) {
    Request r{"PUT",
              "/bucket/key",
              "uploads",
              {{"host", "localhost:9000"},
               {"x-amz-date", kAwsDate},
               {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}}};
    std::string sig = SignForTest(r, kAwsSecret, kAwsDate, region,
                                  "host;x-amz-content-sha256;x-amz-date", "UNSIGNED-PAYLOAD");
    SetHeader(&r, "authorization",
              std::string("AWS4-HMAC-SHA256 Credential=") + kAwsAccessKey + "/20130524/" + region +
                  "/s3/aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
                  "Signature=" +
                  sig);
    VerifyResult result = VerifyAt(r, kAwsTime);
    ASSERT_TRUE(IsOk(result)) << region;
    EXPECT_EQ(std::get<AuthContext>(result).scope,
              std::string("20130524/") + region + "/s3/aws4_request");
  }
}

TEST(SigV4HeaderTest, StreamingModesAreReported) {
  const std::pair<const char*, PayloadMode> kModes[] = {
      {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD", PayloadMode::kStreamingSigned},
      {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", PayloadMode::kStreamingSignedTrailer},
      {"STREAMING-UNSIGNED-PAYLOAD-TRAILER", PayloadMode::kStreamingUnsignedTrailer},
  };
  for (const auto& [value, mode] : kModes) {
    Request r{"PUT",
              "/bucket/key",
              "",
              {{"host", "h"}, {"x-amz-date", kAwsDate}, {"x-amz-content-sha256", value}}};
    constexpr char kSigned[] = "host;x-amz-content-sha256;x-amz-date";
    std::string sig = SignForTest(r, kAwsSecret, kAwsDate, "us-east-1", kSigned, value);
    SetHeader(&r, "authorization", AwsAuthorization(kSigned, sig));
    VerifyResult result = VerifyAt(r, kAwsTime);
    ASSERT_TRUE(IsOk(result)) << value;
    EXPECT_EQ(std::get<AuthContext>(result).payload_mode, mode);
    EXPECT_EQ(std::get<AuthContext>(result).seed_signature_hex, sig);
  }
}

TEST(SigV4HeaderTest, SigningKeyCacheStaysCorrectPastItsBound) {
  // More distinct (date, region) pairs than the cache holds, each verified
  // twice: once deriving the key, once (usually) from the cache.
  Verifier verifier(AwsSecrets());
  for (int i = 0; i < 1100; ++i) {
    std::string region = "r" + std::to_string(i);
    Request r{
        "GET",
        "/b",
        "",
        {{"host", "h"}, {"x-amz-date", kAwsDate}, {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}}};
    std::string sig = SignForTest(r, kAwsSecret, kAwsDate, region,
                                  "host;x-amz-content-sha256;x-amz-date", "UNSIGNED-PAYLOAD");
    SetHeader(&r, "authorization",
              std::string("AWS4-HMAC-SHA256 Credential=") + kAwsAccessKey + "/20130524/" + region +
                  "/s3/aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
                  "Signature=" +
                  sig);
    ASSERT_TRUE(IsOk(verifier.Verify(r.View(), kAwsTime))) << i;
    ASSERT_TRUE(IsOk(verifier.Verify(r.View(), kAwsTime))) << i;
  }
}

// ---- presigned URLs ------------------------------------------------------------
// "Authenticating Requests: Using Query Parameters", GET Object example.

std::string AwsPresignQuery(
    std::string_view expires = "86400",
    std::string_view signature =
        "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404") {
  return "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2F"
         "us-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=" +
         std::string(expires) +
         "&X-Amz-SignedHeaders=host&X-Amz-Signature=" + std::string(signature);
}

Request AwsPresigned(std::string query = AwsPresignQuery()) {
  return {"GET", "/test.txt", std::move(query), {{"host", "examplebucket.s3.amazonaws.com"}}};
}

TEST(SigV4PresignTest, AwsExample) {
  VerifyResult result = VerifyAt(AwsPresigned(), kAwsTime + 60);
  ASSERT_TRUE(IsOk(result));
  const AuthContext& ctx = std::get<AuthContext>(result);
  EXPECT_TRUE(ctx.presigned);
  EXPECT_EQ(ctx.payload_mode, PayloadMode::kUnsignedPayload);
  EXPECT_EQ(ctx.access_key, kAwsAccessKey);
}

TEST(SigV4PresignTest, ValidityWindow) {
  EXPECT_TRUE(IsOk(VerifyAt(AwsPresigned(), kAwsTime + 86400)));
  EXPECT_TRUE(FailsWith(VerifyAt(AwsPresigned(), kAwsTime + 86401), AuthErrorKind::kExpired));
  // Signed slightly in the future (client clock ahead): fine within the skew.
  EXPECT_TRUE(IsOk(VerifyAt(AwsPresigned(), kAwsTime - 60)));
  EXPECT_TRUE(FailsWith(VerifyAt(AwsPresigned(), kAwsTime - 3600), AuthErrorKind::kNotYetValid));
}

// X-Amz-Expires as AWS answers it (AWS's messages, which MinIO, Ozone and
// others mirror): AuthorizationQueryParametersError for what is not a number,
// is negative or exceeds a week; 0 is a number, and the URL is then expired
// (AccessDenied "Request has expired"), even at its own X-Amz-Date.
TEST(SigV4PresignTest, ExpiresOutOfRangeIsAnsweredAsAtAws) {
  const std::pair<const char*, const char*> kMalformed[] = {
      {"abc", "X-Amz-Expires should be a number"},
      {"", "X-Amz-Expires should be a number"},
      {"1.5", "X-Amz-Expires should be a number"},
      {"+60", "X-Amz-Expires should be a number"},
      {"-", "X-Amz-Expires should be a number"},
      {"-5", "X-Amz-Expires must be non-negative"},
      {"-604801", "X-Amz-Expires must be non-negative"},
      {"604801", "X-Amz-Expires must be less than a week (in seconds); that is, the given "
                 "X-Amz-Expires must be less than 604800 seconds"},
      {"99999999999", "X-Amz-Expires must be less than a week (in seconds); that is, the given "
                      "X-Amz-Expires must be less than 604800 seconds"},
  };
  for (const auto& [expires, message] : kMalformed) {
    VerifyResult result = VerifyAt(AwsPresigned(AwsPresignQuery(expires)), kAwsTime);
    ASSERT_TRUE(FailsWith(result, AuthErrorKind::kMalformedQuery)) << expires;
    EXPECT_EQ(std::get<AuthError>(result).message, message) << expires;
  }
  for (const char* zero : {"0", "000", "-0"}) {
    EXPECT_TRUE(FailsWith(VerifyAt(AwsPresigned(AwsPresignQuery(zero)), kAwsTime),
                          AuthErrorKind::kExpired))
        << zero;
    EXPECT_TRUE(FailsWith(VerifyAt(AwsPresigned(AwsPresignQuery(zero)), kAwsTime - 60),
                          AuthErrorKind::kExpired))
        << zero;
  }
  // The limits themselves are valid: a second and a week (the signature, made
  // for 86400, then fails; nothing before it does).
  for (const char* valid : {"1", "604800", "0000604800"}) {
    EXPECT_TRUE(FailsWith(VerifyAt(AwsPresigned(AwsPresignQuery(valid)), kAwsTime),
                          AuthErrorKind::kSignatureDoesNotMatch))
        << valid;
  }
}

TEST(SigV4PresignTest, MissingOrMalformedParameters) {
  const char* kParams[] = {"X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
                           "X-Amz-Signature"};
  for (const char* param : kParams) {
    std::string query = AwsPresignQuery();
    size_t start = query.find(param);
    size_t end = query.find('&', start);
    query.erase(start, end == std::string::npos ? std::string::npos : end - start + 1);
    EXPECT_TRUE(FailsWith(VerifyAt(AwsPresigned(query), kAwsTime), AuthErrorKind::kMalformedQuery))
        << query;
  }
  EXPECT_TRUE(FailsWith(VerifyAt(AwsPresigned(AwsPresignQuery("86400", "zz")), kAwsTime),
                        AuthErrorKind::kMalformedQuery));
  std::string bad_date = AwsPresignQuery();
  bad_date.replace(bad_date.find("20130524T000000Z"), 16, "20130524T000000");
  EXPECT_TRUE(
      FailsWith(VerifyAt(AwsPresigned(bad_date), kAwsTime), AuthErrorKind::kMalformedQuery));
  std::string other_service = AwsPresignQuery();
  other_service.replace(other_service.find("%2Fs3%2F"), 8, "%2Fsqs%2F");
  EXPECT_TRUE(
      FailsWith(VerifyAt(AwsPresigned(other_service), kAwsTime), AuthErrorKind::kMalformedQuery));
}

TEST(SigV4PresignTest, WrongAlgorithmAndDoubleAuth) {
  std::string query = AwsPresignQuery();
  query.replace(query.find("AWS4-HMAC-SHA256"), 16, "AWS4-HMAC-SHA512");
  EXPECT_TRUE(
      FailsWith(VerifyAt(AwsPresigned(query), kAwsTime), AuthErrorKind::kUnsupportedAlgorithm));

  Request both = AwsPresigned();
  SetHeader(&both, "authorization", AwsGetObject().headers.back().second);
  EXPECT_TRUE(FailsWith(VerifyAt(both, kAwsTime), AuthErrorKind::kMalformedQuery));
}

TEST(SigV4PresignTest, TamperingDoesNotMatch) {
  Request r = AwsPresigned();
  r.path = "/test.txx";
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));
  r = AwsPresigned(AwsPresignQuery() + "&response-content-type=text%2Fhtml");
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));
  r = AwsPresigned(AwsPresignQuery("86401"));
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));
  r = AwsPresigned();
  SetHeader(&r, "host", "evil.example.com");
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));
  EXPECT_TRUE(FailsWith(VerifyAt(AwsPresigned(), kAwsTime, Secrets({{kAwsAccessKey, "x"}})),
                        AuthErrorKind::kSignatureDoesNotMatch));
  EXPECT_TRUE(FailsWith(VerifyAt(AwsPresigned(), kAwsTime, Secrets({})),
                        AuthErrorKind::kInvalidAccessKeyId));
}

TEST(SigV4PresignTest, ContentSha256HeaderIsSignedWhenGiven) {
  // The presign example's signature was computed over UNSIGNED-PAYLOAD, so it
  // survives that header and fails with a digest in its place.
  Request r = AwsPresigned();
  SetHeader(&r, "x-amz-content-sha256", "UNSIGNED-PAYLOAD");
  EXPECT_TRUE(IsOk(VerifyAt(r, kAwsTime)));
  SetHeader(&r, "x-amz-content-sha256", kEmptySha256);
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));
  SetHeader(&r, "x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kInvalidContentSha256));
}

// ---- x-amz-* headers outside the signature -------------------------------------
// A presigned URL (or a captured request) must not gain x-amz-* headers: AWS
// answers AccessDenied, "There were headers present in the request which
// were not signed", and so does strata.

testing::AssertionResult NotSigned(const VerifyResult& result,
                                   const std::vector<std::string>& names) {
  testing::AssertionResult kind = FailsWith(result, AuthErrorKind::kHeadersNotSigned);
  if (!kind) return kind;
  const std::vector<std::string>& listed = std::get<AuthError>(result).headers_not_signed;
  if (listed != names) {
    std::string text;
    for (const std::string& n : listed) text += n + " ";
    return testing::AssertionFailure() << "headers_not_signed: " << text;
  }
  return testing::AssertionSuccess();
}

TEST(SigV4UnsignedHeadersTest, PresignedUrlGainsNoAmzHeaders) {
  Request r = AwsPresigned();
  SetHeader(&r, "x-amz-copy-source", "/other-bucket/secret");
  EXPECT_TRUE(NotSigned(VerifyAt(r, kAwsTime), {"x-amz-copy-source"}));

  r = AwsPresigned();
  SetHeader(&r, "x-amz-tagging", "a=b");
  SetHeader(&r, "x-amz-meta-owner", "mallory");
  r.headers.emplace_back("x-amz-meta-owner", "eve");  // a repeated header is listed once
  EXPECT_TRUE(NotSigned(VerifyAt(r, kAwsTime), {"x-amz-meta-owner", "x-amz-tagging"}));
}

TEST(SigV4UnsignedHeadersTest, HeaderAuthGainsNoAmzHeaders) {
  Request r = AwsGetObject();
  SetHeader(&r, "x-amz-server-side-encryption", "AES256");
  EXPECT_TRUE(NotSigned(VerifyAt(r, kAwsTime), {"x-amz-server-side-encryption"}));
  // A forged signature is reported as such, whatever else is wrong.
  SetHeader(&r, "range", "bytes=0-99");
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));
}

TEST(SigV4UnsignedHeadersTest, XAmzDateMustBeSigned) {
  Request r{"GET",
            "/bucket/key",
            "",
            {{"host", "h"}, {"x-amz-date", kAwsDate}, {"x-amz-content-sha256", kEmptySha256}}};
  std::string sig =
      SignForTest(r, kAwsSecret, kAwsDate, "us-east-1", "host;x-amz-content-sha256", kEmptySha256);
  SetHeader(&r, "authorization", AwsAuthorization("host;x-amz-content-sha256", sig));
  EXPECT_TRUE(NotSigned(VerifyAt(r, kAwsTime), {"x-amz-date"}));
}

TEST(SigV4UnsignedHeadersTest, ContentSha256MayStayUnsignedAsAtAws) {
  // Its value is the payload line of the canonical request, so the signature
  // covers it whether or not SignedHeaders names it; AWS accepts both.
  Request r{"PUT",
            "/bucket/key",
            "",
            {{"host", "h"}, {"x-amz-date", kAwsDate}, {"x-amz-content-sha256", kEmptySha256}}};
  std::string sig = SignForTest(r, kAwsSecret, kAwsDate, "us-east-1", "host;x-amz-date", kEmptySha256);
  SetHeader(&r, "authorization", AwsAuthorization("host;x-amz-date", sig));
  EXPECT_TRUE(IsOk(VerifyAt(r, kAwsTime)));
  SetHeader(&r, "x-amz-content-sha256", "UNSIGNED-PAYLOAD");  // ... and a changed value fails
  EXPECT_TRUE(FailsWith(VerifyAt(r, kAwsTime), AuthErrorKind::kSignatureDoesNotMatch));
}

TEST(SigV4UnsignedHeadersTest, OtherHeadersNeedNotBeSigned) {
  Request r = AwsPresigned();
  for (const auto& [name, value] : Headers{{"content-type", "text/plain"},
                                           {"user-agent", "curl/7.88"},
                                           {"x-amzn-trace-id", "Root=1-abc"},
                                           {"expect", "100-continue"}}) {
    SetHeader(&r, name, value);
  }
  EXPECT_TRUE(IsOk(VerifyAt(r, kAwsTime)));
}

}  // namespace
}  // namespace strata::auth

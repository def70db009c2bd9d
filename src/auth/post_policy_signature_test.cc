#include "auth/post_policy_signature.h"

#include <gtest/gtest.h>

#include <string>

#include "auth/auth_test_util.h"
#include "auth/sigv2.h"
#include "common/encoding.h"
#include "common/hash.h"

namespace strata::auth {
namespace {

using namespace testing_util;  // NOLINT(build/namespaces)
using Result = std::variant<PostSignature, PostSignatureError>;

const std::string kPolicy = Base64Encode(
    R"({"expiration": "2015-12-30T12:00:00.000Z", "conditions": [{"bucket": "b"}]})");
const std::string kAlgorithm = "AWS4-HMAC-SHA256";
const std::string kCredential = std::string(kAwsAccessKey) + "/20151229/us-east-1/s3/aws4_request";
const std::string kDate = "20151229T000000Z";
const std::string kAccessKey = kAwsAccessKey;

std::string V4Signature(std::string_view policy) {
  return Hex(HmacSha256(DeriveSigningKey(kAwsSecret, "20151229", "us-east-1", "s3"), policy));
}

struct Form {
  std::string signature = V4Signature(kPolicy);
  PostSignatureFields fields;
  Form() {
    fields.algorithm = &kAlgorithm;
    fields.credential = &kCredential;
    fields.date = &kDate;
    fields.signature = &signature;
  }
};

testing::AssertionResult Refused(const Result& r, PostSignatureErrorKind kind,
                                   std::string_view field = {}) {
  const auto* e = std::get_if<PostSignatureError>(&r);
  if (e == nullptr) return testing::AssertionFailure() << "verified";
  if (e->kind != kind || e->field != field) {
    return testing::AssertionFailure() << "kind " << static_cast<int>(e->kind) << " field '"
                                       << e->field << "'";
  }
  return testing::AssertionSuccess();
}

TEST(PostSignatureTest, SigV4FormVerifies) {
  Form form;
  Result r = VerifyPostSignature(form.fields, kPolicy, AwsSecrets(), /*sigv2_allowed=*/true);
  ASSERT_TRUE(std::holds_alternative<PostSignature>(r));
  EXPECT_EQ(std::get<PostSignature>(r).access_key, kAwsAccessKey);
  EXPECT_EQ(std::get<PostSignature>(r).version, SignatureVersion::kV4);
  // Hex case does not matter; the credential's region is the signer's.
  std::string upper = form.signature;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  form.fields.signature = &upper;
  EXPECT_TRUE(std::holds_alternative<PostSignature>(
      VerifyPostSignature(form.fields, kPolicy, AwsSecrets(), true)));
}

TEST(PostSignatureTest, SigV4Failures) {
  Form form;
  EXPECT_TRUE(Refused(VerifyPostSignature(form.fields, kPolicy + "x", AwsSecrets(), true),
                        PostSignatureErrorKind::kSignatureDoesNotMatch));
  EXPECT_TRUE(Refused(VerifyPostSignature(form.fields, kPolicy, Secrets({{kAwsAccessKey, "no"}}),
                                            true),
                        PostSignatureErrorKind::kSignatureDoesNotMatch));
  EXPECT_TRUE(Refused(VerifyPostSignature(form.fields, kPolicy, Secrets({}), true),
                        PostSignatureErrorKind::kInvalidAccessKeyId));
  EXPECT_TRUE(Refused(VerifyPostSignature(form.fields, kPolicy, SecretLookup(), true),
                        PostSignatureErrorKind::kInvalidAccessKeyId));
  const std::string truncated = form.signature.substr(0, 63);
  form.fields.signature = &truncated;
  EXPECT_TRUE(Refused(VerifyPostSignature(form.fields, kPolicy, AwsSecrets(), true),
                        PostSignatureErrorKind::kSignatureDoesNotMatch));

  const std::string other_algorithm = "AWS4-HMAC-SHA512";
  Form wrong_algorithm;
  wrong_algorithm.fields.algorithm = &other_algorithm;
  EXPECT_TRUE(Refused(VerifyPostSignature(wrong_algorithm.fields, kPolicy, AwsSecrets(), true),
                        PostSignatureErrorKind::kUnsupportedAlgorithm));

  for (const char* bad : {"AK/20151229/us-east-1/s3", "AK/2015122/us-east-1/s3/aws4_request",
                          "/20151229/us-east-1/s3/aws4_request", "AK/20151229//s3/aws4_request",
                          "AK/20151229/us-east-1/ec2/aws4_request",
                          "AK/20151229/us-east-1/s3/aws4_request/x", "AK/2015122x/r/s3/aws4_request"}) {
    Form f;
    const std::string credential = bad;
    f.fields.credential = &credential;
    EXPECT_TRUE(Refused(VerifyPostSignature(f.fields, kPolicy, AwsSecrets(), true),
                          PostSignatureErrorKind::kMalformedCredential))
        << bad;
  }
}

TEST(PostSignatureTest, MissingFieldsAreNamedInOrder) {
  Form f;
  f.fields.signature = nullptr;
  EXPECT_TRUE(Refused(VerifyPostSignature(f.fields, kPolicy, AwsSecrets(), true),
                        PostSignatureErrorKind::kMissingField, "x-amz-signature"));
  f.fields.date = nullptr;
  EXPECT_TRUE(Refused(VerifyPostSignature(f.fields, kPolicy, AwsSecrets(), true),
                        PostSignatureErrorKind::kMissingField, "x-amz-date"));
  f.fields.credential = nullptr;
  EXPECT_TRUE(Refused(VerifyPostSignature(f.fields, kPolicy, AwsSecrets(), true),
                        PostSignatureErrorKind::kMissingField, "x-amz-credential"));
  f.fields.algorithm = nullptr;
  EXPECT_TRUE(Refused(VerifyPostSignature(f.fields, kPolicy, AwsSecrets(), true),
                        PostSignatureErrorKind::kMissingField, "x-amz-algorithm"));
}

TEST(PostSignatureTest, SigV2Form) {
  const std::string signature = SignV2(kAwsSecret, kPolicy);
  PostSignatureFields fields;
  fields.v2_access_key = &kAccessKey;
  fields.v2_signature = &signature;
  EXPECT_TRUE(IsSigV2PostForm(fields));
  Result r = VerifyPostSignature(fields, kPolicy, AwsSecrets(), /*sigv2_allowed=*/true);
  ASSERT_TRUE(std::holds_alternative<PostSignature>(r));
  EXPECT_EQ(std::get<PostSignature>(r).access_key, kAwsAccessKey);
  EXPECT_EQ(std::get<PostSignature>(r).version, SignatureVersion::kV2);

  EXPECT_TRUE(Refused(VerifyPostSignature(fields, kPolicy, AwsSecrets(), /*sigv2_allowed=*/false),
                        PostSignatureErrorKind::kUnsupportedAlgorithm));
  EXPECT_TRUE(Refused(VerifyPostSignature(fields, kPolicy + "x", AwsSecrets(), true),
                        PostSignatureErrorKind::kSignatureDoesNotMatch));
  EXPECT_TRUE(Refused(VerifyPostSignature(fields, kPolicy, Secrets({}), true),
                        PostSignatureErrorKind::kInvalidAccessKeyId));
  PostSignatureFields no_signature;
  no_signature.v2_access_key = &kAccessKey;
  EXPECT_TRUE(Refused(VerifyPostSignature(no_signature, kPolicy, AwsSecrets(), true),
                        PostSignatureErrorKind::kMissingField, "Signature"));
  PostSignatureFields no_key;
  no_key.v2_signature = &signature;
  EXPECT_TRUE(Refused(VerifyPostSignature(no_key, kPolicy, AwsSecrets(), true),
                        PostSignatureErrorKind::kMissingField, "AWSAccessKeyId"));
  // With x-amz-algorithm the form is SigV4, whatever else it carries.
  Form v4;
  v4.fields.v2_access_key = &kAccessKey;
  v4.fields.v2_signature = &signature;
  EXPECT_FALSE(IsSigV2PostForm(v4.fields));
  EXPECT_TRUE(std::holds_alternative<PostSignature>(
      VerifyPostSignature(v4.fields, kPolicy, AwsSecrets(), true)));
}

}  // namespace
}  // namespace strata::auth

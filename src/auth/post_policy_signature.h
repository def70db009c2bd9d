// The signature of a browser-based upload (S3 POST Object): the form carries
// its credentials and a signature over the base64 policy document, as sent.
//
//   SigV4: x-amz-algorithm = AWS4-HMAC-SHA256, x-amz-credential =
//          <key>/<yyyymmdd>/<region>/s3/aws4_request, x-amz-date,
//          x-amz-signature = hex(HMAC-SHA256(signing key, policy))
//   SigV2: AWSAccessKeyId, signature = base64(HMAC-SHA1(secret, policy))
//
// The S3 operation (s3/ops/post_object.cc) reads the fields, calls
// VerifyPostSignature and maps its typed result onto S3 errors.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "auth/sigv4.h"

namespace strata::auth {

// The form fields the signature is carried in (nullptr: absent).
struct PostSignatureFields {
  const std::string* algorithm = nullptr;   // x-amz-algorithm
  const std::string* credential = nullptr;  // x-amz-credential
  const std::string* date = nullptr;        // x-amz-date
  const std::string* signature = nullptr;   // x-amz-signature
  const std::string* v2_access_key = nullptr;  // AWSAccessKeyId
  const std::string* v2_signature = nullptr;   // signature
};

enum class PostSignatureErrorKind {
  kMissingField,           // `field` names the form field that is required
  kUnsupportedAlgorithm,   // not AWS4-HMAC-SHA256, or a SigV2 form while SigV2 is off
  kMalformedCredential,    // x-amz-credential is not <key>/<yyyymmdd>/<region>/s3/aws4_request
  kInvalidAccessKeyId,     // the access key is unknown
  kSignatureDoesNotMatch,
};

struct PostSignatureError {
  PostSignatureErrorKind kind;
  std::string_view field;  // kMissingField: the field's name as AWS spells it
};

struct PostSignature {
  std::string access_key;
  SignatureVersion version = SignatureVersion::kV4;
};

// True for a SigV2 form: no x-amz-algorithm, and AWSAccessKeyId or signature.
bool IsSigV2PostForm(const PostSignatureFields& fields);

// Checks the form's signature over `policy_b64` (the policy field as sent).
std::variant<PostSignature, PostSignatureError> VerifyPostSignature(
    const PostSignatureFields& fields, std::string_view policy_b64, const SecretLookup& secrets,
    bool sigv2_allowed);

}  // namespace strata::auth

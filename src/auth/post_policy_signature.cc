#include "auth/post_policy_signature.h"

#include "auth/auth_util.h"
#include "auth/sigv2.h"
#include "common/hash.h"

namespace strata::auth {
namespace {

using Result = std::variant<PostSignature, PostSignatureError>;

PostSignatureError Missing(std::string_view field) {
  return {PostSignatureErrorKind::kMissingField, field};
}

PostSignatureError Failure(PostSignatureErrorKind kind) { return {kind, {}}; }

std::optional<std::string> SecretOf(const SecretLookup& secrets, std::string_view access_key) {
  if (!secrets) return std::nullopt;
  return secrets(access_key);
}

Result VerifyV2(const PostSignatureFields& f, std::string_view policy_b64,
                const SecretLookup& secrets, bool sigv2_allowed) {
  if (!sigv2_allowed) return Failure(PostSignatureErrorKind::kUnsupportedAlgorithm);
  if (!f.v2_access_key) return Missing("AWSAccessKeyId");
  if (!f.v2_signature) return Missing("Signature");
  std::optional<std::string> secret = SecretOf(secrets, *f.v2_access_key);
  if (!secret) return Failure(PostSignatureErrorKind::kInvalidAccessKeyId);
  if (!SignatureV2Equal(SignV2(*secret, policy_b64), *f.v2_signature)) {
    return Failure(PostSignatureErrorKind::kSignatureDoesNotMatch);
  }
  return PostSignature{*f.v2_access_key, SignatureVersion::kV2};
}

Result VerifyV4(const PostSignatureFields& f, std::string_view policy_b64,
                const SecretLookup& secrets) {
  if (!f.algorithm) return Missing("x-amz-algorithm");
  if (*f.algorithm != detail::kAlgorithm) {
    return Failure(PostSignatureErrorKind::kUnsupportedAlgorithm);
  }
  if (!f.credential) return Missing("x-amz-credential");
  if (!f.date) return Missing("x-amz-date");
  if (!f.signature) return Missing("x-amz-signature");

  // <access key>/<yyyymmdd>/<region>/s3/aws4_request
  const std::vector<std::string_view> parts = detail::Split(*f.credential, '/');
  if (parts.size() != 5 || parts[0].empty() || parts[1].size() != 8 ||
      !detail::AllDigits(parts[1]) || parts[2].empty() || parts[3] != detail::kService ||
      parts[4] != detail::kScopeTerminator) {
    return Failure(PostSignatureErrorKind::kMalformedCredential);
  }
  std::optional<std::string> secret = SecretOf(secrets, parts[0]);
  if (!secret) return Failure(PostSignatureErrorKind::kInvalidAccessKeyId);
  const std::string key = DeriveSigningKey(*secret, parts[1], parts[2], detail::kService);
  if (!detail::SignaturesEqual(detail::Hex(HmacSha256(key, policy_b64)), *f.signature)) {
    return Failure(PostSignatureErrorKind::kSignatureDoesNotMatch);
  }
  return PostSignature{std::string(parts[0]), SignatureVersion::kV4};
}

}  // namespace

bool IsSigV2PostForm(const PostSignatureFields& fields) {
  return !fields.algorithm && (fields.v2_access_key || fields.v2_signature);
}

Result VerifyPostSignature(const PostSignatureFields& fields, std::string_view policy_b64,
                           const SecretLookup& secrets, bool sigv2_allowed) {
  if (IsSigV2PostForm(fields)) return VerifyV2(fields, policy_b64, secrets, sigv2_allowed);
  return VerifyV4(fields, policy_b64, secrets);
}

}  // namespace strata::auth

// Helpers shared by the SigV4, SigV2, aws-chunked, POST form and signer code
// of auth/: text helpers, header lookup, the SigV4 constants and canonical
// headers, constant-time comparison. Internal to the module (namespace
// detail); other modules use sigv4.h, sigv2.h, aws_chunked.h, signer.h and
// post_policy_signature.h. Dates: common/time_util.h; queries:
// common/query_string.h.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "auth/sigv4.h"
#include "common/hash.h"

namespace strata::auth::detail {

using Headers = std::vector<std::pair<std::string, std::string>>;

template <typename T>
using Parsed = std::variant<T, AuthError>;

inline AuthError Fail(AuthErrorKind kind, std::string message) {
  return AuthError{kind, std::move(message), {}};
}

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
constexpr std::string_view kService = "s3";
constexpr std::string_view kScopeTerminator = "aws4_request";
constexpr std::string_view kEmptySha256Hex =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr size_t kSignatureHexChars = 64;

// ---- text -------------------------------------------------------------------
std::vector<std::string_view> Split(std::string_view s, char sep);
// Joins with '\n': canonical requests and strings to sign are line lists.
std::string JoinLines(std::initializer_list<std::string_view> lines);
bool AllDigits(std::string_view s);
bool IsHexDigits(std::string_view s, size_t length);
bool IsLowerHexDigits(std::string_view s, size_t length);
std::string Hex(const Sha256Digest& d);
// Equal contents, in time that depends only on the lengths.
bool ConstantTimeEqual(std::string_view a, std::string_view b);
// A signature we computed (lowercase hex) against one a client sent (any case).
bool SignaturesEqual(std::string_view expected_hex, std::string_view given_hex);

// ---- requests ---------------------------------------------------------------
const std::string* FindHeader(const Headers* headers, std::string_view name);

// ---- SigV4 canonical forms (shared by the Verifier and the Signer) ------------
// SigV4's Trimall: trim, then collapse each run of blanks to one space.
std::string TrimAll(std::string_view s);
// "name:value\n" for each name of `signed_headers` ("host;range;x-amz-date"),
// in the order listed; repeated headers joined with ','. A listed header that
// is absent contributes an empty value (the signature then fails).
std::string CanonicalHeaders(const Headers* headers, std::string_view signed_headers);
// "<yyyymmdd>/<region>/s3/aws4_request"
std::string CredentialScope(std::string_view date, std::string_view region);
// The string to sign of a canonical request.
std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);

// ---- payload ----------------------------------------------------------------
struct Payload {
  PayloadMode mode;
  std::string hash;  // the last line of the SigV4 canonical request
};
// x-amz-content-sha256: a hex digest or one of the literal payload modes.
// Streaming modes need a seed signature, so only SigV4 header auth allows them.
Parsed<Payload> ParseContentSha256(std::string_view value, bool allow_streaming);

}  // namespace strata::auth::detail

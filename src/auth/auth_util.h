// Helpers shared by the SigV4, SigV2 and aws-chunked code of auth/: text and
// time parsing, header/query lookup, constant-time comparison. Internal to the
// module (namespace detail); other modules use sigv4.h, sigv2.h, aws_chunked.h.
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
using QueryParams = std::vector<std::pair<std::string, std::string>>;  // decoded

template <typename T>
using Parsed = std::variant<T, AuthError>;

inline AuthError Fail(AuthErrorKind kind, std::string message) {
  return AuthError{kind, std::move(message), {}};
}

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
const std::string* FindParam(const QueryParams& params, std::string_view name);
// Query parameters, percent-decoded ('+' is a space, as form encoding and S3
// have it). A parameter that does not decode keeps its raw text, so its
// signature simply fails to match.
QueryParams DecodeQuery(std::string_view raw_query);

// ---- time -------------------------------------------------------------------
std::string FormatAmzDate(int64_t unix_seconds);  // 20130524T000000Z
// "20130524T000000Z" (ISO 8601 basic, UTC); out-of-range fields are rejected.
std::optional<int64_t> ParseAmzDate(std::string_view s);
// RFC 1123 "Fri, 24 May 2013 00:00:00 GMT", or with a numeric zone "+0000" /
// "-0700" (SigV2 clients such as s3cmd send that form).
std::optional<int64_t> ParseHttpDate(std::string_view s);

// ---- payload ----------------------------------------------------------------
struct Payload {
  PayloadMode mode;
  std::string hash;  // the last line of the SigV4 canonical request
};
// x-amz-content-sha256: a hex digest or one of the literal payload modes.
// Streaming modes need a seed signature, so only SigV4 header auth allows them.
Parsed<Payload> ParseContentSha256(std::string_view value, bool allow_streaming);

}  // namespace strata::auth::detail

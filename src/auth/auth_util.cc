#include "auth/auth_util.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>

#include "common/encoding.h"

namespace strata::auth::detail {

// ---- text -------------------------------------------------------------------

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t pos = s.find(sep);
    parts.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) return parts;
    s.remove_prefix(pos + 1);
  }
}

std::string JoinLines(std::initializer_list<std::string_view> lines) {
  std::string out;
  bool first = true;
  for (std::string_view line : lines) {
    if (!first) out.push_back('\n');
    first = false;
    out.append(line);
  }
  return out;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsHexDigits(std::string_view s, size_t length) {
  return s.size() == length && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0;
         });
}

bool IsLowerHexDigits(std::string_view s, size_t length) {
  return IsHexDigits(s, length) &&
         std::none_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'F'; });
}

std::string Hex(const Sha256Digest& d) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool SignaturesEqual(std::string_view expected_hex, std::string_view given_hex) {
  return ConstantTimeEqual(expected_hex, AsciiLower(given_hex));
}

// ---- requests ---------------------------------------------------------------

const std::string* FindHeader(const Headers* headers, std::string_view name) {
  if (headers == nullptr) return nullptr;
  for (const auto& [key, value] : *headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

// ---- SigV4 canonical forms ---------------------------------------------------

std::string TrimAll(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  for (char c : TrimBlanks(s)) {
    if (c == ' ' || c == '\t') {
      pending_space = true;
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

std::string CanonicalHeaders(const Headers* headers, std::string_view signed_headers) {
  static const Headers kNoHeaders;
  if (headers == nullptr) headers = &kNoHeaders;
  std::string out;
  for (std::string_view name : Split(signed_headers, ';')) {
    out.append(name).push_back(':');
    bool first = true;
    for (const auto& [key, value] : *headers) {
      if (key != name) continue;
      if (!first) out.push_back(',');
      out.append(TrimAll(value));
      first = false;
    }
    out.push_back('\n');
  }
  return out;
}

std::string CredentialScope(std::string_view date, std::string_view region) {
  std::string scope(date);
  scope.append("/").append(region).append("/").append(kService).append("/");
  return scope.append(kScopeTerminator);
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
  return JoinLines({kAlgorithm, amz_date, scope, Sha256Hex(canonical_request)});
}

// ---- payload ----------------------------------------------------------------

Parsed<Payload> ParseContentSha256(std::string_view value, bool allow_streaming) {
  struct Literal {
    std::string_view text;
    PayloadMode mode;
    bool streaming;
  };
  static constexpr Literal kLiterals[] = {
      {"UNSIGNED-PAYLOAD", PayloadMode::kUnsignedPayload, false},
      {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD", PayloadMode::kStreamingSigned, true},
      {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", PayloadMode::kStreamingSignedTrailer, true},
      {"STREAMING-UNSIGNED-PAYLOAD-TRAILER", PayloadMode::kStreamingUnsignedTrailer, true},
  };
  if (IsLowerHexDigits(value, 64)) return Payload{PayloadMode::kSignedPayload, std::string(value)};
  for (const Literal& literal : kLiterals) {
    if (value == literal.text && (allow_streaming || !literal.streaming)) {
      return Payload{literal.mode, std::string(value)};
    }
  }
  return Fail(AuthErrorKind::kInvalidContentSha256,
              "x-amz-content-sha256 must be a lowercase hex SHA-256 or a payload mode");
}

}  // namespace strata::auth::detail

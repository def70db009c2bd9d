#include "auth/sigv4.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <initializer_list>

#include "common/encoding.h"
#include "common/hash.h"

namespace strata::auth {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
constexpr std::string_view kService = "s3";
constexpr std::string_view kScopeTerminator = "aws4_request";
constexpr std::string_view kEmptySha256Hex =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr size_t kSignatureHexChars = 64;
constexpr int64_t kMaxPresignExpiresSeconds = 7 * 24 * 3600;  // AWS's limit: one week
// The cache holds one key per (secret, day, region); a day's working set is
// small, so clearing it wholesale when it grows past this bound is enough.
constexpr size_t kMaxCachedSigningKeys = 1024;

using Headers = std::vector<std::pair<std::string, std::string>>;
using QueryParams = std::vector<std::pair<std::string, std::string>>;  // decoded

template <typename T>
using Parsed = std::variant<T, AuthError>;

AuthError Fail(AuthErrorKind kind, std::string message) {
  return AuthError{kind, std::move(message)};
}

// ---- text helpers ---------------------------------------------------------

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// SigV4's Trimall: trim, then collapse each run of blanks to one space.
std::string TrimAll(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool pending_space = false;
  for (char c : Trim(s)) {
    if (IsBlank(c)) {
      pending_space = true;
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t pos = s.find(sep);
    parts.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) return parts;
    s.remove_prefix(pos + 1);
  }
}

// Joins with '\n': canonical requests and strings to sign are line lists.
std::string JoinLines(std::initializer_list<std::string_view> lines) {
  std::string out;
  for (std::string_view line : lines) {
    if (!out.empty()) out.push_back('\n');
    out.append(line);
  }
  return out;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
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

std::string Raw(const Sha256Digest& d) { return std::string(d.begin(), d.end()); }
std::string Hex(const Sha256Digest& d) { return HexEncode(Raw(d)); }

// Compares a signature we computed (lowercase hex) with one a client sent, in
// time that does not depend on where they differ.
bool SignaturesEqual(std::string_view expected_hex, std::string_view given_hex) {
  if (expected_hex.size() != given_hex.size()) return false;
  std::string given = ToLower(given_hex);
  return CRYPTO_memcmp(expected_hex.data(), given.data(), given.size()) == 0;
}

const std::string* FindHeader(const Headers* headers, std::string_view name) {
  if (headers == nullptr) return nullptr;
  for (const auto& [key, value] : *headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

const std::string* FindParam(const QueryParams& params, std::string_view name) {
  for (const auto& [key, value] : params) {
    if (key == name) return &value;
  }
  return nullptr;
}

// ---- time -----------------------------------------------------------------

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day) {
  year -= month <= 2;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

std::string FormatAmzDate(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  size_t n = std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buf, n);
}

int ToInt(std::string_view digits) {
  int v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

int64_t UnixSeconds(int year, int month, int day, int hour, int minute, int second) {
  return DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
}

// "20130524T000000Z" (ISO 8601 basic, UTC). Formatting the result back and
// comparing rejects out-of-range fields such as month 13 or Feb 30.
std::optional<int64_t> ParseAmzDate(std::string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return std::nullopt;
  if (!AllDigits(s.substr(0, 8)) || !AllDigits(s.substr(9, 6))) return std::nullopt;
  int64_t t = UnixSeconds(ToInt(s.substr(0, 4)), ToInt(s.substr(4, 2)), ToInt(s.substr(6, 2)),
                          ToInt(s.substr(9, 2)), ToInt(s.substr(11, 2)), ToInt(s.substr(13, 2)));
  if (FormatAmzDate(t) != s) return std::nullopt;
  return t;
}

// "Fri, 24 May 2013 00:00:00 GMT" (RFC 7231 IMF-fixdate), the only Date form
// current clients send.
std::optional<int64_t> ParseHttpDate(std::string_view s) {
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  if (s.size() != 29 || s.substr(3, 2) != ", " || s.substr(25) != " GMT") return std::nullopt;
  if (s[7] != ' ' || s[11] != ' ' || s[16] != ' ' || s[19] != ':' || s[22] != ':') {
    return std::nullopt;
  }
  size_t month_index = kMonths.find(s.substr(8, 3));
  if (month_index == std::string_view::npos || month_index % 3 != 0) return std::nullopt;
  std::string_view day = s.substr(5, 2), year = s.substr(12, 4);
  std::string_view hour = s.substr(17, 2), minute = s.substr(20, 2), second = s.substr(23, 2);
  for (std::string_view part : {day, year, hour, minute, second}) {
    if (!AllDigits(part)) return std::nullopt;
  }
  const int month = static_cast<int>(month_index / 3) + 1;
  int64_t t =
      UnixSeconds(ToInt(year), month, ToInt(day), ToInt(hour), ToInt(minute), ToInt(second));
  // Round-trip through the ISO form to reject out-of-range fields.
  std::string iso = std::string(year) + (month < 10 ? "0" : "") + std::to_string(month);
  for (std::string_view part : {day, std::string_view("T"), hour, minute, second}) iso.append(part);
  if (FormatAmzDate(t) != iso + "Z") return std::nullopt;
  return t;
}

struct RequestTime {
  int64_t unix_seconds;
  std::string amz_date;  // ISO 8601 basic: the timestamp line of the string to sign
};

// Header auth takes its time from x-amz-date, else from Date.
Parsed<RequestTime> HeaderRequestTime(const Headers* headers) {
  if (const std::string* amz = FindHeader(headers, "x-amz-date")) {
    std::optional<int64_t> t = ParseAmzDate(*amz);
    if (!t) return Fail(AuthErrorKind::kMissingDate, "x-amz-date is not in ISO 8601 basic format");
    return RequestTime{*t, *amz};
  }
  if (const std::string* date = FindHeader(headers, "date")) {
    std::optional<int64_t> t = ParseHttpDate(*date);
    if (!t) return Fail(AuthErrorKind::kMissingDate, "Date is not an RFC 7231 date");
    return RequestTime{*t, FormatAmzDate(*t)};
  }
  return Fail(AuthErrorKind::kMissingDate, "authentication requires x-amz-date or Date");
}

// ---- the parts of a signature ----------------------------------------------

struct Credential {
  std::string access_key;
  std::string date;  // yyyymmdd
  std::string region;
  std::string Scope() const {
    return date + "/" + region + "/" + std::string(kService) + "/" + std::string(kScopeTerminator);
  }
};

// "<access key>/<yyyymmdd>/<region>/s3/aws4_request". Any region is accepted
// (clients sign with whatever region they are configured for).
Parsed<Credential> ParseCredential(std::string_view s, AuthErrorKind malformed) {
  std::vector<std::string_view> parts = Split(s, '/');
  if (parts.size() != 5 || parts[0].empty() || parts[2].empty()) {
    return Fail(malformed, "credential must be <key>/<yyyymmdd>/<region>/s3/aws4_request");
  }
  if (parts[1].size() != 8 || !AllDigits(parts[1])) {
    return Fail(malformed, "credential date must be yyyymmdd");
  }
  if (parts[3] != kService) {
    return Fail(malformed, "incorrect service '" + std::string(parts[3]) + "'; expected 's3'");
  }
  if (parts[4] != kScopeTerminator) return Fail(malformed, "credential must end in aws4_request");
  return Credential{std::string(parts[0]), std::string(parts[1]), std::string(parts[2])};
}

std::optional<AuthError> CheckSignedHeaders(std::string_view list, AuthErrorKind malformed) {
  bool has_host = false;
  for (std::string_view name : Split(list, ';')) {
    if (name.empty()) return Fail(malformed, "empty name in SignedHeaders");
    has_host |= name == "host";
  }
  if (!has_host) return Fail(malformed, "SignedHeaders must include host");
  return std::nullopt;
}

struct Payload {
  PayloadMode mode;
  std::string hash;  // the last line of the canonical request
};

// x-amz-content-sha256: a hex digest or one of the literal payload modes.
// Presigned URLs cannot carry a streaming body (there is no seed chain).
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

// Query parameters, percent-decoded ('+' is a space, as form encoding and
// S3 have it). A parameter that does not decode keeps its raw text, so its
// signature simply fails to match.
QueryParams DecodeQuery(std::string_view raw_query) {
  QueryParams params;
  if (raw_query.empty()) return params;
  for (std::string_view item : Split(raw_query, '&')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string_view key = item.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    std::optional<std::string> k = UriDecode(key, /*plus_as_space=*/true);
    std::optional<std::string> v = UriDecode(value, /*plus_as_space=*/true);
    params.emplace_back(k ? std::move(*k) : std::string(key),
                        v ? std::move(*v) : std::string(value));
  }
  return params;
}

// Everything the final signature check needs besides the secret: what the
// Authorization header or the presigned query says, made canonical.
struct SignedRequest {
  Credential credential;
  std::string signed_headers;  // "host;range;x-amz-date", as sent
  std::string signature_hex;   // as sent
  std::string amz_date;        // timestamp line of the string to sign
  std::string canonical_query;
  Payload payload;
  bool presigned = false;
};

// Signed header names in the order the client listed them (sorted, if it
// followed the spec); repeated headers joined with ','. A listed header that
// is absent contributes an empty value, which then fails the signature.
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

std::string StringToSign(const RequestView& req, const SignedRequest& s) {
  std::string canonical_request = JoinLines(
      {req.method, CanonicalUri(req.raw_path), s.canonical_query,
       CanonicalHeaders(req.headers, s.signed_headers), s.signed_headers, s.payload.hash});
  return JoinLines({kAlgorithm, s.amz_date, s.credential.Scope(), Sha256Hex(canonical_request)});
}

// ---- Authorization header ----------------------------------------------------

struct AuthorizationFields {
  std::string_view credential;
  std::string_view signed_headers;
  std::string_view signature;
};

// "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=..."; SDKs
// differ on the space after each comma, so both forms are accepted.
Parsed<AuthorizationFields> ParseAuthorization(std::string_view value) {
  constexpr AuthErrorKind kMalformed = AuthErrorKind::kMalformedHeader;
  value = Trim(value);
  if (value.empty()) return Fail(kMalformed, "empty Authorization header");
  size_t space = value.find(' ');
  std::string_view algorithm = value.substr(0, space);
  if (algorithm == "AWS") {
    return Fail(AuthErrorKind::kUnsupportedAlgorithm, "signature version 2 is not supported");
  }
  if (algorithm != kAlgorithm) {
    return Fail(AuthErrorKind::kUnsupportedAlgorithm,
                "unsupported authorization type " + std::string(algorithm));
  }
  if (space == std::string_view::npos) return Fail(kMalformed, "Authorization has no credential");
  AuthorizationFields fields;
  for (std::string_view part : Split(value.substr(space + 1), ',')) {
    part = Trim(part);
    size_t eq = part.find('=');
    std::string_view key = part.substr(0, eq);
    std::string_view* slot = key == "Credential"      ? &fields.credential
                             : key == "SignedHeaders" ? &fields.signed_headers
                             : key == "Signature"     ? &fields.signature
                                                      : nullptr;
    if (eq == std::string_view::npos || slot == nullptr || !slot->empty()) {
      return Fail(kMalformed,
                  "unexpected or repeated Authorization component '" + std::string(key) + "'");
    }
    *slot = part.substr(eq + 1);
  }
  if (fields.credential.empty() || fields.signed_headers.empty() || fields.signature.empty()) {
    return Fail(kMalformed, "Authorization needs Credential, SignedHeaders and Signature");
  }
  return fields;
}

Parsed<SignedRequest> ParseHeaderAuth(const RequestView& req, std::string_view authorization,
                                      int64_t now_unix, int64_t max_skew_seconds) {
  constexpr AuthErrorKind kMalformed = AuthErrorKind::kMalformedHeader;
  Parsed<AuthorizationFields> fields = ParseAuthorization(authorization);
  if (auto* e = std::get_if<AuthError>(&fields)) return *e;
  const AuthorizationFields& f = std::get<AuthorizationFields>(fields);

  Parsed<Credential> credential = ParseCredential(f.credential, kMalformed);
  if (auto* e = std::get_if<AuthError>(&credential)) return *e;
  if (auto e = CheckSignedHeaders(f.signed_headers, kMalformed)) return *e;
  if (!IsHexDigits(f.signature, kSignatureHexChars)) {
    return Fail(kMalformed, "Signature must be 64 hex digits");
  }

  const std::string* content_sha256 = FindHeader(req.headers, "x-amz-content-sha256");
  if (content_sha256 == nullptr) {
    return Fail(AuthErrorKind::kInvalidContentSha256, "missing x-amz-content-sha256");
  }
  Parsed<Payload> payload = ParseContentSha256(*content_sha256, /*allow_streaming=*/true);
  if (auto* e = std::get_if<AuthError>(&payload)) return *e;

  Parsed<RequestTime> time = HeaderRequestTime(req.headers);
  if (auto* e = std::get_if<AuthError>(&time)) return *e;
  const RequestTime& t = std::get<RequestTime>(time);
  if (std::get<Credential>(credential).date != t.amz_date.substr(0, 8)) {
    return Fail(kMalformed, "credential date is not the date of x-amz-date");
  }
  if (std::abs(now_unix - t.unix_seconds) > max_skew_seconds) {
    return Fail(AuthErrorKind::kRequestTimeTooSkewed,
                "request time " + t.amz_date + " is too far from the server time");
  }
  return SignedRequest{std::move(std::get<Credential>(credential)),
                       std::string(f.signed_headers),
                       std::string(f.signature),
                       t.amz_date,
                       CanonicalQuery(req.raw_query, /*drop_signature=*/false),
                       std::move(std::get<Payload>(payload)),
                       /*presigned=*/false};
}

// ---- presigned query -------------------------------------------------------

struct PresignFields {
  const std::string* credential;
  const std::string* date;
  const std::string* expires;
  const std::string* signed_headers;
  const std::string* signature;
};

Parsed<PresignFields> FindPresignFields(const QueryParams& params) {
  PresignFields f{FindParam(params, "X-Amz-Credential"), FindParam(params, "X-Amz-Date"),
                  FindParam(params, "X-Amz-Expires"), FindParam(params, "X-Amz-SignedHeaders"),
                  FindParam(params, "X-Amz-Signature")};
  if (!f.credential || !f.date || !f.expires || !f.signed_headers || !f.signature) {
    return Fail(AuthErrorKind::kMalformedQuery,
                "presigned URL needs X-Amz-Credential, X-Amz-Date, X-Amz-Expires, "
                "X-Amz-SignedHeaders and X-Amz-Signature");
  }
  return f;
}

// The validity window [X-Amz-Date, X-Amz-Date + X-Amz-Expires]; a URL dated
// further ahead than the allowed skew is not valid yet.
std::optional<AuthError> CheckPresignWindow(int64_t signed_at, std::string_view expires,
                                            int64_t now_unix, int64_t max_skew_seconds) {
  if (!AllDigits(expires) || expires.size() > 7 || ToInt(expires) < 1 ||
      ToInt(expires) > kMaxPresignExpiresSeconds) {
    return Fail(AuthErrorKind::kMalformedQuery, "X-Amz-Expires must be between 1 and 604800");
  }
  if (now_unix > signed_at + ToInt(expires)) {
    return Fail(AuthErrorKind::kExpired, "request has expired");
  }
  if (signed_at - now_unix > max_skew_seconds) {
    return Fail(AuthErrorKind::kExpired, "request is not valid yet");
  }
  return std::nullopt;
}

Parsed<SignedRequest> ParsePresigned(const RequestView& req, const QueryParams& params,
                                     int64_t now_unix, int64_t max_skew_seconds) {
  constexpr AuthErrorKind kMalformed = AuthErrorKind::kMalformedQuery;
  if (*FindParam(params, "X-Amz-Algorithm") != kAlgorithm) {
    return Fail(AuthErrorKind::kUnsupportedAlgorithm, "X-Amz-Algorithm must be AWS4-HMAC-SHA256");
  }
  Parsed<PresignFields> fields = FindPresignFields(params);
  if (auto* e = std::get_if<AuthError>(&fields)) return *e;
  const PresignFields& f = std::get<PresignFields>(fields);

  Parsed<Credential> credential = ParseCredential(*f.credential, kMalformed);
  if (auto* e = std::get_if<AuthError>(&credential)) return *e;
  if (auto e = CheckSignedHeaders(*f.signed_headers, kMalformed)) return *e;
  if (!IsHexDigits(*f.signature, kSignatureHexChars)) {
    return Fail(kMalformed, "X-Amz-Signature must be 64 hex digits");
  }
  std::optional<int64_t> signed_at = ParseAmzDate(*f.date);
  if (!signed_at) return Fail(kMalformed, "X-Amz-Date must be in ISO 8601 basic format");
  if (std::get<Credential>(credential).date != f.date->substr(0, 8)) {
    return Fail(kMalformed, "credential date is not the date of X-Amz-Date");
  }
  if (auto e = CheckPresignWindow(*signed_at, *f.expires, now_unix, max_skew_seconds)) return *e;

  Parsed<Payload> payload = Payload{PayloadMode::kUnsignedPayload, "UNSIGNED-PAYLOAD"};
  if (const std::string* sha = FindHeader(req.headers, "x-amz-content-sha256")) {
    payload = ParseContentSha256(*sha, /*allow_streaming=*/false);
    if (auto* e = std::get_if<AuthError>(&payload)) return *e;
  }
  return SignedRequest{std::move(std::get<Credential>(credential)),
                       *f.signed_headers,
                       *f.signature,
                       *f.date,
                       CanonicalQuery(req.raw_query, /*drop_signature=*/true),
                       std::move(std::get<Payload>(payload)),
                       /*presigned=*/true};
}

AuthContext MakeContext(SignedRequest& s, std::string signing_key, std::string signature_hex) {
  AuthContext ctx;
  ctx.access_key = std::move(s.credential.access_key);
  ctx.payload_mode = s.payload.mode;
  if (s.payload.mode == PayloadMode::kSignedPayload) ctx.payload_sha256_hex = s.payload.hash;
  ctx.presigned = s.presigned;
  ctx.seed_signature_hex = std::move(signature_hex);
  ctx.signing_key = std::move(signing_key);
  ctx.amz_date = std::move(s.amz_date);
  ctx.scope = s.credential.Scope();
  return ctx;
}

}  // namespace

// ---- canonical forms -------------------------------------------------------

// S3 neither normalizes paths nor double-encodes: each segment is decoded and
// re-encoded once, so "/a b", "/a%20b" and "/test$file" all sign as clients
// sign them. Per segment, so that an encoded slash ("%2F") stays encoded.
std::string CanonicalUri(std::string_view raw_path) {
  if (raw_path.empty()) return "/";
  std::string out;
  bool first = true;
  for (std::string_view segment : Split(raw_path, '/')) {
    if (!first) out.push_back('/');
    first = false;
    std::optional<std::string> decoded = UriDecode(segment);
    out.append(decoded ? UriEncode(*decoded, /*encode_slash=*/true) : std::string(segment));
  }
  return out;
}

std::string CanonicalQuery(std::string_view raw_query, bool drop_signature) {
  std::vector<std::pair<std::string, std::string>> encoded;
  for (const auto& [key, value] : DecodeQuery(raw_query)) {
    if (drop_signature && key == "X-Amz-Signature") continue;
    encoded.emplace_back(UriEncode(key, /*encode_slash=*/true), UriEncode(value, true));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [key, value] : encoded) {
    if (!out.empty()) out.push_back('&');
    out.append(key).append("=").append(value);
  }
  return out;
}

std::string DeriveSigningKey(std::string_view secret, std::string_view date,
                             std::string_view region, std::string_view service) {
  std::string key = Raw(HmacSha256("AWS4" + std::string(secret), date));
  key = Raw(HmacSha256(key, region));
  key = Raw(HmacSha256(key, service));
  return Raw(HmacSha256(key, kScopeTerminator));
}

// ---- Verifier ---------------------------------------------------------------

Verifier::Verifier(SecretLookup secrets, int64_t max_skew_seconds)
    : secrets_(std::move(secrets)), max_skew_seconds_(max_skew_seconds) {}

std::string Verifier::SigningKey(std::string_view secret, std::string_view date,
                                 std::string_view region, std::string_view service) {
  std::string cache_key;
  for (std::string_view part : {secret, date, region, service}) {
    cache_key.append(part).push_back('\0');
  }
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = key_cache_.find(cache_key);
    if (it != key_cache_.end()) return it->second;
  }
  std::string key = DeriveSigningKey(secret, date, region, service);
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (key_cache_.size() >= kMaxCachedSigningKeys) key_cache_.clear();
  key_cache_.emplace(std::move(cache_key), key);
  return key;
}

std::variant<AuthContext, AuthError> Verifier::Verify(const RequestView& req, int64_t now_unix) {
  const std::string* authorization = FindHeader(req.headers, "authorization");
  const QueryParams params = DecodeQuery(req.raw_query);
  const bool presigned = FindParam(params, "X-Amz-Algorithm") != nullptr;
  if (authorization != nullptr && presigned) {
    return Fail(AuthErrorKind::kMalformedQuery, "only one auth mechanism allowed");
  }
  if (authorization == nullptr && !presigned) {
    if (FindParam(params, "AWSAccessKeyId") && FindParam(params, "Signature")) {
      return Fail(AuthErrorKind::kUnsupportedAlgorithm, "signature version 2 is not supported");
    }
    return Fail(AuthErrorKind::kMissing, "request carries no credentials");
  }
  Parsed<SignedRequest> parsed =
      authorization != nullptr ? ParseHeaderAuth(req, *authorization, now_unix, max_skew_seconds_)
                               : ParsePresigned(req, params, now_unix, max_skew_seconds_);
  if (auto* e = std::get_if<AuthError>(&parsed)) return *e;
  SignedRequest& s = std::get<SignedRequest>(parsed);

  std::optional<std::string> secret = secrets_(s.credential.access_key);
  if (!secret) {
    return Fail(AuthErrorKind::kInvalidAccessKeyId,
                "unknown access key '" + s.credential.access_key + "'");
  }
  std::string key = SigningKey(*secret, s.credential.date, s.credential.region, kService);
  std::string expected = Hex(HmacSha256(key, StringToSign(req, s)));
  if (!SignaturesEqual(expected, s.signature_hex)) {
    return Fail(AuthErrorKind::kSignatureDoesNotMatch,
                "the request signature does not match the one computed with the secret key");
  }
  return MakeContext(s, std::move(key), std::move(expected));
}

// ---- aws-chunked ----------------------------------------------------------
//
// Wire format, one chunk:  <hex size>[;chunk-signature=<64 hex>]\r\n<size bytes>\r\n
// The last chunk has size 0 and no data. Without trailers it is followed by
// "\r\n". With trailers, by lines "name:value\r\n" (signed mode: the last one
// is "x-amz-trailer-signature:<64 hex>"), then "\r\n".
// Signed modes buffer and verify a whole chunk before handing out any of its
// bytes; the unsigned-trailer mode passes data straight through.

namespace {

constexpr size_t kMaxChunkLineBytes = 4096;
constexpr uint64_t kMaxSignedChunkBytes = 16 << 20;
constexpr size_t kRawReadBytes = 16 << 10;
constexpr size_t kMaxTrailers = 16;
constexpr std::string_view kChunkSignaturePrefix = "chunk-signature=";
constexpr std::string_view kTrailerSignatureName = "x-amz-trailer-signature";

struct ChunkHeader {
  uint64_t size = 0;
  std::string_view signature;  // empty in unsigned mode
};

Status ParseChunkHeader(std::string_view line, bool signed_chunks, ChunkHeader* out) {
  size_t semi = line.find(';');
  std::string_view size_hex = line.substr(0, semi);
  if (size_hex.empty() || size_hex.size() > 8 || !IsHexDigits(size_hex, size_hex.size())) {
    return InvalidArgument("aws-chunked: invalid chunk size");
  }
  out->size = std::stoull(std::string(size_hex), nullptr, 16);
  if (!signed_chunks) return Status::OK();  // extensions, if any, carry nothing to verify
  if (out->size > kMaxSignedChunkBytes) {
    return InvalidArgument("aws-chunked: signed chunk larger than 16 MiB");
  }
  std::string_view extension = semi == std::string_view::npos ? "" : line.substr(semi + 1);
  if (extension.substr(0, kChunkSignaturePrefix.size()) != kChunkSignaturePrefix ||
      !IsHexDigits(extension.substr(kChunkSignaturePrefix.size()), kSignatureHexChars)) {
    return InvalidArgument("aws-chunked: chunk needs ;chunk-signature=<64 hex>");
  }
  out->signature = extension.substr(kChunkSignaturePrefix.size());
  return Status::OK();
}

bool IsSigned(PayloadMode mode) {
  return mode == PayloadMode::kStreamingSigned || mode == PayloadMode::kStreamingSignedTrailer;
}

bool HasTrailers(PayloadMode mode) {
  return mode == PayloadMode::kStreamingSignedTrailer ||
         mode == PayloadMode::kStreamingUnsignedTrailer;
}

}  // namespace

struct AwsChunkedSource::State {
  State(ByteSource* raw_source, const AuthContext& ctx, uint64_t length)
      : raw(raw_source),
        signed_chunks(IsSigned(ctx.payload_mode)),
        has_trailers(HasTrailers(ctx.payload_mode)),
        signing_key(ctx.signing_key),
        amz_date(ctx.amz_date),
        scope(ctx.scope),
        previous_signature(ctx.seed_signature_hex),
        decoded_length(length) {
    if (!signed_chunks && !has_trailers) {
      failure = InvalidArgument("aws-chunked: payload mode is not a streaming mode");
    }
  }

  Result<size_t> Read(char* buf, size_t n);

  ByteSource* const raw;
  const bool signed_chunks;
  const bool has_trailers;
  const std::string signing_key;
  const std::string amz_date;
  const std::string scope;
  std::string previous_signature;  // the chain: seed, then each chunk's signature
  const uint64_t decoded_length;
  uint64_t declared_bytes = 0;  // sum of the chunk sizes seen so far
  std::string in;               // raw bytes read ahead, parsed from in_pos
  size_t in_pos = 0;
  std::string chunk;  // signed modes: verified bytes not yet returned, from chunk_pos
  size_t chunk_pos = 0;
  uint64_t unsigned_left = 0;   // unsigned mode: data bytes of this chunk still to pass
  bool need_chunk_end = false;  // unsigned mode: the CRLF after the data is unread
  bool done = false;
  Status failure;  // sticky: once the body is bad, every later Read says so
  std::vector<std::pair<std::string, std::string>> trailers;

 private:
  Status Advance();
  Status ReadSignedChunk(const ChunkHeader& header);
  Status FinishBody(std::string_view final_signature);
  Status ReadTrailers();
  Status VerifyChained(const std::string& string_to_sign, std::string_view given,
                       std::string_view what);
  Result<size_t> PassThrough(char* buf, size_t n);
  Status Fill();
  Status ReadLine(std::string* line, bool allow_bare_lf);
  Status ReadExact(char* dst, size_t n);
  Status ExpectCrlf();
};

Result<size_t> AwsChunkedSource::State::Read(char* buf, size_t n) {
  if (!failure.ok()) return failure;
  if (n == 0) return size_t{0};
  while (true) {
    if (chunk_pos < chunk.size()) {
      size_t k = std::min(n, chunk.size() - chunk_pos);
      std::memcpy(buf, chunk.data() + chunk_pos, k);
      chunk_pos += k;
      return k;
    }
    if (unsigned_left > 0) {
      Result<size_t> r = PassThrough(buf, n);
      if (!r.ok()) failure = r.status();
      return r;
    }
    if (done) return size_t{0};
    Status s = Advance();
    if (!s.ok()) {
      failure = s;
      return s;
    }
  }
}

// Parses the next chunk header and, in signed modes, reads and verifies the
// chunk; the final chunk also consumes the trailers.
Status AwsChunkedSource::State::Advance() {
  if (need_chunk_end) {
    RETURN_IF_ERROR(ExpectCrlf());
    need_chunk_end = false;
  }
  std::string line;
  RETURN_IF_ERROR(ReadLine(&line, /*allow_bare_lf=*/false));
  ChunkHeader header;
  RETURN_IF_ERROR(ParseChunkHeader(line, signed_chunks, &header));
  if (header.size > decoded_length - declared_bytes) {
    return OutOfRange("aws-chunked: body is longer than x-amz-decoded-content-length");
  }
  declared_bytes += header.size;
  if (header.size == 0) return FinishBody(header.signature);
  if (!signed_chunks) {
    unsigned_left = header.size;
    return Status::OK();
  }
  Status s = ReadSignedChunk(header);
  if (!s.ok()) chunk.clear();  // never hand out unverified bytes
  return s;
}

Status AwsChunkedSource::State::ReadSignedChunk(const ChunkHeader& header) {
  chunk.resize(header.size);
  chunk_pos = 0;
  RETURN_IF_ERROR(ReadExact(chunk.data(), chunk.size()));
  RETURN_IF_ERROR(ExpectCrlf());
  return VerifyChained(JoinLines({"AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, previous_signature,
                                  kEmptySha256Hex, Sha256Hex(chunk)}),
                       header.signature, "chunk");
}

Status AwsChunkedSource::State::FinishBody(std::string_view final_signature) {
  if (signed_chunks) {
    RETURN_IF_ERROR(VerifyChained(JoinLines({"AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope,
                                             previous_signature, kEmptySha256Hex, kEmptySha256Hex}),
                                  final_signature, "final chunk"));
  }
  if (declared_bytes != decoded_length) {
    return OutOfRange("aws-chunked: body is shorter than x-amz-decoded-content-length");
  }
  if (has_trailers) {
    RETURN_IF_ERROR(ReadTrailers());
  } else {
    std::string line;
    RETURN_IF_ERROR(ReadLine(&line, /*allow_bare_lf=*/false));
    if (!line.empty()) return InvalidArgument("aws-chunked: unexpected data after final chunk");
  }
  done = true;
  return Status::OK();
}

// Trailer lines up to an empty line. Bare LF line ends are tolerated here
// because some clients end trailer lines that way.
Status AwsChunkedSource::State::ReadTrailers() {
  std::string canonical;  // "name:value\n" per trailer: what the trailer signature covers
  std::string signature;
  while (true) {
    std::string line;
    RETURN_IF_ERROR(ReadLine(&line, /*allow_bare_lf=*/true));
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0 || !signature.empty()) {
      return InvalidArgument("aws-chunked: malformed trailer (or trailer after its signature)");
    }
    std::string name = ToLower(Trim(std::string_view(line).substr(0, colon)));
    std::string value(Trim(std::string_view(line).substr(colon + 1)));
    if (name == kTrailerSignatureName) {
      // Unsigned mode has no chain to check a trailer signature against.
      if (!signed_chunks) return InvalidArgument("aws-chunked: unexpected trailer signature");
      signature = std::move(value);
      continue;
    }
    if (trailers.size() >= kMaxTrailers) return InvalidArgument("aws-chunked: too many trailers");
    canonical.append(name).append(":").append(value).append("\n");
    trailers.emplace_back(std::move(name), std::move(value));
  }
  if (!signed_chunks) return Status::OK();
  if (!IsHexDigits(signature, kSignatureHexChars)) {
    return InvalidArgument("aws-chunked: missing or malformed x-amz-trailer-signature");
  }
  return VerifyChained(JoinLines({"AWS4-HMAC-SHA256-TRAILER", amz_date, scope, previous_signature,
                                  Sha256Hex(canonical)}),
                       signature, "trailer");
}

// Checks one link of the signature chain and advances it.
Status AwsChunkedSource::State::VerifyChained(const std::string& string_to_sign,
                                              std::string_view given, std::string_view what) {
  std::string expected = Hex(HmacSha256(signing_key, string_to_sign));
  if (!SignaturesEqual(expected, given)) {
    return PermissionDenied("aws-chunked: " + std::string(what) + " signature does not match");
  }
  previous_signature = std::move(expected);
  return Status::OK();
}

Result<size_t> AwsChunkedSource::State::PassThrough(char* buf, size_t n) {
  size_t want = static_cast<size_t>(std::min<uint64_t>(n, unsigned_left));
  size_t got;
  if (in_pos < in.size()) {
    got = std::min(want, in.size() - in_pos);
    std::memcpy(buf, in.data() + in_pos, got);
    in_pos += got;
  } else {
    ASSIGN_OR_RETURN(got, raw->Read(buf, want));
    if (got == 0) return OutOfRange("aws-chunked: body ended early");
  }
  unsigned_left -= got;
  need_chunk_end = unsigned_left == 0;
  return got;
}

// Appends at least one raw byte to `in`; the unparsed tail kept is at most a
// line, since Fill is only needed while looking for a line end or a CRLF.
Status AwsChunkedSource::State::Fill() {
  in.erase(0, in_pos);
  in_pos = 0;
  size_t old_size = in.size();
  in.resize(old_size + kRawReadBytes);
  Result<size_t> got = raw->Read(in.data() + old_size, kRawReadBytes);
  in.resize(old_size + (got.ok() ? *got : 0));
  if (!got.ok()) return got.status();
  if (*got == 0) return OutOfRange("aws-chunked: body ended early");
  return Status::OK();
}

Status AwsChunkedSource::State::ReadLine(std::string* line, bool allow_bare_lf) {
  while (true) {
    size_t lf = in.find('\n', in_pos);
    size_t length = (lf == std::string::npos ? in.size() : lf) - in_pos;
    if (length > kMaxChunkLineBytes) return InvalidArgument("aws-chunked: line too long");
    if (lf == std::string::npos) {
      RETURN_IF_ERROR(Fill());
      continue;
    }
    std::string_view text(in.data() + in_pos, length);
    in_pos = lf + 1;
    if (!text.empty() && text.back() == '\r') {
      text.remove_suffix(1);
    } else if (!allow_bare_lf) {
      return InvalidArgument("aws-chunked: line does not end with CRLF");
    }
    line->assign(text);
    return Status::OK();
  }
}

Status AwsChunkedSource::State::ReadExact(char* dst, size_t n) {
  size_t have = std::min(n, in.size() - in_pos);
  std::memcpy(dst, in.data() + in_pos, have);
  in_pos += have;
  while (have < n) {
    ASSIGN_OR_RETURN(size_t got, raw->Read(dst + have, n - have));
    if (got == 0) return OutOfRange("aws-chunked: body ended early");
    have += got;
  }
  return Status::OK();
}

Status AwsChunkedSource::State::ExpectCrlf() {
  while (in.size() - in_pos < 2) RETURN_IF_ERROR(Fill());
  if (in.compare(in_pos, 2, "\r\n") != 0) {
    return InvalidArgument("aws-chunked: chunk data is not followed by CRLF");
  }
  in_pos += 2;
  return Status::OK();
}

AwsChunkedSource::AwsChunkedSource(ByteSource* raw, const AuthContext& ctx, uint64_t decoded_length)
    : raw_(raw),
      ctx_(ctx),
      decoded_length_(decoded_length),
      state_(std::make_shared<State>(raw_, ctx_, decoded_length_)) {}

Result<size_t> AwsChunkedSource::Read(char* buf, size_t n) {
  Result<size_t> r = state_->Read(buf, n);
  if (r.ok()) {
    produced_ += *r;
    if (state_->done && trailers_.empty()) trailers_ = state_->trailers;
  }
  return r;
}

}  // namespace strata::auth

#include "auth/sigv4.h"

#include <algorithm>
#include <cstdlib>

#include "auth/auth_util.h"
#include "auth/sigv2.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/time_util.h"

namespace strata::auth {
namespace {

using detail::AllDigits;
using detail::Fail;
using detail::FindHeader;
using detail::Headers;
using detail::Hex;
using detail::IsHexDigits;
using detail::JoinLines;
using detail::kAlgorithm;
using detail::kScopeTerminator;
using detail::kService;
using detail::Parsed;
using detail::Payload;
using detail::Split;

constexpr int64_t kMaxPresignExpiresSeconds = 7 * 24 * 3600;  // AWS's limit: one week
// The cache holds one key per (secret, day, region); a day's working set is
// small, so clearing it wholesale when it grows past this bound is enough.
constexpr size_t kMaxCachedSigningKeys = 1024;
constexpr size_t kSignatureHexChars = detail::kSignatureHexChars;

std::string Raw(const Sha256Digest& d) { return std::string(d.begin(), d.end()); }

struct RequestTime {
  int64_t unix_seconds;
  std::string amz_date;  // ISO 8601 basic: the timestamp line of the string to sign
};

// Header auth takes its time from x-amz-date, else from Date: with both,
// Date is not looked at (it may even be malformed), as at AWS; it is still
// part of the signature when SignedHeaders names it.
Parsed<RequestTime> HeaderRequestTime(const Headers* headers) {
  if (const std::string* amz = FindHeader(headers, "x-amz-date")) {
    std::optional<int64_t> t = ParseAmzDate(*amz);
    if (!t) return Fail(AuthErrorKind::kMissingDate, "x-amz-date is not in ISO 8601 basic format");
    return RequestTime{*t, *amz};
  }
  if (const std::string* date = FindHeader(headers, "date")) {
    std::optional<int64_t> t = ParseRfc1123Date(*date);
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
  std::string Scope() const { return detail::CredentialScope(date, region); }
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

// AWS refuses a request that carries x-amz-* headers its signature does not
// cover: they change what the request does (a copy source, metadata, tags,
// an ACL...), so a presigned URL or a replayed request must not gain any. The
// one exception, as at AWS, is x-amz-content-sha256: its value is the last
// line of the canonical request, so the signature covers it either way.
std::optional<AuthError> CheckAmzHeadersSigned(const Headers* headers,
                                               std::string_view signed_headers) {
  if (headers == nullptr) return std::nullopt;
  const std::vector<std::string_view> signed_names = Split(signed_headers, ';');
  std::vector<std::string> not_signed;
  for (const auto& [name, value] : *headers) {
    if (!name.starts_with("x-amz-") || name == "x-amz-content-sha256") continue;
    if (std::find(signed_names.begin(), signed_names.end(), name) != signed_names.end()) continue;
    if (std::find(not_signed.begin(), not_signed.end(), name) == not_signed.end()) {
      not_signed.push_back(name);
    }
  }
  if (not_signed.empty()) return std::nullopt;
  std::sort(not_signed.begin(), not_signed.end());
  AuthError e = Fail(AuthErrorKind::kHeadersNotSigned,
                     "there were headers present in the request which were not signed");
  e.headers_not_signed = std::move(not_signed);
  return e;
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

std::string StringToSign(const RequestView& req, const SignedRequest& s) {
  std::string canonical_request =
      JoinLines({req.method, CanonicalUri(req.raw_path), s.canonical_query,
                 detail::CanonicalHeaders(req.headers, s.signed_headers), s.signed_headers,
                 s.payload.hash});
  return detail::StringToSign(s.amz_date, s.credential.Scope(), canonical_request);
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
  value = TrimBlanks(value);
  if (value.empty()) return Fail(kMalformed, "empty Authorization header");
  size_t space = value.find(' ');
  std::string_view algorithm = value.substr(0, space);
  if (algorithm != kAlgorithm) {
    return Fail(AuthErrorKind::kUnsupportedAlgorithm,
                "unsupported authorization type " + std::string(algorithm));
  }
  if (space == std::string_view::npos) return Fail(kMalformed, "Authorization has no credential");
  AuthorizationFields fields;
  for (std::string_view part : Split(value.substr(space + 1), ',')) {
    part = TrimBlanks(part);
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

Parsed<SignedRequest> ParseHeaderAuth(const RequestView& req, const QueryString& query,
                                      std::string_view authorization, int64_t now_unix,
                                      int64_t max_skew_seconds) {
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
  Parsed<Payload> payload = detail::ParseContentSha256(*content_sha256, /*allow_streaming=*/true);
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
                       CanonicalQuery(query, /*drop_signature=*/false),
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

Parsed<PresignFields> FindPresignFields(const QueryString& query) {
  PresignFields f{query.Find("X-Amz-Credential"), query.Find("X-Amz-Date"),
                  query.Find("X-Amz-Expires"), query.Find("X-Amz-SignedHeaders"),
                  query.Find("X-Amz-Signature")};
  if (!f.credential || !f.date || !f.expires || !f.signed_headers || !f.signature) {
    return Fail(AuthErrorKind::kMalformedQuery,
                "presigned URL needs X-Amz-Credential, X-Amz-Date, X-Amz-Expires, "
                "X-Amz-SignedHeaders and X-Amz-Signature");
  }
  return f;
}

// X-Amz-Expires, answered as AWS answers it: AuthorizationQueryParametersError
// with AWS's message for what is not a number, a negative number or more than
// a week; 0 parses (and the URL is then expired).
Parsed<int64_t> ParseExpires(std::string_view expires) {
  constexpr AuthErrorKind kMalformed = AuthErrorKind::kMalformedQuery;
  const bool negative = expires.starts_with('-');
  std::string_view digits = negative ? expires.substr(1) : expires;
  if (!AllDigits(digits)) return Fail(kMalformed, "X-Amz-Expires should be a number");
  digits.remove_prefix(std::min(digits.find_first_not_of('0'), digits.size()));
  if (negative && !digits.empty()) return Fail(kMalformed, "X-Amz-Expires must be non-negative");
  // Seven digits hold a week; more are past it whatever they are.
  const int64_t seconds = digits.size() <= 7 ? std::stoll("0" + std::string(digits)) : INT64_MAX;
  if (seconds > kMaxPresignExpiresSeconds) {
    return Fail(kMalformed,
                "X-Amz-Expires must be less than a week (in seconds); that is, the given "
                "X-Amz-Expires must be less than 604800 seconds");
  }
  return seconds;
}

// The validity window [X-Amz-Date, X-Amz-Date + X-Amz-Expires]; a URL dated
// further ahead than the allowed skew is not valid yet. X-Amz-Expires=0 is
// expired from the start (AWS: AccessDenied "Request has expired").
std::optional<AuthError> CheckPresignWindow(int64_t signed_at, std::string_view expires,
                                            int64_t now_unix, int64_t max_skew_seconds) {
  Parsed<int64_t> parsed = ParseExpires(expires);
  if (auto* e = std::get_if<AuthError>(&parsed)) return *e;
  const int64_t seconds = std::get<int64_t>(parsed);
  if (seconds == 0 || now_unix > signed_at + seconds) {
    return Fail(AuthErrorKind::kExpired, "request has expired");
  }
  if (signed_at - now_unix > max_skew_seconds) {
    return Fail(AuthErrorKind::kNotYetValid, "request is not valid yet");
  }
  return std::nullopt;
}

Parsed<SignedRequest> ParsePresigned(const RequestView& req, const QueryString& query,
                                     int64_t now_unix, int64_t max_skew_seconds) {
  constexpr AuthErrorKind kMalformed = AuthErrorKind::kMalformedQuery;
  if (*query.Find("X-Amz-Algorithm") != kAlgorithm) {
    return Fail(AuthErrorKind::kUnsupportedAlgorithm, "X-Amz-Algorithm must be AWS4-HMAC-SHA256");
  }
  Parsed<PresignFields> fields = FindPresignFields(query);
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
    payload = detail::ParseContentSha256(*sha, /*allow_streaming=*/false);
    if (auto* e = std::get_if<AuthError>(&payload)) return *e;
  }
  return SignedRequest{std::move(std::get<Credential>(credential)),
                       *f.signed_headers,
                       *f.signature,
                       *f.date,
                       CanonicalQuery(query, /*drop_signature=*/true),
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

std::string CanonicalQuery(const QueryString& query, bool drop_signature) {
  std::vector<std::pair<std::string, std::string>> encoded;
  for (const QueryParam& p : query.params()) {
    if (drop_signature && p.name == "X-Amz-Signature") continue;
    encoded.emplace_back(UriEncode(p.name, /*encode_slash=*/true), UriEncode(p.value, true));
  }
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [key, value] : encoded) {
    if (!out.empty()) out.push_back('&');
    out.append(key).append("=").append(value);
  }
  return out;
}

std::string CanonicalQuery(std::string_view raw_query, bool drop_signature) {
  return CanonicalQuery(QueryString::Parse(raw_query), drop_signature);
}

std::string DeriveSigningKey(std::string_view secret, std::string_view date,
                             std::string_view region, std::string_view service) {
  std::string key = Raw(HmacSha256("AWS4" + std::string(secret), date));
  key = Raw(HmacSha256(key, region));
  key = Raw(HmacSha256(key, service));
  return Raw(HmacSha256(key, kScopeTerminator));
}

// ---- Verifier ---------------------------------------------------------------

Verifier::Verifier(SecretLookup secrets, VerifierOptions options)
    : secrets_(std::move(secrets)), options_(std::move(options)) {}

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
  QueryString parsed_here;
  if (req.query == nullptr) parsed_here = QueryString::Parse(req.raw_query);
  const QueryString& query = req.query != nullptr ? *req.query : parsed_here;
  const bool presigned = query.Has("X-Amz-Algorithm");
  const bool presigned_v2 = !presigned && query.Has("AWSAccessKeyId") && query.Has("Signature");
  if (authorization != nullptr && (presigned || presigned_v2)) {
    return Fail(AuthErrorKind::kMalformedQuery, "only one auth mechanism allowed");
  }
  if (authorization == nullptr && !presigned && !presigned_v2) {
    return Fail(AuthErrorKind::kMissing, "request carries no credentials");
  }
  if (presigned_v2 || (authorization != nullptr && IsSigV2Authorization(*authorization))) {
    if (!options_.sigv2) {
      return Fail(AuthErrorKind::kUnsupportedAlgorithm, "signature version 2 is switched off");
    }
    return VerifySigV2(req, query, secrets_, options_, now_unix);
  }
  const int64_t skew = options_.max_skew_seconds;
  Parsed<SignedRequest> parsed = authorization != nullptr
                                     ? ParseHeaderAuth(req, query, *authorization, now_unix, skew)
                                     : ParsePresigned(req, query, now_unix, skew);
  if (auto* e = std::get_if<AuthError>(&parsed)) return *e;
  SignedRequest& s = std::get<SignedRequest>(parsed);

  std::optional<std::string> secret = secrets_(s.credential.access_key);
  if (!secret) {
    return Fail(AuthErrorKind::kInvalidAccessKeyId,
                "unknown access key '" + s.credential.access_key + "'");
  }
  std::string key = SigningKey(*secret, s.credential.date, s.credential.region, kService);
  std::string expected = Hex(HmacSha256(key, StringToSign(req, s)));
  if (!detail::SignaturesEqual(expected, s.signature_hex)) {
    return Fail(AuthErrorKind::kSignatureDoesNotMatch,
                "the request signature does not match the one computed with the secret key");
  }
  if (auto e = CheckAmzHeadersSigned(req.headers, s.signed_headers)) return *e;
  return MakeContext(s, std::move(key), std::move(expected));
}

}  // namespace strata::auth

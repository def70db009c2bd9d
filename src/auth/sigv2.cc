#include "auth/sigv2.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "auth/auth_util.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/http_host.h"
#include "common/time_util.h"

namespace strata::auth {
namespace {

using detail::Fail;
using detail::FindHeader;
using detail::Headers;

constexpr std::string_view kAmzPrefix = "x-amz-";
// Expires is seconds since the epoch; twelve digits reach past the year 33000.
constexpr size_t kMaxExpiresDigits = 12;

// The query parameters that are part of the CanonicalizedResource: AWS's
// documented list (acl, lifecycle, location, logging, notification,
// partNumber, policy, requestPayment, torrent, uploadId, uploads, versionId,
// versioning, versions, website, the response-* overrides, delete) and the
// later sub-resources that SDKs sign the same way (cors, tagging, restore,
// object-lock, ...), as botocore's HmacV1Auth lists them. Names are
// case-sensitive.
constexpr std::string_view kSubResources[] = {
    "accelerate",
    "acl",
    "analytics",
    "cors",
    "defaultObjectAcl",
    "delete",
    "inventory",
    "lifecycle",
    "location",
    "logging",
    "metrics",
    "notification",
    "object-lock",
    "partNumber",
    "policy",
    "replication",
    "requestPayment",
    "response-cache-control",
    "response-content-disposition",
    "response-content-encoding",
    "response-content-language",
    "response-content-type",
    "response-expires",
    "restore",
    "select",
    "select-type",
    "storageClass",
    "tagging",
    "torrent",
    "uploadId",
    "uploads",
    "versionId",
    "versioning",
    "versions",
    "website",
};

bool IsSubResource(std::string_view name) {
  return std::find(std::begin(kSubResources), std::end(kSubResources), name) !=
         std::end(kSubResources);
}

// Every x-amz-* header, sorted by (lowercase) name, the values of a repeated
// header joined by ',', each trimmed: "name:value\n" per header. With query
// authentication an x-amz-* query parameter counts as a header of that name
// (botocore's presigner moves such headers into the URL), unless the request
// carries the header itself.
std::string CanonicalAmzHeaders(const Headers* headers, const QueryString* query) {
  std::map<std::string, std::string> amz;
  auto add = [&amz](std::string name, std::string_view value) {
    auto [it, inserted] = amz.try_emplace(std::move(name), TrimBlanks(value));
    if (!inserted) it->second.append(",").append(TrimBlanks(value));
  };
  if (headers != nullptr) {
    for (const auto& [name, value] : *headers) {
      if (name.starts_with(kAmzPrefix)) add(name, value);
    }
  }
  if (query != nullptr) {
    std::set<std::string> from_headers;
    for (const auto& [name, value] : amz) from_headers.insert(name);
    for (const QueryParam& p : query->params()) {
      std::string name = AsciiLower(p.name);
      if (name.starts_with(kAmzPrefix) && !from_headers.contains(name)) {
        add(std::move(name), p.value);
      }
    }
  }
  std::string out;
  for (const auto& [name, value] : amz) out.append(name).append(":").append(value).append("\n");
  return out;
}

// "/" + bucket (virtual-host style) + the path as sent, still percent-encoded,
// + "?" and the sub-resources sorted by name, "name" or "name=value" with the
// value decoded, joined by '&'. A path-style request on a bucket ("/bucket")
// is signed as "/bucket/", as AWS does (and SDKs sign it so).
std::string CanonicalResource(std::string_view raw_path, const QueryString& query,
                              std::string_view bucket) {
  std::string out;
  if (!bucket.empty()) out.append("/").append(bucket);
  out.append(raw_path.empty() ? std::string_view("/") : raw_path);
  if (bucket.empty() && out.size() > 1 && out.find('/', 1) == std::string::npos) out.push_back('/');
  std::vector<std::pair<std::string_view, std::string_view>> sub;
  for (const QueryParam& p : query.params()) {
    if (IsSubResource(p.name)) sub.emplace_back(p.name, p.value);
  }
  std::stable_sort(sub.begin(), sub.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  char separator = '?';
  for (const auto& [key, value] : sub) {
    out.push_back(separator);
    separator = '&';
    out.append(key);
    if (!value.empty()) out.append("=").append(value);
  }
  return out;
}

std::string_view HeaderValue(const Headers* headers, std::string_view name) {
  const std::string* value = FindHeader(headers, name);
  return value ? TrimBlanks(*value) : std::string_view();
}

// Checks the signature with the caller's secret and builds the context.
std::variant<AuthContext, AuthError> Check(const RequestView& req, const QueryString& query,
                                           const SecretLookup& secrets,
                                           const VerifierOptions& options,
                                           std::string_view access_key, std::string_view signature,
                                           std::string_view date, bool presigned) {
  std::optional<std::string> secret = secrets(access_key);
  if (!secret) {
    return Fail(AuthErrorKind::kInvalidAccessKeyId,
                "unknown access key '" + std::string(access_key) + "'");
  }
  const std::string bucket = VirtualHostBucket(HeaderValue(req.headers, "host"), options.domain);
  const std::string expected =
      SignV2(*secret, StringToSignV2(req, date, query, bucket, /*query_auth=*/presigned));
  if (!SignatureV2Equal(expected, signature)) {
    return Fail(AuthErrorKind::kSignatureDoesNotMatch,
                "the request signature does not match the one computed with the secret key");
  }
  AuthContext ctx;
  ctx.access_key = std::string(access_key);
  ctx.version = SignatureVersion::kV2;
  ctx.presigned = presigned;
  // The payload is not part of a SigV2 signature; a digest the client sends
  // (signed, as every x-amz-* header) is still checked against the body.
  if (const std::string* sha = FindHeader(req.headers, "x-amz-content-sha256")) {
    detail::Parsed<detail::Payload> payload =
        detail::ParseContentSha256(*sha, /*allow_streaming=*/false);
    if (auto* e = std::get_if<AuthError>(&payload)) return *e;
    ctx.payload_mode = std::get<detail::Payload>(payload).mode;
    if (ctx.payload_mode == PayloadMode::kSignedPayload) ctx.payload_sha256_hex = *sha;
  }
  return ctx;
}

// "AWS <access key>:<signature>", dated by x-amz-date or else Date, within
// the allowed clock skew.
std::variant<AuthContext, AuthError> VerifyHeader(
    const RequestView& req, std::string_view authorization, const QueryString& query,
    const SecretLookup& secrets, const VerifierOptions& options, int64_t now_unix) {
  std::string_view credentials = TrimBlanks(TrimBlanks(authorization).substr(3));
  const size_t colon = credentials.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == credentials.size()) {
    return Fail(AuthErrorKind::kMalformedHeader,
                "AWS authorization header is invalid; expected AWS AccessKeyId:Signature");
  }
  // With x-amz-date the Date line is empty and Date is not looked at (AWS:
  // "the system will ignore any Date header"): the time is signed among the
  // amz headers.
  std::string_view date_line;
  std::optional<int64_t> signed_at;
  if (const std::string* amz_date = FindHeader(req.headers, "x-amz-date")) {
    signed_at = ParseRfc1123Date(TrimBlanks(*amz_date));
    if (!signed_at) signed_at = ParseAmzDate(TrimBlanks(*amz_date));
  } else if (FindHeader(req.headers, "date") != nullptr) {
    date_line = HeaderValue(req.headers, "date");
    signed_at = ParseRfc1123Date(date_line);
  } else {
    return Fail(AuthErrorKind::kMissingDate, "authentication requires x-amz-date or Date");
  }
  if (!signed_at) return Fail(AuthErrorKind::kMissingDate, "the request date is not valid");
  if (std::abs(now_unix - *signed_at) > options.max_skew_seconds) {
    return Fail(AuthErrorKind::kRequestTimeTooSkewed,
                "the request time is too far from the server time");
  }
  return Check(req, query, secrets, options, credentials.substr(0, colon),
               credentials.substr(colon + 1), date_line, /*presigned=*/false);
}

// ?AWSAccessKeyId=...&Expires=<unix seconds>&Signature=<url-encoded base64>.
std::variant<AuthContext, AuthError> VerifyQuery(const RequestView& req, const QueryString& query,
                                                 const SecretLookup& secrets,
                                                 const VerifierOptions& options, int64_t now_unix) {
  const std::string* access_key = query.Find("AWSAccessKeyId");
  const std::string* signature = query.Find("Signature");
  const std::string* expires = query.Find("Expires");
  if (access_key == nullptr || signature == nullptr || expires == nullptr) {
    return Fail(AuthErrorKind::kMalformedQuery,
                "query string authentication requires AWSAccessKeyId, Expires and Signature");
  }
  if (!detail::AllDigits(*expires) || expires->size() > kMaxExpiresDigits) {
    return Fail(AuthErrorKind::kMalformedQuery, "Expires must be seconds since the epoch");
  }
  if (now_unix > std::stoll(*expires)) return Fail(AuthErrorKind::kExpired, "request has expired");
  // Base64 has no spaces: a '+' left unencoded in the URL decoded to one.
  std::string given = *signature;
  std::replace(given.begin(), given.end(), ' ', '+');
  return Check(req, query, secrets, options, *access_key, given, *expires, /*presigned=*/true);
}

}  // namespace

std::string SignV2(std::string_view secret, std::string_view string_to_sign) {
  const Sha1Digest mac = HmacSha1(secret, string_to_sign);
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

bool SignatureV2Equal(std::string_view expected_b64, std::string_view given_b64) {
  return detail::ConstantTimeEqual(expected_b64, given_b64);
}

bool IsSigV2Authorization(std::string_view authorization) {
  std::string_view value = TrimBlanks(authorization);
  return value.substr(0, value.find(' ')) == "AWS";
}

std::string StringToSignV2(const RequestView& req, std::string_view date, const QueryString& query,
                           std::string_view bucket, bool query_auth) {
  std::string out = detail::JoinLines({req.method, HeaderValue(req.headers, "content-md5"),
                                       HeaderValue(req.headers, "content-type"), date});
  out.push_back('\n');
  out.append(CanonicalAmzHeaders(req.headers, query_auth ? &query : nullptr));
  out.append(CanonicalResource(req.raw_path, query, bucket));
  return out;
}

std::variant<AuthContext, AuthError> VerifySigV2(const RequestView& req, const QueryString& query,
                                                 const SecretLookup& secrets,
                                                 const VerifierOptions& options,
                                                 int64_t now_unix) {
  if (const std::string* authorization = FindHeader(req.headers, "authorization")) {
    return VerifyHeader(req, *authorization, query, secrets, options, now_unix);
  }
  return VerifyQuery(req, query, secrets, options, now_unix);
}

}  // namespace strata::auth

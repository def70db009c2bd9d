#include "auth/signer.h"

#include <algorithm>

#include "auth/auth_util.h"
#include "auth/sigv4.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/time_util.h"

namespace strata::auth {

Signer::Signer(SigningCredentials credentials) : credentials_(std::move(credentials)) {}

const std::string& Signer::SigningKey(std::string_view date) {
  if (signing_key_.empty() || date != key_date_) {
    signing_key_ = DeriveSigningKey(credentials_.secret_key, date, credentials_.region,
                                    detail::kService);
    key_date_ = std::string(date);
  }
  return signing_key_;
}

SigningResult Signer::Sign(const RequestToSign& req, int64_t unix_seconds) {
  SigningResult out;
  out.amz_date = FormatAmzDate(unix_seconds);
  const std::string date = out.amz_date.substr(0, 8);
  out.scope = detail::CredentialScope(date, credentials_.region);

  // Lowercase names, sorted (stably: repeated headers keep their order).
  detail::Headers headers;
  headers.reserve(req.headers.size() + 2);
  for (const auto& [name, value] : req.headers) {
    std::string lower = AsciiLower(name);
    if (lower == "x-amz-date" || lower == "x-amz-content-sha256") continue;  // set below
    headers.emplace_back(std::move(lower), value);
  }
  headers.emplace_back("x-amz-date", out.amz_date);
  headers.emplace_back("x-amz-content-sha256", std::string(req.payload_hash));
  std::stable_sort(headers.begin(), headers.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < headers.size(); ++i) {
    if (i > 0 && headers[i].first == headers[i - 1].first) continue;
    if (!out.signed_headers.empty()) out.signed_headers.push_back(';');
    out.signed_headers.append(headers[i].first);
  }

  out.canonical_request = detail::JoinLines(
      {req.method, CanonicalUri(req.raw_path), CanonicalQuery(req.raw_query, false),
       detail::CanonicalHeaders(&headers, out.signed_headers), out.signed_headers,
       req.payload_hash});
  out.string_to_sign = detail::StringToSign(out.amz_date, out.scope, out.canonical_request);
  out.signature = detail::Hex(HmacSha256(SigningKey(date), out.string_to_sign));
  out.authorization = std::string(detail::kAlgorithm) + " Credential=" + credentials_.access_key +
                      "/" + out.scope + ",SignedHeaders=" + out.signed_headers +
                      ",Signature=" + out.signature;
  out.headers = {{"x-amz-date", out.amz_date},
                 {"x-amz-content-sha256", std::string(req.payload_hash)},
                 {"Authorization", out.authorization}};
  return out;
}

std::string Signer::Presign(const RequestToSign& req, int64_t unix_seconds,
                            int64_t expires_seconds) {
  const std::string amz_date = FormatAmzDate(unix_seconds);
  const std::string date = amz_date.substr(0, 8);
  const std::string scope = detail::CredentialScope(date, credentials_.region);
  detail::Headers headers;
  for (const auto& [name, value] : req.headers) headers.emplace_back(AsciiLower(name), value);
  std::stable_sort(headers.begin(), headers.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string signed_headers;
  for (size_t i = 0; i < headers.size(); ++i) {
    if (i > 0 && headers[i].first == headers[i - 1].first) continue;
    if (!signed_headers.empty()) signed_headers.push_back(';');
    signed_headers.append(headers[i].first);
  }
  std::string query(req.raw_query);
  auto add = [&query](std::string_view k, std::string_view v) {
    if (!query.empty()) query.push_back('&');
    query.append(k).push_back('=');
    query.append(UriEncode(v, true));
  };
  add("X-Amz-Algorithm", detail::kAlgorithm);
  add("X-Amz-Credential", credentials_.access_key + "/" + scope);
  add("X-Amz-Date", amz_date);
  add("X-Amz-Expires", std::to_string(expires_seconds));
  add("X-Amz-SignedHeaders", signed_headers);
  const std::string canonical = detail::JoinLines(
      {req.method, CanonicalUri(req.raw_path), CanonicalQuery(query, false),
       detail::CanonicalHeaders(&headers, signed_headers), signed_headers, "UNSIGNED-PAYLOAD"});
  const std::string to_sign = detail::StringToSign(amz_date, scope, canonical);
  add("X-Amz-Signature", detail::Hex(HmacSha256(SigningKey(date), to_sign)));
  return query;
}

}  // namespace strata::auth

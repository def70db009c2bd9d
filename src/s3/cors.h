// Cross-origin resource sharing as S3 defines it: a bucket's CORS
// configuration (Put/Get/DeleteBucketCors), the answer to a browser's
// preflight (OPTIONS with Origin and Access-Control-Request-Method) and the
// Access-Control-* headers of actual requests from an allowed origin
// (presigned GET / PUT from a web app included). Pure logic over parsed
// rules; the XML is xml.h's, the wiring service.cc's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::s3 {

struct CorsRule {
  std::string id;
  std::vector<std::string> methods;          // GET PUT HEAD POST DELETE
  std::vector<std::string> origins;          // at most one '*' each
  std::vector<std::string> allowed_headers;  // at most one '*' each; case-insensitive
  std::vector<std::string> expose_headers;
  std::optional<int64_t> max_age_s;
};

// S3's limit on rules per configuration.
inline constexpr size_t kMaxCorsRules = 100;

// Checks a parsed configuration as S3 does; the message for InvalidRequest
// when it is refused ("Found unsupported HTTP method in CORS config. ...").
std::optional<std::string> ValidateCors(const std::vector<CorsRule>& rules);

// The first rule that allows `origin` with `method` and every one of
// `request_headers` (a preflight's Access-Control-Request-Headers, split);
// nullptr when none does.
const CorsRule* MatchCors(const std::vector<CorsRule>& rules, std::string_view origin,
                          std::string_view method,
                          const std::vector<std::string>& request_headers = {});

// The response headers for a request from `origin` that `rule` allows. A
// preflight also names the allowed methods, the requested headers and the
// max age.
std::vector<std::pair<std::string, std::string>> CorsHeaders(
    const CorsRule& rule, std::string_view origin, bool preflight,
    const std::vector<std::string>& request_headers = {});

// "a, b,c" -> {"a", "b", "c"} (blanks trimmed, empties dropped).
std::vector<std::string> SplitHeaderList(std::string_view list);

}  // namespace strata::s3

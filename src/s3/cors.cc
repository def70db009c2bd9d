#include "s3/cors.h"

#include <algorithm>

#include "common/encoding.h"

namespace strata::s3 {

namespace {

constexpr std::string_view kMethods[] = {"GET", "PUT", "HEAD", "POST", "DELETE"};

// One '*' at most, anywhere ("https://*.example.com", "*").
bool StarMatch(std::string_view pattern, std::string_view text, bool ignore_case) {
  auto eq = [ignore_case](std::string_view a, std::string_view b) {
    return ignore_case ? EqualsIgnoreCase(a, b) : a == b;
  };
  size_t star = pattern.find('*');
  if (star == std::string_view::npos) return eq(pattern, text);
  std::string_view head = pattern.substr(0, star), tail = pattern.substr(star + 1);
  return text.size() >= head.size() + tail.size() && eq(text.substr(0, head.size()), head) &&
         eq(text.substr(text.size() - tail.size()), tail);
}

bool AnyMatches(const std::vector<std::string>& patterns, std::string_view text, bool ignore_case) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    return StarMatch(p, text, ignore_case);
  });
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

}  // namespace

std::vector<std::string> SplitHeaderList(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = TrimBlanks(list.substr(0, comma));
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

std::optional<std::string> ValidateCors(const std::vector<CorsRule>& rules) {
  if (rules.empty()) return "The CORS configuration must have at least one rule.";
  if (rules.size() > kMaxCorsRules) {
    return "The CORS configuration has more than " + std::to_string(kMaxCorsRules) + " rules.";
  }
  for (const CorsRule& r : rules) {
    if (r.methods.empty() || r.origins.empty()) {
      return "A CORS rule needs at least one AllowedMethod and one AllowedOrigin.";
    }
    for (const std::string& m : r.methods) {
      if (std::find(std::begin(kMethods), std::end(kMethods), m) == std::end(kMethods)) {
        return "Found unsupported HTTP method in CORS config. Unsupported method is " + m;
      }
    }
    for (const std::string& o : r.origins) {
      if (std::count(o.begin(), o.end(), '*') > 1) {
        return "AllowedOrigin \"" + o + "\" can not have more than one wildcard.";
      }
    }
    for (const std::string& h : r.allowed_headers) {
      if (std::count(h.begin(), h.end(), '*') > 1) {
        return "AllowedHeader \"" + h + "\" can not have more than one wildcard.";
      }
    }
    if (r.id.size() > 255) return "The ID of a CORS rule is at most 255 characters.";
    if (r.max_age_s && *r.max_age_s < 0) return "MaxAgeSeconds must not be negative.";
  }
  return std::nullopt;
}

const CorsRule* MatchCors(const std::vector<CorsRule>& rules, std::string_view origin,
                          std::string_view method,
                          const std::vector<std::string>& request_headers) {
  for (const CorsRule& r : rules) {
    if (!AnyMatches(r.origins, origin, false)) continue;
    if (std::find(r.methods.begin(), r.methods.end(), method) == r.methods.end()) continue;
    bool headers_ok = std::all_of(request_headers.begin(), request_headers.end(),
                                  [&](const std::string& h) {
                                    return AnyMatches(r.allowed_headers, h, true);
                                  });
    if (headers_ok) return &r;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> CorsHeaders(
    const CorsRule& rule, std::string_view origin, bool preflight,
    const std::vector<std::string>& request_headers) {
  std::vector<std::pair<std::string, std::string>> h;
  const bool any_origin = std::find(rule.origins.begin(), rule.origins.end(), "*") != rule.origins.end();
  // As S3: a rule allowing every origin answers "*" (and no credentials);
  // otherwise the origin itself, with credentials allowed.
  h.emplace_back("Access-Control-Allow-Origin", any_origin ? std::string("*") : std::string(origin));
  if (!any_origin) h.emplace_back("Access-Control-Allow-Credentials", "true");
  h.emplace_back("Access-Control-Allow-Methods", Join(rule.methods));
  if (preflight && !request_headers.empty()) {
    h.emplace_back("Access-Control-Allow-Headers", Join(request_headers));
  }
  if (!rule.expose_headers.empty()) {
    h.emplace_back("Access-Control-Expose-Headers", Join(rule.expose_headers));
  }
  if (rule.max_age_s) h.emplace_back("Access-Control-Max-Age", std::to_string(*rule.max_age_s));
  h.emplace_back("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method");
  return h;
}

}  // namespace strata::s3

#include "common/http_host.h"

#include "common/encoding.h"

namespace strata {

std::string VirtualHostBucket(std::string_view host, std::string_view domain) {
  if (domain.empty()) return {};
  // A port follows the last ':', except in a bracketed IPv6 literal.
  if (size_t colon = host.rfind(':');
      colon != std::string_view::npos && host.find(']') == std::string_view::npos) {
    host = host.substr(0, colon);
  }
  std::string h = AsciiLower(host);
  const std::string suffix = "." + std::string(domain);
  if (h.size() > suffix.size() && h.ends_with(suffix)) return h.substr(0, h.size() - suffix.size());
  return {};
}

}  // namespace strata

#include "common/query_string.h"

#include <optional>

#include "common/encoding.h"

namespace strata {

QueryString QueryString::Parse(std::string_view raw) {
  QueryString q;
  q.raw_ = std::string(raw);
  while (!raw.empty()) {
    const size_t amp = raw.find('&');
    const std::string_view part = raw.substr(0, amp);
    raw = amp == std::string_view::npos ? std::string_view() : raw.substr(amp + 1);
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    const std::string_view name = part.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : part.substr(eq + 1);
    std::optional<std::string> n = UriDecode(name, /*plus_as_space=*/true);
    std::optional<std::string> v = UriDecode(value, /*plus_as_space=*/true);
    QueryParam param;
    param.name = n ? std::move(*n) : std::string(name);
    param.value = v ? std::move(*v) : std::string(value);
    param.has_value = eq != std::string_view::npos;
    param.decoded = n && v;
    q.malformed_ |= !param.decoded;
    q.params_.push_back(std::move(param));
  }
  return q;
}

const std::string* QueryString::Find(std::string_view name) const {
  for (const QueryParam& p : params_) {
    if (p.name == name) return &p.value;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> QueryString::Pairs() const {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(params_.size());
  for (const QueryParam& p : params_) out.emplace_back(p.name, p.value);
  return out;
}

std::vector<std::string> QueryString::ValuelessNames() const {
  std::vector<std::string> out;
  for (const QueryParam& p : params_) {
    if (!p.has_value) out.push_back(p.name);
  }
  return out;
}

}  // namespace strata

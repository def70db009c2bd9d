#include "http/exchange.h"

#include <boost/beast/http/status.hpp>

#include <array>

namespace strata::http {

namespace bhttp = boost::beast::http;

const std::string* Request::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return &v;
  }
  return nullptr;
}

const QueryString& Request::Query() const {
  if (!query_) query_ = QueryString::Parse(raw_query);
  return *query_;
}

bool IsSafeHeaderValue(std::string_view value) {
  for (char ch : value) {
    unsigned char c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return true;
}

bool IsSafeHeader(std::string_view name, std::string_view value) {
  // RFC 9110 token characters, as a table: every response header passes here.
  static constexpr auto kToken = [] {
    std::array<bool, 256> t{};
    for (int c = '0'; c <= '9'; ++c) t[c] = true;
    for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
    for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
    return t;
  }();
  if (name.empty()) return false;
  for (char c : name) {
    if (!kToken[static_cast<unsigned char>(c)]) return false;
  }
  return IsSafeHeaderValue(value);
}


// The reason phrase from Beast's table of RFC 9110 statuses ("Status" for a
// code it does not know; clients read only the number).
std::string_view Reason(int status) {
  bhttp::status s = bhttp::int_to_status(static_cast<unsigned>(status));
  if (s == bhttp::status::unknown) return "Status";
  boost::beast::string_view reason = bhttp::obsolete_reason(s);
  return std::string_view(reason.data(), reason.size());
}


}  // namespace strata::http

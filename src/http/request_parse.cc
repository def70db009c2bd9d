// See request_parse.h.
#include "http/request_parse.h"

#include <limits>
#include <vector>

#include "common/encoding.h"

namespace strata::http {

void ConfigureRequestParser(RequestParser& parser, size_t max_header_bytes) {
  parser.header_limit(static_cast<std::uint32_t>(max_header_bytes));
  // Not boost::none: Boost 1.74 compares `len > none` as true and rejects every body.
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
}

Request MakeRequest(const RequestParser& parser, std::string remote_addr) {
  Request req;
  const auto& msg = parser.get();
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  size_t q = req.target.find('?');
  req.raw_path = req.target.substr(0, q);
  if (q != std::string::npos) req.raw_query = req.target.substr(q + 1);
  for (const auto& field : msg) {
    auto name = field.name_string();
    req.headers.emplace_back(AsciiLower(std::string_view(name.data(), name.size())),
                             std::string(field.value()));
  }
  if (parser.content_length()) req.content_length = *parser.content_length();
  req.chunked = parser.chunked();
  req.remote_addr = std::move(remote_addr);
  return req;
}

std::optional<ProtocolError> CheckFraming(const Request& req) {
  bool has_te = false, has_cl = false;
  std::vector<std::string> codings;
  for (const auto& [name, value] : req.headers) {
    if (name == "content-length") has_cl = true;
    if (name != "transfer-encoding") continue;
    has_te = true;
    std::string_view rest = value;
    while (true) {
      size_t comma = rest.find(',');
      codings.push_back(AsciiLower(TrimBlanks(rest.substr(0, comma))));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  if (!has_te) return std::nullopt;
  if (has_cl || codings.back() != "chunked") return ProtocolError::kBadFraming;
  for (size_t i = 0; i + 1 < codings.size(); ++i) {
    if (codings[i] == "chunked") return ProtocolError::kBadFraming;  // chunked twice
  }
  if (codings.size() > 1) return ProtocolError::kUnsupportedTransferCoding;
  return std::nullopt;
}

}  // namespace strata::http

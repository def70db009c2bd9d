// See request_parse.h.
#include "http/request_parse.h"

#include <cctype>
#include <limits>

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
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    req.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  if (parser.content_length()) req.content_length = *parser.content_length();
  req.chunked = parser.chunked();
  req.remote_addr = std::move(remote_addr);
  return req;
}

std::optional<ProtocolError> CheckRequestFraming(const RequestParser& parser) {
  const auto& msg = parser.get();
  if (msg.find(boost::beast::http::field::transfer_encoding) != msg.end() && !parser.chunked()) {
    return ProtocolError::kUnsupportedMethod;
  }
  return std::nullopt;
}

}  // namespace strata::http

// The request-parsing step of the HTTP server (server.cc), exposed so that
// the server and its libFuzzer target (request_parse_fuzz.cc) parse exactly
// alike: Beast's request_parser<buffer_body> configured as the server
// configures it, the conversion of a parsed head into the Request the S3
// layer sees, the framing check, the bounded connection buffer, and the read
// loop that decodes a chunked body through the parser. No sockets here: the
// stream is a template parameter.
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <cstddef>
#include <optional>
#include <string>

#include "http/request.h"

namespace strata::http {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::buffer_body>;

// Header section limited to max_header_bytes; the body unlimited (the S3
// layer enforces object sizes).
void ConfigureRequestParser(RequestParser& parser, size_t max_header_bytes);

// The Request of a parsed head: method, target split at the first '?',
// header names lowercased in arrival order, Content-Length / chunked.
Request MakeRequest(const RequestParser& parser, std::string remote_addr);

// RFC 9112 6.1 / 6.3: a Transfer-Encoding whose final coding is not chunked
// leaves the body length unknowable, as does one beside a Content-Length;
// Beast then takes the request to have no body (or a Content-Length one), so
// the body would run as a second request. kBadFraming for those,
// kUnsupportedTransferCoding for codings besides a final chunked; nullopt if
// the framing is fine. (The same rule as ServerImpl::CheckFraming.)
std::optional<ProtocolError> CheckFraming(const Request& req);

// The connection's read buffer, bounded as server.cc bounds it: a head, a
// chunk header line or trailer section, and read-ahead. Beast 1.74 has no
// limit of its own on a chunk header line or on the trailer section, so
// with an unbounded buffer one endless chunk extension would make the
// server buffer without end; with this bound the read fails with
// error::buffer_overflow.
inline constexpr size_t kBufferSlackBytes = 64 * 1024;
inline boost::beast::flat_buffer MakeConnectionBuffer(size_t max_header_bytes) {
  return boost::beast::flat_buffer(max_header_bytes + kBufferSlackBytes);
}

// Reads decoded body bytes through the parser (chunked framing, or a
// Content-Length body the caller chose not to read directly) into buf[0..n).
// Returns the byte count: 0 only when the body is complete or on error.
template <class SyncReadStream, class DynamicBuffer>
size_t ReadParsedBody(SyncReadStream& stream, DynamicBuffer& buffer, RequestParser& parser,
                      char* buf, size_t n, boost::system::error_code& ec) {
  namespace bhttp = boost::beast::http;
  while (true) {
    parser.get().body().data = buf;
    parser.get().body().size = n;
    parser.get().body().more = true;
    ec = {};
    bhttp::read_some(stream, buffer, parser, ec);
    if (ec == bhttp::error::need_buffer) ec = {};
    size_t got = n - parser.get().body().size;
    if (ec) return 0;
    if (got > 0) return got;
    if (parser.is_done()) return 0;
  }
}

}  // namespace strata::http

// libFuzzer target: HTTP/1.1 request heads and body framing as the server
// sees them. One connection's bytes (input[1..]) arrive in pieces whose sizes
// input[0] picks; each request is parsed with read_header on a flat_buffer
// exactly as server.cc does (request_parse.h: the parser's limits, MakeRequest,
// the framing check, the bounded buffer, the chunked read loop), the body is
// read the server's way (Content-Length directly from the buffer and then the
// stream, chunked through the parser), and keep-alive requests follow while
// the connection allows.
// Seeds: tests/fuzz/http_request/ (requests as boto3 and curl send them).
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_util.h"
#include "http/piece_stream.h"
#include "http/request_parse.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using strata::fuzz::Rng;

void CheckRequest(const strata::http::Request& req, const strata::http::RequestParser& parser) {
  FUZZ_CHECK(!req.method.empty());
  std::string rebuilt = req.raw_path;
  if (req.target.find('?') != std::string::npos) rebuilt += "?" + req.raw_query;
  FUZZ_CHECK(rebuilt == req.target);
  FUZZ_CHECK(req.raw_path.find('?') == std::string::npos);
  for (const auto& [name, value] : req.headers) {
    FUZZ_CHECK(!name.empty());
    for (char c : name) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
  }
  // Beast refuses a Content-Length next to chunked framing.
  FUZZ_CHECK(!(req.chunked && req.content_length));
  FUZZ_CHECK(req.chunked == parser.chunked());
  // What the server checks before serving: whenever Beast did not take the
  // body as chunked although a Transfer-Encoding is there, it is refused.
  bool has_te = false;
  for (const auto& [name, value] : req.headers) has_te |= name == "transfer-encoding";
  if (has_te && !req.chunked) FUZZ_CHECK(strata::http::CheckFraming(req).has_value());
  if (!has_te) FUZZ_CHECK(!strata::http::CheckFraming(req).has_value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  std::string_view wire(reinterpret_cast<const char*>(data + 1), size - 1);
  // The server's limit (ServerOptions::max_header_bytes), or a small one so
  // the header_limit paths are reached too.
  const size_t max_header = (control & 0x80) ? 64 * 1024 : 200;
  Rng pieces(control);
  const size_t max_piece = strata::fuzz::MaxPiece(control >> 4);
  strata::http::PieceStream stream(wire, [&] { return pieces.Size(max_piece); });
  Rng sizes(control * 31u + size);
  // The bounded buffer request_parse.h asks the server to use.
  beast::flat_buffer buffer = strata::http::MakeConnectionBuffer(max_header);
  uint64_t body_total = 0;
  for (int request = 0; request < 16; ++request) {
    strata::http::RequestParser parser;
    strata::http::ConfigureRequestParser(parser, max_header);
    boost::system::error_code ec;
    bhttp::read_header(stream, buffer, parser, ec);
    if (ec) break;
    FUZZ_CHECK(parser.is_header_done());
    strata::http::Request req = strata::http::MakeRequest(parser, "fuzz");
    CheckRequest(req, parser);
    if (strata::http::CheckFraming(req)) break;  // answered 400/501, closed
    char buf[4096];
    if (!parser.chunked() && parser.content_length()) {
      // BodySource::ReadDirect: what came with the head, then the stream.
      uint64_t remaining = *parser.content_length();
      while (remaining > 0) {
        size_t want = static_cast<size_t>(std::min<uint64_t>(remaining, sizes.Size(sizeof(buf))));
        size_t got;
        if (buffer.size() > 0) {
          got = std::min(want, buffer.size());
          buffer.consume(got);
        } else {
          got = stream.read_some(asio::buffer(buf, want), ec);
          if (ec) break;
        }
        FUZZ_CHECK(got > 0 && got <= remaining);
        remaining -= got;
        body_total += got;
      }
      if (remaining > 0) break;  // connection closed mid-body
    } else {
      // BodySource::ReadParsed: chunked framing decoded by the parser.
      while (!parser.is_done()) {
        size_t n = strata::http::ReadParsedBody(stream, buffer, parser, buf,
                                                sizes.Size(sizeof(buf)), ec);
        if (ec) break;
        body_total += n;
        if (n == 0) FUZZ_CHECK(parser.is_done());
      }
      if (!parser.is_done()) break;
    }
    // Decoded bytes never exceed what arrived.
    FUZZ_CHECK(body_total <= wire.size());
    if (!parser.keep_alive()) break;
  }
  return 0;
}

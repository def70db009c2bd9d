// An HTTP/1.1 request head as the S3 layer sees it, and the response writer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/query_string.h"
#include "common/status.h"

namespace strata::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;
  std::string target;     // as sent: "/bucket/key?uploads"
  std::string raw_path;   // target before '?', still percent-encoded
  std::string raw_query;  // target after '?', still percent-encoded
  Headers headers;        // names lowercased, in arrival order
  std::optional<uint64_t> content_length;
  bool chunked = false;   // Transfer-Encoding: chunked (decoded by the server)
  std::string remote_addr;
  bool secure = false;  // arrived over TLS (aws:SecureTransport)

  // First value of a header (name lowercase), or nullptr.
  const std::string* Header(std::string_view name) const;
  // raw_query parsed, once (on first use; raw_query must not change after it):
  // what the router and auth both read.
  const QueryString& Query() const;

 private:
  mutable std::optional<QueryString> query_;
};

// Writes one response. Start() once, then Write() the body bytes; the
// body length must equal content_length. For HEAD, pass send_body=false.
class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;
  virtual Status Start(int status, const Headers& headers, uint64_t content_length,
                       bool send_body = true) = 0;
  virtual Status Write(std::string_view data) = 0;
  // Whether SendFile may be used: a plain TCP connection (not TLS).
  virtual bool can_send_file() const { return false; }
  // Sends n bytes of the file `fd` from `offset` as body bytes, from the page
  // cache straight to the socket (sendfile); only where can_send_file().
  virtual Status SendFile(int fd, uint64_t offset, uint64_t n) {
    (void)fd, (void)offset, (void)n;
    return Status(Code::kNotImplemented, "this response cannot send from a file");
  }
  virtual bool started() const = 0;
  // Ask the server to close the connection after this response.
  virtual void CloseAfterResponse() = 0;
};

// Errors the HTTP layer detects before the request reaches a handler.
enum class ProtocolError {
  kMalformed,          // unparseable request line/headers
  kHeaderTooLarge,     // header section above the limit
  kTimeout,            // the head did not arrive whole within the head deadline
  kUnsupportedMethod,  // or unsupported version
  kBadFraming,         // Transfer-Encoding whose final coding is not chunked, or with
                       // Content-Length: the body length is unknowable (RFC 9112 §6.1)
  kUnsupportedTransferCoding,  // a transfer coding other than chunked (e.g. gzip, chunked)
  kOverloaded,         // connection cap reached: answered and closed at once
};

// True when `name` is an HTTP token and `value` holds no control character
// other than HTAB (no CR, LF or NUL): what may go into a response header.
bool IsSafeHeader(std::string_view name, std::string_view value);
bool IsSafeHeaderValue(std::string_view value);

}  // namespace strata::http

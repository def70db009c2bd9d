// One keep-alive HTTP/1.1 connection that sends a GET head and reads the
// reply's body straight into a caller's buffer: the model loader's data path
// (client/python/strata/s3http.py, through the Python module `strata_http`).
//
// The loader signs each request in Python (botocore) and hands the whole
// head over; everything after that -- the send, the reply head (parsed by
// Beast), the body's receives -- runs here, without the GIL. Python's
// http.client took the GIL back for every receive of every 8 MiB range and
// kept the loader's threads queueing for it (docs/model-loading.md).
//
// One exchange at a time per connection (a connection per loader thread).
// Errors are KvStatus values: kIoError (refused, reset, closed, or a receive
// that made no progress for the timeout: worth another try on a fresh
// connection), kProtocolError (a reply that is not HTTP/1.1 with a
// Content-Length body where one is needed). After any error, or a reply whose
// body was not read, the connection is closed (usable() is false).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/kv_client.h"

namespace strata::kv {

class Stream;

struct HttpConnectOptions {
  std::string host;
  uint16_t port = 80;
  uint32_t timeout_ms = 1000;  // connect, and each send or receive making no progress
  bool tls = false;
  std::string tls_ca_file;      // "" = the system's trust store
  std::string tls_server_name;  // "" = host
};

struct HttpReply {
  int status = 0;
  uint64_t content_length = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-case, in order
  size_t into_dest = 0;  // body bytes written into the destination (its first bytes)
  std::string body;      // the body of any other reply (at most kMaxOtherBody bytes)
  bool body_read = false;  // the whole body was received (into dest or body)

  // The first header of that (lower-case) name, or nullptr.
  const std::string* Header(std::string_view name) const;
};

class HttpRangeConnection {
 public:
  static constexpr size_t kMaxHead = 64 << 10;       // the reply head, at most
  static constexpr size_t kMaxOtherBody = 64 << 10;  // a body not for the destination
  static constexpr int kMaxInterim = 8;  // 1xx heads read past before the reply, at most

  static KvStatus Connect(const HttpConnectOptions& options,
                          std::unique_ptr<HttpRangeConnection>* out);
  // A plain connection over a connected socket (owned from here on; its
  // SO_RCVTIMEO, if any, is the stall timeout): for the fuzzer and tests.
  static std::unique_ptr<HttpRangeConnection> OverSocket(int fd);
  ~HttpRangeConnection();

  // Sends `head` (a complete request head without a body: request line,
  // headers, blank line) and reads the reply (past any interim 1xx heads). A 200 or 206 body goes into
  // `dest` when it fits -- exactly dest_len bytes if `exact`, at most dest_len
  // otherwise; a 2xx body that does not fit is not read (body_read false, the
  // connection closed). Any other reply's body up to kMaxOtherBody goes into
  // reply->body (a longer one is cut there and the connection closed).
  KvStatus Exchange(std::string_view head, char* dest, size_t dest_len, bool exact,
                    HttpReply* reply);

  bool usable() const { return stream_ != nullptr; }
  // Closes the socket now (not while an Exchange runs); usable() is then false.
  void Close() { Drop(); }
  // Ends both directions of the socket (any thread, also during an Exchange,
  // which then fails with kIoError and closes it).
  void Shutdown();

 private:
  explicit HttpRangeConnection(std::unique_ptr<Stream> stream);
  KvStatus ReadHead(HttpReply* reply, std::string* early, bool* keep_alive);
  KvStatus Fail(KvStatus s);
  void Drop();

  std::unique_ptr<Stream> stream_;
};

}  // namespace strata::kv

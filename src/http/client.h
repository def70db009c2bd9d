// A small blocking HTTP/1.1 client for strata's own outgoing requests (the
// remote cold tier's S3 client, remote/s3_client.h; webhook deliveries,
// notify/sender.h): keep-alive connections pooled per client, TLS through
// common/tls.h for https endpoints, a timeout on every wait, replies parsed
// by Beast with a size limit. One call is one attempt; retrying is the
// caller's policy (it knows which requests are idempotent).
//
// Thread-safe: each exchange takes an idle connection (or dials one) and
// gives it back when the reply was complete and kept alive.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace strata {
class TlsClientContext;
}

namespace strata::http {

struct ClientEndpoint {
  bool https = false;
  std::string host;  // name or address (IPv6 without brackets)
  int port = 0;
  std::string ca_file;      // https: PEM trust anchors ("" = the system's)
  int timeout_ms = 30'000;  // per wait (connect, each read or write)
};

// "http[s]://HOST[:PORT][/PATH[?QUERY]]": the endpoint (https, host, port;
// other fields untouched) and the request target ("/" when no path).
// False if not that (no scheme, empty host, bad port, userinfo, fragment,
// spaces or control characters).
bool ParseHttpUrl(std::string_view url, ClientEndpoint* endpoint, std::string* target);

struct ClientRequest {
  std::string method;
  std::string target;  // "/path?query", already encoded
  std::vector<std::pair<std::string, std::string>> headers;  // besides Host, Content-Length
  std::string body;
  size_t reply_limit = 8 << 20;  // the most reply body bytes accepted
};

struct ClientResponse {
  int status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-case

  std::string_view Header(std::string_view name) const;
};

class Client {
 public:
  static Result<std::unique_ptr<Client>> Create(ClientEndpoint endpoint);
  ~Client();

  // One attempt. Errors: Unavailable / DeadlineExceeded (cannot connect, the
  // connection broke or stalled: *retry is set, the request may be sent
  // again), Corruption (a reply that is not HTTP or over the limit),
  // InvalidArgument (a header with a control character). A 5xx reply is a
  // response, not an error. Messages do not name the endpoint: callers add
  // that context (WithContext).
  Result<ClientResponse> ExchangeOnce(const ClientRequest& req, bool* retry);

  // Whether a pooled connection is idle (a failure on one may just be a
  // connection the peer closed while it idled).
  bool HasIdle();

  const ClientEndpoint& endpoint() const { return endpoint_; }
  // "host[:port]" as the Host header says it.
  const std::string& host_header() const { return host_header_; }
  // "http://host:port", for messages.
  std::string Describe() const;

 private:
  struct Connection;
  explicit Client(ClientEndpoint endpoint);
  Result<std::unique_ptr<Connection>> Take(bool* reused);
  void GiveBack(std::unique_ptr<Connection> c);

  ClientEndpoint endpoint_;
  std::string host_header_;
  std::shared_ptr<TlsClientContext> tls_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mu_
};

// False if `v` holds a control character (CR, LF, NUL, DEL...): such a value
// must never reach a request head.
bool HeaderSafe(std::string_view v);

}  // namespace strata::http

#include "http/client.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <charconv>

#include "common/encoding.h"
#include "common/net.h"
#include "common/tls.h"
#include "http/timed_stream.h"

namespace strata::http {

namespace bhttp = boost::beast::http;

namespace {
constexpr size_t kIdleConnections = 8;
}  // namespace

bool HeaderSafe(std::string_view v) {
  for (unsigned char c : v) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

bool ParseHttpUrl(std::string_view url, ClientEndpoint* endpoint, std::string* target) {
  ClientEndpoint e = *endpoint;
  if (url.starts_with("https://")) {
    e.https = true;
    url.remove_prefix(8);
  } else if (url.starts_with("http://")) {
    e.https = false;
    url.remove_prefix(7);
  } else {
    return false;
  }
  if (!HeaderSafe(url) || url.find_first_of("# ") != std::string_view::npos) return false;
  std::string_view authority = url, path;
  if (size_t slash = url.find_first_of("/?"); slash != std::string_view::npos) {
    authority = url.substr(0, slash);
    path = url.substr(slash);
  }
  if (authority.empty() || authority.find('@') != std::string_view::npos) return false;
  std::string_view host = authority, port;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    host = authority.substr(1, close - 1);
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port = rest.substr(1);
      if (port.empty()) return false;
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) return false;
  }
  if (host.empty()) return false;
  int p = e.https ? 443 : 80;
  if (!port.empty()) {
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535) return false;
  }
  e.host = std::string(host);
  e.port = p;
  *endpoint = std::move(e);
  std::string t(path);
  if (t.empty() || t.front() == '?') t.insert(t.begin(), '/');
  *target = std::move(t);
  return true;
}

std::string_view ClientResponse::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (n == name) return v;
  }
  return {};
}

struct Client::Connection {
  Connection(int fd, SSL* ssl, int timeout_ms) : fd(fd), ssl(ssl), stream(fd, timeout_ms, ssl) {}
  ~Connection() {
    if (ssl) SSL_free(ssl);
    ::close(fd);
  }
  int fd;
  SSL* ssl;
  TimedStream stream;
  boost::beast::flat_buffer buffer;
};

Result<std::unique_ptr<Client>> Client::Create(ClientEndpoint endpoint) {
  if (endpoint.host.empty() || endpoint.port <= 0 || endpoint.port > 65535) {
    return InvalidArgument("an HTTP endpoint needs a host and a port");
  }
  if (!HeaderSafe(endpoint.host) || endpoint.host.find_first_of("/ ") != std::string::npos) {
    return InvalidArgument("bad host name '" + endpoint.host + "'");
  }
  std::unique_ptr<Client> c(new Client(std::move(endpoint)));
  const ClientEndpoint& e = c->endpoint_;
  const bool v6 = e.host.find(':') != std::string::npos;
  c->host_header_ = v6 ? "[" + e.host + "]" : e.host;
  if (e.port != (e.https ? 443 : 80)) c->host_header_ += ":" + std::to_string(e.port);
  if (e.https) {
    ASSIGN_OR_RETURN(c->tls_, TlsClientContext::Create(e.ca_file));
  }
  return c;
}

Client::Client(ClientEndpoint endpoint) : endpoint_(std::move(endpoint)) {}
Client::~Client() = default;

std::string Client::Describe() const {
  return std::string(endpoint_.https ? "https://" : "http://") + host_header_;
}

bool Client::HasIdle() {
  std::lock_guard lock(mu_);
  return !idle_.empty();
}

Result<std::unique_ptr<Client::Connection>> Client::Take(bool* reused) {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      *reused = true;
      return c;
    }
  }
  *reused = false;
  ASSIGN_OR_RETURN(int fd, Dial(endpoint_.host, static_cast<uint16_t>(endpoint_.port),
                                endpoint_.timeout_ms));
  // Non-blocking: the stream waits in poll with its own timeout.
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  SSL* ssl = nullptr;
  if (tls_) {
    auto s = tls_->NewSession(fd, endpoint_.host);
    if (!s.ok()) {
      ::close(fd);
      return s.status();
    }
    ssl = *s;
  }
  return std::make_unique<Connection>(fd, ssl, endpoint_.timeout_ms);
}

void Client::GiveBack(std::unique_ptr<Connection> c) {
  std::lock_guard lock(mu_);
  if (idle_.size() < kIdleConnections) idle_.push_back(std::move(c));
}

Result<ClientResponse> Client::ExchangeOnce(const ClientRequest& req, bool* retry) {
  *retry = false;
  if (!HeaderSafe(req.method) || !HeaderSafe(req.target) || req.target.empty() ||
      req.target.find(' ') != std::string::npos) {
    return InvalidArgument("a bad request line");
  }
  std::string head = req.method + " " + req.target + " HTTP/1.1\r\nHost: " + host_header_ + "\r\n";
  for (const auto& [n, v] : req.headers) {
    if (!HeaderSafe(n) || !HeaderSafe(v) || n.empty() || n.find(':') != std::string::npos) {
      return InvalidArgument("a request header holds a control character");
    }
    head += n + ": " + v + "\r\n";
  }
  if (!req.body.empty() || req.method == "PUT" || req.method == "POST") {
    head += "Content-Length: " + std::to_string(req.body.size()) + "\r\n";
  }
  head += "\r\n";

  bool reused = false;
  auto taken = Take(&reused);
  if (!taken.ok()) {
    const Code code = taken.status().code();
    *retry = code == Code::kUnavailable || code == Code::kDeadlineExceeded;
    return taken.status();
  }
  std::unique_ptr<Connection> conn = std::move(taken).value();

  auto broken = [&](const boost::system::error_code& ec, const char* what) -> Status {
    *retry = true;
    std::string text = std::string(what) + ": " + ec.message();
    if (ec == boost::asio::error::timed_out) return DeadlineExceeded(text);
    return Unavailable(text);
  };
  iovec iov[2] = {{head.data(), head.size()},
                  {const_cast<char*>(req.body.data()), req.body.size()}};
  boost::system::error_code ec;
  if (!conn->stream.SendAll(iov, 2, ec)) return broken(ec, "sending the request");

  bhttp::response_parser<bhttp::string_body> parser;
  parser.header_limit(64 << 10);
  parser.body_limit(req.reply_limit);
  if (req.method == "HEAD") parser.skip(true);
  bhttp::read(conn->stream, conn->buffer, parser, ec);
  if (ec) {
    if (ec == bhttp::error::body_limit || ec == bhttp::error::header_limit) {
      return Corruption(req.method + " reply larger than expected");
    }
    const bool closed = ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message;
    if (!closed && ec.category() == make_error_code(bhttp::error::bad_target).category()) {
      return Corruption("a reply that is not HTTP: " + ec.message());
    }
    return broken(ec, "reading the reply");
  }
  ClientResponse r;
  auto& msg = parser.get();
  r.status = static_cast<int>(msg.result_int());
  r.body = std::move(msg.body());
  for (const auto& f : msg) {
    r.headers.emplace_back(
        AsciiLower(std::string_view(f.name_string().data(), f.name_string().size())),
        std::string(f.value()));
  }
  if (msg.keep_alive()) GiveBack(std::move(conn));
  return r;
}

}  // namespace strata::http

#include "http/server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "common/log.h"
#include "http/timed_stream.h"

namespace strata::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

const std::string* Request::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return &v;
  }
  return nullptr;
}

namespace {

const char* Reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Payload Too Large";
    case 416: return "Requested Range Not Satisfiable";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 507: return "Insufficient Storage";
    default: return "Status";
  }
}

struct Connection {
  explicit Connection(tcp::socket s) : socket(std::move(s)) {}
  tcp::socket socket;
  beast::flat_buffer buffer;
  std::string remote;
};

using Parser = bhttp::request_parser<bhttp::buffer_body>;

constexpr int kLingerMs = 1;

class BodySource : public ByteSource {
 public:
  BodySource(Parser& parser, TimedStream& stream, beast::flat_buffer& buffer, bool expect_continue)
      : parser_(parser), stream_(stream), buffer_(buffer), expect_continue_(expect_continue) {
    // Content-Length bodies bypass Beast's parser: it would copy them through
    // its flat buffer, which stays small (512-byte reads, measured). Chunked
    // bodies still go through the parser, which decodes the framing.
    if (!parser_.chunked() && parser_.content_length()) {
      direct_ = true;
      remaining_ = *parser_.content_length();
    }
  }

  Result<size_t> Read(char* buf, size_t n) override {
    if (done() || n == 0) return size_t{0};
    if (expect_continue_) {
      expect_continue_ = false;
      static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      iovec iov{const_cast<char*>(kContinue), sizeof(kContinue) - 1};
      boost::system::error_code ec;
      if (!stream_.SendAll(&iov, 1, ec)) return Aborted("sending 100 Continue: " + ec.message());
    }
    return direct_ ? ReadDirect(buf, n) : ReadParsed(buf, n);
  }
  bool failed() const { return failed_; }
  bool done() const { return direct_ ? remaining_ == 0 : parser_.is_done(); }

 private:
  Result<size_t> ReadDirect(char* buf, size_t n) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(n, remaining_));
    if (buffer_.size() > 0) {  // bytes that arrived together with the head
      size_t take = std::min(want, buffer_.size());
      std::memcpy(buf, buffer_.data().data(), take);
      buffer_.consume(take);
      remaining_ -= take;
      return take;
    }
    boost::system::error_code ec;
    size_t got = stream_.read_some(asio::buffer(buf, want), ec);
    if (ec) return Fail(ec);
    remaining_ -= got;
    return got;
  }

  Result<size_t> ReadParsed(char* buf, size_t n) {
    while (true) {
      parser_.get().body().data = buf;
      parser_.get().body().size = n;
      parser_.get().body().more = true;
      boost::system::error_code ec;
      bhttp::read_some(stream_, buffer_, parser_, ec);
      if (ec == bhttp::error::need_buffer) ec = {};
      size_t got = n - parser_.get().body().size;
      if (ec) return Fail(ec);
      if (got > 0) return got;
      if (parser_.is_done()) return size_t{0};
    }
  }

  Status Fail(const boost::system::error_code& ec) {
    failed_ = true;
    if (ec == asio::error::timed_out) return DeadlineExceeded("request body: client stalled");
    if (ec == asio::error::eof || ec == bhttp::error::partial_message ||
        ec == asio::error::connection_reset) {
      return Aborted("request body: connection closed early");
    }
    return InvalidArgument("request body: " + ec.message());
  }

  Parser& parser_;
  TimedStream& stream_;
  beast::flat_buffer& buffer_;
  bool expect_continue_;
  bool direct_ = false;
  uint64_t remaining_ = 0;
  bool failed_ = false;
};

class Writer : public ResponseWriter {
 public:
  // `body` (optional) tells whether the request body was consumed; if not,
  // the connection cannot be reused and the response says so.
  Writer(TimedStream& stream, bool close, const BodySource* body = nullptr)
      : stream_(stream), close_(close), body_(body) {}

  Status Start(int status, const Headers& headers, uint64_t content_length,
               bool send_body = true) override {
    if (started_) return Internal("response started twice");
    started_ = true;
    remaining_ = send_body ? content_length : 0;
    if (body_ && !body_->done()) close_ = true;
    head_ = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) + "\r\n";
    for (const auto& [k, v] : headers) {
      head_.append(k).append(": ").append(v).append("\r\n");
    }
    head_.append("Content-Length: ").append(std::to_string(content_length)).append("\r\n");
    if (close_) head_.append("Connection: close\r\n");
    head_.append("\r\n");
    if (remaining_ == 0) return Flush({});
    return Status::OK();
  }

  Status Write(std::string_view data) override {
    if (!started_) return Internal("write before start");
    if (data.size() > remaining_) return Internal("response body longer than Content-Length");
    remaining_ -= data.size();
    return Flush(data);
  }

  bool started() const override { return started_; }
  void CloseAfterResponse() override { close_ = true; }
  bool close() const { return close_; }
  bool complete() const { return started_ && remaining_ == 0 && head_.empty() && !failed_; }

 private:
  // Sends the pending head (if any) together with data in one sendmsg.
  Status Flush(std::string_view data) {
    iovec iov[2] = {{head_.data(), head_.size()}, {const_cast<char*>(data.data()), data.size()}};
    boost::system::error_code ec;
    bool ok = stream_.SendAll(iov, 2, ec);
    head_.clear();
    if (!ok) {
      failed_ = true;
      return Aborted("sending response: " + ec.message());
    }
    return Status::OK();
  }

  TimedStream& stream_;
  bool close_;
  const BodySource* body_;
  bool started_ = false;
  bool failed_ = false;
  uint64_t remaining_ = 0;
  std::string head_;
};

class ServerImpl : public Server {
 public:
  ServerImpl(ServerOptions options, Handler handler, ErrorRenderer on_error)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        on_error_(std::move(on_error)),
        acceptor_(ioc_) {}

  ~ServerImpl() override { Stop(); }

  Status Listen() {
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(options_.host, ec);
    if (ec) return InvalidArgument("bad listen address " + options_.host);
    tcp::endpoint ep(addr, static_cast<unsigned short>(options_.port));
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(1024, ec);
    if (ec) return Unavailable("listen on " + options_.host + ":" + std::to_string(options_.port) +
                               ": " + ec.message());
    port_ = acceptor_.local_endpoint().port();
    Accept();
    net_thread_ = std::thread([this] { ioc_.run(); });
    for (int i = 0; i < options_.worker_threads; ++i) workers_.emplace_back([this] { Work(); });
    return Status::OK();
  }

  int port() const override { return port_; }

  void Stop() override {
    if (stopped_.exchange(true)) return;
    asio::post(ioc_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
    });
    ioc_.stop();
    if (net_thread_.joinable()) net_thread_.join();
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      queue_.clear();
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

 private:
  void Accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec != asio::error::operation_aborted && acceptor_.is_open()) Accept();
        return;
      }
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      auto conn = std::make_shared<Connection>(std::move(socket));
      auto ep = conn->socket.remote_endpoint(ignored);
      if (!ignored) conn->remote = ep.address().to_string() + ":" + std::to_string(ep.port());
      Park(conn);
      Accept();
    });
  }

  // Waits (on the network thread) until the connection has bytes to read.
  void Park(std::shared_ptr<Connection> conn) {
    asio::post(ioc_, [this, conn] {
      conn->socket.async_wait(tcp::socket::wait_read, [this, conn](boost::system::error_code ec) {
        if (ec) return;
        {
          std::lock_guard lock(mu_);
          if (stopping_) return;
          queue_.push_back(conn);
        }
        cv_.notify_one();
      });
    });
  }

  void Work() {
    while (true) {
      std::shared_ptr<Connection> conn;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (stopping_) return;
        conn = std::move(queue_.front());
        queue_.pop_front();
      }
      if (Serve(*conn)) Park(std::move(conn));
    }
  }

  // Serves requests on the connection while they keep coming; returns true to
  // park it for the next request, false when it was closed.
  bool Serve(Connection& conn) {
    int fd = conn.socket.native_handle();
    TimedStream stream(fd, options_.io_timeout_ms);
    while (true) {
      Parser parser;
      parser.header_limit(static_cast<std::uint32_t>(options_.max_header_bytes));
      // Not boost::none: Boost 1.74 compares `len > none` as true and rejects every body.
      parser.body_limit(std::numeric_limits<std::uint64_t>::max());
      boost::system::error_code ec;
      bhttp::read_header(stream, conn.buffer, parser, ec);
      if (ec) {
        if ((ec == asio::error::eof || ec == bhttp::error::end_of_stream) &&
            conn.buffer.size() == 0) {
          return Close(conn, false);
        }
        ProtocolError kind = ProtocolError::kMalformed;
        if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
          kind = ProtocolError::kHeaderTooLarge;
        } else if (ec == asio::error::timed_out) {
          kind = ProtocolError::kTimeout;
        } else if (ec == asio::error::eof || ec == asio::error::connection_reset) {
          return Close(conn, false);
        }
        STRATA_LOG("bad request head from %s: %s", conn.remote.c_str(), ec.message().c_str());
        Writer out(stream, /*close=*/true);
        on_error_(kind, out);
        return Close(conn, true);
      }
      Request req = MakeRequest(parser, conn);
      const std::string* expect = req.Header("expect");
      bool expect_continue = expect && beast::iequals(*expect, "100-continue");
      if (expect_continue && parser.is_done()) {
        // An empty body with Expect: 100-continue. RFC 9110 lets us answer
        // at once, but botocore < 1.43.77 (Debian 12's) then misreads the
        // connection (boto/botocore#3755); the interim response costs nothing.
        static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
        iovec iov{const_cast<char*>(kContinue), sizeof(kContinue) - 1};
        boost::system::error_code send_ec;
        if (!stream.SendAll(&iov, 1, send_ec)) return Close(conn, false);
        expect_continue = false;
      }
      BodySource body(parser, stream, conn.buffer, expect_continue);
      Writer out(stream, !parser.keep_alive(), &body);
      try {
        handler_(req, body, out);
      } catch (const std::exception& e) {
        STRATA_LOG("handler threw on %s %s: %s", req.method.c_str(), req.target.c_str(), e.what());
      }
      if (!out.started()) {
        out.CloseAfterResponse();
        out.Start(500, {}, 0).IgnoreError();
      }
      bool body_done = body.done() && !body.failed();
      if (out.close() || !out.complete() || !body_done) return Close(conn, !body_done);
      if (conn.buffer.size() > 0) continue;  // pipelined request already here
      // Keep-alive clients usually send the next request right away: wait a
      // moment (blocked in poll, no CPU) before handing the connection back
      // to the network thread, which would cost two thread switches.
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, kLingerMs) == 1) continue;
      return true;
    }
  }

  static Request MakeRequest(Parser& parser, const Connection& conn) {
    Request req;
    auto& msg = parser.get();
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
    req.remote_addr = conn.remote;
    return req;
  }

  // Closes the connection. With linger, first stops sending and drains what
  // the client still sends for a moment, so it can read our response instead
  // of getting a reset.
  bool Close(Connection& conn, bool linger) {
    int fd = conn.socket.native_handle();
    if (linger) {
      ::shutdown(fd, SHUT_WR);
      char sink[16384];
      size_t drained = 0;
      pollfd p{fd, POLLIN, 0};
      while (drained < (8u << 20) && ::poll(&p, 1, 1000) == 1) {
        ssize_t n = ::recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
        if (n <= 0) break;
        drained += static_cast<size_t>(n);
      }
    }
    boost::system::error_code ec;
    conn.socket.close(ec);
    return false;
  }

  ServerOptions options_;
  Handler handler_;
  ErrorRenderer on_error_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  int port_ = 0;
  std::thread net_thread_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Connection>> queue_;
  bool stopping_ = false;
  std::atomic<bool> stopped_{false};
};

}  // namespace

Result<std::unique_ptr<Server>> Server::Start(ServerOptions options, Handler handler,
                                              ErrorRenderer on_error) {
  auto server = std::make_unique<ServerImpl>(std::move(options), std::move(handler),
                                             std::move(on_error));
  RETURN_IF_ERROR(server->Listen());
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace strata::http

// TLS over the TCP transport (--kv-tls): the same Connection contract, the
// bytes through an OpenSSL session on the socket (common/tls.h, TlsIo).
//
// The socket is non-blocking under the session, and the contract's blocking
// reads and writes wait in poll with the I/O timeout. That keeps the server's
// promise that a worker never waits on an unauthenticated client:
// WaitReadable(0) consumes whatever the socket holds — handshake messages,
// parts of records — without blocking and says "readable" only when a whole
// record's bytes are decrypted (or the end or an error is there), so a
// trickled handshake or record parks the connection like a trickled frame.
// A parked connection wakes on its socket: a record that is not complete
// leaves nothing decrypted behind (OpenSSL reads no further than the record
// it needs, read-ahead off), so "socket readable" is the right wake-up.
//
// sendfile cannot carry TLS records (no kTLS here): SendFile is the base
// class's read-and-write through a buffer.
#include <poll.h>

#include <atomic>
#include <chrono>
#include <string>

#include "common/tls.h"
#include "kvcache/transport.h"

namespace strata::kvcache {

namespace {

class TlsConnection : public Connection {
 public:
  TlsConnection(std::unique_ptr<Connection> tcp, SSL* ssl)
      : tcp_(std::move(tcp)), io_(ssl, tcp_->PollFd()) {}
  ~TlsConnection() override {
    if (!shut_) io_.CloseNotify();
  }

  Result<size_t> ReadSome(char* buf, size_t n) override {
    while (true) {
      ASSIGN_OR_RETURN(TlsIo::Step step, io_.Read(buf, n));
      if (step.n > 0) return step.n;
      if (step.closed) return size_t{0};
      RETURN_IF_ERROR(Await(step.want, "recv from "));
    }
  }

  Result<bool> WaitReadable(int timeout_ms) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
      ASSIGN_OR_RETURN(bool ready, io_.ReadReady());
      if (ready) return true;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) return false;
      pollfd p{io_.fd(), POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(left));
      if (r == 0) return false;
      if (r < 0 && errno != EINTR) return ErrnoStatus(errno, "poll " + peer());
    }
  }

  void SetIoTimeout(uint32_t timeout_ms) override { timeout_ms_ = timeout_ms; }
  int PollFd() const override { return io_.fd(); }

  Status WriteAll(std::span<const std::string_view> ranges) override {
    return WriteGathered(ranges, stage_, [this](std::string_view d) { return Write(d); });
  }

  void Shutdown() override {
    shut_ = true;
    tcp_->Shutdown();
  }
  std::string peer() const override { return tcp_->peer(); }
  std::string peer_address() const override { return tcp_->peer_address(); }

 private:
  Status Await(TlsIo::Want want, const char* what) {
    int timeout = timeout_ms_ == 0 ? -1 : static_cast<int>(timeout_ms_);
    Status st = TlsIo::Wait(io_.fd(), want, timeout);
    if (st.code() == Code::kDeadlineExceeded) {
      return DeadlineExceeded(std::string(what) + peer() + ": no progress for " +
                              std::to_string(timeout_ms_) + " ms");
    }
    return st;
  }

  Status Write(std::string_view data) {
    while (!data.empty()) {
      ASSIGN_OR_RETURN(TlsIo::Step step, io_.Write(data.data(), data.size()));
      if (step.closed) return Aborted("TLS: " + peer() + " closed the connection");
      data.remove_prefix(step.n);
      if (step.n == 0) RETURN_IF_ERROR(Await(step.want, "send to "));
    }
    return Status::OK();
  }

  std::unique_ptr<Connection> tcp_;  // owns the socket; outlives io_
  TlsIo io_;
  uint32_t timeout_ms_ = 0;
  std::atomic<bool> shut_{false};  // Shutdown() comes from any thread
  std::string stage_;  // WriteGathered's
};

class TlsListener : public Listener {
 public:
  TlsListener(std::unique_ptr<Listener> inner, std::shared_ptr<TlsContext> ctx)
      : inner_(std::move(inner)), ctx_(std::move(ctx)) {}

  Result<std::unique_ptr<Connection>> Accept() override {
    while (true) {
      ASSIGN_OR_RETURN(std::unique_ptr<Connection> tcp, inner_->Accept());
      SSL* ssl = ctx_->NewSession(tcp->PollFd());
      if (ssl == nullptr) continue;  // OpenSSL out of memory: drop this one, keep listening
      return std::unique_ptr<Connection>(new TlsConnection(std::move(tcp), ssl));
    }
  }
  void Close() override { inner_->Close(); }
  uint16_t port() const override { return inner_->port(); }

 private:
  std::unique_ptr<Listener> inner_;
  std::shared_ptr<TlsContext> ctx_;
};

}  // namespace

std::unique_ptr<Listener> WrapTls(std::unique_ptr<Listener> inner, std::shared_ptr<TlsContext> ctx) {
  return std::make_unique<TlsListener>(std::move(inner), std::move(ctx));
}

Result<std::unique_ptr<Connection>> ConnectTls(const std::string& host, uint16_t port,
                                               const TlsClientContext& ctx,
                                               const std::string& server_name) {
  ASSIGN_OR_RETURN(std::unique_ptr<Connection> tcp, ConnectTcp(host, port));
  ASSIGN_OR_RETURN(SSL * ssl, ctx.NewSession(tcp->PollFd(), server_name.empty() ? host : server_name));
  return std::unique_ptr<Connection>(new TlsConnection(std::move(tcp), ssl));
}

}  // namespace strata::kvcache

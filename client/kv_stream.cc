// The KV client's byte streams (kv_stream.h): plain TCP and TLS.
#include "kv_stream.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>

#include "common/tls.h"

namespace strata::kv {

namespace {

KvStatus IoError(std::string m) { return KvStatus(KvCode::kIoError, std::move(m)); }

KvStatus Errno(const char* what) {
  int e = errno;
  if (e == EAGAIN || e == EWOULDBLOCK) return IoError(std::string(what) + ": timed out");
  return IoError(std::string(what) + ": " + std::strerror(e));
}

class Plain : public Stream {
 public:
  explicit Plain(int fd) : fd_(fd) {}
  ~Plain() override { Close(); }

  KvStatus RecvExact(void* buf, size_t n) override {
    char* p = static_cast<char*>(buf);
    while (n > 0) {
      ssize_t r = ::recv(fd_, p, n, MSG_WAITALL);
      if (r < 0) {
        if (errno == EINTR) continue;
        return Errno("recv");
      }
      if (r == 0) return IoError("connection closed by the server");
      p += r;
      n -= static_cast<size_t>(r);
    }
    return KvStatus::OK();
  }

  KvStatus RecvSome(void* buf, size_t n, size_t* got) override {
    while (true) {
      ssize_t r = ::recv(fd_, buf, n, 0);
      if (r < 0) {
        if (errno == EINTR) continue;
        return Errno("recv");
      }
      if (r == 0) return IoError("connection closed by the server");
      *got = static_cast<size_t>(r);
      return KvStatus::OK();
    }
  }

  KvStatus SendIov(std::vector<iovec>& iov) override {
    size_t first = 0;
    while (first < iov.size()) {
      msghdr msg{};
      msg.msg_iov = &iov[first];
      msg.msg_iovlen = std::min<size_t>(iov.size() - first, IOV_MAX);
      ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Errno("send");
      }
      size_t sent = static_cast<size_t>(n);
      while (first < iov.size() && sent >= iov[first].iov_len) {
        sent -= iov[first].iov_len;
        ++first;
      }
      if (sent) {
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + sent;
        iov[first].iov_len -= sent;
      }
    }
    return KvStatus::OK();
  }

  int Readable(int timeout_ms) override {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms);
  }

  void Shutdown() override { ::shutdown(fd_, SHUT_RDWR); }
  void Close() override {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// OpenSSL calls under mu_ (a session is not safe for a reader and a writer at
// once); waits for the socket outside it.
class Tls : public Stream {
 public:
  Tls(int fd, SSL* ssl, uint32_t timeout_ms)
      : fd_(fd), io_(ssl, fd), timeout_ms_(timeout_ms == 0 ? -1 : static_cast<int>(std::min<uint32_t>(timeout_ms, INT_MAX))) {}
  ~Tls() override { Close(); }

  KvStatus Handshake() {
    while (true) {
      Result<TlsIo::Step> step = [&] {
        std::lock_guard<std::mutex> lock(mu_);
        return io_.Handshake();
      }();
      if (!step.ok()) return IoError(step.status().message());
      if (step->closed) return IoError("TLS handshake: the server closed the connection");
      if (step->want == TlsIo::Want::kNothing) return KvStatus::OK();
      Status st = TlsIo::Wait(fd_, step->want, timeout_ms_);
      if (!st.ok()) return IoError("TLS handshake: " + st.message());
    }
  }

  KvStatus RecvExact(void* buf, size_t n) override {
    return Transfer(/*send=*/false, static_cast<char*>(buf), n);
  }

  KvStatus RecvSome(void* buf, size_t n, size_t* got) override {
    return Transfer(/*send=*/false, static_cast<char*>(buf), n, got);
  }

  KvStatus SendIov(std::vector<iovec>& iov) override {
    std::vector<std::string_view> ranges;
    ranges.reserve(iov.size());
    for (const iovec& v : iov) ranges.emplace_back(static_cast<const char*>(v.iov_base), v.iov_len);
    std::string stage;
    KvStatus s = WriteGathered(ranges, stage,
                               [this](std::string_view d) { return Write(d.data(), d.size()); });
    iov.clear();
    return s;
  }

  // Decrypted bytes, or bytes on the socket (perhaps only part of a record:
  // the receive then waits for the rest, as a plain one waits for a whole
  // frame). Never reads from the socket itself: a Readable that pulled a
  // record into the session while the reader was about to wait on the
  // socket would leave that reader waiting for bytes it already has.
  int Readable(int timeout_ms) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (io_.Pending() > 0) return 1;
    }
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms);
  }

  void Shutdown() override { ::shutdown(fd_, SHUT_RDWR); }
  void Close() override {
    if (fd_ < 0) return;
    ::close(fd_);
    fd_ = -1;
  }

 private:
  KvStatus Write(const char* p, size_t n) { return Transfer(/*send=*/true, const_cast<char*>(p), n); }

  // Moves exactly n bytes (send: from p, else into p), one OpenSSL call at a
  // time under mu_, waiting for the socket outside it. With `some`: returns
  // once at least one byte moved (their count in *some).
  KvStatus Transfer(bool send, char* p, size_t n, size_t* some = nullptr) {
    const char* what = send ? "send" : "recv";
    while (n > 0) {
      Result<TlsIo::Step> step = [&] {
        std::lock_guard<std::mutex> lock(mu_);
        return send ? io_.Write(p, n) : io_.Read(p, n);
      }();
      if (!step.ok()) return IoError(std::string(what) + ": " + step.status().message());
      if (step->closed) return IoError("connection closed by the server");
      p += step->n;
      n -= step->n;
      if (some != nullptr && step->n > 0) {
        *some = step->n;
        return KvStatus::OK();
      }
      if (step->n == 0) {
        Status st = TlsIo::Wait(fd_, step->want, timeout_ms_);
        if (st.code() == Code::kDeadlineExceeded) return IoError(std::string(what) + ": timed out");
        if (!st.ok()) return IoError(std::string(what) + ": " + st.message());
      }
    }
    return KvStatus::OK();
  }

  int fd_;
  std::mutex mu_;
  TlsIo io_;  // guarded by mu_
  const int timeout_ms_;
};

}  // namespace

std::unique_ptr<Stream> PlainStream(int fd, uint32_t /*timeout_ms: SO_RCVTIMEO from Dial*/) {
  return std::make_unique<Plain>(fd);
}

KvStatus TlsStream(int fd, uint32_t timeout_ms, const std::string& ca_file,
                   const std::string& server_name, std::unique_ptr<Stream>* out) {
  auto ctx = TlsClientContext::Create(ca_file);
  if (!ctx.ok()) {
    ::close(fd);
    return KvStatus(KvCode::kInvalid, "TLS: " + ctx.status().message());
  }
  auto ssl = (*ctx)->NewSession(fd, server_name);
  if (!ssl.ok()) {
    ::close(fd);
    return KvStatus(KvCode::kInvalid, "TLS: " + ssl.status().message());
  }
  auto tls = std::make_unique<Tls>(fd, *ssl, timeout_ms);
  KvStatus s = tls->Handshake();
  if (!s.ok()) return s;  // tls closes the socket
  *out = std::move(tls);
  return KvStatus::OK();
}

}  // namespace strata::kv

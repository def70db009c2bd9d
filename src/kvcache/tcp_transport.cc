// TCP transport: blocking POSIX sockets, TCP_NODELAY (requests are small and
// latency-bound), gathered writes with sendmsg (no SIGPIPE), I/O timeouts as
// SO_RCVTIMEO/SO_SNDTIMEO, the socket itself as the poll handle.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/net.h"
#include "kvcache/transport.h"

namespace strata::kvcache {

Status Connection::ReadFull(char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ASSIGN_OR_RETURN(size_t r, ReadSome(buf + got, n - got));
    if (r == 0) return Aborted("connection closed by peer");
    got += r;
  }
  return Status::OK();
}

Status Connection::SendFile(std::string_view head, int fd, uint64_t offset, uint64_t n) {
  constexpr size_t kChunk = 1 << 20;
  std::vector<char> buf(std::min<uint64_t>(n, kChunk));
  while (n > 0) {
    size_t want = std::min<uint64_t>(n, buf.size());
    ssize_t r = ::pread(fd, buf.data(), want, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ErrnoStatus(errno, "pread for a send");
    if (r == 0) return Corruption("file shorter than the bytes to send");
    std::string_view parts[2] = {head, std::string_view(buf.data(), static_cast<size_t>(r))};
    RETURN_IF_ERROR(WriteAll(parts));
    head = {};
    offset += static_cast<uint64_t>(r);
    n -= static_cast<uint64_t>(r);
  }
  if (!head.empty()) return WriteAll(head);
  return Status::OK();
}

namespace {

class TcpConnection : public Connection {
 public:
  TcpConnection(int fd, std::string address, uint16_t port)
      : fd_(fd), address_(std::move(address)), port_(port) {
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~TcpConnection() override { ::close(fd_); }

  Result<size_t> ReadSome(char* buf, size_t n) override {
    while (true) {
      ssize_t r = ::recv(fd_, buf, n, 0);
      if (r >= 0) return static_cast<size_t>(r);
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return DeadlineExceeded("recv from " + peer() + ": no data for " +
                                std::to_string(timeout_ms_) + " ms");
      }
      return ErrnoStatus(errno, "recv from " + peer());
    }
  }

  Result<bool> WaitReadable(int timeout_ms) override {
    pollfd p{fd_, POLLIN, 0};
    while (true) {
      int r = ::poll(&p, 1, timeout_ms);
      if (r >= 0) return r > 0;  // POLLIN, POLLHUP or POLLERR: a read will not block
      if (errno != EINTR) return ErrnoStatus(errno, "poll " + peer());
    }
  }

  void SetIoTimeout(uint32_t timeout_ms) override {
    if (timeout_ms == timeout_ms_) return;
    timeval tv{static_cast<time_t>(timeout_ms / 1000),
               static_cast<suseconds_t>((timeout_ms % 1000) * 1000)};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    timeout_ms_ = timeout_ms;
  }

  int PollFd() const override { return fd_; }

  Status WriteAll(std::span<const std::string_view> ranges) override {
    constexpr size_t kMaxIov = 64;
    std::vector<iovec> iov;
    iov.reserve(std::min(ranges.size(), kMaxIov));
    size_t i = 0;     // next range
    size_t skip = 0;  // bytes of ranges[i] already sent
    while (i < ranges.size()) {
      iov.clear();
      for (size_t j = i; j < ranges.size() && iov.size() < kMaxIov; ++j) {
        size_t off = j == i ? skip : 0;
        if (ranges[j].size() == off) continue;
        iov.push_back({const_cast<char*>(ranges[j].data()) + off, ranges[j].size() - off});
      }
      if (iov.empty()) break;
      msghdr msg{};
      msg.msg_iov = iov.data();
      msg.msg_iovlen = iov.size();
      ssize_t w = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          return DeadlineExceeded("send to " + peer() + ": peer not reading for " +
                                  std::to_string(timeout_ms_) + " ms");
        }
        return ErrnoStatus(errno, "send to " + peer());
      }
      size_t left = static_cast<size_t>(w);
      while (i < ranges.size() && left >= ranges[i].size() - skip) {
        left -= ranges[i].size() - skip;
        skip = 0;
        ++i;
      }
      skip += left;
    }
    return Status::OK();
  }

  // The head with MSG_MORE (it leaves with the first file bytes), then
  // sendfile: page cache -> socket, no copy through user space.
  Status SendFile(std::string_view head, int fd, uint64_t offset, uint64_t n) override {
    while (!head.empty()) {
      ssize_t w = ::send(fd_, head.data(), head.size(), MSG_NOSIGNAL | (n > 0 ? MSG_MORE : 0));
      if (w < 0) {
        if (errno == EINTR) continue;
        return SendError("send to ");
      }
      head.remove_prefix(static_cast<size_t>(w));
    }
    off_t off = static_cast<off_t>(offset);
    while (n > 0) {
      ssize_t w = ::sendfile(fd_, fd, &off, std::min<uint64_t>(n, size_t{1} << 30));
      if (w < 0) {
        if (errno == EINTR) continue;
        return SendError("sendfile to ");
      }
      if (w == 0) return Corruption("file shorter than the bytes to send to " + peer());
      n -= static_cast<uint64_t>(w);
    }
    return Status::OK();
  }

  void Shutdown() override {
    if (!shut_.exchange(true)) ::shutdown(fd_, SHUT_RDWR);
  }
  std::string peer() const override {
    bool v6 = address_.find(':') != std::string::npos;
    return (v6 ? "[" + address_ + "]" : address_) + ":" + std::to_string(port_);
  }
  std::string peer_address() const override { return address_; }

 private:
  Status SendError(const char* what) const {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return DeadlineExceeded(what + peer() + ": peer not reading for " +
                              std::to_string(timeout_ms_) + " ms");
    }
    return ErrnoStatus(errno, what + peer());
  }

  int fd_;
  std::string address_;
  uint16_t port_;
  uint32_t timeout_ms_ = 0;  // set by the one thread serving the connection
  std::atomic<bool> shut_{false};
};

// The numeric address of sa; its port in *port.
std::string AddressText(const sockaddr* sa, uint16_t* port) {
  char host[INET6_ADDRSTRLEN] = "?";
  *port = 0;
  if (sa->sa_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    *port = ntohs(in->sin_port);
  } else if (sa->sa_family == AF_INET6) {
    auto* in = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof(host));
    *port = ntohs(in->sin6_port);
  }
  return host;
}

std::unique_ptr<Connection> MakeConnection(int fd, const sockaddr* peer) {
  uint16_t port;
  std::string address = AddressText(peer, &port);
  return std::make_unique<TcpConnection>(fd, std::move(address), port);
}

class TcpListener : public Listener {
 public:
  TcpListener(int fd, uint16_t port) : fd_(fd), port_(port) {}
  ~TcpListener() override {
    Close();
    ::close(fd_);
  }

  Result<std::unique_ptr<Connection>> Accept() override {
    while (true) {
      sockaddr_storage addr{};
      socklen_t len = sizeof(addr);
      int c = ::accept4(fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
      if (closed_.load()) {
        if (c >= 0) ::close(c);
        return Aborted("listener closed");
      }
      if (c >= 0) return MakeConnection(c, reinterpret_cast<sockaddr*>(&addr));
      // Transient accept errors (peer reset before accept, fd exhaustion) must
      // not stop the listener.
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        ::usleep(10000);
        continue;
      }
      return ErrnoStatus(errno, "accept");
    }
  }

  void Close() override {
    if (!closed_.exchange(true)) ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
  }
  uint16_t port() const override { return port_; }

 private:
  int fd_;
  uint16_t port_;
  std::atomic<bool> closed_{false};
};

Result<addrinfo*> Resolve(const std::string& host, uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  std::string port_text = std::to_string(port);
  const char* node = host.empty() ? nullptr : host.c_str();
  int rc = ::getaddrinfo(node, port_text.c_str(), &hints, &res);
  if (rc != 0) return InvalidArgument("cannot resolve " + host + ": " + gai_strerror(rc));
  return res;
}

}  // namespace

Result<std::unique_ptr<Listener>> ListenTcp(const std::string& host, uint16_t port) {
  ASSIGN_OR_RETURN(addrinfo * res, Resolve(host, port, /*passive=*/true));
  Status last = Unavailable("no address for " + host);
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last = ErrnoStatus(errno, "socket");
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 4096) != 0) {
      last = ErrnoStatus(errno, "listen on " + host + ":" + std::to_string(port));
      ::close(fd);
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    uint16_t actual = bound.ss_family == AF_INET6
                          ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                          : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    ::freeaddrinfo(res);
    return std::unique_ptr<Listener>(new TcpListener(fd, actual));
  }
  ::freeaddrinfo(res);
  return last;
}

Result<std::unique_ptr<Connection>> ConnectTcp(const std::string& host, uint16_t port,
                                               const std::string& from_host) {
  ASSIGN_OR_RETURN(int fd, Dial(host, port, /*timeout_ms=*/0, from_host));
  sockaddr_storage peer{};
  socklen_t len = sizeof(peer);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) {
    Status st = ErrnoStatus(errno, "getpeername after connecting to " + host);
    ::close(fd);
    return st;
  }
  return MakeConnection(fd, reinterpret_cast<sockaddr*>(&peer));
}

}  // namespace strata::kvcache

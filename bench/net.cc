#include "net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "common/encoding.h"
#include "common/net.h"

namespace strata::bench {
namespace {

// A request that makes no progress for this long means the server is stuck;
// fail the case instead of hanging CI forever.
constexpr int kIoTimeoutSeconds = 120;
constexpr size_t kHeadBufferBytes = 64 * 1024;
constexpr size_t kBulkReadBytes = 1 << 20;

[[noreturn]] void ThrowErrno(const std::string& what) {
  throw BenchError(what + ": " + std::strerror(errno));
}

void SetTimeouts(int fd) {
  timeval tv{kIoTimeoutSeconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

sockaddr_in Ipv4Address(const std::string& host, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  std::string numeric = host == "localhost" ? "127.0.0.1" : host;
  if (inet_pton(AF_INET, numeric.c_str(), &addr.sin_addr) != 1) {
    throw BenchError("not a numeric IPv4 address: " + host);
  }
  return addr;
}

bool ParseUint(std::string_view s, uint64_t* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// Fills `head` from the text between the start of a message and its blank line.
void ParseHead(std::string_view text, MessageHead* head) {
  *head = MessageHead{};
  size_t eol = text.find("\r\n");
  head->start_line = std::string(text.substr(0, eol));
  while (eol != std::string_view::npos) {
    size_t start = eol + 2;
    eol = text.find("\r\n", start);
    std::string_view line =
        text.substr(start, eol == std::string_view::npos ? text.npos : eol - start);
    if (line.empty()) continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      throw BenchError("malformed header line: " + std::string(line));
    head->headers.emplace_back(AsciiLower(line.substr(0, colon)),
                               std::string(TrimBlanks(line.substr(colon + 1))));
  }
  if (const std::string* len = head->Header("content-length")) {
    uint64_t n = 0;
    if (!ParseUint(*len, &n)) throw BenchError("bad Content-Length: " + *len);
    head->content_length = n;
  }
  if (const std::string* te = head->Header("transfer-encoding")) {
    throw BenchError("unsupported Transfer-Encoding: " + *te);
  }
  if (const std::string* conn = head->Header("connection")) {
    head->connection_close = AsciiLower(*conn) == "close";
  }
}

}  // namespace

// ---- Socket -------------------------------------------------------------------

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void Socket::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Socket::ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }

Socket Socket::Connect(const std::string& host, int port) {
  auto fd = Dial(host, static_cast<uint16_t>(port), kIoTimeoutSeconds * 1000);
  if (!fd.ok()) throw BenchError(fd.status().message());
  return Socket(*fd);
}

Socket Socket::ListenLoopback(int port) {
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) ThrowErrno("socket");
  int one = 1;
  setsockopt(s.fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr = Ipv4Address("127.0.0.1", port);
  if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ThrowErrno("bind");
  if (::listen(s.fd_, 256) != 0) ThrowErrno("listen");
  return s;
}

Socket Socket::Accept() {
  int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) ThrowErrno("accept");
  SetNoDelay(fd);
  SetTimeouts(fd);
  return Socket(fd);
}

int Socket::LocalPort() const {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) ThrowErrno("getsockname");
  return ntohs(addr.sin_port);
}

void Socket::WriteAll(const void* data, size_t n) {
  WriteAll2(std::string_view(static_cast<const char*>(data), n), {});
}

void Socket::WriteAll2(std::string_view a, std::string_view b) {
  iovec iov[2] = {{const_cast<char*>(a.data()), a.size()}, {const_cast<char*>(b.data()), b.size()}};
  int first = 0;
  while (first < 2) {
    if (iov[first].iov_len == 0) {
      ++first;
      continue;
    }
    msghdr msg{};
    msg.msg_iov = iov + first;
    msg.msg_iovlen = 2 - first;
    ssize_t sent = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      ThrowErrno("send");
    }
    // Advance over what was sent, possibly across both buffers.
    for (size_t left = static_cast<size_t>(sent); left > 0 && first < 2;) {
      size_t step = std::min(left, iov[first].iov_len);
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + step;
      iov[first].iov_len -= step;
      left -= step;
      if (iov[first].iov_len == 0) ++first;
    }
  }
}

size_t Socket::ReadSome(void* buf, size_t n) {
  for (;;) {
    ssize_t got = ::recv(fd_, buf, n, 0);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) ThrowErrno("recv");
  }
}

// ---- MessageHead ----------------------------------------------------------------

const std::string* MessageHead::Header(std::string_view lowercase_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lowercase_name) return &value;
  }
  return nullptr;
}

int MessageHead::StatusCode() const {
  // "HTTP/1.1 200 OK"
  size_t sp = start_line.find(' ');
  uint64_t code = 0;
  if (sp == std::string::npos ||
      !ParseUint(std::string_view(start_line).substr(sp + 1, 3), &code)) {
    return 0;
  }
  return static_cast<int>(code);
}

// ---- MessageReader --------------------------------------------------------------

MessageReader::MessageReader(Socket* socket) : socket_(socket), buf_(kHeadBufferBytes) {}

size_t MessageReader::Fill() {
  if (begin_ == end_) begin_ = end_ = 0;
  if (end_ == buf_.size() && begin_ > 0) {  // make room by moving unread bytes down
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buf_.size()) throw BenchError("HTTP head larger than 64 KiB");
  size_t got = socket_->ReadSome(buf_.data() + end_, buf_.size() - end_);
  end_ += got;
  return got;
}

bool MessageReader::ReadHead(MessageHead* head) {
  for (;;) {
    // Heads are small, so rescanning from the start after each read is fine.
    std::string_view pending(buf_.data() + begin_, end_ - begin_);
    size_t blank = pending.find("\r\n\r\n");
    if (blank != std::string_view::npos) {
      ParseHead(pending.substr(0, blank), head);
      begin_ += blank + 4;
      return true;
    }
    bool had_bytes = !pending.empty();
    if (Fill() == 0) {
      if (!had_bytes) return false;
      throw BenchError("connection closed in the middle of an HTTP head");
    }
  }
}

void MessageReader::ReadBody(uint64_t n, const BodySink* sink) {
  // First whatever was read ahead together with the head.
  size_t buffered = static_cast<size_t>(std::min<uint64_t>(n, end_ - begin_));
  if (buffered > 0) {
    if (sink) (*sink)(buf_.data() + begin_, buffered);
    begin_ += buffered;
    n -= buffered;
  }
  if (n == 0) return;
  // The rest straight from the socket, in up to 1 MiB reads. Never read past
  // this body: the next response must stay in the socket for ReadHead.
  if (bulk_.empty()) bulk_.resize(kBulkReadBytes);
  while (n > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(n, bulk_.size()));
    size_t got = socket_->ReadSome(bulk_.data(), want);
    if (got == 0) throw BenchError("connection closed in the middle of a body");
    if (sink) (*sink)(bulk_.data(), got);
    n -= got;
  }
}

std::pair<std::string, int> ParseEndpoint(const std::string& url) {
  std::string_view rest(url);
  if (rest.starts_with("http://"))
    rest.remove_prefix(7);
  else if (rest.find("://") != std::string_view::npos)
    throw BenchError("only http:// endpoints: " + url);
  while (rest.ends_with("/")) rest.remove_suffix(1);
  size_t colon = rest.rfind(':');
  uint64_t port = 80;
  if (colon != std::string_view::npos && !ParseUint(rest.substr(colon + 1), &port)) {
    throw BenchError("bad port in endpoint " + url);
  }
  return {std::string(rest.substr(0, colon)), static_cast<int>(port)};
}

}  // namespace strata::bench

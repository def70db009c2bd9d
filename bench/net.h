// Plain blocking TCP sockets and a minimal HTTP/1.1 message reader, shared by
// the S3 load generator and by the loopback "limit" measurements, so that the
// limits are measured with exactly the same socket code as the S3 traffic.
//
// Deliberately simple: one thread per connection, blocking send/recv,
// TCP_NODELAY, keep-alive, Content-Length framing only (strata never sends
// chunked responses). Every failure throws BenchError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::bench {

// Any failure that makes a benchmark result invalid: network error, wrong
// status code, data mismatch. Caught per case and turned into a non-zero exit.
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An owned, connected (or listening) TCP socket.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { Close(); }

  // Connects to host:port (common/net.h Dial), with TCP_NODELAY and I/O timeouts.
  static Socket Connect(const std::string& host, int port);
  // Listens on 127.0.0.1 at `port` (0 = any free port); see LocalPort().
  static Socket ListenLoopback(int port = 0);

  Socket Accept();
  int LocalPort() const;
  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void Close();
  void ShutdownWrite();

  void WriteAll(const void* data, size_t n);
  // Header and body in one syscall: with TCP_NODELAY two writes would put a
  // small request into two segments (and two wake-ups on the server).
  void WriteAll2(std::string_view a, std::string_view b);
  // Up to n bytes; 0 at end of stream.
  size_t ReadSome(void* buf, size_t n);

 private:
  int fd_ = -1;
};

// Receives body bytes as they arrive (so 1 GiB bodies are never buffered).
using BodySink = std::function<void(const char* data, size_t n)>;

// Start line + headers of a request or a response.
struct MessageHead {
  std::string start_line;  // "HTTP/1.1 200 OK" or "PUT /echo HTTP/1.1"
  std::vector<std::pair<std::string, std::string>> headers;  // names lowercased
  std::optional<uint64_t> content_length;
  bool connection_close = false;

  const std::string* Header(std::string_view lowercase_name) const;
  // Status code of a response start line (0 if it does not parse).
  int StatusCode() const;
};

// Buffered reader of HTTP/1.1 messages from one socket.
class MessageReader {
 public:
  explicit MessageReader(Socket* socket);
  // Reads the next head. Returns false on a clean end of stream before any
  // byte of a new message (the peer closed a keep-alive connection).
  bool ReadHead(MessageHead* head);
  // Reads exactly n body bytes, handing them to sink (nullptr: discard).
  void ReadBody(uint64_t n, const BodySink* sink);
  // Forgets buffered bytes (after reconnecting).
  void Reset() { begin_ = end_ = 0; }

 private:
  size_t Fill();  // reads more into buf_; returns bytes read (0 = EOF)

  Socket* socket_;
  std::vector<char> buf_;       // head buffer; also holds body bytes read ahead
  size_t begin_ = 0, end_ = 0;  // unread bytes are buf_[begin_, end_)
  std::vector<char> bulk_;      // large body reads go straight here
};

// Parses "http://HOST:PORT" (HOST: a name or a numeric address).
std::pair<std::string, int> ParseEndpoint(const std::string& url);

}  // namespace strata::bench

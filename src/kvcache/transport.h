// The byte transport under the KV protocol. TCP today (tcp_transport.cc); an
// RDMA transport (libfabric) implements the same two interfaces, so neither
// the framing (proto/) nor the server's request handling changes with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace strata {
class TlsContext;
class TlsClientContext;
}

namespace strata::kvcache {

class Connection {
 public:
  virtual ~Connection() = default;
  // Reads up to n bytes into buf; 0 at end of stream. Waits at most the I/O
  // timeout (SetIoTimeout) for the first byte: DeadlineExceeded after it.
  virtual Result<size_t> ReadSome(char* buf, size_t n) = 0;
  // Writes every range, in order (gathered: one system call when it can);
  // DeadlineExceeded when no byte could be sent for the I/O timeout.
  virtual Status WriteAll(std::span<const std::string_view> ranges) = 0;
  // Unblocks pending and future reads/writes (from any thread); idempotent.
  virtual void Shutdown() = 0;
  // "address:port" for logs.
  virtual std::string peer() const = 0;
  // The peer's address alone (per-address connection caps and AUTH back-off).
  virtual std::string peer_address() const = 0;

  // True when ReadSome would not block (bytes, end of stream or an error are
  // pending); false after timeout_ms (0: no wait).
  virtual Result<bool> WaitReadable(int timeout_ms) = 0;
  // Bounds every later ReadSome/WriteAll wait; 0: wait forever (the default).
  virtual void SetIoTimeout(uint32_t timeout_ms) = 0;
  // Optional: a file descriptor that polls readable (level-triggered) when
  // WaitReadable would return true, so a server can park idle connections in
  // epoll/poll instead of a thread each; -1 when the transport has none. The
  // KV server needs one (a libfabric transport gets it from fi_control
  // FI_GETWAIT on its completion queue) and refuses connections without.
  virtual int PollFd() const { return -1; }

  // Sends `head`, then n bytes of the file `fd` from `offset` (sendfile where
  // the transport can; this default reads and writes through a buffer).
  virtual Status SendFile(std::string_view head, int fd, uint64_t offset, uint64_t n);

  // Reads exactly n bytes; Aborted if the stream ends first.
  Status ReadFull(char* buf, size_t n);
  Status WriteAll(std::string_view data) { return WriteAll(std::span(&data, 1)); }
};

class Listener {
 public:
  virtual ~Listener() = default;
  // Blocks until a peer connects; Aborted once Close() was called.
  virtual Result<std::unique_ptr<Connection>> Accept() = 0;
  // Unblocks Accept (from any thread); idempotent.
  virtual void Close() = 0;
  virtual uint16_t port() const = 0;
};

// host "" or "0.0.0.0" = any IPv4 address; port 0 = an ephemeral port.
Result<std::unique_ptr<Listener>> ListenTcp(const std::string& host, uint16_t port);
// Every connection `inner` accepts speaks TLS with ctx's certificate. Accept
// never waits on a peer: the handshake runs inside the connection's first
// reads (WaitReadable(0) drives it without blocking).
std::unique_ptr<Listener> WrapTls(std::unique_ptr<Listener> inner, std::shared_ptr<TlsContext> ctx);

// The client side (tests, tools): TLS over ConnectTcp, the server checked
// against ctx's CA and server_name ("" = host); the handshake runs in the
// first read or write.
Result<std::unique_ptr<Connection>> ConnectTls(const std::string& host, uint16_t port,
                                               const TlsClientContext& ctx,
                                               const std::string& server_name = "");

// from_host (optional): the local address to connect from (bound before connecting).
Result<std::unique_ptr<Connection>> ConnectTcp(const std::string& host, uint16_t port,
                                               const std::string& from_host = "");

}  // namespace strata::kvcache

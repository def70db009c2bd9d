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

namespace strata::kvcache {

class Connection {
 public:
  virtual ~Connection() = default;
  // Reads up to n bytes into buf; 0 at end of stream.
  virtual Result<size_t> ReadSome(char* buf, size_t n) = 0;
  // Writes every range, in order (gathered: one system call when it can).
  virtual Status WriteAll(std::span<const std::string_view> ranges) = 0;
  // Unblocks pending and future reads/writes (from any thread); idempotent.
  virtual void Shutdown() = 0;
  virtual std::string peer() const = 0;

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
Result<std::unique_ptr<Connection>> ConnectTcp(const std::string& host, uint16_t port);

}  // namespace strata::kvcache

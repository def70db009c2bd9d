// The byte stream under KvClient::Impl (internal to client/): a TCP socket,
// or TLS over it (ConnectOptions::tls). The connection sends from one thread
// at a time (its send lock) and receives from one thread at a time (its
// reader role), the two at once: the TLS stream serializes its OpenSSL calls
// itself and waits for the socket outside that lock, so a blocked reader
// never holds up a sender.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "strata/kv_client.h"

namespace strata::kv {

class Stream {
 public:
  virtual ~Stream() = default;
  // Exactly n bytes; kIoError on the end of the stream, an error or the
  // timeout (set at connect).
  virtual KvStatus RecvExact(void* buf, size_t n) = 0;
  // At least one byte and at most n (*got); kIoError as RecvExact.
  virtual KvStatus RecvSome(void* buf, size_t n, size_t* got) = 0;
  // Every byte of the ranges, in order (the vector is consumed).
  virtual KvStatus SendIov(std::vector<iovec>& iov) = 0;
  // > 0: a receive would not wait; 0: nothing within timeout_ms; < 0: a poll
  // error (errno set).
  virtual int Readable(int timeout_ms) = 0;
  // Ends both directions (any thread): blocked calls return.
  virtual void Shutdown() = 0;
  // Closes the socket once nobody sends or receives (idempotent; the
  // destructor does it too).
  virtual void Close() = 0;
};

// Takes the connected socket `fd` (closes it when destroyed). timeout_ms
// bounds each wait for the peer; 0: none.
std::unique_ptr<Stream> PlainStream(int fd, uint32_t timeout_ms);
// TLS 1.2+ over `fd`: the handshake runs here, the server's certificate is
// verified against `ca_file` (PEM; "" = the system's trust store) and
// `server_name` (DNS name or IP address). On failure the socket is closed.
KvStatus TlsStream(int fd, uint32_t timeout_ms, const std::string& ca_file,
                   const std::string& server_name, std::unique_ptr<Stream>* out);

}  // namespace strata::kv

// A blocking stream over a connected socket fd where every read or write
// waits at most timeout_ms for progress (poll), and never past an optional
// deadline, so a stalled client cannot pin a worker thread forever. In
// non-blocking mode a read with no bytes ready fails at once with
// would_block (the caller parks the connection). Models Beast's SyncReadStream.
// With an SSL session (common/tls.h) the bytes go through it: the same
// timeouts apply to the handshake and to every record.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/system/error_code.hpp>
#include <cerrno>
#include <chrono>
#include <optional>

typedef struct ssl_st SSL;

namespace strata::http {

class TimedStream {
 public:
  TimedStream(int fd, int timeout_ms, SSL* ssl = nullptr)
      : fd_(fd), timeout_ms_(timeout_ms), ssl_(ssl) {}

  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers, boost::system::error_code& ec) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      boost::asio::mutable_buffer b = *it;
      if (b.size() > 0) return Recv(b.data(), b.size(), ec);
    }
    ec = {};
    return 0;
  }

  template <class MutableBufferSequence>
  size_t read_some(const MutableBufferSequence& buffers) {
    boost::system::error_code ec;
    size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  // Sends every byte of the iovecs; false with ec set on error/timeout.
  // `more`: more bytes follow at once (MSG_MORE: a response head waits for them).
  bool SendAll(iovec* iov, int count, boost::system::error_code& ec, bool more = false);
  // Sends n bytes of file `in_fd` from `offset` (sendfile: page cache to
  // socket, no copy through user space), with the same timeouts. Plain TCP
  // only (tls() is false); false with ec set on error/timeout.
  bool SendFile(int in_fd, uint64_t offset, uint64_t n, boost::system::error_code& ec);
  bool tls() const { return ssl_ != nullptr; }

  using Clock = std::chrono::steady_clock;
  void SetDeadline(std::optional<Clock::time_point> deadline) { deadline_ = deadline; }
  void SetNonBlocking(bool on) { nonblocking_ = on; }

 private:
  size_t Recv(void* data, size_t size, boost::system::error_code& ec);
  size_t RecvTls(void* data, size_t size, boost::system::error_code& ec);
  bool SendAllTls(iovec* iov, int count, boost::system::error_code& ec);
  // SendFile's fallback where sendfile cannot read the file: pread + send.
  bool CopyFile(int in_fd, uint64_t offset, uint64_t n, boost::system::error_code& ec);
  bool Wait(short events, boost::system::error_code& ec);
  // After an SSL call failed with `ret`: waits for what it wants (true), or
  // sets ec (eof, would_block, timed_out, the error).
  bool WaitForTls(int ret, boost::system::error_code& ec);

  int fd_;
  int timeout_ms_;
  SSL* ssl_;
  std::optional<Clock::time_point> deadline_;
  bool nonblocking_ = false;
};

}  // namespace strata::http

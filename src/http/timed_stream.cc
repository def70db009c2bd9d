#include "http/timed_stream.h"

#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "common/thread_wait.h"

namespace strata::http {

bool TimedStream::Wait(short events, boost::system::error_code& ec) {
  if (nonblocking_ && events == POLLIN) {
    ec = boost::asio::error::would_block;
    return false;
  }
  pollfd p{fd_, events, 0};
  // On the peer: a worker pool may run another thread meanwhile. (A stream
  // with no timeout waits for nothing: it fails below at once.)
  std::optional<ScopedWait> waiting;
  if (timeout_ms_ != 0) waiting.emplace();
  while (true) {
    int timeout = timeout_ms_;
    if (deadline_) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline_ - Clock::now()).count();
      if (left <= 0) {
        ec = boost::asio::error::timed_out;
        return false;
      }
      if (left < timeout) timeout = static_cast<int>(left);
    }
    int r = ::poll(&p, 1, timeout);
    if (r > 0) return true;
    if (r == 0) {
      ec = boost::asio::error::timed_out;
      return false;
    }
    if (errno != EINTR) {
      ec = boost::system::error_code(errno, boost::system::system_category());
      return false;
    }
  }
}

bool TimedStream::WaitForTls(int ret, boost::system::error_code& ec) {
  switch (SSL_get_error(ssl_, ret)) {
    case SSL_ERROR_WANT_READ: return Wait(POLLIN, ec);
    case SSL_ERROR_WANT_WRITE: return Wait(POLLOUT, ec);
    case SSL_ERROR_ZERO_RETURN: ec = boost::asio::error::eof; return false;
    case SSL_ERROR_SYSCALL:
      ec = errno != 0 ? boost::system::error_code(errno, boost::system::system_category())
                      : boost::system::error_code(boost::asio::error::eof);
      ERR_clear_error();
      return false;
    default:  // a failed handshake (an old protocol, no shared cipher), a bad record
      ec = boost::asio::error::connection_aborted;
      ERR_clear_error();
      return false;
  }
}

size_t TimedStream::RecvTls(void* data, size_t size, boost::system::error_code& ec) {
  while (true) {
    size_t n = 0;
    errno = 0;
    // SSL_get_error reads this thread's error queue: whatever an earlier call
    // on the thread left there would turn a wait into a failure.
    ERR_clear_error();
    int ret = SSL_read_ex(ssl_, data, size, &n);
    if (ret == 1) {
      ec = {};
      return n;
    }
    if (!WaitForTls(ret, ec)) return 0;
  }
}

bool TimedStream::SendAllTls(iovec* iov, int count, boost::system::error_code& ec) {
  for (int i = 0; i < count; ++i) {
    const char* p = static_cast<const char*>(iov[i].iov_base);
    size_t left = iov[i].iov_len;
    while (left > 0) {
      size_t n = 0;
      errno = 0;
      ERR_clear_error();  // as in RecvTls
      int ret = SSL_write_ex(ssl_, p, left, &n);
      if (ret == 1) {
        p += n;
        left -= n;
        continue;
      }
      if (!WaitForTls(ret, ec)) return false;
    }
  }
  ec = {};
  return true;
}

size_t TimedStream::Recv(void* data, size_t size, boost::system::error_code& ec) {
  if (ssl_) return RecvTls(data, size, ec);
  while (true) {
    ssize_t n = ::recv(fd_, data, size, MSG_DONTWAIT);
    if (n > 0) {
      ec = {};
      return static_cast<size_t>(n);
    }
    if (n == 0) {
      ec = boost::asio::error::eof;
      return 0;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec = boost::system::error_code(errno, boost::system::system_category());
      return 0;
    }
    if (!Wait(POLLIN, ec)) return 0;
  }
}

bool TimedStream::SendAll(iovec* iov, int count, boost::system::error_code& ec, bool more) {
  if (ssl_) return SendAllTls(iov, count, ec);
  while (count > 0) {
    if (iov->iov_len == 0) {
      ++iov;
      --count;
      continue;
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = count;
    ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT | (more ? MSG_MORE : 0));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        ec = boost::system::error_code(errno, boost::system::system_category());
        return false;
      }
      if (!Wait(POLLOUT, ec)) return false;
      continue;
    }
    size_t left = static_cast<size_t>(n);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  ec = {};
  return true;
}

bool TimedStream::SendFile(int in_fd, uint64_t offset, uint64_t n, boost::system::error_code& ec) {
  if (ssl_) {
    ec = boost::asio::error::operation_not_supported;
    return false;
  }
  off_t off = static_cast<off_t>(offset);
  while (n > 0) {
    // The socket is non-blocking (the server sets O_NONBLOCK on every
    // connection): a full send buffer answers EAGAIN and the wait below
    // applies the timeouts.
    ssize_t w = ::sendfile(fd_, in_fd, &off, static_cast<size_t>(std::min<uint64_t>(n, 1u << 30)));
    if (w > 0) {
      n -= static_cast<uint64_t>(w);
      continue;
    }
    if (w == 0) {  // the file ended before n bytes
      ec = boost::asio::error::eof;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) {
      return CopyFile(in_fd, static_cast<uint64_t>(off), n, ec);  // a file sendfile cannot read
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      ec = boost::system::error_code(errno, boost::system::system_category());
      return false;
    }
    if (!Wait(POLLOUT, ec)) return false;
  }
  ec = {};
  return true;
}

bool TimedStream::CopyFile(int in_fd, uint64_t offset, uint64_t n, boost::system::error_code& ec) {
  char buf[64 * 1024];
  while (n > 0) {
    ssize_t r = ::pread(in_fd, buf, static_cast<size_t>(std::min<uint64_t>(n, sizeof(buf))),
                        static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ec = r == 0 ? boost::system::error_code(boost::asio::error::eof)
                  : boost::system::error_code(errno, boost::system::system_category());
      return false;
    }
    iovec iov{buf, static_cast<size_t>(r)};
    if (!SendAll(&iov, 1, ec)) return false;
    offset += static_cast<uint64_t>(r);
    n -= static_cast<uint64_t>(r);
  }
  ec = {};
  return true;
}

}  // namespace strata::http

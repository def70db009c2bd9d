#include "common/net.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

namespace strata {

namespace {

using AddrList = std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)>;

Result<AddrList> Resolve(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port_text = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints, &res);
  if (rc != 0) return InvalidArgument("cannot resolve " + host + ": " + ::gai_strerror(rc));
  return AddrList(res, &::freeaddrinfo);
}

Status ConnectError(int err, const std::string& what) {
  switch (err) {
    case ETIMEDOUT:
      return DeadlineExceeded(what + ": timed out");
    case ECONNREFUSED:
    case ENETUNREACH:
    case EHOSTUNREACH:
      return Unavailable(ErrnoStatus(err, what).message());
    default:
      return ErrnoStatus(err, what);
  }
}

// Binds fd to an address of `from_host` in the family of `to`.
Status BindLocal(int fd, const std::string& from_host, const addrinfo& to) {
  ASSIGN_OR_RETURN(AddrList local, Resolve(from_host, 0));
  for (addrinfo* l = local.get(); l != nullptr; l = l->ai_next) {
    if (l->ai_family == to.ai_family && ::bind(fd, l->ai_addr, l->ai_addrlen) == 0) {
      return Status::OK();
    }
  }
  return ErrnoStatus(errno, "bind to " + from_host);
}

// Connects the non-blocking fd, waiting at most timeout_ms (0: no bound of ours).
int ConnectWithin(int fd, const addrinfo& to, int timeout_ms) {
  if (::connect(fd, to.ai_addr, to.ai_addrlen) == 0) return 0;
  if (errno != EINPROGRESS && errno != EINTR) return errno;
  pollfd p{fd, POLLOUT, 0};
  int r;
  do {
    r = ::poll(&p, 1, timeout_ms > 0 ? timeout_ms : -1);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return ETIMEDOUT;
  if (r < 0) return errno;
  int so_error = 0;
  socklen_t len = sizeof(so_error);
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0) return errno;
  return so_error;
}

}  // namespace

Result<int> Dial(const std::string& host, uint16_t port, int timeout_ms,
                 const std::string& from_host) {
  const std::string target = host + ":" + std::to_string(port);
  ASSIGN_OR_RETURN(AddrList addrs, Resolve(host, port));
  Status last = Unavailable("no address for " + host);
  for (addrinfo* a = addrs.get(); a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last = ErrnoStatus(errno, "socket");
      continue;
    }
    if (!from_host.empty()) {
      if (Status st = BindLocal(fd, from_host, *a); !st.ok()) {
        last = st;
        ::close(fd);
        continue;
      }
    }
    if (int err = ConnectWithin(fd, *a, timeout_ms); err != 0) {
      last = ConnectError(err, "connect to " + target);
      ::close(fd);
      continue;
    }
    // Blocking from here on, bounded per call by the same timeout.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (timeout_ms > 0) {
      timeval tv{static_cast<time_t>(timeout_ms / 1000),
                 static_cast<suseconds_t>((timeout_ms % 1000) * 1000)};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    }
    return fd;
  }
  return last;
}

}  // namespace strata

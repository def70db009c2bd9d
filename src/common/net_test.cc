#include "common/net.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace strata {
namespace {

// A listening socket on 127.0.0.1 at a free port.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof(a);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~Listener() { Close(); }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  uint16_t port() const { return port_; }
  // The peer address of the next connection.
  std::string AcceptPeer() {
    sockaddr_in peer{};
    socklen_t len = sizeof(peer);
    int c = ::accept(fd_, reinterpret_cast<sockaddr*>(&peer), &len);
    EXPECT_GE(c, 0);
    if (c >= 0) ::close(c);
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &peer.sin_addr, text, sizeof(text));
    return text;
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

TEST(Dial, ConnectsWithNoDelayAndTimeouts) {
  Listener l;
  for (const char* host : {"127.0.0.1", "localhost"}) {
    auto fd = Dial(host, l.port(), 1500);
    ASSERT_TRUE(fd.ok()) << host << ": " << fd.status().ToString();
    int nodelay = 0;
    socklen_t len = sizeof(nodelay);
    ::getsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len);
    EXPECT_NE(nodelay, 0);
    timeval tv{};
    len = sizeof(tv);
    ::getsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len);
    EXPECT_EQ(tv.tv_sec * 1000 + tv.tv_usec / 1000, 1500);
    ::getsockopt(*fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &len);
    EXPECT_EQ(tv.tv_sec * 1000 + tv.tv_usec / 1000, 1500);
    ::close(*fd);
    l.AcceptPeer();
  }
  // No timeout: none set on the socket either.
  auto fd = Dial("127.0.0.1", l.port(), 0);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  timeval tv{1, 1};
  socklen_t len = sizeof(tv);
  ::getsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len);
  EXPECT_EQ(tv.tv_sec + tv.tv_usec, 0);
  ::close(*fd);
}

TEST(Dial, BindsTheLocalAddress) {
  Listener l;
  auto fd = Dial("127.0.0.1", l.port(), 1000, "127.0.0.2");
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  EXPECT_EQ(l.AcceptPeer(), "127.0.0.2");
  ::close(*fd);
}

TEST(Dial, Errors) {
  uint16_t closed_port;
  {
    Listener l;
    closed_port = l.port();
  }
  auto refused = Dial("127.0.0.1", closed_port, 1000);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kUnavailable) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("127.0.0.1:" + std::to_string(closed_port)),
            std::string::npos)
      << refused.status().ToString();
  auto unknown = Dial("no-such-host.invalid", 80, 1000);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Code::kInvalidArgument) << unknown.status().ToString();
}

}  // namespace
}  // namespace strata

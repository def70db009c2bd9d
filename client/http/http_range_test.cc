// HttpRangeConnection against a scripted HTTP peer on loopback: bodies into
// the caller's buffer (whole, in pieces, with the head), keep-alive reuse,
// error replies, and the replies a real server does not send on demand
// (wrong length, chunked, not HTTP, a head too large, a stall, a cut).
#include "http_range.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace strata::kv {
namespace {

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t r = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (r <= 0) return;
    data.remove_prefix(static_cast<size_t>(r));
  }
}

// The request head, or "" when the peer closed.
std::string ReadHead(int fd) {
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (::recv(fd, &c, 1, 0) != 1) return "";
    head.push_back(c);
  }
  return head;
}

// Accepts one connection and runs `script` on it.
class Peer {
 public:
  // Reads one request head and answers `canned`.
  explicit Peer(std::string canned)
      : Peer([canned = std::move(canned)](int fd) {
          ReadHead(fd);
          WriteAll(fd, canned);
        }) {}
  explicit Peer(std::function<void(int fd)> script) {
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(::listen(listen_, 1), 0);
    socklen_t len = sizeof(a);
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, script = std::move(script)] {
      int fd = ::accept(listen_, nullptr, nullptr);
      if (fd < 0) return;
      script(fd);
      ::close(fd);
    });
  }
  ~Peer() {
    ::shutdown(listen_, SHUT_RDWR);
    ::close(listen_);
    thread_.join();
  }
  std::unique_ptr<HttpRangeConnection> Connect(uint32_t timeout_ms = 2000) {
    HttpConnectOptions o;
    o.host = "127.0.0.1";
    o.port = port_;
    o.timeout_ms = timeout_ms;
    std::unique_ptr<HttpRangeConnection> c;
    KvStatus s = HttpRangeConnection::Connect(o, &c);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return c;
  }

 private:
  int listen_;
  uint16_t port_ = 0;
  std::thread thread_;
};

constexpr char kHead[] = "GET /b/k HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\n\r\n";

std::string Reply206(std::string_view body) {
  return "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-" +
         std::to_string(body.size() - 1) + "/100\r\nETag: \"e\"\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

TEST(HttpRangeTest, BodiesLandInTheBufferAndTheConnectionIsReused) {
  std::string first_request;
  Peer peer([&](int fd) {
    first_request = ReadHead(fd);
    WriteAll(fd, Reply206("0123456789"));  // head and body in one send
    ASSERT_FALSE(ReadHead(fd).empty());
    std::string r = Reply206("abcdefghij");
    WriteAll(fd, r.substr(0, 20));  // the head cut in the middle, then the rest in pieces
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    WriteAll(fd, r.substr(20, r.size() - 24));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    WriteAll(fd, r.substr(r.size() - 4));
  });
  auto c = peer.Connect();
  char dest[10] = {};
  HttpReply reply;
  KvStatus s = c->Exchange(kHead, dest, sizeof(dest), /*exact=*/true, &reply);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(first_request, kHead);
  EXPECT_EQ(reply.status, 206);
  EXPECT_EQ(reply.into_dest, 10u);
  EXPECT_TRUE(reply.body_read);
  EXPECT_EQ(std::string(dest, 10), "0123456789");
  ASSERT_NE(reply.Header("content-range"), nullptr);
  EXPECT_EQ(*reply.Header("content-range"), "bytes 0-9/100");
  EXPECT_EQ(*reply.Header("etag"), "\"e\"");
  EXPECT_TRUE(c->usable());

  s = c->Exchange(kHead, dest, sizeof(dest), true, &reply);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(std::string(dest, 10), "abcdefghij");
  EXPECT_TRUE(c->usable());
}

TEST(HttpRangeTest, AShorterBodyFillsThePrefixWhenNotExact) {
  Peer peer(Reply206("xyz"));
  auto c = peer.Connect();
  char dest[10] = {'.', '.', '.', '.', '.', '.', '.', '.', '.', '.'};
  HttpReply reply;
  ASSERT_TRUE(c->Exchange(kHead, dest, sizeof(dest), /*exact=*/false, &reply).ok());
  EXPECT_EQ(reply.into_dest, 3u);
  EXPECT_EQ(std::string(dest, 10), "xyz.......");
}

TEST(HttpRangeTest, AnErrorReplysBodyIsReturnedAndTheBufferUntouched) {
  const std::string xml = "<Error><Code>NoSuchKey</Code><Message>gone</Message></Error>";
  Peer peer([&](int fd) {
    ReadHead(fd);
    WriteAll(fd, "HTTP/1.1 404 Not Found\r\nContent-Type: application/xml\r\nContent-Length: " +
                     std::to_string(xml.size()) + "\r\n\r\n" + xml);
    ReadHead(fd);
    WriteAll(fd, Reply206("0123456789"));
  });
  auto c = peer.Connect();
  char dest[10] = {};
  HttpReply reply;
  ASSERT_TRUE(c->Exchange(kHead, dest, sizeof(dest), true, &reply).ok());
  EXPECT_EQ(reply.status, 404);
  EXPECT_EQ(reply.body, xml);
  EXPECT_EQ(reply.into_dest, 0u);
  EXPECT_EQ(std::string(dest, 10), std::string(10, '\0'));
  EXPECT_TRUE(c->usable());  // the error body was read whole: the connection goes on
  ASSERT_TRUE(c->Exchange(kHead, dest, sizeof(dest), true, &reply).ok());
  EXPECT_EQ(std::string(dest, 10), "0123456789");
}

TEST(HttpRangeTest, ABodyOfAnotherLengthIsNotReadAndTheConnectionIsClosed) {
  Peer peer(Reply206("0123456789AB"));  // 12 bytes for 10 asked
  auto c = peer.Connect();
  char dest[10] = {};
  HttpReply reply;
  ASSERT_TRUE(c->Exchange(kHead, dest, sizeof(dest), true, &reply).ok());
  EXPECT_EQ(reply.status, 206);
  EXPECT_EQ(reply.content_length, 12u);
  EXPECT_EQ(reply.into_dest, 0u);
  EXPECT_FALSE(reply.body_read);
  EXPECT_EQ(std::string(dest, 10), std::string(10, '\0'));
  EXPECT_FALSE(c->usable());
  EXPECT_EQ(c->Exchange(kHead, dest, sizeof(dest), true, &reply).code(), KvCode::kClosed);
}

TEST(HttpRangeTest, AChunkedBodyIsNotReadIntoTheBuffer) {
  Peer peer(std::string(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n"));
  auto c = peer.Connect();
  char dest[10] = {};
  HttpReply reply;
  ASSERT_TRUE(c->Exchange(kHead, dest, sizeof(dest), true, &reply).ok());
  EXPECT_EQ(reply.status, 200);
  EXPECT_FALSE(reply.body_read);
  EXPECT_EQ(reply.into_dest, 0u);
  EXPECT_FALSE(c->usable());
}

TEST(HttpRangeTest, AStalledBodyFailsAfterTheTimeout) {
  Peer peer([](int fd) {
    ReadHead(fd);
    std::string r = Reply206("0123456789");
    WriteAll(fd, r.substr(0, r.size() - 5));  // then nothing
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
  });
  auto c = peer.Connect(/*timeout_ms=*/200);
  char dest[10] = {};
  HttpReply reply;
  auto start = std::chrono::steady_clock::now();
  KvStatus s = c->Exchange(kHead, dest, sizeof(dest), true, &reply);
  EXPECT_EQ(s.code(), KvCode::kIoError) << s.ToString();
  EXPECT_NE(s.message().find("timed out"), std::string::npos) << s.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(700));
  EXPECT_FALSE(c->usable());
}

TEST(HttpRangeTest, ACutBodyIsAnIoError) {
  Peer peer([](int fd) {
    ReadHead(fd);
    std::string r = Reply206("0123456789");
    WriteAll(fd, r.substr(0, r.size() - 5));
  });  // closes
  auto c = peer.Connect();
  char dest[10] = {};
  HttpReply reply;
  KvStatus s = c->Exchange(kHead, dest, sizeof(dest), true, &reply);
  EXPECT_EQ(s.code(), KvCode::kIoError) << s.ToString();
  EXPECT_FALSE(c->usable());
}

TEST(HttpRangeTest, NotHttpAndOversizedHeadsAreProtocolErrors) {
  {
    Peer peer(std::string("SSH-2.0-OpenSSH_9.2\r\n\r\n"));
    auto c = peer.Connect();
    char dest[10];
    HttpReply reply;
    EXPECT_EQ(c->Exchange(kHead, dest, sizeof(dest), true, &reply).code(), KvCode::kProtocolError);
    EXPECT_FALSE(c->usable());
  }
  {
    Peer peer([](int fd) {
      ReadHead(fd);
      std::string big = "HTTP/1.1 206 Partial Content\r\nX-Big: " +
                        std::string(HttpRangeConnection::kMaxHead, 'a') + "\r\n";
      WriteAll(fd, big);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    });
    auto c = peer.Connect();
    char dest[10];
    HttpReply reply;
    EXPECT_EQ(c->Exchange(kHead, dest, sizeof(dest), true, &reply).code(), KvCode::kProtocolError);
  }
}

// HTTP/1.0 without keep-alive, and Connection: close: the body is read, then the
// connection is closed.
TEST(HttpRangeTest, RepliesThatEndTheConnectionAreReadAndItIsClosed) {
  for (const char* canned :
       {"HTTP/1.0 206 Partial Content\r\nContent-Length: 10\r\n\r\n0123456789",
        "HTTP/1.1 206 Partial Content\r\nConnection: close\r\nContent-Length: 10\r\n\r\n"
        "0123456789"}) {
    Peer peer{std::string(canned)};
    auto c = peer.Connect();
    char dest[10];
    HttpReply reply;
    ASSERT_TRUE(c->Exchange(kHead, dest, sizeof(dest), true, &reply).ok()) << canned;
    EXPECT_EQ(std::string(dest, 10), "0123456789") << canned;
    EXPECT_FALSE(c->usable()) << canned;
  }
}

// Interim 1xx heads are read past, in the same packet as the reply or apart;
// Connection: keep-alive keeps the connection; a 101 is refused.
TEST(HttpRangeTest, InterimRepliesAreSkippedAndKeepAliveKeepsTheConnection) {
  Peer peer([](int fd) {
    ReadHead(fd);
    WriteAll(fd, "HTTP/1.1 100 Continue\r\n\r\n" + Reply206("0123456789"));
    ReadHead(fd);
    WriteAll(fd, "HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    WriteAll(fd, "HTTP/1.1 206 Partial Content\r\nConnection: keep-alive\r\n"
                 "Content-Length: 10\r\n\r\nabcdefghij");
    ReadHead(fd);
    WriteAll(fd, Reply206("ABCDEFGHIJ"));
  });
  auto c = peer.Connect();
  char dest[10];
  HttpReply reply;
  ASSERT_TRUE(c->Exchange(kHead, dest, sizeof(dest), true, &reply).ok());
  EXPECT_EQ(reply.status, 206);
  EXPECT_EQ(std::string(dest, 10), "0123456789");
  ASSERT_TRUE(c->usable());
  ASSERT_TRUE(c->Exchange(kHead, dest, sizeof(dest), true, &reply).ok());
  EXPECT_EQ(std::string(dest, 10), "abcdefghij");
  EXPECT_EQ(reply.Header("link"), nullptr);  // the interim head's fields are not the reply's
  ASSERT_TRUE(c->usable()) << "Connection: keep-alive must not close the connection";
  ASSERT_TRUE(c->Exchange(kHead, dest, sizeof(dest), true, &reply).ok());
  EXPECT_EQ(std::string(dest, 10), "ABCDEFGHIJ");
}

TEST(HttpRangeTest, ASwitchOfProtocolsIsRefused) {
  Peer peer(std::string("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n") +
            Reply206("0123456789"));
  auto c = peer.Connect();
  char dest[10];
  HttpReply reply;
  EXPECT_EQ(c->Exchange(kHead, dest, sizeof(dest), true, &reply).code(), KvCode::kProtocolError);
  EXPECT_FALSE(c->usable());
}

}  // namespace
}  // namespace strata::kv

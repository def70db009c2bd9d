#include "http/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace strata::http {
namespace {

// Echo handler: reads the whole body, answers 200 with it (or, for
// /noread, answers without reading the body).
class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.port = 0;
    o.worker_threads = 4;
    o.max_header_bytes = 8192;
    o.io_timeout_ms = 2000;
    auto s = Server::Start(
        o,
        [](const Request& req, ByteSource& body, ResponseWriter& out) {
          std::string data;
          if (req.raw_path != "/noread") {
            char buf[1000];
            while (true) {
              auto n = body.Read(buf, sizeof(buf));
              if (!n.ok()) {
                out.Start(400, {}, 0).IgnoreError();
                return;
              }
              if (*n == 0) break;
              data.append(buf, *n);
            }
          }
          std::string reply = req.method + " " + req.raw_path + " q=" + req.raw_query + " " + data;
          if (out.Start(200, {{"X-Test", "1"}}, reply.size(), req.method != "HEAD").ok()) {
            if (req.method != "HEAD") out.Write(reply).IgnoreError();
          }
        },
        [](ProtocolError e, ResponseWriter& out) {
          out.Start(e == ProtocolError::kHeaderTooLarge ? 431 : 400, {}, 0).IgnoreError();
        });
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
  }

  int Connect() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(server_->port()));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
  }
  static void Send(int fd, const std::string& s) {
    ASSERT_EQ(send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
  }
  // Reads until `count` complete responses (by Content-Length) or EOF.
  static std::string ReadResponses(int fd, int count) {
    std::string all;
    char buf[4096];
    while (true) {
      int complete = 0;
      size_t pos = 0;
      while (true) {
        size_t end = all.find("\r\n\r\n", pos);
        if (end == std::string::npos) break;
        size_t cl = all.find("Content-Length: ", pos);
        size_t len = (cl != std::string::npos && cl < end) ? std::stoul(all.substr(cl + 16)) : 0;
        if (all.compare(pos, 12, "HTTP/1.1 100") == 0) len = 0;
        else if (all.size() < end + 4 + len) break;
        else ++complete;
        pos = end + 4 + len;
      }
      if (complete >= count) return all;
      ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) return all;
      all.append(buf, n);
    }
  }
  std::unique_ptr<Server> server_;
};

TEST_F(HttpServerTest, ContentLengthBodyEcho) {
  int fd = Connect();
  Send(fd, "PUT /a%20b?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello");
  std::string r = ReadResponses(fd, 1);
  EXPECT_NE(r.find("HTTP/1.1 200 OK"), std::string::npos) << r;
  EXPECT_NE(r.find("PUT /a%20b q=x=1 hello"), std::string::npos) << r;
  close(fd);
}

TEST_F(HttpServerTest, ChunkedBodyIsDecoded) {
  int fd = Connect();
  Send(fd, "PUT /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
           "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n");
  std::string r = ReadResponses(fd, 1);
  EXPECT_NE(r.find("PUT /c q= abcdefg"), std::string::npos) << r;
  close(fd);
}

TEST_F(HttpServerTest, ExpectContinueSendsInterimResponse) {
  int fd = Connect();
  Send(fd, "PUT /e HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n");
  char buf[64] = {};
  ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, n), "HTTP/1.1 100 Continue\r\n\r\n");
  Send(fd, "xyz");
  EXPECT_NE(ReadResponses(fd, 1).find("PUT /e q= xyz"), std::string::npos);
  close(fd);
}

TEST_F(HttpServerTest, KeepAliveAndPipelining) {
  int fd = Connect();
  for (int i = 0; i < 50; ++i) {
    Send(fd, "GET /k" + std::to_string(i) + " HTTP/1.1\r\nHost: h\r\n\r\n");
    EXPECT_NE(ReadResponses(fd, 1).find("GET /k" + std::to_string(i) + " "), std::string::npos);
  }
  Send(fd, "GET /p1 HTTP/1.1\r\nHost: h\r\n\r\nGET /p2 HTTP/1.1\r\nHost: h\r\n\r\n"
           "GET /p3 HTTP/1.1\r\nHost: h\r\n\r\n");
  std::string r = ReadResponses(fd, 3);
  size_t p1 = r.find("GET /p1"), p2 = r.find("GET /p2");
  ASSERT_NE(p1, std::string::npos) << r;
  ASSERT_NE(p2, std::string::npos) << r;
  EXPECT_LT(p1, p2);
  close(fd);
}

TEST_F(HttpServerTest, OversizedHeaderIsRejected) {
  int fd = Connect();
  Send(fd, "GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n");
  std::string r = ReadResponses(fd, 1);
  EXPECT_NE(r.find("HTTP/1.1 431"), std::string::npos) << r.substr(0, 100);
  close(fd);
}

TEST_F(HttpServerTest, GarbageIsRejectedAndServerStaysUp) {
  int fd = Connect();
  Send(fd, "\x01\x02garbage\r\n\r\n");
  EXPECT_NE(ReadResponses(fd, 1).find("HTTP/1.1 400"), std::string::npos);
  close(fd);
  fd = Connect();
  Send(fd, "GET /ok HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_NE(ReadResponses(fd, 1).find("GET /ok"), std::string::npos);
  close(fd);
}

TEST_F(HttpServerTest, UnreadBodyClosesConnection) {
  int fd = Connect();
  Send(fd, "PUT /noread HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789");
  std::string r = ReadResponses(fd, 1);
  EXPECT_NE(r.find("Connection: close"), std::string::npos) << r;
  char c;
  EXPECT_EQ(recv(fd, &c, 1, 0), 0);  // server closed after the response
  close(fd);
}

TEST_F(HttpServerTest, TruncatedBodyReportsError) {
  int fd = Connect();
  Send(fd, "PUT /t HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nonly-a-bit");
  shutdown(fd, SHUT_WR);
  std::string r = ReadResponses(fd, 1);
  EXPECT_TRUE(r.empty() || r.find("HTTP/1.1 400") != std::string::npos) << r;
  close(fd);
}

}  // namespace
}  // namespace strata::http

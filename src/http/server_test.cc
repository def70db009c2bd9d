#include "http/server.h"

#include <string>

#include "http/server_test_util.h"

namespace strata::http {
namespace {

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

// The HTTP server under hostile clients: slow heads and bodies, idle and
// surplus connections, smuggling framings, unbounded lines, header injection.
// Each test replays one attack on loopback and checks the server's defence
// (and, where the attack used to starve workers, that a well-behaved client
// is still served while it goes on).
#include <poll.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "http/server_test_util.h"

namespace strata::http {
namespace {

using namespace std::chrono_literals;

// Sends without failing the test when the server has already closed.
bool TrySend(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads until the peer closes (or the 5 s receive timeout of Connect()).
std::string ReadAll(int fd) {
  std::string all;
  char buf[4096];
  while (true) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return all;
    all.append(buf, n);
  }
}

// Keeps sending one byte per `every` on each fd from a thread until stopped.
class Trickler {
 public:
  Trickler(std::vector<int> fds, std::chrono::milliseconds every) : fds_(std::move(fds)) {
    thread_ = std::thread([this, every] {
      while (!stop_) {
        for (int fd : fds_) TrySend(fd, "a");
        std::this_thread::sleep_for(every);
      }
    });
  }
  ~Trickler() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_) close(fd);
  }

 private:
  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST_F(HttpServerTest, TricklingHeadsHoldNoWorker) {
  ServerOptions o = DefaultOptions();
  o.worker_threads = 2;
  o.header_timeout_ms = 60000;  // the deadline is not what saves the good client here
  StartServer(o);
  std::vector<int> slow;
  for (int i = 0; i < 16; ++i) {
    int fd = Connect();
    Send(fd, "GET /slow HTTP/1.1\r\nX-Pad: ");
    slow.push_back(fd);
  }
  Trickler trickle(slow, 100ms);  // a byte every 100 ms: no single read ever times out
  std::this_thread::sleep_for(300ms);
  int fd = Connect();
  Send(fd, "GET /good HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_NE(ReadResponses(fd, 1).find("GET /good"), std::string::npos);
  close(fd);
}

TEST_F(HttpServerTest, HeadDeadlineCoversTheWholeHead) {
  ServerOptions o = DefaultOptions();
  o.header_timeout_ms = 300;
  StartServer(o);
  int fd = Connect();
  Send(fd, "GET /x HTTP/1.1\r\nX-Pad: ");
  Trickler trickle({dup(fd)}, 50ms);
  std::string r = ReadAll(fd);
  EXPECT_EQ(r.rfind("HTTP/1.1 408", 0), 0u) << r;
  close(fd);
}

TEST_F(HttpServerTest, IdleKeepAliveConnectionIsClosed) {
  ServerOptions o = DefaultOptions();
  o.idle_timeout_ms = 200;
  StartServer(o);
  int fd = Connect();
  Send(fd, "GET /one HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_NE(ReadResponses(fd, 1).find("GET /one"), std::string::npos);
  char c;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(recv(fd, &c, 1, 0), 0);  // closed by the server, not our 5 s receive timeout
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
  close(fd);
}

TEST_F(HttpServerTest, ConnectionCapAnswersSlowDownAndRecovers) {
  ServerOptions o = DefaultOptions();
  o.max_connections = 4;
  StartServer(o);
  std::vector<int> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(Connect());
    Send(held.back(), "GET /h HTTP/1.1\r\nHost: h\r\n\r\n");
    EXPECT_NE(ReadResponses(held.back(), 1).find("GET /h"), std::string::npos);
  }
  int extra = Connect();
  EXPECT_EQ(ReadAll(extra).rfind("HTTP/1.1 503", 0), 0u);
  close(extra);
  for (int fd : held) close(fd);
  // Once the held connections are gone, new ones are served again.
  bool served = false;
  for (int attempt = 0; attempt < 50 && !served; ++attempt) {
    int fd = Connect();
    TrySend(fd, "GET /after HTTP/1.1\r\nHost: h\r\n\r\n");
    served = ReadResponses(fd, 1).find("GET /after") != std::string::npos;
    close(fd);
    if (!served) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(served);
}

TEST_F(HttpServerTest, TransferEncodingOtherThanFinalChunkedIsRefused) {
  struct Case {
    std::string framing;
    const char* status;
  } cases[] = {
      {"Transfer-Encoding: gzip\r\n", "HTTP/1.1 400"},
      {"Transfer-Encoding: chunked, identity\r\n", "HTTP/1.1 400"},
      {"Transfer-Encoding: xchunked\r\n", "HTTP/1.1 400"},
      {"Transfer-Encoding: identity\r\n", "HTTP/1.1 400"},
      {"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "HTTP/1.1 400"},
      {"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", "HTTP/1.1 400"},
      {"Transfer-Encoding: gzip, chunked\r\n", "HTTP/1.1 501"},
  };
  for (const Case& c : cases) {
    int fd = Connect();
    // The "body" is a second request: it must never run.
    TrySend(fd, "POST /first HTTP/1.1\r\nHost: h\r\n" + c.framing +
                    "\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n");
    std::string r = ReadAll(fd);
    EXPECT_EQ(r.rfind(c.status, 0), 0u) << c.framing << " -> " << r;
    EXPECT_EQ(r.find("/smuggled"), std::string::npos) << c.framing;
    EXPECT_EQ(r.find("POST /first"), std::string::npos) << c.framing;
    close(fd);
  }
}

TEST_F(HttpServerTest, BodyBelowMinimumRateIsCutOff) {
  ServerOptions o = DefaultOptions();
  o.min_body_bytes_per_s = 1000;
  o.body_grace_ms = 200;
  StartServer(o);
  int fd = Connect();
  Send(fd, "PUT /slowbody HTTP/1.1\r\nHost: h\r\nContent-Length: 100000\r\n\r\n");
  Trickler trickle({dup(fd)}, 50ms);  // 20 bytes/s, each read well inside io_timeout_ms
  std::string r = ReadResponses(fd, 1);
  EXPECT_EQ(r.rfind("HTTP/1.1 400", 0), 0u) << r;
  close(fd);
}

TEST_F(HttpServerTest, LingerAfterErrorIsBounded) {
  ServerOptions o = DefaultOptions();
  o.worker_threads = 1;
  o.linger_ms = 300;
  StartServer(o);
  int fd = Connect();
  // Answered without reading the body: the server drains what follows.
  Send(fd, "PUT /noread HTTP/1.1\r\nHost: h\r\nContent-Length: 1000000\r\n\r\nabc");
  EXPECT_NE(ReadResponses(fd, 1).find("Connection: close"), std::string::npos);
  Trickler trickle({dup(fd)}, 50ms);  // keeps the drain busy forever, if unbounded
  std::this_thread::sleep_for(100ms);
  int good = Connect();
  Send(good, "GET /good HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_NE(ReadResponses(good, 1).find("GET /good"), std::string::npos);
  close(good);
  close(fd);
}

TEST_F(HttpServerTest, UnsafeResponseHeaderIsNeverSent) {
  int fd = Connect();
  Send(fd, "GET /inject HTTP/1.1\r\nHost: h\r\n\r\n");
  std::string r = ReadResponses(fd, 1);
  EXPECT_EQ(r.rfind("HTTP/1.1 500", 0), 0u) << r;
  EXPECT_EQ(r.find("Set-Cookie"), std::string::npos) << r;
  close(fd);
}

TEST_F(HttpServerTest, HugeChunkExtensionIsRefused) {
  int fd = Connect();
  std::string line = "5;ext=" + std::string(4 << 20, 'x') + "\r\nhello\r\n0\r\n\r\n";
  TrySend(fd, "PUT /chunky HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + line);
  std::string r = ReadAll(fd);
  EXPECT_EQ(r.find("PUT /chunky q= hello"), std::string::npos) << r.substr(0, 200);
  EXPECT_EQ(r.rfind("HTTP/1.1 400", 0), 0u) << r.substr(0, 200);
  close(fd);
}

TEST_F(HttpServerTest, HeaderValuesWithControlCharactersAreChecked) {
  EXPECT_TRUE(IsSafeHeader("X-Amz-Meta-A", "plain value\twith tab"));
  EXPECT_FALSE(IsSafeHeader("X-A", "a\r\nSet-Cookie: x"));
  EXPECT_FALSE(IsSafeHeader("X-A", std::string("a\0b", 3)));
  EXPECT_FALSE(IsSafeHeader("X-A\r\nB", "v"));
  EXPECT_FALSE(IsSafeHeader("", "v"));
  // Names are RFC 9110 tokens: every token character, and nothing else.
  EXPECT_TRUE(IsSafeHeader("Az09!#$%&'*+-.^_`|~", "v"));
  for (char c : std::string_view("()<>@,;:\\\"/[]?={} \t\x7f\x80\xff", 22)) {
    EXPECT_FALSE(IsSafeHeader(std::string("X") + c, "v")) << static_cast<int>(c);
  }
  EXPECT_FALSE(IsSafeHeaderValue("\x7f"));
  EXPECT_TRUE(IsSafeHeaderValue("caf\xc3\xa9"));  // obs-text / UTF-8 is allowed
}

}  // namespace
}  // namespace strata::http

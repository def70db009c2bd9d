// TimedStream over TLS: what one thread's OpenSSL error queue holds from
// earlier work must not make a later read on that thread fail.
#include "http/timed_stream.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/tls.h"
#include "common/tls_test_util.h"

namespace strata::http {
namespace {

TEST(TimedStreamTls, AStaleErrorOnTheThreadDoesNotFailTheNextRead) {
  char dir[] = "/tmp/strata-timed-tls-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  auto files = testing_tls::WriteSelfSigned(dir);
  ASSERT_FALSE(files.cert.empty());
  auto server_ctx = TlsContext::Load(files.cert, files.key);
  ASSERT_TRUE(server_ctx.ok()) << server_ctx.status().ToString();
  auto client_ctx = TlsClientContext::Create(files.cert);
  ASSERT_TRUE(client_ctx.ok()) << client_ctx.status().ToString();
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);

  std::thread client([&] {
    auto ssl = (*client_ctx)->NewSession(fds[1], "localhost");
    ASSERT_TRUE(ssl.ok()) << ssl.status().ToString();
    TlsIo io(*ssl, fds[1]);
    while (true) {
      auto step = io.Handshake();
      ASSERT_TRUE(step.ok()) << step.status().ToString();
      if (step->want == TlsIo::Want::kNothing) break;
      ASSERT_TRUE(TlsIo::Wait(fds[1], step->want, 5000).ok());
    }
    auto first = io.Write("a", 1);  // the server's first read ends its handshake
    ASSERT_TRUE(first.ok());
    // Late, so the server's next read finds nothing and waits (SSL_ERROR_WANT_READ).
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const std::string hello = "hello";
    auto put = io.Write(hello.data(), hello.size());
    ASSERT_TRUE(put.ok());
    EXPECT_EQ(put->n, hello.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });

  std::unique_ptr<SSL, SslFree> ssl((*server_ctx)->NewSession(fds[0]));
  ASSERT_NE(ssl, nullptr);
  TimedStream stream(fds[0], 5000, ssl.get());
  char buf[16];
  boost::system::error_code ec;
  size_t n = stream.read_some(boost::asio::buffer(buf, sizeof(buf)), ec);
  ASSERT_FALSE(ec) << ec.message();
  ASSERT_EQ(std::string(buf, n), "a");
  // Earlier work on this thread left an error in its queue (a failed
  // shutdown of another connection, a crypto call that did not clear it).
  // (The handshake clears the queue itself; a read after it does not.)
  ERR_raise(ERR_LIB_SSL, SSL_R_BAD_LENGTH);
  n = stream.read_some(boost::asio::buffer(buf, sizeof(buf)), ec);
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(std::string(buf, n), "hello");
  client.join();
  ::close(fds[0]);
  ::close(fds[1]);
  std::system((std::string("rm -rf ") + dir).c_str());
}

}  // namespace
}  // namespace strata::http

// The KV listener over TLS (ServerOptions::tls, --kv-tls): the protocol
// runs unchanged through it, large blocks included; plain-TCP peers, TLS 1.1
// peers and peers that do not trust the certificate get nothing; a trickled
// handshake parks like a trickled frame (no worker waits on it) and is closed
// at the auth deadline.
#include <openssl/ssl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <thread>

#include "common/net.h"
#include "common/tls.h"
#include "common/tls_test_util.h"
#include "kvcache/server_test_util.h"

namespace strata::kvcache {
namespace {

using namespace kvtest;

bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 4000; ++i) {  // at most 20 s
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

// True when the peer closed the socket (end of stream or reset) within 20 s.
bool ClosedByPeer(int fd) {
  char buf[4096];
  for (int i = 0; i < 2000; ++i) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10) <= 0) continue;
    ssize_t r = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (r == 0) return true;
    if (r < 0 && errno != EAGAIN && errno != EINTR) return true;
  }
  return false;
}

class KvTlsTest : public KvServerTest {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/strata-kvtls-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    files_ = testing_tls::WriteSelfSigned(dir_);
    ASSERT_FALSE(files_.cert.empty());
    auto ctx = TlsContext::Load(files_.cert, files_.key);
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    fs_ = io::NewMemFileSystem();
    kv_ = meta::NewMemStore();
    now_ns_ = 1'000'000'000'000'000'000ull;
    OpenEngine();
    options_.tls = *ctx;
    // Each test calls StartServer itself.
  }
  void TearDown() override {
    KvServerTest::TearDown();
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<Connection> Tls(const std::string& ca, const std::string& name = "") {
    auto client_ctx = TlsClientContext::Create(ca);
    EXPECT_TRUE(client_ctx.ok()) << client_ctx.status().ToString();
    if (!client_ctx.ok()) return nullptr;
    auto c = ConnectTls("127.0.0.1", server_->port(), **client_ctx, name);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) return nullptr;
    (*c)->SetIoTimeout(20'000);
    return std::move(c).value();
  }

  std::string dir_;
  testing_tls::CertFiles files_;
};

TEST_F(KvTlsTest, TheProtocolRunsThroughTlsWithLargeBlocks) {
  StartServer();
  Client c(Tls(files_.cert));
  ASSERT_EQ(c.Auth(kAccessKey, kSecretKey), WireStatus::kOk);
  // 1 MiB blocks: many records each way, and pipelined frames in one record.
  auto d = Descriptor(1 << 20);
  uint64_t ns = c.Open(d);
  ASSERT_NE(ns, 0u);
  std::string a = Pattern(1 << 20, 1), b = Pattern(1 << 20, 2);
  auto st = c.Put(ns, {{Key('a', 0), "", a}, {Key('a', 1), Key('a', 0), b}});
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0], WireStatus::kOk);
  EXPECT_EQ(st[1], WireStatus::kOk);
  EXPECT_EQ(c.Lookup(ns, {Key('a', 0), Key('a', 1)}), 2u);
  EXPECT_EQ(c.GetAll(ns, Key('a', 1)), b);
  auto got = c.Get(ns, {{Key('a', 0), 0, 0}, {Key('a', 1), 4096, 100}});
  ASSERT_EQ(got.data.size(), 2u);
  EXPECT_EQ(got.data[0], a);
  EXPECT_EQ(got.data[1], b.substr(4096, 100));
  // What went in over TLS is what S3 serves.
  auto stored = ObjectBytes(d, Key('a', 0));
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(*stored, a);
  for (int i = 0; i < 3; ++i) c.Send(Op::kPing, "", 900 + i);  // pipelined
  for (int i = 0; i < 3; ++i) {
    auto r = c.Recv();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->h.request_id, 900u + i);
  }
}

TEST_F(KvTlsTest, PlainTcpPeersGetNothing) {
  StartServer();
  Client plain(server_->port());
  ASSERT_TRUE(plain.connected());
  plain.conn()->SetIoTimeout(20'000);
  plain.Send(Op::kHello, proto::EncodeHelloRequest(kAccessKey), 1);
  // Not a ClientHello: the handshake fails, the connection closes, and no KV
  // frame comes back (a TLS alert at most, which is not a frame).
  char raw[proto::kFrameHeaderBytes];
  Status read = plain.conn()->ReadFull(raw, sizeof(raw));
  if (read.ok()) {
    FrameHeader h;
    EXPECT_NE(proto::DecodeFrameHeader(std::string_view(raw, sizeof(raw)), &h),
              proto::HeaderCheck::kOk);
  }
  EXPECT_TRUE(WaitFor([&] { return server_->stats().connections == 0; }));
}

TEST_F(KvTlsTest, UntrustedOrMisnamedCertificatesAreRefusedByTheClient) {
  StartServer();
  // Another self-signed certificate as the only CA: the chain does not verify.
  std::string other_dir = dir_ + "/other";
  std::filesystem::create_directory(other_dir);
  auto other = testing_tls::WriteSelfSigned(other_dir);
  ASSERT_FALSE(other.cert.empty());
  for (auto [ca, name] : {std::pair{other.cert, std::string()},
                          std::pair{files_.cert, std::string("not-this-host.example")}}) {
    Client c(Tls(ca, name));
    char byte;
    auto r = c.conn()->ReadSome(&byte, 1);  // runs the handshake
    EXPECT_FALSE(r.ok()) << name;
    if (!r.ok()) EXPECT_NE(r.status().message().find("certificate verify failed"), std::string::npos)
        << r.status().ToString();
  }
  // The right CA and name: fine.
  Client good(Tls(files_.cert, "localhost"));
  EXPECT_EQ(good.Auth(kAccessKey, kSecretKey), WireStatus::kOk);
}

TEST_F(KvTlsTest, Tls11PeersAreRefused) {
  StartServer();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(ctx, nullptr);
  SSL_CTX_set_security_level(ctx, 0);  // let this client offer TLS 1.0 / 1.1 at all
  SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_1_VERSION);
  SSL_CTX_set_cipher_list(ctx, "DEFAULT:@SECLEVEL=0");
  auto fd = Dial("127.0.0.1", server_->port(), 20'000);
  ASSERT_TRUE(fd.ok());
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, *fd);
  EXPECT_NE(SSL_connect(ssl), 1);  // the server answers with a protocol_version alert
  EXPECT_TRUE(WaitFor([&] { return server_->stats().connections == 0; }));
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  ::close(*fd);
}

TEST_F(KvTlsTest, TrickledHandshakesParkAndCloseAtTheAuthDeadline) {
  options_.auth_timeout_ms = 800;
  options_.worker_threads = 2;
  StartServer();
  // Each sends the first bytes of a TLS record header, then nothing.
  std::vector<int> fds;
  for (int i = 0; i < 40; ++i) {
    auto fd = Dial("127.0.0.1", server_->port(), 20'000);
    ASSERT_TRUE(fd.ok());
    ASSERT_EQ(::send(*fd, "\x16\x03\x01", 3, MSG_NOSIGNAL), 3);
    fds.push_back(*fd);
  }
  ASSERT_TRUE(WaitFor([&] { return server_->stats().parked == fds.size(); }))
      << server_->stats().parked << " parked of " << server_->stats().connections;
  // Two workers, forty stuck handshakes: a real client is served all the same.
  Client c(Tls(files_.cert));
  EXPECT_EQ(c.Auth(kAccessKey, kSecretKey), WireStatus::kOk);
  EXPECT_EQ(c.Call(Op::kPing, "").h.status, WireStatus::kOk);
  for (int fd : fds) {
    EXPECT_TRUE(ClosedByPeer(fd));
    ::close(fd);
  }
  EXPECT_GE(server_->stats().auth_timeouts, fds.size());
  EXPECT_EQ(c.Call(Op::kPing, "").h.status, WireStatus::kOk);  // authenticated in time: kept
}

}  // namespace
}  // namespace strata::kvcache

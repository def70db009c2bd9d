// The KV listener under hostile or idle clients: bounded threads and memory
// per connection, connection caps, the deadlines, thread-creation failure,
// and the AUTH limits (per connection, per source address). Real loopback
// sockets; waits are bounded loops on observable state, never timing asserts.
#include <arpa/inet.h>
#include <dirent.h>
#include <malloc.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <system_error>

#include "common/net.h"
#include "kvcache/server_test_util.h"
#include "kvcache/session.h"

namespace strata::kvcache {
namespace {

using namespace kvtest;  // NOLINT: the helpers of server_test_util.h
using proto::FrameHeader;
using proto::Op;
using proto::WireStatus;

size_t CountDir(const char* path) {
  DIR* d = ::opendir(path);
  if (d == nullptr) return 0;
  size_t n = 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  ::closedir(d);
  return n;
}
size_t Threads() { return CountDir("/proc/self/task"); }
size_t OpenFds() { return CountDir("/proc/self/fd"); }

size_t HeapBytesInUse() {
  struct mallinfo2 m = ::mallinfo2();
  return m.uordblks + m.hblkhd;
}

size_t RssBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long size = 0, resident = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%lu %lu", &size, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

// Polls `done` every 5 ms for at most 20 s.
bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 4000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

// A raw client socket (no client-side buffers), reads bounded by 20 s; -1
// when it cannot connect.
int RawConnect(uint16_t port, const char* from = nullptr) {
  auto fd = Dial("127.0.0.1", port, 20'000, from ? from : "");
  return fd.ok() ? *fd : -1;
}

// True when the server closed the connection (end of stream or reset), reading
// and dropping whatever it sent first; false when 20 s passed without.
bool ClosedByServer(int fd) {
  char buf[256];
  while (true) {
    ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
    if (r == 0) return true;
    if (r < 0) return errno == ECONNRESET;
    // data: keep reading
  }
}
bool ClosedByServer(Client& c) {
  c.conn()->SetIoTimeout(20'000);
  return ClosedByServer(c.conn()->PollFd());
}

class KvConnectionsTest : public KvServerTest {
 protected:
  void SetUp() override {
    fs_ = io::NewMemFileSystem();
    kv_ = meta::NewMemStore();
    now_ns_ = 1'000'000'000'000'000'000ull;
    OpenEngine();
    // Each test sets options_ and calls StartServer itself.
  }
};

// Fewer sockets when the process may not open enough descriptors.
size_t AffordableConnections(size_t wanted) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur < 2 * wanted + 200 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, 2 * wanted + 200);
    ::setrlimit(RLIMIT_NOFILE, &rl);
    ::getrlimit(RLIMIT_NOFILE, &rl);
  }
  return std::min<size_t>(wanted, (rl.rlim_cur - 200) / 2);
}

// ---- A: bounded threads and memory, caps, deadlines -----------------------------

TEST_F(KvConnectionsTest, IdleUnauthenticatedConnectionsCostNoThreadsAndLittleMemory) {
  const size_t n = AffordableConnections(1200);
  if (n < 1000) GTEST_SKIP() << "RLIMIT_NOFILE too low for 1000 connections";
  options_.max_connections_per_address = 5000;
  options_.auth_timeout_ms = 120'000;  // no deadline during the test
  StartServer();
  {  // warm up: one client through the whole path
    auto c = Authed();
    ASSERT_NE(c->Open(Descriptor(64)), 0u);
  }
  const size_t threads_before = Threads();
  const size_t rss_before = RssBytes();
  const size_t heap_before = HeapBytesInUse();
  std::vector<int> fds;
  for (size_t i = 0; i < n; ++i) {
    int fd = RawConnect(server_->port());
    ASSERT_GE(fd, 0) << "connect " << i << ": " << std::strerror(errno);
    if (i % 2 == 1) {  // half of them send the start of a HELLO header, then nothing
      ASSERT_EQ(::send(fd, "SKV1\x01\x01\0\0", 8, MSG_NOSIGNAL), 8);
    }
    fds.push_back(fd);
  }
  ASSERT_TRUE(WaitFor([&] { return server_->stats().parked == n; }))
      << server_->stats().connections << " connections, " << server_->stats().parked << " parked";
  const size_t threads_after = Threads();
  const size_t rss_after = RssBytes();
  const size_t heap_after = HeapBytesInUse();
  const double per_conn = (static_cast<double>(rss_after) - rss_before) / n;
  const double heap_per_conn = (static_cast<double>(heap_after) - heap_before) / n;
  std::printf(
      "[ measured ] %zu idle unauthenticated connections (half with a partial header): "
      "threads %zu -> %zu; RSS +%.2f MiB (%.0f B per connection); heap in use +%.0f B "
      "per connection\n",
      n, threads_before, threads_after, (rss_after - rss_before) / 1048576.0, per_conn,
      heap_per_conn);
  RecordProperty("rss_bytes_per_idle_connection", static_cast<int>(per_conn));
  RecordProperty("heap_bytes_per_idle_connection", static_cast<int>(heap_per_conn));
  EXPECT_LE(threads_after, threads_before + 2);                   // none per connection
  EXPECT_LT(rss_after, rss_before + n * 16 * 1024);               // old code: 256 KiB each
  EXPECT_LE(server_->stats().parked_buffer_bytes, n / 2 * 1024);  // partial headers only
  // A well-behaved client is served while they sit there.
  auto c = Authed();
  uint64_t ns = c->Open(Descriptor(64));
  ASSERT_NE(ns, 0u);
  EXPECT_EQ(c->PutOne(ns, Key('a', 0), std::string(64, 'a')), WireStatus::kOk);
  EXPECT_EQ(c->GetAll(ns, Key('a', 0)), std::string(64, 'a'));
  for (int fd : fds) ::close(fd);
  EXPECT_TRUE(WaitFor([&] { return server_->stats().connections == 1; }));
}

TEST_F(KvConnectionsTest, ParkedConnectionsHoldNoBuffers) {
  StartServer();
  constexpr int kClients = 8;
  constexpr size_t kBlock = 300000;  // file-backed: a GET uses the 1 MiB chunk buffer
  auto d = Descriptor(kBlock);
  {
    auto writer = Authed();
    uint64_t ns = writer->Open(d);
    for (int i = 0; i < kClients; ++i) {
      ASSERT_EQ(writer->PutOne(ns, Key('p', i), Pattern(kBlock, i)), WireStatus::kOk);
    }
  }
  ASSERT_TRUE(WaitFor([&] { return server_->stats().connections == 0; }));
  const size_t heap_before = HeapBytesInUse();
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(Authed());
    uint64_t ns = clients.back()->Open(d);
    ASSERT_EQ(clients.back()->GetAll(ns, Key('p', i)), Pattern(kBlock, i));
  }
  ASSERT_TRUE(WaitFor([&] { return server_->stats().parked == kClients; }));
  EXPECT_EQ(server_->stats().parked_buffer_bytes, 0u);
  // Old code: 256 KiB of input buffer and 1 MiB of chunk each, kept until the close.
  const size_t heap_after = HeapBytesInUse();
  EXPECT_LT(heap_after, heap_before + kClients * 64 * 1024)
      << (heap_after - heap_before) / kClients << " bytes per connection";
  EXPECT_EQ(clients[0]->Call(Op::kPing, "").h.status, WireStatus::kOk);  // and they resume
}

TEST_F(KvConnectionsTest, ClosedConnectionsAreReapedAtOnce) {
  StartServer();
  const size_t fds_before = OpenFds();
  for (int i = 0; i < 40; ++i) {
    auto c = Authed();
    EXPECT_EQ(c->Call(Op::kPing, "").h.status, WireStatus::kOk);
  }
  // No accept comes after the last close: the server's sockets close all the same.
  EXPECT_TRUE(WaitFor([&] { return OpenFds() <= fds_before; }))
      << OpenFds() << " descriptors open, " << fds_before << " before";
  EXPECT_EQ(server_->stats().connections, 0u);
}

TEST_F(KvConnectionsTest, PerAddressCapRefusesOnlyThatAddress) {
  options_.max_connections_per_address = 4;
  StartServer();
  std::vector<int> fds;
  for (int i = 0; i < 4; ++i) fds.push_back(RawConnect(server_->port(), "127.0.0.1"));
  ASSERT_TRUE(WaitFor([&] { return server_->stats().connections == 4; }));
  int over = RawConnect(server_->port(), "127.0.0.1");
  ASSERT_GE(over, 0);
  EXPECT_TRUE(ClosedByServer(over));  // accepted, then closed at once
  EXPECT_TRUE(WaitFor([&] { return server_->stats().refused == 1; }));
  // Another source address is served.
  auto other = Authed("127.0.0.2");
  uint64_t ns = other->Open(Descriptor(64));
  EXPECT_NE(ns, 0u);
  EXPECT_EQ(other->PutOne(ns, Key('o', 0), std::string(64, 'o')), WireStatus::kOk);
  // A slot freed on 127.0.0.1 is usable again.
  ::close(fds[0]);
  ASSERT_TRUE(WaitFor([&] { return server_->stats().connections == 4; }));
  auto again = Authed("127.0.0.1");
  EXPECT_EQ(again->Call(Op::kPing, "").h.status, WireStatus::kOk);
  ::close(over);
  for (size_t i = 1; i < fds.size(); ++i) ::close(fds[i]);
}

TEST_F(KvConnectionsTest, GlobalCap) {
  options_.max_connections = 3;
  StartServer();
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) fds.push_back(RawConnect(server_->port(), i ? "127.0.0.3" : nullptr));
  ASSERT_TRUE(WaitFor([&] { return server_->stats().connections == 3; }));
  int over = RawConnect(server_->port(), "127.0.0.4");
  EXPECT_TRUE(ClosedByServer(over));
  ::close(over);
  ::close(fds[0]);
  ASSERT_TRUE(WaitFor([&] { return server_->stats().connections == 2; }));
  EXPECT_EQ(Authed()->Call(Op::kPing, "").h.status, WireStatus::kOk);
  for (size_t i = 1; i < fds.size(); ++i) ::close(fds[i]);
}

TEST_F(KvConnectionsTest, UnauthenticatedConnectionsCloseAtTheAuthDeadline) {
  options_.auth_timeout_ms = 500;
  StartServer();
  int idle = RawConnect(server_->port());
  Client chatty(server_->port());  // busy, but never authenticates
  auto good = Authed();            // authenticated well within the deadline
  EXPECT_TRUE(ClosedByServer(idle));
  bool closed = false;
  for (int i = 0; i < 400 && !closed; ++i) {  // PINGs are answered until the deadline
    chatty.Send(Op::kPing, "", i);
    closed = !chatty.Recv().has_value();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(closed);
  EXPECT_EQ(server_->stats().auth_timeouts, 2u);
  EXPECT_EQ(good->Call(Op::kPing, "").h.status, WireStatus::kOk);
  ::close(idle);
}

TEST_F(KvConnectionsTest, TooManyFramesBeforeAuthentication) {
  StartServer();
  Client c(server_->port());
  std::string frames;
  for (int i = 0; i < kPreAuthMaxFrames + 1; ++i) frames += FrameBytes(Op::kPing, i, "");
  ASSERT_TRUE(c.conn()->WriteAll(std::string_view(frames)).ok());
  for (int i = 0; i < kPreAuthMaxFrames; ++i) {
    auto r = c.Recv();
    ASSERT_TRUE(r.has_value()) << i;
    EXPECT_EQ(r->h.status, WireStatus::kOk);
  }
  EXPECT_FALSE(c.Recv().has_value());
}

TEST_F(KvConnectionsTest, IdleAuthenticatedConnectionsTimeOut) {
  options_.idle_timeout_ms = 300;
  StartServer();
  auto c = Authed();
  ASSERT_NE(c->Open(Descriptor(64)), 0u);
  EXPECT_TRUE(ClosedByServer(*c));
  EXPECT_EQ(server_->stats().idle_timeouts, 1u);
  EXPECT_TRUE(WaitFor([&] { return server_->stats().connections == 0; }));
}

TEST_F(KvConnectionsTest, MidFrameStallClosesTheConnection) {
  options_.stall_timeout_ms = 300;
  StartServer();
  auto c = Authed();
  auto d = Descriptor(100000);
  uint64_t ns = c->Open(d);
  std::string payload = c->PutPayload(ns, {{Key('s', 0), "", Pattern(100000, 1)}});
  // Half a PUT, then the client stalls.
  std::string frame =
      FrameBytes(Op::kPut, 1, payload.substr(0, payload.size() / 2), payload.size());
  ASSERT_TRUE(c->conn()->WriteAll(std::string_view(frame)).ok());
  EXPECT_TRUE(ClosedByServer(*c));
  auto other = Authed();
  EXPECT_EQ(other->Lookup(other->Open(d), {Key('s', 0)}), 0u);  // the partial block is gone
  // A stalled frame header counts too.
  auto d2 = Authed();
  ASSERT_TRUE(d2->conn()->WriteAll(std::string_view(frame.substr(0, 10))).ok());
  EXPECT_TRUE(ClosedByServer(*d2));
}

TEST_F(KvConnectionsTest, ThreadCreationFailureKeepsTheServerUp) {
  // The second thread the server makes (its second worker) cannot be created.
  options_.worker_threads = 4;
  int calls = 0;
  options_.thread_factory = [&calls](std::function<void()> fn) {
    if (calls++ == 2) throw std::system_error(EAGAIN, std::generic_category(), "injected");
    return std::thread(std::move(fn));
  };
  StartServer();
  EXPECT_EQ(server_->stats().workers, 1);
  auto a = Authed();
  auto b = Authed();
  uint64_t ns = a->Open(Descriptor(64));
  EXPECT_EQ(a->PutOne(ns, Key('t', 0), std::string(64, 't')), WireStatus::kOk);
  EXPECT_EQ(b->Lookup(b->Open(Descriptor(64)), {Key('t', 0)}), 1u);
  // No thread at all: Start fails with a Status, the process lives on.
  server_.reset();
  ServerOptions o = options_;
  o.thread_factory = [](std::function<void()>) -> std::thread {
    throw std::system_error(EAGAIN, std::generic_category(), "injected");
  };
  o.clock_ns = [] { return uint64_t{1}; };
  auto failed = Server::Start(
      engine_.get(), [](std::string_view) { return std::nullopt; }, o);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), Code::kUnavailable);
  // Order: reaper, 4 workers, acceptor, sweeper. Losing the reaper, every
  // worker, the acceptor or the sweeper fails Start cleanly (threads joined).
  for (int fail_at : {0, 1, 5, 6}) {
    int made = 0;
    o.worker_threads = 4;
    o.thread_factory = [&made, fail_at](std::function<void()> fn) {
      if (made++ == fail_at) throw std::system_error(EAGAIN, std::generic_category(), "injected");
      return std::thread(std::move(fn));
    };
    auto s = Server::Start(
        engine_.get(), [](std::string_view) { return std::nullopt; }, o);
    EXPECT_FALSE(s.ok()) << fail_at;
  }
  StartServer();  // and a server starts again
  EXPECT_EQ(Authed()->Call(Op::kPing, "").h.status, WireStatus::kOk);
}

// ---- C: AUTH guessing ------------------------------------------------------------

TEST_F(KvConnectionsTest, FailedAuthsPerConnectionAreCapped) {
  StartServer();
  Client c(server_->port());
  for (uint32_t i = 0; i < options_.auth_failures_per_connection; ++i) {
    EXPECT_EQ(c.Auth(kAccessKey, "guess-" + std::to_string(i)), WireStatus::kAuthFailed);
  }
  EXPECT_TRUE(ClosedByServer(c));  // after the third failure, no fourth guess
}

TEST_F(KvConnectionsTest, AuthBackoffPerAddress) {
  options_.auth_throttle.failures = 5;
  options_.auth_throttle.backoff_initial_ms = 1000;
  StartServer();
  auto guess = [&](const char* from, int n) {
    Client c(server_->port(), from);
    for (int i = 0; i < n; ++i) c.Auth(kAccessKey, "wrong");
  };
  guess("127.0.0.1", 3);
  guess("127.0.0.1", 2);  // 5 failures: 127.0.0.1 backs off for 1 s
  {
    Client c(server_->port(), "127.0.0.1");  // even the right secret is refused now
    Response r = c.Call(Op::kHello, proto::EncodeHelloRequest(kAccessKey));
    EXPECT_EQ(r.h.status, WireStatus::kDenied);
    EXPECT_TRUE(ClosedByServer(c));
  }
  // Another address is unaffected.
  EXPECT_EQ(Authed("127.0.0.2")->Call(Op::kPing, "").h.status, WireStatus::kOk);
  now_ns_ += 1'100'000'000;  // the back-off is over
  EXPECT_EQ(Authed("127.0.0.1")->Call(Op::kPing, "").h.status, WireStatus::kOk);
  // The next one is longer (2 s).
  guess("127.0.0.1", 3);
  guess("127.0.0.1", 2);
  now_ns_ += 1'100'000'000;
  {
    Client c(server_->port(), "127.0.0.1");
    EXPECT_EQ(c.Call(Op::kHello, proto::EncodeHelloRequest(kAccessKey)).h.status,
              WireStatus::kDenied);
  }
  now_ns_ += 1'000'000'000;
  EXPECT_EQ(Authed("127.0.0.1")->Call(Op::kPing, "").h.status, WireStatus::kOk);
  // An AUTH answering a nonce issued before the back-off began is refused too.
  Client early(server_->port(), "127.0.0.5");
  Response hello = early.Call(Op::kHello, proto::EncodeHelloRequest(kAccessKey));
  ASSERT_EQ(hello.h.status, WireStatus::kOk);
  guess("127.0.0.5", 3);
  guess("127.0.0.5", 2);
  EXPECT_EQ(
      early.Call(Op::kAuth, proto::ComputeAuthMac(kSecretKey, hello.payload, kAccessKey)).h.status,
      WireStatus::kDenied);
}

}  // namespace
}  // namespace strata::kvcache

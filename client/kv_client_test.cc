// KvClient and the C ABI against a scripted peer on loopback that speaks the
// protocol through the shared codec: the handshake, GET straight into
// buffers (incl. a reply longer than its buffer), PUT scatter, and the
// failure paths a real server does not produce on demand (wrong request id,
// connection cut mid-reply).
#include "strata/kv_client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "common/checksum.h"
#include "kvcache/proto/frame.h"
#include "strata/strata_c.h"

namespace strata::kv {
namespace {

namespace proto = strata::kvcache::proto;

constexpr char kAccess[] = "ak";
constexpr char kSecret[] = "sk";

bool ReadAll(int fd, void* buf, size_t n) {
  char* p = static_cast<char*>(buf);
  while (n) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t r = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (r <= 0) return;
    data.remove_prefix(static_cast<size_t>(r));
  }
}

struct Frame {
  proto::FrameHeader h;
  std::string payload;
};

bool ReadFrame(int fd, Frame* f) {
  char buf[proto::kFrameHeaderBytes];
  if (!ReadAll(fd, buf, sizeof(buf))) return false;
  if (proto::DecodeFrameHeader(std::string_view(buf, sizeof(buf)), &f->h) !=
      proto::HeaderCheck::kOk) {
    return false;
  }
  f->payload.resize(f->h.payload_len);
  return ReadAll(fd, f->payload.data(), f->payload.size());
}

void Reply(int fd, const Frame& req, std::string_view payload,
           proto::WireStatus status = proto::WireStatus::kOk, uint64_t id_delta = 0) {
  proto::FrameHeader h;
  h.op = req.h.op;
  h.status = status;
  h.request_id = req.h.request_id + id_delta;
  h.payload_len = payload.size();
  std::string out;
  proto::AppendFrameHeader(h, &out);
  out.append(payload);
  WriteAll(fd, out);
}

// HELLO/AUTH as the server does it; returns whether the MAC was right.
bool ServeAuth(int fd) {
  Frame hello, auth;
  if (!ReadFrame(fd, &hello) || hello.h.op != proto::Op::kHello) return false;
  std::string_view ak;
  EXPECT_TRUE(proto::DecodeHelloRequest(hello.payload, &ak));
  std::string nonce(proto::kNonceBytes, 'n');
  Reply(fd, hello, nonce);
  if (!ReadFrame(fd, &auth) || auth.h.op != proto::Op::kAuth) return false;
  bool good = auth.payload == proto::ComputeAuthMac(kSecret, nonce, ak);
  Reply(fd, auth, "", good ? proto::WireStatus::kOk : proto::WireStatus::kAuthFailed);
  return good;
}

// A one-connection peer on 127.0.0.1:<port> running `script` on the socket.
class Peer {
 public:
  explicit Peer(std::function<void(int)> script) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(::listen(listen_fd_, 1), 0);
    socklen_t len = sizeof(a);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this, script] {
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      script(fd);
      ::close(fd);
    });
  }
  ~Peer() {
    thread_.join();
    ::close(listen_fd_);
  }
  uint16_t port() const { return port_; }

 private:
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

std::unique_ptr<KvClient> Connect(uint16_t port, const char* secret = kSecret) {
  ConnectOptions o;
  o.port = port;
  o.access_key = kAccess;
  o.secret_key = secret;
  o.timeout_ms = 5000;
  std::unique_ptr<KvClient> c;
  KvStatus s = KvClient::Connect(o, &c);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return c;
}

std::string Key(char c) { return std::string(32, c); }

TEST(KvClientTest, HandshakeAndPing) {
  Peer peer([](int fd) {
    ASSERT_TRUE(ServeAuth(fd));
    Frame f;
    ASSERT_TRUE(ReadFrame(fd, &f));
    EXPECT_EQ(f.h.op, proto::Op::kPing);
    Reply(fd, f, "");
  });
  auto c = Connect(peer.port());
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->Ping().ok());
}

TEST(KvClientTest, WrongSecretIsAuthFailed) {
  Peer peer([](int fd) { EXPECT_FALSE(ServeAuth(fd)); });
  ConnectOptions o;
  o.port = peer.port();
  o.access_key = kAccess;
  o.secret_key = "wrong";
  std::unique_ptr<KvClient> c;
  KvStatus s = KvClient::Connect(o, &c);
  EXPECT_EQ(s.code(), KvCode::kAuthFailed) << s.ToString();
  EXPECT_FALSE(c);
}

TEST(KvClientTest, GetReadsIntoBuffersAndSkipsOversizedItems) {
  Peer peer([](int fd) {
    ASSERT_TRUE(ServeAuth(fd));
    Frame f;
    ASSERT_TRUE(ReadFrame(fd, &f));
    proto::GetRequest req;
    ASSERT_TRUE(proto::DecodeGetRequest(f.payload, &req));
    ASSERT_EQ(req.items.size(), 3u);
    EXPECT_EQ(req.ns, 7u);
    EXPECT_EQ(req.items[0].offset, 2u);
    EXPECT_EQ(req.items[0].length, 5u);
    std::vector<proto::GetResult> head = {{proto::WireStatus::kOk, 5},
                                          {proto::WireStatus::kNotFound, 0},
                                          {proto::WireStatus::kOk, 10}};
    std::string out;
    proto::AppendGetResponseHead(head, &out);
    out += "hello";
    out += "0123456789";  // longer than item 2's buffer
    Reply(fd, f, out);
    ASSERT_TRUE(ReadFrame(fd, &f));
    Reply(fd, f, "");  // PING: the stream is still in step
  });
  auto c = Connect(peer.port());
  ASSERT_TRUE(c);
  char a[5] = {}, b[8] = {}, small[4] = {};
  std::string k0 = Key('a'), k1 = Key('b'), k2 = Key('c');
  GetItem items[3];
  items[0] = {k0, 2, 5, a, sizeof(a)};
  items[1] = {k1, 0, 0, b, sizeof(b)};
  items[2] = {k2, 0, 0, small, sizeof(small)};
  KvStatus s = c->Get(7, items);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(items[0].status, KvCode::kOk);
  EXPECT_EQ(items[0].bytes, 5u);
  EXPECT_EQ(std::string(a, 5), "hello");
  EXPECT_EQ(items[1].status, KvCode::kNotFound);
  EXPECT_EQ(items[2].status, KvCode::kBufferTooSmall);
  EXPECT_EQ(std::string(small, 4), std::string(4, '\0'));
  EXPECT_TRUE(c->Ping().ok());
}

TEST(KvClientTest, PutSendsBlocksAndParents) {
  Peer peer([](int fd) {
    ASSERT_TRUE(ServeAuth(fd));
    Frame f;
    ASSERT_TRUE(ReadFrame(fd, &f));
    proto::PutRequestHead head;
    ASSERT_TRUE(proto::DecodePutRequestHead(f.payload, &head));
    ASSERT_EQ(head.items.size(), 2u);
    EXPECT_EQ(head.items[0].parent, "");
    EXPECT_EQ(head.items[1].parent, Key('a'));
    EXPECT_EQ(f.payload.substr(head.head_bytes), "firstsecond!");
    std::vector<proto::WireStatus> st = {proto::WireStatus::kOk, proto::WireStatus::kExists};
    Reply(fd, f, proto::EncodeStatusList(st));
  });
  auto c = Connect(peer.port());
  ASSERT_TRUE(c);
  std::string k0 = Key('a'), k1 = Key('b');
  PutItem items[2];
  items[0] = {k0, {}, "first", 5};
  items[1] = {k1, k0, "second!", 7};
  KvStatus s = c->Put(1, items);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(items[0].status, KvCode::kOk);
  EXPECT_EQ(items[1].status, KvCode::kExists);
}

TEST(KvClientTest, ReplyToAnotherRequestIdClosesTheConnection) {
  Peer peer([](int fd) {
    ASSERT_TRUE(ServeAuth(fd));
    Frame f;
    ASSERT_TRUE(ReadFrame(fd, &f));
    Reply(fd, f, proto::EncodeLookupResponse(0), proto::WireStatus::kOk, /*id_delta=*/1);
  });
  auto c = Connect(peer.port());
  ASSERT_TRUE(c);
  std::string k = Key('a');
  KeyView keys[] = {k};
  uint32_t hits = 99;
  EXPECT_EQ(c->Lookup(1, keys, &hits).code(), KvCode::kProtocolError);
  EXPECT_FALSE(c->connected());
  EXPECT_EQ(c->Ping().code(), KvCode::kClosed);
}

TEST(KvClientTest, ConnectionCutMidReplyIsIoError) {
  Peer peer([](int fd) {
    ASSERT_TRUE(ServeAuth(fd));
    Frame f;
    ASSERT_TRUE(ReadFrame(fd, &f));
    std::vector<proto::GetResult> head = {{proto::WireStatus::kOk, 100}};
    std::string out;
    proto::AppendGetResponseHead(head, &out);
    out += "only part";
    proto::FrameHeader h;
    h.op = f.h.op;
    h.request_id = f.h.request_id;
    h.payload_len = out.size() + 91;  // promises the whole block
    std::string frame;
    proto::AppendFrameHeader(h, &frame);
    WriteAll(fd, frame + out);
  });
  auto c = Connect(peer.port());
  ASSERT_TRUE(c);
  char buf[100];
  std::string k = Key('a');
  GetItem item{k, 0, 0, buf, sizeof(buf)};
  EXPECT_EQ(c->Get(1, std::span<GetItem>(&item, 1)).code(), KvCode::kIoError);
  EXPECT_FALSE(c->connected());
}

TEST(KvClientTest, BadKeysAreRefusedBeforeSending) {
  Peer peer([](int fd) {
    ASSERT_TRUE(ServeAuth(fd));
    Frame f;
    ASSERT_TRUE(ReadFrame(fd, &f));
    EXPECT_EQ(f.h.op, proto::Op::kPing);  // nothing else reached the wire
    Reply(fd, f, "");
  });
  auto c = Connect(peer.port());
  ASSERT_TRUE(c);
  std::string short_key(15, 'x');
  KeyView keys[] = {short_key};
  uint32_t hits = 0;
  EXPECT_EQ(c->Lookup(1, keys, &hits).code(), KvCode::kInvalid);
  EXPECT_TRUE(c->Ping().ok());
}

TEST(KvClientTest, PipelinedRepliesAreMatchedByRequestIdInAnyOrder) {
  constexpr int kCalls = 3;
  Peer peer([](int fd) {
    ASSERT_TRUE(ServeAuth(fd));
    std::vector<Frame> frames(kCalls);
    for (Frame& f : frames) ASSERT_TRUE(ReadFrame(fd, &f));  // all in flight at once
    for (int i = kCalls - 1; i >= 0; --i) {                  // answered last first
      proto::KeysRequest req;
      ASSERT_TRUE(proto::DecodeKeysRequest(frames[i].payload, &req));
      std::vector<bool> bits(req.keys.size());
      for (size_t k = 0; k < bits.size(); ++k) bits[k] = req.keys[k][0] == 'y';
      Reply(fd, frames[i], proto::EncodeLookupEachResponse(bits));
    }
  });
  auto c = Connect(peer.port());
  ASSERT_TRUE(c);
  std::string y = Key('y'), n = Key('n');
  std::vector<std::vector<KeyView>> keys = {{y, n}, {n, n, y}, {y}};
  std::vector<std::vector<bool>> present(kCalls);
  std::vector<std::promise<KvStatus>> done(kCalls);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCalls; ++i) {  // from several threads, on one connection
    threads.emplace_back([&, i] {
      c->LookupEachAsync(5, keys[i], &present[i],
                         [&done, i](const KvStatus& s) { done[i].set_value(s); });
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kCalls; ++i) {
    KvStatus s = done[i].get_future().get();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  EXPECT_EQ(present[0], (std::vector<bool>{true, false}));
  EXPECT_EQ(present[1], (std::vector<bool>{false, false, true}));
  EXPECT_EQ(present[2], (std::vector<bool>{true}));
  EXPECT_EQ(c->in_flight(), 0u);
}

TEST(KvClientTest, GetChecksTheBlockCrcAndCopiesMetadata) {
  const std::string good = "0123456789", bad = "0123456789";
  Peer peer([&](int fd) {
    ASSERT_TRUE(ServeAuth(fd));
    Frame f;
    ASSERT_TRUE(ReadFrame(fd, &f));
    uint32_t crc = Crc32c(good.data(), good.size());
    // Item 1's bytes differ from its CRC by one bit (a flip on the way).
    std::vector<proto::GetResult> head = {{proto::WireStatus::kOk, 10, proto::kGetCrcValid, crc, 4},
                                          {proto::WireStatus::kOk, 10, proto::kGetCrcValid, crc, 0},
                                          {proto::WireStatus::kOk, 3, 0, 0, 0}};
    std::string out;
    proto::AppendGetResponseHead(head, &out);
    out += "meta";
    out += good;
    std::string flipped = bad;
    flipped[3] ^= 0x10;
    out += flipped;
    out += "abc";  // a range: no CRC to check
    Reply(fd, f, out);
  });
  auto c = Connect(peer.port());
  ASSERT_TRUE(c);
  char a[10], b[10], r[3], meta[kMaxMetaBytes];
  std::string k0 = Key('a'), k1 = Key('b'), k2 = Key('c');
  GetItem items[3];
  items[0] = {k0, 0, 0, a, sizeof(a)};
  items[0].meta_dst = meta;
  items[0].meta_capacity = sizeof(meta);
  items[1] = {k1, 0, 0, b, sizeof(b)};
  items[2] = {k2, 4, 3, r, sizeof(r)};
  KvStatus s = c->Get(1, items);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(items[0].status, KvCode::kOk);
  EXPECT_TRUE(items[0].crc_checked);
  EXPECT_EQ(items[0].crc32c, Crc32c(good.data(), good.size()));
  EXPECT_EQ(std::string(meta, items[0].meta_len), "meta");
  EXPECT_EQ(items[1].status, KvCode::kCorrupt);  // a miss, never wrong bytes
  EXPECT_EQ(items[1].bytes, 0u);
  EXPECT_EQ(items[2].status, KvCode::kOk);
  EXPECT_FALSE(items[2].crc_checked);
}

// Blocks larger than the client's receive piece (256 KiB) are CRC'd piece by
// piece as they arrive: the CRC over the pieces must be the block's, and a
// flip in a later piece must still be caught.
TEST(KvClientTest, GetChecksTheCrcOfBlocksReceivedInPieces) {
  std::string good(600 << 10, '\0');
  for (size_t i = 0; i < good.size(); ++i) good[i] = static_cast<char>(i * 131 + (i >> 9));
  std::string flipped = good;
  flipped[(600 << 10) - 5] ^= 0x01;  // in the third piece
  const uint32_t crc = Crc32c(good.data(), good.size());
  Peer peer([&](int fd) {
    ASSERT_TRUE(ServeAuth(fd));
    Frame f;
    ASSERT_TRUE(ReadFrame(fd, &f));
    const uint64_t n = good.size();
    std::vector<proto::GetResult> head = {{proto::WireStatus::kOk, n, proto::kGetCrcValid, crc, 0},
                                          {proto::WireStatus::kOk, n, proto::kGetCrcValid, crc, 0}};
    std::string out;
    proto::AppendGetResponseHead(head, &out);
    out += good;
    out += flipped;
    Reply(fd, f, out);
  });
  auto c = Connect(peer.port());
  ASSERT_TRUE(c);
  std::string a(good.size(), 'x'), b(good.size(), 'x');
  std::string k0 = Key('a'), k1 = Key('b');
  GetItem items[2];
  items[0] = {k0, 0, 0, a.data(), a.size()};
  items[1] = {k1, 0, 0, b.data(), b.size()};
  KvStatus s = c->Get(1, items);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(items[0].status, KvCode::kOk);
  EXPECT_TRUE(items[0].crc_checked);
  EXPECT_EQ(items[0].crc32c, crc);
  EXPECT_EQ(a, good);
  EXPECT_EQ(items[1].status, KvCode::kCorrupt);
  EXPECT_FALSE(items[1].crc_checked);
}

TEST(KvClientTest, AnUnansweredRequestTimesOutAndFailsTheConnection) {
  Peer peer([](int fd) {
    ASSERT_TRUE(ServeAuth(fd));
    Frame f;
    ASSERT_TRUE(ReadFrame(fd, &f));  // and never answer
    char c;
    (void)::recv(fd, &c, 1, 0);  // until the client gives up and closes
  });
  ConnectOptions o;
  o.port = peer.port();
  o.access_key = kAccess;
  o.secret_key = kSecret;
  o.timeout_ms = 300;
  std::unique_ptr<KvClient> c;
  ASSERT_TRUE(KvClient::Connect(o, &c).ok());
  std::string k = Key('a');
  std::vector<KeyView> keys = {k};
  uint32_t hits = 0;
  auto t0 = std::chrono::steady_clock::now();
  KvStatus s = c->Lookup(1, keys, &hits);
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(s.code(), KvCode::kIoError) << s.ToString();
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  EXPECT_FALSE(c->connected());
  EXPECT_EQ(c->Ping().code(), KvCode::kClosed);
  c->Close();
}

TEST(KvCAbiTest, ConnectLookupAndErrors) {
  Peer peer([](int fd) {
    ASSERT_TRUE(ServeAuth(fd));
    Frame f;
    ASSERT_TRUE(ReadFrame(fd, &f));
    proto::KeysRequest req;
    ASSERT_TRUE(proto::DecodeKeysRequest(f.payload, &req));
    EXPECT_EQ(req.keys.size(), 2u);
    Reply(fd, f, proto::EncodeLookupResponse(1));
    ASSERT_TRUE(ReadFrame(fd, &f));
    Reply(fd, f, "", proto::WireStatus::kDenied);  // STATS refused as a whole
  });
  strata_kv_client* c = nullptr;
  ASSERT_EQ(strata_kv_connect("127.0.0.1", peer.port(), kAccess, kSecret, 5000, &c), STRATA_KV_OK)
      << strata_kv_last_error(nullptr);
  std::string k0 = Key('a'), k1 = Key('b');
  const uint8_t* keys[] = {reinterpret_cast<const uint8_t*>(k0.data()),
                           reinterpret_cast<const uint8_t*>(k1.data())};
  uint8_t lens[] = {32, 32};
  uint32_t hits = 0;
  EXPECT_EQ(strata_kv_lookup(c, 3, keys, lens, 2, &hits), STRATA_KV_OK);
  EXPECT_EQ(hits, 1u);
  strata_kv_stats st;
  EXPECT_EQ(strata_kv_stats_get(c, 3, &st), STRATA_KV_DENIED);
  EXPECT_NE(std::strstr(strata_kv_last_error(c), "DENIED"), nullptr);
  EXPECT_STREQ(strata_kv_code_name(STRATA_KV_BUFFER_TOO_SMALL), "BUFFER_TOO_SMALL");
  EXPECT_EQ(strata_kv_lookup(nullptr, 3, keys, lens, 2, &hits), STRATA_KV_INVALID);
  strata_kv_close(c);
}

}  // namespace
}  // namespace strata::kv

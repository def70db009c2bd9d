// The KV server over a real ObjectEngine (in-memory file system and metadata
// store) and a loopback TCP socket, driven by a minimal client written
// against proto/ only.
#include "kvcache/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "common/checksum.h"
#include "common/encoding.h"
#include "io/mem_fs.h"
#include "meta/kv_store.h"
#include "storage/plain_store.h"

namespace strata::kvcache {
namespace {

using proto::FrameHeader;
using proto::Op;
using proto::WireStatus;

constexpr char kAccessKey[] = "AKIAKVTEST";
constexpr char kSecretKey[] = "kv-secret-key";
constexpr char kOtherAccessKey[] = "AKIAOTHER";
constexpr char kOtherSecretKey[] = "other-secret";

std::string Key(char chain, int pos) {
  std::string k(16, '\0');
  k[0] = chain;
  k[1] = static_cast<char>(pos);
  k[15] = 'k';
  return k;
}

std::string Pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 9)) & 0xff);
  return s;
}

proto::NamespaceDescriptor Descriptor(uint64_t block_bytes, std::string salt = "tenant-a") {
  proto::NamespaceDescriptor d;
  d.model_id = "test/model";
  d.weights_fingerprint = "w1";
  d.kv_dtype = "fp16";
  d.kv_layout = "NHD";
  d.tokens_per_block = 16;
  d.block_bytes = block_bytes;
  d.hash_algorithm = "sha256";
  d.hash_seed = 7;
  d.tenant_salt = std::move(salt);
  return d;
}

struct Response {
  FrameHeader h;
  std::string payload;
};

// A blocking test client over proto/.
class Client {
 public:
  explicit Client(uint16_t port) {
    auto c = ConnectTcp("127.0.0.1", port);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (c.ok()) conn_ = std::move(c).value();
  }
  Connection* conn() { return conn_.get(); }

  void Send(Op op, std::string_view payload, uint64_t rid) {
    FrameHeader h;
    h.op = op;
    h.request_id = rid;
    h.payload_len = payload.size();
    std::string buf;
    proto::AppendFrameHeader(h, &buf);
    buf.append(payload);
    ASSERT_TRUE(conn_->WriteAll(std::string_view(buf)).ok());
  }
  // nullopt when the server closed the connection.
  std::optional<Response> Recv() {
    char raw[proto::kFrameHeaderBytes];
    if (!conn_->ReadFull(raw, sizeof(raw)).ok()) return std::nullopt;
    Response r;
    EXPECT_EQ(proto::DecodeFrameHeader(std::string_view(raw, sizeof(raw)), &r.h),
              proto::HeaderCheck::kOk);
    r.payload.resize(r.h.payload_len);
    if (!conn_->ReadFull(r.payload.data(), r.payload.size()).ok()) return std::nullopt;
    return r;
  }
  Response Call(Op op, std::string_view payload) {
    uint64_t rid = ++rid_;
    Send(op, payload, rid);
    auto r = Recv();
    EXPECT_TRUE(r.has_value()) << "connection closed on " << proto::OpName(op);
    if (!r) return Response{};
    EXPECT_EQ(r->h.request_id, rid);
    EXPECT_EQ(r->h.op, op);
    return *r;
  }

  WireStatus Auth(std::string_view ak, std::string_view secret) {
    Response hello = Call(Op::kHello, proto::EncodeHelloRequest(ak));
    if (hello.h.status != WireStatus::kOk) return hello.h.status;
    EXPECT_EQ(hello.payload.size(), proto::kNonceBytes);
    return Call(Op::kAuth, proto::ComputeAuthMac(secret, hello.payload, ak)).h.status;
  }
  // Returns the handle (0 on failure; *status says why).
  uint64_t Open(const proto::NamespaceDescriptor& d, WireStatus* status = nullptr) {
    std::string p;
    EXPECT_TRUE(proto::EncodeNamespaceDescriptor(d, &p));
    Response r = Call(Op::kOpenNamespace, p);
    if (status) *status = r.h.status;
    if (r.h.status != WireStatus::kOk) return 0;
    proto::OpenNamespaceResponse o;
    EXPECT_TRUE(proto::DecodeOpenNamespaceResponse(r.payload, &o));
    EXPECT_EQ(o.digest, proto::NamespaceDigest(d));
    EXPECT_EQ(o.bucket, proto::NamespaceBucket(o.digest));
    return o.handle;
  }
  uint32_t Lookup(uint64_t ns, const std::vector<std::string>& keys) {
    std::vector<std::string_view> v(keys.begin(), keys.end());
    Response r = Call(Op::kLookup, proto::EncodeKeysRequest(ns, v));
    EXPECT_EQ(r.h.status, WireStatus::kOk);
    uint32_t n = 0;
    EXPECT_TRUE(proto::DecodeLookupResponse(r.payload, &n));
    return n;
  }
  struct Block {
    std::string key, parent, data;
  };
  std::string PutPayload(uint64_t ns, const std::vector<Block>& blocks) {
    std::vector<proto::PutItem> items;
    for (const Block& b : blocks) items.push_back({b.key, b.parent, b.data.size()});
    std::string p = proto::EncodePutRequestHead(ns, items);
    for (const Block& b : blocks) p += b.data;
    return p;
  }
  std::vector<WireStatus> Put(uint64_t ns, const std::vector<Block>& blocks) {
    Response r = Call(Op::kPut, PutPayload(ns, blocks));
    EXPECT_EQ(r.h.status, WireStatus::kOk);
    std::vector<WireStatus> st;
    EXPECT_TRUE(proto::DecodeStatusList(r.payload, blocks.size(), &st));
    return st;
  }
  WireStatus PutOne(uint64_t ns, const std::string& key, const std::string& data,
                    const std::string& parent = "") {
    auto st = Put(ns, {{key, parent, data}});
    return st.empty() ? WireStatus::kInternal : st[0];
  }
  struct Got {
    WireStatus frame = WireStatus::kOk;
    std::vector<proto::GetResult> results;
    std::vector<std::string> data;
  };
  Got Get(uint64_t ns, const std::vector<proto::GetItem>& items) {
    Response r = Call(Op::kGet, proto::EncodeGetRequest(ns, items));
    Got g;
    g.frame = r.h.status;
    if (r.h.status != WireStatus::kOk) return g;
    EXPECT_TRUE(proto::DecodeGetResponseHead(r.payload, items.size(), &g.results));
    size_t off = items.size() * proto::kGetResultBytes;
    for (const auto& res : g.results) {
      g.data.push_back(r.payload.substr(off, res.length));
      off += res.length;
    }
    EXPECT_EQ(off, r.payload.size());
    return g;
  }
  std::string GetAll(uint64_t ns, const std::string& key) {
    Got g = Get(ns, {{key, 0, 0}});
    if (g.results.size() != 1 || g.results[0].status != WireStatus::kOk) return "<missing>";
    return g.data[0];
  }
  proto::NamespaceStats Stats(uint64_t ns) {
    Response r = Call(Op::kStats, proto::EncodeNamespaceRequest(ns));
    EXPECT_EQ(r.h.status, WireStatus::kOk);
    proto::NamespaceStats s;
    EXPECT_TRUE(proto::DecodeStatsResponse(r.payload, &s));
    return s;
  }
  std::vector<WireStatus> KeysOp(Op op, uint64_t ns, const std::vector<std::string>& keys,
                                 uint32_t ttl_ms = 0) {
    std::vector<std::string_view> v(keys.begin(), keys.end());
    Response r = Call(op, op == Op::kPin ? proto::EncodePinRequest(ns, ttl_ms, v)
                                         : proto::EncodeKeysRequest(ns, v));
    EXPECT_EQ(r.h.status, WireStatus::kOk);
    std::vector<WireStatus> st;
    EXPECT_TRUE(proto::DecodeStatusList(r.payload, keys.size(), &st));
    return st;
  }

 private:
  std::unique_ptr<Connection> conn_;
  uint64_t rid_ = 100;
};

class KvServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = io::NewMemFileSystem();
    kv_ = meta::NewMemStore();
    now_ns_ = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
    OpenEngine();
    StartServer();
  }
  void TearDown() override { server_.reset(); }

  void OpenEngine() {
    auto store = storage::OpenPlainDataStore(fs_.get(), "/data");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    auto e = object::ObjectEngine::Open(store_.get(), kv_.get());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }
  void StartServer(uint64_t default_quota = 0) {
    ServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.default_quota_bytes = default_quota;
    o.sweep_interval_ms = 3600 * 1000;  // tests sweep by hand
    o.io_chunk_bytes = 64 * 1024;       // several chunks per large block
    o.clock_ns = [this] { return now_ns_.load(); };
    auto secrets = [](std::string_view ak) -> std::optional<std::string> {
      if (ak == kAccessKey) return std::string(kSecretKey);
      if (ak == kOtherAccessKey) return std::string(kOtherSecretKey);
      return std::nullopt;
    };
    auto s = Server::Start(engine_.get(), secrets, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
  }
  // Stops everything and reopens the engine over the same stores.
  void Restart() {
    server_.reset();
    engine_.reset();
    store_.reset();
    OpenEngine();
    StartServer();
  }
  std::unique_ptr<Client> Authed() {
    auto c = std::make_unique<Client>(server_->port());
    EXPECT_EQ(c->Auth(kAccessKey, kSecretKey), WireStatus::kOk);
    return c;
  }
  // The object behind a block, read through the engine (what S3 GET serves).
  Result<std::string> ObjectBytes(const proto::NamespaceDescriptor& d, const std::string& key) {
    auto digest = proto::NamespaceDigest(d);
    ASSIGN_OR_RETURN(auto r, engine_->OpenObject(proto::NamespaceBucket(digest),
                                                 proto::BlockObjectKey(digest, key)));
    std::string out(r->record().size_bytes, '\0');
    size_t off = 0;
    while (off < out.size()) {
      ASSIGN_OR_RETURN(size_t n, r->ReadAt(off, out.data() + off, out.size() - off));
      if (n == 0) return Corruption("short");
      off += n;
    }
    return out;
  }
  size_t ObjectCount(const proto::NamespaceDescriptor& d) {
    auto list = engine_->ListObjects(proto::NamespaceBucket(proto::NamespaceDigest(d)), {});
    return list.ok() ? list->objects.size() : 0;
  }

  std::unique_ptr<io::MemFileSystem> fs_;
  std::unique_ptr<meta::KvStore> kv_;
  std::unique_ptr<storage::DataStore> store_;
  std::unique_ptr<object::ObjectEngine> engine_;
  std::unique_ptr<Server> server_;
  std::atomic<uint64_t> now_ns_{0};
};

TEST_F(KvServerTest, AuthSuccessAndFailure) {
  Client c(server_->port());
  EXPECT_EQ(c.Auth(kAccessKey, "wrong-secret"), WireStatus::kAuthFailed);
  // The challenge is single-use: AUTH without a new HELLO is refused.
  EXPECT_EQ(c.Call(Op::kAuth, std::string(32, 'x')).h.status, WireStatus::kInvalid);
  EXPECT_EQ(c.Auth("AKIAUNKNOWN", kSecretKey), WireStatus::kAuthFailed);
  // A MAC over another nonce does not work either.
  Response hello = c.Call(Op::kHello, proto::EncodeHelloRequest(kAccessKey));
  ASSERT_EQ(hello.h.status, WireStatus::kOk);
  std::string stale = proto::ComputeAuthMac(kSecretKey, std::string(32, '\0'), kAccessKey);
  EXPECT_EQ(c.Call(Op::kAuth, stale).h.status, WireStatus::kAuthFailed);
  EXPECT_EQ(c.Call(Op::kOpenNamespace, "").h.status, WireStatus::kDenied);
  // The right secret works on the same connection; then no second HELLO.
  EXPECT_EQ(c.Auth(kAccessKey, kSecretKey), WireStatus::kOk);
  EXPECT_EQ(c.Call(Op::kHello, proto::EncodeHelloRequest(kAccessKey)).h.status,
            WireStatus::kInvalid);
  EXPECT_NE(c.Open(Descriptor(64)), 0u);
}

TEST_F(KvServerTest, DeniedBeforeAuth) {
  Client c(server_->port());
  EXPECT_EQ(c.Call(Op::kPing, "").h.status, WireStatus::kOk);
  std::string desc;
  ASSERT_TRUE(proto::EncodeNamespaceDescriptor(Descriptor(64), &desc));
  EXPECT_EQ(c.Call(Op::kOpenNamespace, desc).h.status, WireStatus::kDenied);
  std::vector<std::string> keys = {Key('a', 0)};
  std::vector<std::string_view> kv(keys.begin(), keys.end());
  EXPECT_EQ(c.Call(Op::kLookup, proto::EncodeKeysRequest(1, kv)).h.status, WireStatus::kDenied);
  // A PUT's bytes are drained: the connection stays in step.
  EXPECT_EQ(c.Call(Op::kPut, c.PutPayload(1, {{Key('a', 0), "", std::string(64, 'x')}})).h.status,
            WireStatus::kDenied);
  EXPECT_EQ(c.Call(Op::kStats, proto::EncodeNamespaceRequest(1)).h.status, WireStatus::kDenied);
  EXPECT_EQ(c.Call(Op::kPing, "").h.status, WireStatus::kOk);
  // Nothing was created.
  auto buckets = engine_->ListBuckets();
  ASSERT_TRUE(buckets.ok());
  EXPECT_TRUE(buckets->empty());
  // A large frame before authentication closes the connection (only its
  // header is sent: unread bytes would make the close a reset).
  FrameHeader big;
  big.op = Op::kHello;
  big.request_id = 5;
  big.payload_len = 100000;
  std::string f;
  proto::AppendFrameHeader(big, &f);
  ASSERT_TRUE(c.conn()->WriteAll(std::string_view(f)).ok());
  auto r = c.Recv();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->h.status, WireStatus::kDenied);
  EXPECT_FALSE(c.Recv().has_value());
}

TEST_F(KvServerTest, PutLookupGetAndObjectsVisibleThroughEngine) {
  auto c = Authed();
  auto d = Descriptor(0);  // any block length
  uint64_t ns = c->Open(d);
  ASSERT_NE(ns, 0u);
  std::vector<Client::Block> chain;
  for (int i = 0; i < 4; ++i) {
    // Small (inline) and large (file-backed) blocks.
    chain.push_back({Key('a', i), i ? Key('a', i - 1) : "", Pattern(i % 2 ? 300000 : 1000, i)});
  }
  auto st = c->Put(ns, chain);
  EXPECT_EQ(st, std::vector<WireStatus>(4, WireStatus::kOk));
  std::vector<std::string> keys = {Key('a', 0), Key('a', 1), Key('a', 2), Key('a', 3), Key('a', 4)};
  EXPECT_EQ(c->Lookup(ns, keys), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(c->GetAll(ns, chain[i].key), chain[i].data) << i;
    auto bytes = ObjectBytes(d, chain[i].key);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    EXPECT_EQ(*bytes, chain[i].data);
  }
  // Ordinary objects: listable, with the parent in user metadata and a CRC32C.
  auto digest = proto::NamespaceDigest(d);
  auto list = engine_->ListObjects(proto::NamespaceBucket(digest), {});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->objects.size(), 4u);
  auto head = engine_->HeadObject(proto::NamespaceBucket(digest),
                                  proto::BlockObjectKey(digest, Key('a', 1)));
  ASSERT_TRUE(head.ok());
  ASSERT_EQ(head->headers.user_metadata.size(), 1u);
  EXPECT_EQ(head->headers.user_metadata[0].first, "kv-parent");
  EXPECT_EQ(head->headers.user_metadata[0].second, HexEncode(Key('a', 0)));
  EXPECT_EQ(head->checksum_algorithm, "CRC32C");
  EXPECT_EQ(head->checksum_value, ChecksumBase64(ChecksumAlgorithm::kCrc32c, chain[1].data));
}

TEST_F(KvServerTest, NamespaceIsolation) {
  auto c = Authed();
  auto da = Descriptor(64, "tenant-a");
  auto db = Descriptor(64, "tenant-b");
  uint64_t a = c->Open(da);
  uint64_t b = c->Open(db);
  ASSERT_NE(a, 0u);
  ASSERT_NE(b, 0u);
  EXPECT_NE(a, b);
  EXPECT_EQ(c->Open(da), a);  // same namespace, same handle
  ASSERT_EQ(c->PutOne(a, Key('a', 0), std::string(64, 'A')), WireStatus::kOk);
  EXPECT_EQ(c->Lookup(b, {Key('a', 0)}), 0u);
  auto g = c->Get(b, {{Key('a', 0), 0, 0}});
  ASSERT_EQ(g.results.size(), 1u);
  EXPECT_EQ(g.results[0].status, WireStatus::kNotFound);
  // Another field (tp_rank) is another namespace as well.
  auto dr = da;
  dr.tp_rank = 1;
  uint64_t r = c->Open(dr);
  EXPECT_EQ(c->Lookup(r, {Key('a', 0)}), 0u);
  // A handle this connection did not open is unknown.
  EXPECT_EQ(c->Call(Op::kLookup, proto::EncodeNamespaceRequest(99) + std::string(4, '\0')).h.status,
            WireStatus::kNotFound);
  Client other(server_->port());
  ASSERT_EQ(other.Auth(kAccessKey, kSecretKey), WireStatus::kOk);
  EXPECT_EQ(other.Call(Op::kLookup, proto::EncodeKeysRequest(a, {})).h.status,
            WireStatus::kNotFound);
  // Another identity cannot open a namespace owned by the first one.
  Client stranger(server_->port());
  ASSERT_EQ(stranger.Auth(kOtherAccessKey, kOtherSecretKey), WireStatus::kOk);
  WireStatus why;
  EXPECT_EQ(stranger.Open(da, &why), 0u);
  EXPECT_EQ(why, WireStatus::kDenied);
}

TEST_F(KvServerTest, PutIfAbsentAndBlockSize) {
  auto c = Authed();
  uint64_t ns = c->Open(Descriptor(64));
  std::string first(64, '1'), second(64, '2');
  EXPECT_EQ(c->PutOne(ns, Key('a', 0), first), WireStatus::kOk);
  EXPECT_EQ(c->PutOne(ns, Key('a', 0), second), WireStatus::kExists);
  EXPECT_EQ(c->GetAll(ns, Key('a', 0)), first);
  // A length other than the namespace's block_bytes is refused, its bytes skipped.
  auto st = c->Put(
      ns, {{Key('b', 0), "", std::string(63, 'x')}, {Key('b', 1), "", std::string(64, 'y')}});
  EXPECT_EQ(st, (std::vector<WireStatus>{WireStatus::kTooLarge, WireStatus::kOk}));
  EXPECT_EQ(c->GetAll(ns, Key('b', 1)), std::string(64, 'y'));
  // Malformed PUT (lengths do not add up to the payload) is INVALID, and the
  // connection stays usable.
  std::string c0 = Key('c', 0);
  std::vector<proto::PutItem> items = {{c0, "", 64}};
  std::string bad = proto::EncodePutRequestHead(ns, items) + std::string(10, 'z');
  EXPECT_EQ(c->Call(Op::kPut, bad).h.status, WireStatus::kInvalid);
  EXPECT_EQ(c->Call(Op::kPing, "").h.status, WireStatus::kOk);
}

TEST_F(KvServerTest, ConcurrentWritersOfTheSameKey) {
  constexpr int kWriters = 6;
  constexpr size_t kBlock = 256 * 1024;  // file-backed
  auto d = Descriptor(kBlock);
  std::vector<WireStatus> results(kWriters);
  std::vector<std::thread> threads;
  std::atomic<int> ready{0};
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      auto c = Authed();
      uint64_t ns = c->Open(d);
      ready++;
      while (ready.load() < kWriters) std::this_thread::yield();
      results[w] = c->PutOne(ns, Key('k', 0), Pattern(kBlock, w));
    });
  }
  for (auto& t : threads) t.join();
  int ok = 0, exists = 0, winner = -1;
  for (int w = 0; w < kWriters; ++w) {
    if (results[w] == WireStatus::kOk) {
      ++ok;
      winner = w;
    } else if (results[w] == WireStatus::kExists) {
      ++exists;
    }
  }
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(exists, kWriters - 1);
  ASSERT_GE(winner, 0);
  auto c = Authed();
  uint64_t ns = c->Open(d);
  EXPECT_EQ(c->GetAll(ns, Key('k', 0)), Pattern(kBlock, winner));
  EXPECT_EQ(ObjectCount(d), 1u);
}

TEST_F(KvServerTest, IncompletePutIsNeverVisible) {
  auto d = Descriptor(200000);
  {
    auto c = Authed();
    uint64_t ns = c->Open(d);
    std::string payload = c->PutPayload(ns, {{Key('a', 0), "", Pattern(200000, 1)}});
    FrameHeader h;
    h.op = Op::kPut;
    h.request_id = 1;
    h.payload_len = payload.size();
    std::string frame;
    proto::AppendFrameHeader(h, &frame);
    frame += payload.substr(0, payload.size() / 2);  // the connection dies mid-block
    ASSERT_TRUE(c->conn()->WriteAll(std::string_view(frame)).ok());
  }
  auto c = Authed();
  uint64_t ns = c->Open(d);
  for (int i = 0; i < 20; ++i) {  // the server notices the close asynchronously
    EXPECT_EQ(c->Lookup(ns, {Key('a', 0)}), 0u);
    auto g = c->Get(ns, {{Key('a', 0), 0, 0}});
    ASSERT_EQ(g.results.size(), 1u);
    EXPECT_EQ(g.results[0].status, WireStatus::kNotFound);
    EXPECT_EQ(ObjectCount(d), 0u);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The key is free: a complete PUT succeeds (not EXISTS) and reads back whole.
  EXPECT_EQ(c->PutOne(ns, Key('a', 0), Pattern(200000, 2)), WireStatus::kOk);
  EXPECT_EQ(c->GetAll(ns, Key('a', 0)), Pattern(200000, 2));
}

TEST_F(KvServerTest, GetRangesAndStats) {
  auto c = Authed();
  constexpr size_t kBlock = 200000;
  uint64_t ns = c->Open(Descriptor(kBlock));
  std::string a = Pattern(kBlock, 1), b = Pattern(kBlock, 2);
  ASSERT_EQ(c->PutOne(ns, Key('a', 0), a), WireStatus::kOk);
  ASSERT_EQ(c->PutOne(ns, Key('a', 1), b, Key('a', 0)), WireStatus::kOk);
  auto g = c->Get(ns, {{Key('a', 0), 0, 0},
                       {Key('a', 1), 1000, 70000},
                       {Key('z', 0), 0, 0},
                       {Key('a', 1), kBlock - 10, 10},
                       {Key('a', 0), kBlock, 0},
                       {Key('a', 0), kBlock - 10, 11},
                       {Key('a', 0), kBlock + 1, 0}});
  ASSERT_EQ(g.frame, WireStatus::kOk);
  ASSERT_EQ(g.results.size(), 7u);
  EXPECT_EQ(g.results[0].status, WireStatus::kOk);
  EXPECT_EQ(g.data[0], a);
  EXPECT_EQ(g.results[1].status, WireStatus::kOk);
  EXPECT_EQ(g.data[1], b.substr(1000, 70000));
  EXPECT_EQ(g.results[2].status, WireStatus::kNotFound);
  EXPECT_EQ(g.data[3], b.substr(kBlock - 10));
  EXPECT_EQ(g.results[4].status, WireStatus::kOk);
  EXPECT_EQ(g.results[4].length, 0u);
  EXPECT_EQ(g.results[5].status, WireStatus::kInvalid);
  EXPECT_EQ(g.results[6].status, WireStatus::kInvalid);
  EXPECT_EQ(c->Lookup(ns, {Key('a', 0), Key('a', 1)}), 2u);
  proto::NamespaceStats s = c->Stats(ns);
  EXPECT_EQ(s.blocks, 2u);
  EXPECT_EQ(s.bytes, 2 * kBlock);
  EXPECT_EQ(s.hits, 4u);
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.bytes_requested, kBlock + 70000 + 10);
  EXPECT_EQ(s.bytes_served, s.bytes_requested);
  EXPECT_EQ(s.lookups, 1u);
  EXPECT_EQ(s.evictions, 0u);
}

TEST_F(KvServerTest, PipelinedRequestsAnswerInOrder) {
  auto c = Authed();
  uint64_t ns = c->Open(Descriptor(64));
  ASSERT_EQ(c->PutOne(ns, Key('a', 0), std::string(64, 'a')), WireStatus::kOk);
  std::string batch;
  std::vector<std::pair<Op, std::string>> reqs;
  std::string key = Key('a', 0);
  std::vector<std::string_view> keys = {key};
  for (int i = 0; i < 50; ++i) {
    switch (i % 4) {
      case 0:
        reqs.push_back({Op::kPing, ""});
        break;
      case 1:
        reqs.push_back({Op::kLookup, proto::EncodeKeysRequest(ns, keys)});
        break;
      case 2:
        reqs.push_back({Op::kGet, proto::EncodeGetRequest(ns, {{{key, 0, 0}}})});
        break;
      case 3:
        reqs.push_back({Op::kStats, proto::EncodeNamespaceRequest(ns)});
        break;
    }
  }
  for (size_t i = 0; i < reqs.size(); ++i) {
    FrameHeader h;
    h.op = reqs[i].first;
    h.request_id = 1000 + i;
    h.payload_len = reqs[i].second.size();
    proto::AppendFrameHeader(h, &batch);
    batch += reqs[i].second;
  }
  ASSERT_TRUE(c->conn()->WriteAll(std::string_view(batch)).ok());  // one write, 50 requests
  for (size_t i = 0; i < reqs.size(); ++i) {
    auto r = c->Recv();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->h.request_id, 1000 + i);
    EXPECT_EQ(r->h.op, reqs[i].first);
    EXPECT_EQ(r->h.status, WireStatus::kOk);
  }
}

TEST_F(KvServerTest, BadFramesCloseTheConnection) {
  {
    Client c(server_->port());
    ASSERT_TRUE(c.conn()->WriteAll(std::string_view("XXXX" + std::string(20, '\0'))).ok());
    EXPECT_FALSE(c.Recv().has_value());
  }
  {
    Client c(server_->port());
    FrameHeader h;
    h.op = Op::kPing;
    h.request_id = 9;
    std::string f;
    proto::AppendFrameHeader(h, &f);
    f[4] = 2;  // version 2
    ASSERT_TRUE(c.conn()->WriteAll(std::string_view(f)).ok());
    auto r = c.Recv();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->h.status, WireStatus::kInvalid);
    EXPECT_EQ(r->h.request_id, 9u);
    EXPECT_FALSE(c.Recv().has_value());
  }
  {  // an unknown opcode is answered INVALID and the connection goes on
    Client c(server_->port());
    FrameHeader h;
    h.op = static_cast<Op>(0x7f);
    h.request_id = 3;
    h.payload_len = 5;
    std::string f;
    proto::AppendFrameHeader(h, &f);
    f += "abcde";
    ASSERT_TRUE(c.conn()->WriteAll(std::string_view(f)).ok());
    auto r = c.Recv();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->h.status, WireStatus::kInvalid);
    EXPECT_EQ(c.Call(Op::kPing, "").h.status, WireStatus::kOk);
  }
}

TEST_F(KvServerTest, QuotaEvictsTailFirstAndPinsHold) {
  auto c = Authed();
  auto d = Descriptor(100);
  d.quota_bytes = 500;
  uint64_t ns = c->Open(d);
  for (int i = 0; i < 3; ++i) {
    now_ns_ += 1000;
    ASSERT_EQ(c->PutOne(ns, Key('a', i), std::string(100, 'a'), i ? Key('a', i - 1) : ""),
              WireStatus::kOk);
  }
  for (int i = 0; i < 2; ++i) {
    now_ns_ += 1000;
    ASSERT_EQ(c->PutOne(ns, Key('b', i), std::string(100, 'b'), i ? Key('b', i - 1) : ""),
              WireStatus::kOk);
  }
  EXPECT_EQ(c->KeysOp(Op::kPin, ns, {Key('a', 2), Key('z', 0)}, 60000),
            (std::vector<WireStatus>{WireStatus::kOk, WireStatus::kNotFound}));
  // Full: a new block evicts the oldest unpinned leaf (b1, since a2 is pinned).
  now_ns_ += 1000;
  ASSERT_EQ(c->PutOne(ns, Key('c', 0), std::string(100, 'c')), WireStatus::kOk);
  EXPECT_EQ(c->Lookup(ns, {Key('a', 0), Key('a', 1), Key('a', 2)}), 3u);
  EXPECT_EQ(c->Lookup(ns, {Key('b', 0), Key('b', 1)}), 1u);
  EXPECT_EQ(c->KeysOp(Op::kUnpin, ns, {Key('a', 2)}), std::vector<WireStatus>{WireStatus::kOk});
  now_ns_ += 1000;
  ASSERT_EQ(c->PutOne(ns, Key('d', 0), std::string(100, 'd')), WireStatus::kOk);
  // a2 is now the oldest leaf.
  EXPECT_EQ(c->Lookup(ns, {Key('a', 0), Key('a', 1), Key('a', 2)}), 2u);
  proto::NamespaceStats s = c->Stats(ns);
  EXPECT_EQ(s.evictions, 2u);
  EXPECT_EQ(s.bytes, 500u);
  EXPECT_EQ(ObjectCount(d), 5u);  // evicted blocks' objects are deleted
}

TEST_F(KvServerTest, ReadingWhileEvicting) {
  constexpr size_t kBlock = 160 * 1024;  // file-backed
  constexpr int kBlocks = 40;
  auto d = Descriptor(kBlock);
  d.quota_bytes = 6 * kBlock;
  std::atomic<int> written{0};
  std::atomic<int> stored{0};
  std::atomic<bool> failed{false};
  std::thread writer([&] {
    auto c = Authed();
    uint64_t ns = c->Open(d);
    for (int i = 0; i < kBlocks; ++i) {
      // TOO_LARGE when every stored block is being read at that moment.
      WireStatus st = c->PutOne(ns, Key('w', i), Pattern(kBlock, i));
      if (st == WireStatus::kOk) ++stored;
      if (st != WireStatus::kOk && st != WireStatus::kTooLarge) failed = true;
      written = i + 1;
    }
  });
  auto c = Authed();
  uint64_t ns = c->Open(d);
  int served = 0, reads = 0;
  while (written.load() < kBlocks || reads < 5) {
    ++reads;
    int upto = written.load();
    std::vector<std::string> keys;
    for (int i = 0; i < upto; ++i) keys.push_back(Key('w', i));
    std::vector<proto::GetItem> items;
    for (const auto& k : keys) items.push_back({k, 0, 0});
    auto g = c->Get(ns, items);
    ASSERT_EQ(g.frame, WireStatus::kOk);
    ASSERT_EQ(g.results.size(), keys.size());
    for (int i = 0; i < upto; ++i) {
      if (g.results[i].status == WireStatus::kOk) {
        ++served;
        ASSERT_EQ(g.data[i], Pattern(kBlock, i)) << "block " << i;
      } else {
        ASSERT_EQ(g.results[i].status, WireStatus::kNotFound);
      }
    }
  }
  writer.join();
  EXPECT_FALSE(failed.load());
  EXPECT_GT(served, 0);
  proto::NamespaceStats s = c->Stats(ns);
  EXPECT_LE(s.bytes, d.quota_bytes);
  EXPECT_GT(stored.load(), 6);
  EXPECT_EQ(s.evictions, stored.load() - s.blocks);
  EXPECT_EQ(s.bytes_served, s.bytes_requested);
  EXPECT_EQ(ObjectCount(d), s.blocks);
}

TEST_F(KvServerTest, TtlSweepExpiresIdleBlocks) {
  auto c = Authed();
  auto d = Descriptor(64);
  d.ttl_s = 10;
  uint64_t ns = c->Open(d);
  ASSERT_EQ(c->PutOne(ns, Key('a', 0), std::string(64, 'a')), WireStatus::kOk);
  ASSERT_EQ(c->PutOne(ns, Key('a', 1), std::string(64, 'a'), Key('a', 0)), WireStatus::kOk);
  now_ns_ += 5'000'000'000ull;
  ASSERT_EQ(c->PutOne(ns, Key('b', 0), std::string(64, 'b')), WireStatus::kOk);
  now_ns_ += 6'000'000'000ull;  // a is 11 s idle, b 6 s
  server_->Sweep();
  EXPECT_EQ(c->Lookup(ns, {Key('a', 0)}), 0u);
  EXPECT_EQ(c->Lookup(ns, {Key('b', 0)}), 1u);
  EXPECT_EQ(ObjectCount(d), 1u);
  // A GET keeps a block alive.
  now_ns_ += 5'000'000'000ull;
  EXPECT_EQ(c->GetAll(ns, Key('b', 0)), std::string(64, 'b'));
  now_ns_ += 6'000'000'000ull;
  server_->Sweep();
  EXPECT_EQ(c->Lookup(ns, {Key('b', 0)}), 1u);
  EXPECT_EQ(c->Stats(ns).evictions, 2u);
}

TEST_F(KvServerTest, DeleteTakesDescendants) {
  auto c = Authed();
  auto d = Descriptor(64);
  uint64_t ns = c->Open(d);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(c->PutOne(ns, Key('a', i), std::string(64, 'a'), i ? Key('a', i - 1) : ""),
              WireStatus::kOk);
  }
  EXPECT_EQ(c->KeysOp(Op::kDelete, ns, {Key('a', 1), Key('z', 0)}),
            (std::vector<WireStatus>{WireStatus::kOk, WireStatus::kNotFound}));
  EXPECT_EQ(c->Lookup(ns, {Key('a', 0), Key('a', 1), Key('a', 2)}), 1u);
  EXPECT_EQ(ObjectCount(d), 1u);
  EXPECT_EQ(c->PutOne(ns, Key('a', 2), std::string(64, 'n'), Key('a', 1)), WireStatus::kOk);
}

TEST_F(KvServerTest, RestartKeepsBlocksAndChains) {
  auto d = Descriptor(100);
  std::vector<std::string> keys = {Key('a', 0), Key('a', 1), Key('a', 2)};
  {
    auto c = Authed();
    uint64_t ns = c->Open(d);
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(c->PutOne(ns, keys[i], Pattern(100, i), i ? keys[i - 1] : ""), WireStatus::kOk);
    }
  }
  Restart();
  auto c = Authed();
  d.quota_bytes = 300;
  uint64_t ns = c->Open(d);
  EXPECT_EQ(c->Lookup(ns, keys), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(c->GetAll(ns, keys[i]), Pattern(100, i));
  proto::NamespaceStats s = c->Stats(ns);
  EXPECT_EQ(s.blocks, 3u);
  EXPECT_EQ(s.bytes, 300u);
  // The parent links came back too: a new block evicts the chain's tail, not
  // its (older) root.
  now_ns_ = now_ns_ + 3600'000'000'000ull;
  ASSERT_EQ(c->PutOne(ns, Key('b', 0), Pattern(100, 9)), WireStatus::kOk);
  EXPECT_EQ(c->Lookup(ns, keys), 2u);
  // An incomplete PUT before a restart leaves nothing behind either.
  Client raw(server_->port());
  ASSERT_EQ(raw.Auth(kAccessKey, kSecretKey), WireStatus::kOk);
  auto unlimited = d;  // no quota: the PUT must not evict anything ahead of its bytes
  unlimited.quota_bytes = 0;
  uint64_t rns = raw.Open(unlimited);
  std::string payload = raw.PutPayload(rns, {{Key('c', 0), "", Pattern(100, 3)}});
  FrameHeader h;
  h.op = Op::kPut;
  h.request_id = 1;
  h.payload_len = payload.size();
  std::string frame;
  proto::AppendFrameHeader(h, &frame);
  frame += payload.substr(0, payload.size() - 1);
  ASSERT_TRUE(raw.conn()->WriteAll(std::string_view(frame)).ok());
  Restart();
  auto c2 = Authed();
  uint64_t ns2 = c2->Open(d);
  EXPECT_EQ(c2->Lookup(ns2, {Key('c', 0)}), 0u);
  EXPECT_EQ(c2->Lookup(ns2, keys), 2u);
  EXPECT_EQ(c2->Lookup(ns2, {Key('b', 0)}), 1u);
}

}  // namespace
}  // namespace strata::kvcache

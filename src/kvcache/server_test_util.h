// Test helpers of the KV server tests: a blocking client written against
// proto/ only, and a fixture running a Server over a real ObjectEngine
// (in-memory file system and metadata store) on a loopback TCP socket.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/checksum.h"
#include "io/mem_fs.h"
#include "kvcache/proto/frame.h"
#include "kvcache/server.h"
#include "meta/kv_store.h"
#include "storage/plain_store.h"

namespace strata::kvcache::kvtest {

using proto::FrameHeader;
using proto::Op;
using proto::WireStatus;

inline constexpr char kAccessKey[] = "AKIAKVTEST";
inline constexpr char kSecretKey[] = "kv-secret-key";
inline constexpr char kOtherAccessKey[] = "AKIAOTHER";
inline constexpr char kOtherSecretKey[] = "other-secret";
inline constexpr char kOperatorAccessKey[] = "AKIAROOT";
inline constexpr char kOperatorSecretKey[] = "root-secret";

inline std::string Key(char chain, int pos) {
  std::string k(16, '\0');
  k[0] = chain;
  k[1] = static_cast<char>(pos);
  k[15] = 'k';
  return k;
}

inline std::string Pattern(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 9)) & 0xff);
  return s;
}

inline proto::NamespaceDescriptor Descriptor(uint64_t block_bytes, std::string salt = "tenant-a") {
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

// A frame: header (payload_len = declared_len, by default the payload's
// size) and payload. A declared length above the payload makes a frame cut short.
inline std::string FrameBytes(Op op, uint64_t request_id, std::string_view payload,
                              uint64_t declared_len = UINT64_MAX) {
  FrameHeader h;
  h.op = op;
  h.request_id = request_id;
  h.payload_len = declared_len == UINT64_MAX ? payload.size() : declared_len;
  std::string buf;
  proto::AppendFrameHeader(h, &buf);
  buf.append(payload);
  return buf;
}

struct Response {
  FrameHeader h;
  std::string payload;
};

// A blocking test client over proto/.
class Client {
 public:
  explicit Client(uint16_t port, const std::string& from = "") {
    auto c = ConnectTcp("127.0.0.1", port, from);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (c.ok()) conn_ = std::move(c).value();
  }
  // Over a connection made elsewhere (ConnectTls).
  explicit Client(std::unique_ptr<Connection> conn) : conn_(std::move(conn)) {}
  Connection* conn() { return conn_.get(); }
  bool connected() const { return conn_ != nullptr; }

  void Send(Op op, std::string_view payload, uint64_t rid) {
    ASSERT_TRUE(conn_->WriteAll(std::string_view(FrameBytes(op, rid, payload))).ok());
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
    std::string meta = {};
    std::optional<uint32_t> crc32c = std::nullopt;  // default: the data's
  };
  std::string PutPayload(uint64_t ns, const std::vector<Block>& blocks) {
    std::vector<proto::PutItem> items;
    for (const Block& b : blocks) {
      uint32_t crc = b.crc32c ? *b.crc32c : Crc32c(b.data.data(), b.data.size());
      items.push_back({b.key, b.parent, b.data.size(), crc, b.meta});
    }
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
    std::vector<std::string> metas;
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
      g.metas.push_back(r.payload.substr(off, res.meta_len));
      off += res.meta_len;
    }
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
  // Options of the next StartServer (tests adjust them first).
  ServerOptions options_ = [] {
    ServerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.sweep_interval_ms = 3600 * 1000;  // tests sweep by hand
    o.io_chunk_bytes = 64 * 1024;       // several chunks per large block
    o.is_operator = [](std::string_view ak) { return ak == kOperatorAccessKey; };
    return o;
  }();

  void StartServer(uint64_t default_quota = 0) {
    ServerOptions o = options_;
    o.default_quota_bytes = default_quota;
    o.clock_ns = [this] { return now_ns_.load(); };
    auto secrets = [](std::string_view ak) -> std::optional<std::string> {
      if (ak == kAccessKey) return std::string(kSecretKey);
      if (ak == kOtherAccessKey) return std::string(kOtherSecretKey);
      if (ak == kOperatorAccessKey) return std::string(kOperatorSecretKey);
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
  std::unique_ptr<Client> Authed(const std::string& from = "") {
    auto c = std::make_unique<Client>(server_->port(), from);
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

}  // namespace strata::kvcache::kvtest

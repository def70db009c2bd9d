// The KV server over a real ObjectEngine (in-memory file system and metadata
// store) and a loopback TCP socket, driven by a minimal client written
// against proto/ only (server_test_util.h). Connection handling: connections_test.cc.
#include "kvcache/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "common/checksum.h"
#include "common/encoding.h"
#include "kvcache/server_test_util.h"

namespace strata::kvcache {
namespace {

using namespace kvtest;  // NOLINT: the helpers of server_test_util.h
using proto::FrameHeader;
using proto::Op;
using proto::WireStatus;

TEST_F(KvServerTest, AuthSuccessAndFailure) {
  Client c(server_->port());
  EXPECT_EQ(c.Auth(kAccessKey, "wrong-secret"), WireStatus::kAuthFailed);
  // The challenge is single-use: AUTH without a new HELLO is refused.
  EXPECT_EQ(c.Call(Op::kAuth, std::string(32, 'x')).h.status, WireStatus::kInvalid);
  EXPECT_EQ(c.Auth("AKIAUNKNOWN", kSecretKey), WireStatus::kAuthFailed);
  EXPECT_EQ(c.Call(Op::kOpenNamespace, "").h.status, WireStatus::kDenied);
  // The right secret works on the same connection (2 failures: under the
  // limit of 3); then no second HELLO.
  EXPECT_EQ(c.Auth(kAccessKey, kSecretKey), WireStatus::kOk);
  EXPECT_EQ(c.Call(Op::kHello, proto::EncodeHelloRequest(kAccessKey)).h.status,
            WireStatus::kInvalid);
  EXPECT_NE(c.Open(Descriptor(64)), 0u);
  // A MAC over another nonce does not work either.
  Client d(server_->port());
  Response hello = d.Call(Op::kHello, proto::EncodeHelloRequest(kAccessKey));
  ASSERT_EQ(hello.h.status, WireStatus::kOk);
  std::string stale = proto::ComputeAuthMac(kSecretKey, std::string(32, '\0'), kAccessKey);
  EXPECT_EQ(d.Call(Op::kAuth, stale).h.status, WireStatus::kAuthFailed);
  EXPECT_EQ(d.Auth(kAccessKey, kSecretKey), WireStatus::kOk);
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
    // The connection dies mid-block.
    std::string frame =
        FrameBytes(Op::kPut, 1, payload.substr(0, payload.size() / 2), payload.size());
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

// A PUT frame's blocks are committed on the commit pool while the next one
// arrives (commit_pool.h): the reply still gives each block its own status,
// a key twice in one frame is stored once (the first), and a connection that
// dies mid-frame leaves the blocks before the broken one stored and indexed.
TEST_F(KvServerTest, FramesOfManyBlocksCommitEachBlockOnce) {
  constexpr size_t kBlock = 256 * 1024;  // file-backed: a data file synced per block
  auto d = Descriptor(kBlock);
  auto c = Authed();
  uint64_t ns = c->Open(d);
  std::vector<Client::Block> blocks;
  for (int i = 0; i < 20; ++i) blocks.push_back({Key('m', i), "", Pattern(kBlock, i)});  // > 16 in flight
  blocks[7].crc32c = 0x1234u;                                      // arrives damaged
  blocks.push_back({Key('m', 3), "", Pattern(kBlock, 99)});         // the same key again
  std::vector<WireStatus> want(21, WireStatus::kOk);
  want[7] = WireStatus::kBadChecksum;
  want[20] = WireStatus::kExists;
  EXPECT_EQ(c->Put(ns, blocks), want);
  for (int i = 0; i < 20; ++i) {
    if (i == 7) continue;
    EXPECT_EQ(c->GetAll(ns, Key('m', i)), Pattern(kBlock, i)) << i;
  }
  EXPECT_EQ(c->Lookup(ns, {Key('m', 7)}), 0u);
  EXPECT_EQ(ObjectCount(d), 19u);

  // The connection dies in the third block of a frame.
  std::vector<Client::Block> more;
  for (int i = 0; i < 4; ++i) more.push_back({Key('n', i), "", Pattern(kBlock, 50 + i)});
  std::string payload = c->PutPayload(ns, more);
  const size_t head = payload.size() - 4 * kBlock;
  {
    auto dying = Authed();
    uint64_t dns = dying->Open(d);
    ASSERT_EQ(dns, ns);  // the first handle of each connection
    std::string frame = FrameBytes(Op::kPut, 1, payload.substr(0, head + 2 * kBlock + 100),
                                   payload.size());
    ASSERT_TRUE(dying->conn()->WriteAll(std::string_view(frame)).ok());
  }
  bool indexed = false;
  for (int i = 0; i < 200 && !indexed; ++i) {  // the server notices the close asynchronously
    indexed = c->Lookup(ns, {Key('n', 0), Key('n', 1)}) == 2;
    if (!indexed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(indexed);
  EXPECT_EQ(c->GetAll(ns, Key('n', 1)), Pattern(kBlock, 51));
  EXPECT_EQ(c->Lookup(ns, {Key('n', 2)}), 0u);
  EXPECT_EQ(ObjectCount(d), 21u);
}

// Without commit threads (none configured, or none could be made) every
// block is committed before the next is read; the results are the same.
TEST_F(KvServerTest, PutWithoutCommitThreads) {
  server_.reset();
  options_.commit_threads = 0;
  StartServer();
  auto c = Authed();
  uint64_t ns = c->Open(Descriptor(4096));
  auto st = c->Put(ns, {{Key('z', 0), "", Pattern(4096, 1)},
                        {Key('z', 1), Key('z', 0), Pattern(4096, 2)},
                        {Key('z', 0), "", Pattern(4096, 3)}});
  EXPECT_EQ(st, (std::vector<WireStatus>{WireStatus::kOk, WireStatus::kOk, WireStatus::kExists}));
  EXPECT_EQ(c->GetAll(ns, Key('z', 0)), Pattern(4096, 1));
  EXPECT_EQ(c->Lookup(ns, {Key('z', 0), Key('z', 1)}), 2u);
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
    f[4] = 1;  // protocol v1: refused, in its own version so that a v1 client can read it
    ASSERT_TRUE(c.conn()->WriteAll(std::string_view(f)).ok());
    char reply[proto::kFrameHeaderBytes];
    ASSERT_TRUE(c.conn()->ReadFull(reply, sizeof(reply)).ok());
    FrameHeader rh;
    EXPECT_EQ(proto::DecodeFrameHeader(std::string_view(reply, sizeof(reply)), &rh),
              proto::HeaderCheck::kBadVersion);
    EXPECT_EQ(rh.version, 1);
    EXPECT_EQ(rh.status, WireStatus::kInvalid);
    EXPECT_EQ(rh.request_id, 9u);
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

// The audit trail's KvEviction records: one summary per namespace and
// interval, with the blocks and bytes each cause took; a client's DELETE is
// not an eviction, and an interval that evicted nothing reports nothing.
TEST_F(KvServerTest, EvictionSummariesCountBlocksAndBytesByCause) {
  std::vector<EvictionSummary> summaries;  // on_evictions runs where SummarizeEvictions is called
  options_.on_evictions = [&](const EvictionSummary& e) { summaries.push_back(e); };
  options_.eviction_summary_interval_ms = 3'600'000;  // only when the test asks
  server_.reset();
  StartServer();
  auto c = Authed();
  auto d = Descriptor(100);
  d.quota_bytes = 300;
  d.ttl_s = 10;
  uint64_t ns = c->Open(d);
  for (int i = 0; i < 5; ++i) {  // 5 PUTs into room for 3: 2 evicted for the quota
    now_ns_ += 1000;
    ASSERT_EQ(c->PutOne(ns, Key('a', i), std::string(100, 'a')), WireStatus::kOk);
  }
  EXPECT_EQ(c->KeysOp(Op::kDelete, ns, {Key('a', 4)}), std::vector<WireStatus>{WireStatus::kOk});
  server_->SummarizeEvictions();
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].bucket, proto::NamespaceBucket(proto::NamespaceDigest(d)));
  EXPECT_EQ(summaries[0].quota_blocks, 2u);
  EXPECT_EQ(summaries[0].quota_bytes, 200u);
  EXPECT_EQ(summaries[0].ttl_blocks, 0u);
  server_->SummarizeEvictions();  // nothing since
  EXPECT_EQ(summaries.size(), 1u);
  now_ns_ += 11'000'000'000ull;  // the 2 left are idle past the TTL
  server_->Sweep();
  server_->Stop();  // reports the last interval
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[1].quota_blocks, 0u);
  EXPECT_EQ(summaries[1].ttl_blocks, 2u);
  EXPECT_EQ(summaries[1].ttl_bytes, 200u);
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
  int served = 0;
  // Reads while the writer runs, then once more after it finished: that last
  // read must find the blocks still stored (a reader that only ever ran
  // before the first PUT — the writer may be that fast — would serve none).
  bool last = false;
  while (!last) {
    last = written.load() == kBlocks;
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

// The advisor's "idle → expire": every block goes but the pinned ones (and
// their ancestors), only if nothing touched the namespace after the time the
// evidence was taken; the blocks count as expired in the stats.
TEST_F(KvServerTest, ExpireNamespaceRemovesIdleBlocksUnlessAccessedSince) {
  auto c = Authed();
  auto d = Descriptor(64);
  uint64_t ns = c->Open(d);
  const std::string bucket = proto::NamespaceBucket(proto::NamespaceDigest(d));
  for (int i = 0; i < 3; ++i) {
    now_ns_ += 1000;
    ASSERT_EQ(c->PutOne(ns, Key('a', i), std::string(64, 'a'), i ? Key('a', i - 1) : ""),
              WireStatus::kOk);
  }
  now_ns_ += 1000;
  ASSERT_EQ(c->PutOne(ns, Key('b', 0), std::string(64, 'b')), WireStatus::kOk);
  ASSERT_EQ(c->PutOne(ns, Key('p', 0), std::string(64, 'p'), Key('b', 0)), WireStatus::kOk);
  EXPECT_EQ(c->KeysOp(Op::kPin, ns, {Key('p', 0)}, 60000), std::vector<WireStatus>{WireStatus::kOk});
  auto stats = server_->namespace_stats();
  ASSERT_EQ(stats.size(), 1u);
  const uint64_t seen = stats[0].last_access_ns;
  EXPECT_GE(seen, now_ns_);
  EXPECT_EQ(server_->ExpireNamespace("kv-0000000000000000", seen).status().code(),
            Code::kNotFound);
  // Read after the evidence was taken: refused, nothing removed.
  now_ns_ += 1000;
  EXPECT_EQ(c->GetAll(ns, Key('a', 2)), std::string(64, 'a'));
  // The server lets go of a block it served only after sending it; the next
  // request on the connection is handled after that (a block being read is
  // never evicted).
  EXPECT_EQ(c->Lookup(ns, {Key('a', 2)}), 1u);
  EXPECT_EQ(server_->ExpireNamespace(bucket, seen).status().code(), Code::kPreconditionFailed);
  EXPECT_EQ(ObjectCount(d), 5u);
  const uint64_t now_seen = server_->namespace_stats()[0].last_access_ns;
  auto r = server_->ExpireNamespace(bucket, now_seen);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->blocks, 3u);  // a0..a2; b0 stays as p0's parent, p0 is pinned
  EXPECT_EQ(r->bytes, 192u);
  EXPECT_EQ(r->blocks_left, 2u);
  EXPECT_EQ(c->Lookup(ns, {Key('a', 0)}), 0u);
  EXPECT_EQ(c->Lookup(ns, {Key('b', 0), Key('p', 0)}), 2u);
  EXPECT_EQ(ObjectCount(d), 2u);
  EXPECT_EQ(c->Stats(ns).evictions, 3u);
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
  auto unlimited = d;  // a large quota: the PUT must not evict anything ahead of its bytes
  unlimited.quota_bytes = 1ull << 40;  // (0 would keep the quota of 300 set above)
  uint64_t rns = raw.Open(unlimited);
  std::string payload = raw.PutPayload(rns, {{Key('c', 0), "", Pattern(100, 3)}});
  std::string frame =
      FrameBytes(Op::kPut, 1, payload.substr(0, payload.size() - 1), payload.size());
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

namespace strata::kvcache {
namespace {

// The tier's global cap holds across namespaces (the disk is shared with S3):
// a PUT that would pass it is refused TOO_LARGE, and room comes back when
// blocks go; every namespace gets the default quota when it names none.
TEST_F(KvServerTest, GlobalCapRefusesAcrossNamespacesAndDefaultQuotaApplies) {
  options_.max_total_bytes = 300;
  StartServer(/*default_quota=*/200);
  auto c = Authed();
  auto da = Descriptor(100), db = Descriptor(100);
  db.model_id = "another-model";
  uint64_t a = c->Open(da), b = c->Open(db);
  ASSERT_EQ(c->PutOne(a, Key('a', 0), std::string(100, 'a')), WireStatus::kOk);
  ASSERT_EQ(c->PutOne(a, Key('a', 1), std::string(100, 'a')), WireStatus::kOk);
  // The default quota (200) evicts within A instead of growing it.
  now_ns_ += 1000;
  ASSERT_EQ(c->PutOne(a, Key('a', 2), std::string(100, 'a')), WireStatus::kOk);
  EXPECT_EQ(c->Stats(a).bytes, 200u);
  ASSERT_EQ(c->PutOne(b, Key('b', 0), std::string(100, 'b')), WireStatus::kOk);
  // 300 stored in all: B's next block would pass the global cap.
  EXPECT_EQ(c->PutOne(b, Key('b', 1), std::string(100, 'b')), WireStatus::kTooLarge);
  EXPECT_EQ(ObjectCount(db), 1u);  // nothing of the refused block was stored
  EXPECT_EQ(c->KeysOp(Op::kDelete, a, {Key('a', 2)}), std::vector<WireStatus>{WireStatus::kOk});
  EXPECT_EQ(c->PutOne(b, Key('b', 1), std::string(100, 'b')), WireStatus::kOk);
}

}  // namespace
}  // namespace strata::kvcache

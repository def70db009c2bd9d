// Protocol v2 end to end through the server (server_test_util.h's client):
// block CRC32C carried from PUT to GET, per-block metadata, LOOKUP_EACH, the
// namespace manifest and the EVENTS stream.
#include <gtest/gtest.h>

#include "common/checksum.h"
#include "kvcache/server_test_util.h"

namespace strata::kvcache {
namespace {

using namespace kvtest;  // NOLINT: the helpers of server_test_util.h
using proto::Op;
using proto::WireStatus;

std::string LongKey(char c, int pos) { return Key(c, pos) + std::string(20, c); }  // 36 bytes

proto::OpenNamespaceResponse OpenWithManifest(Client& c, proto::NamespaceDescriptor d,
                                              std::string manifest) {
  d.manifest = std::move(manifest);
  std::string p;
  EXPECT_TRUE(proto::EncodeNamespaceDescriptor(d, &p));
  Response r = c.Call(Op::kOpenNamespace, p);
  EXPECT_EQ(r.h.status, WireStatus::kOk);
  proto::OpenNamespaceResponse o;
  EXPECT_TRUE(proto::DecodeOpenNamespaceResponse(r.payload, &o));
  return o;
}

TEST_F(KvServerTest, V2BlockWithAWrongCrcIsRefusedAndNeverVisible) {
  auto c = Authed();
  auto d = Descriptor(0);
  uint64_t ns = c->Open(d);
  std::string data = Pattern(200 * 1024, 1);  // file-backed
  uint32_t good = Crc32c(data.data(), data.size());
  Client::Block bad{LongKey('a', 0), "", data, "", good ^ 1};
  Client::Block ok{LongKey('b', 0), "", data};
  auto st = c->Put(ns, {bad, ok});
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0], WireStatus::kBadChecksum);
  EXPECT_EQ(st[1], WireStatus::kOk);
  EXPECT_EQ(c->Lookup(ns, {LongKey('a', 0)}), 0u);
  EXPECT_FALSE(ObjectBytes(d, LongKey('a', 0)).ok());  // not even through S3
  EXPECT_EQ(ObjectCount(d), 1u);
  // Stored with its CRC as the S3 checksum, and an ETag that is not an MD5.
  auto digest = proto::NamespaceDigest(d);
  auto rec = engine_->HeadObject(proto::NamespaceBucket(digest),
                                 proto::BlockObjectKey(digest, LongKey('b', 0)));
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->checksum_algorithm, "CRC32C");
  EXPECT_EQ(rec->checksum_value, ChecksumBase64(ChecksumAlgorithm::kCrc32c, data));
  char etag[16];
  std::snprintf(etag, sizeof(etag), "%08x-1", good);
  EXPECT_EQ(rec->etag, etag);
}

TEST_F(KvServerTest, V2GetCarriesTheCrcOfWholeBlocksAndTheMetadata) {
  auto c = Authed();
  auto d = Descriptor(0);
  uint64_t ns = c->Open(d);
  std::string small = Pattern(1000, 2), big = Pattern(300 * 1024, 3);
  ASSERT_EQ(c->Put(ns, {{LongKey('s', 0), "", small, "shape=[2,500];dtype=u8"},
                        {LongKey('g', 0), "", big}}),
            std::vector<WireStatus>(2, WireStatus::kOk));
  Client::Got g = c->Get(ns, {{LongKey('s', 0), 0, 0}, {LongKey('g', 0), 0, 0},
                              {LongKey('g', 0), 100, 50}, {LongKey('x', 0), 0, 0}});
  ASSERT_EQ(g.results.size(), 4u);
  EXPECT_EQ(g.data[0], small);
  EXPECT_EQ(g.metas[0], "shape=[2,500];dtype=u8");
  EXPECT_EQ(g.results[0].flags, proto::kGetCrcValid);
  EXPECT_EQ(g.results[0].crc32c, Crc32c(small.data(), small.size()));
  EXPECT_EQ(g.data[1], big);
  EXPECT_EQ(g.metas[1], "");
  EXPECT_EQ(g.results[1].crc32c, Crc32c(big.data(), big.size()));
  // A range carries no CRC (the stored one covers the whole block).
  EXPECT_EQ(g.data[2], big.substr(100, 50));
  EXPECT_EQ(g.results[2].flags, 0);
  EXPECT_EQ(g.results[3].status, WireStatus::kNotFound);
  EXPECT_EQ(g.results[3].meta_len, 0u);
  // Both survive a restart (rebuilt from the objects).
  Restart();
  c = Authed();
  ns = c->Open(d);
  g = c->Get(ns, {{LongKey('s', 0), 0, 0}, {LongKey('g', 0), 0, 0}});
  EXPECT_EQ(g.metas[0], "shape=[2,500];dtype=u8");
  EXPECT_EQ(g.results[0].crc32c, Crc32c(small.data(), small.size()));
  EXPECT_EQ(g.results[1].flags, proto::kGetCrcValid);
  EXPECT_EQ(g.results[1].crc32c, Crc32c(big.data(), big.size()));
}

TEST_F(KvServerTest, V2LookupEachAnswersEveryKeyWithoutSideEffects) {
  auto c = Authed();
  auto d = Descriptor(64);
  uint64_t ns = c->Open(d);
  for (int i : {0, 2, 3, 9}) ASSERT_EQ(c->PutOne(ns, LongKey('e', i), Pattern(64, i)), WireStatus::kOk);
  std::vector<std::string> keys;
  for (int i = 0; i < 10; ++i) keys.push_back(LongKey('e', i));
  std::vector<std::string_view> v(keys.begin(), keys.end());
  proto::NamespaceStats before = c->Stats(ns);
  Response r = c->Call(Op::kLookupEach, proto::EncodeKeysRequest(ns, v));
  ASSERT_EQ(r.h.status, WireStatus::kOk);
  std::vector<bool> present;
  ASSERT_TRUE(proto::DecodeLookupEachResponse(r.payload, keys.size(), &present));
  EXPECT_EQ(present, (std::vector<bool>{true, false, true, true, false, false, false, false, false,
                                         true}));
  proto::NamespaceStats after = c->Stats(ns);
  EXPECT_EQ(after.lookups, before.lookups + 1);
  EXPECT_EQ(after.hits, before.hits);  // not a read
  EXPECT_EQ(c->Call(Op::kLookupEach, proto::EncodeKeysRequest(999, v)).h.status,
            WireStatus::kNotFound);
}

TEST_F(KvServerTest, V2ManifestIsStoredByTheFirstOpenerAndComparedAfter) {
  auto d = Descriptor(64);
  auto a = Authed();
  auto o1 = OpenWithManifest(*a, d, R"({"block_size":16,"engine":"vllm"})");
  EXPECT_TRUE(o1.manifest_matches);
  EXPECT_EQ(o1.manifest, R"({"block_size":16,"engine":"vllm"})");
  auto b = Authed();
  auto o2 = OpenWithManifest(*b, d, R"({"block_size":32,"engine":"vllm"})");
  EXPECT_FALSE(o2.manifest_matches);  // the second engine sees the mismatch
  EXPECT_EQ(o2.manifest, o1.manifest);
  auto o3 = OpenWithManifest(*b, d, "");  // none offered: told what is stored
  EXPECT_TRUE(o3.manifest_matches);
  EXPECT_EQ(o3.manifest, o1.manifest);
  EXPECT_EQ(ObjectCount(d), 1u);  // the manifest object; it is not a block
  Restart();
  auto c = Authed();
  auto o4 = OpenWithManifest(*c, d, R"({"block_size":16,"engine":"vllm"})");
  EXPECT_TRUE(o4.manifest_matches);
  EXPECT_EQ(c->Stats(o4.handle).blocks, 0u);  // not indexed as a block
}

TEST_F(KvServerTest, V2EventsReportStoredAndRemovedBlocks) {
  auto c = Authed();
  auto d = Descriptor(64);
  uint64_t ns = c->Open(d);
  auto poll = [&](uint64_t since) {
    Response r = c->Call(Op::kEvents, proto::EncodeEventsRequest({ns, since, 100}));
    EXPECT_EQ(r.h.status, WireStatus::kOk);
    proto::EventsResponse e;
    EXPECT_TRUE(proto::DecodeEventsResponse(r.payload, &e));
    return e;
  };
  ASSERT_EQ(c->PutOne(ns, LongKey('z', 0), Pattern(64, 0)), WireStatus::kOk);
  proto::EventsResponse e = poll(0);  // the first poll starts the recording
  EXPECT_TRUE(e.events.empty());
  ASSERT_EQ(c->PutOne(ns, LongKey('c', 0), Pattern(64, 1)), WireStatus::kOk);
  ASSERT_EQ(c->PutOne(ns, LongKey('c', 1), Pattern(64, 2), LongKey('c', 0)), WireStatus::kOk);
  ASSERT_EQ(c->PutOne(ns, LongKey('c', 1), Pattern(64, 2), LongKey('c', 0)), WireStatus::kExists);
  e = poll(e.next);
  ASSERT_EQ(e.events.size(), 2u);  // EXISTS stores nothing
  EXPECT_EQ(e.events[0].kind, proto::EventKind::kStored);
  EXPECT_EQ(e.events[0].key, LongKey('c', 0));
  EXPECT_EQ(e.events[1].parent, LongKey('c', 0));
  uint64_t cursor = e.next;
  EXPECT_EQ(c->KeysOp(Op::kDelete, ns, {LongKey('c', 0)}), std::vector<WireStatus>{WireStatus::kOk});
  e = poll(cursor);
  ASSERT_EQ(e.events.size(), 2u);  // the block and its descendant
  for (const auto& ev : e.events) EXPECT_EQ(ev.kind, proto::EventKind::kRemoved);
  EXPECT_EQ(e.lost, 0u);
  EXPECT_TRUE(poll(e.next).events.empty());
}

}  // namespace
}  // namespace strata::kvcache

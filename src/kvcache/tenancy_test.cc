// Who may open a namespace and set its quota and TTL (kv-protocol.md,
// "Namespace descriptor").
#include <gtest/gtest.h>

#include <atomic>

#include "kvcache/server_test_util.h"

namespace strata::kvcache {
namespace {

using namespace kvtest;  // NOLINT: the helpers of server_test_util.h
using proto::Op;
using proto::WireStatus;

// n chain roots of 64 bytes, one clock tick apart (so eviction order is theirs).
void PutRoots(Client& c, uint64_t ns, char chain, int n, std::atomic<uint64_t>& now_ns) {
  for (int i = 0; i < n; ++i) {
    now_ns += 1000;
    ASSERT_EQ(c.PutOne(ns, Key(chain, i), std::string(64, chain)), WireStatus::kOk);
  }
}

TEST_F(KvServerTest, NamespaceSettingsBelongToTheOwner) {
  auto owner = Authed();
  auto d = Descriptor(64);
  d.quota_bytes = 3 * 64;
  d.ttl_s = 10;
  uint64_t ns = owner->Open(d);
  ASSERT_NE(ns, 0u);
  PutRoots(*owner, ns, 'a', 3, now_ns_);
  // Another identity cannot open it, so cannot change its quota either.
  Client stranger(server_->port());
  ASSERT_EQ(stranger.Auth(kOtherAccessKey, kOtherSecretKey), WireStatus::kOk);
  auto tiny = d;
  tiny.quota_bytes = 1;
  WireStatus why;
  EXPECT_EQ(stranger.Open(tiny, &why), 0u);
  EXPECT_EQ(why, WireStatus::kDenied);
  EXPECT_EQ(owner->Stats(ns).blocks, 3u);
  // Another connection of the owner that names no settings (0, 0) keeps them:
  // the quota still evicts...
  auto second = Authed();
  auto plain = d;
  plain.quota_bytes = 0;
  plain.ttl_s = 0;
  uint64_t ns2 = second->Open(plain);
  ASSERT_NE(ns2, 0u);
  PutRoots(*second, ns2, 'b', 1, now_ns_);
  proto::NamespaceStats s = second->Stats(ns2);
  EXPECT_EQ(s.blocks, 3u);
  EXPECT_EQ(s.evictions, 1u);
  // ...and the TTL still expires idle blocks.
  now_ns_ += 11'000'000'000ull;
  server_->Sweep();
  EXPECT_EQ(second->Stats(ns2).blocks, 0u);
}

TEST_F(KvServerTest, OperatorMayOpenAndSetAnyNamespace) {
  auto owner = Authed();
  auto d = Descriptor(64);
  uint64_t ns = owner->Open(d);
  PutRoots(*owner, ns, 'a', 4, now_ns_);
  Client op(server_->port());
  ASSERT_EQ(op.Auth(kOperatorAccessKey, kOperatorSecretKey), WireStatus::kOk);
  auto limited = d;
  limited.quota_bytes = 2 * 64;
  uint64_t ons = op.Open(limited);
  ASSERT_NE(ons, 0u);
  EXPECT_EQ(op.Lookup(ons, {Key('a', 0), Key('a', 1)}), 2u);  // the owner's blocks
  PutRoots(op, ons, 'o', 1, now_ns_);
  EXPECT_EQ(op.Stats(ons).blocks, 2u);  // the operator's quota applies
  // The bucket still belongs to the owner.
  auto bucket = engine_->GetBucket(proto::NamespaceBucket(proto::NamespaceDigest(d)));
  ASSERT_TRUE(bucket.ok());
  EXPECT_EQ(bucket->owner, kAccessKey);
}

}  // namespace
}  // namespace strata::kvcache

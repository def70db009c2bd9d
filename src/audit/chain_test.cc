// Tamper tests: build a trail through the audit log, change the metadata
// store behind its back, and check that verify names the first damage.
#include "audit/chain.h"

#include <gtest/gtest.h>

#include "audit/log.h"
#include "audit/record.h"
#include "meta/mem_store.h"

namespace strata::audit {
namespace {

constexpr char kKey[] = "0123456789abcdef0123456789abcdef";

class AuditChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kv_ = meta::NewMemStore();
    LogOptions o;
    o.key = kKey;
    o.checkpoint_every = 10;
    auto log = AuditLog::Open(kv_.get(), o);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(*log);
  }

  // `n` changes, one record each, sealed with checkpoints every 10 records
  // and one at the end.
  void Build(int n) {
    for (int i = 0; i < n; ++i) {
      Actor a;
      a.operation = "PutObject";
      a.identity = "AKID";
      a.bucket = "b";
      a.key = "k" + std::to_string(i);
      Scope scope(&a);
      meta::WriteBatch b;
      b.Put("Xdata" + std::to_string(i), "v");
      ASSERT_TRUE(log_->store()->Write(b, true).ok());
      if (i % 5 == 4) ASSERT_TRUE(log_->Flush().ok());
    }
    ASSERT_TRUE(log_->Flush(/*checkpoint=*/true).ok());
  }

  std::string Raw(const std::string& key) { return kv_->Get(key).value().value(); }
  void Put(const std::string& key, const std::string& value) {
    meta::WriteBatch b;
    b.Put(key, value);
    ASSERT_TRUE(kv_->Write(b, true).ok());
  }
  void Del(const std::string& key) {
    meta::WriteBatch b;
    b.Delete(key);
    ASSERT_TRUE(kv_->Write(b, true).ok());
  }

  std::unique_ptr<meta::KvStore> kv_;
  std::unique_ptr<AuditLog> log_;
};

TEST_F(AuditChainTest, AnUntouchedTrailVerifies) {
  Build(35);
  VerifyReport rep = log_->Verify();
  EXPECT_TRUE(rep.ok()) << rep.detail;
  EXPECT_EQ(rep.records, 35u);
  EXPECT_EQ(rep.gaps, 0u);
  EXPECT_EQ(rep.head_seq, 35u);
  EXPECT_EQ(rep.latest.seq, 35u);
  EXPECT_GE(rep.checkpoints, 4u);  // 10, 20, 30 (at least) and the final one
  EXPECT_EQ(rep.unsealed, 0u);
}

TEST_F(AuditChainTest, AFlippedByteIsAltered) {
  Build(20);
  std::string r = Raw(RecordKey(13));
  r[r.size() - 1] ^= 0x01;  // the last byte of the result ("OK"): still decodes
  Put(RecordKey(13), r);
  VerifyReport rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kAltered) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 13u);
}

TEST_F(AuditChainTest, ADeletedRecordIsRemoved) {
  Build(20);
  Del(RecordKey(5));
  VerifyReport rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kRemoved) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 5u);
}

TEST_F(AuditChainTest, ARecordDeletedWithItsHashIsRemoved) {
  Build(20);
  Del(RecordKey(5));
  Del(HashKey(5));
  VerifyReport rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kRemoved) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 5u);
}

TEST_F(AuditChainTest, SwappedRecordsAreReordered) {
  Build(20);
  const std::string a = Raw(RecordKey(8)), b = Raw(RecordKey(9));
  Put(RecordKey(8), b);
  Put(RecordKey(9), a);
  VerifyReport rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kReordered) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 8u);
}

TEST_F(AuditChainTest, ACutTailIsTruncated) {
  Build(25);
  for (uint64_t s = 21; s <= 25; ++s) {
    Del(RecordKey(s));
    Del(HashKey(s));
  }
  VerifyReport rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kTruncated) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 21u);
}

TEST_F(AuditChainTest, ACutTailWithItsCheckpointsAndSealStateIsStillTruncated) {
  Build(25);
  for (uint64_t s = 21; s <= 25; ++s) {
    Del(RecordKey(s));
    Del(HashKey(s));
    Del(CheckpointKey(s));
  }
  VerifyReport rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kTruncated) << rep.detail;  // the seal state still says 25
  Del(SealStateKey());
  rep = log_->Verify();
  // With the seal state gone too, nothing in the store remembers the tail:
  // the head is the last checkpoint the operator should have kept off the box.
  EXPECT_TRUE(rep.ok()) << rep.detail;
  EXPECT_EQ(rep.head_seq, 20u);
  EXPECT_EQ(rep.latest.seq, 20u);
}

TEST_F(AuditChainTest, ARewrittenChainIsCaughtByTheCheckpoint) {
  Build(20);
  // Alter record 3 and recompute every chain hash after it: the hashes agree
  // again, but checkpoint 10 signed the old chain.
  auto r = DecodeRecord(Raw(RecordKey(3))).value();
  r.identity = "someone-else";
  Put(RecordKey(3), EncodeRecord(r));
  std::string h = GenesisHash();
  for (uint64_t s = 1; s <= 20; ++s) {
    h = ChainHash(h, Raw(RecordKey(s)));
    Put(HashKey(s), h);
  }
  VerifyReport rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kCheckpoint) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 10u);
}

TEST_F(AuditChainTest, ACheckpointUnderAnotherKeyIsRejected) {
  Build(12);
  EXPECT_TRUE(Verify(*kv_, kKey).ok());
  VerifyReport rep = Verify(*kv_, "another key, sixteen bytes or more");
  EXPECT_EQ(rep.problem, Problem::kCheckpoint) << rep.detail;
}

TEST_F(AuditChainTest, AReplacedRecordIsAltered) {
  Build(12);
  auto r = DecodeRecord(Raw(RecordKey(4))).value();
  r.key = "something else";
  Put(RecordKey(4), EncodeRecord(r));  // well-formed, right seq, wrong bytes
  VerifyReport rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kAltered) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 4u);
}

TEST(AuditChainUnitTest, GapAndRecordHashesDiffer) {
  const std::string g = GenesisHash();
  EXPECT_EQ(g.size(), kHashBytes);
  EXPECT_NE(GapHash(g, 1), GapHash(g, 2));
  EXPECT_NE(ChainHash(g, "x"), ChainHash(ChainHash(g, ""), "x"));
  Checkpoint c{7, 99, std::string(32, 'h'), CheckpointMac(kKey, 7, 99, std::string(32, 'h'))};
  auto d = DecodeCheckpoint(7, EncodeCheckpoint(c));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->mac, c.mac);
  EXPECT_EQ(d->time_ns, 99);
  EXPECT_NE(CheckpointMac(kKey, 8, 99, c.hash), c.mac);
  EXPECT_FALSE(DecodeCheckpoint(7, "short").ok());
}

}  // namespace
}  // namespace strata::audit

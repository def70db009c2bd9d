// Tamper tests: build a trail through the audit log, change the metadata
// store behind its back, and check that verify names the first damage.
#include "audit/chain.h"

#include <gtest/gtest.h>

#include "audit/log.h"
#include "audit/query.h"
#include "audit/record.h"
#include "common/encoding.h"
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
      if (i % 5 == 4) {
        ASSERT_TRUE(log_->Flush().ok());
      }
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
  // The hash block holding `seq`: its first seq (0: none) and bytes.
  std::pair<uint64_t, std::string> BlockOf(uint64_t seq) {
    auto it = kv_->NewIterator();
    const std::string prefix = HashBlockPrefix();
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      uint64_t first = 0;
      SeqOfKey(it->key(), &first);
      if (first <= seq && seq < first + it->value().size() / kHashBytes) {
        return {first, std::string(it->value())};
      }
    }
    return {0, ""};
  }
  void SetHash(uint64_t seq, const std::string& h) {
    auto [first, block] = BlockOf(seq);
    ASSERT_NE(first, 0u);
    block.replace((seq - first) * kHashBytes, kHashBytes, h);
    Put(HashBlockKey(first), block);
  }
  // Takes seq's hash out of its block (the later ones move up a place).
  void DropHash(uint64_t seq) {
    auto [first, block] = BlockOf(seq);
    ASSERT_NE(first, 0u);
    block.erase((seq - first) * kHashBytes, kHashBytes);
    Put(HashBlockKey(first), block);
  }
  // Cuts the hashes from seq on.
  void CutHashesFrom(uint64_t seq) {
    auto [first, block] = BlockOf(seq);
    ASSERT_NE(first, 0u);
    block.resize((seq - first) * kHashBytes);
    Put(HashBlockKey(first), block);
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
  DropHash(5);
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
  for (uint64_t s = 21; s <= 25; ++s) Del(RecordKey(s));
  CutHashesFrom(21);
  VerifyReport rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kTruncated) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 21u);
}

TEST_F(AuditChainTest, ACutTailWithItsCheckpointsAndSealStateIsStillTruncated) {
  Build(25);
  for (uint64_t s = 21; s <= 25; ++s) {
    Del(RecordKey(s));
    Del(CheckpointKey(s));
  }
  CutHashesFrom(21);
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
    SetHash(s, h);
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

TEST_F(AuditChainTest, AFlippedHashByteIsAltered) {
  Build(20);
  auto [first, block] = BlockOf(7);
  ASSERT_EQ(first, 1u);
  block[6 * kHashBytes + 3] ^= 0x40;
  Put(HashBlockKey(first), block);
  VerifyReport rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kAltered) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 7u);
}

// 150 records fill two blocks of 64 and start a third; the sealer's passes
// (every 5 records here) rewrite the open block, and a reopened log goes on
// filling it.
TEST_F(AuditChainTest, HashesFillBlocksOfSixtyFourAcrossPassesAndRestarts) {
  Build(100);
  log_.reset();
  LogOptions o;
  o.key = kKey;
  o.checkpoint_every = 10;
  log_ = std::move(AuditLog::Open(kv_.get(), o).value());
  Build(50);
  EXPECT_EQ(BlockOf(1).first, 1u);
  EXPECT_EQ(BlockOf(64).first, 1u);
  EXPECT_EQ(BlockOf(65).first, 65u);
  EXPECT_EQ(BlockOf(128).first, 65u);
  EXPECT_EQ(BlockOf(150).first, 129u);
  EXPECT_EQ(BlockOf(150).second.size(), 22 * kHashBytes);
  std::string h = GenesisHash();
  for (uint64_t s = 1; s <= 150; ++s) h = ChainHash(h, Raw(RecordKey(s)));
  EXPECT_EQ(LoadChainHash(*kv_, 150).value().value(), h);
  EXPECT_FALSE(LoadChainHash(*kv_, 151).value().has_value());
  auto all = LoadChainHashes(*kv_, 0, 150);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->size(), 151u);
  EXPECT_EQ(all->front(), GenesisHash());
  EXPECT_EQ(all->back(), h);
  VerifyReport rep = log_->Verify();
  EXPECT_TRUE(rep.ok()) << rep.detail;
  EXPECT_EQ(rep.records, 150u);
  // A whole block gone: its first seq's hash is missing.
  Del(HashBlockKey(65));
  rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kRemoved) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 65u);
  EXPECT_FALSE(LoadChainHashes(*kv_, 60, 70).ok());
  // Emptied instead: the same, and the blocks after it are still read.
  Put(HashBlockKey(65), "");
  rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kRemoved) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 65u);
  EXPECT_EQ(LoadChainHash(*kv_, 150).value().value(), h);
  auto after = LoadChainHashes(*kv_, 129, 150);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->back(), h);
}

// A trail written before hash blocks and posting lists (one "Eh" hash and
// "Eb"/"Eu" entry per record, a 56-byte seal state) goes on in the new
// layout: verify walks both, queries find the records of both.
TEST_F(AuditChainTest, AnOlderTrailGoesOnInHashBlocks) {
  log_.reset();
  std::string h = GenesisHash();
  int64_t t = 1'000'000'000;
  for (uint64_t s = 1; s <= 30; ++s) {
    Record r;
    r.seq = s;
    r.time_ns = t++;
    r.identity = "AKID";
    r.operation = "PutObject";
    r.bucket = s % 2 ? "b" : "other";
    r.key = "old" + std::to_string(s);
    r.result = "OK";
    const std::string bytes = EncodeRecord(r);
    h = ChainHash(h, bytes);
    meta::WriteBatch b;
    b.Put(RecordKey(s), bytes);
    b.Put(HashKey(s), h);
    b.Put(BucketIndexKey(r.bucket, s), "");
    b.Put(IdentityIndexKey(r.identity, s), "");
    ASSERT_TRUE(kv_->Write(b, true).ok());
  }
  // Sealed up to 28: 29 and 30 were committed (with their old index entries)
  // but not chained when the old version stopped.
  std::string state;
  PutFixed64BE(&state, 28);
  std::string h28 = GenesisHash();
  for (uint64_t s = 1; s <= 28; ++s) h28 = ChainHash(h28, Raw(RecordKey(s)));
  state += h28;
  PutFixed64BE(&state, 0);
  PutFixed64BE(&state, 0);
  Del(HashKey(29));
  Del(HashKey(30));
  Put(SealStateKey(), state);

  LogOptions o;
  o.key = kKey;
  o.checkpoint_every = 10;
  log_ = std::move(AuditLog::Open(kv_.get(), o).value());
  Build(20);  // seqs 31..50, bucket "b"
  VerifyReport rep = log_->Verify();
  EXPECT_TRUE(rep.ok()) << rep.detail;
  EXPECT_EQ(rep.records, 50u);
  EXPECT_EQ(BlockOf(29).first, 29u);  // the first block starts where the old chain stopped
  EXPECT_EQ(LoadChainHash(*kv_, 28).value().value(), h28);
  QueryFilter f;
  f.bucket = "b";
  auto page = Query(*kv_, f);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  std::vector<uint64_t> seqs;
  for (const Record& r : page->records) seqs.push_back(r.seq);
  std::vector<uint64_t> want;
  for (uint64_t s = 1; s <= 29; s += 2) want.push_back(s);
  for (uint64_t s = 31; s <= 50; ++s) want.push_back(s);
  EXPECT_EQ(seqs, want);
  // Tampering with an old record is still named.
  std::string r3 = Raw(RecordKey(3));
  r3.back() ^= 1;
  Put(RecordKey(3), r3);
  rep = log_->Verify();
  EXPECT_EQ(rep.problem, Problem::kAltered) << rep.detail;
  EXPECT_EQ(rep.problem_seq, 3u);
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

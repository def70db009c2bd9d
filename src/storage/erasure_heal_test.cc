// ErasureDataStore: losing drives, bitrot and damaged or truncated shards, and
// heal refilling wiped, missing and replaced drives.
#include "storage/erasure_store_test_util.h"

#include <random>

namespace strata::storage::erasure_test {
namespace {

// Every subset of `size` drives out of n.
std::vector<std::vector<int>> Subsets(int n, int size) {
  std::vector<std::vector<int>> out;
  for (int mask = 0; mask < (1 << n); ++mask) {
    if (__builtin_popcount(mask) != size) continue;
    std::vector<int> s;
    for (int i = 0; i < n; ++i) {
      if (mask & (1 << i)) s.push_back(i);
    }
    out.push_back(s);
  }
  return out;
}

TEST_P(ErasureStoreTest, LoseAnyMDrivesThenHealThenLoseMOthers) {
  if (g_.m == 0) GTEST_SKIP() << "no redundancy";
  const size_t size = 5 * stripe() + 123;
  const std::string data = Pattern(size, 3);
  int next = 0;
  for (const auto& lost : Subsets(g_.n, g_.m)) {
    std::string id = Id(++next);
    ASSERT_TRUE(Write(id, data).ok());
    for (int d : lost) RemoveShard(d, id);
    healed_.clear();
    auto got = Read(id, size, 1000);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_TRUE(*got == data);
    ASSERT_EQ(healed_, std::vector<std::string>{id});

    auto heal = store_->Heal(id);
    ASSERT_TRUE(heal.ok()) << heal.status().ToString();
    EXPECT_FALSE(heal->was_healthy);
    EXPECT_FALSE(heal->unrecoverable);
    EXPECT_EQ(heal->shards_rebuilt, g_.m);
    EXPECT_EQ(heal->shards_failed, 0);
    auto again = store_->Heal(id);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->was_healthy);
    EXPECT_EQ(again->shards_rebuilt, 0);

    // Now lose m drives that were not the rebuilt ones (or overlap: any m).
    std::vector<int> others;
    for (int d = 0; d < g_.n && static_cast<int>(others.size()) < g_.m; ++d) {
      if (std::find(lost.begin(), lost.end(), d) == lost.end()) others.push_back(d);
    }
    for (int d : others) RemoveShard(d, id);
    healed_.clear();
    got = Read(id, size, stripe() + 3);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_TRUE(*got == data);
    EXPECT_EQ(healed_.size(), 1u);
  }
}

TEST_P(ErasureStoreTest, LosingMoreThanMDrivesIsAnErrorNotWrongBytes) {
  const size_t size = 2 * stripe() + 5;
  ASSERT_TRUE(Write(Id(1), Pattern(size, 1)).ok());
  for (int d = 0; d <= g_.m; ++d) RemoveShard(d, Id(1));
  auto got = Read(Id(1), size);
  if (g_.n == g_.m + 1) {  // nothing left at all
    EXPECT_EQ(got.status().code(), Code::kNotFound);
    return;
  }
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Code::kCorruption) << got.status().ToString();
  auto heal = store_->Heal(Id(1));
  ASSERT_TRUE(heal.ok());
  EXPECT_TRUE(heal->unrecoverable);
  EXPECT_EQ(heal->shards_rebuilt, 0);
}

TEST_P(ErasureStoreTest, BitrotInUpToMShardsPerStripeIsRepaired) {
  if (g_.m == 0) GTEST_SKIP() << "no redundancy";
  std::mt19937 rng(7);
  const size_t size = 5 * stripe() + 123;
  const std::string data = Pattern(size, 5);
  StripeLayout layout{size, static_cast<uint32_t>(g_.k), kBlock};
  for (int round = 0; round < 20; ++round) {
    std::string id = Id(100 + round);
    ASSERT_TRUE(Write(id, data).ok());
    // In every stripe, damage the blocks of up to m random shards.
    for (uint64_t s = 0; s < layout.stripes(); ++s) {
      std::vector<int> shards(g_.n);
      for (int i = 0; i < g_.n; ++i) shards[i] = i;
      std::shuffle(shards.begin(), shards.end(), rng);
      int count = 1 + static_cast<int>(rng() % g_.m);
      for (int j = 0; j < count; ++j) {
        uint32_t len = layout.BlockLen(s);
        // Block bytes or its CRC.
        size_t at = rng() % (len + kBlockCrcBytes);
        FlipByte(ShardPath(shards[j], id), BlockByte(ShardPath(shards[j], id), s, at));
      }
    }
    healed_.clear();
    for (size_t piece : {size_t{1} << 20, size_t{777}}) {
      auto got = Read(id, size, piece);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      ASSERT_TRUE(*got == data) << "round " << round;
    }
    EXPECT_FALSE(healed_.empty());
    auto heal = store_->Heal(id);
    ASSERT_TRUE(heal.ok());
    EXPECT_FALSE(heal->was_healthy);
    EXPECT_FALSE(heal->unrecoverable);
    EXPECT_GE(heal->shards_rebuilt, 1);
    auto again = store_->Heal(id);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(again->was_healthy) << "a second scrub finds nothing";
    // After heal, every shard is whole: lose any m and still read.
    for (int d = 0; d < g_.m; ++d) RemoveShard(g_.n - 1 - d, id);
    auto got = Read(id, size);
    ASSERT_TRUE(got.ok());
    ASSERT_TRUE(*got == data);
  }
}

TEST_P(ErasureStoreTest, BitrotInMoreThanMShardsOfAStripeIsCorruption) {
  const size_t size = 3 * stripe() + 10;
  const std::string data = Pattern(size, 6);
  ASSERT_TRUE(Write(Id(1), data).ok());
  // Stripe 1 loses m+1 blocks; stripes 0 and 2 stay readable.
  for (int d = 0; d <= g_.m; ++d) {
    FlipByte(ShardPath(d, Id(1)), BlockByte(ShardPath(d, Id(1)), 1, 17));
  }
  auto got = Read(Id(1), size);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Code::kCorruption) << got.status().ToString();
  auto r = store_->Open(Id(1), size);
  ASSERT_TRUE(r.ok());
  std::string buf(stripe(), '\0');
  auto n = (*r)->ReadAt(0, buf.data(), buf.size());
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(buf == data.substr(0, stripe()));
  n = (*r)->ReadAt(stripe() + 5, buf.data(), 10);
  EXPECT_EQ(n.status().code(), Code::kCorruption);
  n = (*r)->ReadAt(2 * stripe(), buf.data(), stripe());
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(buf.substr(0, *n) == data.substr(2 * stripe(), *n));
  auto heal = store_->Heal(Id(1));
  ASSERT_TRUE(heal.ok());
  EXPECT_TRUE(heal->unrecoverable);
}

TEST_P(ErasureStoreTest, DamagedHeadersAndFootersAreSurvivable) {
  if (g_.m == 0) GTEST_SKIP() << "no redundancy";
  const size_t size = stripe() + 3;
  const std::string data = Pattern(size, 8);
  ASSERT_TRUE(Write(Id(1), data).ok());
  FlipByte(ShardPath(0, Id(1)), 20);  // shard 0's header
  std::string p = ShardPath(g_.n - 1, Id(1));
  FlipByte(p, *mem_->FileSize(p) - 3);  // the last shard's footer
  // Even with m == 1: the footer is not needed to read the last shard's blocks.
  auto got = Read(Id(1), size);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
  auto ht = store_->ReadHeaderAndTrailer(Id(1));
  ASSERT_TRUE(ht.ok());
  EXPECT_EQ(ht->first.key, "key-" + Id(1));
  EXPECT_EQ(ht->second, "trailer");
  auto heal = store_->Heal(Id(1));
  ASSERT_TRUE(heal.ok());
  EXPECT_FALSE(heal->unrecoverable);
  EXPECT_EQ(heal->shards_rebuilt, 2);
  got = Read(Id(1), size);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == data);
  EXPECT_TRUE(store_->Heal(Id(1))->was_healthy);
}

TEST_P(ErasureStoreTest, TruncatedShardsAreNeverServed) {
  // A shard cut at every offset: reads return correct bytes or an error.
  const size_t size = 2 * stripe() + 33;
  const std::string data = Pattern(size, 4);
  ASSERT_TRUE(Write(Id(1), data).ok());
  const std::string path = ShardPath(0, Id(1));
  const std::string whole = Slurp(path);
  for (size_t cut = 0; cut < whole.size(); cut += (cut < 64 || whole.size() - cut < 64) ? 1 : 97) {
    Put(path, whole.substr(0, cut));
    auto got = Read(Id(1), size);
    if (g_.m > 0) {
      ASSERT_TRUE(got.ok()) << cut << ": " << got.status().ToString();
      ASSERT_TRUE(*got == data) << cut;
    } else {
      ASSERT_FALSE(got.ok()) << cut;
    }
  }
  Put(path, whole);
}

TEST_P(ErasureStoreTest, WipedDriveIsReformattedAndRefilledByHeal) {
  if (g_.m == 0) GTEST_SKIP();
  const size_t size = 4 * stripe() + 17;
  std::vector<std::string> datas;
  for (int i = 1; i <= 5; ++i) {
    datas.push_back(Pattern(size + i, i));
    ASSERT_TRUE(Write(Id(i), datas.back()).ok());
  }
  const int wiped = g_.n - 1;
  Wipe(drives_[wiped]);
  ASSERT_TRUE(Reopen().ok());
  auto drives = store_->Drives();
  EXPECT_EQ(drives[wiped].state, DriveState::kOnline);
  EXPECT_NE(drives[wiped].detail.find("formatted"), std::string::npos) << drives[wiped].detail;
  EXPECT_EQ(drives[wiped].shard_files, 0u);
  std::string format = Slurp(drives_[wiped] + "/format");
  EXPECT_NE(format.find("position=" + std::to_string(wiped) + "\n"), std::string::npos);
  for (int i = 1; i <= 5; ++i) {
    auto got = Read(Id(i), size + i);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == datas[i - 1]);
  }
  EXPECT_EQ(healed_.size(), 5u);
  for (int i = 1; i <= 5; ++i) {
    auto heal = store_->Heal(Id(i));
    ASSERT_TRUE(heal.ok());
    EXPECT_EQ(heal->shards_rebuilt, 1);
  }
  EXPECT_EQ(store_->Drives()[wiped].shard_files, 5u);
  // A subsequent loss of m other drives loses nothing.
  for (int i = 1; i <= 5; ++i) {
    for (int d = 0; d < g_.m; ++d) RemoveShard(d, Id(i));
    auto got = Read(Id(i), size + i);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == datas[i - 1]);
  }
}

TEST_P(ErasureStoreTest, MissingDriveKeepsServingWithQuorum) {
  if (g_.m == 0) GTEST_SKIP();
  const std::string data = Pattern(3 * stripe() + 2, 1);
  ASSERT_TRUE(Write(Id(1), data).ok());
  // Drive 0's directory is gone (an unmounted disk): it is not recreated.
  auto missing = drives_;
  missing[0] = "/gone/d0";
  PoolOptions o = Options();
  o.drives = missing;
  ASSERT_TRUE(Reopen(o).ok());
  auto drives = store_->Drives();
  EXPECT_EQ(drives[0].state, DriveState::kMissing);
  EXPECT_NE(drives[0].detail.find("does not exist"), std::string::npos) << drives[0].detail;
  EXPECT_FALSE(mem_->FileExists("/gone/d0"));
  auto got = Read(Id(1), data.size());
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == data);
  healed_.clear();
  Status st = Write(Id(2), data);
  if (WritableWith(1)) {  // writes still reach the quorum
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(healed_, std::vector<std::string>{Id(2)});
    auto heal = store_->Heal(Id(2));
    ASSERT_TRUE(heal.ok());
    EXPECT_EQ(heal->shards_failed, 1);
    EXPECT_EQ(heal->shards_rebuilt, 0);
    got = Read(Id(2), data.size());
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(*got == data);
  } else {  // read-only: k drives serve reads, writes are refused
    EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
    EXPECT_NE(st.message().find("/gone/d0"), std::string::npos) << st.ToString();
  }
  // m missing: still readable (read-only for m >= 1 as k < k+1).
  for (int d = 0; d < g_.m; ++d) o.drives[d] = "/gone/d" + std::to_string(d);
  ASSERT_TRUE(Reopen(o).ok());
  got = Read(Id(1), data.size());
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == data);
  EXPECT_EQ(Write(Id(3), data).code(), Code::kUnavailable);
  // Fewer than k: the pool refuses to open, naming the drives.
  o.drives[g_.m] = "/gone/d" + std::to_string(g_.m);
  st = Reopen(o);
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("/gone/d0"), std::string::npos);
}

TEST_P(ErasureStoreTest, ReplacedDriveIsFormattedAndRefilled) {
  if (g_.m == 0) GTEST_SKIP();
  const std::string data = Pattern(3 * stripe() + 2, 1);
  ASSERT_TRUE(Write(Id(1), data).ok());
  PoolOptions o = Options();
  o.drives[0] = "/new/d0";  // drive 0 died; a new, empty one takes its place
  ASSERT_TRUE(Reopen(o).ok());
  EXPECT_EQ(store_->Drives()[0].state, DriveState::kMissing);
  ASSERT_TRUE(mem_->CreateDirs("/new/d0").ok());
  ASSERT_TRUE(Reopen(o).ok());
  EXPECT_EQ(store_->Drives()[0].state, DriveState::kOnline);
  auto heal = store_->Heal(Id(1));
  ASSERT_TRUE(heal.ok());
  EXPECT_EQ(heal->shards_rebuilt, 1);
  EXPECT_TRUE(mem_->FileExists("/new/d0/shards/" + Id(1).substr(0, 2) + "/" + Id(1)));
  for (int d = 1; d <= g_.m; ++d) RemoveShard(d, Id(1));
  auto got = Read(Id(1), data.size());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
}

// A degraded read reads each block it needs once: with a data shard lost,
// the blocks read to serve a stripe are also the sources that rebuild the
// lost one, not read a second time, and no parity block is read beyond the
// ones each stripe needs (k blocks a stripe, as when healthy). The reads are
// one block per ReadAt, as the server's read-ahead asks for them.
TEST_P(ErasureStoreTest, DegradedReadsReadEachBlockOnce) {
  if (g_.m == 0) GTEST_SKIP() << "no redundancy";
  const size_t stripes = 5;
  const size_t size = stripes * stripe();
  const std::string data = Pattern(size, 9);
  const std::string id = Id(77);
  ASSERT_TRUE(Write(id, data).ok());

  uint64_t before = fault_->BytesRead("");
  auto got = Read(id, size, kBlock);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(*got == data);
  const uint64_t healthy = fault_->BytesRead("") - before;

  RemoveShard(g_.k - 1, id);  // the last data block of every stripe
  before = fault_->BytesRead("");
  got = Read(id, size, kBlock);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(*got == data);
  const uint64_t degraded = fault_->BytesRead("") - before;
  // Reading the k-1 blocks before the lost one again would cost
  // (k-1) x stripes blocks more; one block of slack covers a parity shard's
  // header read where the lost data shard's was not.
  EXPECT_LE(degraded, healthy + kBlock)
      << "healthy read " << healthy << " bytes, degraded " << degraded << " ("
      << stripes << " stripes of " << g_.k << " blocks of " << kBlock << ")";
}

// A heal that knows its work before reading a block (a shard file gone, as
// after a lost drive) reads each surviving block once: verifying a block and
// using it to rebuild the lost one are one read, not a verify pass over every
// shard followed by a rebuild pass over k of them.
TEST_P(ErasureStoreTest, HealOfALostShardReadsEachSurvivingBlockOnce) {
  if (g_.m == 0) GTEST_SKIP() << "no redundancy";
  const size_t stripes = 6;
  const std::string data = Pattern(stripes * stripe(), 21);
  const std::string id = Id(81);
  ASSERT_TRUE(Write(id, data).ok());
  RemoveShard(0, id);
  const uint64_t before = fault_->BytesRead("");
  auto heal = store_->Heal(id);
  ASSERT_TRUE(heal.ok()) << heal.status().ToString();
  EXPECT_EQ(heal->shards_rebuilt, 1);
  const uint64_t read = fault_->BytesRead("") - before;
  // n - 1 shards of `stripes` blocks with their CRCs, plus the reads of each
  // shard's header and footer (a block each at most). Two passes read k more
  // blocks a stripe.
  const uint64_t once = (g_.n - 1) * stripes * (kBlock + kBlockCrcBytes);
  EXPECT_LE(read, once + (g_.n - 1) * 2 * kBlock) << "read " << read << ", once " << once;
  for (int d = 1; d <= g_.m; ++d) RemoveShard(d, id);  // the rebuilt shard must serve
  auto got = Read(id, data.size(), 1000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
}

// The one-pass heal meets a bad block in a shard it took for good, half-way:
// that shard is rebuilt too, from its first stripe, and both serve after.
TEST_P(ErasureStoreTest, HealMeetingBitrotHalfWayRebuildsThatShardToo) {
  if (g_.m < 2) GTEST_SKIP() << "needs two shards of redundancy";
  const size_t stripes = 6;
  const std::string data = Pattern(stripes * stripe(), 22);
  const std::string id = Id(82);
  ASSERT_TRUE(Write(id, data).ok());
  RemoveShard(0, id);
  FlipByte(ShardPath(1, id), BlockByte(ShardPath(1, id), 4, 9));
  auto heal = store_->Heal(id);
  ASSERT_TRUE(heal.ok()) << heal.status().ToString();
  EXPECT_FALSE(heal->unrecoverable);
  EXPECT_EQ(heal->shards_rebuilt, 2);
  EXPECT_EQ(heal->shards_failed, 0);
  auto again = store_->Heal(id);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->was_healthy);
  // Only shards 0 and 1 and k - 2 others left: the rebuilt ones must be whole.
  for (int d = 2; d < 2 + g_.m; ++d) RemoveShard(d, id);
  auto got = Read(id, data.size(), 1000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
  for (int d = 0; d < g_.n; ++d) EXPECT_FALSE(mem_->FileExists(ShardPath(d, id) + ".heal"));
}

// The drive error counters see each bad block once, also when the one-pass
// heal gives up half-way and the two passes read everything again: shard 1
// (bad footer, so rebuilt from the start, and a bad block in stripe 0) counts
// the same as in a heal that never falls back.
TEST_P(ErasureStoreTest, AHealThatFallsBackCountsEachBadBlockOnce) {
  if (g_.m < 2) GTEST_SKIP() << "needs two shards of redundancy";
  const std::string data = Pattern(6 * stripe(), 23);
  auto corrupt_counted_by_heal = [&](const std::string& id, bool fall_back) {
    EXPECT_TRUE(Write(id, data).ok());
    RemoveShard(0, id);
    const std::string p = ShardPath(1, id);
    FlipByte(p, *mem_->FileSize(p) - 3);  // its footer
    FlipByte(p, BlockByte(p, 0, 5));
    if (fall_back) FlipByte(ShardPath(2, id), BlockByte(ShardPath(2, id), 3, 7));
    const uint64_t before = store_->DriveErrorCounts()[1].corrupt;
    auto heal = store_->Heal(id);
    EXPECT_TRUE(heal.ok() && !heal->unrecoverable);
    EXPECT_EQ(heal->shards_rebuilt, fall_back ? 3 : 2);
    for (int d = 3; d < 3 + g_.m; ++d) RemoveShard(d, id);  // the rebuilt ones must serve
    auto got = Read(id, data.size(), 1000);
    EXPECT_TRUE(got.ok() && *got == data) << got.status().ToString();
    return store_->DriveErrorCounts()[1].corrupt - before;
  };
  const uint64_t once = corrupt_counted_by_heal(Id(83), false);
  EXPECT_GE(once, 1u);
  EXPECT_EQ(corrupt_counted_by_heal(Id(84), true), once);
}

// The one-pass heal with a drive offline: it rebuilds the missing shard on an
// online drive and reports the offline drive's as failed; with more lost than
// m it is unrecoverable and, as the two passes report it, nothing failed to
// be written.
TEST_P(ErasureStoreTest, OnePassHealWithADriveOffline) {
  if (g_.m < 2) GTEST_SKIP() << "needs two shards of redundancy";
  const std::string data = Pattern(4 * stripe() + 9, 24);
  ASSERT_TRUE(Write(Id(85), data).ok());
  ASSERT_TRUE(Write(Id(86), data).ok());
  PoolOptions o = Options();
  o.drives[0] = "/gone/d0";
  ASSERT_TRUE(Reopen(o).ok());
  RemoveShard(1, Id(85));
  auto heal = store_->Heal(Id(85));
  ASSERT_TRUE(heal.ok()) << heal.status().ToString();
  EXPECT_FALSE(heal->unrecoverable);
  EXPECT_EQ(heal->shards_rebuilt, 1);
  EXPECT_EQ(heal->shards_failed, 1);
  for (int d = 1; d <= g_.m; ++d) RemoveShard(d, Id(86));  // with drive 0: m + 1 lost
  heal = store_->Heal(Id(86));
  ASSERT_TRUE(heal.ok()) << heal.status().ToString();
  EXPECT_TRUE(heal->unrecoverable);
  EXPECT_EQ(heal->shards_rebuilt, 0);
  EXPECT_EQ(heal->shards_failed, 0);
  for (int d = 1; d <= g_.m; ++d) EXPECT_FALSE(mem_->FileExists(ShardPath(d, Id(86)) + ".heal"));
  // Drive 0 back, and two shards other than the rebuilt one gone: it serves.
  ASSERT_TRUE(Reopen(Options()).ok());
  for (int d = 2; d < 2 + g_.m; ++d) RemoveShard(d, Id(85));
  auto got = Read(Id(85), data.size(), 1000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
}

}  // namespace
}  // namespace strata::storage::erasure_test

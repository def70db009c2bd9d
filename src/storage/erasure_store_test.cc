// ErasureDataStore: writes and reads of every size, ranged reads, torn writes,
// failing drives, crashes, listing and removal (fixture: erasure_store_test_util.h;
// heal: erasure_heal_test.cc; open and formats: erasure_format_test.cc).
#include "storage/erasure_store_test_util.h"

#include <atomic>
#include <set>
#include <thread>

namespace strata::storage::erasure_test {
namespace {

TEST_P(ErasureStoreTest, RoundTripOfEverySize) {
  EXPECT_EQ(store_->k(), g_.k);
  EXPECT_EQ(store_->m(), g_.m);
  EXPECT_EQ(store_->inline_max_bytes(), 0u);
  int i = 0;
  for (size_t size : Sizes()) {
    std::string id = Id(++i);
    std::string data = Pattern(size, i);
    for (size_t piece : {size_t{1000}, size_t{1}, kBlock, stripe() + 7}) {
      if (piece == 1 && size > 3 * kBlock) continue;  // keep it fast
      ASSERT_TRUE(Write(id, data, piece).ok()) << size;
      for (size_t read_piece : {size_t{1} << 20, size_t{1000}, kBlock, size_t{7}}) {
        auto got = Read(id, size, read_piece);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        ASSERT_TRUE(*got == data) << "size " << size << " piece " << piece;
      }
      ASSERT_TRUE(store_->Remove(id).ok());
    }
    // Every shard file has the same length; the trailer is recoverable.
    ASSERT_TRUE(Write(id, data).ok());
    uint64_t len0 = *mem_->FileSize(ShardPath(0, id));
    for (int d = 1; d < g_.n; ++d) EXPECT_EQ(*mem_->FileSize(ShardPath(d, id)), len0);
    auto ht = store_->ReadHeaderAndTrailer(id);
    ASSERT_TRUE(ht.ok());
    EXPECT_EQ(ht->second, "trailer");
  }
  EXPECT_TRUE(healed_.empty());
}

TEST_P(ErasureStoreTest, ShardSizesFollowTheLayout) {
  std::string id = Id(1);
  size_t size = 5 * stripe() + 123;
  ASSERT_TRUE(Write(id, Pattern(size, 1), 1000, "T").ok());
  StripeLayout layout{size, static_cast<uint32_t>(g_.k), kBlock};
  size_t want = HeaderLen(ShardPath(0, id)) + layout.ShardDataBytes() + 1 + kFooterFixed;
  EXPECT_EQ(*mem_->FileSize(ShardPath(0, id)), want);
  // Data shard 0's first block is the object's first kBlock bytes, verbatim.
  std::string shard = Slurp(ShardPath(0, id));
  EXPECT_EQ(shard.substr(HeaderLen(ShardPath(0, id)), kBlock), Pattern(size, 1).substr(0, kBlock));
}

TEST_P(ErasureStoreTest, RangedReadsAtEveryInterestingOffset) {
  const size_t size = 5 * stripe() + 123;
  const std::string data = Pattern(size, 9);
  ASSERT_TRUE(Write(Id(1), data).ok());
  std::set<uint64_t> offsets = {0, size - 1, size - 123, size - 124};
  for (uint64_t b = 0; b <= size; b += kBlock) {
    for (int64_t d : {-1, 0, 1}) {
      if (static_cast<int64_t>(b) + d >= 0 && b + d < size) offsets.insert(b + d);
    }
  }
  auto check = [&](const char* what) {
    auto r = store_->Open(Id(1), size);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    for (uint64_t off : offsets) {
      for (size_t len : {size_t{1}, size_t{100}, kBlock, stripe(), size_t{3 * stripe() + 5}}) {
        std::string buf(len, '\0');
        auto n = (*r)->ReadAt(off, buf.data(), len);
        ASSERT_TRUE(n.ok()) << what << ": " << n.status().ToString();
        size_t want = std::min<uint64_t>(len, size - off);
        ASSERT_EQ(*n, want);
        ASSERT_TRUE(buf.compare(0, want, data, off, want) == 0)
            << what << " off " << off << " len " << len;
      }
    }
  };
  check("healthy");
  if (g_.m == 0) return;
  // The same with the first m data shards gone (reconstruction on every read).
  for (int d = 0; d < g_.m; ++d) RemoveShard(d, Id(1));
  check("degraded");
  EXPECT_EQ(std::count(healed_.begin(), healed_.end(), Id(1)), 1) << "once per reader";
}

TEST_P(ErasureStoreTest, TornShardWritesFailOrKeepQuorum) {
  const size_t size = 2 * stripe() + 100;
  const std::string data = Pattern(size, 2);
  // Appends per shard: header, then block + crc per stripe (3 stripes), footer.
  const int appends = 1 + 2 * 3 + 1;
  int next = 0;
  for (int skip = 0; skip < appends; ++skip) {
    for (long torn : {0L, 1L, 3L, 100L, static_cast<long>(kBlock) - 1, 100000L}) {
      std::string id = Id(++next);
      fault_->ClearRules();
      fault_->AddRule({io::FaultOp::kAppend, "/d0/", IOError("torn"), skip, 1, torn});
      Status st = Write(id, data);
      fault_->ClearRules();
      if (!WritableWith(1)) {
        EXPECT_FALSE(st.ok());
        EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
        EXPECT_EQ(store_->Open(id, size).status().code(), Code::kNotFound);
        continue;
      }
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_FALSE(mem_->FileExists(ShardPath(0, id)));
      EXPECT_FALSE(mem_->FileExists(ShardPath(0, id) + ".part"));
      mem_->SimulateCrash();
      auto got = Read(id, size);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      ASSERT_TRUE(*got == data);
    }
  }
  // Torn on every drive: the write fails and leaves nothing behind.
  fault_->AddRule({io::FaultOp::kAppend, "", IOError("torn"), 3, -1, 5});
  std::string id = Id(++next);
  EXPECT_FALSE(Write(id, data).ok());
  fault_->ClearRules();
  EXPECT_EQ(store_->Open(id, size).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->Remove(id).code(), Code::kNotFound);
}

TEST_P(ErasureStoreTest, SmallShardTornAtEveryOffset) {
  // A 10-byte object: every append of every shard torn at every byte, with a
  // crash afterwards; then every drive's shards of a committed object cut at
  // every byte. Never wrong bytes.
  const std::string data = Pattern(10, 77);
  const int appends = 4;  // header, block, crc, footer
  int next = 0;
  for (int drive : std::set<int>{0, g_.n - 1}) {  // a data shard and a parity shard
    for (int skip = 0; skip < appends; ++skip) {
      for (long torn = 0; torn < (skip == 0 ? 120 : 40); ++torn) {  // header ~100 bytes
        std::string id = Id(++next);
        fault_->AddRule({io::FaultOp::kAppend, "/d" + std::to_string(drive) + "/",
                         IOError("torn"), skip, 1, torn});
        Status st = Write(id, data, 3);
        fault_->ClearRules();
        mem_->SimulateCrash();
        auto got = Read(id, data.size(), 4);
        if (st.ok()) {
          ASSERT_TRUE(WritableWith(1));
          ASSERT_TRUE(got.ok()) << got.status().ToString();
          ASSERT_TRUE(*got == data);
        } else {
          ASSERT_FALSE(WritableWith(1));
          ASSERT_EQ(got.status().code(), Code::kNotFound) << got.status().ToString();
        }
      }
    }
  }
}

TEST_P(ErasureStoreTest, EioOnOneDriveKeepsWritesWhileQuorumHolds) {
  const size_t size = 3 * stripe() + 1;
  const std::string data = Pattern(size, 11);
  for (io::FaultOp op : {io::FaultOp::kCreate, io::FaultOp::kAppend, io::FaultOp::kSync,
                         io::FaultOp::kRename, io::FaultOp::kSyncDir}) {
    std::string id = Id(static_cast<int>(op) + 1);
    fault_->ClearRules();
    fault_->AddRule({op, "/d" + std::to_string(g_.n - 1) + "/", IOError("EIO"), 0, -1, -1});
    healed_.clear();
    Status st = Write(id, data);
    fault_->ClearRules();
    if (!WritableWith(1)) {
      EXPECT_EQ(st.code(), Code::kUnavailable) << st.ToString();
      EXPECT_EQ(store_->Remove(id).code(), Code::kNotFound) << "nothing left behind";
      continue;
    }
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(healed_, std::vector<std::string>{id}) << "a degraded write is queued for heal";
    EXPECT_FALSE(mem_->FileExists(ShardPath(g_.n - 1, id)));
    auto got = Read(id, size);
    ASSERT_TRUE(got.ok());
    ASSERT_TRUE(*got == data);
    auto heal = store_->Heal(id);
    ASSERT_TRUE(heal.ok());
    EXPECT_EQ(heal->shards_rebuilt, 1);
  }
}

TEST_P(ErasureStoreTest, TooManyFailingDrivesIsUnavailableOrFull) {
  int first_failing = 1;
  while (WritableWith(first_failing)) ++first_failing;
  const size_t size = 2 * stripe();
  for (int failing = first_failing; failing <= g_.n; ++failing)
  for (bool full : {false, true}) {
    fault_->ClearRules();
    for (int d = 0; d < failing; ++d) {
      Status err = full ? ResourceExhausted("ENOSPC") : IOError("EIO");
      fault_->AddRule({io::FaultOp::kAppend, "/d" + std::to_string(d) + "/", err, 1, -1, -1});
    }
    std::string id = Id(failing * 2 + (full ? 1 : 0));
    Status st = Write(id, Pattern(size, 1));
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), full ? Code::kResourceExhausted : Code::kUnavailable) << st.ToString();
    EXPECT_NE(st.message().find("write quorum not reached"), std::string::npos);
    fault_->ClearRules();
    EXPECT_EQ(store_->Remove(id).code(), Code::kNotFound) << "nothing left behind";
  }
}

TEST_P(ErasureStoreTest, ReadEioOnOneDriveIsReconstructed) {
  if (g_.m == 0) GTEST_SKIP();
  const size_t size = 3 * stripe() + 1;
  const std::string data = Pattern(size, 12);
  ASSERT_TRUE(Write(Id(1), data).ok());
  fault_->AddRule({io::FaultOp::kRead, "/d0/", IOError("EIO"), 0, -1, -1});
  auto got = Read(Id(1), size);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
  EXPECT_EQ(healed_.size(), 1u);
}

TEST_P(ErasureStoreTest, CrashAfterFinishKeepsDataAndBeforeFinishKeepsNothing) {
  const size_t size = 2 * stripe() + 9;
  const std::string data = Pattern(size, 13);
  ASSERT_TRUE(Write(Id(1), data).ok());
  auto w = store_->Create(Id(2), Header("k2"));
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append(data).ok());
  mem_->SimulateCrash();
  w->reset();
  ASSERT_TRUE(Reopen().ok());
  auto got = Read(Id(1), size);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == data);
  EXPECT_EQ(store_->Open(Id(2), size).status().code(), Code::kNotFound);
  auto ids = store_->ListIds();
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, std::vector<std::string>{Id(1)});
}

TEST_P(ErasureStoreTest, ListIdsAndHeaderTrailerRoundTrip) {
  std::vector<std::string> want;
  for (int i = 1; i <= 10; ++i) {
    std::string id = Id(i);
    want.push_back(id);
    auto w = store_->Create(id, DataHeader{"bucket", "key/" + std::to_string(i), "up" + id,
                                           static_cast<uint32_t>(i), 1000u + i});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(Pattern(i * 1000, i)).ok());
    ASSERT_TRUE((*w)->Finish("record-" + std::to_string(i)).ok());
  }
  std::sort(want.begin(), want.end());
  if (g_.m > 0) RemoveShard(0, Id(3));  // still listed through the other drives
  auto ids = store_->ListIds();
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, want);
  for (int i = 1; i <= 10; ++i) {
    auto ht = store_->ReadHeaderAndTrailer(Id(i));
    ASSERT_TRUE(ht.ok()) << ht.status().ToString();
    EXPECT_EQ(ht->first.bucket, "bucket");
    EXPECT_EQ(ht->first.key, "key/" + std::to_string(i));
    EXPECT_EQ(ht->first.upload_id, "up" + Id(i));
    EXPECT_EQ(ht->first.part_number, static_cast<uint32_t>(i));
    EXPECT_EQ(ht->first.version_stamp, 1000u + i);
    EXPECT_EQ(ht->second, "record-" + std::to_string(i));
  }
  EXPECT_EQ(store_->ReadHeaderAndTrailer(Id(99)).status().code(), Code::kNotFound);
  auto drives = store_->Drives();
  ASSERT_EQ(static_cast<int>(drives.size()), g_.n);
  for (int d = 0; d < g_.n; ++d) {
    EXPECT_EQ(drives[d].state, DriveState::kOnline);
    EXPECT_EQ(drives[d].position, d);
    EXPECT_EQ(drives[d].shard_files, (d == 0 && g_.m > 0) ? 9u : 10u);
  }
}

TEST_P(ErasureStoreTest, RemoveDeletesEveryShard) {
  ASSERT_TRUE(Write(Id(1), Pattern(5000, 1)).ok());
  if (g_.n > 1) RemoveShard(1, Id(1));
  ASSERT_TRUE(store_->Remove(Id(1)).ok());
  for (int d = 0; d < g_.n; ++d) EXPECT_FALSE(mem_->FileExists(ShardPath(d, Id(1))));
  EXPECT_EQ(store_->Remove(Id(1)).code(), Code::kNotFound);
  EXPECT_EQ(store_->Heal(Id(1)).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->Create("../x", {}).status().code(), Code::kInvalidArgument);
}

TEST_P(ErasureStoreTest, ConcurrentReadersAndWriters) {
  const size_t size = 3 * stripe() + 5;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        std::string id = Id(t * 100 + i + 1);
        std::string data = Pattern(size, t * 100 + i);
        if (!Write(id, data).ok()) ++failures;
        auto got = Read(id, size, 999);
        if (!got.ok() || *got != data) ++failures;
        if (!store_->Heal(id).ok()) ++failures;
        if (!store_->Remove(id).ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ErasureStoreTest,
                         ::testing::Values(Geometry{6, 4, 2}, Geometry{1, 1, 0},
                                           Geometry{3, 2, 1}),
                         [](const auto& info) {
                           return std::to_string(info.param.k) + "plus" +
                                  std::to_string(info.param.m);
                         });


// Drive error counters (DriveErrorCounts, strata_drive_errors_total): each
// kind lands on the drive it happened on, a missing shard counts once per
// reader however many stripes it spans, and the other drives count nothing.
TEST_P(ErasureStoreTest, DriveErrorsAreCountedPerDrive) {
  if (g_.m == 0) GTEST_SKIP() << "no redundancy to read past a fault";
  const size_t size = 3 * stripe() + 1;
  const std::string data = Pattern(size, 21);
  auto counts = [&] { return store_->DriveErrorCounts(); };
  EXPECT_EQ(counts(), std::vector<DriveErrors>(g_.n));
  // Read errors on drive 0.
  ASSERT_TRUE(Write(Id(1), data).ok());
  fault_->AddRule({io::FaultOp::kRead, "/d0/", IOError("EIO"), 0, -1, -1});
  auto got = Read(Id(1), size);
  fault_->ClearRules();
  ASSERT_TRUE(got.ok() && *got == data);
  EXPECT_GE(counts()[0].io, 1u);
  EXPECT_EQ(counts()[0].corrupt + counts()[0].missing + counts()[0].write, 0u);
  for (int i = 1; i < g_.n; ++i) EXPECT_EQ(counts()[i], DriveErrors{}) << "drive " << i;
  // A flipped byte in stripe 1's block on drive 0.
  ASSERT_TRUE(Write(Id(2), data).ok());
  FlipByte(ShardPath(0, Id(2)), BlockByte(ShardPath(0, Id(2)), 1, 5));
  got = Read(Id(2), size);
  ASSERT_TRUE(got.ok() && *got == data);
  EXPECT_EQ(counts()[0].corrupt, 1u);
  // Drive 0's shard file gone: once for the reader, over its four stripes.
  ASSERT_TRUE(Write(Id(3), data).ok());
  RemoveShard(0, Id(3));
  got = Read(Id(3), size);
  ASSERT_TRUE(got.ok() && *got == data);
  EXPECT_EQ(counts()[0].missing, 1u);
  for (int i = 1; i < g_.n; ++i) EXPECT_EQ(counts()[i], DriveErrors{}) << "drive " << i;
  // A shard write that fails on the last drive.
  fault_->AddRule(
      {io::FaultOp::kAppend, "/d" + std::to_string(g_.n - 1) + "/", IOError("EIO"), 0, -1, -1});
  Write(Id(4), data).IgnoreError();  // kept by quorum or not: the drive's error counts
  fault_->ClearRules();
  EXPECT_EQ(counts()[g_.n - 1].write, 1u);
  // A heal (a scrub) counts what it meets: drive 0's missing shard of Id(3).
  ASSERT_TRUE(store_->Heal(Id(3)).ok());
  EXPECT_EQ(counts()[0].missing, 2u);
}

}  // namespace
}  // namespace strata::storage::erasure_test

#include "storage/erasure_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>
#include <set>
#include <thread>

#include "common/check.h"
#include "io/fault_fs.h"
#include "io/mem_fs.h"
#include "storage/shard_format.h"

namespace strata::storage {
namespace {

constexpr size_t kBlock = 4096;

struct Geometry {
  int n, k, m;
};

std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>(x >> 16);
  }
  return s;
}

std::string Id(int i) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%02x%030x", (i * 37) & 0xff, i);
  return buf;
}

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

class ErasureStoreTest : public ::testing::TestWithParam<Geometry> {
 protected:
  void SetUp() override {
    mem_ = io::NewMemFileSystem();
    fault_ = std::make_unique<io::FaultFileSystem>(mem_.get());
    g_ = GetParam();
    for (int i = 0; i < g_.n; ++i) drives_.push_back("/pool/d" + std::to_string(i));
    ASSERT_TRUE(Reopen().ok());
  }

  PoolOptions Options() {
    PoolOptions o;
    o.drives = drives_;
    o.k = g_.k;
    o.m = g_.m;
    o.block_bytes = kBlock;
    return o;
  }

  Status Reopen() { return Reopen(Options()); }
  Status Reopen(PoolOptions options) {
    store_.reset();
    auto s = ErasureDataStore::Open(fault_.get(), std::move(options));
    if (!s.ok()) return s.status();
    store_ = std::move(s).value();
    store_->SetHealCallback([this](const std::string& id) { healed_.push_back(id); });
    return Status::OK();
  }

  size_t stripe() const { return g_.k * kBlock; }
  int quorum() const { return g_.m >= 1 ? g_.k + 1 : g_.k; }
  // Whether a write survives `failing` drives failing.
  bool WritableWith(int failing) const { return g_.n - failing >= quorum(); }
  std::vector<size_t> Sizes() const {
    return {0, 1, kBlock - 1, kBlock, stripe(), stripe() + 1, 5 * stripe() + 123};
  }

  DataHeader Header(const std::string& key) {
    DataHeader h;
    h.bucket = "bkt";
    h.key = key;
    h.version_stamp = 42;
    return h;
  }

  Status Write(const std::string& id, const std::string& data, size_t piece = 1000,
               const std::string& trailer = "trailer") {
    auto w = store_->Create(id, Header("key-" + id));
    if (!w.ok()) return w.status();
    for (size_t off = 0; off < data.size(); off += piece) {
      Status st = (*w)->Append(std::string_view(data).substr(off, piece));
      if (!st.ok()) {
        (*w)->Abort();
        return st;
      }
    }
    Status st = (*w)->Finish(trailer);
    if (!st.ok()) (*w)->Abort();
    return st;
  }

  Result<std::string> Read(const std::string& id, uint64_t size, size_t piece = 1 << 20) {
    ASSIGN_OR_RETURN(auto r, store_->Open(id, size));
    if (r->size() != size) return Internal("size() mismatch");
    std::string out(size, '\0');
    size_t off = 0;
    while (off < size) {
      ASSIGN_OR_RETURN(size_t n, r->ReadAt(off, out.data() + off, std::min(piece, size - off)));
      if (n == 0) return Internal("unexpected EOF at " + std::to_string(off));
      off += n;
    }
    char extra;
    ASSIGN_OR_RETURN(size_t n, r->ReadAt(size, &extra, 1));
    if (n != 0) return Internal("read past the end");
    return out;
  }

  std::string ShardPath(int drive, const std::string& id) {
    return drives_[drive] + "/shards/" + id.substr(0, 2) + "/" + id;
  }

  std::string Slurp(const std::string& path) {
    auto f = mem_->NewReadableFile(path);
    EXPECT_TRUE(f.ok()) << path;
    if (!f.ok()) return "";
    std::string s((*f)->Size(), '\0');
    auto n = (*f)->ReadAt(0, s.data(), s.size());
    EXPECT_TRUE(n.ok());
    return s;
  }
  void Put(const std::string& path, const std::string& bytes) {
    auto f = mem_->NewWritableFile(path);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE((*f)->Append(bytes).ok());
    ASSERT_TRUE((*f)->Sync().ok());
    ASSERT_TRUE((*f)->Close().ok());
    ASSERT_TRUE(mem_->SyncDir(path.substr(0, path.rfind('/'))).ok());
  }
  void FlipByte(const std::string& path, size_t offset) {
    std::string s = Slurp(path);
    ASSERT_LT(offset, s.size()) << path;
    s[offset] = static_cast<char>(s[offset] ^ 0x5a);
    Put(path, s);
  }
  size_t HeaderLen(const std::string& path) {
    std::string s = Slurp(path);
    auto len = ShardHeaderLength(s);
    EXPECT_TRUE(len.ok());
    return len.ok() ? *len : 0;
  }
  // Offset, in shard file `path`, of byte `at` of stripe s's block.
  size_t BlockByte(const std::string& path, uint64_t s, size_t at) {
    return HeaderLen(path) + s * (kBlock + kBlockCrcBytes) + at;
  }
  void RemoveShard(int drive, const std::string& id) {
    ASSERT_TRUE(mem_->RemoveFile(ShardPath(drive, id)).ok()) << ShardPath(drive, id);
  }
  // Removes every file on a drive (its directories stay: mem_fs has no rmdir).
  void Wipe(const std::string& dir) {
    auto names = mem_->ListDir(dir);
    if (!names.ok()) return;
    for (const std::string& name : *names) {
      std::string p = dir + "/" + name;
      if (!mem_->RemoveFile(p).ok()) Wipe(p);
    }
    mem_->SyncDir(dir).IgnoreError();
  }

  Geometry g_;
  std::unique_ptr<io::MemFileSystem> mem_;
  std::unique_ptr<io::FaultFileSystem> fault_;
  std::vector<std::string> drives_;
  std::unique_ptr<ErasureDataStore> store_;
  std::vector<std::string> healed_;
};

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

TEST_P(ErasureStoreTest, WrongSizeIsRefusedAtOpen) {
  ASSERT_TRUE(Write(Id(1), Pattern(100, 1)).ok());
  auto r = store_->Open(Id(1), 101);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kCorruption);
  EXPECT_EQ(store_->Open(Id(2), 5).status().code(), Code::kNotFound);
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

TEST_P(ErasureStoreTest, DrivesOfAnotherDeploymentAreRefused) {
  // A second pool elsewhere on the same filesystem.
  PoolOptions other = Options();
  for (auto& d : other.drives) d = "/other" + d;
  auto second = ErasureDataStore::Open(fault_.get(), other);
  ASSERT_TRUE(second.ok());
  second->reset();
  PoolOptions mixed = Options();
  mixed.drives.back() = other.drives.back();
  Status st = Reopen(mixed);
  if (g_.n > 1) {  // (one drive is a whole pool: naming no deployment accepts it)
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), Code::kPreconditionFailed);
    EXPECT_NE(st.message().find(other.drives.back()), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find("deployment"), std::string::npos);
  }
  // A named deployment must match.
  PoolOptions named = Options();
  named.deployment_id = "feedfacefeedface";
  st = Reopen(named);
  EXPECT_EQ(st.code(), Code::kPreconditionFailed) << st.ToString();
  EXPECT_NE(st.message().find("feedfacefeedface"), std::string::npos);
  ASSERT_TRUE(Reopen().ok());
}

TEST_P(ErasureStoreTest, SwappedDrivesAreRefused) {
  if (g_.n < 2) GTEST_SKIP();
  PoolOptions swapped = Options();
  std::swap(swapped.drives[0], swapped.drives[1]);
  Status st = Reopen(swapped);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kPreconditionFailed);
  EXPECT_NE(st.message().find(drives_[1]), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("position 1"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("listed at position 0"), std::string::npos) << st.ToString();
  ASSERT_TRUE(Reopen().ok());
}

TEST_P(ErasureStoreTest, LayoutMismatchAndBadOptionsAreRefused) {
  PoolOptions o = Options();
  o.drives.push_back("/pool/extra");
  o.k += 1;
  EXPECT_EQ(Reopen(o).code(), Code::kPreconditionFailed);  // formatted for n drives
  o = Options();
  o.drives.push_back(o.drives[0]);
  EXPECT_EQ(Reopen(o).code(), Code::kInvalidArgument);  // listed twice
  o = Options();
  o.k = g_.n + 1;
  o.m = 0;
  EXPECT_EQ(Reopen(o).code(), Code::kInvalidArgument);
  if (g_.m > 0) {
    o = Options();
    o.k = g_.k + 1;
    o.m = g_.m - 1;
    Status st = Reopen(o);
    EXPECT_EQ(st.code(), Code::kPreconditionFailed);
    EXPECT_NE(st.message().find("formatted for"), std::string::npos) << st.ToString();
  }
  // Defaults adopt the format (block size included).
  o = Options();
  o.k = 0;
  o.m = -1;
  o.block_bytes = 1 << 20;
  ASSERT_TRUE(Reopen(o).ok());
  EXPECT_EQ(store_->k(), g_.k);
  const std::string data = Pattern(2 * stripe() + 1, 1);
  ASSERT_TRUE(Write(Id(1), data).ok());
  ASSERT_TRUE(Reopen().ok());
  auto got = Read(Id(1), data.size());
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(*got == data);
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

// The store's invariants (k >= 1, k + m == drives, shard index < k + m, ...)
// are STRATA_CHECKs: they abort in the RelWithDebInfo build we test, where
// assert() is compiled out.
TEST(ErasureInvariantTest, ChecksAbortInEveryBuild) {
#ifdef NDEBUG
  const bool asserts_compiled_out = true;
#else
  const bool asserts_compiled_out = false;
#endif
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_DEATH(STRATA_CHECK(1 + 1 == 3, "detail " + std::to_string(7)),
               "STRATA_CHECK\\(1 \\+ 1 == 3\\) failed: detail 7");
  std::printf("asserts compiled out in this build: %s\n", asserts_compiled_out ? "yes" : "no");
}

TEST(ErasureLayoutTest, Defaults) {
  int k, m;
  std::vector<std::pair<int, std::pair<int, int>>> want = {
      {1, {1, 0}}, {2, {1, 1}}, {3, {2, 1}}, {4, {2, 2}},  {5, {3, 2}},  {6, {4, 2}},
      {7, {5, 2}}, {8, {6, 2}}, {9, {6, 3}}, {11, {8, 3}}, {12, {8, 4}}, {16, {12, 4}}};
  for (auto& [n, km] : want) {
    DefaultLayout(n, &k, &m);
    EXPECT_EQ(std::make_pair(k, m), km) << n;
  }
}

TEST(ErasureLayoutTest, DefaultLayoutOpensAndFormatsEveryDrive) {
  auto mem = io::NewMemFileSystem();
  PoolOptions o;
  for (int i = 0; i < 4; ++i) o.drives.push_back("/d" + std::to_string(i) + "/");
  o.block_bytes = 1024;
  auto store = ErasureDataStore::Open(mem.get(), o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->k(), 2);
  EXPECT_EQ((*store)->m(), 2);
  std::string dep;
  for (int i = 0; i < 4; ++i) {
    auto f = mem->NewReadableFile("/d" + std::to_string(i) + "/format");
    ASSERT_TRUE(f.ok());
    std::string text((*f)->Size(), '\0');
    ASSERT_TRUE((*f)->ReadAt(0, text.data(), text.size()).ok());
    auto fmt = DecodeDriveFormat(text);
    ASSERT_TRUE(fmt.ok());
    EXPECT_EQ(fmt->position, static_cast<uint32_t>(i));
    EXPECT_EQ(fmt->block_bytes, 1024u);
    if (i == 0) dep = fmt->deployment_id;
    EXPECT_EQ(fmt->deployment_id, dep);
  }
  // A crash right after Open keeps the formats (they are synced).
  mem->SimulateCrash();
  store->reset();
  store = ErasureDataStore::Open(mem.get(), o);
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->Drives()[0].detail.empty());
}

}  // namespace
}  // namespace strata::storage

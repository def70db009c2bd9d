// The archive pool (storage/archive_store.h): entries packed into segments,
// compressed where it pays, read back at any offset, checked on read; a
// restart rebuilds the index from the segments; a power loss keeps exactly
// the synced entries; removal frees whole dead segments, and a tombstone is
// kept while it still covers an entry elsewhere.
#include "storage/archive_store.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "io/mem_fs.h"
#include "storage/archive_format.h"

namespace strata::storage {
namespace {

std::string Incompressible(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}
std::string Text(size_t n) {
  std::string s;
  while (s.size() < n) s += "checkpoint shard " + std::to_string(s.size() % 977) + " of layer 7\n";
  s.resize(n);
  return s;
}

class ArchiveStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  void Reopen(uint64_t segment_bytes = 4u << 20) {
    store_.reset();
    auto s = OpenArchiveDataStore(fs_.get(), {"/archive", segment_bytes, 3});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  void Write(const std::string& id, const std::string& data, uint64_t stamp = 1,
             size_t piece = 100'000) {
    auto w = store_->Create(id, {"b", "k/" + id, "", 0, stamp});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    for (size_t off = 0; off < data.size(); off += piece) {
      ASSERT_TRUE((*w)->Append(std::string_view(data).substr(off, piece)).ok());
    }
    ASSERT_TRUE((*w)->Finish("trailer-of-" + id).ok());
  }
  Result<std::string> Read(const std::string& id, uint64_t size, uint64_t off, size_t n,
                           size_t step = 64 << 10) {
    ASSIGN_OR_RETURN(auto r, store_->Open(id, size));
    std::string out, buf(step, '\0');
    while (out.size() < n) {
      ASSIGN_OR_RETURN(size_t got, r->ReadAt(off + out.size(), buf.data(),
                                             std::min(step, n - out.size())));
      if (got == 0) break;
      out.append(buf.data(), got);
    }
    return out;
  }
  std::vector<std::string> Segments() {
    auto names = fs_->ListDir("/archive/segments");
    return names.ok() ? *names : std::vector<std::string>{};
  }

  std::unique_ptr<io::MemFileSystem> fs_ = io::NewMemFileSystem();
  std::unique_ptr<DataStore> store_;
};

TEST_F(ArchiveStoreTest, WritesReadBackAtAnyOffsetAndCompressWherePays) {
  const std::string text = Text((3u << 20) + 777);
  const std::string noise = Incompressible((2u << 20) + 5, 7);
  Write("aa", text);
  Write("bb", noise);
  Write("cc", "");
  EXPECT_EQ(*Read("aa", text.size(), 0, text.size()), text);
  EXPECT_EQ(*Read("bb", noise.size(), 0, noise.size()), noise);
  EXPECT_EQ(*Read("cc", 0, 0, 10), "");
  // Across a frame boundary, and a read larger than a frame.
  EXPECT_EQ(*Read("aa", text.size(), (1u << 20) - 10, 20), text.substr((1u << 20) - 10, 20));
  EXPECT_EQ(*Read("bb", noise.size(), 12345, 1u << 21, 3u << 20), noise.substr(12345, 1u << 21));
  auto stats = ArchiveStatsOf(store_.get());
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->live_entries, 3u);
  EXPECT_EQ(stats->raw_bytes, text.size() + noise.size());
  // Text compresses; noise is stored as it is (within the frame overhead).
  EXPECT_LT(stats->stored_bytes, text.size() / 4 + noise.size() + 1000);
  EXPECT_GE(stats->stored_bytes, noise.size());
  auto ht = store_->ReadHeaderAndTrailer("aa");
  ASSERT_TRUE(ht.ok()) << ht.status().ToString();
  EXPECT_EQ(ht->first, (DataHeader{"b", "k/aa", "", 0, 1}));
  EXPECT_EQ(ht->second, "trailer-of-aa");
  EXPECT_EQ(store_->Open("aa", text.size() + 1).status().code(), Code::kCorruption);
  EXPECT_EQ(store_->Open("zz", 1).status().code(), Code::kNotFound);
}

TEST_F(ArchiveStoreTest, RestartRebuildsTheIndexFromTheSegments) {
  const std::string a = Text(1500000), b = Incompressible(700000, 3);
  Write("aa", a);
  Write("bb", b);
  ASSERT_TRUE(store_->Remove("aa").ok());
  Write("cc", a.substr(0, 10));
  {
    auto w = store_->Create("dd", {"b", "k", "", 0, 1});  // abandoned
    ASSERT_TRUE((*w)->Append(a).ok());
    (*w)->Abort();
  }
  Reopen();
  auto ids = store_->ListIds();
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<std::string>{"bb", "cc"}));
  EXPECT_EQ(*Read("bb", b.size(), 0, b.size()), b);
  EXPECT_EQ(*Read("cc", 10, 0, 10), a.substr(0, 10));
  EXPECT_EQ(store_->ReadHeaderAndTrailer("cc")->second, "trailer-of-cc");
  // New writes after a restart go to new segments; the old ones stay readable.
  Write("ee", b);
  EXPECT_EQ(*Read("ee", b.size(), 0, b.size()), b);
  EXPECT_EQ(*Read("bb", b.size(), 100, 1000), b.substr(100, 1000));
}

TEST_F(ArchiveStoreTest, PowerLossKeepsExactlyTheSyncedEntries) {
  const std::string a = Text(2500000);
  Write("aa", a);
  auto w = store_->Create("bb", {"b", "k", "", 0, 1});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append(a).ok());  // frames appended, never synced
  fs_->SimulateCrash();
  w->release();  // the process is gone: its writer never finishes
  Reopen();
  auto ids = store_->ListIds();
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, std::vector<std::string>{"aa"});
  EXPECT_EQ(*Read("aa", a.size(), 0, a.size()), a);
}

TEST_F(ArchiveStoreTest, AFlippedByteFailsTheReadNeverReturnsOtherBytes) {
  const std::string a = Text(1u << 20 | 999), b = Incompressible(300000, 9);
  Write("aa", a);
  Write("bb", b);
  auto names = Segments();
  ASSERT_EQ(names.size(), 1u);
  const std::string path = "/archive/segments/" + names[0];
  std::string bytes;
  {
    auto f = fs_->NewReadableFile(path);
    bytes.resize((*f)->Size());
    ASSERT_EQ(*(*f)->ReadAt(0, bytes.data(), bytes.size()), bytes.size());
  }
  for (size_t at : {size_t{100}, bytes.size() / 3, bytes.size() - 200}) {
    std::string bad = bytes;
    bad[at] ^= 0x40;
    auto f = fs_->NewWritableFile(path);
    ASSERT_TRUE((*f)->Append(bad).ok());
    ASSERT_TRUE((*f)->Sync().ok());
    ASSERT_TRUE((*f)->Close().ok());
    for (const auto& [id, data] : {std::pair{"aa", &a}, std::pair{"bb", &b}}) {
      auto got = Read(id, data->size(), 0, data->size());
      if (got.ok()) {
        EXPECT_EQ(*got, *data) << "flip at " << at << " returned altered bytes of " << id;
      } else {
        EXPECT_EQ(got.status().code(), Code::kCorruption) << got.status().ToString();
      }
    }
  }
}

TEST_F(ArchiveStoreTest, DeadSegmentsAreDeletedOnlyWhenNoTombstoneIsNeeded) {
  Reopen(/*segment_bytes=*/1u << 20);  // each 1 MiB+ entry seals its segment
  const std::string big = Incompressible((1u << 20) + 10, 1);
  Write("aa", big);  // segment 1 (sealed)
  Write("bb", big);  // segment 2 (sealed)
  ASSERT_EQ(Segments().size(), 2u);
  // The tombstone of aa goes to a fresh open segment (3); segment 1 is dead and goes.
  ASSERT_TRUE(store_->Remove("aa").ok());
  EXPECT_EQ(Segments().size(), 2u);  // 2 and 3
  EXPECT_EQ(store_->Remove("aa").code(), Code::kNotFound);
  Reopen(1u << 20);
  EXPECT_EQ(*store_->ListIds(), std::vector<std::string>{"bb"});
  ASSERT_TRUE(store_->Remove("bb").ok());
  // Segment 3 holds aa's tombstone only and segment 1 is gone: 3 may go once
  // sealed; the new tombstone (bb's) lives in segment 4 until 2 is gone.
  Reopen(1u << 20);
  EXPECT_TRUE(store_->ListIds()->empty());
  // Everything sealed and dead after a restart: only tombstones of gone segments are left.
  Reopen(1u << 20);
  EXPECT_TRUE(store_->ListIds()->empty());
  EXPECT_LE(Segments().size(), 1u);
}

// A segment holding only the tombstone of an entry whose segment lives on
// (another entry keeps it) must stay, or the removed entry would come back.
TEST_F(ArchiveStoreTest, ATombstoneOutlivesItsSegmentWhileItsTargetLives) {
  Write("aa", Text(1000));
  Write("bb", Text(2000));
  Reopen();  // segment 1 sealed with aa and bb
  ASSERT_TRUE(store_->Remove("aa").ok());  // the tombstone: segment 2
  Reopen();  // segment 2 sealed: no live entry, but its tombstone covers aa in segment 1
  EXPECT_EQ(*store_->ListIds(), std::vector<std::string>{"bb"});
  EXPECT_EQ(Segments().size(), 2u);
  Reopen();
  EXPECT_EQ(*store_->ListIds(), std::vector<std::string>{"bb"});
  // Once bb goes too, segment 1 is dead, and then so is segment 2.
  ASSERT_TRUE(store_->Remove("bb").ok());
  Reopen();
  EXPECT_TRUE(store_->ListIds()->empty());
  EXPECT_TRUE(Segments().empty());  // 1 dead; then the tombstones of 2 and 3 cover nothing
  Reopen();
  EXPECT_TRUE(store_->ListIds()->empty());
}

TEST_F(ArchiveStoreTest, ConcurrentWritersUseTheirOwnSegments) {
  std::vector<std::thread> threads;
  std::vector<std::string> bodies;
  for (int t = 0; t < 4; ++t) bodies.push_back(Incompressible(600000 + t * 1000, t + 11));
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3; ++i) Write(std::string(1, 'a' + t) + std::to_string(i), bodies[t], 1, 70000);
    });
  }
  for (auto& th : threads) th.join();
  Reopen();
  for (int t = 0; t < 4; ++t) {
    for (int i = 0; i < 3; ++i) {
      const std::string id = std::string(1, 'a' + t) + std::to_string(i);
      EXPECT_EQ(*Read(id, bodies[t].size(), 0, bodies[t].size()), bodies[t]) << id;
    }
  }
}

TEST(ArchiveFormatTest, RecordsCheckAndRefuse) {
  std::string r = archive::EncodeRecord(archive::Type::kTombstone, archive::TombstonePayload("ab", 9));
  auto d = archive::DecodeRecord(r);
  ASSERT_TRUE(d);
  std::string id;
  uint64_t stamp;
  ASSERT_TRUE(archive::ParseTombstone(d->payload, &id, &stamp));
  EXPECT_EQ(id, "ab");
  EXPECT_EQ(stamp, 9u);
  for (size_t i = 0; i < r.size(); ++i) {
    std::string bad = r;
    bad[i] ^= 1;
    EXPECT_FALSE(archive::DecodeRecord(bad)) << i;
  }
  EXPECT_FALSE(archive::PayloadLength(std::string("Z\0\0\0\0", 5)));
  EXPECT_FALSE(archive::PayloadLength(std::string("F\xff\xff\xff\x7f", 5)));
}

}  // namespace
}  // namespace strata::storage

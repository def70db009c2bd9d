// Remove with drives absent: tombstones (docs/formats/shard-file.md,
// "Remove"). A drive that was offline when an id was removed comes back with
// its shards; neither heal nor rebuild-index (ReadHeaderAndTrailer) may bring
// the id back, and the leftovers are cleaned once every drive is present.
#include <gtest/gtest.h>

#include "io/mem_fs.h"
#include "storage/erasure_store.h"
#include "storage/shard_format.h"
#include "storage/store_test_util.h"

namespace strata::storage {
namespace {

constexpr size_t kBlock = 64;
const std::string kId = "5d" + std::string(30, '7');

class ErasureRemoveTest : public ::testing::Test {
 protected:
  // 2+2: with two drives absent the other two still open the pool, and two
  // leftover shards are k: enough to read (and heal) a removed id.
  std::vector<std::string> Drives(std::vector<int> absent = {}) {
    std::vector<std::string> d;
    for (int i = 0; i < 4; ++i) {
      bool gone = std::find(absent.begin(), absent.end(), i) != absent.end();
      d.push_back((gone ? "/unmounted/d" : "/pool/d") + std::to_string(i));
    }
    return d;
  }
  void Open(std::vector<int> absent = {}) {
    store_.reset();
    PoolOptions o;
    o.drives = Drives(absent);
    o.k = 2;
    o.m = 2;
    o.block_bytes = kBlock;
    auto s = ErasureDataStore::Open(mem_.get(), o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  Status Write(uint64_t stamp, const std::string& body, const std::string& trailer) {
    ASSIGN_OR_RETURN(auto w, store_->Create(kId, DataHeader{"b", "k", "", 0, stamp}));
    RETURN_IF_ERROR(w->Append(body));
    return w->Finish(trailer);
  }
  Result<std::string> Read(size_t size) { return testing::ReadAll(store_.get(), kId, size); }
  std::string Path(int drive, const std::string& suffix = "") {
    return "/pool/d" + std::to_string(drive) + "/shards/" + kId.substr(0, 2) + "/" + kId + suffix;
  }
  int Count(const std::string& suffix) {
    int n = 0;
    for (int d = 0; d < 4; ++d) n += mem_->FileExists(Path(d, suffix)) ? 1 : 0;
    return n;
  }

  std::unique_ptr<io::MemFileSystem> mem_ = io::NewMemFileSystem();
  std::unique_ptr<ErasureDataStore> store_;
  const std::string body_ = std::string(300, 'x') + "end";
};

TEST_F(ErasureRemoveTest, AllDrivesPresentLeavesNothing) {
  Open();
  ASSERT_TRUE(Write(5, body_, "t").ok());
  ASSERT_TRUE(store_->Remove(kId).ok());
  EXPECT_EQ(Count(""), 0);
  EXPECT_EQ(Count(".gone"), 0);
  EXPECT_EQ(store_->Remove(kId).code(), Code::kNotFound);
}

TEST_F(ErasureRemoveTest, ReturningDrivesDoNotResurrectARemovedId) {
  Open();
  ASSERT_TRUE(Write(5, body_, "t").ok());
  Open({2, 3});  // two drives unmounted while the id is removed
  ASSERT_TRUE(store_->Remove(kId).ok());
  EXPECT_EQ(Count(""), 2);       // drives 2 and 3 still hold theirs (k of them)
  EXPECT_EQ(Count(".gone"), 2);  // the removal is recorded on drives 0 and 1
  mem_->SimulateCrash();         // tombstones are durable (the unlinks are not)
  EXPECT_EQ(Count(".gone"), 2);

  Open();  // the drives are back
  auto ids = store_->ListIds();
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, std::vector<std::string>{kId});  // listed: the scrubber visits it
  EXPECT_EQ(store_->ReadHeaderAndTrailer(kId).status().code(), Code::kNotFound);
  auto heal = store_->Heal(kId);
  EXPECT_EQ(heal.status().code(), Code::kNotFound) << "heal brought a removed id back";
  EXPECT_EQ(Count(""), 0);
  EXPECT_EQ(Count(".gone"), 0);  // every drive present: nothing left to remember
  ids = store_->ListIds();
  ASSERT_TRUE(ids.ok());
  EXPECT_TRUE(ids->empty());
}

TEST_F(ErasureRemoveTest, RewrittenIdOutranksItsTombstone) {
  Open();
  ASSERT_TRUE(Write(5, body_, "old").ok());
  Open({3});
  ASSERT_TRUE(store_->Remove(kId).ok());
  const std::string body2 = std::string(200, 'y');
  ASSERT_TRUE(Write(9, body2, "new").ok());  // same id again, newer generation
  Open();
  auto ht = store_->ReadHeaderAndTrailer(kId);
  ASSERT_TRUE(ht.ok()) << ht.status().ToString();
  EXPECT_EQ(ht->second, "new");
  EXPECT_EQ(ht->first.version_stamp, 9u);
  auto heal = store_->Heal(kId);
  ASSERT_TRUE(heal.ok()) << heal.status().ToString();
  EXPECT_EQ(heal->shards_rebuilt, 1);  // drive 3's dead shard, rewritten as the new one
  EXPECT_EQ(Count(".gone"), 0);
  for (int lost : {0, 1}) ASSERT_TRUE(mem_->RemoveFile(Path(lost)).ok());
  auto got = Read(body2.size());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, body2);
}

TEST_F(ErasureRemoveTest, TombstoneSurvivesWhileADriveIsStillAbsent) {
  Open();
  ASSERT_TRUE(Write(5, body_, "t").ok());
  Open({3});
  ASSERT_TRUE(store_->Remove(kId).ok());
  Open({2});  // drive 3 back, drive 2 now absent
  EXPECT_EQ(store_->Heal(kId).status().code(), Code::kNotFound);
  EXPECT_EQ(Count(""), 0);       // drive 3's leftover deleted
  EXPECT_EQ(Count(".gone"), 3);  // kept: drive 2 is absent, it might hold leftovers too
  Open();
  EXPECT_EQ(store_->Heal(kId).status().code(), Code::kNotFound);
  EXPECT_EQ(Count(".gone"), 0);
}

}  // namespace
}  // namespace strata::storage

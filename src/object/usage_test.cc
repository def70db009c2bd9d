// Per-bucket usage (object/usage.h): kept by the writes of a real engine
// (overwrites, versions, delete markers, deletes by version), read back
// after a re-open with and without a fold, counted once on an older store,
// untouched by a failed write, gone with the bucket.
#include "object/usage.h"

#include <gtest/gtest.h>

#include "io/mem_fs.h"
#include "meta/keys.h"
#include "meta/mem_store.h"
#include "object/engine.h"
#include "storage/plain_store.h"

namespace strata::object {
namespace {

class UsageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = io::NewMemFileSystem();
    kv_ = meta::NewMemStore();
    flaky_ = std::make_unique<meta::FlakyKvStore>(kv_.get());
    auto store = storage::OpenPlainDataStore(mem_.get(), "/data");
    ASSERT_TRUE(store.ok());
    store_ = std::move(store).value();
    Reopen();
  }
  void Reopen() {
    engine_.reset();
    usage_.reset();
    auto u = UsageCounter::Open(flaky_.get());
    ASSERT_TRUE(u.ok()) << u.status().ToString();
    usage_ = std::move(u).value();
    auto e = ObjectEngine::Open(store_.get(), usage_->store());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }
  Status Put(const std::string& bucket, const std::string& key, const std::string& data) {
    ASSIGN_OR_RETURN(auto w, engine_->NewWriter(bucket, key, {}, {}));
    RETURN_IF_ERROR(w->Append(data));
    return w->Commit().status();
  }
  BucketUsage Of(const std::string& bucket) {
    auto all = usage_->Snapshot();
    auto it = all.find(bucket);
    EXPECT_NE(it, all.end()) << bucket;
    return it == all.end() ? BucketUsage{-1, -1} : it->second;
  }
  size_t Keys(const std::string& prefix) {
    size_t n = 0;
    auto it = kv_->NewIterator();
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) ++n;
    return n;
  }

  std::unique_ptr<io::MemFileSystem> mem_;
  std::unique_ptr<meta::KvStore> kv_;
  std::unique_ptr<meta::FlakyKvStore> flaky_;
  std::unique_ptr<storage::DataStore> store_;
  std::unique_ptr<UsageCounter> usage_;
  std::unique_ptr<ObjectEngine> engine_;
};

TEST_F(UsageTest, FollowsEveryKindOfWrite) {
  ASSERT_TRUE(engine_->CreateBucket("b", BucketRecord{1, "us-east-1", "me"}).ok());
  EXPECT_EQ(Of("b"), (BucketUsage{0, 0}));
  ASSERT_TRUE(Put("b", "k", "hello").ok());
  ASSERT_TRUE(Put("b", "j", "abc").ok());
  EXPECT_EQ(Of("b"), (BucketUsage{2, 8}));
  ASSERT_TRUE(Put("b", "k", "hello world").ok());  // replaces the null version
  EXPECT_EQ(Of("b"), (BucketUsage{2, 14}));
  ASSERT_TRUE(engine_->SetTags("b", "k", {{"t", "v"}}).ok());  // the same version
  EXPECT_EQ(Of("b"), (BucketUsage{2, 14}));

  ASSERT_TRUE(engine_->SetBucketVersioning("b", Versioning::kEnabled).ok());
  ASSERT_TRUE(Put("b", "k", "v2").ok());  // a second version of k
  EXPECT_EQ(Of("b"), (BucketUsage{3, 16}));
  auto marker = engine_->DeleteVersion("b", "k", std::nullopt);  // a delete marker
  ASSERT_TRUE(marker.ok() && marker->delete_marker);
  EXPECT_EQ(Of("b"), (BucketUsage{3, 16}));
  auto gone = engine_->DeleteVersion("b", "j", VersionSelector{true, 0});  // j's null version
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ(Of("b"), (BucketUsage{2, 13}));

  // The same figures after a re-open: from the deltas, then from the totals.
  const BucketUsage before = Of("b");
  Reopen();
  EXPECT_EQ(Of("b"), before);
  EXPECT_GT(Keys(meta::UsageDeltaPrefix()), 0u);
  ASSERT_TRUE(usage_->Fold().ok());
  EXPECT_EQ(Keys(meta::UsageDeltaPrefix()), 0u);
  Reopen();
  EXPECT_EQ(Of("b"), before);

  // A write that fails changes nothing.
  flaky_->fail = true;
  EXPECT_FALSE(Put("b", "x", "lost").ok());
  flaky_->fail = false;
  EXPECT_EQ(Of("b"), before);
}

TEST_F(UsageTest, ABucketsFiguresGoWithIt) {
  ASSERT_TRUE(engine_->CreateBucket("gone", BucketRecord{1, "us-east-1", "me"}).ok());
  ASSERT_TRUE(Put("gone", "k", "data").ok());
  ASSERT_TRUE(usage_->Fold().ok());
  ASSERT_TRUE(engine_->DeleteVersion("gone", "k", std::nullopt).ok());
  ASSERT_TRUE(usage_->Fold().ok());
  ASSERT_TRUE(engine_->DeleteBucket("gone").ok());
  EXPECT_EQ(usage_->Snapshot().count("gone"), 0u);
  ASSERT_TRUE(usage_->Fold().ok());
  Reopen();
  EXPECT_EQ(usage_->Snapshot().count("gone"), 0u);
  EXPECT_EQ(Keys(meta::UsageTotalKey("gone")), 0u);
}

TEST_F(UsageTest, AStoreFromBeforeIsCountedOnce) {
  // Versions written without the counter (an older server, a rebuilt index).
  engine_.reset();
  usage_.reset();
  {
    auto e = ObjectEngine::Open(store_.get(), kv_.get());
    ASSERT_TRUE(e.ok());
    engine_ = std::move(e).value();
    ASSERT_TRUE(engine_->CreateBucket("old", BucketRecord{1, "us-east-1", "me"}).ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(Put("old", "k" + std::to_string(i), "12345").ok());
    meta::WriteBatch b;
    b.Delete(meta::UsageInitKey());
    ASSERT_TRUE(kv_->Write(b, true).ok());
  }
  Reopen();
  EXPECT_EQ(Of("old"), (BucketUsage{3, 15}));
  ASSERT_TRUE(Put("old", "k9", "1").ok());
  Reopen();  // counted once: the marker says so
  EXPECT_EQ(Of("old"), (BucketUsage{4, 16}));
}

}  // namespace
}  // namespace strata::object

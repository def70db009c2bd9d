// The lifecycle scanner (tier/scanner.h) over a real engine with two pools:
// transitions move data, expirations delete or add markers, noncurrent
// versions and expired markers go, incomplete uploads are aborted, Object
// Lock holds, and a pass resumes where a stopped one left off. A lifecycle
// "day" is 1 ms here.
#include "tier/scanner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "io/mem_fs.h"
#include "meta/keys.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "storage/plain_store.h"
#include "tier/classes.h"
#include "tier/lifecycle.h"
#include "tier/restore.h"

namespace strata::tier {
namespace {

constexpr int64_t kDay = 1'000'000;  // 1 ms

class ScannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto h = storage::OpenPlainDataStore(mem_.get(), "/hot");
    auto w = storage::OpenPlainDataStore(mem_.get(), "/warm");
    ASSERT_TRUE(h.ok() && w.ok());
    hot_ = std::move(h).value();
    warm_ = std::move(w).value();
    auto e = object::ObjectEngine::Open({{"hot", hot_.get()}, {"warm", warm_.get()}}, kv_.get());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    auto m = ClassMap::Make({{"hot", Media::kHot}, {"warm", Media::kWarm}}, {});
    ASSERT_TRUE(m.ok());
    classes_ = std::move(m).value();
    ASSERT_TRUE(engine_->CreateBucket("b", object::BucketRecord{1, "us-east-1", "me"}).ok());
    ScannerOptions o;
    o.day_ns = kDay;
    o.max_actions_per_s = 0;
    o.page_versions = 3;  // many pages: keys and versions across page ends
    scanner_ = std::make_unique<Scanner>(engine_.get(), kv_.get(), &classes_, o);
  }

  void SetRules(std::vector<Rule> rules) {
    Configuration c;
    c.rules = std::move(rules);
    ASSERT_TRUE(engine_->SetBucketLifecycle("b", RenderLifecycle(c)).ok());
  }
  object::ObjectRecord Put(const std::string& key, size_t size, object::Tags tags = {}) {
    object::WriteOptions o;
    o.pool = "hot";
    o.tags = std::move(tags);
    auto w = engine_->NewWriter("b", key, {}, o);
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->Append(std::string(size, 'x')).ok());
    auto rec = (*w)->Commit();
    EXPECT_TRUE(rec.ok()) << rec.status().ToString();
    return rec.ok() ? *rec : object::ObjectRecord{};
  }
  ScanStats Pass() {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a few days go by
    auto s = scanner_->RunPass();
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : ScanStats{};
  }
  size_t Versions(const std::string& key) {
    object::ListVersionsParams p;
    p.prefix = key;
    auto r = engine_->ListVersions("b", p);
    return r.ok() ? r->versions.size() : 0;
  }

  std::unique_ptr<io::MemFileSystem> mem_ = io::NewMemFileSystem();
  std::unique_ptr<meta::KvStore> kv_ = meta::NewMemStore();
  std::unique_ptr<storage::DataStore> hot_, warm_;
  std::unique_ptr<object::ObjectEngine> engine_;
  ClassMap classes_;
  std::unique_ptr<Scanner> scanner_;
};

Rule Transition(std::string id, std::string prefix, uint32_t days, std::string cls) {
  Rule r;
  r.id = std::move(id);
  r.filter_form = FilterForm::kFilter;
  r.filter.prefix = std::move(prefix);
  r.transitions.push_back({When{days, std::nullopt}, std::move(cls)});
  return r;
}

TEST_F(ScannerTest, TransitionMovesTheDataOnly) {
  SetRules({Transition("to-warm", "ckpt/", 1, "GLACIER_IR")});
  auto moved = Put("ckpt/a", 300 << 10);
  auto stays = Put("data/a", 300 << 10);
  ScanStats s = Pass();
  EXPECT_EQ(s.transitioned, 1u);
  auto a = engine_->HeadObject("b", "ckpt/a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->pool, "warm");
  EXPECT_EQ(a->storage_class, "GLACIER_IR");
  EXPECT_EQ(a->etag, moved.etag);
  EXPECT_EQ(engine_->HeadObject("b", "data/a")->pool, "hot");
  // Nothing more to do the next time.
  EXPECT_EQ(Pass().transitioned, 0u);
  (void)stays;
}

TEST_F(ScannerTest, ExpirationDeletesInAnUnversionedBucket) {
  Rule r;
  r.id = "expire";
  r.filter_form = FilterForm::kEmptyFilter;
  r.expiration = When{2, std::nullopt};
  SetRules({r});
  for (int i = 0; i < 7; ++i) Put("k" + std::to_string(i), 10);
  ScanStats s = Pass();
  EXPECT_EQ(s.deleted, 7u);
  EXPECT_EQ(s.versions, 7u);
  EXPECT_EQ(engine_->HeadObject("b", "k3").status().code(), Code::kNotFound);
}

TEST_F(ScannerTest, VersionedExpirationAddsMarkersThenNoncurrentAndMarkersGo) {
  ASSERT_TRUE(engine_->SetBucketVersioning("b", object::Versioning::kEnabled).ok());
  Put("k", 10);
  Put("k", 20);  // the first is noncurrent now
  Rule cur;
  cur.id = "current";
  cur.expiration = When{1, std::nullopt};
  SetRules({cur});
  ScanStats s = Pass();
  EXPECT_EQ(s.markers, 1u);
  EXPECT_EQ(Versions("k"), 3u);  // marker + 2 versions
  EXPECT_EQ(Pass().markers, 0u) << "a current marker is not expired again";
  Rule nc;
  nc.id = "noncurrent";
  nc.noncurrent_days = 1;
  Rule dm;
  dm.id = "markers";
  dm.expired_object_delete_marker = true;
  SetRules({nc, dm});
  s = Pass();
  EXPECT_EQ(s.deleted, 2u);  // both noncurrent versions
  EXPECT_EQ(Versions("k"), 1u);
  s = Pass();  // now the marker is the only version: expired, removed
  EXPECT_EQ(s.deleted, 1u);
  EXPECT_EQ(Versions("k"), 0u);
}

TEST_F(ScannerTest, ObjectLockWins) {
  ASSERT_TRUE(engine_->SetBucketVersioning("b", object::Versioning::kEnabled).ok());
  ASSERT_TRUE(engine_->SetObjectLockConfiguration(
                         "b", object::DefaultRetention{object::LockMode::kCompliance, 1, 0})
                  .ok());
  Put("k", 10);
  Put("k", 20);
  Rule nc;
  nc.id = "noncurrent";
  nc.noncurrent_days = 1;
  SetRules({nc});
  ScanStats s = Pass();
  EXPECT_EQ(s.deleted, 0u);
  EXPECT_EQ(s.locked, 1u);
  EXPECT_EQ(Versions("k"), 2u);
}

TEST_F(ScannerTest, IncompleteUploadsAreAborted) {
  Rule r;
  r.id = "abort";
  r.filter_form = FilterForm::kFilter;
  r.filter.prefix = "tmp/";
  r.abort_upload_days = 1;
  SetRules({r});
  auto gone = engine_->CreateUpload("b", "tmp/x", {});
  auto kept = engine_->CreateUpload("b", "keep/x", {});
  ASSERT_TRUE(gone.ok() && kept.ok());
  EXPECT_EQ(Pass().aborted_uploads, 1u);
  EXPECT_EQ(engine_->GetUpload("b", "tmp/x", *gone).status().code(), Code::kNotFound);
  EXPECT_TRUE(engine_->GetUpload("b", "keep/x", *kept).ok());
}

TEST_F(ScannerTest, APassResumesAfterTheSavedKey) {
  Rule r;
  r.id = "expire";
  r.expiration = When{1, std::nullopt};
  SetRules({r});
  for (const char* k : {"a", "b", "c", "d"}) Put(k, 10);
  // As a stopped pass leaves it: bucket b done up to key "b".
  meta::WriteBatch progress;
  progress.Put(meta::LifecycleProgressKey(), std::string("b\0b", 3));
  ASSERT_TRUE(kv_->Write(progress, true).ok());
  ScanStats s = Pass();
  EXPECT_EQ(s.deleted, 2u);  // c and d
  EXPECT_TRUE(engine_->HeadObject("b", "a").ok());
  EXPECT_EQ(engine_->HeadObject("b", "c").status().code(), Code::kNotFound);
  ASSERT_FALSE(*kv_->Get(meta::LifecycleProgressKey())) << "a finished pass clears it";
  EXPECT_EQ(Pass().deleted, 2u);  // the next pass starts from the top
}

TEST_F(ScannerTest, BackgroundThreadRunsPasses) {
  Rule r;
  r.id = "expire";
  r.expiration = When{1, std::nullopt};
  SetRules({r});
  Put("k", 10);
  ScannerOptions o;
  o.day_ns = kDay;
  o.interval_ns = 2'000'000;
  Scanner bg(engine_.get(), kv_.get(), &classes_, o);
  bg.Start();
  for (int i = 0; i < 2000 && engine_->HeadObject("b", "k").ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  bg.Stop();
  EXPECT_EQ(engine_->HeadObject("b", "k").status().code(), Code::kNotFound);
  EXPECT_GE(bg.totals().deleted, 1u);
}

// The facts a rule sees, from a key's versions newest first: the successor's
// creation makes a version noncurrent; NewerNoncurrentVersions counts the
// noncurrent ones newer than it; the bucket's minimum transition size.
TEST_F(ScannerTest, FactsOfAKeysVersions) {
  object::ObjectRecord v3, v2, v1;
  v3.mtime_ns = 300;
  v2.mtime_ns = 200;
  v1.mtime_ns = 100;
  v1.size_bytes = 7;
  object::BucketRecord b;
  b.versioning = object::Versioning::kEnabled;
  b.lifecycle_min_transition_bytes = 128 << 10;
  std::vector<const object::ObjectRecord*> all = {&v3, &v2, &v1};
  VersionFacts f = Scanner::FactsAt("k", all, 2, b);
  EXPECT_FALSE(f.is_latest);
  EXPECT_EQ(f.noncurrent_since_ns, 200);
  EXPECT_EQ(f.newer_noncurrent, 1u);
  EXPECT_EQ(f.size_bytes, 7u);
  EXPECT_TRUE(f.versioned_bucket);
  EXPECT_EQ(f.min_transition_bytes, 128u << 10);
  EXPECT_FALSE(f.only_version);
  // v3 and v2 deleted meanwhile: v1 is current, and no noncurrent rule may take it.
  VersionFacts now = Scanner::FactsAt("k", {&v1}, 0, b);
  EXPECT_TRUE(now.is_latest);
  EXPECT_TRUE(now.only_version);
  Rule nc;
  nc.id = "nc";
  nc.noncurrent_days = 1;
  Configuration c;
  c.rules = {nc};
  EXPECT_EQ(Evaluate(c, f, 1'000'000'000, kDay).kind, ActionKind::kDelete);
  EXPECT_EQ(Evaluate(c, now, 1'000'000'000, kDay).kind, ActionKind::kNone);
}

// The engine asks the scanner's question again under the key lock: a keep
// that refuses cancels the delete (and the marker).
TEST_F(ScannerTest, EngineRechecksBeforeALifecycleDelete) {
  ASSERT_TRUE(engine_->SetBucketVersioning("b", object::Versioning::kEnabled).ok());
  auto v1 = Put("k", 10);
  Put("k", 20);
  size_t seen = 0;
  uint64_t asked = 0;
  object::DeleteOptions o;
  o.only_if_stamp = v1.version_stamp;
  o.keep = [&](const object::ObjectRecord& r, const std::vector<object::ObjectRecord>& all) {
    seen = all.size();
    asked = r.version_stamp;
    return PreconditionFailed("no longer due");
  };
  object::VersionSelector sel{false, v1.version_stamp};
  EXPECT_EQ(engine_->DeleteVersion("b", "k", sel, o).status().code(), Code::kPreconditionFailed);
  EXPECT_EQ(seen, 2u);
  EXPECT_EQ(asked, v1.version_stamp);
  EXPECT_EQ(Versions("k"), 2u);
  auto latest = engine_->HeadObject("b", "k");
  ASSERT_TRUE(latest.ok());
  o.only_if_stamp = latest->version_stamp;
  EXPECT_EQ(engine_->DeleteVersion("b", "k", std::nullopt, o).status().code(),
            Code::kPreconditionFailed);
  EXPECT_EQ(asked, latest->version_stamp) << "the marker's check sees the latest";
  EXPECT_EQ(Versions("k"), 2u) << "no marker added";
}

// Restores (tier/restore.h): a copy is made in the primary pool and read in
// place of the cold data; the index sweep re-enqueues a restore left ongoing
// (a restart) and drops the copy after its days.
TEST_F(ScannerTest, RestoreMakesAndExpiresACopy) {
  auto cold = Put("frozen", 300 << 10);
  ASSERT_TRUE(engine_->MoveVersion("b", "frozen", cold.version_stamp, "warm", "GLACIER").ok());
  auto started = engine_->RequestRestore("b", "frozen", cold.version_stamp, 2, 0);
  ASSERT_TRUE(started.ok());
  EXPECT_EQ(*started, object::RestoreRequestOutcome::kStarted);
  EXPECT_EQ(*engine_->RequestRestore("b", "frozen", cold.version_stamp, 2, 0),
            object::RestoreRequestOutcome::kInProgress);
  // As after a restart: nothing queued; the sweep finds the ongoing restore.
  Restorer restorer(engine_.get(), kv_.get(), &classes_, kDay, 1'000'000);
  ASSERT_TRUE(restorer.Sweep().ok());
  restorer.Drain();
  EXPECT_EQ(restorer.completed(), 1u);
  auto rec = engine_->HeadObject("b", "frozen");
  ASSERT_TRUE(rec.ok());
  EXPECT_FALSE(rec->restore.ongoing);
  EXPECT_EQ(rec->restore.pool, "hot");
  ASSERT_EQ(rec->restore.files.size(), 1u);
  EXPECT_EQ(rec->pool, "warm") << "the cold data stays where it is";
  auto r = engine_->OpenObject("b", "frozen");
  ASSERT_TRUE(r.ok());
  std::string got(300 << 10, '\0');
  for (size_t off = 0; off < got.size();) {
    auto n = (*r)->ReadAt(off, got.data() + off, got.size() - off);
    ASSERT_TRUE(n.ok() && *n > 0);
    off += *n;
  }
  EXPECT_EQ(got, std::string(300 << 10, 'x'));
  auto hot_ids = hot_->ListIds();
  ASSERT_TRUE(hot_ids.ok());
  EXPECT_EQ(hot_ids->size(), 1u) << "the copy is in the hot pool";
  // Not expired yet: kept, even when asked directly.
  if (engine_->HeadObject("b", "frozen")->restore.expiry_ns > engine_->NowNs()) {
    EXPECT_EQ(engine_->ExpireRestore("b", "frozen", cold.version_stamp).code(),
              Code::kPreconditionFailed);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past its 2 days
  auto dropped = restorer.Sweep();
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(*dropped, 1u);
  EXPECT_FALSE(engine_->HeadObject("b", "frozen")->restore.requested());
  EXPECT_TRUE(hot_->ListIds()->empty()) << "the copy is gone";
  // The index entry went with it.
  auto it = kv_->NewIterator();
  it->Seek(meta::RestoreIndexPrefix());
  EXPECT_FALSE(it->Valid() && it->key().starts_with(meta::RestoreIndexPrefix()));
}

}  // namespace
}  // namespace strata::tier

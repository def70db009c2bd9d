// Pools in the object engine (docs/tiers.md): a write lands in the pool its
// options name and nowhere else; MoveVersion copies a version's data into
// another pool and switches its record, nothing else of the version changed;
// a move interrupted at any step leaves exactly one readable copy and the
// start-up sweep removes the other.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "io/mem_fs.h"
#include "meta/keys.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "object/pool_engine_test_util.h"
#include "storage/erasure_store.h"
#include "storage/plain_store.h"

namespace strata::object {
namespace {

std::string Pattern(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 7 + (i >> 9));
  return s;
}

// "hot": a plain store (keeps small objects inline); "warm": a 2+2 erasure
// pool (keeps nothing inline, self-describing). The records on the drives
// (bucket markers) are the primary's, hot's: none here.
class MoveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Open();
    ASSERT_TRUE(engine_->CreateBucket("b", BucketRecord{1, "us-east-1", "me"}).ok());
  }
  void Open() {
    engine_.reset();
    hot_.reset();
    warm_.reset();
    auto h = storage::OpenPlainDataStore(mem_.get(), "/hot");
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    hot_ = std::move(h).value();
    storage::PoolOptions o;
    for (int i = 0; i < 4; ++i) o.drives.push_back("/warm/d" + std::to_string(i));
    o.k = 2;
    o.m = 2;
    o.block_bytes = 4096;
    auto w = storage::ErasureDataStore::Open(mem_.get(), o);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    warm_ = std::move(w).value();
    auto e = ObjectEngine::Open({{"hot", hot_.get()}, {"warm", warm_.get()}}, kv_.get());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }

  ObjectRecord Put(const std::string& key, const std::string& body, const std::string& pool,
                   Tags tags = {}) {
    WriteOptions o;
    o.pool = pool;
    o.tags = std::move(tags);
    auto w = engine_->NewWriter("b", key, {}, o);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (!w.ok()) return {};
    EXPECT_TRUE((*w)->Append(body).ok());
    auto rec = (*w)->Commit();
    EXPECT_TRUE(rec.ok()) << rec.status().ToString();
    return rec.ok() ? *rec : ObjectRecord{};
  }
  Result<std::string> Get(const std::string& key) {
    ASSIGN_OR_RETURN(auto r, engine_->OpenObject("b", key));
    return ReadWhole(*r);
  }
  static std::set<std::string> Ids(storage::DataStore* s) {
    auto ids = s->ListIds();
    EXPECT_TRUE(ids.ok()) << ids.status().ToString();
    return ids.ok() ? std::set<std::string>(ids->begin(), ids->end()) : std::set<std::string>();
  }
  size_t Records(char prefix) {
    size_t n = 0;
    auto it = kv_->NewIterator();
    const std::string p(1, prefix);
    for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) ++n;
    return n;
  }

  std::unique_ptr<io::MemFileSystem> mem_ = io::NewMemFileSystem();
  std::unique_ptr<meta::KvStore> kv_ = meta::NewMemStore();
  std::unique_ptr<storage::DataStore> hot_;
  std::unique_ptr<storage::ErasureDataStore> warm_;
  std::unique_ptr<ObjectEngine> engine_;
};

TEST_F(MoveTest, WritesLandInTheirPoolOnly) {
  const std::string big = Pattern(300 << 10, 'a');
  ObjectRecord h = Put("h", big, "hot");
  ObjectRecord w = Put("w", big, "warm");
  EXPECT_EQ(h.pool, "hot");
  EXPECT_EQ(w.pool, "warm");
  EXPECT_TRUE(Ids(hot_.get()).count(h.file_id));
  EXPECT_FALSE(Ids(hot_.get()).count(w.file_id));
  EXPECT_TRUE(Ids(warm_.get()).count(w.file_id));
  EXPECT_FALSE(Ids(warm_.get()).count(h.file_id));
  EXPECT_EQ(*Get("h"), big);
  EXPECT_EQ(*Get("w"), big);
  // The default ("") is the first pool; an unknown pool is refused.
  ObjectRecord d = Put("d", big, "");
  EXPECT_TRUE(Ids(hot_.get()).count(d.file_id));
  WriteOptions bad;
  bad.pool = "tape";
  EXPECT_EQ(engine_->NewWriter("b", "x", {}, bad).status().code(), Code::kInvalidArgument);
  UploadRecord u;
  u.pool = "tape";
  EXPECT_EQ(engine_->CreateUpload("b", "x", u).status().code(), Code::kInvalidArgument);
}

TEST_F(MoveTest, MoveKeepsEverythingButPoolAndClass) {
  const std::string body = Pattern(200 << 10, 'm');
  ObjectRecord before = Put("k", body, "hot", {{"team", "ml"}});
  ASSERT_TRUE(engine_->SetTags("b", "k", {{"team", "infra"}}).ok());  // a tag record later
  ASSERT_TRUE(engine_->MoveVersion("b", "k", before.version_stamp, "warm", "STANDARD_IA").ok());
  auto after = engine_->HeadObject("b", "k");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->pool, "warm");
  EXPECT_EQ(after->storage_class, "STANDARD_IA");
  EXPECT_EQ(after->etag, before.etag);
  EXPECT_EQ(after->version_stamp, before.version_stamp);
  EXPECT_EQ(after->mtime_ns, before.mtime_ns);
  EXPECT_EQ(after->size_bytes, before.size_bytes);
  EXPECT_EQ(after->tags, (Tags{{"team", "infra"}}));
  EXPECT_NE(after->file_id, before.file_id);
  EXPECT_EQ(*Get("k"), body);
  EXPECT_TRUE(Ids(hot_.get()).empty()) << "the old copy is removed";
  EXPECT_TRUE(Ids(warm_.get()).count(after->file_id));
  EXPECT_EQ(Records(meta::kIntentPrefix), 0u);
  EXPECT_EQ(Records(meta::kGarbagePrefix), 0u);
  // And back again, through the other kind of store.
  ASSERT_TRUE(engine_->MoveVersion("b", "k", before.version_stamp, "hot", "").ok());
  EXPECT_EQ(*Get("k"), body);
  EXPECT_EQ(engine_->HeadObject("b", "k")->pool, "hot");
  // Still the same after a restart (the records say where the data is).
  Open();
  EXPECT_EQ(*Get("k"), body);
  EXPECT_TRUE(Ids(warm_.get()).empty()) << "the copy in warm went when it moved back";
}

TEST_F(MoveTest, MultipartPartsMoveTogether) {
  auto upload = engine_->CreateUpload("b", "mp", {});
  ASSERT_TRUE(upload.ok());
  std::vector<std::string> bodies = {Pattern(5 << 20, 'x'), Pattern(100 << 10, 'y')};
  std::vector<CompletePart> parts;
  for (uint32_t i = 0; i < bodies.size(); ++i) {
    auto w = engine_->NewPartWriter("b", "mp", *upload, i + 1);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(bodies[i]).ok());
    ASSERT_TRUE((*w)->Commit().ok());
    parts.push_back({i + 1, Md5Hex(bodies[i])});
  }
  CompleteProblem problem;
  auto rec = engine_->CompleteUpload("b", "mp", *upload, parts, &problem);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  ASSERT_TRUE(engine_->MoveVersion("b", "mp", rec->version_stamp, "warm", "GLACIER_IR").ok());
  auto moved = engine_->HeadObject("b", "mp");
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->etag, rec->etag);
  ASSERT_EQ(moved->parts.size(), 2u);
  EXPECT_EQ(moved->parts[1].etag, rec->parts[1].etag);
  EXPECT_EQ(*Get("mp"), bodies[0] + bodies[1]);
  EXPECT_TRUE(Ids(hot_.get()).empty());
}

TEST_F(MoveTest, InlineVersionsAreRelabelled) {
  ObjectRecord small = Put("s", "tiny", "hot");
  ASSERT_TRUE(small.is_inline);
  ASSERT_TRUE(engine_->MoveVersion("b", "s", small.version_stamp, "warm", "STANDARD_IA").ok());
  EXPECT_EQ(engine_->HeadObject("b", "s")->storage_class, "STANDARD_IA");
  EXPECT_EQ(*Get("s"), "tiny");
}

TEST_F(MoveTest, RefusedMoveLeavesTheVersionAndNoCopy) {
  const std::string body = Pattern(200 << 10, 'r');
  ObjectRecord rec = Put("k", body, "hot");
  Status st = engine_->MoveVersion("b", "k", rec.version_stamp, "warm", "STANDARD_IA",
                                   [](const ObjectRecord&) { return PreconditionFailed("no"); });
  EXPECT_EQ(st.code(), Code::kPreconditionFailed);
  EXPECT_EQ(engine_->HeadObject("b", "k")->pool, "hot");
  EXPECT_EQ(*Get("k"), body);
  EXPECT_TRUE(Ids(warm_.get()).empty()) << "the copy is removed";
  EXPECT_EQ(Records(meta::kIntentPrefix), 0u);
  EXPECT_EQ(engine_->MoveVersion("b", "k", rec.version_stamp + 1, "warm", "").code(),
            Code::kNotFound);
  EXPECT_EQ(engine_->MoveVersion("b", "k", rec.version_stamp, "tape", "").code(),
            Code::kInvalidArgument);
}

// A crash after the copy was written but before the switch: the intent
// names the copy, the record still the original; the start-up sweep removes
// the copy from the pool it is in.
TEST_F(MoveTest, CrashBeforeTheSwitchLeavesTheOriginal) {
  const std::string body = Pattern(200 << 10, 'c');
  ObjectRecord rec = Put("k", body, "hot");
  const std::string copy_id(32, 'e');
  kv_->Write([&] { meta::WriteBatch b; b.Put(meta::IntentKey(copy_id), ""); return b; }(), true)
      .IgnoreError();
  {
    auto w = warm_->Create(copy_id, {"b", "k", "", 0, 99});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(body).ok());
    ASSERT_TRUE((*w)->Finish("").ok());
  }
  Open();
  EXPECT_FALSE(Ids(warm_.get()).count(copy_id));
  EXPECT_EQ(*Get("k"), body);
  EXPECT_EQ(Records(meta::kIntentPrefix), 0u);
}

// A crash after the switch but before the old copy went: the G record names
// it; the start-up sweep removes it, the record reads from the new pool.
TEST_F(MoveTest, CrashAfterTheSwitchLeavesTheNewCopy) {
  const std::string body = Pattern(200 << 10, 'd');
  ObjectRecord rec = Put("k", body, "hot");
  ASSERT_TRUE(engine_->MoveVersion("b", "k", rec.version_stamp, "warm", "STANDARD_IA").ok());
  // Put the old file back as a crash would have left it, with its G record.
  {
    auto w = hot_->Create(rec.file_id, {"b", "k", "", 0, rec.version_stamp});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(body).ok());
    ASSERT_TRUE((*w)->Finish("").ok());
  }
  kv_->Write([&] { meta::WriteBatch b; b.Put(meta::GarbageKey(rec.file_id), ""); return b; }(),
             true)
      .IgnoreError();
  Open();
  EXPECT_TRUE(Ids(hot_.get()).empty());
  EXPECT_EQ(*Get("k"), body);
  EXPECT_EQ(Records(meta::kGarbagePrefix), 0u);
}

// A power loss can drop the (unsynced) intent of a synced copy: the sweep
// finds the file that no record names in the pool it is in.
TEST_F(MoveTest, SweepFindsOrphansInEveryPool) {
  const std::string body = Pattern(200 << 10, 'o');
  Put("k", body, "hot");
  Put("w", body, "warm");
  const std::string orphan(32, 'f');
  {
    auto w = hot_->Create(orphan, {"b", "gone", "", 0, 5});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(body).ok());
    ASSERT_TRUE((*w)->Finish("").ok());
  }
  Open();
  EXPECT_FALSE(Ids(hot_.get()).count(orphan));
  EXPECT_EQ(*Get("k"), body);
  EXPECT_EQ(*Get("w"), body);
}


// A pool behind a network, as remote/remote_store.h is: a plain store that
// says remote(), counts the removals asked of it and can be made unreachable.
class FarStore : public storage::DataStore {
 public:
  explicit FarStore(std::unique_ptr<storage::DataStore> inner) : inner_(std::move(inner)) {}
  bool remote() const override { return true; }
  Result<std::unique_ptr<storage::DataWriter>> Create(const std::string& id,
                                                      const storage::DataHeader& h) override {
    if (away) return Unavailable("away");
    return inner_->Create(id, h);
  }
  Result<std::unique_ptr<storage::DataReader>> Open(const std::string& id, uint64_t size) override {
    if (away) return Unavailable("away");
    return inner_->Open(id, size);
  }
  Status Remove(const std::string& id) override {
    ++removes;
    if (away) return Unavailable("away");
    return inner_->Remove(id);
  }
  size_t inline_max_bytes() const override { return 0; }
  Result<std::vector<std::string>> ListIds() override {
    if (away) return Unavailable("away");
    return inner_->ListIds();
  }
  Result<std::pair<storage::DataHeader, std::string>> ReadHeaderAndTrailer(
      const std::string& id) override {
    return inner_->ReadHeaderAndTrailer(id);
  }
  bool away = false;
  int removes = 0;

 private:
  std::unique_ptr<storage::DataStore> inner_;
};

class RemotePoolTest : public MoveTest {
 protected:
  void SetUp() override {
    auto c = storage::OpenPlainDataStore(mem_.get(), "/cold");
    ASSERT_TRUE(c.ok());
    far_ = std::make_unique<FarStore>(std::move(c).value());
    OpenWithFar();
    ASSERT_TRUE(engine_->CreateBucket("b", BucketRecord{1, "us-east-1", "me"}).ok());
  }
  void OpenWithFar() {
    engine_.reset();
    auto h = storage::OpenPlainDataStore(mem_.get(), "/hot");
    ASSERT_TRUE(h.ok());
    hot_ = std::move(h).value();
    auto e = ObjectEngine::Open({{"hot", hot_.get()}, {"cold", far_.get()}}, kv_.get());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }
  std::unique_ptr<FarStore> far_;
};

// Removing a local file never costs a round trip to the remote pool; a file
// that lives there is removed there.
TEST_F(RemotePoolTest, GarbageOfLocalFilesNeverAsksTheRemotePool) {
  const std::string body = Pattern(300 << 10, 'g');
  Put("k", body, "hot");
  Put("k", body + "x", "hot");  // the first version's file is garbage now
  ASSERT_TRUE(engine_->DeleteObject("b", "k").ok());
  EXPECT_EQ(far_->removes, 0);
  EXPECT_TRUE(Ids(hot_.get()).empty());

  ObjectRecord cold = Put("c", body, "cold");
  ASSERT_EQ(Ids(far_.get()).size(), 1u);
  ASSERT_TRUE(engine_->DeleteObject("b", "c").ok());
  EXPECT_TRUE(Ids(far_.get()).empty());
  EXPECT_GE(far_->removes, 1);
}

// The remote pool away at start-up: the server still opens (its orphans wait
// for a later start), and data it holds is back once the endpoint is.
TEST_F(RemotePoolTest, AnUnreachableRemotePoolDoesNotStopTheStart) {
  const std::string body = Pattern(300 << 10, 'r');
  Put("c", body, "cold");
  far_->away = true;
  OpenWithFar();
  EXPECT_EQ(Get("c").status().code(), Code::kUnavailable);
  far_->away = false;
  EXPECT_EQ(*Get("c"), body);
}

}  // namespace
}  // namespace strata::object

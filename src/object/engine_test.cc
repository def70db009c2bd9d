#include "object/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "io/fault_fs.h"
#include "io/mem_fs.h"
#include "meta/keys.h"
#include "storage/plain_store.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/thread_priority.h"
#include "common/thread_wait.h"

namespace strata::object {
namespace {

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = io::NewMemFileSystem();
    fault_ = std::make_unique<io::FaultFileSystem>(mem_.get());
    kv_ = meta::NewMemStore();
    Reopen();
    ASSERT_TRUE(engine_->CreateBucket("b", BucketRecord{1, "us-east-1", "me"}).ok());
  }
  void Reopen() {
    engine_.reset();
    auto store = storage::OpenPlainDataStore(fault_.get(), "/data");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    auto e = ObjectEngine::Open(store_.get(), kv_.get());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }
  Status Put(const std::string& key, const std::string& data, size_t piece = 1 << 16) {
    auto w = engine_->NewWriter("b", key, {});
    if (!w.ok()) return w.status();
    for (size_t off = 0; off < data.size(); off += piece) {
      RETURN_IF_ERROR((*w)->Append(std::string_view(data).substr(off, piece)));
    }
    auto rec = (*w)->Commit();
    return rec.status();
  }
  Result<std::string> Get(const std::string& key) {
    ASSIGN_OR_RETURN(auto r, engine_->OpenObject("b", key));
    std::string out(r->record().size_bytes, '\0');
    size_t off = 0;
    while (off < out.size()) {
      ASSIGN_OR_RETURN(size_t n, r->ReadAt(off, out.data() + off, out.size() - off));
      if (n == 0) return Corruption("short read");
      off += n;
    }
    return out;
  }
  size_t DataFiles() {
    size_t n = 0;
    for (int i = 0; i < 256; ++i) {
      char sub[4];
      snprintf(sub, sizeof(sub), "%02x", i);
      auto list = mem_->ListDir(std::string("/data/objects/") + sub);
      if (list.ok()) n += list->size();
    }
    return n;
  }

  std::unique_ptr<io::MemFileSystem> mem_;
  std::unique_ptr<io::FaultFileSystem> fault_;
  std::unique_ptr<meta::KvStore> kv_;
  std::unique_ptr<storage::DataStore> store_;
  std::unique_ptr<ObjectEngine> engine_;
};

constexpr size_t kInline = 128 * 1024;  // PlainDataStore's inline limit

std::string Pattern(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + i * 7 % 251);
  return s;
}

TEST_F(EngineTest, InlineAndFileObjectsRoundTrip) {
  for (size_t size : {size_t{0}, size_t{1}, kInline, kInline + 1, size_t{3 << 20}}) {
    std::string key = "k" + std::to_string(size);
    std::string data = Pattern(size, 'a');
    ASSERT_TRUE(Put(key, data).ok());
    auto got = Get(key);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, data) << size;
    auto head = engine_->HeadObject("b", key);
    ASSERT_TRUE(head.ok());
    EXPECT_EQ(head->size_bytes, size);
    EXPECT_EQ(head->is_inline, size <= kInline);
  }
  EXPECT_EQ(DataFiles(), 2u);  // only the two objects above the inline limit
}

TEST_F(EngineTest, EtagIsMd5) {
  ASSERT_TRUE(Put("x", "hello").ok());
  EXPECT_EQ(engine_->HeadObject("b", "x")->etag, "5d41402abc4b2a76b9719d911017c592");
}

// Counts what a pool would hear from the thread.
struct BulkCounter : ThreadWaitObserver {
  int bulk = 0;
  void WaitBegins() override {}
  void WaitEnds() override {}
  void TurnsBulk() override { ++bulk; }
};

TEST_F(EngineTest, ABodyPastItsFirstMiBTurnsItsThreadBulk) {
  // On a pool's thread, the receiving of a large body steps back for small
  // requests the way a large GET's does (common/thread_wait.h).
  BulkCounter pool;
  SetThreadWaitObserver(&pool);
  ASSERT_TRUE(Put("small", Pattern(1 << 20, 's'), 1 << 16).ok());
  EXPECT_EQ(pool.bulk, 0) << "1 MiB is not bulk";
  ASSERT_TRUE(Put("large", Pattern((1 << 20) + (1 << 17), 'l'), 1 << 16).ok());
  EXPECT_EQ(pool.bulk, 1);
  EXPECT_TRUE(EndThisThreadBulk());  // what the pool does when the request ends
  SetThreadWaitObserver(nullptr);
  EXPECT_EQ(*Get("large"), Pattern((1 << 20) + (1 << 17), 'l'));
}

// Records the calling thread's nice value at each synced write.
class NiceRecordingStore : public meta::KvStore {
 public:
  explicit NiceRecordingStore(std::unique_ptr<meta::KvStore> inner) : inner_(std::move(inner)) {}
  Result<std::optional<std::string>> Get(std::string_view key) override { return inner_->Get(key); }
  Status Write(const meta::WriteBatch& batch, bool sync) override {
    if (sync) nice_at_sync.push_back(ThisThreadNice());
    return inner_->Write(batch, sync);
  }
  Status Write(meta::WriteBatch&& batch, bool sync) override {
    if (sync) nice_at_sync.push_back(ThisThreadNice());
    return inner_->Write(std::move(batch), sync);
  }
  std::unique_ptr<meta::KvIterator> NewIterator() override { return inner_->NewIterator(); }
  Status Checkpoint(const std::string& dir) override { return inner_->Checkpoint(dir); }
  std::vector<int> nice_at_sync;

 private:
  std::unique_ptr<meta::KvStore> inner_;
};

TEST_F(EngineTest, ABulkWriterCommitsAtItsFullPriority) {
  // A large PUT's thread steps back for small requests while it receives,
  // but not while others' commits may wait on its own (a group commit).
  if (!CanRestoreNice()) GTEST_SKIP() << "bulk threads are not lowered without CAP_SYS_NICE";
  auto recorder = std::make_unique<NiceRecordingStore>(std::move(kv_));
  NiceRecordingStore* rec = recorder.get();
  kv_ = std::move(recorder);
  Reopen();
  BulkCounter pool;
  SetThreadWaitObserver(&pool);
  const int base = ThisThreadNice();
  rec->nice_at_sync.clear();
  ASSERT_TRUE(Put("large", Pattern(3 << 20, 'l')).ok());
  EXPECT_EQ(pool.bulk, 1);
  ASSERT_FALSE(rec->nice_at_sync.empty());
  EXPECT_EQ(rec->nice_at_sync.back(), base) << "the commit ran at the bulk priority";
  EXPECT_GT(ThisThreadNice(), base) << "the rest of the request stays bulk";
  EXPECT_TRUE(EndThisThreadBulk());
  EXPECT_EQ(ThisThreadNice(), base);
  SetThreadWaitObserver(nullptr);
}

TEST_F(EngineTest, EtagOfLargeBodiesIsMd5) {
  // Past 1 MiB the MD5 runs on a helper thread; the result must not change
  // with the piece sizes.
  std::string data = Pattern((5 << 20) + 12345, 'q');
  StreamHash md5(StreamHash::Kind::kMd5);
  md5.Update(data.data(), data.size());
  std::string want = HexEncode(md5.Final());
  for (size_t piece : {size_t{1000}, size_t{1} << 16, size_t{1} << 20, data.size()}) {
    ASSERT_TRUE(Put("big", data, piece).ok());
    EXPECT_EQ(engine_->HeadObject("b", "big")->etag, want) << piece;
    EXPECT_EQ(*Get("big"), data);
  }
  // An aborted large write (destructor) leaves no thread or data behind.
  {
    auto w = engine_->NewWriter("b", "aborted", {});
    ASSERT_TRUE((*w)->Append(data).ok());
    ASSERT_TRUE((*w)->Append(data).ok());
  }
  EXPECT_EQ(Get("aborted").status().code(), Code::kNotFound);
}

// A body read into the writer's own buffers (Buffer / AppendBuffer, the PUT
// path): the MD5 helper hashes them where they are, so a buffer handed out
// again before it was hashed would change the ETag. Piece sizes vary (a
// spare must be big enough) and a plain Append (a copy) comes in between.
TEST_F(EngineTest, EtagOfBodiesReadIntoTheWritersBuffersIsMd5) {
  std::string data = Pattern((7 << 20) + 777, 'z');
  StreamHash md5(StreamHash::Kind::kMd5);
  md5.Update(data.data(), data.size());
  const std::string want = HexEncode(md5.Final());
  const std::vector<size_t> sizes = {1 << 20, 300 << 10, 4096, (1 << 20) + 1, 65536, 1 << 20};
  for (int round = 0; round < 3; ++round) {
    auto w = engine_->NewWriter("b", "pieces", {});
    ASSERT_TRUE(w.ok());
    size_t off = 0;
    for (size_t i = 0; off < data.size(); ++i) {
      const size_t n = std::min(sizes[(i + round) % sizes.size()], data.size() - off);
      if (i % 7 == 3) {  // now and then a copying Append between the pieces
        ASSERT_TRUE((*w)->Append(std::string_view(data).substr(off, n)).ok());
      } else {
        char* buf = (*w)->Buffer(n);
        std::memcpy(buf, data.data() + off, n);  // as a body read would
        ASSERT_TRUE((*w)->AppendBuffer(n).ok());
      }
      off += n;
    }
    auto rec = (*w)->Commit();
    ASSERT_TRUE(rec.ok()) << rec.status().ToString();
    EXPECT_EQ(rec->etag, want) << "round " << round;
    EXPECT_TRUE(*Get("pieces") == data) << "round " << round;
  }
  // More than the buffer holds is refused, not written past its end.
  auto w = engine_->NewWriter("b", "over", {});
  (*w)->Buffer(100);
  EXPECT_FALSE((*w)->AppendBuffer(1 << 20).ok());
}

TEST_F(EngineTest, OverwriteAndDeleteRemoveDataFiles) {
  ASSERT_TRUE(Put("k", Pattern(1 << 20, 'a')).ok());
  ASSERT_TRUE(Put("k", Pattern(1 << 20, 'b')).ok());
  EXPECT_EQ(*Get("k"), Pattern(1 << 20, 'b'));
  EXPECT_EQ(DataFiles(), 1u);
  ASSERT_TRUE(engine_->DeleteObject("b", "k").ok());
  EXPECT_EQ(DataFiles(), 0u);
  EXPECT_EQ(Get("k").status().code(), Code::kNotFound);
  EXPECT_TRUE(engine_->DeleteObject("b", "k").ok());  // deleting a missing key is fine
  EXPECT_EQ(engine_->DeleteObject("nobucket", "k").code(), Code::kNotFound);
}

// Two uploads of one part number at once (both writers open, their bodies
// interleaved): as on AWS, the upload that completes last is the part; the
// other's data is collected, and Complete accepts only the winner's ETag.
TEST_F(EngineTest, SamePartUploadedTwiceConcurrentlyTheLastToCompleteWins) {
  auto upload = engine_->CreateUpload("b", "mp", {});
  ASSERT_TRUE(upload.ok()) << upload.status().ToString();
  const std::string first = Pattern(kInline + 5000, 'f'), second = Pattern(kInline + 7000, 's');
  auto w1 = engine_->NewPartWriter("b", "mp", *upload, 1);  // started first ...
  auto w2 = engine_->NewPartWriter("b", "mp", *upload, 1);
  ASSERT_TRUE(w1.ok() && w2.ok());
  for (size_t off = 0; off < second.size(); off += 4096) {
    if (off < first.size()) {
      ASSERT_TRUE((*w1)->Append(std::string_view(first).substr(off, 4096)).ok());
    }
    ASSERT_TRUE((*w2)->Append(std::string_view(second).substr(off, 4096)).ok());
  }
  auto r2 = (*w2)->Commit();
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  auto r1 = (*w1)->Commit();  // ... and completes last
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  ASSERT_NE(r1->etag, r2->etag);

  auto parts = engine_->ListParts(*upload);
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ(parts->front().record.etag, r1->etag);
  EXPECT_EQ(parts->front().record.size_bytes, first.size());
  EXPECT_EQ(DataFiles(), 1u) << "the replaced part's data is collected";

  CompleteProblem problem = CompleteProblem::kNone;
  auto loser = engine_->CompleteUpload("b", "mp", *upload, {{1, r2->etag}}, &problem);
  EXPECT_FALSE(loser.ok());
  EXPECT_EQ(problem, CompleteProblem::kInvalidPart);
  auto done = engine_->CompleteUpload("b", "mp", *upload, {{1, r1->etag}}, &problem);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(*Get("mp"), first);
}

TEST_F(EngineTest, UncommittedWriteIsInvisibleAndSweptAtStartup) {
  {
    auto w = engine_->NewWriter("b", "k", {});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(Pattern(1 << 20, 'a')).ok());
    EXPECT_EQ(Get("k").status().code(), Code::kNotFound);
    EXPECT_EQ(DataFiles(), 1u);
    // Simulate a crash: the writer is neither committed nor aborted.
    engine_.reset();
    (*w).release();  // leak on purpose: a dead process runs no destructors
  }
  Reopen();
  EXPECT_EQ(DataFiles(), 0u);
  EXPECT_EQ(Get("k").status().code(), Code::kNotFound);
}

TEST_F(EngineTest, CommittedObjectSurvivesPowerLoss) {
  ASSERT_TRUE(Put("k", Pattern(1 << 20, 'c')).ok());
  mem_->SimulateCrash();  // drops anything not synced
  Reopen();
  EXPECT_EQ(*Get("k"), Pattern(1 << 20, 'c'));
}

TEST_F(EngineTest, SyncFailureLeavesOldVersionIntact) {
  ASSERT_TRUE(Put("k", Pattern(1 << 20, 'a')).ok());
  fault_->AddRule({io::FaultOp::kSync, "/objects/", IOError("injected EIO"), 0, 1});
  Status st = Put("k", Pattern(1 << 20, 'b'));
  EXPECT_EQ(st.code(), Code::kIOError);
  EXPECT_EQ(*Get("k"), Pattern(1 << 20, 'a'));
  EXPECT_EQ(DataFiles(), 1u);  // the failed attempt's file was removed
}

TEST_F(EngineTest, TornWriteIsNeverServed) {
  for (long torn : {0L, 1L, 4095L, 65535L}) {
    fault_->ClearRules();
    fault_->AddRule({io::FaultOp::kAppend, "/objects/", ResourceExhausted("injected ENOSPC"), 1, 1, torn});
    Status st = Put("t", Pattern(1 << 20, 'z'));
    EXPECT_EQ(st.code(), Code::kResourceExhausted) << torn;
    EXPECT_EQ(Get("t").status().code(), Code::kNotFound) << torn;
  }
  EXPECT_EQ(DataFiles(), 0u);
}

TEST_F(EngineTest, ConditionalCommitSeesCurrentVersion) {
  ASSERT_TRUE(Put("k", "one").ok());
  auto w = engine_->NewWriter("b", "k", {});
  ASSERT_TRUE((*w)->Append("two").ok());
  auto rec = (*w)->Commit([](const std::optional<ObjectRecord>& cur) {
    return cur ? PreconditionFailed("exists") : Status::OK();
  });
  EXPECT_EQ(rec.status().code(), Code::kPreconditionFailed);
  EXPECT_EQ(*Get("k"), "one");
}

TEST_F(EngineTest, BucketLifecycle) {
  EXPECT_EQ(engine_->CreateBucket("b", {}).code(), Code::kAlreadyExists);
  ASSERT_TRUE(Put("k", "x").ok());
  EXPECT_EQ(engine_->DeleteBucket("b").code(), Code::kPreconditionFailed);
  ASSERT_TRUE(engine_->DeleteObject("b", "k").ok());
  EXPECT_TRUE(engine_->DeleteBucket("b").ok());
  EXPECT_EQ(engine_->GetBucket("b").status().code(), Code::kNotFound);
  EXPECT_EQ(engine_->NewWriter("b", "k", {}).status().code(), Code::kNotFound);
}

TEST_F(EngineTest, ListingWithDelimiterAndPages) {
  std::vector<std::string> keys = {"a", "a/1", "a/2", "b", "c/x/y", "c/z", "d"};
  for (const auto& k : keys) ASSERT_TRUE(Put(k, k).ok());
  ListParams p;
  p.delimiter = "/";
  auto r = engine_->ListObjects("b", p);
  ASSERT_TRUE(r.ok());
  std::vector<std::string> got;
  for (auto& e : r->objects) got.push_back(e.key);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b", "d"}));
  EXPECT_EQ(r->common_prefixes, (std::vector<std::string>{"a/", "c/"}));
  EXPECT_FALSE(r->is_truncated);

  // Page through with max_keys=2 and the delimiter: every entry exactly once.
  std::vector<std::string> all;
  p.max_keys = 2;
  p.start_after.clear();
  for (int pages = 0; pages < 10; ++pages) {
    auto page = engine_->ListObjects("b", p);
    ASSERT_TRUE(page.ok());
    for (auto& e : page->objects) all.push_back(e.key);
    for (auto& c : page->common_prefixes) all.push_back(c);
    if (!page->is_truncated) break;
    p.start_after = page->last_emitted;
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::string>{"a", "a/", "b", "c/", "d"}));

  ListParams q;
  q.prefix = "c/";
  q.delimiter = "/";
  r = engine_->ListObjects("b", q);
  EXPECT_EQ(r->common_prefixes, (std::vector<std::string>{"c/x/"}));
  ASSERT_EQ(r->objects.size(), 1u);
  EXPECT_EQ(r->objects[0].key, "c/z");
}

TEST_F(EngineTest, ListingIgnoresPrefixSiblingsAndOtherBuckets) {
  ASSERT_TRUE(engine_->CreateBucket("bb", {}).ok());
  ASSERT_TRUE(Put("x", "1").ok());
  auto w = engine_->NewWriter("bb", "y", {});
  ASSERT_TRUE((*w)->Commit().ok());
  auto r = engine_->ListObjects("b", {});
  ASSERT_EQ(r->objects.size(), 1u);
  EXPECT_EQ(r->objects[0].key, "x");
}

}  // namespace
}  // namespace strata::object

namespace strata::object {
namespace {

// GetBucket serves decoded records from a cache: every change made through
// the engine is seen by the next read, and readers racing the changes never
// end up with an older record than the last one written.
TEST_F(EngineTest, BucketReadsSeeEveryChange) {
  ASSERT_TRUE(engine_->GetBucket("b").ok());  // cached now
  ASSERT_TRUE(engine_->SetBucketPolicy("b", "policy-1").ok());
  EXPECT_EQ(engine_->GetBucket("b")->policy, "policy-1");
  ASSERT_TRUE(engine_->SetBucketVersioning("b", Versioning::kEnabled).ok());
  EXPECT_EQ(engine_->GetBucket("b")->versioning, Versioning::kEnabled);
  ASSERT_TRUE(engine_->CreateBucket("c", BucketRecord{2, "us-east-1", "first"}).ok());
  EXPECT_EQ(engine_->GetBucket("c")->owner, "first");
  ASSERT_TRUE(engine_->DeleteBucket("c").ok());
  EXPECT_EQ(engine_->GetBucket("c").status().code(), Code::kNotFound);
  ASSERT_TRUE(engine_->CreateBucket("c", BucketRecord{3, "us-east-1", "second"}).ok());
  EXPECT_EQ(engine_->GetBucket("c")->owner, "second");

  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) EXPECT_TRUE(engine_->GetBucket("b").ok());
    });
  }
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(engine_->SetBucketTags("b", {{"round", std::to_string(i)}}).ok());
  }
  stop = true;
  for (auto& r : readers) r.join();
  auto b = engine_->GetBucket("b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->tags, (Tags{{"round", "99"}}));
  EXPECT_EQ(b->policy, "policy-1");
}

}  // namespace
}  // namespace strata::object

// Power-loss matrix over the commit protocol. For each operation (PUT inline
// and to a data file, overwrite, DELETE, COPY, multipart Complete, the KV
// tier's put-if-absent) the power is cut after every possible number of
// mutating file-system and metadata operations; then the in-memory twins drop
// what a power loss drops (unsynced bytes, unsynced directory entries,
// metadata batches no synced write covered), the engine is reopened, and:
//  - the key reads exactly the old state or the new one, never a mixture,
//    a torn body or an error;
//  - if the operation had been acknowledged, the new state is there;
//  - no data file is left that no record references (plain store), once the
//    orphan sweep ran.
// Removing any sync from the protocol makes some cut point fail here.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "io/fault_fs.h"
#include "io/mem_fs.h"
#include "meta/mem_store.h"
#include "object/engine.h"
#include "storage/erasure_store.h"
#include "storage/plain_store.h"

namespace strata::object {
namespace {

// Shares the file system's power-cut budget, so metadata writes sit in the
// same sequence of operations as file writes.
class CutKvStore : public meta::KvStore {
 public:
  CutKvStore(meta::KvStore* base, io::FaultFileSystem* fs) : base_(base), fs_(fs) {}
  Result<std::optional<std::string>> Get(std::string_view key) override { return base_->Get(key); }
  Status Write(const meta::WriteBatch& batch, bool sync) override {
    if (!fs_->ConsumeMutatingOp()) return IOError("power cut (injected) in a metadata write");
    return base_->Write(batch, sync);
  }
  std::unique_ptr<meta::KvIterator> NewIterator() override { return base_->NewIterator(); }
  Status Checkpoint(const std::string& dir) override { return base_->Checkpoint(dir); }

 private:
  meta::KvStore* base_;
  io::FaultFileSystem* fs_;
};

std::string Body(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + (i * 13) % 241);
  return s;
}

constexpr size_t kSmall = 1000;         // inline in the record
constexpr size_t kLarge = 300 * 1024;   // a data file
constexpr size_t kPart = 5ull << 20;    // the minimum non-final part

enum class StoreKind { kPlain, kErasure };

class PowerLossTest : public ::testing::TestWithParam<StoreKind> {
 public:  // scenarios drive the fixture through lambdas
  // A fresh machine: file system, metadata, engine, and the bucket (durable).
  void Boot() {
    engine_.reset();
    store_.reset();
    mem_ = io::NewMemFileSystem();
    fault_ = std::make_unique<io::FaultFileSystem>(mem_.get());
    kv_ = meta::NewMemKvStore();
    cut_kv_ = std::make_unique<CutKvStore>(kv_.get(), fault_.get());
    Reopen();
    ASSERT_TRUE(engine_->CreateBucket("b", BucketRecord{1, "us-east-1", "me"}).ok());
  }

  void Reopen() {
    engine_.reset();
    store_.reset();
    if (GetParam() == StoreKind::kPlain) {
      auto s = storage::OpenPlainDataStore(fault_.get(), "/data");
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      store_ = std::move(s).value();
    } else {
      storage::PoolOptions pool;
      pool.drives = {"/d0", "/d1", "/d2"};
      pool.k = 2;
      pool.m = 1;
      pool.block_bytes = 64 * 1024;
      auto s = storage::ErasureDataStore::Open(fault_.get(), pool);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      store_ = std::move(s).value();
    }
    auto e = ObjectEngine::Open(store_.get(), cut_kv_.get());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
  }

  Status Put(const std::string& key, const std::string& data,
             std::function<Status(const std::optional<ObjectRecord>&)> check = nullptr) {
    ASSIGN_OR_RETURN(auto w, engine_->NewWriter("b", key, {}));
    for (size_t off = 0; off < data.size(); off += 64 * 1024) {
      RETURN_IF_ERROR(w->Append(std::string_view(data).substr(off, 64 * 1024)));
    }
    return w->Commit(std::move(check)).status();
  }

  // The body of `key`, or nullopt when it does not exist; an error otherwise.
  Result<std::optional<std::string>> Read(const std::string& key) {
    auto r = engine_->OpenObject("b", key);
    if (!r.ok() && r.status().code() == Code::kNotFound) return std::optional<std::string>();
    if (!r.ok()) return r.status();
    std::string out((*r)->record().size_bytes, '\0');
    size_t off = 0;
    while (off < out.size()) {
      ASSIGN_OR_RETURN(size_t n, (*r)->ReadAt(off, out.data() + off, out.size() - off));
      if (n == 0) return Corruption("short read");
      off += n;
    }
    return std::optional<std::string>(out);
  }

  size_t PlainDataFiles() {
    size_t n = 0;
    for (int i = 0; i < 256; ++i) {
      char sub[4];
      snprintf(sub, sizeof(sub), "%02x", i);
      auto list = mem_->ListDir(std::string("/data/objects/") + sub);
      if (list.ok()) n += list->size();
    }
    return n;
  }

  struct Scenario {
    std::string name;
    std::function<void(PowerLossTest*)> setup;  // the state before (made durable)
    std::function<Status(PowerLossTest*)> op;   // the operation under test
    std::optional<std::string> before;          // the key's body before
    std::optional<std::string> after;           // ... and after the operation
    size_t files_before = 0, files_after = 0;   // data files referenced (plain store)
  };

  void RunMatrix(const Scenario& s) {
    // Once without a cut, to count the operation's mutating calls.
    Boot();
    s.setup(this);
    long start = fault_->mutating_ops();
    ASSERT_TRUE(s.op(this).ok()) << s.name;
    const long total = fault_->mutating_ops() - start;
    ASSERT_GT(total, 0) << s.name;
    for (long cut = 0; cut <= total; ++cut) {
      SCOPED_TRACE(s.name + ", power cut after " + std::to_string(cut) + " of " +
                   std::to_string(total) + " operations");
      Boot();
      s.setup(this);
      fault_->CutPowerAfter(cut);
      const bool acked = s.op(this).ok();
      engine_.reset();  // the process dies with the machine
      store_.reset();
      mem_->SimulateCrash();
      kv_->SimulateCrash();
      fault_->CutPowerAfter(-1);
      Reopen();
      auto got = Read("k");
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      const bool is_before = *got == s.before, is_after = *got == s.after;
      EXPECT_TRUE(is_before || is_after) << "neither the old nor the new state";
      if (acked) EXPECT_TRUE(is_after) << "acknowledged, then lost";
      if (GetParam() == StoreKind::kPlain) {
        EXPECT_EQ(PlainDataFiles(), is_after ? s.files_after : s.files_before)
            << "data files no record references";
      }
    }
  }

  std::unique_ptr<io::MemFileSystem> mem_;
  std::unique_ptr<io::FaultFileSystem> fault_;
  std::unique_ptr<meta::MemKvStore> kv_;
  std::unique_ptr<CutKvStore> cut_kv_;
  std::unique_ptr<storage::DataStore> store_;
  std::unique_ptr<ObjectEngine> engine_;
};

// The state every scenario starts from, synced by the bucket's own creation
// and a synced commit.
void Nothing(PowerLossTest*) {}

TEST_P(PowerLossTest, PutToADataFile) {
  RunMatrix({"PUT 300 KiB", Nothing, [](PowerLossTest* t) { return t->Put("k", Body(kLarge, 'a')); },
             std::nullopt, Body(kLarge, 'a'), 0, 1});
}

TEST_P(PowerLossTest, PutInline) {
  RunMatrix({"PUT 1000 B", Nothing, [](PowerLossTest* t) { return t->Put("k", Body(kSmall, 'b')); },
             std::nullopt, Body(kSmall, 'b'), 0, GetParam() == StoreKind::kPlain ? 0u : 1u});
}

TEST_P(PowerLossTest, OverwriteReplacesAndCollectsTheOldFile) {
  RunMatrix({"overwrite", [](PowerLossTest* t) { ASSERT_TRUE(t->Put("k", Body(kLarge, 'o')).ok()); },
             [](PowerLossTest* t) { return t->Put("k", Body(kLarge + 5, 'n')); },
             Body(kLarge, 'o'), Body(kLarge + 5, 'n'), 1, 1});
}

TEST_P(PowerLossTest, Delete) {
  RunMatrix({"DELETE", [](PowerLossTest* t) { ASSERT_TRUE(t->Put("k", Body(kLarge, 'd')).ok()); },
             [](PowerLossTest* t) { return t->engine_->DeleteObject("b", "k"); },
             Body(kLarge, 'd'), std::nullopt, 1, 0});
}

TEST_P(PowerLossTest, CopyStreamsIntoANewVersion) {
  RunMatrix({"COPY", [](PowerLossTest* t) { ASSERT_TRUE(t->Put("src", Body(kLarge, 's')).ok()); },
             [](PowerLossTest* t) -> Status {
               ASSIGN_OR_RETURN(auto src, t->Read("src"));
               if (!src) return NotFound("src");
               return t->Put("k", *src);
             },
             std::nullopt, Body(kLarge, 's'), 1, 2});
}

TEST_P(PowerLossTest, KvPutIfAbsent) {
  // The KV tier's PUT: put-if-absent through the same commit.
  auto if_absent = [](const std::optional<ObjectRecord>& cur) {
    return cur ? AlreadyExists("block exists") : Status::OK();
  };
  RunMatrix({"KV PUT", Nothing,
             [if_absent](PowerLossTest* t) { return t->Put("k", Body(kLarge, 'v'), if_absent); },
             std::nullopt, Body(kLarge, 'v'), 0, 1});
}

TEST_P(PowerLossTest, MultipartComplete) {
  static std::string upload;
  RunMatrix({"CompleteMultipartUpload",
             [](PowerLossTest* t) {
               auto id = t->engine_->CreateUpload("b", "k", UploadRecord{});
               ASSERT_TRUE(id.ok());
               upload = *id;
               for (uint32_t part : {1u, 2u}) {
                 auto w = t->engine_->NewPartWriter("b", "k", upload, part);
                 ASSERT_TRUE(w.ok());
                 std::string data = Body(part == 1 ? kPart : 1000, static_cast<char>('0' + part));
                 for (size_t off = 0; off < data.size(); off += 1 << 20) {
                   ASSERT_TRUE((*w)->Append(std::string_view(data).substr(off, 1 << 20)).ok());
                 }
                 ASSERT_TRUE((*w)->Commit().ok());
               }
             },
             [](PowerLossTest* t) -> Status {
               ASSIGN_OR_RETURN(auto parts, t->engine_->ListParts(upload));
               std::vector<CompletePart> list;
               for (const PartInfo& p : parts) list.push_back({p.part_number, p.record.etag});
               CompleteProblem problem;
               return t->engine_->CompleteUpload("b", "k", upload, list, &problem).status();
             },
             std::nullopt, Body(kPart, '1') + Body(1000, '2'), 2, 2});
}

INSTANTIATE_TEST_SUITE_P(Stores, PowerLossTest,
                         ::testing::Values(StoreKind::kPlain, StoreKind::kErasure),
                         [](const auto& info) {
                           return info.param == StoreKind::kPlain ? "plain" : "erasure2plus1";
                         });

}  // namespace
}  // namespace strata::object

// The per-id lock discipline of the erasure store (erasure_internal.h, at
// IdLock): publish, heal and remove of one id exclude each other, readers open
// a consistent set of shards, and shards of another generation of an id
// (a drive that missed an overwrite) are never mixed into reads or heals.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <fstream>
#include <chrono>
#include <map>
#include <thread>

#include "common/hash.h"
#include "common/thread_priority.h"
#include "io/forwarding_fs_test_util.h"
#include "io/mem_fs.h"
#include "storage/erasure_store.h"
#include "storage/healer.h"
#include "storage/store_test_util.h"

namespace strata::storage {
namespace {

using namespace std::chrono_literals;

using io::ForwardingFs;

// Rename sleeps `step` x (drive index), so the renames that publish one write
// land on the drives one after the other (as on a loaded machine), with
// windows in which some drives show the new shard and others the old one.
class StaggeredRenameFs : public ForwardingFs {
 public:
  StaggeredRenameFs(io::FileSystem* base, std::chrono::microseconds step)
      : ForwardingFs(base), step_(step) {}
  Status Rename(const std::string& from, const std::string& to) override {
    size_t d = to.find("/d");
    if (d != std::string::npos && d + 2 < to.size() && std::isdigit(to[d + 2])) {
      std::this_thread::sleep_for(step_ * (to[d + 2] - '0'));
    }
    return ForwardingFs::Rename(from, to);
  }

 private:
  std::chrono::microseconds step_;
};

constexpr size_t kBlock = 256;
constexpr int kDrives = 4, kK = 2, kM = 2;
constexpr size_t kSize = 3 * kK * kBlock + 77;  // 4 stripes, the last one short

std::string Pattern(size_t n, uint64_t seed) {
  std::string s(n, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

std::string Id(int i) { return "a" + std::to_string(i) + std::string(30, '0'); }

// Version v of id i: its bytes, its header (the version stamp is the
// generation) and its trailer.
std::string Body(int i, int v) { return Pattern(kSize, i * 1000 + v); }
DataHeader Header(int i, int v) {
  return DataHeader{"bkt", "key" + std::to_string(i), "", 0, static_cast<uint64_t>(v + 1)};
}
std::string Trailer(int v) { return "version " + std::to_string(v); }

PoolOptions Pool(std::vector<std::string> drives) {
  PoolOptions o;
  o.drives = std::move(drives);
  o.k = kK;
  o.m = kM;
  o.block_bytes = kBlock;
  return o;
}
std::vector<std::string> Drives() {
  std::vector<std::string> d;
  for (int i = 0; i < kDrives; ++i) d.push_back("/pool/d" + std::to_string(i));
  return d;
}

Status Write(DataStore* store, int i, int v) {
  ASSIGN_OR_RETURN(auto w, store->Create(Id(i), Header(i, v)));
  const std::string body = Body(i, v);
  for (size_t off = 0; off < body.size(); off += 300) {
    RETURN_IF_ERROR(w->Append(std::string_view(body).substr(off, 300)));
  }
  return w->Finish(Trailer(v));
}

Result<std::string> Read(DataStore* store, int i) { return testing::ReadAll(store, Id(i), kSize); }

std::string Slurp(io::FileSystem* fs, const std::string& path) {
  auto f = fs->NewReadableFile(path);
  if (!f.ok()) return "<" + f.status().ToString() + ">";
  std::string s((*f)->Size(), '\0');
  auto n = (*f)->ReadAt(0, s.data(), s.size());
  return n.ok() ? s : "<read error>";
}

std::string ShardPath(const std::string& drive, const std::string& id) {
  return drive + "/shards/" + id.substr(0, 2) + "/" + id;
}

// Overwrites of the same ids race readers and a scrubber (ListIds + Heal of
// every id, what the Healer does without its rate limit). Nothing is damaged,
// so: every read returns exactly one written version, heal never finds
// anything to rebuild, and afterwards every shard file on every drive is
// byte for byte the shard of the last version (as a pool that only ever saw
// that version writes it: data and parity, so no mixture hides in a shard).
TEST(ErasureRaceTest, HealAndReadsRaceOverwritesOfTheSameIds) {
  auto mem = io::NewMemFileSystem();
  StaggeredRenameFs fs(mem.get(), 300us);
  auto opened = ErasureDataStore::Open(&fs, Pool(Drives()));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ErasureDataStore* store = opened->get();

  constexpr int kIds = 2, kVersions = 100;  // 200 overwrites in all
  std::map<std::string, int> version_of;    // body -> version
  for (int i = 0; i < kIds; ++i) {
    for (int v = 0; v <= kVersions; ++v) version_of[Body(i, v)] = v;
    ASSERT_TRUE(Write(store, i, 0).ok());
  }

  std::atomic<int> writers_left{kIds};
  std::atomic<int> write_errors{0}, read_errors{0}, mixtures{0}, reads{0};
  std::atomic<int> heals{0}, heal_errors{0}, heal_rebuilds{0}, heal_unrecoverable{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kIds; ++i) {
    threads.emplace_back([&, i] {
      for (int v = 1; v <= kVersions; ++v) {
        if (!Write(store, i, v).ok()) ++write_errors;
      }
      --writers_left;
    });
  }
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      while (writers_left.load() > 0) {
        for (int i = 0; i < kIds; ++i) {
          auto got = Read(store, i);
          ++reads;
          if (!got.ok()) {
            ++read_errors;
          } else if (version_of.find(*got) == version_of.end()) {
            ++mixtures;
          }
        }
      }
    });
  }
  threads.emplace_back([&] {
    while (writers_left.load() > 0) {
      auto ids = store->ListIds();
      if (!ids.ok()) continue;
      for (const std::string& id : *ids) {
        auto heal = store->Heal(id);
        ++heals;
        if (!heal.ok()) {
          ++heal_errors;
          continue;
        }
        heal_rebuilds += heal->shards_rebuilt;
        heal_unrecoverable += heal->unrecoverable ? 1 : 0;
      }
    }
  });
  for (auto& t : threads) t.join();

  EXPECT_EQ(write_errors.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(read_errors.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_EQ(mixtures.load(), 0) << "reads that returned no written version, of " << reads.load();
  EXPECT_GT(heals.load(), 0);
  EXPECT_EQ(heal_errors.load(), 0) << "of " << heals.load() << " heals";
  EXPECT_EQ(heal_rebuilds.load(), 0) << "shards 'repaired' on an undamaged pool, in "
                                     << heals.load() << " heals";
  EXPECT_EQ(heal_unrecoverable.load(), 0);

  // The final state, shard by shard, against a pool that saw only the last version.
  auto ref_mem = io::NewMemFileSystem();
  auto ref = ErasureDataStore::Open(ref_mem.get(), Pool(Drives()));
  ASSERT_TRUE(ref.ok());
  for (int i = 0; i < kIds; ++i) {
    auto got = Read(store, i);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(version_of[*got], kVersions) << "id " << i;
    ASSERT_TRUE(Write(ref->get(), i, kVersions).ok());
    for (const std::string& d : Drives()) {
      EXPECT_TRUE(Slurp(mem.get(), ShardPath(d, Id(i))) == Slurp(ref_mem.get(), ShardPath(d, Id(i))))
          << "shard of id " << i << " on " << d << " differs from the last version's";
    }
  }
}

// A drive that was offline during an overwrite comes back with the previous
// generation's shard (same id, valid CRCs, older version stamp). With the
// newer shards of the data drives lost, the only k "good" blocks would be one
// of each generation: reads must fail rather than serve the mixture, and heal
// must not rebuild the data shards from it.
TEST(ErasureRaceTest, ShardOfAnOlderGenerationIsNeverMixedIn) {
  auto mem = io::NewMemFileSystem();
  auto store = ErasureDataStore::Open(mem.get(), Pool(Drives()));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(Write(store->get(), 1, 0).ok());
  const std::string v0_shard3 = Slurp(mem.get(), ShardPath(Drives()[3], Id(1)));
  // Drive 3 offline (its directory unmounted elsewhere): v1 lands on drives 0..2.
  std::vector<std::string> without3 = Drives();
  without3[3] = "/unmounted/d3";
  store->reset();
  store = ErasureDataStore::Open(mem.get(), Pool(without3));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE(Write(store->get(), 1, 1).ok());
  // Drive 3 is back, still holding v0's shard.
  store->reset();
  store = ErasureDataStore::Open(mem.get(), Pool(Drives()));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(Slurp(mem.get(), ShardPath(Drives()[3], Id(1))) == v0_shard3);
  auto got = Read(store->get(), 1);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == Body(1, 1));

  // Lose v1's data shards: v1 has one shard left (drive 2), v0 one (drive 3).
  ASSERT_TRUE(mem->RemoveFile(ShardPath(Drives()[0], Id(1))).ok());
  ASSERT_TRUE(mem->RemoveFile(ShardPath(Drives()[1], Id(1))).ok());
  got = Read(store->get(), 1);
  EXPECT_FALSE(got.ok()) << "served "
                         << (*got == Body(1, 0)   ? "v0"
                             : *got == Body(1, 1) ? "v1"
                                                  : "a mixture of v0 and v1");
  auto heal = (*store)->Heal(Id(1));
  ASSERT_TRUE(heal.ok()) << heal.status().ToString();
  EXPECT_TRUE(heal->unrecoverable);
  EXPECT_EQ(heal->shards_rebuilt, 0);
  got = Read(store->get(), 1);
  EXPECT_FALSE(got.ok() && *got != Body(1, 0) && *got != Body(1, 1))
      << "heal rebuilt the data shards from two generations";
}

// With every v1 shard there, heal replaces the stale v0 shard with v1's.
TEST(ErasureRaceTest, HealReplacesTheShardOfAnOlderGeneration) {
  auto mem = io::NewMemFileSystem();
  auto store = ErasureDataStore::Open(mem.get(), Pool(Drives()));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(Write(store->get(), 1, 0).ok());
  std::vector<std::string> without3 = Drives();
  without3[3] = "/unmounted/d3";
  store->reset();
  store = ErasureDataStore::Open(mem.get(), Pool(without3));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(Write(store->get(), 1, 1).ok());
  store->reset();
  store = ErasureDataStore::Open(mem.get(), Pool(Drives()));
  ASSERT_TRUE(store.ok());
  auto ht = (*store)->ReadHeaderAndTrailer(Id(1));
  ASSERT_TRUE(ht.ok());
  EXPECT_EQ(ht->second, Trailer(1));
  auto heal = (*store)->Heal(Id(1));
  ASSERT_TRUE(heal.ok());
  EXPECT_EQ(heal->shards_rebuilt, 1);
  EXPECT_FALSE(heal->unrecoverable);
  // Now any k shards give v1.
  for (int lost : {0, 1}) ASSERT_TRUE(mem->RemoveFile(ShardPath(Drives()[lost], Id(1))).ok());
  auto got = Read(store->get(), 1);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == Body(1, 1));
}

// Forwards to a base FileSystem; the first creation of a "<id>.heal" file
// (a heal has verified the shards and starts writing what it rebuilds) waits
// until the test opens the gate.
class HealGateFs : public ForwardingFs {
 public:
  explicit HealGateFs(io::FileSystem* base) : ForwardingFs(base) {}
  // Whether a heal reached the gate within `limit` (a guard against a hang).
  bool WaitReached(std::chrono::seconds limit) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit, [this] { return reached_; });
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  Result<std::unique_ptr<io::WritableFile>> NewWritableFile(const std::string& p) override {
    if (p.ends_with(".heal")) {
      std::unique_lock lock(mu_);
      reached_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return open_; });
    }
    return ForwardingFs::NewWritableFile(p);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool reached_ = false, open_ = false;
};

// A heal verifies and rebuilds without its id's lock, and publishes under the
// exclusive lock only if nothing replaced the shards meanwhile. With the heal
// of id 1 stopped between verifying and rebuilding, each case runs `during`
// (a read, an overwrite, a remove of that id), which must finish while the
// heal is stopped; the heal then goes on and returns.
struct HealBeside {
  std::unique_ptr<io::FileSystem> mem = io::NewMemFileSystem();
  HealGateFs gate{mem.get()};
  std::unique_ptr<ErasureDataStore> store;
  Result<HealResult> heal = Internal("not run");

  // Writes id 1 (version 0), loses drive 0's shard (or, with `rot`, flips a
  // byte of its last block: same file, size and header), and runs `during`
  // while the heal of id 1 is stopped at the gate. False if `during` did not
  // finish within the guard time (it waited for the heal).
  bool Run(const std::function<void()>& during, bool rot = false) {
    auto opened = ErasureDataStore::Open(&gate, Pool(Drives()));
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return false;
    store = std::move(opened).value();
    EXPECT_TRUE(Write(store.get(), 1, 0).ok());
    const std::string shard0 = ShardPath(Drives()[0], Id(1));
    if (rot) {
      std::string bytes = Slurp(mem.get(), shard0);
      bytes[bytes.size() - 200] ^= 1;
      auto f = mem->NewWritableFile(shard0);
      EXPECT_TRUE(f.ok() && (*f)->Append(bytes).ok() && (*f)->Close().ok());
    } else {
      EXPECT_TRUE(mem->RemoveFile(shard0).ok());
    }
    std::thread healer([this] { heal = store->Heal(Id(1)); });
    EXPECT_TRUE(gate.WaitReached(30s)) << "the heal never started rebuilding";
    auto done = std::async(std::launch::async, during);
    const bool finished = done.wait_for(10s) == std::future_status::ready;
    gate.Open();
    healer.join();
    done.get();
    return finished;
  }
  bool HealFileLeft() {
    for (const std::string& d : Drives()) {
      if (mem->FileExists(ShardPath(d, Id(1)) + ".heal")) return true;
    }
    return false;
  }
};

TEST(ErasureRaceTest, AReadOfAnIdBeingHealedDoesNotWaitForTheHeal) {
  HealBeside t;
  Result<std::string> got = Internal("not read");
  EXPECT_TRUE(t.Run([&] { got = Read(t.store.get(), 1); }))
      << "the read waited for the heal's rebuild (the heal held the id's lock)";
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == Body(1, 0));
  ASSERT_TRUE(t.heal.ok()) << t.heal.status().ToString();
  EXPECT_EQ(t.heal->shards_rebuilt, 1);
  EXPECT_FALSE(t.heal->superseded);
  EXPECT_TRUE(Slurp(t.mem.get(), ShardPath(Drives()[0], Id(1)))[0] != '<') << "not rebuilt";
  EXPECT_FALSE(t.HealFileLeft());
}

TEST(ErasureRaceTest, AnOverwriteDuringAHealWinsAndTheHealPublishesNothing) {
  HealBeside t;
  Status wrote = Internal("not written");
  EXPECT_TRUE(t.Run([&] { wrote = Write(t.store.get(), 1, 1); }))
      << "the overwrite waited for the heal's rebuild";
  ASSERT_TRUE(wrote.ok()) << wrote.ToString();
  // The heal dropped what it rebuilt and looked again: version 1, whole.
  ASSERT_TRUE(t.heal.ok()) << t.heal.status().ToString();
  EXPECT_FALSE(t.heal->superseded);
  EXPECT_TRUE(t.heal->was_healthy);
  EXPECT_EQ(t.heal->shards_rebuilt, 0);
  EXPECT_FALSE(t.HealFileLeft());
  auto again = t.store->Heal(Id(1));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->was_healthy);
  // Every drive holds version 1: any k of them read back as version 1.
  for (int lost : {1, 2}) ASSERT_TRUE(t.mem->RemoveFile(ShardPath(Drives()[lost], Id(1))).ok());
  auto got = Read(t.store.get(), 1);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == Body(1, 1)) << "the heal put version 0's shard back over version 1's";
}

// A rewrite that keeps the header (version stamp) and the size and changes
// the bytes, while the heal rebuilds a shard with a rotten block: only the
// files' identities tell the heal that its rebuilt shard (of the old bytes,
// with valid CRCs) must not go in beside the new ones.
TEST(ErasureRaceTest, ARewriteWithTheSameHeaderDuringAHealWins) {
  HealBeside t;
  const std::string body = Body(1, 7);
  Status wrote = Internal("not written");
  EXPECT_TRUE(t.Run([&] {
    auto w = t.store->Create(Id(1), Header(1, 0));
    wrote = w.ok() ? (*w)->Append(body) : w.status();
    if (wrote.ok()) wrote = (*w)->Finish(Trailer(0));
  }, /*rot=*/true)) << "the rewrite waited for the heal's rebuild";
  ASSERT_TRUE(wrote.ok()) << wrote.ToString();
  ASSERT_TRUE(t.heal.ok()) << t.heal.status().ToString();
  EXPECT_EQ(t.heal->shards_rebuilt, 0);
  // Drive 0's shard with drive 3's: the rewrite's bytes, not a mixture.
  for (int lost : {1, 2}) ASSERT_TRUE(t.mem->RemoveFile(ShardPath(Drives()[lost], Id(1))).ok());
  auto got = Read(t.store.get(), 1);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == body) << (*got == Body(1, 0) ? "the old bytes" : "a mixture of old and new");
}

TEST(ErasureRaceTest, ARemoveDuringAHealWinsAndTheHealPublishesNothing) {
  HealBeside t;
  Status removed = Internal("not removed");
  EXPECT_TRUE(t.Run([&] { removed = t.store->Remove(Id(1)); }))
      << "the remove waited for the heal's rebuild";
  ASSERT_TRUE(removed.ok()) << removed.ToString();
  // The heal dropped what it rebuilt and looked again: nothing there.
  EXPECT_EQ(t.heal.status().code(), Code::kNotFound) << t.heal.status().ToString();
  EXPECT_FALSE(t.HealFileLeft());
  for (const std::string& d : Drives()) {
    EXPECT_FALSE(t.mem->FileExists(ShardPath(d, Id(1)))) << d << ": the heal brought id 1 back";
  }
  EXPECT_FALSE(Read(t.store.get(), 1).ok());
}

// The healer's thread is named "heal" (top -H, perf, the ec benchmark's
// CPU split) and runs at the bulk priority (a heal holds its id's exclusive
// lock only to publish: see the tests above). It repairs what it is given.
TEST(HealerTest, RunsAsAThreadNamedHealAtTheBulkPriorityAndRepairs) {
  auto mem = io::NewMemFileSystem();
  auto opened = ErasureDataStore::Open(mem.get(), Pool(Drives()));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  ErasureDataStore* store = opened->get();
  ASSERT_TRUE(Write(store, 1, 0).ok());
  ASSERT_TRUE(mem->RemoveFile(ShardPath(Drives()[0], Id(1))).ok());

  const int own_nice = ::getpriority(PRIO_PROCESS, 0);  // the process = the main thread
  HealerOptions ho;
  ho.scrub_interval_s = 0;
  Healer healer(store, ho);
  healer.Start();
  healer.Enqueue(Id(1));
  // The thread names itself as it starts: poll.
  int heal_threads = 0, heal_nice = -100;
  // The thread lowers its priority right after naming itself: poll for both.
  for (int tries = 0; tries < 500 && (heal_threads == 0 || heal_nice == own_nice); ++tries) {
    heal_threads = 0;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
      std::ifstream comm(task.path() / "comm");
      std::string name;
      std::getline(comm, name);
      if (name != "heal") continue;
      ++heal_threads;
      heal_nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(std::stoul(task.path().filename())));
    }
    if (heal_threads == 0 || heal_nice == own_nice) std::this_thread::sleep_for(10ms);
  }
  for (int i = 0; i < 1000 && healer.stats().shards_rebuilt == 0; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  healer.Stop();
  EXPECT_EQ(heal_threads, 1);
  EXPECT_EQ(heal_nice, std::min(19, own_nice + BulkNice()));
  EXPECT_EQ(healer.stats().shards_rebuilt, 1u);
  auto got = Read(store, 1);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == Body(1, 0));
}

}  // namespace
}  // namespace strata::storage

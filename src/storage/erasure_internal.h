// Internals of the erasure-coded store, shared by its files (not an API;
// include only from src/storage/erasure_*.cc, shard_slots.cc, pool_format.cc):
//
//   erasure_store.cc  the store: ids, remove, list, drive info, header/trailer
//   erasure_writer.cc Create + the writer (stripes -> shards, quorum, publish)
//   erasure_reader.cc Open + the reader (verify, reconstruct, stripe cache)
//   shard_slots.cc    one shard of one id opened for reading: header, footer,
//                     block checks
//   erasure_heal.cc   Heal
//   pool_format.cc    opening a pool: format files, drive states, layout
//
// Formats: docs/formats/shard-file.md, docs/formats/drive-format.md.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/check.h"
#include "ec/erasure_code.h"
#include "io/file_system.h"
#include "storage/erasure_store.h"
#include "storage/shard_format.h"

namespace strata::storage::internal {

inline constexpr int kMaxDrives = 16;
inline constexpr size_t kMinBlockBytes = 16;
inline constexpr size_t kMaxBlockBytes = 64 << 20;
inline constexpr int kIdLocks = 256;
inline constexpr const char* kPartSuffix = ".part";  // a shard being written
inline constexpr const char* kHealSuffix = ".heal";  // a shard being rebuilt
inline constexpr const char* kGoneSuffix = ".gone";  // a tombstone (removed while a drive was offline)

std::string RandomHex(size_t bytes);
// Ids name files: a safe alphabet, 2..128 characters.
bool ValidId(const std::string& id);

// Runs fn(i) for every i in `which`, concurrently when there is more than one
// (per-drive syncs: their latencies should overlap, not add up).
template <typename Fn>
void ForEachParallel(const std::vector<int>& which, Fn fn) {
  if (which.size() <= 1) {
    for (int i : which) fn(i);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(which.size() - 1);
  for (size_t j = 1; j < which.size(); ++j) threads.emplace_back([&fn, i = which[j]] { fn(i); });
  fn(which[0]);
  for (auto& t : threads) t.join();
}

// Why a block (or a whole shard) could not be used; ordered by how much it
// says about the data (the worst one names the error of a failed read).
enum class Fault { kNone = 0, kOffline, kIO, kMissing, kCorrupt };

struct Drive {
  std::string path;
  int position = 0;
  DriveState state = DriveState::kOnline;
  std::string detail;
  bool online() const { return state == DriveState::kOnline; }
};

// One shard of one id, opened for reading.
struct ShardSlot {
  Fault fault = Fault::kNone;  // kNone: usable so far
  std::string why;
  std::unique_ptr<io::ReadableFile> file;
  bool header_checked = false;
  size_t header_len = 0;
  ShardHeader header;

  void SetFault(Fault f, std::string reason) {
    fault = f;
    why = std::move(reason);
  }
};

// Reads block s (len bytes + CRC) of a slot whose header checked out into dst
// (capacity len + 4). Returns kNone when it verified, else why in *why.
Fault ReadVerifiedBlock(ShardSlot& slot, const StripeLayout& layout, uint64_t s, uint32_t len,
                        uint8_t* dst, std::string* why);

// The reference shard of an id among slots whose header checked out
// (has_footer[i]: its footer too): a shard of the newest generation (header
// version stamp) that has at least k shards with valid headers, else of the
// newest generation; the shard must have a valid footer. -1 if none has.
int ChooseReference(const std::vector<ShardSlot>& slots, const std::vector<bool>& has_footer,
                    int k);
// False (and the slot marked corrupt) if its header is of another generation.
bool OfGeneration(ShardSlot& slot, const DataHeader& generation);
// Marks the slots of another generation than `generation` as corrupt: their
// blocks must never be combined with the reference's.
void RejectOtherGenerations(std::vector<ShardSlot>& slots, const DataHeader& generation);

// The error of a stripe that has fewer than k good blocks.
Status StripeError(const std::string& id, uint64_t s, int good, int k,
                   const std::vector<Fault>& faults, const std::vector<std::string>& whys);

// ---------------------------------------------------------------- format files (pool_format.cc)

struct FoundFormat {
  enum Kind { kAbsent, kBlank, kFormatted, kBroken } kind = kBlank;
  DriveFormat format;
  std::string why;
};
FoundFormat ReadFormat(io::FileSystem* fs, const std::string& drive);
Status WriteFormat(io::FileSystem* fs, const std::string& drive, const DriveFormat& format);
Status EnsureShardDirs(io::FileSystem* fs, const std::string& drive);

// ---------------------------------------------------------------- the store

class ErasureStoreImpl final : public ErasureDataStore {
 public:
  // The layout was validated by ErasureDataStore::Open; the constructor
  // checks the invariants every other part relies on (aborts if broken).
  ErasureStoreImpl(io::FileSystem* fs, std::vector<Drive> drives, int k, int m, size_t block,
                   std::unique_ptr<ec::ErasureCode> code);

  // DataStore
  Result<std::unique_ptr<DataWriter>> Create(const std::string& id,
                                             const DataHeader& header) override;  // erasure_writer.cc
  Result<std::unique_ptr<DataReader>> Open(const std::string& id,
                                           uint64_t size) override;  // erasure_reader.cc
  Status Remove(const std::string& id) override;
  size_t inline_max_bytes() const override { return 0; }

  // ErasureDataStore
  int k() const override { return k_; }
  int m() const override { return m_; }
  std::vector<DriveInfo> Drives() override;
  std::vector<DriveInfo> DriveStates() override;
  std::vector<DriveErrors> DriveErrorCounts() override;
  // Counts fault `f` met on drive i (kNone and kOffline count nothing).
  void CountFault(int i, Fault f);
  void CountWriteError(int i);
  void SetHealCallback(std::function<void(const std::string& id)> callback) override;
  Result<HealResult> Heal(const std::string& id) override;  // erasure_heal.cc
  Result<std::vector<std::string>> ListIds() override;
  Result<std::pair<DataHeader, std::string>> ReadHeaderAndTrailer(const std::string& id) override;

  // ---- for the writer, reader and heal
  int drive_count() const { return static_cast<int>(drives_.size()); }
  const Drive& drive(int i) const {
    CheckIndex(i);
    return drives_[i];
  }
  size_t block_bytes() const { return block_; }
  const ec::ErasureCode& code() const { return *code_; }
  io::FileSystem* fs() const { return fs_; }
  int quorum() const { return m_ >= 1 ? k_ + 1 : k_; }
  StripeLayout Layout(uint64_t size) const {
    return StripeLayout{size, static_cast<uint32_t>(k_), static_cast<uint32_t>(block_)};
  }
  // A shard index is a drive position: 0 <= i < k + m.
  void CheckIndex(int i) const {
    STRATA_CHECK(i >= 0 && i < drive_count(),
                 "shard index " + std::to_string(i) + " outside 0.." +
                     std::to_string(drive_count() - 1));
  }

  std::string ShardDir(int i, const std::string& id) const {
    CheckIndex(i);
    return drives_[i].path + "/shards/" + id.substr(0, 2);
  }
  std::string ShardPath(int i, const std::string& id) const { return ShardDir(i, id) + "/" + id; }

  // Creates a shard file; recreates its shard sub-directory if someone
  // removed it, but never the drive itself: a drive whose format file is gone
  // was removed or unmounted, and writing there would fill the parent
  // filesystem with shards no restart would find.
  Result<std::unique_ptr<io::WritableFile>> NewShardFile(int i, const std::string& path);
  // A drive wiped while the server runs (its directory is there, empty) is
  // formatted again at its position, as Open does, so heal can refill it. A
  // drive whose directory is gone was removed or unmounted: never recreated.
  Status ReformatWiped(int i);  // pool_format.cc
  void ReportHeal(const std::string& id);

  // ---- tombstones (erasure_store.cc; docs/formats/shard-file.md, "Remove")
  // Every drive online and still carrying its format file: only then can an
  // id be removed without leaving shards a returning drive would bring back.
  bool AllDrivesPresent();
  // The newest removed generation named by a tombstone of `id` on an online
  // drive (damaged tombstones are logged and ignored); nullopt if none.
  std::optional<uint64_t> ReadTombstone(const std::string& id);
  // Writes the tombstone on every online drive; OK if at least one landed.
  Status WriteTombstones(const std::string& id, uint64_t removed_through);
  // Removes the tombstones of `id` when every drive is present (else keeps
  // them: an absent drive may still hold dead shards). Under the id lock.
  void RemoveTombstonesIfAllPresent(const std::string& id);

  // ---- shard slots (shard_slots.cc)
  // Opens drive i's shard of `id` (file only; the header is checked lazily).
  ShardSlot OpenSlot(int i, const std::string& id, const std::string& suffix = "");
  // Opens every drive's shard of `id`; *found counts the files that exist.
  std::vector<ShardSlot> OpenSlots(const std::string& id, int* found);
  // Reads and verifies slot i's header: magic, CRC, and that it belongs here
  // (this id, this position, this pool's layout and, if given, this
  // generation: the DataHeader of the shards being read). Sets the slot's fault.
  bool CheckHeader(ShardSlot& slot, int i, const std::string& id,
                   const DataHeader* generation = nullptr);
  // Reads and verifies the footer of a slot whose header checked out.
  Result<ShardFooter> ReadFooter(ShardSlot& slot, int i, const std::string& id);

  // The per-id lock (one of kIdLocks, picked by the id's hash). THE lock
  // discipline of the store, for every id:
  //  - exclusive: publishing a write (the renames <id>.part -> <id> on every
  //    drive, their directory syncs, removing the stale <id> of drives the
  //    write missed), publishing a heal (after checking that every drive's
  //    <id> is still the file the heal verified: erasure_heal.cc), a heal of
  //    removal leftovers (its whole run), Remove;
  //  - shared: opening the shards of an id and choosing the reference shard
  //    (Open, ReadHeaderAndTrailer), so that the files a reader holds are of
  //    one generation: all from before a publish or all from after it; the
  //    same for the shards a heal opens to verify and rebuild.
  // Not held while a writer streams into or syncs its .part files (nobody
  // else opens .part files) nor while a reader reads (open files stay valid
  // when their names are replaced or removed). Never held while calling out
  // (the heal callback). Lock order: IdLock, then reformat_mu_. One writer
  // per id at a time is the caller's business (the engine's key and bucket
  // locks): two writers of one id would share its .part files.
  // See docs/formats/shard-file.md, "Concurrency".
  std::shared_mutex& IdLock(const std::string& id) {
    return id_locks_[std::hash<std::string>{}(id) % kIdLocks];
  }
  // One heal of an id at a time (it owns the <id>.heal files while it runs).
  // Taken before IdLock.
  std::mutex& HealLock(const std::string& id) {
    return heal_locks_[std::hash<std::string>{}(id) % kIdLocks];
  }

 private:
  io::FileSystem* fs_;
  std::vector<Drive> drives_;
  int k_, m_;
  size_t block_;
  std::unique_ptr<ec::ErasureCode> code_;
  std::mutex cb_mu_;
  std::mutex reformat_mu_;
  std::function<void(const std::string&)> heal_cb_;
  std::shared_mutex id_locks_[kIdLocks];
  std::mutex heal_locks_[kIdLocks];
  struct ErrorCounters {
    std::atomic<uint64_t> io{0}, corrupt{0}, missing{0}, write{0};
  };
  std::unique_ptr<ErrorCounters[]> errors_;  // one per drive
};

}  // namespace strata::storage::internal

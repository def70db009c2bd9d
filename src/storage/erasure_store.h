// ErasureDataStore: a DataStore over a pool of N drives (directories), each
// piece of data split into stripes of k data + m parity blocks (systematic
// Reed-Solomon from ec/), one shard file per drive. Every shard carries a
// self-describing header and a CRC32C per block (docs/formats/shard-file.md),
// so bitrot is found on read and by the scrubber, and the metadata index can
// be rebuilt from the drives (the trailer holds the object's record).
//
// Reads use the data shards only while they are healthy; a missing,
// unreadable or corrupt block is rebuilt from any k, the correct bytes are
// served, and the id is reported to the heal callback. Writes need a quorum
// of k+1 shards (k when m == 0) durably written; fewer -> Unavailable
// (ResourceExhausted when a drive was full). A write acknowledged with w < k+m
// shards survives w-k further drive losses (not m) until healed, so it is
// reported to the heal callback at once; see docs/formats/shard-file.md.
// The pool opens with >= k drives online; below the write quorum it is
// read-only (docs/formats/drive-format.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/file_system.h"
#include "storage/data_store.h"

namespace strata::storage {

struct PoolOptions {
  std::vector<std::string> drives;  // directories, in order
  int k = 0;                        // 0: default for the drive count (see DefaultLayout)
  int m = -1;                       // -1: default
  size_t block_bytes = 1 << 20;     // per-shard block of a full stripe
  std::string deployment_id;        // "" when creating a new pool: generated
};

// Default k+m per drive count: 1 -> 1+0, 2 -> 1+1, 3 -> 2+1, 4 -> 2+2,
// 5 -> 3+2, 6 -> 4+2, 7 -> 5+2, 8 -> 6+2, 9..11 -> (n-3)+3, 12+ -> (n-4)+4 (max 16 drives).
void DefaultLayout(int drives, int* k, int* m);

enum class DriveState { kOnline, kMissing, kUnformatted, kFaulty };
// "online", "missing", "unformatted", "faulty" (logs, the admin API).
std::string DriveStateName(DriveState s);

struct DriveInfo {
  std::string path;
  int position = 0;
  DriveState state = DriveState::kOnline;
  std::string detail;  // why, when not online
  uint64_t shard_files = 0;
};

// Errors met on one drive since the store opened, by kind: reads, heals and
// scrubs count the faults they meet on that drive's shards (a drive that is
// not online counts nothing: that is its state), writes count shard writes
// that failed.
struct DriveErrors {
  uint64_t io = 0;       // reads that failed
  uint64_t corrupt = 0;  // blocks, headers or footers that failed their checks
  uint64_t missing = 0;  // shard files absent where the data needs one
  uint64_t write = 0;    // shard writes that failed
  bool operator==(const DriveErrors&) const = default;
};

struct HealResult {
  int shards_rebuilt = 0;
  bool unrecoverable = false;  // fewer than k good shards
  bool was_healthy = true;
  // Bad shards that could not be rewritten (drive offline, or the rewrite
  // failed); the next heal retries them.
  int shards_failed = 0;
  // The id's shards changed (an overwrite, a remove) while the heal verified
  // and rebuilt them, and changed again during a second heal from what was
  // there then: nothing was published (the newer state stands; a write that
  // missed drives queues its own heal).
  bool superseded = false;
};

class ErasureDataStore : public DataStore {
 public:
  // Formats blank drives (format file: deployment id, pool 0, set 0,
  // position, k, m, block size) and refuses drives of another deployment or
  // in another order, saying which and why.
  static Result<std::unique_ptr<ErasureDataStore>> Open(io::FileSystem* fs, PoolOptions options);
  using DataStore::Open;  // Open(id, size): the static Open above would hide it

  virtual int k() const = 0;
  virtual int m() const = 0;
  // Every drive's state and shard file count (lists the shard directories).
  virtual std::vector<DriveInfo> Drives() = 0;
  // The same without counting shard files (shard_files 0): cheap enough for
  // every metrics scrape.
  virtual std::vector<DriveInfo> DriveStates() = 0;
  // Per drive, in position order.
  virtual std::vector<DriveErrors> DriveErrorCounts() = 0;

  // Called (from the reading or writing thread) with the id of data that
  // needed reconstruction, had a shard file missing, or was written with
  // fewer than k+m shards; the engine queues it for healing. Must not call
  // back into this reader/writer.
  virtual void SetHealCallback(std::function<void(const std::string& id)> callback) = 0;

  // Verifies every block of every shard of `id`; rewrites missing/corrupt
  // shards from the healthy ones. NotFound if no drive has a shard of `id`,
  // or `id` was removed: then the shards a tombstone marks dead are deleted
  // (and, once every drive is online, the tombstones too).
  virtual Result<HealResult> Heal(const std::string& id) = 0;

  // DataStore::ListIds: every id with a shard file or a tombstone on an
  // online drive. DataStore::ReadHeaderAndTrailer: from the reference shard
  // (the newest generation with k shards; see shard-file.md).
};

}  // namespace strata::storage

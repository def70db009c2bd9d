// Healer: the background repair loop of an ErasureDataStore. It heals ids
// that reads had to reconstruct (queued by the store's heal callback) and,
// at a bounded rate, scrubs every id on the drives (verify every block,
// rebuild what is missing or corrupt). Runs on its own thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "storage/erasure_store.h"

namespace strata::storage {

struct HealerOptions {
  int scrub_interval_s = 24 * 3600;  // start a full scrub pass this often (0: never)
  int scrub_ids_per_second = 50;     // bound on scrub work, so foreground I/O keeps priority
  // Told of every data file whose shards were rebuilt, or found unrecoverable
  // (the audit trail records these), on the healer's thread.
  std::function<void(const std::string& id, int shards_rebuilt, bool unrecoverable)> on_repair;
};

struct HealerStats {
  uint64_t healed_from_queue = 0;
  uint64_t scrubbed = 0;
  uint64_t shards_rebuilt = 0;
  uint64_t unrecoverable = 0;
  uint64_t scrub_passes = 0;
  uint64_t queued = 0;
};

class Healer {
 public:
  Healer(ErasureDataStore* store, HealerOptions options);
  ~Healer();
  void Start();
  void Stop();
  void Enqueue(const std::string& id);
  HealerStats stats();

 private:
  void Run();
  void HealOne(const std::string& id, bool from_queue);
  bool ScrubPass();  // false if stopped midway

  ErasureDataStore* store_;
  HealerOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> queued_;  // dedup
  HealerStats stats_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace strata::storage

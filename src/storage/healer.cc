#include "storage/healer.h"

#include <chrono>

#include "common/log.h"
#include "common/thread_priority.h"

namespace strata::storage {

Healer::Healer(ErasureDataStore* store, HealerOptions options)
    : store_(store), options_(options) {}

Healer::~Healer() { Stop(); }

// Repairs and scrubs are background work: at the bulk priority they take
// spare cycles, and a request waiting on a core goes first
// (common/thread_priority.h). A heal holds no id lock while it verifies and
// rebuilds, only the exclusive one for its renames (erasure_heal.cc), so a
// request waits on this slower thread for a publish at most (except a heal
// of an id with a tombstone, which is rare and holds it throughout).
void Healer::Start() {
  thread_ = std::thread([this] {
    NameThisThread("heal");
    LowerThisThreadPriority();
    Run();
  });
}

void Healer::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Healer::Enqueue(const std::string& id) {
  {
    std::lock_guard lock(mu_);
    if (!queued_.insert(id).second) return;
    queue_.push_back(id);
    ++stats_.queued;
  }
  cv_.notify_one();
}

HealerStats Healer::stats() {
  std::lock_guard lock(mu_);
  return stats_;
}

void Healer::HealOne(const std::string& id, bool from_queue) {
  auto result = store_->Heal(id);
  if (result.ok() && options_.on_repair && (result->shards_rebuilt > 0 || result->unrecoverable)) {
    options_.on_repair(id, result->shards_rebuilt, result->unrecoverable);
  }
  std::lock_guard lock(mu_);
  if (from_queue) ++stats_.healed_from_queue;
  else ++stats_.scrubbed;
  if (!result.ok()) {
    if (result.status().code() != Code::kNotFound) {  // deleted meanwhile: fine
      STRATA_LOG("heal %s: %s", id.c_str(), result.status().ToString().c_str());
    }
    return;
  }
  stats_.shards_rebuilt += result->shards_rebuilt;
  if (result->unrecoverable) {
    ++stats_.unrecoverable;
    STRATA_LOG("heal %s: UNRECOVERABLE (fewer than k good shards)", id.c_str());
  } else if (result->shards_rebuilt > 0) {
    STRATA_LOG("heal %s: rebuilt %d shard(s)", id.c_str(), result->shards_rebuilt);
  }
}

bool Healer::ScrubPass() {
  auto ids = store_->ListIds();
  if (!ids.ok()) {
    STRATA_LOG("scrub: cannot list ids: %s", ids.status().ToString().c_str());
    return true;
  }
  auto pause = std::chrono::microseconds(1000000 / std::max(1, options_.scrub_ids_per_second));
  for (const std::string& id : *ids) {
    {
      std::unique_lock lock(mu_);
      // Queued heals (from degraded reads) go first; the wait bounds the rate.
      if (cv_.wait_for(lock, pause, [this] { return stop_ || !queue_.empty(); })) {
        if (stop_) return false;
        std::string queued = queue_.front();
        queue_.pop_front();
        queued_.erase(queued);
        lock.unlock();
        HealOne(queued, true);
      }
    }
    HealOne(id, false);
  }
  std::lock_guard lock(mu_);
  ++stats_.scrub_passes;
  return true;
}

void Healer::Run() {
  auto next_scrub = std::chrono::steady_clock::now() + std::chrono::seconds(options_.scrub_interval_s);
  while (true) {
    std::string id;
    {
      std::unique_lock lock(mu_);
      cv_.wait_until(lock, next_scrub, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      if (!queue_.empty()) {
        id = queue_.front();
        queue_.pop_front();
        queued_.erase(id);
      }
    }
    if (!id.empty()) {
      HealOne(id, true);
      continue;
    }
    if (options_.scrub_interval_s > 0 && std::chrono::steady_clock::now() >= next_scrub) {
      if (!ScrubPass()) return;
      next_scrub = std::chrono::steady_clock::now() + std::chrono::seconds(options_.scrub_interval_s);
    } else if (options_.scrub_interval_s <= 0) {
      next_scrub = std::chrono::steady_clock::now() + std::chrono::hours(24 * 365);
    }
  }
}

}  // namespace strata::storage

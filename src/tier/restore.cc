#include "tier/restore.h"

#include <algorithm>
#include <chrono>

#include "audit/context.h"
#include "common/log.h"
#include "common/time_util.h"
#include "common/thread_priority.h"
#include "meta/keys.h"
#include "tier/lifecycle.h"

namespace strata::tier {

namespace {
int64_t NowNs() { return UnixNowNs(); }
}  // namespace

Restorer::Restorer(object::ObjectEngine* engine, meta::KvStore* kv, const ClassMap* classes,
                   int64_t day_ns, int64_t sweep_interval_ns)
    : engine_(engine),
      kv_(kv),
      classes_(classes),
      day_ns_(day_ns),
      sweep_interval_ns_(sweep_interval_ns) {}

Result<uint64_t> Restorer::Sweep() {
  std::vector<std::tuple<std::string, std::string, uint64_t>> entries;
  {
    auto it = kv_->NewIterator();
    const std::string prefix = meta::RestoreIndexPrefix();
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      std::string bucket, key;
      uint64_t stamp;
      if (meta::ParseRestoreIndexKey(it->key(), &bucket, &key, &stamp)) {
        entries.emplace_back(std::move(bucket), std::move(key), stamp);
      }
    }
    RETURN_IF_ERROR(it->status());
  }
  uint64_t dropped = 0;
  const int64_t now = NowNs();
  for (auto& [bucket, key, stamp] : entries) {
    auto rec = engine_->RecordOfStamp(bucket, key, stamp);
    if (!rec.ok() && rec.status().code() != Code::kNotFound) continue;  // next sweep
    if (rec.ok() && rec->restore.ongoing) {
      Enqueue(bucket, key, stamp);
      continue;
    }
    if (rec.ok() && rec->restore.expiry_ns > now) continue;
    // Expired, or the version went (ExpireRestore then drops the entry).
    audit::Actor actor = audit::SystemActor("restore", "RestoreExpired", bucket, key);
    audit::Scope scope(&actor);
    Status st = engine_->ExpireRestore(bucket, key, stamp);
    if (st.ok()) {
      if (rec.ok()) ++dropped;
    } else if (st.code() != Code::kPreconditionFailed) {
      STRATA_LOG("restore: expiring %s/%s: %s", bucket.c_str(), key.c_str(), st.ToString().c_str());
    }
  }
  return dropped;
}

Restorer::~Restorer() { Stop(); }

void Restorer::Start() {
  thread_ = std::thread([this] {
    NameThisThread("restore");
    std::unique_lock lock(mu_);
    int64_t next_sweep = 0;
    while (true) {
      if (NowNs() >= next_sweep) {
        lock.unlock();
        auto swept = Sweep();
        if (!swept.ok()) STRATA_LOG("restore: sweep: %s", swept.status().ToString().c_str());
        lock.lock();
        next_sweep = NowNs() + sweep_interval_ns_;
      }
      cv_.wait_for(lock, std::chrono::nanoseconds(std::max<int64_t>(next_sweep - NowNs(), 0)),
                   [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      if (queue_.empty()) continue;
      auto [bucket, key, stamp] = queue_.front();
      queue_.pop_front();
      lock.unlock();
      RestoreOne(bucket, key, stamp);
      lock.lock();
    }
  });
}

void Restorer::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Restorer::Enqueue(const std::string& bucket, const std::string& key, uint64_t stamp) {
  {
    std::lock_guard lock(mu_);
    auto item = std::make_tuple(bucket, key, stamp);
    if (std::find(queue_.begin(), queue_.end(), item) != queue_.end()) return;
    queue_.push_back(std::move(item));
  }
  cv_.notify_one();
}

void Restorer::Drain() {
  while (true) {
    std::tuple<std::string, std::string, uint64_t> item;
    {
      std::lock_guard lock(mu_);
      if (queue_.empty()) return;
      item = queue_.front();
      queue_.pop_front();
    }
    RestoreOne(std::get<0>(item), std::get<1>(item), std::get<2>(item));
  }
}

uint64_t Restorer::completed() const {
  std::lock_guard lock(mu_);
  return completed_;
}

void Restorer::RestoreOne(const std::string& bucket, const std::string& key, uint64_t stamp) {
  const std::string& to = classes_ ? classes_->PoolOf("STANDARD") : std::string();
  audit::Actor actor = audit::SystemActor("restore", "RestoreCompleted", bucket, key);
  audit::Scope scope(&actor);
  Status st = engine_->CompleteRestore(bucket, key, stamp, to, [this](uint32_t days) {
    return DueAfterDays(NowNs(), days, day_ns_);
  });
  if (st.ok()) {
    std::lock_guard lock(mu_);
    ++completed_;
    return;
  }
  // Gone, or not ongoing any more: nothing to do. Anything else is retried by
  // the scanner's next pass (the record still says ongoing).
  if (st.code() != Code::kNotFound && st.code() != Code::kPreconditionFailed) {
    STRATA_LOG("restore: %s/%s: %s", bucket.c_str(), key.c_str(), st.ToString().c_str());
  }
}

}  // namespace strata::tier

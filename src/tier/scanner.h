// The lifecycle scanner: walks the versions and incomplete uploads of every
// bucket with a lifecycle configuration and applies what tier/lifecycle.h
// decides — expirations (delete markers or deletions), noncurrent-version
// expirations, expired-delete-marker cleanup, transitions between pools
// (ObjectEngine::MoveVersion) and aborts of incomplete multipart uploads.
//
// - Object Lock: the engine's check (object/lock.h) is the only gate; a
//   locked version refused by it is counted and left, retried next pass.
// - Races: every action names the exact version the scan saw (its stamp);
//   a write in between makes the engine refuse it (PreconditionFailed) and
//   the next pass looks again.
// - Bounded rate: at most `max_actions_per_s` actions (0: unbounded).
// - Resumable: the bucket and key it has finished are kept in metadata
//   (meta::LifecycleProgressKey) after every page; a restart continues there.
// - Clock: `day_ns` is one lifecycle "day" (--lifecycle-day-seconds).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "tier/classes.h"
#include "tier/lifecycle.h"

namespace strata::tier {

struct ScannerOptions {
  int64_t day_ns = 86400ll * 1'000'000'000;
  // Between the end of one pass and the start of the next.
  int64_t interval_ns = 3600ll * 1'000'000'000;
  uint32_t max_actions_per_s = 1000;
  uint32_t page_versions = 1000;
  // Transitions in flight at once (each a MoveVersion on its own thread).
  uint32_t moves_in_flight = 2;
};

struct ScanStats {
  uint64_t versions = 0;         // looked at
  uint64_t deleted = 0;          // versions and delete markers removed
  uint64_t markers = 0;          // delete markers added (current versions expired)
  uint64_t transitioned = 0;     // versions moved to another pool
  uint64_t aborted_uploads = 0;  // incomplete multipart uploads aborted
  uint64_t locked = 0;           // refused by Object Lock (kept)
  uint64_t raced = 0;            // the version changed before the action (next pass)
  uint64_t failed = 0;           // other errors (logged; next pass)
  ScanStats& operator+=(const ScanStats& o);
};

class Scanner {
 public:
  Scanner(object::ObjectEngine* engine, meta::KvStore* kv, const ClassMap* classes,
          ScannerOptions options);
  ~Scanner();
  void Start();  // the background thread: a pass, then interval_ns, ...
  void Stop();
  // One pass over every bucket (from the saved progress, if any), now.
  Result<ScanStats> RunPass();
  ScanStats totals() const;
  uint64_t passes() const { return passes_.load(); }
  // What the rules see of version `i` of a key (versions newest first).
  static VersionFacts FactsAt(const std::string& key,
                              const std::vector<const object::ObjectRecord*>& versions, size_t i,
                              const object::BucketRecord& bucket);

 private:
  Status ScanBucket(const std::string& bucket, const object::BucketRecord& listed,
                    const std::string& resume_after, ScanStats* stats);

  // The actions for one key's versions (newest first).
  void ApplyToKey(const std::string& bucket, const object::BucketRecord& rec,
                  const Configuration& config,
                  const std::vector<object::VersionEntry>& versions, ScanStats* stats);
  Status ScanUploads(const std::string& bucket, const Configuration& config,
                     ScanStats* stats);
  // Runs the transitions gathered so far, moves_in_flight at a time.
  void FlushMoves(ScanStats* stats);
  void Tally(const Status& st, const std::string& bucket, const std::string& key,
             const std::string& version_id, const std::string& rule_id, ScanStats* stats);
  void Pace();  // waits for the rate limit before an action
  bool stopping() const { return stop_.load(); }

  object::ObjectEngine* engine_;
  meta::KvStore* kv_;
  const ClassMap* classes_;
  ScannerOptions options_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> passes_{0};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  ScanStats totals_;  // guarded by mu_
  std::thread thread_;
  std::mutex pace_mu_;
  int64_t next_action_ns_ = 0;  // the pacing clock (guarded by pace_mu_)
  struct Move {
    std::string bucket, key;
    uint64_t stamp;
    std::string pool, storage_class, rule_id;
  };
  static constexpr size_t kMaxPendingMoves = 64;
  std::vector<Move> moves_;  // gathered by ApplyToKey, run by FlushMoves (scanner thread)
  std::mutex pass_mu_;          // one pass at a time
};

}  // namespace strata::tier

// The tier advisor (docs/advisor.md): watches reads (access_stats.h), takes
// an inventory of what each prefix holds (inventory.h), recommends tier
// moves with their evidence (recommend.h), and carries out the ones the
// operator approved — or, when the policy says so, the ones it allows —
// inside the policy's bounds (policy.h): which moves, where, how many bytes
// per day, in which hours. "No black box, no autopilot":
//
// - Execution goes through ObjectEngine::MoveVersion, the lifecycle
//   machinery's commit protocol: a crash leaves one readable copy, a
//   version changed meanwhile is left alone, Object Lock (retention, legal
//   hold) travels with the version unchanged.
// - Every move is an audit record (identity strata:advisor, operation
//   AdvisorTransition, request id "advisor:<recommendation id>"), in the
//   metadata batch that switches the version.
// - Rate-limited (max_objects_per_second), bounded (max_bytes_per_day,
//   persisted so a restart does not reset it), stoppable (policy enabled
//   false: the move under way finishes, nothing further starts).
// - Recommendations, the policy, the statistics and the budget live in
//   metadata (meta::kAdvisorPrefix) and survive restarts.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "advisor/access_stats.h"
#include "advisor/policy.h"
#include "advisor/recommend.h"
#include "common/status.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "tier/classes.h"

namespace strata::advisor {

// What expiring a KV namespace removed (kvcache::ExpireResult, as the server
// wires it in).
struct KvExpired {
  uint64_t blocks = 0, bytes = 0, blocks_left = 0;
};

struct AdvisorOptions {
  StatsOptions stats;
  Thresholds thresholds;
  Coefficients model;
  int64_t interval_ns = 3600ll * 1'000'000'000;  // between analysis passes
  int64_t tick_ns = 1'000'000'000;               // the executor's wake-up
  size_t max_inventory_prefixes = 100000;
  std::function<int64_t()> now;  // Unix ns; default common/time_util UnixNowNs
  // The KV-cache tier, when it runs (set by the server): its namespaces, for
  // "kv->expire" recommendations, and the expiry of one namespace if it was
  // not accessed after `idle_since_ns` (PreconditionFailed when it was).
  // Unset: no KV recommendations. Their buckets are never tier-moved.
  std::function<std::vector<KvNamespaceFacts>()> kv_namespaces;
  std::function<Result<KvExpired>(const std::string& bucket, int64_t idle_since_ns)> kv_expire;
};

struct AnalysisSummary {
  uint64_t objects = 0, prefixes = 0, recommended = 0, added = 0, refreshed = 0, expired = 0;
  bool truncated = false;
  int64_t at_ns = 0;
};

struct ExecutorStatus {
  bool enabled = false, in_window = false;
  int64_t day = 0;
  uint64_t bytes_today = 0, budget = 0;
  std::string running;  // recommendation id under way, "" if none
  std::string waiting;  // why nothing runs now, "" if nothing waits
  uint64_t moved_objects = 0, moved_bytes = 0;  // since start
};

class Advisor {
 public:
  static Result<std::unique_ptr<Advisor>> Open(object::ObjectEngine* engine, meta::KvStore* kv,
                                               const tier::ClassMap* classes,
                                               AdvisorOptions options);
  ~Advisor();
  Advisor(const Advisor&) = delete;
  Advisor& operator=(const Advisor&) = delete;

  // The request path: one GET/HEAD that sent `bytes` (cheap; sampled).
  void RecordRead(std::string_view bucket, std::string_view key, uint64_t bytes) {
    stats_.RecordRead(bucket, key, bytes, options_.now());
  }
  const AccessStats& stats() const { return stats_; }

  void Start();  // the background thread: analysis every interval, execution every tick
  void Stop();   // stops it and saves the statistics

  // One analysis pass now (also what the thread runs).
  Result<AnalysisSummary> Analyze();
  std::vector<Recommendation> List() const;  // newest first
  Result<Recommendation> Get(const std::string& id) const;
  // pending (or failed) -> approved. PreconditionFailed with the reason when
  // the policy does not allow it or it is in another state; NotFound.
  Status Approve(const std::string& id, const std::string& who);
  Status Reject(const std::string& id, const std::string& who, const std::string& reason);
  Policy policy() const;
  Status SetPolicy(const Policy& p);
  // One step of the executor: approves what the policy lets through without
  // approval, then moves up to one page of one approved recommendation.
  // Returns whether it did any work (the thread keeps stepping while true).
  Result<bool> ExecuteStep();
  ExecutorStatus executor() const;
  const AdvisorOptions& options() const { return options_; }
  std::string ModelJson() const;

 private:
  Advisor(object::ObjectEngine* engine, meta::KvStore* kv, const tier::ClassMap* classes,
          AdvisorOptions options);
  Status Load();
  Status SaveRecommendation(const Recommendation& r);  // sync write
  Status SaveStats();
  Status SaveBudget(int64_t day, uint64_t bytes);
  // ExecuteStep for an "expire" recommendation (one call: the namespace at once).
  void ExpireKv(Recommendation& rec);
  void Run();
  void Pace();

  object::ObjectEngine* engine_;
  meta::KvStore* kv_;
  const tier::ClassMap* classes_;
  AdvisorOptions options_;
  AccessStats stats_;

  mutable std::mutex mu_;
  std::map<std::string, Recommendation> recs_;  // guarded by mu_
  Policy policy_;                                // guarded by mu_
  int64_t budget_day_ = -1;                      // guarded by mu_
  uint64_t budget_bytes_ = 0;                    // guarded by mu_
  std::string running_, waiting_;                // guarded by mu_
  uint64_t moved_objects_ = 0, moved_bytes_ = 0;  // guarded by mu_

  std::mutex exec_mu_;     // one ExecuteStep at a time
  std::mutex analyze_mu_;  // one Analyze at a time
  int64_t next_move_ns_ = 0;  // pacing (exec_mu_)

  std::atomic<bool> stop_{false};
  std::mutex wake_mu_;
  std::condition_variable wake_;
  std::thread thread_;
};

}  // namespace strata::advisor

#include "advisor/advisor.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

#include "advisor/inventory.h"
#include "audit/context.h"
#include "common/encoding.h"
#include "common/log.h"
#include "common/time_util.h"
#include "meta/keys.h"

namespace strata::advisor {

namespace {

std::string NormalClass(const std::string& c) { return c.empty() ? "STANDARD" : c; }

bool Runnable(const Recommendation& r) {
  return r.state == "approved" || r.state == "executing" || r.state == "waiting";
}

}  // namespace

Advisor::Advisor(object::ObjectEngine* engine, meta::KvStore* kv, const tier::ClassMap* classes,
                 AdvisorOptions options)
    : engine_(engine), kv_(kv), classes_(classes), options_(std::move(options)),
      stats_(options_.stats) {}

Result<std::unique_ptr<Advisor>> Advisor::Open(object::ObjectEngine* engine, meta::KvStore* kv,
                                               const tier::ClassMap* classes,
                                               AdvisorOptions options) {
  if (!options.now) options.now = UnixNowNs;
  if (options.tick_ns <= 0) options.tick_ns = 1'000'000'000;
  std::unique_ptr<Advisor> a(new Advisor(engine, kv, classes, std::move(options)));
  if (Status st = a->Load(); !st.ok()) return st;
  return a;
}

Advisor::~Advisor() { Stop(); }

Status Advisor::Load() {
  auto stats = kv_->Get(meta::AdvisorStatsKey());
  if (!stats.ok()) return stats.status();
  if (*stats) {
    if (Status st = stats_.Restore(**stats); !st.ok()) {
      STRATA_LOG("advisor: statistics not restored, starting empty: %s", st.ToString().c_str());
    }
  }
  auto policy = kv_->Get(meta::AdvisorPolicyKey());
  if (!policy.ok()) return policy.status();
  if (*policy) {
    auto p = ParsePolicy(**policy);
    if (!p.ok()) return Corruption("advisor policy in metadata: " + p.status().message());
    policy_ = *p;
  }
  auto budget = kv_->Get(meta::AdvisorBudgetKey());
  if (!budget.ok()) return budget.status();
  if (*budget && (*budget)->size() == 16) {
    budget_day_ = static_cast<int64_t>(DecodeFixed64BE((*budget)->data()));
    budget_bytes_ = DecodeFixed64BE((*budget)->data() + 8);
  }
  const std::string prefix = meta::AdvisorRecommendationPrefix();
  auto it = kv_->NewIterator();
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto r = ParseRecommendation(it->value());
    if (!r.ok()) return Corruption("advisor recommendation " + std::string(it->key()) + ": " + r.status().message());
    recs_[r->id] = std::move(r).value();
  }
  return it->status();
}

Status Advisor::SaveRecommendation(const Recommendation& r) {
  meta::WriteBatch b;
  b.Put(meta::AdvisorRecommendationKey(r.id), RecommendationJson(r));
  return kv_->Write(b, /*sync=*/true);
}

Status Advisor::SaveStats() {
  meta::WriteBatch b;
  b.Put(meta::AdvisorStatsKey(), stats_.Serialize());
  return kv_->Write(b, /*sync=*/false);
}

Status Advisor::SaveBudget(int64_t day, uint64_t bytes) {
  std::string v;
  PutFixed64BE(&v, static_cast<uint64_t>(day));
  PutFixed64BE(&v, bytes);
  meta::WriteBatch b;
  b.Put(meta::AdvisorBudgetKey(), v);
  return kv_->Write(b, /*sync=*/true);
}

void Advisor::Start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void Advisor::Stop() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(wake_mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  if (Status st = SaveStats(); !st.ok()) {
    STRATA_LOG("advisor: statistics not saved: %s", st.ToString().c_str());
  }
}

void Advisor::Run() {
  int64_t next_analysis = SteadyNowNs() + std::min<int64_t>(options_.interval_ns, 60ll * 1'000'000'000);
  while (!stop_) {
    if (SteadyNowNs() >= next_analysis) {
      auto s = Analyze();
      if (!s.ok()) STRATA_LOG("advisor: analysis failed: %s", s.status().ToString().c_str());
      next_analysis = SteadyNowNs() + options_.interval_ns;
    }
    while (!stop_) {
      auto worked = ExecuteStep();
      if (!worked.ok()) {
        STRATA_LOG("advisor: execution step failed: %s", worked.status().ToString().c_str());
        break;
      }
      if (!*worked) break;
    }
    std::unique_lock lock(wake_mu_);
    wake_.wait_for(lock, std::chrono::nanoseconds(options_.tick_ns), [this] { return stop_.load(); });
  }
}

Result<AnalysisSummary> Advisor::Analyze() {
  std::lock_guard analyzing(analyze_mu_);
  const int64_t now = options_.now();
  InventoryOptions io;
  io.prefix_depth = options_.stats.prefix_depth;
  io.max_prefixes = options_.max_inventory_prefixes;
  io.day_ns = stats_.options().day_ns;
  auto inv = TakeInventory(*engine_, io, now);
  if (!inv.ok()) return inv.status();
  std::vector<KvNamespaceFacts> kv;
  if (options_.kv_namespaces) kv = options_.kv_namespaces();
  // KV namespaces are a cache the KV tier manages: they expire, never move.
  std::set<std::string, std::less<>> kv_buckets;
  for (const KvNamespaceFacts& ns : kv) kv_buckets.insert(ns.bucket);
  std::erase_if(inv->prefixes,
                [&](const PrefixInventory& p) { return kv_buckets.count(p.bucket) != 0; });
  std::vector<Recommendation> found = Recommend(inv->prefixes, stats_.Snapshot(now), *classes_,
                                                options_.thresholds, options_.model, now,
                                                stats_.options().day_ns);
  for (Recommendation& r : RecommendKv(kv, *classes_, options_.thresholds, options_.model, now,
                                       stats_.options().day_ns)) {
    found.push_back(std::move(r));
  }
  AnalysisSummary sum;
  sum.objects = inv->objects;
  sum.prefixes = inv->prefixes.size();
  sum.recommended = found.size();
  sum.truncated = inv->truncated;
  sum.at_ns = now;
  std::vector<Recommendation> changed;
  {
    std::lock_guard lock(mu_);
    std::map<std::string, bool> seen;
    for (Recommendation& r : found) {
      seen[r.id] = true;
      auto it = recs_.find(r.id);
      if (it == recs_.end()) {
        ++sum.added;
        changed.push_back(r);
        recs_[r.id] = std::move(r);
        continue;
      }
      Recommendation& old = it->second;
      if (old.state == "pending" || old.state == "expired") {
        // Fresh evidence; the first sighting's time stays.
        r.created_ns = old.state == "pending" ? old.created_ns : r.created_ns;
        old = std::move(r);
        ++sum.refreshed;
        changed.push_back(old);
      } else if (old.state == "done" || old.state == "failed") {
        // The situation came back (new data, or what failed): ask again.
        old = std::move(r);
        ++sum.added;
        changed.push_back(old);
      }
      // approved / executing / waiting / rejected: the operator's decision stands.
    }
    for (auto& [id, r] : recs_) {
      if (r.state == "pending" && !seen.count(id)) {
        r.state = "expired";
        r.reason = "the evidence no longer holds (analysis of " + FormatIso8601(now) + ")";
        r.updated_ns = now;
        ++sum.expired;
        changed.push_back(r);
      }
    }
  }
  for (const Recommendation& r : changed) {
    if (Status st = SaveRecommendation(r); !st.ok()) return st;
  }
  if (Status st = SaveStats(); !st.ok()) return st;
  return sum;
}

std::vector<Recommendation> Advisor::List() const {
  std::vector<Recommendation> out;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, r] : recs_) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const Recommendation& a, const Recommendation& b) {
    return a.created_ns > b.created_ns;
  });
  return out;
}

Result<Recommendation> Advisor::Get(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = recs_.find(id);
  if (it == recs_.end()) return NotFound("no recommendation " + id);
  return it->second;
}

Status Advisor::Approve(const std::string& id, const std::string& who) {
  Recommendation copy;
  {
    std::lock_guard lock(mu_);
    auto it = recs_.find(id);
    if (it == recs_.end()) return NotFound("no recommendation " + id);
    Recommendation& r = it->second;
    if (r.state != "pending" && r.state != "failed") {
      return PreconditionFailed("recommendation " + id + " is " + r.state + ", not pending");
    }
    if (std::string why = PolicyRefusal(policy_, r); !why.empty()) return PreconditionFailed(why);
    r.state = "approved";
    r.decided_by = who;
    r.decided_ns = r.updated_ns = options_.now();
    r.reason.clear();
    copy = r;
  }
  Status st = SaveRecommendation(copy);
  wake_.notify_all();
  return st;
}

Status Advisor::Reject(const std::string& id, const std::string& who, const std::string& reason) {
  Recommendation copy;
  {
    std::lock_guard lock(mu_);
    auto it = recs_.find(id);
    if (it == recs_.end()) return NotFound("no recommendation " + id);
    Recommendation& r = it->second;
    if (r.state == "executing" || r.state == "done" || r.state == "rejected") {
      return PreconditionFailed("recommendation " + id + " is " + r.state);
    }
    r.state = "rejected";
    r.decided_by = who;
    r.decided_ns = r.updated_ns = options_.now();
    r.reason = reason;
    copy = r;
  }
  return SaveRecommendation(copy);
}

Policy Advisor::policy() const {
  std::lock_guard lock(mu_);
  return policy_;
}

Status Advisor::SetPolicy(const Policy& p) {
  meta::WriteBatch b;
  b.Put(meta::AdvisorPolicyKey(), PolicyJson(p));
  if (Status st = kv_->Write(b, /*sync=*/true); !st.ok()) return st;
  {
    std::lock_guard lock(mu_);
    policy_ = p;
  }
  wake_.notify_all();
  return Status::OK();
}

ExecutorStatus Advisor::executor() const {
  const int64_t now = options_.now();
  std::lock_guard lock(mu_);
  ExecutorStatus s;
  s.enabled = policy_.enabled;
  s.in_window = InWindow(policy_, now);
  s.day = stats_.DayOf(now);
  s.bytes_today = budget_day_ == s.day ? budget_bytes_ : 0;
  s.budget = policy_.max_bytes_per_day;
  s.running = running_;
  s.waiting = waiting_;
  s.moved_objects = moved_objects_;
  s.moved_bytes = moved_bytes_;
  return s;
}

std::string Advisor::ModelJson() const {
  nlohmann::json media = nlohmann::json::object();
  for (size_t i = 0; i < options_.model.media.size(); ++i) {
    media[std::string(tier::MediaName(static_cast<tier::Media>(i)))] = {
        {"watts_per_tib", options_.model.media[i].watts_per_tib},
        {"cost_per_tib_month", options_.model.media[i].cost_per_tib_month}};
  }
  const Thresholds& t = options_.thresholds;
  nlohmann::json j = {
      {"kind", "modelled"},
      {"currency", options_.model.currency},
      {"media", media},
      {"thresholds",
       {{"window_days", t.window_days}, {"cold_days", t.cold_days},
        {"archive_days", t.archive_days}, {"min_bytes", t.min_bytes},
        {"hot_reads_per_day", t.hot_reads_per_day}, {"hot_min_active_days", t.hot_min_active_days},
        {"hot_min_rereads", t.hot_min_rereads}, {"kv_idle_days", t.kv_idle_days}}},
      {"day_seconds", static_cast<double>(stats_.options().day_ns) / 1e9},
      {"statistics",
       {{"prefixes", stats_.size()}, {"max_prefixes", stats_.options().max_prefixes},
        {"prefix_depth", stats_.options().prefix_depth},
        {"sample_every", stats_.options().sample_every}, {"recorded", stats_.recorded()},
        {"dropped", stats_.dropped()}, {"half_life_days", stats_.options().half_life_days}}}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Advisor::Pace() {
  uint32_t rate;
  {
    std::lock_guard lock(mu_);
    rate = policy_.max_objects_per_second;
  }
  if (rate == 0) return;
  const int64_t gap = 1'000'000'000 / rate;
  const int64_t now = SteadyNowNs();
  if (next_move_ns_ > now) {
    std::unique_lock lock(wake_mu_);
    wake_.wait_for(lock, std::chrono::nanoseconds(next_move_ns_ - now), [this] { return stop_.load(); });
  }
  next_move_ns_ = std::max(next_move_ns_, now) + gap;
}

Result<bool> Advisor::ExecuteStep() {
  std::lock_guard executing(exec_mu_);
  const int64_t now = options_.now();
  const int64_t today = stats_.DayOf(now);
  Recommendation rec;
  Policy policy;
  std::vector<Recommendation> auto_approved;
  {
    std::lock_guard lock(mu_);
    policy = policy_;
    running_.clear();
    if (!policy.enabled) {
      waiting_ = "stopped (the execution policy has enabled: false)";
      return false;
    }
    if (!InWindow(policy, now)) {
      waiting_ = "outside the execution window (" + std::to_string(policy.window_start_hour) +
                 ":00-" + std::to_string(policy.window_end_hour) + ":00 UTC)";
      return false;
    }
    if (!policy.require_approval) {
      for (auto& [id, r] : recs_) {
        if (r.state == "pending" && PolicyRefusal(policy, r).empty()) {
          r.state = "approved";
          r.decided_by = "policy";
          r.decided_ns = r.updated_ns = now;
          auto_approved.push_back(r);
        }
      }
    }
    if (budget_day_ != today) {
      budget_day_ = today;
      budget_bytes_ = 0;
    }
    const Recommendation* pick = nullptr;
    for (const auto& [id, r] : recs_) {
      if (!Runnable(r)) continue;
      if (!pick || r.decided_ns < pick->decided_ns) pick = &r;
    }
    if (!pick) {
      waiting_.clear();
      return false;
    }
    rec = *pick;
    running_ = rec.id;
  }
  for (const Recommendation& r : auto_approved) {
    if (Status st = SaveRecommendation(r); !st.ok()) return st;
  }
  auto publish = [&](const std::string& waiting) -> Status {
    rec.updated_ns = options_.now();
    rec.waiting = waiting;
    {
      std::lock_guard lock(mu_);
      auto it = recs_.find(rec.id);
      // Rejected meanwhile: the operator wins; keep the progress only.
      if (it != recs_.end() && it->second.state == "rejected") {
        it->second.moved_objects = rec.moved_objects;
        it->second.moved_bytes = rec.moved_bytes;
        rec = it->second;
      } else {
        recs_[rec.id] = rec;
      }
      waiting_ = waiting;
      if (rec.state != "executing") running_.clear();
    }
    return SaveRecommendation(rec);
  };
  // The policy may have changed since the approval.
  if (std::string why = PolicyRefusal(policy, rec); !why.empty()) {
    rec.state = "waiting";
    if (Status st = publish(why); !st.ok()) return st;
    return false;
  }
  if (rec.kind == "expire") {
    ExpireKv(rec);
    if (Status st = publish(""); !st.ok()) return st;
    return rec.state == "done";
  }
  rec.state = "executing";
  object::ListParams lp;
  lp.prefix = rec.prefix;
  lp.start_after = rec.resume_after;
  lp.max_keys = 100;
  auto page = engine_->ListObjects(rec.bucket, lp);
  if (!page.ok()) {
    rec.state = "failed";
    rec.reason = page.status().ToString();
    if (Status st = publish(""); !st.ok()) return st;
    return false;
  }
  std::string waiting;
  bool worked = false;
  for (const object::ListEntry& e : page->objects) {
    if (stop_) break;
    const std::string cls = NormalClass(e.record.storage_class);
    if (PrefixOf(e.key, options_.stats.prefix_depth) != rec.prefix ||
        std::find(rec.from_classes.begin(), rec.from_classes.end(), cls) == rec.from_classes.end()) {
      rec.resume_after = e.key;
      continue;  // another (deeper) prefix's, or not in the tier this moves out of
    }
    uint64_t used;
    {
      // The day may turn during a page: each move counts on the day it starts.
      const int64_t day = stats_.DayOf(options_.now());
      std::lock_guard lock(mu_);
      if (budget_day_ != day) {
        budget_day_ = day;
        budget_bytes_ = 0;
      }
      used = budget_bytes_;
    }
    if (used + e.record.size_bytes > policy.max_bytes_per_day) {
      waiting = "daily byte budget reached (" + std::to_string(used) + " of " +
                std::to_string(policy.max_bytes_per_day) + " bytes moved today; next: " + e.key +
                ", " + std::to_string(e.record.size_bytes) + " bytes)";
      break;
    }
    Pace();
    if (stop_) break;
    Status st;
    {
      audit::Actor actor = audit::SystemActor("advisor", "AdvisorTransition", rec.bucket, e.key);
      actor.request_id = "advisor:" + rec.id;
      audit::Scope scope(&actor);
      const std::vector<std::string> from = rec.from_classes;
      st = engine_->MoveVersion(rec.bucket, e.key, e.record.version_stamp, rec.to_pool,
                                rec.to_class == "STANDARD" ? "" : rec.to_class,
                                [from](const object::ObjectRecord& now_rec) -> Status {
                                  const std::string c = NormalClass(now_rec.storage_class);
                                  if (std::find(from.begin(), from.end(), c) == from.end()) {
                                    return Aborted("moved meanwhile");
                                  }
                                  return Status::OK();
                                });
    }
    worked = true;
    rec.resume_after = e.key;
    if (st.ok()) {
      ++rec.moved_objects;
      rec.moved_bytes += e.record.size_bytes;
      std::lock_guard lock(mu_);
      budget_bytes_ += e.record.size_bytes;
      ++moved_objects_;
      moved_bytes_ += e.record.size_bytes;
    } else if (st.code() == Code::kAborted || st.code() == Code::kNotFound) {
      ++rec.skipped;  // changed or gone meanwhile: not ours to move
    } else if (st.code() == Code::kPermissionDenied) {
      ++rec.locked;
    } else {
      ++rec.failed;
      STRATA_LOG("advisor: moving %s/%s for %s failed: %s", rec.bucket.c_str(), e.key.c_str(),
                 rec.id.c_str(), st.ToString().c_str());
    }
  }
  uint64_t day_bytes;
  int64_t budget_day;
  {
    std::lock_guard lock(mu_);
    day_bytes = budget_bytes_;
    budget_day = budget_day_;
  }
  if (worked) {
    if (Status st = SaveBudget(budget_day, day_bytes); !st.ok()) return st;
  }
  if (waiting.empty() && !stop_ && (!page->is_truncated || page->objects.empty())) {
    rec.state = "done";
    rec.finished_ns = options_.now();
  } else if (!waiting.empty()) {
    rec.state = "waiting";
  }
  if (Status st = publish(waiting); !st.ok()) return st;
  return rec.state == "executing" || (worked && rec.state == "done");
}

void Advisor::ExpireKv(Recommendation& rec) {
  Result<KvExpired> r = Unavailable("the KV-cache tier is not running");
  if (options_.kv_expire) {
    // Each block's removal is an audit record of the advisor's, naming the recommendation.
    audit::Actor actor = audit::SystemActor("advisor", "AdvisorKvExpire", rec.bucket, "");
    actor.request_id = "advisor:" + rec.id;
    audit::Scope scope(&actor);
    r = options_.kv_expire(rec.bucket, rec.last_read_ns);
  }
  rec.finished_ns = options_.now();
  if (r.ok()) {
    rec.state = "done";
    rec.moved_objects = r->blocks;
    rec.moved_bytes = r->bytes;
    rec.locked = r->blocks_left;  // pinned (or being read): they stay
    return;
  }
  if (r.status().code() == Code::kPreconditionFailed || r.status().code() == Code::kNotFound) {
    rec.state = "expired";  // accessed since the analysis, or gone: the evidence no longer holds
    rec.reason = r.status().message();
    return;
  }
  rec.state = "failed";
  rec.reason = r.status().ToString();
  STRATA_LOG("advisor: expiring %s for %s failed: %s", rec.bucket.c_str(), rec.id.c_str(),
             rec.reason.c_str());
}

}  // namespace strata::advisor

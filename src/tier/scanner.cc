#include "tier/scanner.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "audit/context.h"
#include "common/log.h"
#include "common/time_util.h"
#include "common/thread_priority.h"
#include "meta/keys.h"

namespace strata::tier {
namespace {

int64_t NowNs() { return UnixNowNs(); }

// Progress value: bucket + '\0' + the last key finished in it.
std::string EncodeProgress(const std::string& bucket, const std::string& key) {
  std::string v = bucket;
  v.push_back('\0');
  v += key;
  return v;
}

}  // namespace

VersionFacts Scanner::FactsAt(const std::string& key,
                              const std::vector<const object::ObjectRecord*>& versions, size_t i,
                              const object::BucketRecord& bucket) {
  const object::ObjectRecord& r = *versions[i];
  VersionFacts v;
  v.key = key;
  v.size_bytes = r.size_bytes;
  v.mtime_ns = r.mtime_ns;
  v.tags = r.tags;
  v.storage_class = r.storage_class;
  v.is_latest = i == 0;
  v.delete_marker = r.delete_marker;
  v.versioned_bucket = bucket.versioning != object::Versioning::kUnversioned;
  v.only_version = versions.size() == 1;
  v.min_transition_bytes = bucket.lifecycle_min_transition_bytes;
  if (i > 0) {
    v.noncurrent_since_ns = versions[i - 1]->mtime_ns;  // its successor's creation
    v.newer_noncurrent = static_cast<uint32_t>(i - 1);
  }
  return v;
}

ScanStats& ScanStats::operator+=(const ScanStats& o) {
  versions += o.versions;
  deleted += o.deleted;
  markers += o.markers;
  transitioned += o.transitioned;
  aborted_uploads += o.aborted_uploads;
  locked += o.locked;
  raced += o.raced;
  failed += o.failed;
  return *this;
}

Scanner::Scanner(object::ObjectEngine* engine, meta::KvStore* kv, const ClassMap* classes,
                 ScannerOptions options)
    : engine_(engine), kv_(kv), classes_(classes), options_(options) {}

Scanner::~Scanner() { Stop(); }

void Scanner::Start() {
  thread_ = std::thread([this] {
    NameThisThread("lifecycle");
    while (!stopping()) {
      auto stats = RunPass();
      if (!stats.ok()) {
        STRATA_LOG("lifecycle: pass failed: %s", stats.status().ToString().c_str());
      }
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::nanoseconds(options_.interval_ns),
                   [this] { return stopping(); });
    }
  });
}

void Scanner::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

ScanStats Scanner::totals() const {
  std::lock_guard lock(mu_);
  return totals_;
}

// Thread-safe: the transitions of FlushMoves pace themselves as they run.
void Scanner::Pace() {
  if (options_.max_actions_per_s == 0) return;
  const int64_t step = 1'000'000'000 / options_.max_actions_per_s;
  int64_t until;
  {
    std::lock_guard lock(pace_mu_);
    next_action_ns_ = std::max(next_action_ns_ + step, SteadyNowNs());
    until = next_action_ns_ - step;
  }
  // Never wait long with a stop pending: in slices.
  while (!stopping() && SteadyNowNs() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

Result<ScanStats> Scanner::RunPass() {
  std::lock_guard pass(pass_mu_);
  ScanStats stats;
  std::string resume_bucket, resume_key;
  {
    ASSIGN_OR_RETURN(auto saved, kv_->Get(meta::LifecycleProgressKey()));
    if (saved) {
      size_t nul = saved->find('\0');
      if (nul != std::string::npos) {
        resume_bucket = saved->substr(0, nul);
        resume_key = saved->substr(nul + 1);
      }
    }
  }
  ASSIGN_OR_RETURN(auto buckets, engine_->ListBuckets());  // in name order
  Status result;
  for (const auto& [name, rec] : buckets) {
    if (stopping()) break;
    if (!resume_bucket.empty() && name < resume_bucket) continue;
    const std::string after = name == resume_bucket ? resume_key : "";
    if (rec.lifecycle.empty()) continue;
    Status st = ScanBucket(name, rec, after, &stats);
    if (!st.ok()) {
      STRATA_LOG("lifecycle: bucket %s: %s", name.c_str(), st.ToString().c_str());
      ++stats.failed;
    }
  }
  if (!stopping()) {  // a whole pass done: the next one starts from the top
    meta::WriteBatch done;
    done.Delete(meta::LifecycleProgressKey());
    RETURN_IF_ERROR(kv_->Write(done, /*sync=*/false));
    ++passes_;
  }
  std::lock_guard lock(mu_);
  totals_ += stats;
  return stats;
}

Status Scanner::ScanBucket(const std::string& bucket, const object::BucketRecord& listed,
                           const std::string& resume_after, ScanStats* stats) {
  object::BucketRecord rec = listed;
  auto parsed = ParseLifecycle(rec.lifecycle, [](std::string_view) { return true; });
  auto* config = std::get_if<Configuration>(&parsed);
  if (!config) return Corruption("the stored lifecycle configuration does not parse");
  // The rules and the versioning state as they are now (a pass can be long:
  // a rule deleted or versioning enabled meanwhile applies from the next page).
  auto refresh = [&]() -> Result<bool> {
    auto fresh = engine_->GetBucket(bucket);
    if (!fresh.ok()) {
      if (fresh.status().code() == Code::kNotFound) return false;
      return fresh.status();
    }
    if (fresh->lifecycle.empty()) return false;
    if (fresh->lifecycle != rec.lifecycle) {
      parsed = ParseLifecycle(fresh->lifecycle, [](std::string_view) { return true; });
      config = std::get_if<Configuration>(&parsed);
      if (!config) return Corruption("the stored lifecycle configuration does not parse");
    }
    rec = std::move(*fresh);
    return true;
  };
  object::ListVersionsParams params;
  params.key_marker = resume_after;
  params.max_keys = static_cast<int>(options_.page_versions);
  std::vector<object::VersionEntry> group;  // one key's versions, maybe across pages
  while (!stopping()) {
    ASSIGN_OR_RETURN(bool still, refresh());
    if (!still) return Status::OK();  // the bucket or its rules went
    ASSIGN_OR_RETURN(auto page, engine_->ListVersions(bucket, params));
    std::string finished;  // the last key whose versions were all applied
    for (object::VersionEntry& v : page.versions) {
      if (!group.empty() && group.front().key != v.key) {
        finished = group.front().key;
        ApplyToKey(bucket, rec, *config, group, stats);
        group.clear();
      }
      group.push_back(std::move(v));
    }
    FlushMoves(stats);  // before the progress says these keys are done
    if (!page.is_truncated) break;
    params.key_marker = page.next_key_marker;
    params.version_id_marker = page.next_version_id_marker;
    if (!finished.empty() && !stopping()) {  // a stop leaves keys unapplied: not done
      meta::WriteBatch progress;
      progress.Put(meta::LifecycleProgressKey(), EncodeProgress(bucket, finished));
      RETURN_IF_ERROR(kv_->Write(progress, /*sync=*/false));
    }
  }
  if (!group.empty() && !stopping()) ApplyToKey(bucket, rec, *config, group, stats);
  FlushMoves(stats);
  if (stopping()) return Status::OK();
  RETURN_IF_ERROR(ScanUploads(bucket, *config, stats));
  meta::WriteBatch progress;  // this bucket is done
  progress.Put(meta::LifecycleProgressKey(), EncodeProgress(bucket + '\x01', ""));
  return kv_->Write(progress, /*sync=*/false);
}

void Scanner::ApplyToKey(const std::string& bucket, const object::BucketRecord& rec,
                         const Configuration& config,
                         const std::vector<object::VersionEntry>& versions, ScanStats* stats) {
  const int64_t now = NowNs();
  std::vector<const object::ObjectRecord*> records;
  for (const object::VersionEntry& e : versions) records.push_back(&e.record);
  for (size_t i = 0; i < versions.size() && !stopping(); ++i) {
    const object::VersionEntry& e = versions[i];
    const object::ObjectRecord& r = e.record;
    ++stats->versions;
    Action a = Evaluate(config, FactsAt(e.key, records, i, rec), now, options_.day_ns);
    if (a.kind == ActionKind::kNone) continue;
    if (a.kind != ActionKind::kTransition) Pace();  // transitions pace as they run
    Status st;
    object::DeleteOptions only_this;
    only_this.only_if_stamp = r.version_stamp;
    // Decided on what the listing said: the engine asks again, under the key
    // lock, with the key's versions as they are then (a newer version
    // deleted meanwhile makes a noncurrent one current: it must stay).
    only_this.keep = [&, kind = a.kind, stamp = r.version_stamp, key = e.key](
                         const object::ObjectRecord&,
                         const std::vector<object::ObjectRecord>& now_versions) -> Status {
      std::vector<const object::ObjectRecord*> fresh;
      size_t at = now_versions.size();
      for (size_t j = 0; j < now_versions.size(); ++j) {
        fresh.push_back(&now_versions[j]);
        if (now_versions[j].version_stamp == stamp) at = j;
      }
      if (at == now_versions.size()) return NotFound(Detail::kVersion, "the version went");
      if (Evaluate(config, FactsAt(key, fresh, at, rec), NowNs(), options_.day_ns).kind != kind) {
        return PreconditionFailed("the lifecycle rule no longer applies to the version");
      }
      return Status::OK();
    };
    switch (a.kind) {
      case ActionKind::kDelete: {
        audit::Actor actor =
            audit::SystemActor("lifecycle", "LifecycleExpiration:Delete", bucket, e.key);
        audit::Scope scope(&actor);
        object::VersionSelector sel;
        sel.null = !r.versioned;
        sel.stamp = r.version_stamp;
        st = engine_->DeleteVersion(bucket, e.key, sel, only_this).status();
        if (st.ok()) ++stats->deleted;
        break;
      }
      case ActionKind::kAddMarker: {
        audit::Actor actor = audit::SystemActor(
            "lifecycle", "LifecycleExpiration:DeleteMarkerCreated", bucket, e.key);
        audit::Scope scope(&actor);
        st = engine_->DeleteVersion(bucket, e.key, std::nullopt, only_this).status();
        if (st.ok()) ++stats->markers;
        break;
      }
      case ActionKind::kTransition: {
        // Moves run a few at a time (FlushMoves): one's synced metadata
        // switch overlaps the next one's copy.
        const std::string& pool = classes_ ? classes_->PoolOf(a.storage_class) : std::string();
        moves_.push_back({bucket, e.key, r.version_stamp, pool, a.storage_class, a.rule_id});
        if (moves_.size() >= kMaxPendingMoves) FlushMoves(stats);
        continue;
      }
      case ActionKind::kNone:
        break;
    }
    Tally(st, bucket, e.key, r.VersionId(), a.rule_id, stats);
  }
}

void Scanner::Tally(const Status& st, const std::string& bucket, const std::string& key,
                    const std::string& version_id, const std::string& rule_id, ScanStats* stats) {
  if (st.ok()) return;
  if (st.code() == Code::kPermissionDenied && st.detail() == Detail::kLocked) {
    ++stats->locked;
  } else if (st.code() == Code::kPreconditionFailed || st.code() == Code::kNotFound) {
    ++stats->raced;
  } else {
    ++stats->failed;
    STRATA_LOG("lifecycle: %s/%s version %s (rule %s): %s", bucket.c_str(), key.c_str(),
               version_id.c_str(), rule_id.c_str(), st.ToString().c_str());
  }
}

void Scanner::FlushMoves(ScanStats* stats) {
  if (moves_.empty()) return;
  std::vector<Status> results(moves_.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < moves_.size(); i = next++) {
      const Move& m = moves_[i];
      Pace();
      if (stopping()) {
        results[i] = PreconditionFailed("stopping");  // counted as raced: the next pass
        continue;
      }
      audit::Actor actor = audit::SystemActor("lifecycle", "LifecycleTransition", m.bucket, m.key);
      audit::Scope scope(&actor);
      results[i] = engine_->MoveVersion(m.bucket, m.key, m.stamp, m.pool, m.storage_class);
    }
  };
  const size_t helpers = std::min<size_t>(std::max<uint32_t>(options_.moves_in_flight, 1) - 1,
                                          moves_.size() - 1);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < helpers; ++i) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < moves_.size(); ++i) {
    if (results[i].ok()) {
      ++stats->transitioned;
    } else {
      Tally(results[i], moves_[i].bucket, moves_[i].key, object::VersionIdOf(moves_[i].stamp),
            moves_[i].rule_id, stats);
    }
  }
  moves_.clear();
}

Status Scanner::ScanUploads(const std::string& bucket, const Configuration& config,
                            ScanStats* stats) {
  object::ListUploadsParams params;
  params.max_uploads = 1000;
  while (!stopping()) {
    ASSIGN_OR_RETURN(auto page, engine_->ListUploads(bucket, params));
    const int64_t now = NowNs();
    for (const object::UploadInfo& u : page.uploads) {
      if (!AbortDue(config, u.key, u.record.initiated_ns, now, options_.day_ns)) continue;
      Pace();
      audit::Actor actor =
          audit::SystemActor("lifecycle", "AbortIncompleteMultipartUpload", bucket, u.key);
      audit::Scope scope(&actor);
      Status st = engine_->AbortUpload(bucket, u.key, u.upload_id);
      if (st.ok()) {
        ++stats->aborted_uploads;
      } else if (st.code() != Code::kNotFound) {
        ++stats->failed;
        STRATA_LOG("lifecycle: abort %s/%s upload %s: %s", bucket.c_str(), u.key.c_str(),
                   u.upload_id.c_str(), st.ToString().c_str());
      }
    }
    if (!page.is_truncated) break;
    params.key_marker = page.next_key_marker;
    params.upload_id_marker = page.next_upload_id_marker;
  }
  return Status::OK();
}

}  // namespace strata::tier

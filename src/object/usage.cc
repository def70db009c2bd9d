#include "object/usage.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "common/encoding.h"
#include "common/log.h"
#include "meta/keys.h"
#include "object/record.h"

namespace strata::object {

namespace {

uint64_t ZigZag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

std::string EncodeUsage(const BucketUsage& u) {
  std::string out;
  PutVarint64(&out, ZigZag(u.objects));
  PutVarint64(&out, ZigZag(u.bytes));
  return out;
}

std::optional<BucketUsage> DecodeUsage(std::string_view in) {
  uint64_t o = 0, b = 0;
  if (!GetVarint64(&in, &o) || !GetVarint64(&in, &b) || !in.empty()) return std::nullopt;
  return BucketUsage{UnZigZag(o), UnZigZag(b)};
}

// What one stored version value counts for: (1, size), or nothing for a
// delete marker, a record that does not decode, or no record.
BucketUsage Counted(const std::optional<std::string>& value) {
  if (!value) return {};
  auto r = DecodeObjectRecord(*value);
  if (!r || r->delete_marker) return {};
  return {1, static_cast<int64_t>(r->size_bytes)};
}

// "Sd" bucket '\0' BE64(seq): the bucket and seq; false if not that.
bool ParseDeltaKey(std::string_view k, std::string* bucket, uint64_t* seq) {
  const size_t head = 2;
  if (k.size() < head + 1 + 8 || !k.starts_with(meta::UsageDeltaPrefix())) return false;
  if (k[k.size() - 9] != '\0') return false;
  *bucket = std::string(k.substr(head, k.size() - head - 9));
  *seq = DecodeFixed64BE(k.data() + k.size() - 8);
  return true;
}

}  // namespace

class UsageCounter::Store : public meta::ExtendingStore {
 public:
  explicit Store(UsageCounter* u) : u_(u) {}
  Result<std::optional<std::string>> Get(std::string_view key) override {
    return u_->inner_->Get(key);
  }
  Status Apply(const meta::WriteBatch& batch, meta::WriteBatch* owned, bool sync) override {
    meta::ExtendedBatch out(batch, owned);
    std::map<std::string, BucketUsage> deltas;
    std::vector<std::pair<std::string, bool>> buckets;  // bucket records: name, removed
    for (const meta::WriteBatch::Op& op : batch.ops()) {
      std::string bucket, key;
      uint64_t stamp = 0;
      if (!meta::ParseObjectVersionKey(op.key, &bucket, &key, &stamp)) {
        if (!op.key.empty() && op.key[0] == meta::kBucketPrefix) {
          buckets.emplace_back(op.key.substr(1), op.is_delete);
        }
        continue;
      }
      ASSIGN_OR_RETURN(std::optional<std::string> before, u_->inner_->Get(op.key));
      const BucketUsage was = Counted(before);
      const BucketUsage now = op.is_delete ? BucketUsage{} : Counted(op.value);
      BucketUsage& d = deltas[bucket];
      d.objects += now.objects - was.objects;
      d.bytes += now.bytes - was.bytes;
    }
    std::erase_if(deltas, [](const auto& e) { return e.second == BucketUsage{}; });
    const bool removes_bucket =
        std::any_of(buckets.begin(), buckets.end(), [](const auto& b) { return b.second; });
    if (deltas.empty() && !removes_bucket) {
      RETURN_IF_ERROR(out.Forward(*u_->inner_, sync));
    } else {
      // A removed bucket's total goes with it; no fold may write it back meanwhile.
      std::unique_lock<std::mutex> fold;
      if (removes_bucket) fold = std::unique_lock(u_->fold_mu_);
      meta::WriteBatch& with = out.get();
      for (const auto& [bucket, removed] : buckets) {
        if (removed) with.Delete(meta::UsageTotalKey(bucket));
      }
      uint64_t seq = u_->next_seq_.fetch_add(deltas.size());
      for (const auto& [bucket, d] : deltas) with.Put(meta::UsageDeltaKey(bucket, seq++), EncodeUsage(d));
      RETURN_IF_ERROR(out.Forward(*u_->inner_, sync));
    }
    std::lock_guard lock(u_->mu_);
    for (const auto& [bucket, d] : deltas) {
      BucketUsage& u = u_->usage_[bucket];
      u.objects += d.objects;
      u.bytes += d.bytes;
    }
    for (const auto& [bucket, removed] : buckets) {
      if (removed) {
        u_->usage_.erase(bucket);
      } else {
        u_->usage_.try_emplace(bucket);
      }
    }
    return Status::OK();
  }
  std::unique_ptr<meta::KvIterator> NewIterator() override { return u_->inner_->NewIterator(); }
  Status Checkpoint(const std::string& dir) override { return u_->inner_->Checkpoint(dir); }

 private:
  UsageCounter* u_;
};

UsageCounter::UsageCounter(meta::KvStore* inner, int64_t fold_interval_ns)
    : inner_(inner), fold_interval_ns_(fold_interval_ns), store_(std::make_unique<Store>(this)) {}

UsageCounter::~UsageCounter() { Stop(); }

meta::KvStore* UsageCounter::store() { return store_.get(); }

Result<std::unique_ptr<UsageCounter>> UsageCounter::Open(meta::KvStore* inner,
                                                         int64_t fold_interval_ns) {
  std::unique_ptr<UsageCounter> u(new UsageCounter(inner, fold_interval_ns));
  ASSIGN_OR_RETURN(auto init, inner->Get(meta::UsageInitKey()));
  if (!init) {
    // Versions written before usage was counted (an upgrade, a rebuilt
    // index): count them once, and say so.
    std::map<std::string, BucketUsage> counted;
    auto it = inner->NewIterator();
    const std::string prefix(1, meta::kObjectPrefix);
    uint64_t versions = 0;
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      std::string bucket, key;
      uint64_t stamp = 0;
      if (!meta::ParseObjectVersionKey(it->key(), &bucket, &key, &stamp)) continue;
      const BucketUsage c = Counted(std::string(it->value()));
      BucketUsage& t = counted[bucket];
      t.objects += c.objects;
      t.bytes += c.bytes;
      ++versions;
    }
    RETURN_IF_ERROR(it->status());
    meta::WriteBatch b;
    // Older totals and deltas (a rebuilt index has none; be sure).
    for (const std::string& p : {meta::UsageTotalPrefix(), meta::UsageDeltaPrefix()}) {
      auto old = inner->NewIterator();
      for (old->Seek(p); old->Valid() && old->key().starts_with(p); old->Next()) {
        b.Delete(old->key());
      }
      RETURN_IF_ERROR(old->status());
    }
    for (const auto& [bucket, t] : counted) b.Put(meta::UsageTotalKey(bucket), EncodeUsage(t));
    b.Put(meta::UsageInitKey(), "");
    RETURN_IF_ERROR(inner->Write(b, /*sync=*/true));
    if (versions > 0) {
      STRATA_LOG("usage: counted %llu object versions of %zu buckets once (they were written "
                 "before per-bucket usage was kept)",
                 static_cast<unsigned long long>(versions), counted.size());
    }
  }
  {
    auto it = inner->NewIterator();
    const std::string totals = meta::UsageTotalPrefix();
    for (it->Seek(totals); it->Valid() && it->key().starts_with(totals); it->Next()) {
      if (auto t = DecodeUsage(it->value())) {
        u->usage_[std::string(it->key().substr(totals.size()))] = *t;
      }
    }
    RETURN_IF_ERROR(it->status());
    const std::string deltas = meta::UsageDeltaPrefix();
    uint64_t max_seq = 0;
    for (it->Seek(deltas); it->Valid() && it->key().starts_with(deltas); it->Next()) {
      std::string bucket;
      uint64_t seq = 0;
      auto d = DecodeUsage(it->value());
      if (!ParseDeltaKey(it->key(), &bucket, &seq) || !d) continue;
      max_seq = std::max(max_seq, seq);
      BucketUsage& t = u->usage_[bucket];
      t.objects += d->objects;
      t.bytes += d->bytes;
    }
    RETURN_IF_ERROR(it->status());
    u->next_seq_ = max_seq + 1;
    // Every bucket, and buckets only.
    std::map<std::string, BucketUsage> all;
    const std::string bucket_prefix(1, meta::kBucketPrefix);
    for (it->Seek(bucket_prefix); it->Valid() && it->key().starts_with(bucket_prefix); it->Next()) {
      const std::string name(it->key().substr(1));
      auto found = u->usage_.find(name);
      all[name] = found == u->usage_.end() ? BucketUsage{} : found->second;
    }
    RETURN_IF_ERROR(it->status());
    u->usage_ = std::move(all);
  }
  return u;
}

std::map<std::string, BucketUsage> UsageCounter::Snapshot() {
  std::lock_guard lock(mu_);
  return usage_;
}

Status UsageCounter::Fold() {
  std::lock_guard fold(fold_mu_);
  std::map<std::string, BucketUsage> sums;
  meta::WriteBatch b;
  {
    auto it = inner_->NewIterator();
    const std::string prefix = meta::UsageDeltaPrefix();
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      std::string bucket;
      uint64_t seq = 0;
      auto d = DecodeUsage(it->value());
      b.Delete(it->key());
      if (!ParseDeltaKey(it->key(), &bucket, &seq) || !d) continue;
      BucketUsage& s = sums[bucket];
      s.objects += d->objects;
      s.bytes += d->bytes;
    }
    RETURN_IF_ERROR(it->status());
  }
  if (b.empty()) return Status::OK();
  for (const auto& [bucket, s] : sums) {
    ASSIGN_OR_RETURN(auto exists, inner_->Get(meta::BucketKey(bucket)));
    ASSIGN_OR_RETURN(auto stored, inner_->Get(meta::UsageTotalKey(bucket)));
    BucketUsage t = stored ? DecodeUsage(*stored).value_or(BucketUsage{}) : BucketUsage{};
    t.objects += s.objects;
    t.bytes += s.bytes;
    if (!exists && t == BucketUsage{}) {
      b.Delete(meta::UsageTotalKey(bucket));  // a removed bucket leaves nothing behind
    } else {
      b.Put(meta::UsageTotalKey(bucket), EncodeUsage(t));
    }
  }
  return inner_->Write(b, /*sync=*/true);
}

void UsageCounter::Start() {
  std::lock_guard lock(run_mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void UsageCounter::Stop() {
  {
    std::lock_guard lock(run_mu_);
    if (!thread_.joinable()) return;
    stop_ = true;
  }
  run_cv_.notify_all();
  thread_.join();
  if (Status s = Fold(); !s.ok()) STRATA_LOG("usage: final fold failed: %s", s.ToString().c_str());
}

void UsageCounter::Run() {
  std::unique_lock lock(run_mu_);
  while (!stop_) {
    run_cv_.wait_for(lock, std::chrono::nanoseconds(fold_interval_ns_));
    if (stop_) break;
    lock.unlock();
    if (Status s = Fold(); !s.ok()) STRATA_LOG("usage: fold failed: %s", s.ToString().c_str());
    lock.lock();
  }
}

}  // namespace strata::object

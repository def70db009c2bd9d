#include "audit/log.h"

#include <chrono>

#include "audit/export.h"
#include "common/encoding.h"
#include "common/log.h"
#include "common/time_util.h"
#include "meta/keys.h"

namespace strata::audit {

namespace {

Record FromActor(const Actor& a) {
  Record r;
  r.kind = a.kind;
  r.identity = a.identity;
  r.source = a.source;
  r.request_id = a.request_id;
  r.operation = std::string(a.operation);
  r.bucket = a.bucket;
  r.key = a.key;
  r.bytes = a.bytes_in ? *a.bytes_in : 0;
  return r;
}

// The record alone: its hash and posting-list entries are the sealer's
// (audit/chain.h), one key per change instead of four.
void AddRecord(const Record& r, meta::WriteBatch* b) { b->Put(RecordKey(r.seq), EncodeRecord(r)); }

}  // namespace

class AuditLog::Store : public meta::ExtendingStore {
 public:
  explicit Store(AuditLog* log) : log_(log) {}
  Result<std::optional<std::string>> Get(std::string_view key) override {
    return log_->inner_->Get(key);
  }
  std::unique_ptr<meta::KvIterator> NewIterator() override { return log_->inner_->NewIterator(); }
  Status Checkpoint(const std::string& dir) override { return log_->inner_->Checkpoint(dir); }

 private:
  Status Apply(const meta::WriteBatch& batch, meta::WriteBatch* owned, bool sync) override {
    Actor* actor = CurrentActor();
    meta::ExtendedBatch out(batch, owned);
    if (!sync || !actor || batch.empty()) return out.Forward(*log_->inner_, sync);
    Record r = FromActor(*actor);
    r.result = "OK";
    r.part = actor->changes;
    // The version the batch writes or removes names the change precisely
    // (DeleteObjects: the key of this deletion, not the request's).
    for (const meta::WriteBatch::Op& op : batch.ops()) {
      std::string bucket, key;
      uint64_t stamp = 0;
      if (meta::ParseObjectVersionKey(op.key, &bucket, &key, &stamp)) {
        r.bucket = std::move(bucket);
        r.key = std::move(key);
        r.version = meta::StampVersionId(stamp);
        break;
      }
    }
    log_->Allocate(&r);
    AddRecord(r, &out.get());
    Status s = out.Forward(*log_->inner_, true);
    log_->Settle(r.seq);
    if (s.ok()) {
      ++actor->changes;
      ++log_->records_;
    }
    return s;
  }

  AuditLog* log_;
};

AuditLog::AuditLog(meta::KvStore* inner, LogOptions options)
    : inner_(inner), options_(std::move(options)), store_(std::make_unique<Store>(this)) {}

AuditLog::~AuditLog() { Stop(); }

meta::KvStore* AuditLog::store() { return store_.get(); }

Result<std::unique_ptr<AuditLog>> AuditLog::Open(meta::KvStore* inner, LogOptions options) {
  if (options.key.size() < 16) return InvalidArgument("audit key: at least 16 bytes");
  std::unique_ptr<AuditLog> log(new AuditLog(inner, std::move(options)));
  ASSIGN_OR_RETURN(log->state_, LoadSealState(*inner));
  // Records past the seal state: committed before a crash or a stop, not yet
  // chained. The trail goes on after the last of them.
  uint64_t last = log->state_.seq;
  int64_t last_time = 0;
  auto it = inner->NewIterator();
  const std::string prefix = RecordPrefix();
  it->Seek(RecordKey(last + 1));
  for (; it->Valid() && it->key().starts_with(prefix); it->Next()) {
    uint64_t seq = 0;
    if (!SeqOfKey(it->key(), &seq)) continue;
    last = std::max(last, seq);
    if (auto r = DecodeRecord(it->value()); r.ok()) last_time = std::max(last_time, r->time_ns);
  }
  RETURN_IF_ERROR(it->status());
  if (last_time == 0 && log->state_.seq > 0) {
    ASSIGN_OR_RETURN(auto raw, inner->Get(RecordKey(log->state_.seq)));
    if (raw) {
      if (auto r = DecodeRecord(*raw); r.ok()) last_time = r->time_ns;
    }
  }
  log->next_ = last + 1;
  log->last_time_ = std::max(last_time, log->state_.checkpoint_time_ns);
  log->last_checkpoint_ns_ = UnixNowNs();
  ASSIGN_OR_RETURN(log->exported_, LoadExportedSeq(*inner));
  log->last_export_ns_ = log->last_checkpoint_ns_;
  return log;
}

void AuditLog::Allocate(Record* r) {
  std::lock_guard lock(mu_);
  AllocateLocked(r);
}

void AuditLog::AllocateLocked(Record* r) {
  r->seq = next_++;
  r->time_ns = std::max(UnixNowNs(), last_time_);
  last_time_ = r->time_ns;
  in_flight_.insert(r->seq);
}

void AuditLog::Settle(uint64_t seq) {
  std::lock_guard lock(mu_);
  in_flight_.erase(seq);
}

void AuditLog::RecordRequest(const Actor& actor, Kind kind, std::string_view result,
                             int http_status) {
  Record r = FromActor(actor);
  r.kind = kind;
  r.result = std::string(result);
  r.http_status = http_status;
  std::lock_guard lock(mu_);
  if (queue_.size() >= options_.queue_limit) {
    ++dropped_;
    return;
  }
  AllocateLocked(&r);
  queue_.push_back(std::move(r));
}

Status AuditLog::Flush(bool checkpoint) {
  std::lock_guard seal_lock(seal_mu_);
  std::vector<Record> queued;
  {
    std::lock_guard lock(mu_);
    queued.swap(queue_);
  }
  if (!queued.empty()) {
    meta::WriteBatch b;
    for (const Record& r : queued) AddRecord(r, &b);
    Status s = inner_->Write(b, /*sync=*/true);
    if (s.ok()) {
      records_ += queued.size();
    } else {
      ++failures_;  // their seqs become gaps
      STRATA_LOG("audit: cannot write %zu request records: %s", queued.size(),
                 s.ToString().c_str());
    }
    std::lock_guard lock(mu_);
    for (const Record& r : queued) in_flight_.erase(r.seq);
  }
  for (;;) {
    uint64_t end;
    std::set<uint64_t> in_flight;
    {
      std::lock_guard lock(mu_);
      end = next_;
      in_flight = in_flight_;
    }
    SealState next = state_;
    meta::WriteBatch b;
    ASSIGN_OR_RETURN(uint64_t chained, Seal(*inner_, &next, end, in_flight, 4096, &b));
    const int64_t now = UnixNowNs();
    const bool due =
        next.seq > next.checkpoint_seq &&
        (checkpoint || next.seq - next.checkpoint_seq >= options_.checkpoint_every ||
         now - last_checkpoint_ns_ >= options_.checkpoint_interval_ns);
    if (due) AddCheckpoint(options_.key, now, &next, &b);
    if (b.empty()) {
      if (checkpoint) MaybeExport(true);  // nothing new to sign: retry a failed export
      return Status::OK();
    }
    if (Status s = inner_->Write(b, /*sync=*/true); !s.ok()) {
      ++failures_;
      return s;
    }
    state_ = std::move(next);
    if (due) {
      last_checkpoint_ns_ = now;
      MaybeExport(checkpoint);
    }
    if (chained < 4096) return Status::OK();
  }
}

void AuditLog::SetExporter(Exporter exporter, uint64_t min_records, int64_t interval_ns) {
  std::lock_guard seal_lock(seal_mu_);
  exporter_ = std::move(exporter);
  export_min_records_ = min_records;
  export_interval_ns_ = interval_ns;
}

uint64_t AuditLog::exported_seq() {
  std::lock_guard seal_lock(seal_mu_);
  return exported_;
}

void AuditLog::MaybeExport(bool force) {
  const uint64_t last = state_.checkpoint_seq;
  if (!exporter_ || last <= exported_) return;
  const int64_t now = UnixNowNs();
  if (!force && last - exported_ < export_min_records_ &&
      now - last_export_ns_ < export_interval_ns_) {
    return;
  }
  auto doc = RenderSegment(*inner_, exported_ + 1, last);
  Status st = doc.ok() ? exporter_(exported_ + 1, last, *doc) : doc.status();
  if (st.ok()) {
    meta::WriteBatch b;
    std::string v;
    PutFixed64BE(&v, last);
    b.Put(ExportedSeqKey(), v);
    st = inner_->Write(b, /*sync=*/true);
  }
  if (!st.ok()) {  // tried again at the next checkpoint
    ++failures_;
    STRATA_LOG("audit: exporting records %llu..%llu failed: %s",
               static_cast<unsigned long long>(exported_ + 1),
               static_cast<unsigned long long>(last), st.ToString().c_str());
    return;
  }
  exported_ = last;
  last_export_ns_ = now;
}

VerifyReport AuditLog::Verify() {
  std::lock_guard seal_lock(seal_mu_);  // hashes, gaps and checkpoints hold still
  return audit::Verify(*inner_, options_.key);
}

AuditLog::Stats AuditLog::stats() {
  Stats s;
  s.records = records_;
  s.dropped = dropped_;
  s.failures = failures_;
  {
    std::lock_guard lock(mu_);
    s.next_seq = next_;
  }
  std::lock_guard seal_lock(seal_mu_);
  s.sealed_seq = state_.seq;
  s.checkpoint_seq = state_.checkpoint_seq;
  return s;
}

void AuditLog::Start() {
  std::lock_guard lock(run_mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void AuditLog::Stop() {
  {
    std::lock_guard lock(run_mu_);
    if (!thread_.joinable()) return;
    stop_ = true;
  }
  run_cv_.notify_all();
  thread_.join();
  if (Status s = Flush(/*checkpoint=*/true); !s.ok()) {
    STRATA_LOG("audit: final seal failed: %s", s.ToString().c_str());
  }
}

void AuditLog::Run() {
  std::unique_lock lock(run_mu_);
  while (!stop_) {
    run_cv_.wait_for(lock, std::chrono::nanoseconds(options_.seal_interval_ns));
    if (stop_) break;
    lock.unlock();
    if (Status s = Flush(); !s.ok()) {
      STRATA_LOG("audit: sealing failed: %s", s.ToString().c_str());
    }
    lock.lock();
  }
}

}  // namespace strata::audit

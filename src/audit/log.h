// AuditLog: the audit trail's writer. It decorates the metadata store:
// every synced batch written while a thread has an Actor (audit/context.h)
// gets one record appended to that very batch, with its bucket and identity
// index entries, so a change is never acknowledged without its record and no
// record exists for a change that did not commit. Requests that change
// nothing (denied, failed, no-op) are queued and written in batches of their
// own. A background sealer chains the records and signs checkpoints
// (audit/chain.h). Reads, unsynced batches and batches made with no Actor
// (intents, scanner progress) pass through untouched.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "audit/chain.h"
#include "audit/context.h"
#include "audit/record.h"
#include "common/status.h"
#include "meta/kv_store.h"

namespace strata::audit {

struct LogOptions {
  std::string key;                         // HMAC key of the checkpoints
  uint64_t checkpoint_every = 1000;        // records
  int64_t checkpoint_interval_ns = 10'000'000'000;
  int64_t seal_interval_ns = 200'000'000;  // how often the sealer runs
  size_t queue_limit = 100'000;            // queued request records; more are dropped (counted)
};

class AuditLog {
 public:
  // Finds where the trail ends (after a crash: records past the seal state).
  static Result<std::unique_ptr<AuditLog>> Open(meta::KvStore* inner, LogOptions options);
  ~AuditLog();

  // The store everyone else writes through.
  meta::KvStore* store();

  // A record of its own for a request that made no change record: denied,
  // failed, or had nothing to change. Queued; written by the sealer.
  void RecordRequest(const Actor& actor, Kind kind, std::string_view result, int http_status);

  void Start();  // the sealer thread
  void Stop();   // flushes, seals and checkpoints, then stops the thread
  // Writes the queued records and chains what can be chained; with
  // `checkpoint`, signs the head now (else only when one is due).
  Status Flush(bool checkpoint = false);

  // Sealed stretches leave as documents (audit/export.h): after a checkpoint
  // at least `min_records` past the last export, `interval_ns` after it, or
  // any Flush(checkpoint=true), `exporter(first, last, document)` is called
  // under the sealer; when it succeeds the stretch counts as exported. Null:
  // no exports.
  using Exporter = std::function<Status(uint64_t first, uint64_t last, const std::string& doc)>;
  void SetExporter(Exporter exporter, uint64_t min_records, int64_t interval_ns);
  uint64_t exported_seq();

  VerifyReport Verify();
  const std::string& key() const { return options_.key; }
  meta::KvStore& inner() { return *inner_; }

  struct Stats {
    uint64_t records = 0;  // written since start
    uint64_t dropped = 0;  // request records dropped (queue full)
    uint64_t sealed_seq = 0, next_seq = 0, checkpoint_seq = 0;
    uint64_t failures = 0;  // sealer / queue writes that failed
  };
  Stats stats();

 private:
  class Store;
  AuditLog(meta::KvStore* inner, LogOptions options);
  // Allocates the next seq (marked in flight) and a time that never goes back.
  void Allocate(Record* r);
  void AllocateLocked(Record* r);  // mu_ held
  void Settle(uint64_t seq);  // no longer in flight
  Status Write(const meta::WriteBatch& batch, bool sync);
  void Run();

  meta::KvStore* inner_;
  LogOptions options_;
  std::unique_ptr<Store> store_;

  std::mutex mu_;  // next_, last_time_, in_flight_, queue_
  uint64_t next_ = 1;
  int64_t last_time_ = 0;
  std::set<uint64_t> in_flight_;
  std::vector<Record> queue_;

  std::mutex seal_mu_;  // state_: one sealer at a time
  SealState state_;
  int64_t last_checkpoint_ns_ = 0;
  Exporter exporter_;
  uint64_t export_min_records_ = 0;
  int64_t export_interval_ns_ = 0;
  uint64_t exported_ = 0;
  int64_t last_export_ns_ = 0;
  void MaybeExport(bool force);

  std::atomic<uint64_t> records_{0}, dropped_{0}, failures_{0};
  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace strata::audit

// RestoreObject's worker (docs/tiers.md): a version in a cold pool is read
// only through a temporary copy in the primary (hot) pool. The S3 request
// marks the version (ObjectEngine::RequestRestore: "ongoing") and enqueues it
// here; one background thread makes the copies (CompleteRestore), each one
// readable for its days from when it is made. Restores marked ongoing when
// the server stopped are enqueued again by the lifecycle scanner, which also
// drops copies past their expiry.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>

#include "meta/kv_store.h"
#include "object/engine.h"
#include "tier/classes.h"

namespace strata::tier {

class Restorer {
 public:
  // `kv`: the restore index (meta::RestoreIndexKey) the sweep walks.
  Restorer(object::ObjectEngine* engine, meta::KvStore* kv, const ClassMap* classes,
           int64_t day_ns, int64_t sweep_interval_ns);
  ~Restorer();
  void Start();
  void Stop();
  // A restore of version `stamp` is marked ongoing; make its copy.
  // Duplicates of a queued request are dropped.
  void Enqueue(const std::string& bucket, const std::string& key, uint64_t stamp);
  // Makes the copies queued now, on the calling thread (tests, a stopped worker).
  void Drain();
  // Walks the restore index: re-enqueues ongoing restores (a restart), drops
  // copies past their expiry (and entries of versions that went). The
  // worker runs it every sweep interval. The number of copies dropped.
  Result<uint64_t> Sweep();
  uint64_t completed() const;

 private:
  void RestoreOne(const std::string& bucket, const std::string& key, uint64_t stamp);

  object::ObjectEngine* engine_;
  meta::KvStore* kv_;
  const ClassMap* classes_;
  int64_t day_ns_;
  int64_t sweep_interval_ns_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::tuple<std::string, std::string, uint64_t>> queue_;  // guarded by mu_
  bool stop_ = false;
  uint64_t completed_ = 0;
  std::thread thread_;
};

}  // namespace strata::tier

// Per-bucket usage: how many object versions (delete markers not counted)
// and how many bytes each bucket holds, kept current by the writes
// themselves, never by listing a bucket.
//
// A decorator of the metadata store (like audit/log.h and
// notify/notifier.h): every batch that puts or removes an object version
// gets one delta entry for each bucket it changes ("Sd" bucket '\0'
// BE64(seq) -> signed varints objects, bytes; meta/keys.h), in that very
// batch, so the figures never disagree with what committed, across crashes.
// A put of a version that exists already (tags, ACL, a transition, a
// restore) changes bytes by the size difference and objects not at all. A
// background folder adds the deltas into one total per bucket ("St" bucket)
// and deletes them, in one batch, every fold_interval_ns; Open reads the
// totals and the deltas not yet folded.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "meta/kv_store.h"

namespace strata::object {

struct BucketUsage {
  int64_t objects = 0;  // object versions, delete markers not counted
  int64_t bytes = 0;    // their sizes (plaintext)
  bool operator==(const BucketUsage&) const = default;
};

class UsageCounter {
 public:
  static Result<std::unique_ptr<UsageCounter>> Open(meta::KvStore* inner,
                                                    int64_t fold_interval_ns = 10'000'000'000);
  ~UsageCounter();

  // The store everyone else writes through.
  meta::KvStore* store();
  // Every bucket, by name.
  std::map<std::string, BucketUsage> Snapshot();

  void Start();  // the folder thread
  void Stop();   // folds once more, then stops it
  Status Fold();  // adds the deltas into the totals now

 private:
  class Store;
  UsageCounter(meta::KvStore* inner, int64_t fold_interval_ns);
  void Run();

  meta::KvStore* inner_;
  int64_t fold_interval_ns_;
  std::unique_ptr<Store> store_;
  std::atomic<uint64_t> next_seq_{1};

  std::mutex mu_;  // usage_
  std::map<std::string, BucketUsage> usage_;

  std::mutex fold_mu_;  // one fold at a time
  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace strata::object

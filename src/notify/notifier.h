// Event notifications: a decorator of the metadata store that queues an
// event for every change a bucket's notification configuration asks for,
// in the very batch that makes the change (so no acknowledged change lacks
// its event and no event exists for a change that did not commit), and one
// sender thread per webhook target that delivers the queue at least once.
//
// The decorator reads what a synced batch written under an audit::Actor
// does: an object version it puts (object::ObjectRecord) or removes, and
// the operation that did it (notify/event.h decides the event). Bucket
// record writes passing through keep its cache of the buckets'
// configurations current; it loads them at Open.
//
// Queue: "Nq" target '\0' BE64(seq) -> the event document (meta/keys.h).
// A sender POSTs each entry as application/json (Authorization: Bearer
// TOKEN when the target has one) and deletes it after a 2xx reply; failures
// retry with exponential backoff (retry_initial_ns doubling up to
// retry_max_ns). A target's queue holds at most queue_limit events: more
// are dropped, counted and reported through on_drop. The request path never
// waits for a target.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "meta/kv_store.h"
#include "notify/config.h"
#include "notify/event.h"

namespace strata::notify {

struct Target {
  std::string id;          // ValidTargetId
  std::string url;         // http[s]://HOST[:PORT][/PATH]
  std::string auth_token;  // "" : no Authorization header
  size_t queue_limit = 100'000;
  std::string ca_file;     // https: PEM trust anchors ("" = the system's)
  int timeout_ms = 5000;   // per wait of one delivery
};

struct NotifierOptions {
  std::string region = "us-east-1";
  std::vector<Target> targets;
  int64_t retry_initial_ns = 100'000'000;
  int64_t retry_max_ns = 30'000'000'000;
  // Called after the batch for each event dropped because its target's
  // queue was full (not under any lock of the notifier).
  std::function<void(const std::string& target, const Event& event)> on_drop;
};

class Notifier {
 public:
  static Result<std::unique_ptr<Notifier>> Open(meta::KvStore* inner, NotifierOptions options);
  ~Notifier();

  // The store everyone else writes through.
  meta::KvStore* store();
  bool HasTarget(std::string_view id) const;
  std::vector<std::string> target_ids() const;

  void Start();  // the senders
  void Stop();   // stops them (what is queued stays queued)

  struct TargetStats {
    std::string id;
    uint64_t queued = 0;     // events waiting
    uint64_t delivered = 0;  // since start
    uint64_t failures = 0;   // delivery attempts that failed
    uint64_t dropped = 0;    // events dropped: the queue was full
  };
  std::vector<TargetStats> stats() const;

 private:
  class Store;
  struct Sender;
  struct BucketConfig {
    Configuration config;
    std::string owner;
  };
  Notifier(meta::KvStore* inner, NotifierOptions options);
  std::shared_ptr<const BucketConfig> ConfigOf(const std::string& bucket);
  void Remember(std::string_view bucket, std::optional<std::string_view> record);
  Sender* SenderOf(std::string_view id) const;
  void Run(Sender* s);

  meta::KvStore* inner_;
  NotifierOptions options_;
  std::unique_ptr<Store> store_;
  std::vector<std::unique_ptr<Sender>> senders_;
  std::atomic<uint64_t> next_seq_{1};

  std::mutex config_mu_;  // configs_
  std::unordered_map<std::string, std::shared_ptr<const BucketConfig>> configs_;
  std::atomic<bool> any_config_{false};
};

}  // namespace strata::notify

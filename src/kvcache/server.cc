#include "kvcache/server.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "common/log.h"
#include "kvcache/commit_pool.h"
#include "kvcache/conn_pool.h"

namespace strata::kvcache {

void DeleteBlocks(object::ObjectEngine* engine, Namespace* ns, const std::vector<std::string>& keys,
                  Removal why, uint64_t bytes) {
  if (keys.empty()) return;
  for (const std::string& key : keys) {
    ns->events.Add(proto::EventKind::kRemoved, key);
    Status st = engine->DeleteObject(ns->bucket(), ns->ObjectKey(key));
    // The index already forgot the block; a leftover object is indexed again
    // at the next start-up and evicted then.
    if (!st.ok())
      STRATA_LOG("kv: deleting a block of %s: %s", ns->bucket().c_str(), st.ToString().c_str());
  }
  if (why == Removal::kDeleted) return;
  ns->evictions.fetch_add(keys.size(), std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(ns->evicted_mu);
  EvictedSince& e = why == Removal::kQuota ? ns->evicted_for_quota : ns->evicted_for_ttl;
  e.blocks += keys.size();
  e.bytes += bytes;
}

Result<std::unique_ptr<Server>> Server::Start(object::ObjectEngine* engine,
                                              auth::SecretLookup secrets, ServerOptions options) {
  ASSIGN_OR_RETURN(auto listener, ListenTcp(options.host, options.port));
  if (options.tls) listener = WrapTls(std::move(listener), options.tls);
  return Start(engine, std::move(secrets), std::move(options), std::move(listener));
}

Result<std::unique_ptr<Server>> Server::Start(object::ObjectEngine* engine,
                                              auth::SecretLookup secrets, ServerOptions options,
                                              std::unique_ptr<Listener> listener) {
  if (engine == nullptr || !secrets || listener == nullptr) {
    return InvalidArgument("kv server needs an engine, a secret lookup and a listener");
  }
  if (!options.clock_ns) {
    options.clock_ns = [] {
      return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
    };
  }
  if (!options.thread_factory) {
    options.thread_factory = [](std::function<void()> fn) { return std::thread(std::move(fn)); };
  }
  std::unique_ptr<Server> s(new Server());
  RegistryOptions ro;
  ro.default_quota_bytes = options.default_quota_bytes;
  ro.max_total_bytes = options.max_total_bytes;
  ro.region = options.region;
  s->registry_ = std::make_unique<NamespaceRegistry>(engine, ro);
  RETURN_IF_ERROR(s->registry_->Rebuild().WithContext("kv index rebuild"));
  s->throttle_ = std::make_unique<AuthThrottle>(options.auth_throttle);
  s->ctx_.engine = engine;
  s->ctx_.secrets = std::move(secrets);
  s->ctx_.registry = s->registry_.get();
  s->ctx_.throttle = s->throttle_.get();
  s->ctx_.options = std::move(options);
  s->listener_ = std::move(listener);
  s->commits_ = std::make_unique<CommitPool>(std::max(0, s->ctx_.options.commit_threads));
  s->ctx_.commits = s->commits_.get();  // commits inline until its threads start (last)
  s->pool_ = std::make_unique<ConnectionPool>(&s->ctx_);
  RETURN_IF_ERROR(s->pool_->Start());  // on failure ~Server stops what did start
  const ThreadFactory& make = s->ctx_.options.thread_factory;
  try {
    s->accept_thread_ = make([p = s.get()] { p->AcceptLoop(); });
    s->sweep_thread_ = make([p = s.get()] { p->SweepLoop(); });
  } catch (const std::exception& e) {
    return Unavailable(std::string("kv: cannot start the server's threads: ") + e.what());
  }
  s->commits_->Start(make);
  return s;
}

Server::Server() = default;
Server::~Server() { Stop(); }

ServerStats Server::stats() const { return pool_ ? pool_->stats() : ServerStats{}; }

std::vector<NamespaceStats> Server::namespace_stats() const {
  std::vector<NamespaceStats> out;
  if (!registry_) return out;
  for (Namespace* ns : registry_->All()) {
    NamespaceStats s;
    s.bucket = ns->bucket();
    s.lookups = ns->lookups.load(std::memory_order_relaxed);
    s.hits = ns->hits.load(std::memory_order_relaxed);
    s.misses = ns->misses.load(std::memory_order_relaxed);
    s.bytes_served = ns->bytes_served.load(std::memory_order_relaxed);
    s.bytes_requested = ns->bytes_requested.load(std::memory_order_relaxed);
    s.evictions = ns->evictions.load(std::memory_order_relaxed);
    {
      std::lock_guard lock(ns->mu);
      s.blocks = ns->index.blocks();
      s.bytes = ns->index.bytes();
      s.last_access_ns = ns->index.last_access_ns();
      s.ttl_s = ns->ttl_s;
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<ExpireResult> Server::ExpireNamespace(const std::string& bucket, uint64_t idle_since_ns) {
  if (!registry_) return NotFound("no KV namespaces");
  for (Namespace* ns : registry_->All()) {
    if (ns->bucket() != bucket) continue;
    std::vector<std::string> evicted;
    ExpireResult r;
    {
      std::lock_guard<std::mutex> lock(ns->mu);
      if (ns->index.last_access_ns() > idle_since_ns) {
        return PreconditionFailed("KV namespace " + bucket + " was accessed since");
      }
      const uint64_t before = ns->index.bytes();
      const size_t blocks_before = ns->index.blocks();
      // Every block was last accessed at or before idle_since_ns: all go but
      // the pinned ones (and their ancestors) and those being read.
      ns->index.EvictIdle(idle_since_ns + 1, &evicted);
      r.bytes = before - ns->index.bytes();
      r.blocks = blocks_before - ns->index.blocks();
      r.blocks_left = ns->index.blocks();
    }
    DeleteBlocks(ctx_.engine, ns, evicted, Removal::kTtl, r.bytes);
    return r;
  }
  return NotFound("no KV namespace in bucket " + bucket);
}

void Server::AcceptLoop() {
  while (true) {
    auto c = listener_->Accept();
    if (!c.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stopping_ && c.status().code() != Code::kAborted) {
        STRATA_LOG("kv: accept: %s", c.status().ToString().c_str());
      }
      return;
    }
    pool_->Add(std::move(c).value());
  }
}

void Server::SweepLoop() {
  using Clock = std::chrono::steady_clock;
  const auto summary_every = std::chrono::milliseconds(ctx_.options.eviction_summary_interval_ms);
  auto next_summary = Clock::now() + summary_every;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(ctx_.options.sweep_interval_ms));
    if (stopping_) break;
    lock.unlock();
    Sweep();
    if (Clock::now() >= next_summary) {
      SummarizeEvictions();
      next_summary = Clock::now() + summary_every;
    }
    lock.lock();
  }
}

void Server::SummarizeEvictions() {
  if (!ctx_.options.on_evictions || !registry_) return;
  std::lock_guard<std::mutex> serial(summary_mu_);  // the sweeper's and Stop's never interleave
  for (Namespace* ns : registry_->All()) {
    EvictionSummary s;
    {
      std::lock_guard<std::mutex> lock(ns->evicted_mu);
      s.quota_blocks = std::exchange(ns->evicted_for_quota.blocks, 0);
      s.quota_bytes = std::exchange(ns->evicted_for_quota.bytes, 0);
      s.ttl_blocks = std::exchange(ns->evicted_for_ttl.blocks, 0);
      s.ttl_bytes = std::exchange(ns->evicted_for_ttl.bytes, 0);
    }
    if (s.quota_blocks == 0 && s.ttl_blocks == 0) continue;
    s.bucket = ns->bucket();
    ctx_.options.on_evictions(s);
  }
}

void Server::Sweep() {
  const uint64_t now = ctx_.NowNs();
  for (Namespace* ns : registry_->All()) {
    std::vector<std::string> evicted;
    uint64_t freed = 0;
    {
      std::lock_guard<std::mutex> lock(ns->mu);
      ns->index.ExpirePins(now);
      if (ns->ttl_s != 0) {
        uint64_t ttl_ns = uint64_t{ns->ttl_s} * 1000000000ull;
        const uint64_t before = ns->index.bytes();
        if (now > ttl_ns) ns->index.EvictIdle(now - ttl_ns, &evicted);
        freed = before - ns->index.bytes();
      }
    }
    DeleteBlocks(ctx_.engine, ns, evicted, Removal::kTtl, freed);
  }
}

void Server::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (listener_) listener_->Close();
  if (accept_thread_.joinable()) accept_thread_.join();
  if (sweep_thread_.joinable()) sweep_thread_.join();
  if (pool_) pool_->Stop();
  if (commits_) commits_->Stop();  // the sessions have waited for their commits
  SummarizeEvictions();  // the last interval's, while the audit trail still takes records
}

}  // namespace strata::kvcache

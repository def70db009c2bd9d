#include "kvcache/server.h"

#include <chrono>
#include <exception>

#include "common/log.h"
#include "kvcache/session.h"

namespace strata::kvcache {

void DeleteBlocks(object::ObjectEngine* engine, Namespace* ns, const std::vector<std::string>& keys,
                  bool evicted) {
  for (const std::string& key : keys) {
    Status st = engine->DeleteObject(ns->bucket(), ns->ObjectKey(key));
    // The index already forgot the block; a leftover object is indexed again
    // at the next start-up and evicted then.
    if (!st.ok())
      STRATA_LOG("kv: deleting a block of %s: %s", ns->bucket().c_str(), st.ToString().c_str());
  }
  if (evicted) ns->evictions.fetch_add(keys.size(), std::memory_order_relaxed);
}

Result<std::unique_ptr<Server>> Server::Start(object::ObjectEngine* engine,
                                              auth::SecretLookup secrets, ServerOptions options) {
  ASSIGN_OR_RETURN(auto listener, ListenTcp(options.host, options.port));
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
  std::unique_ptr<Server> s(new Server());
  RegistryOptions ro;
  ro.default_quota_bytes = options.default_quota_bytes;
  ro.region = options.region;
  s->registry_ = std::make_unique<NamespaceRegistry>(engine, ro);
  RETURN_IF_ERROR(s->registry_->Rebuild().WithContext("kv index rebuild"));
  s->ctx_.engine = engine;
  s->ctx_.secrets = std::move(secrets);
  s->ctx_.registry = s->registry_.get();
  s->ctx_.options = std::move(options);
  s->listener_ = std::move(listener);
  s->accept_thread_ = std::thread([p = s.get()] { p->AcceptLoop(); });
  s->sweep_thread_ = std::thread([p = s.get()] { p->SweepLoop(); });
  return s;
}

Server::~Server() { Stop(); }

void Server::AcceptLoop() {
  while (true) {
    auto c = listener_->Accept();
    if (!c.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ || c.status().code() == Code::kAborted) return;
      STRATA_LOG("kv: accept: %s", c.status().ToString().c_str());
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    ReapFinished();
    if (stopping_) return;  // *c closes here
    conns_.emplace_back();
    auto it = std::prev(conns_.end());
    it->conn = std::move(c).value();
    it->thread = std::thread([this, it] {
      try {
        Session session(&ctx_, it->conn.get());
        Status st = session.Run();
        if (!st.ok() && st.code() != Code::kAborted) {
          STRATA_LOG("kv: connection %s: %s", it->conn->peer().c_str(), st.ToString().c_str());
        }
      } catch (const std::exception& e) {
        STRATA_LOG("kv: connection %s: exception: %s", it->conn->peer().c_str(), e.what());
      }
      it->conn->Shutdown();
      std::lock_guard<std::mutex> lock(mu_);
      it->done = true;
    });
  }
}

void Server::ReapFinished() {
  for (auto it = conns_.begin(); it != conns_.end();) {
    if (it->done) {
      it->thread.join();
      it = conns_.erase(it);
    } else {
      ++it;
    }
  }
}

void Server::SweepLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, std::chrono::milliseconds(ctx_.options.sweep_interval_ms));
    if (stopping_) break;
    lock.unlock();
    Sweep();
    lock.lock();
  }
}

void Server::Sweep() {
  const uint64_t now = ctx_.NowNs();
  for (Namespace* ns : registry_->All()) {
    std::vector<std::string> evicted;
    {
      std::lock_guard<std::mutex> lock(ns->mu);
      ns->index.ExpirePins(now);
      if (ns->ttl_s != 0) {
        uint64_t ttl_ns = uint64_t{ns->ttl_s} * 1000000000ull;
        if (now > ttl_ns) ns->index.EvictIdle(now - ttl_ns, &evicted);
      }
    }
    DeleteBlocks(ctx_.engine, ns, evicted, /*evicted=*/true);
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
  std::list<Conn> conns;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Conn& c : conns_) c.conn->Shutdown();
    conns.splice(conns.begin(), conns_);
  }
  for (Conn& c : conns) c.thread.join();
}

}  // namespace strata::kvcache

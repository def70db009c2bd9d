// The KV-cache server: its own listener beside S3, speaking the protocol of
// docs/formats/kv-protocol.md over a Transport, storing blocks as ordinary
// objects through the object engine.
//
// Threads: one accepting, one per connection (requests on a connection are
// handled in order, so pipelined replies come back in order), one sweeper
// (TTL expiry and pin expiry, every sweep_interval_ms).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "auth/sigv4.h"
#include "common/status.h"
#include "kvcache/namespace_registry.h"
#include "kvcache/transport.h"
#include "object/engine.h"

namespace strata::kvcache {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 9100;              // 0: an ephemeral port (see Server::port)
  uint64_t default_quota_bytes = 0;  // per namespace; 0: unlimited (bounded by the disk)
  std::string region = "us-east-1";
  uint32_t sweep_interval_ms = 1000;
  // Bytes moved per read/write step of a block (bounds memory per connection).
  size_t io_chunk_bytes = 1 << 20;
  // Wall-clock nanoseconds (recency, TTL, pins); tests inject their own.
  std::function<uint64_t()> clock_ns;
};

// What every connection shares.
struct ServerContext {
  object::ObjectEngine* engine = nullptr;
  auth::SecretLookup secrets;
  NamespaceRegistry* registry = nullptr;
  ServerOptions options;
  uint64_t NowNs() const { return options.clock_ns(); }
};

class Server {
 public:
  // Rebuilds the index from the kv-* buckets, then listens on TCP host:port.
  static Result<std::unique_ptr<Server>> Start(object::ObjectEngine* engine,
                                               auth::SecretLookup secrets, ServerOptions options);
  // The same over a listener made elsewhere (another transport).
  static Result<std::unique_ptr<Server>> Start(object::ObjectEngine* engine,
                                               auth::SecretLookup secrets, ServerOptions options,
                                               std::unique_ptr<Listener> listener);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const { return listener_->port(); }
  // Closes the listener and every connection and joins the threads. Idempotent.
  void Stop();
  // Runs one sweep now (tests).
  void Sweep();

 private:
  struct Conn {
    std::unique_ptr<Connection> conn;
    std::thread thread;
    bool done = false;
  };
  Server() = default;
  void AcceptLoop();
  void SweepLoop();
  void ReapFinished();  // joins finished connection threads; mu_ held

  std::unique_ptr<NamespaceRegistry> registry_;
  ServerContext ctx_;
  std::unique_ptr<Listener> listener_;
  std::thread accept_thread_, sweep_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::list<Conn> conns_;
};

// Deletes evicted blocks' objects (after the index dropped them) and counts them.
void DeleteBlocks(object::ObjectEngine* engine, Namespace* ns, const std::vector<std::string>& keys,
                  bool evicted);

}  // namespace strata::kvcache

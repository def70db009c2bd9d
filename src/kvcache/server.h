// The KV-cache server: its own listener beside S3, speaking the protocol of
// docs/formats/kv-protocol.md over a Transport, storing blocks as ordinary
// objects through the object engine.
//
// Threads, a fixed number whatever the connections: one accepting,
// worker_threads waiting on the epoll set of parked connections and serving
// the readable ones, one reaper closing connections past their deadlines
// (conn_pool.h; requests on a connection are handled in order, so pipelined
// replies come back in order), one sweeper (TTL expiry and pin expiry, every
// sweep_interval_ms; also the eviction summaries, see ServerOptions::on_evictions).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "auth/credentials.h"
#include "common/status.h"
#include "kvcache/auth_throttle.h"
#include "kvcache/namespace_registry.h"
#include "kvcache/transport.h"
#include "object/engine.h"

namespace strata::kms {
class KeyService;
}  // namespace strata::kms

namespace strata::energy {
class Meter;
}

namespace strata::kvcache {

class CommitPool;
class ConnectionPool;

// Makes a thread running fn; may throw (std::system_error) like std::thread.
using ThreadFactory = std::function<std::thread(std::function<void()>)>;

struct NamespaceRights {
  bool read = true;   // LOOKUP, LOOKUP_EACH, GET, EVENTS, STATS
  bool write = true;  // PUT, DELETE, PIN, UNPIN
  bool admin = true;  // quota and TTL in OPEN_NAMESPACE
  bool any() const { return read || write || admin; }
};

// What eviction removed from one namespace since its last summary.
struct EvictionSummary {
  std::string bucket;                          // the namespace's bucket
  uint64_t quota_blocks = 0, quota_bytes = 0;  // to make room for PUTs under the quota
  uint64_t ttl_blocks = 0, ttl_bytes = 0;      // idle past the namespace's TTL
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7450;              // 0: an ephemeral port (see Server::port)
  uint64_t default_quota_bytes = 0;  // per namespace; 0: unlimited (bounded by the cap below)
  uint64_t max_total_bytes = 0;      // all namespaces together; 0: no cap (see RegistryOptions)
  std::string region = "us-east-1";
  uint32_t sweep_interval_ms = 1000;
  // Bytes moved per read/write step of a block (bounds memory per connection).
  size_t io_chunk_bytes = 1 << 20;
  // Whole-block GETs of file-backed blocks with a CRC go out by sendfile (the
  // client verifies the CRC); false: every block through the checked reader.
  bool zero_copy = true;
  // Set: each operation's thread CPU time and bytes go to its namespace's
  // energy figures (energy/meter.h).
  energy::Meter* energy = nullptr;
  // Wall-clock nanoseconds (recency, TTL, pins, AUTH back-off); tests inject their own.
  std::function<uint64_t()> clock_ns;

  // Connections (docs/formats/kv-protocol.md, "Connections").
  int worker_threads = 32;
  // Threads making PUT blocks durable while their sessions read the next
  // block (commit_pool.h); 0: each block is committed before the next is read.
  int commit_threads = 8;
  size_t max_connections = 4096;             // beyond: accepted and closed at once
  size_t max_connections_per_address = 512;  // from one source address
  uint32_t auth_timeout_ms = 10'000;         // accept to a successful AUTH
  uint32_t idle_timeout_ms = 300'000;        // authenticated, no frame; 0: none
  uint32_t stall_timeout_ms = 30'000;        // mid-frame read/write making no progress
  // Failed AUTHs a connection may make; the last one closes it.
  uint32_t auth_failures_per_connection = 3;
  AuthThrottleOptions auth_throttle;  // per source address
  // Operators (the root identity): may open any identity's namespace and set
  // its quota and TTL. Null: nobody.
  std::function<bool(std::string_view access_key)> is_operator;
  // What an identity, connected from `peer_address`, may do in the namespace
  // whose bucket is `bucket` (strata:KvRead / KvWrite / KvAdmin by policy,
  // auth/authorizer.h; the address is aws:SourceIp),
  // decided once per OPEN_NAMESPACE. Set: it replaces the owner rule (a
  // policy may share a namespace), an identity with no right is DENIED before
  // anything is created, and quota / TTL need admin. Null: every right for the
  // namespace's owner and the operators, nobody else.
  std::function<NamespaceRights(std::string_view access_key, const std::string& bucket,
                                const std::string& peer_address)>
      namespace_rights;
  // Set: the TCP listener speaks TLS only (kvcache/tls_transport.cc; the
  // handshake runs in the connection's first turns, under the auth deadline).
  std::shared_ptr<TlsContext> tls;
  // Creates every thread of the server (tests inject failures). Null: std::thread.
  ThreadFactory thread_factory;
  // Set: every eviction_summary_interval_ms, and once more at Stop, called
  // (on the sweeper's thread) with one summary per namespace that evicted
  // blocks since its last one: the audit trail's KvEviction records, a few
  // per interval however many blocks go. Null: evictions are only counted.
  std::function<void(const EvictionSummary&)> on_evictions;
  uint32_t eviction_summary_interval_ms = 60'000;
  // The key service. A namespace opts into encryption at rest through its
  // bucket's default encryption (PutBucketEncryption on kv-<id>: SSE-S3 or
  // SSE-KMS): its blocks are then stored as encrypted objects, each with its
  // own data key (docs/formats/kv-protocol.md "Encrypted namespaces"). Null: PUTs into
  // such a namespace, and GETs of encrypted blocks, get UNAVAILABLE.
  kms::KeyService* kms = nullptr;
};


// What every connection shares.
struct ServerContext {
  object::ObjectEngine* engine = nullptr;
  auth::SecretLookup secrets;
  NamespaceRegistry* registry = nullptr;
  AuthThrottle* throttle = nullptr;
  CommitPool* commits = nullptr;
  ServerOptions options;
  uint64_t NowNs() const { return options.clock_ns(); }
  bool IsOperator(std::string_view access_key) const {
    return options.is_operator && options.is_operator(access_key);
  }
};

struct ServerStats {
  size_t connections = 0;          // open now
  size_t parked = 0;               // of which idle in the poll set
  size_t parked_buffer_bytes = 0;  // buffers the parked ones hold (a partial pre-auth frame's)
  int workers = 0;                 // worker threads running
  uint64_t refused = 0;            // over a connection cap, since start
  uint64_t auth_timeouts = 0, idle_timeouts = 0;  // closed by the deadlines, since start
};

// One namespace's counters since start-up and what it holds now.
struct NamespaceStats {
  std::string bucket;  // "kv-<16 hex>": the namespace's bucket, its stable name
  uint64_t lookups = 0, hits = 0, misses = 0, bytes_served = 0, bytes_requested = 0,
           evictions = 0;
  uint64_t blocks = 0, bytes = 0;
  uint64_t last_access_ns = 0;  // BlockIndex::last_access_ns
  uint32_t ttl_s = 0;           // the owner's TTL (0: none, or not opened since start-up)
};

// What Server::ExpireNamespace removed.
struct ExpireResult {
  uint64_t blocks = 0, bytes = 0;
  uint64_t blocks_left = 0;  // pinned or being read: they stay
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
  // Reports the evictions since the last summaries to on_evictions now (tests; Stop).
  void SummarizeEvictions();
  ServerStats stats() const;
  std::vector<NamespaceStats> namespace_stats() const;
  // Removes every block of the namespace whose bucket is `bucket` (pinned
  // blocks and blocks being read stay) — if it has not been accessed after
  // `idle_since_ns`: PreconditionFailed when it has (the evidence for
  // expiring it no longer holds), NotFound for an unknown bucket. The blocks
  // count as TTL evictions (events, counters, the next eviction summary).
  Result<ExpireResult> ExpireNamespace(const std::string& bucket, uint64_t idle_since_ns);

 private:
  Server();
  void AcceptLoop();
  void SweepLoop();

  std::unique_ptr<NamespaceRegistry> registry_;
  std::unique_ptr<AuthThrottle> throttle_;
  ServerContext ctx_;
  std::unique_ptr<Listener> listener_;
  std::unique_ptr<CommitPool> commits_;  // stopped after the sessions that use it
  std::unique_ptr<ConnectionPool> pool_;
  std::thread accept_thread_, sweep_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::mutex summary_mu_;
};

// Why blocks leave the index.
enum class Removal { kDeleted, kQuota, kTtl };  // a client's DELETE; evicted for room; expired
// Deletes the objects of blocks the index dropped (`bytes` of them together)
// and counts evicted ones in the namespace's counters and pending summary.
void DeleteBlocks(object::ObjectEngine* engine, Namespace* ns, const std::vector<std::string>& keys,
                  Removal why, uint64_t bytes);

}  // namespace strata::kvcache

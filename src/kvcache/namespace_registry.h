// KV namespaces: descriptor -> digest -> one bucket of ordinary objects.
//
// A namespace's blocks are objects "<64 hex digest>/<hex key>" in the bucket
// "kv-<first 16 hex of the digest>" (created through the object engine on
// first open, owned by the identity that opened it). Each block's chain parent
// is kept in its user metadata (x-amz-meta-kv-parent: hex key), so the index
// rebuilt at start-up from a listing of the kv-* buckets keeps the chains.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "kvcache/block_index.h"
#include "kvcache/event_log.h"
#include "kvcache/proto/frame.h"
#include "object/engine.h"

namespace strata::kvcache {

// The user-metadata name (without x-amz-meta-) of a block's parent key (hex).
inline constexpr std::string_view kParentMetadata = "kv-parent";
// ... and of its per-block metadata (base64), when the writer gave some.
inline constexpr std::string_view kBlockMetadata = "kv-meta";
// The object holding a namespace's manifest: "<64 hex digest>.manifest" (not a
// block name: those have a '/' after the digest).
inline constexpr std::string_view kManifestSuffix = ".manifest";

// Blocks (and their bytes) evicted over some stretch of time.
struct EvictedSince {
  uint64_t blocks = 0, bytes = 0;
};

class Namespace {
 public:
  Namespace(const Sha256Digest& digest, std::string owner, uint64_t hash_seed);

  const Sha256Digest& digest() const { return digest_; }
  const std::string& bucket() const { return bucket_; }
  const std::string& owner() const { return owner_; }
  // The S3 key of a block.
  std::string ObjectKey(std::string_view key) const;
  std::string ManifestKey() const { return digest_hex_ + std::string(kManifestSuffix); }

  std::mutex mu;
  // Guarded by mu:
  BlockIndex index;
  uint64_t block_bytes = 0;     // 0: any length (not yet opened since start-up)
  // The settings: the owner's (or an operator's), see NamespaceRegistry::Open.
  uint64_t quota_bytes = 0;     // 0: no limit
  uint32_t ttl_s = 0;           // idle time after which blocks expire; 0: never
  bool settings_set = false;    // by an open since start-up (they are not stored)
  uint64_t reserved_bytes = 0;  // PUTs admitted under the quota but not yet committed

  // Block events for routers (its own lock).
  EventLog events;

  // Evicted since the last eviction summary (server.h, on_evictions).
  std::mutex evicted_mu;
  EvictedSince evicted_for_quota, evicted_for_ttl;  // guarded by evicted_mu

  // Counters (no lock).
  std::atomic<uint64_t> hits{0}, misses{0}, bytes_served{0}, bytes_requested{0}, evictions{0},
      lookups{0}, lookup_keys{0}, lookup_ns{0};

 private:
  Sha256Digest digest_;
  std::string digest_hex_;
  std::string bucket_;
  std::string owner_;
};

// The CRC32C a block object records (its FULL_OBJECT additional checksum,
// big-endian as S3 spells it); none for an object written otherwise.
std::optional<uint32_t> BlockCrc32c(const object::ObjectRecord& rec);

struct RegistryOptions {
  uint64_t default_quota_bytes = 0;  // per namespace when the descriptor says 0; 0: none
  // All namespaces together (blocks stored plus PUTs admitted); 0: no cap.
  // A PUT that would pass it is refused TOO_LARGE: the KV tier shares the
  // disk with S3 data and must never fill it.
  uint64_t max_total_bytes = 0;
  std::string region = "us-east-1";
};

class NamespaceRegistry {
 public:
  NamespaceRegistry(object::ObjectEngine* engine, RegistryOptions options);

  // Start-up: indexes every block found in the kv-* buckets.
  Status Rebuild();
  // Opens (creating its bucket if missing) the namespace of `d` for
  // `identity`; PermissionDenied when the bucket belongs to another identity
  // and `is_operator` is false.
  // Quota and TTL are the namespace's settings and belong to its owner: the
  // first open since start-up sets them (0: the default quota, no TTL); a
  // later one replaces each that it gives as non-zero and keeps the others.
  // Only the owner or an operator gets that far.
  Result<Namespace*> Open(const proto::NamespaceDescriptor& d, const std::string& identity,
                          bool is_operator);
  // The manifest stored with the namespace: the first one offered is written
  // (put-if-absent: of two racing first openers one wins); later opens get
  // the stored one back to compare. Empty if none was ever offered.
  Result<std::string> Manifest(Namespace* ns, std::string_view offered);
  // Every namespace known (opened or rebuilt); they live as long as the registry.
  std::vector<Namespace*> All();

  // The global cap: reserves `n` bytes for a PUT if the tier stays within
  // max_total_bytes (always, without a cap); Release gives them back.
  bool ReserveTotal(uint64_t n);
  void ReleaseTotal(uint64_t n) { reserved_total_.fetch_sub(n, std::memory_order_relaxed); }
  uint64_t total_bytes() const { return stored_total_.load(std::memory_order_relaxed); }

 private:
  Namespace* GetOrAdd(const Sha256Digest& digest, const std::string& owner);
  Result<std::string> ReadManifest(Namespace* ns);  // "" if none

  object::ObjectEngine* engine_;
  RegistryOptions options_;
  std::mutex mu_;
  std::map<Sha256Digest, std::unique_ptr<Namespace>> by_digest_;
  std::atomic<uint64_t> stored_total_{0};    // every index's bytes(), kept by the indexes
  std::atomic<uint64_t> reserved_total_{0};  // PUTs admitted, not yet committed or dropped
  std::mutex manifest_mu_;  // serializes manifest reads and writes (rare: opens)
  std::map<Namespace*, std::string> manifests_;  // known (read or written) manifests
};

}  // namespace strata::kvcache

// Access statistics per bucket and key prefix (docs/advisor.md): how often
// and how much each prefix is read, when it was last read, and on which of
// the last kDays days — what the advisor's recommendations cite as evidence.
//
// - Sampled: one read in `sample_every` is recorded, weighted by that number
//   (a thread-local countdown: no shared state is touched by the others).
// - Bounded: at most `max_prefixes` prefixes; past that the least-read
//   eighth of a shard is dropped at once (amortised O(log n) per new prefix),
//   and dropped() counts them.
// - Decaying: `reads` and `bytes_read` halve every `half_life_days`; the
//   per-day counts keep the last kDays days exactly.
// - Persisted: Serialize()/Restore() (the advisor keeps the bytes in
//   metadata, meta::AdvisorStatsKey(), and restores them at start-up).
// A "day" is `day_ns` long (the lifecycle day: tests shorten it).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace strata::advisor {

inline constexpr int kDays = 32;

struct StatsOptions {
  int prefix_depth = 2;        // "ckpt/2026-10/shard-3" -> "ckpt/2026-10/"
  size_t max_prefixes = 10000;
  uint32_t sample_every = 1;   // 1: every read
  int64_t day_ns = 86400ll * 1'000'000'000;
  double half_life_days = 7;
};

// The prefix a key is counted under: the key up to and including its
// `depth`-th '/' (fewer: up to its last '/'; none: "", the bucket's top).
std::string PrefixOf(std::string_view key, int depth);
std::string_view PrefixView(std::string_view key, int depth);  // the same, in `key`

struct PrefixStats {
  std::string bucket, prefix;
  double reads = 0;        // decayed to `as_of_ns`
  double bytes_read = 0;   // decayed likewise
  uint64_t total_reads = 0;  // not decayed, since first seen (an estimate when sampled)
  uint64_t total_bytes = 0;
  int64_t first_read_ns = 0, last_read_ns = 0;
  int64_t as_of_ns = 0;    // when the decayed figures were last brought up to date
  int64_t last_day = 0;    // the day index of the newest per-day slot
  std::array<uint32_t, kDays> day_reads{};  // ring: day d at [d % kDays], d in (last_day-kDays, last_day]

  // Reads on day `day` (0 outside the ring).
  uint64_t ReadsOnDay(int64_t day) const;
  // Reads in the `window` days ending with `today`, and on how many of them
  // there were any.
  uint64_t ReadsInWindow(int64_t today, int window) const;
  int ActiveDays(int64_t today, int window) const;
};

class AccessStats {
 public:
  explicit AccessStats(StatsOptions options);
  AccessStats(const AccessStats&) = delete;
  AccessStats& operator=(const AccessStats&) = delete;

  // A GET or HEAD of `key` that sent `bytes`, at `now_ns` (Unix ns).
  void RecordRead(std::string_view bucket, std::string_view key, uint64_t bytes, int64_t now_ns);

  // Every prefix, its decayed figures brought to `now_ns`, sorted by bucket, prefix.
  std::vector<PrefixStats> Snapshot(int64_t now_ns) const;
  size_t size() const;
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t recorded() const { return recorded_.load(std::memory_order_relaxed); }
  int64_t DayOf(int64_t ns) const { return ns / options_.day_ns; }
  const StatsOptions& options() const { return options_; }

  // JSON; Restore replaces what is held (InvalidArgument on a bad document:
  // the caller starts empty and says so).
  std::string Serialize() const;
  Status Restore(std::string_view bytes);

 private:
  static constexpr size_t kShards = 16;
  struct IdHash {
    using is_transparent = void;
    size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
  };
  struct Shard {
    mutable std::mutex mu;
    // bucket '\0' prefix; looked up by string_view (no allocation per read)
    std::unordered_map<std::string, PrefixStats, IdHash, std::equal_to<>> map;
  };
  // Brings the decaying figures to now_ns. `coarse` (the read path): not if
  // less than 1/1024 of a day passed since they were (an exp2 per read is
  // most of what counting costs; the error is below 0.01 %).
  void Decay(PrefixStats& s, int64_t now_ns, bool coarse = false) const;
  void Add(PrefixStats& s, double weight, uint64_t bytes, int64_t now_ns) const;
  void Trim(Shard& shard, int64_t now_ns);  // shard.mu held

  StatsOptions options_;
  size_t per_shard_;
  std::unique_ptr<Shard[]> shards_;
  std::atomic<uint64_t> dropped_{0}, recorded_{0};
};

}  // namespace strata::advisor

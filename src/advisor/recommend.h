// Recommendations (docs/advisor.md): pure functions from what a prefix holds
// (inventory.h) and how it is read (access_stats.h) to the tier moves worth
// making, each with its evidence, its modelled effect and the exact action.
//
//   colder  a prefix not read (and not written) for `cold_days` moves one
//           media step down: gpu-direct -> hot, hot -> warm; warm -> cold
//           only after `archive_days` (cold data needs a restore to be read).
//   hotter  a prefix on warm media read at least `hot_reads_per_day` on each
//           of at least `hot_min_active_days` days of the window, and read
//           `hot_min_rereads` times per object (a one-off scan reads each
//           object once, on one day: it never qualifies), moves to hot.
// A move needs the target class to live in a pool of the target media that
// is not the source pool (one pool for everything: nothing to recommend).
//   expire  a KV-cache namespace not accessed (no block stored or read) for
//           `kv_idle_days` is expired: its blocks are removed (pinned ones
//           stay). The policy names it as the move "kv->expire".
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "advisor/access_stats.h"
#include "advisor/inventory.h"
#include "common/status.h"
#include "tier/classes.h"

namespace strata::advisor {

struct Thresholds {
  int window_days = 30;  // at most kDays
  int cold_days = 30;
  int archive_days = 180;
  uint64_t min_bytes = 1ull << 20;  // smaller prefixes are not worth a move
  double hot_reads_per_day = 1000;
  int hot_min_active_days = 3;
  double hot_min_rereads = 2;
  int kv_idle_days = 7;
};

// What the advisor sees of one KV-cache namespace (kvcache::Server's
// namespace stats; the server wires it in, the advisor does not depend on
// the KV tier).
struct KvNamespaceFacts {
  std::string bucket;  // "kv-<16 hex>": the namespace's stable name
  uint64_t blocks = 0, bytes = 0;
  int64_t last_access_ns = 0;  // newest block stored or read (writes only, after a restart)
  uint64_t lookups = 0, hits = 0, misses = 0;  // since start-up
  uint32_t ttl_s = 0;                           // the owner's TTL, 0: none
  std::string pool;                             // where its blocks are ("" = the first)
};
// The "kv->expire" move.
inline constexpr std::string_view kKvExpireMove = "kv->expire";

// The model behind the expected effect (shown with every recommendation).
struct MediaCost {
  double watts_per_tib = 0;       // drive power per TiB stored
  double cost_per_tib_month = 0;  // amortised hardware, power and space
};
struct Coefficients {
  // By tier::Media: gpu-direct, hot, warm, cold.
  std::array<MediaCost, 4> media = {{{2.0, 120}, {1.2, 60}, {0.4, 15}, {0.1, 4}}};
  std::string currency = "USD";
  const MediaCost& of(tier::Media m) const { return media[static_cast<size_t>(m)]; }
};

struct Recommendation {
  std::string id;    // 16 hex: the same situation always gets the same id
  std::string kind;  // "colder" | "hotter" | "expire"
  std::string bucket, prefix;
  std::string from_media, to_media;       // tier::MediaName
  std::vector<std::string> from_classes;  // the storage classes moved
  std::string from_pool, to_pool, to_class;
  std::string summary;

  // Evidence (as of `created_ns`/`updated_ns`).
  int window_days = 0;
  uint64_t reads_in_window = 0;
  int active_days = 0;
  double reads_per_active_day = 0;
  double rereads_per_object = 0;
  int64_t last_read_ns = 0;  // 0: no read recorded
  double idle_days = 0;      // since the last read or write, whichever is later
  uint64_t objects = 0, bytes = 0;  // all of the prefix
  std::vector<uint64_t> daily_reads;  // the window, oldest day first
  std::vector<uint64_t> size_hist, age_hist;
  std::map<std::string, ClassTotals> by_class;
  // expire: the namespace's counters since start-up and its TTL.
  uint64_t kv_lookups = 0, kv_hits = 0, kv_misses = 0;
  uint32_t kv_ttl_s = 0;

  // Expected effect.
  uint64_t objects_to_move = 0, bytes_to_move = 0;
  std::map<std::string, int64_t> capacity_change;  // pool -> bytes (negative: freed)
  double watts_before = 0, watts_after = 0;
  double cost_month_before = 0, cost_month_after = 0;

  // The action: a one-off move now, and for colder moves the lifecycle rule
  // that would keep doing it (an XML <Rule>).
  std::string action;
  std::string lifecycle_rule;

  // Lifecycle of the recommendation itself.
  std::string state = "pending";  // pending approved executing waiting done rejected failed expired
  int64_t created_ns = 0, updated_ns = 0, decided_ns = 0, finished_ns = 0;
  std::string decided_by, reason, waiting;
  uint64_t moved_objects = 0, moved_bytes = 0, skipped = 0, locked = 0, failed = 0;
  std::string resume_after;  // the executor's place in the prefix
};

std::string RecommendationJson(const Recommendation& r, const Coefficients* model = nullptr);
Result<Recommendation> ParseRecommendation(std::string_view json);

// The recommendations for `inventory` given `stats` (any order; matched by
// bucket and prefix), as of `now_ns`.
std::vector<Recommendation> Recommend(const std::vector<PrefixInventory>& inventory,
                                      const std::vector<PrefixStats>& stats,
                                      const tier::ClassMap& classes, const Thresholds& t,
                                      const Coefficients& model, int64_t now_ns, int64_t day_ns);

// The "expire" recommendations for KV namespaces idle `t.kv_idle_days` or
// more (empty ones are skipped). `media_of_pool` gives the media of a pool
// for the modelled power and cost freed.
std::vector<Recommendation> RecommendKv(const std::vector<KvNamespaceFacts>& namespaces,
                                        const tier::ClassMap& classes, const Thresholds& t,
                                        const Coefficients& model, int64_t now_ns, int64_t day_ns);

// "3.1 TiB", "512 B".
std::string HumanBytes(double bytes);

}  // namespace strata::advisor

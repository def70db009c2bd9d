// What each bucket and key prefix holds (docs/advisor.md): objects and bytes
// per storage class, object size and age histograms — the other half of a
// recommendation's evidence. Taken by walking the latest versions of every
// bucket through ObjectEngine::ListObjects, a page at a time (the advisor's
// pass; never on a request path).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "object/engine.h"

namespace strata::advisor {

// Size buckets: < 64 KiB, < 1 MiB, < 16 MiB, < 256 MiB, < 4 GiB, >= 4 GiB.
inline constexpr int kSizeBuckets = 6;
// Age buckets in days: < 1, < 7, < 30, < 90, < 365, >= 365.
inline constexpr int kAgeBuckets = 6;
const std::array<const char*, kSizeBuckets>& SizeBucketNames();
const std::array<const char*, kAgeBuckets>& AgeBucketNames();
int SizeBucket(uint64_t bytes);
int AgeBucket(double days);

struct ClassTotals {
  uint64_t objects = 0, bytes = 0;
};

struct PrefixInventory {
  std::string bucket, prefix;
  uint64_t objects = 0, bytes = 0;
  std::map<std::string, ClassTotals> by_class;  // "STANDARD" for records naming none
  std::array<uint64_t, kSizeBuckets> size_hist{};
  std::array<uint64_t, kAgeBuckets> age_hist{};
  int64_t newest_mtime_ns = 0, oldest_mtime_ns = 0;
};

struct InventoryOptions {
  int prefix_depth = 2;
  size_t max_prefixes = 100000;  // past it, further prefixes are left out (truncated)
  int page = 1000;
  int64_t day_ns = 86400ll * 1'000'000'000;
};

struct Inventory {
  std::vector<PrefixInventory> prefixes;  // sorted by bucket, prefix
  uint64_t objects = 0;                   // every latest version seen
  bool truncated = false;                 // max_prefixes was reached
};

// Adds one object (its latest version) to `inv` (as TakeInventory does).
void AddToInventory(PrefixInventory& inv, const object::ObjectRecord& rec, int64_t now_ns,
                    int64_t day_ns);

Result<Inventory> TakeInventory(object::ObjectEngine& engine, const InventoryOptions& options,
                                int64_t now_ns);

}  // namespace strata::advisor

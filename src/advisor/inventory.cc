#include "advisor/inventory.h"

#include <algorithm>

#include "advisor/access_stats.h"

namespace strata::advisor {

const std::array<const char*, kSizeBuckets>& SizeBucketNames() {
  static const std::array<const char*, kSizeBuckets> names = {
      "<64KiB", "64KiB-1MiB", "1-16MiB", "16-256MiB", "256MiB-4GiB", ">=4GiB"};
  return names;
}

const std::array<const char*, kAgeBuckets>& AgeBucketNames() {
  static const std::array<const char*, kAgeBuckets> names = {"<1d",   "1-7d",    "7-30d",
                                                             "30-90d", "90-365d", ">=365d"};
  return names;
}

int SizeBucket(uint64_t bytes) {
  static constexpr uint64_t kLimits[] = {64ull << 10, 1ull << 20, 16ull << 20, 256ull << 20,
                                         4ull << 30};
  for (int i = 0; i < kSizeBuckets - 1; ++i) {
    if (bytes < kLimits[i]) return i;
  }
  return kSizeBuckets - 1;
}

int AgeBucket(double days) {
  static constexpr double kLimits[] = {1, 7, 30, 90, 365};
  for (int i = 0; i < kAgeBuckets - 1; ++i) {
    if (days < kLimits[i]) return i;
  }
  return kAgeBuckets - 1;
}

void AddToInventory(PrefixInventory& inv, const object::ObjectRecord& rec, int64_t now_ns,
                    int64_t day_ns) {
  ++inv.objects;
  inv.bytes += rec.size_bytes;
  ClassTotals& c = inv.by_class[rec.storage_class.empty() ? "STANDARD" : rec.storage_class];
  ++c.objects;
  c.bytes += rec.size_bytes;
  ++inv.size_hist[static_cast<size_t>(SizeBucket(rec.size_bytes))];
  const double age_days =
      std::max<double>(0, static_cast<double>(now_ns - rec.mtime_ns) / static_cast<double>(day_ns));
  ++inv.age_hist[static_cast<size_t>(AgeBucket(age_days))];
  inv.newest_mtime_ns = std::max(inv.newest_mtime_ns, rec.mtime_ns);
  if (inv.oldest_mtime_ns == 0 || rec.mtime_ns < inv.oldest_mtime_ns) {
    inv.oldest_mtime_ns = rec.mtime_ns;
  }
}

Result<Inventory> TakeInventory(object::ObjectEngine& engine, const InventoryOptions& options,
                                int64_t now_ns) {
  auto buckets = engine.ListBuckets();
  if (!buckets.ok()) return buckets.status();
  Inventory out;
  for (const auto& [bucket, record] : *buckets) {
    std::map<std::string, PrefixInventory> by_prefix;
    object::ListParams p;
    p.max_keys = options.page;
    while (true) {
      auto page = engine.ListObjects(bucket, p);
      if (!page.ok()) {
        if (page.status().code() == Code::kNotFound) break;  // deleted meanwhile
        return page.status();
      }
      for (const object::ListEntry& e : page->objects) {
        ++out.objects;
        std::string prefix = PrefixOf(e.key, options.prefix_depth);
        auto it = by_prefix.find(prefix);
        if (it == by_prefix.end()) {
          if (out.prefixes.size() + by_prefix.size() >= options.max_prefixes) {
            out.truncated = true;
            continue;
          }
          PrefixInventory fresh;
          fresh.bucket = bucket;
          fresh.prefix = prefix;
          it = by_prefix.emplace(std::move(prefix), std::move(fresh)).first;
        }
        AddToInventory(it->second, e.record, now_ns, options.day_ns);
      }
      if (!page->is_truncated || page->last_emitted.empty()) break;
      p.start_after = page->last_emitted;
    }
    for (auto& [prefix, inv] : by_prefix) out.prefixes.push_back(std::move(inv));
  }
  std::sort(out.prefixes.begin(), out.prefixes.end(),
            [](const PrefixInventory& a, const PrefixInventory& b) {
              return std::tie(a.bucket, a.prefix) < std::tie(b.bucket, b.prefix);
            });
  return out;
}

}  // namespace strata::advisor

#include "tier/classes.h"

#include <algorithm>

namespace strata::tier {
namespace {

// Each class and the media of its default pool.
constexpr std::pair<std::string_view, Media> kClasses[] = {
    {"STANDARD", Media::kHot},           {"REDUCED_REDUNDANCY", Media::kHot},
    {"INTELLIGENT_TIERING", Media::kHot}, {"EXPRESS_ONEZONE", Media::kGpuDirect},
    {"STANDARD_IA", Media::kWarm},       {"ONEZONE_IA", Media::kWarm},
    {"GLACIER_IR", Media::kWarm},        {"GLACIER", Media::kCold},
    {"DEEP_ARCHIVE", Media::kCold},
};

}  // namespace

std::optional<Media> ParseMedia(std::string_view name) {
  if (name == "gpu-direct") return Media::kGpuDirect;
  if (name == "hot") return Media::kHot;
  if (name == "warm") return Media::kWarm;
  if (name == "cold") return Media::kCold;
  return std::nullopt;
}

std::string_view MediaName(Media m) {
  switch (m) {
    case Media::kGpuDirect: return "gpu-direct";
    case Media::kHot: return "hot";
    case Media::kWarm: return "warm";
    case Media::kCold: return "cold";
  }
  return "hot";
}

const std::vector<std::string_view>& StorageClasses() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const auto& [name, media] : kClasses) v.push_back(name);
    return v;
  }();
  return names;
}

bool IsStorageClass(std::string_view name) {
  const auto& all = StorageClasses();
  return std::find(all.begin(), all.end(), name) != all.end();
}

ClassMap::ClassMap() : pools_{{"", Media::kHot}} {
  for (const auto& [name, media] : kClasses) class_pool_.emplace_back(name, "");
}

Result<ClassMap> ClassMap::Make(
    std::vector<PoolSpec> pools, const std::vector<std::pair<std::string, std::string>>& overrides) {
  if (pools.empty()) return InvalidArgument("no pool declared");
  ClassMap m;
  m.pools_ = std::move(pools);
  auto has_pool = [&](const std::string& n) {
    return std::any_of(m.pools_.begin(), m.pools_.end(),
                       [&](const PoolSpec& p) { return p.name == n; });
  };
  m.class_pool_.clear();
  // The primary: the hot pool (the first declared if none is hot).
  std::string fallback = m.pools_[0].name;
  for (const PoolSpec& p : m.pools_) {
    if (p.media == Media::kHot) {
      fallback = p.name;
      break;
    }
  }
  for (const auto& [cls, media] : kClasses) {
    std::string pool = fallback;  // no pool of the media: the primary
    for (const PoolSpec& p : m.pools_) {
      if (p.media == media) {
        pool = p.name;
        break;
      }
    }
    m.class_pool_.emplace_back(cls, pool);
  }
  for (const auto& [cls, pool] : overrides) {
    if (!IsStorageClass(cls)) {
      return InvalidArgument("storage_classes: '" + cls + "' is not a storage class (one of " +
                             "STANDARD, STANDARD_IA, ONEZONE_IA, INTELLIGENT_TIERING, GLACIER_IR, " +
                             "GLACIER, DEEP_ARCHIVE, REDUCED_REDUNDANCY, EXPRESS_ONEZONE)");
    }
    if (!has_pool(pool)) {
      return InvalidArgument("storage_classes: " + cls + " names the pool '" + pool +
                             "', which is not declared");
    }
    for (auto& [c, p] : m.class_pool_) {
      if (c == cls) p = pool;
    }
  }
  const std::string primary = m.PoolOf("STANDARD");
  std::stable_partition(m.pools_.begin(), m.pools_.end(),
                        [&](const PoolSpec& p) { return p.name == primary; });
  return m;
}

const std::string& ClassMap::PoolOf(std::string_view storage_class) const {
  for (const auto& [c, p] : class_pool_) {
    if (c == storage_class) return p;
  }
  return class_pool_[0].second;  // STANDARD's
}

Media ClassMap::MediaOf(std::string_view pool) const {
  if (pool.empty()) return pools_[0].media;
  for (const PoolSpec& p : pools_) {
    if (p.name == pool) return p.media;
  }
  return Media::kHot;
}

std::vector<std::pair<std::string, std::string>> ClassMap::Mapping() const { return class_pool_; }

}  // namespace strata::tier

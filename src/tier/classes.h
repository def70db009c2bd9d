// Storage classes and the pools (tiers) behind them (docs/tiers.md). A pool
// has a media class (gpu-direct, hot, warm, cold); each S3 storage class maps
// onto one pool: by default EXPRESS_ONEZONE -> the gpu-direct pool,
// STANDARD (and REDUCED_REDUNDANCY, INTELLIGENT_TIERING) -> hot,
// STANDARD_IA / ONEZONE_IA / GLACIER_IR -> warm, GLACIER / DEEP_ARCHIVE ->
// cold; a class whose media has no pool goes to the primary pool (STANDARD's),
// and the operator may map any class to any pool.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace strata::tier {

enum class Media : uint8_t { kGpuDirect, kHot, kWarm, kCold };
std::optional<Media> ParseMedia(std::string_view name);  // "gpu-direct", "hot", "warm", "cold"
std::string_view MediaName(Media m);

// The storage class names S3 requests may carry (x-amz-storage-class,
// lifecycle transitions): STANDARD, REDUCED_REDUNDANCY, STANDARD_IA,
// ONEZONE_IA, INTELLIGENT_TIERING, GLACIER, DEEP_ARCHIVE, GLACIER_IR,
// EXPRESS_ONEZONE.
bool IsStorageClass(std::string_view name);
const std::vector<std::string_view>& StorageClasses();

struct PoolSpec {
  std::string name;
  Media media = Media::kHot;
};

class ClassMap {
 public:
  // One unnamed pool ("", the embedded default): every class maps onto it.
  ClassMap();
  // `pools` as declared; `overrides`: class -> pool name. pools() is the
  // order the engine opens them: the primary (STANDARD's pool) first, the
  // others as declared. InvalidArgument (a message for the operator) on an
  // unknown class or pool.
  static Result<ClassMap> Make(std::vector<PoolSpec> pools,
                               const std::vector<std::pair<std::string, std::string>>& overrides);
  // The pool of a class ("" and unknown names: STANDARD's).
  const std::string& PoolOf(std::string_view storage_class) const;
  const std::vector<PoolSpec>& pools() const { return pools_; }
  // The media of a pool as records name it ("" = the primary's).
  Media MediaOf(std::string_view pool) const;
  // Class -> pool for every class (for `strata admin tiers` and the log).
  std::vector<std::pair<std::string, std::string>> Mapping() const;

 private:
  std::vector<PoolSpec> pools_;
  std::vector<std::pair<std::string, std::string>> class_pool_;  // every class
};

}  // namespace strata::tier

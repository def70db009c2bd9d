// What `strata server` (and `strata admin rebuild-index`) open on disk before
// anything serves: the data store (a plain directory, erasure-coded drives or
// the pools of a tiered layout), the metadata store, and what start-up checks
// and reports about them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "io/file_system.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "server/admin_api.h"
#include "server/config.h"
#include "storage/data_store.h"
#include "storage/erasure_store.h"
#include "tier/classes.h"

namespace strata::server {

struct Storage {
  std::unique_ptr<io::FileSystem> fs;
  std::unique_ptr<meta::KvStore> kv;
  std::unique_ptr<storage::DataStore> plain;
  std::unique_ptr<storage::ErasureDataStore> erasure;
  storage::DataStore* data = nullptr;
  // A tiered layout ([[pool]] in the config file): every pool's store, the
  // engine's pool list (primary first) and the class mapping.
  std::vector<std::unique_ptr<storage::DataStore>> pool_stores;
  std::vector<object::Pool> pools;
  tier::ClassMap classes;
};

// Opens the data store and, unless `open_meta` is false, the metadata store
// in DIR/meta; a message for the operator on failure.
std::variant<Storage, std::string> OpenStorage(const Config& cfg, bool open_meta);

// At start-up: whether each remote pool answers, and the uploads a crash
// left there aborted. Logged; nothing here stops the server.
void TidyRemotePools(const Storage& st);

// What `GET tiers` says of each pool beside what the engine counts.
std::vector<TierDescription> DescribeTiers(const Config& cfg, const Storage& st);

// Files 0600 and directories 0700 from here on, and the existing data
// directories and drives restricted to their owner.
void RestrictFileModes(const Config& cfg);

// The KV tier's default global cap: half of what the data store's file
// systems hold (for erasure-coded drives, the data share of them).
uint64_t HalfOfCapacity(const Config& cfg);

}  // namespace strata::server

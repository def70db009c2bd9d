// rebuild-index: recreates the metadata (buckets and object records) from
// what the drives alone hold — every piece of data carries a header and a
// trailer with its record (docs/formats/shard-file.md). Run offline, into an
// empty KvStore, after the metadata was lost.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "meta/kv_store.h"
#include "storage/erasure_store.h"

namespace strata::object {

struct RebuildReport {
  uint64_t ids_scanned = 0;
  uint64_t buckets = 0;
  uint64_t objects = 0;
  uint64_t replaced_versions = 0;  // older versions of a key (removed)
  uint64_t orphan_parts = 0;       // parts of unfinished uploads (removed)
  uint64_t unreadable = 0;         // ids with no readable header/trailer (kept)
};

// progress(done, total) is called every few hundred ids.
Result<RebuildReport> RebuildIndex(storage::ErasureDataStore& store, meta::KvStore& kv,
                                   const std::function<void(uint64_t, uint64_t)>& progress);

}  // namespace strata::object

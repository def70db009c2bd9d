// rebuild-index: recreates the metadata from what the drives alone hold —
// every piece of data carries a header and a trailer with its record
// (docs/formats/shard-file.md, docs/formats/metadata-records.md, "What the
// drives hold"). Run offline, into an empty KvStore, after the metadata was
// lost. Works on any storage::DataStore that enumerates its pieces
// (ListIds + ReadHeaderAndTrailer): the erasure-coded pool; the plain store
// answers NotImplemented.
//
// Restored exactly: buckets (B, with their versioning and Object Lock
// configuration), every version and delete marker of every object (O, tags
// and lock settings set after the write included; of null versions the
// newest), uploads in progress (U) and their
// parts (P). Not restored, by design: intent and garbage records (I, G: the
// bookkeeping of writes in flight; rebuild writes G records of its own for
// what it finds unreferenced, collected at the next start).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "meta/kv_store.h"
#include "storage/data_store.h"

namespace strata::object {

struct RebuildReport {
  uint64_t ids_scanned = 0;
  uint64_t buckets = 0;
  uint64_t objects = 0;  // versions and delete markers
  uint64_t delete_markers = 0;     // of them
  uint64_t replaced_versions = 0;  // older null versions of a key (removed)
  uint64_t orphan_parts = 0;       // parts of no upload in progress nor object (removed)
  uint64_t unreadable = 0;         // ids with no readable header/trailer (kept)
  uint64_t uploads = 0;            // multipart uploads in progress
  uint64_t parts = 0;              // their parts
  uint64_t tag_sets = 0;           // objects whose tags were replaced after the write
  uint64_t lock_settings = 0;      // versions whose retention / legal hold changed after the write
  uint64_t acl_settings = 0;       // versions whose owner / ACL changed after the write
  uint64_t removed = 0;            // ids removed while a drive was offline (leftovers collected)
};

// progress(done, total) is called every few hundred ids.
Result<RebuildReport> RebuildIndex(storage::DataStore& store, meta::KvStore& kv,
                                   const std::function<void(uint64_t, uint64_t)>& progress);

}  // namespace strata::object

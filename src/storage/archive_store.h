// ArchiveDataStore: a local archive pool (the cold tier on capacity disks or
// a tape-like volume): data files packed into large append-only segment
// files under ROOT/segments/, each file's data in 1 MiB frames compressed
// with zstd where that pays (a frame that shrinks by less than 1/8 is kept
// as it is: encrypted data, media), every frame with its CRC32C checked on
// read. Records and layout: docs/formats/archive-segment.md.
//
// A write takes a segment of its own for its duration (concurrent writes go
// to different open segments, so an entry's records are never interleaved),
// appends its records and syncs the segment at Finish. A segment is sealed
// once past segment_bytes, and never appended to after a restart. Remove
// appends a tombstone (unsynced: an id a power loss brings back is found
// again by the start-up orphan sweep); a sealed segment with no live entry,
// whose tombstones no longer cover entries elsewhere, is deleted. Open scans
// every segment's records (frame payloads are skipped, not read) to rebuild
// the index; a torn tail or an entry without its end record is ignored.
//
// Not yet: compaction of segments that are partly dead (their live entries
// copied forward) — space held by removed entries comes back only when a
// whole segment is dead.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "io/file_system.h"
#include "storage/data_store.h"

namespace strata::storage {

struct ArchiveOptions {
  std::string root;
  uint64_t segment_bytes = 256ull << 20;
  int zstd_level = 3;  // 1-19
};

class ArchiveStore;  // the implementation (archive_store.cc)

Result<std::unique_ptr<DataStore>> OpenArchiveDataStore(io::FileSystem* fs, ArchiveOptions options);

// For tests and `admin tiers`: segment files and bytes held, stored (after
// compression) vs raw bytes of the live entries.
struct ArchiveStats {
  uint64_t segments = 0, segment_bytes = 0, live_entries = 0, raw_bytes = 0, stored_bytes = 0;
};
// nullopt if `store` is not an archive store.
std::optional<ArchiveStats> ArchiveStatsOf(DataStore* store);

}  // namespace strata::storage

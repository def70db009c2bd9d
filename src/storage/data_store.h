// DataStore: where object bytes live. The object engine names each piece of
// data (an object version's body or one multipart part) by a 128-bit id and
// writes/reads it through this interface; metadata stays in meta/.
//
// Implementations: PlainDataStore (one file per id on one directory, the
// original single-drive layout) and ErasureDataStore (shards with per-block
// checksums over a pool of drives, Reed-Solomon k+m; see erasure_store.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace strata::storage {

// What a piece of data belongs to; written into every shard so the index
// can be rebuilt from the drives (see docs/formats/shard-file.md).
struct DataHeader {
  std::string bucket;
  std::string key;
  std::string upload_id;     // multipart parts only
  uint32_t part_number = 0;  // multipart parts only
  // The generation: a rewrite of an id (same id, new content) must carry a
  // greater stamp, so that a shard left by an older write (a drive that was
  // offline then) is told apart and never mixed in (shard-file.md).
  uint64_t version_stamp = 0;

  bool operator==(const DataHeader&) const = default;
};

class DataWriter {
 public:
  virtual ~DataWriter() = default;
  virtual Status Append(std::string_view data) = 0;
  // Makes the data durable (every shard synced, its directory too). `trailer`
  // is stored after the data (the encoded metadata record, for rebuilds).
  virtual Status Finish(std::string_view trailer) = 0;
  // Drops what was written (best effort).
  virtual void Abort() = 0;
};

class DataReader {
 public:
  virtual ~DataReader() = default;
  // Reads up to n bytes at offset; 0 at the end. Verifies checksums where the
  // format has them and repairs from redundancy when it can.
  virtual Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) = 0;
  virtual uint64_t size() const = 0;
  // A descriptor whose bytes [0, size()) are the data's, as stored: for
  // zero-copy sends (sendfile) by callers that verify the bytes end to end
  // themselves, since reading it bypasses this reader's checks. -1 where the
  // format does not lay the bytes out so (erasure-coded shards).
  virtual int UnverifiedFd() const { return -1; }
  // Checks the stored checksums of the bytes from `offset` on (whole blocks,
  // read into the caller's `scratch` and dropped), so that a caller may then
  // send them from UnverifiedFd() without copying them through user space.
  // `scratch` (kCheckScratchMin bytes or more) sets the size of each read.
  // Returns how many bytes from `offset` are now checked: at least
  // min(n, size() - offset), rounded up to the end of the last block checked
  // (0 at the end). Corruption as ReadAt; NotImplemented where there is no
  // such descriptor.
  static constexpr size_t kCheckScratchMin = 64 * 1024;
  virtual Result<size_t> Check(uint64_t offset, size_t n, char* scratch, size_t scratch_bytes) {
    (void)offset, (void)n, (void)scratch, (void)scratch_bytes;
    return NotImplemented("this data format cannot be sent from its file");
  }
};

class DataStore {
 public:
  virtual ~DataStore() = default;
  virtual Result<std::unique_ptr<DataWriter>> Create(const std::string& id,
                                                     const DataHeader& header) = 0;
  // `size` is the size the metadata records (checked against the data).
  virtual Result<std::unique_ptr<DataReader>> Open(const std::string& id, uint64_t size) = 0;
  // NotFound if nothing of `id` exists.
  virtual Status Remove(const std::string& id) = 0;
  // Objects up to this size may live inline in metadata instead (0: never;
  // an erasure-coded pool keeps everything on the drives so that the index
  // can be rebuilt from them).
  virtual size_t inline_max_bytes() const = 0;
  // Whether the data is behind a network (a remote S3 bucket): each call is a
  // round trip that can fail while the endpoint is away. The engine asks such
  // stores last when it looks for a file, and a listing that fails there does
  // not stop a start-up.
  virtual bool remote() const { return false; }

  // ---- Enumeration, for rebuild-index (object/rebuild.h) and the scrubber.
  // ReadHeaderAndTrailer: stores that do not describe their data
  // (PlainDataStore: no headers, small objects only in the metadata) return
  // NotImplemented.
  //
  // Every data id the store has anything of (ids removed while a drive was
  // offline included, until their leftovers are cleaned up); the plain store's
  // start-up orphan sweep uses it too.
  virtual Result<std::vector<std::string>> ListIds() = 0;
  // The header and trailer `id` was written with (its newest generation).
  // NotFound if nothing of `id` exists or it was removed (a tombstone covers
  // what is left of it); Corruption if no shard is readable.
  virtual Result<std::pair<DataHeader, std::string>> ReadHeaderAndTrailer(
      const std::string& id) = 0;
};

}  // namespace strata::storage

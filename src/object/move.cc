// ObjectEngine::MoveVersion: a version's data from one pool into another
// (lifecycle transitions, CopyObject onto itself with a new storage class).
// The commit protocol of engine.h, with the data copied instead of streamed in:
//
//   1. an intent record per new data file (unsynced), then the files written
//      into the destination pool and synced (Finish);
//   2. under the bucket and key locks: the version re-read; if it changed
//      since it was copied (a tag, lock or ACL change; a delete), the move is
//      dropped and the copies removed; else one synced batch puts the record
//      with the new pool and files, drops the intents and adds G records for
//      the old files;
//   3. the old files removed (the G records after).
//
// A crash before 2 leaves the old record and orphan copies (intent records
// name them; the start-up sweep removes them); after 2, the new record and
// old files named by G records (removed at start-up). Readers that opened the
// old files keep reading them (an open file outlives its unlink).
#include <memory>
#include <string>
#include <vector>

#include "common/log.h"
#include "crypto/chunk_cipher.h"
#include "meta/keys.h"
#include "object/engine.h"

namespace strata::object {
namespace {

constexpr size_t kCopyChunk = 1 << 20;

Status CopyStored(storage::DataReader& from, storage::DataWriter& to) {
  std::unique_ptr<char[]> buf(new char[kCopyChunk]);
  uint64_t offset = 0;
  while (offset < from.size()) {
    ASSIGN_OR_RETURN(size_t n, from.ReadAt(offset, buf.get(), kCopyChunk));
    if (n == 0) return Corruption("data file ended early");
    RETURN_IF_ERROR(to.Append(std::string_view(buf.get(), n)));
    offset += n;
  }
  return Status::OK();
}

}  // namespace

Status ObjectEngine::MoveVersion(const std::string& bucket, const std::string& key,
                                 uint64_t stamp, const std::string& to_pool,
                                 const std::string& storage_class,
                                 const std::function<Status(const ObjectRecord&)>& keep) {
  storage::DataStore* to = PoolStore(to_pool);
  if (!to) return InvalidArgument("no pool named " + to_pool);
  const std::string version_key = meta::ObjectVersionKey(bucket, key, stamp);
  ASSIGN_OR_RETURN(auto value, kv_->Get(version_key));
  if (!value) return NotFound(Detail::kVersion, "version " + VersionIdOf(stamp) + " of " + key);
  auto found = DecodeObjectRecord(*value);
  if (!found) return Corruption("undecodable object record for " + bucket + "/" + key);
  const ObjectRecord before = *found;
  if (before.delete_marker) return InvalidArgument("a delete marker has no data to move");
  storage::DataStore* from = PoolStore(before.pool);
  if (!from) return Unavailable("the pool " + before.pool + " of " + key + " is not configured");

  ObjectRecord after = before;
  after.pool = to_pool;
  after.storage_class = storage_class;
  // The files to copy: the version's data file, or its parts (a multipart
  // object's manifest, like its tag / lock / ACL records, stays in the
  // primary pool).
  std::vector<std::string> old_files, new_files;
  auto stored = [&](uint64_t plain) { return before.sse.on() ? crypto::SealedSize(plain) : plain; };
  const bool moves_data = !before.is_inline && from != to;
  if (moves_data) {
    meta::WriteBatch intents;
    std::vector<std::pair<std::string, uint64_t>> sources;  // id, stored size
    if (before.parts.empty()) {
      sources.emplace_back(before.file_id, stored(before.size_bytes));
    } else {
      for (const PartRef& p : before.parts) sources.emplace_back(p.file_id, stored(p.size_bytes));
    }
    for (size_t i = 0; i < sources.size(); ++i) {
      new_files.push_back(NewFileId());
      intents.Put(meta::IntentKey(new_files.back()), "");
    }
    RETURN_IF_ERROR(kv_->Write(intents, /*sync=*/false));
    auto drop_copies = [&] {
      for (const std::string& f : new_files) CollectGarbage(f);
    };
    if (before.parts.empty()) {
      after.file_id = new_files[0];
      // The new file describes the version as it now is (tags, lock and ACL
      // included), so no record of them on the drives is needed beside it.
      after.tags_on_drives = after.lock_on_drives = after.acl_on_drives = false;
    } else {
      for (size_t i = 0; i < after.parts.size(); ++i) after.parts[i].file_id = new_files[i];
    }
    for (size_t i = 0; i < sources.size(); ++i) {
      Status st = [&]() -> Status {
        ASSIGN_OR_RETURN(auto reader, from->Open(sources[i].first, sources[i].second));
        const bool part = !before.parts.empty();
        storage::DataHeader header{bucket, key, part ? before.upload_id : "",
                                   part ? static_cast<uint32_t>(i + 1) : 0, NextVersionStamp()};
        ASSIGN_OR_RETURN(auto writer, to->Create(new_files[i], header));
        Status copied = CopyStored(*reader, *writer);
        if (!copied.ok()) {
          writer->Abort();
          return copied;
        }
        ObjectRecord described = after;
        if (part) {  // a part's trailer describes the part (as ObjectWriter writes it)
          described = ObjectRecord{};
          described.size_bytes = after.parts[i].size_bytes;
          described.etag = after.parts[i].etag;
          described.mtime_ns = after.mtime_ns;
          described.version_stamp = after.version_stamp;
          described.is_inline = false;
          described.file_id = new_files[i];
          described.checksum_value = after.parts[i].checksum;
          described.sse = after.sse;
          described.sse.salt = after.parts[i].salt;
          described.upload_id = after.upload_id;
          described.pool = to_pool;
        }
        return writer->Finish(EncodeTrailer(part ? TrailerKind::kPart : TrailerKind::kObject,
                                            EncodeObjectRecord(described)));
      }();
      if (!st.ok()) {
        drop_copies();
        return st.WithContext("moving " + bucket + "/" + key + " to pool " + to_pool);
      }
    }
    old_files.reserve(sources.size());
    for (auto& [id, size] : sources) old_files.push_back(id);
    // The tag / lock / ACL records of a single-file version are named after
    // its data file: they go with it (the new file describes all of it).
    if (before.parts.empty()) {
      for (std::string& f : before.DataFiles()) {
        if (f != before.file_id) old_files.push_back(std::move(f));
      }
    }
    Status switched = [&]() -> Status {
      std::shared_lock bucket_lock(BucketLock(bucket));
      std::lock_guard key_lock(KeyLock(bucket, key));
      ASSIGN_OR_RETURN(auto now, kv_->Get(version_key));
      if (!now) return NotFound(Detail::kVersion, "version moved away: deleted");
      if (*now != *value) return PreconditionFailed("the version changed while it was moved");
      if (keep) RETURN_IF_ERROR(keep(before));
      meta::WriteBatch batch;
      batch.Put(version_key, EncodeObjectRecord(after));
      for (const std::string& f : new_files) batch.Delete(meta::IntentKey(f));
      for (const std::string& f : old_files) batch.Put(meta::GarbageKey(f), "");
      return kv_->Write(batch, /*sync=*/true);
    }();
    if (!switched.ok()) {
      drop_copies();
      return switched;
    }
    for (const std::string& f : old_files) CollectGarbage(f);
    return Status::OK();
  }
  // Inline data (in the metadata record) or the same store: only the record
  // changes.
  std::shared_lock bucket_lock(BucketLock(bucket));
  std::lock_guard key_lock(KeyLock(bucket, key));
  ASSIGN_OR_RETURN(auto now, kv_->Get(version_key));
  if (!now) return NotFound(Detail::kVersion, "version moved away: deleted");
  if (*now != *value) return PreconditionFailed("the version changed while it was moved");
  if (keep) RETURN_IF_ERROR(keep(before));
  meta::WriteBatch batch;
  batch.Put(version_key, EncodeObjectRecord(after));
  return kv_->Write(batch, /*sync=*/true);
}

}  // namespace strata::object

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
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/log.h"
#include "crypto/chunk_cipher.h"
#include "meta/keys.h"
#include "object/engine.h"

namespace strata::object {
namespace {

constexpr size_t kCopyChunk = 4 << 20;  // fewer, larger reads and writes

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

Result<std::vector<std::string>> ObjectEngine::CopyData(const std::string& bucket,
                                                        const std::string& key,
                                                        const ObjectRecord& rec,
                                                        storage::DataStore* from,
                                                        storage::DataStore* to,
                                                        const std::string& to_pool) {
  auto stored = [&](uint64_t plain) { return rec.sse.on() ? crypto::SealedSize(plain) : plain; };
  std::vector<std::pair<std::string, uint64_t>> sources;  // id, stored size
  if (rec.parts.empty()) {
    sources.emplace_back(rec.file_id, stored(rec.size_bytes));
  } else {
    for (const PartRef& p : rec.parts) sources.emplace_back(p.file_id, stored(p.size_bytes));
  }
  std::vector<std::string> new_files;
  meta::WriteBatch intents;
  for (size_t i = 0; i < sources.size(); ++i) {
    new_files.push_back(NewFileId());
    intents.Put(meta::IntentKey(new_files.back()), "");
  }
  RETURN_IF_ERROR(kv_->Write(intents, /*sync=*/false));
  // What each copy's trailer says: the version as it will be (a single
  // file), or the part (as ObjectWriter writes a part's).
  ObjectRecord described = rec;
  described.pool = to_pool;
  if (rec.parts.empty()) {
    described.file_id = new_files[0];
    described.tags_on_drives = described.lock_on_drives = described.acl_on_drives = false;
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    Status st = [&]() -> Status {
      ASSIGN_OR_RETURN(auto reader, from->Open(sources[i].first, sources[i].second));
      const bool part = !rec.parts.empty();
      storage::DataHeader header{bucket, key, part ? rec.upload_id : "",
                                 part ? static_cast<uint32_t>(i + 1) : 0, NextVersionStamp()};
      ASSIGN_OR_RETURN(auto writer, to->Create(new_files[i], header));
      Status copied = CopyStored(*reader, *writer);
      if (!copied.ok()) {
        writer->Abort();
        return copied;
      }
      ObjectRecord trailer = described;
      if (part) {
        trailer = ObjectRecord{};
        trailer.size_bytes = rec.parts[i].size_bytes;
        trailer.etag = rec.parts[i].etag;
        trailer.mtime_ns = rec.mtime_ns;
        trailer.version_stamp = rec.version_stamp;
        trailer.is_inline = false;
        trailer.file_id = new_files[i];
        trailer.checksum_value = rec.parts[i].checksum;
        trailer.sse = rec.sse;
        trailer.sse.salt = rec.parts[i].salt;
        trailer.upload_id = rec.upload_id;
        trailer.pool = to_pool;
      }
      return writer->Finish(EncodeTrailer(part ? TrailerKind::kPart : TrailerKind::kObject,
                                          EncodeObjectRecord(trailer)));
    }();
    if (!st.ok()) {
      for (const std::string& f : new_files) CollectGarbage(f);
      return st.WithContext("copying " + bucket + "/" + key + " to pool " + to_pool);
    }
  }
  return new_files;
}

Status ObjectEngine::SwitchRecord(const std::string& bucket, const std::string& key,
                                  const std::string& version_key, const std::string& before,
                                  const ObjectRecord& after,
                                  const std::vector<std::string>& new_files,
                                  const std::vector<std::string>& old_files,
                                  const std::function<Status(const ObjectRecord&)>& keep) {
  Status switched = [&]() -> Status {
    std::shared_lock bucket_lock(BucketLock(bucket));
    std::lock_guard key_lock(KeyLock(bucket, key));
    ASSIGN_OR_RETURN(auto now, kv_->Get(version_key));
    if (!now) return NotFound(Detail::kVersion, "the version went away");
    if (*now != before) return PreconditionFailed("the version changed while its data was copied");
    if (keep) {
      auto rec = DecodeObjectRecord(*now);
      if (!rec) return Corruption("undecodable object record for " + bucket + "/" + key);
      RETURN_IF_ERROR(keep(*rec));
    }
    meta::WriteBatch batch;
    batch.Put(version_key, EncodeObjectRecord(after));
    for (const std::string& f : new_files) batch.Delete(meta::IntentKey(f));
    for (const std::string& f : old_files) batch.Put(meta::GarbageKey(f), "");
    return kv_->Write(batch, /*sync=*/true);
  }();
  if (!switched.ok()) {
    for (const std::string& f : new_files) CollectGarbage(f);
    return switched;
  }
  for (const std::string& f : old_files) CollectGarbage(f);
  return Status::OK();
}

Result<std::pair<std::string, ObjectRecord>> ObjectEngine::ReadVersion(const std::string& bucket,
                                                                       const std::string& key,
                                                                       uint64_t stamp) {
  ASSIGN_OR_RETURN(auto value, kv_->Get(meta::ObjectVersionKey(bucket, key, stamp)));
  if (!value) return NotFound(Detail::kVersion, "version " + VersionIdOf(stamp) + " of " + key);
  auto rec = DecodeObjectRecord(*value);
  if (!rec) return Corruption("undecodable object record for " + bucket + "/" + key);
  return std::make_pair(std::move(*value), std::move(*rec));
}

Status ObjectEngine::MoveVersion(const std::string& bucket, const std::string& key,
                                 uint64_t stamp, const std::string& to_pool,
                                 const std::string& storage_class,
                                 const std::function<Status(const ObjectRecord&)>& keep) {
  storage::DataStore* to = PoolStore(to_pool);
  if (!to) return InvalidArgument("no pool named " + to_pool);
  const std::string version_key = meta::ObjectVersionKey(bucket, key, stamp);
  ASSIGN_OR_RETURN(auto found, ReadVersion(bucket, key, stamp));
  const ObjectRecord& before = found.second;
  if (before.delete_marker) return InvalidArgument("a delete marker has no data to move");
  storage::DataStore* from = PoolStore(before.pool);
  if (!from) return Unavailable("the pool " + before.pool + " of " + key + " is not configured");
  ObjectRecord after = before;
  after.pool = to_pool;
  after.storage_class = storage_class;
  if (before.is_inline || from == to) {  // only the record changes
    return SwitchRecord(bucket, key, version_key, found.first, after, {}, {}, keep);
  }
  ASSIGN_OR_RETURN(std::vector<std::string> new_files,
                   CopyData(bucket, key, before, from, to, to_pool));
  std::vector<std::string> old_files;
  if (before.parts.empty()) {
    after.file_id = new_files[0];
    // The new file describes the version as it now is (tags, lock and ACL
    // included): the records of them on the drives, named after the old
    // file, go with it.
    after.tags_on_drives = after.lock_on_drives = after.acl_on_drives = false;
    old_files.push_back(before.file_id);
    if (before.tags_on_drives) old_files.push_back(TagsRecordId(before.file_id));
    if (before.lock_on_drives) old_files.push_back(LockRecordId(before.file_id));
    if (before.acl_on_drives) old_files.push_back(AclRecordId(before.file_id));
  } else {
    for (size_t i = 0; i < after.parts.size(); ++i) {
      after.parts[i].file_id = new_files[i];
      old_files.push_back(before.parts[i].file_id);
    }
  }
  return SwitchRecord(bucket, key, version_key, found.first, after, new_files, old_files, keep);
}

Result<RestoreRequestOutcome> ObjectEngine::RequestRestore(const std::string& bucket,
                                                           const std::string& key, uint64_t stamp,
                                                           uint32_t days, int64_t extend_to_ns) {
  std::shared_lock bucket_lock(BucketLock(bucket));
  std::lock_guard key_lock(KeyLock(bucket, key));
  ASSIGN_OR_RETURN(auto found, ReadVersion(bucket, key, stamp));
  ObjectRecord& rec = found.second;
  if (rec.delete_marker) return InvalidArgument("a delete marker has no data to restore");
  RestoreRequestOutcome out = RestoreRequestOutcome::kStarted;
  if (rec.restore.ongoing) return RestoreRequestOutcome::kInProgress;
  if (rec.restore.made()) {
    rec.restore.days = days;
    rec.restore.expiry_ns = extend_to_ns;
    out = RestoreRequestOutcome::kExtended;
  } else {
    rec.restore.ongoing = true;
    rec.restore.days = days;
  }
  meta::WriteBatch batch;
  batch.Put(meta::ObjectVersionKey(bucket, key, stamp), EncodeObjectRecord(rec));
  batch.Put(meta::RestoreIndexKey(bucket, key, stamp), "");
  RETURN_IF_ERROR(kv_->Write(batch, /*sync=*/true));
  return out;
}

Status ObjectEngine::CompleteRestore(const std::string& bucket, const std::string& key,
                                     uint64_t stamp, const std::string& to_pool,
                                     const std::function<int64_t(uint32_t days)>& expiry_of) {
  storage::DataStore* to = PoolStore(to_pool);
  if (!to) return InvalidArgument("no pool named " + to_pool);
  const std::string version_key = meta::ObjectVersionKey(bucket, key, stamp);
  ASSIGN_OR_RETURN(auto found, ReadVersion(bucket, key, stamp));
  const ObjectRecord& before = found.second;
  if (!before.restore.ongoing) return PreconditionFailed("no restore is in progress");
  ObjectRecord after = before;
  after.restore.ongoing = false;
  after.restore.pool = to_pool;
  storage::DataStore* from = PoolStore(before.pool);
  if (!from) return Unavailable("the pool " + before.pool + " of " + key + " is not configured");
  if (!before.is_inline) {
    ASSIGN_OR_RETURN(after.restore.files, CopyData(bucket, key, before, from, to, to_pool));
  }
  after.restore.expiry_ns = expiry_of(before.restore.days);  // its days count from now
  return SwitchRecord(bucket, key, version_key, found.first, after, after.restore.files, {},
                      nullptr);
}

Result<ObjectRecord> ObjectEngine::RecordOfStamp(const std::string& bucket,
                                                 const std::string& key, uint64_t stamp) {
  ASSIGN_OR_RETURN(auto found, ReadVersion(bucket, key, stamp));
  found.second.inline_data.clear();
  return std::move(found.second);
}

Result<EngineUsage> ObjectEngine::Usage() {
  EngineUsage out;
  for (const Pool& p : pools_) out.pools.push_back({p.name, {}, 0, 0});
  auto slot = [&](const std::string& pool) -> PoolUsage* {
    if (pool.empty()) return &out.pools[0];
    for (PoolUsage& u : out.pools) {
      if (u.pool == pool) return &u;
    }
    return nullptr;  // a pool no longer configured
  };
  auto it = kv_->NewIterator();
  const std::string objects(1, meta::kObjectPrefix);
  for (it->Seek(objects); it->Valid() && it->key().starts_with(objects); it->Next()) {
    auto rec = DecodeObjectRecord(it->value());
    if (!rec) return Corruption("an object record does not decode");
    if (rec->delete_marker) continue;
    if (PoolUsage* u = slot(rec->pool)) {
      auto c = std::find_if(u->by_class.begin(), u->by_class.end(),
                            [&](const auto& e) { return e.first == rec->storage_class; });
      if (c == u->by_class.end()) {
        u->by_class.push_back({rec->storage_class, {0, 0}});
        c = u->by_class.end() - 1;
      }
      ++c->second.first;
      c->second.second += rec->size_bytes;
    }
    if (rec->restore.ongoing) ++out.restores_ongoing;
    if (rec->restore.made()) {
      if (PoolUsage* u = slot(rec->restore.pool)) {
        ++u->restored_copies;
        u->restored_bytes += rec->size_bytes;
      }
    }
  }
  RETURN_IF_ERROR(it->status());
  const std::string intents(1, meta::kIntentPrefix);
  for (it->Seek(intents); it->Valid() && it->key().starts_with(intents); it->Next()) {
    ++out.writes_in_flight;
  }
  RETURN_IF_ERROR(it->status());
  return out;
}

Status ObjectEngine::ExpireRestore(const std::string& bucket, const std::string& key,
                                   uint64_t stamp) {
  auto found = ReadVersion(bucket, key, stamp);
  if (!found.ok() && found.status().code() == Code::kNotFound) {  // the version went
    meta::WriteBatch batch;
    batch.Delete(meta::RestoreIndexKey(bucket, key, stamp));
    return kv_->Write(batch, /*sync=*/false);
  }
  if (!found.ok()) return found.status();
  const ObjectRecord& before = found->second;
  if (before.restore.ongoing) return PreconditionFailed("the restore is in progress");
  // Not yet due (extended by a RestoreObject since the caller looked): kept.
  // The switch below refuses a record changed after this read.
  if (before.restore.made() && before.restore.expiry_ns > NowNs()) {
    return PreconditionFailed("the restored copy has not expired");
  }
  ObjectRecord after = before;
  after.restore = {};
  RETURN_IF_ERROR(SwitchRecord(bucket, key, meta::ObjectVersionKey(bucket, key, stamp),
                               found->first, after, {}, before.restore.files, nullptr));
  meta::WriteBatch batch;  // after the switch: an index entry without a copy is harmless
  batch.Delete(meta::RestoreIndexKey(bucket, key, stamp));
  return kv_->Write(batch, /*sync=*/false);
}

}  // namespace strata::object

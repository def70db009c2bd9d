// Reading, deleting and relocking object versions; the bucket's versioning
// and Object Lock configuration (engine.cc: the writer and the commit
// protocol; lock.h: the rules Object Lock imposes).
#include <string>

#include "crypto/chunk_cipher.h"
#include "common/log.h"
#include "meta/keys.h"
#include "object/engine.h"
#include "object/lock.h"

namespace strata::object {

namespace {
using Found = std::optional<std::pair<std::string, ObjectRecord>>;

Status NoSuchVersion(const std::string& key, const VersionSelector& v) {
  return NotFound(Detail::kVersion,
                  "version " + (v.null ? std::string("null") : VersionIdOf(v.stamp)) + " of " + key);
}

// What a lookup that found nothing says: no bucket, no such version (one was
// named), or no such key.
Status Missing(meta::KvStore* kv, const std::string& bucket, const std::string& key,
               const Version& version) {
  ASSIGN_OR_RETURN(auto b, kv->Get(meta::BucketKey(bucket)));
  if (!b) return NotFound(Detail::kBucket, "bucket " + bucket);
  if (version) return NoSuchVersion(key, *version);
  return NotFound(Detail::kKey, "key " + key);
}
}  // namespace

Result<Found> ObjectEngine::NullVersion(const std::string& bucket, const std::string& key) {
  const std::string prefix = meta::ObjectKeyPrefix(bucket, key);
  auto it = kv_->NewIterator();
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto rec = DecodeObjectRecord(it->value());
    if (!rec) return Corruption("undecodable object record for " + bucket + "/" + key);
    if (!rec->versioned) return Found(std::make_pair(std::string(it->key()), std::move(*rec)));
  }
  RETURN_IF_ERROR(it->status());
  return Found();
}

Result<Found> ObjectEngine::FindVersion(const std::string& bucket, const std::string& key,
                                        const Version& version) {
  if (!version) return LatestVersion(bucket, key);
  if (version->null) return NullVersion(bucket, key);
  std::string k = meta::ObjectVersionKey(bucket, key, version->stamp);
  ASSIGN_OR_RETURN(auto value, kv_->Get(k));
  if (!value) return Found();
  auto rec = DecodeObjectRecord(*value);
  if (!rec) return Corruption("undecodable object record for " + bucket + "/" + key);
  if (!rec->versioned) return Found();  // the null version has no other id
  return Found(std::make_pair(std::move(k), std::move(*rec)));
}

Result<ObjectRecord> ObjectEngine::HeadVersion(const std::string& bucket, const std::string& key,
                                               const Version& version) {
  ASSIGN_OR_RETURN(auto found, FindVersion(bucket, key, version));
  if (!found) return Missing(kv_, bucket, key, version);
  found->second.inline_data.clear();
  return std::move(found->second);
}

Result<ObjectRecord> ObjectEngine::HeadObject(const std::string& bucket, const std::string& key) {
  ASSIGN_OR_RETURN(ObjectRecord rec, HeadVersion(bucket, key, std::nullopt));
  if (rec.delete_marker) return NotFound(Detail::kKey, "key " + key + " (deleted)");
  return rec;
}

Result<std::unique_ptr<ObjectReader>> ObjectEngine::OpenVersion(const std::string& bucket,
                                                                const std::string& key,
                                                                const Version& version) {
  // A concurrent overwrite or delete may remove the data file between the
  // metadata read and the open; look again (the latest is then another
  // version; a named version is then gone).
  for (int attempt = 0; attempt < 5; ++attempt) {
    ASSIGN_OR_RETURN(auto found, FindVersion(bucket, key, version));
    if (!found) return Missing(kv_, bucket, key, version);
    auto reader = std::unique_ptr<ObjectReader>(new ObjectReader());
    reader->record_ = std::move(found->second);
    reader->bucket_ = bucket;
    reader->key_ = key;
    const ObjectRecord& rec = reader->record_;
    if (rec.is_inline || rec.delete_marker) return reader;
    // Encrypted data files hold sealed chunks: their stored size is larger.
    auto stored = [&](uint64_t plain) { return rec.sse.on() ? crypto::SealedSize(plain) : plain; };
    std::vector<uint64_t> sizes;
    std::vector<std::string> files;
    if (rec.parts.empty()) {
      sizes.push_back(stored(rec.size_bytes));
      files.push_back(rec.file_id);
    } else {  // file_id, if set, is the manifest: no object bytes in it
      for (const PartRef& p : rec.parts) {
        reader->part_starts_.push_back(
            reader->part_starts_.empty()
                ? 0
                : reader->part_starts_.back() + rec.parts[reader->part_starts_.size() - 1].size_bytes);
        sizes.push_back(stored(p.size_bytes));
        files.push_back(p.file_id);
      }
    }
    // A restored copy (RestoreObject on a cold version) is read in its place:
    // the same bytes, in a faster pool. If it goes away meanwhile (expired),
    // the open fails with NotFound and the record is read again.
    const bool restored = !rec.restore.ongoing && rec.restore.files.size() == files.size();
    const std::string& pool = restored ? rec.restore.pool : rec.pool;
    if (restored) files = rec.restore.files;
    storage::DataStore* store = PoolStore(pool);
    if (!store) {
      return Unavailable("the pool " + pool + " of " + bucket + "/" + key + " is not configured");
    }
    Status failed;
    reader->store_ = store;
    reader->file_ids_ = files;
    reader->file_sizes_ = sizes;
    for (size_t i = 0; i < files.size() && failed.ok(); ++i) {
      auto file = store->Open(files[i], sizes[i]);
      if (!file.ok()) {
        failed = file.status();
      } else {
        reader->files_.push_back(std::move(file).value());
      }
    }
    if (failed.ok()) return reader;
    if (failed.code() != Code::kNotFound) return failed;
  }
  return Internal("object kept changing while opening " + bucket + "/" + key);
}

Result<std::unique_ptr<ObjectReader>> ObjectEngine::OpenObject(const std::string& bucket,
                                                               const std::string& key) {
  ASSIGN_OR_RETURN(auto reader, OpenVersion(bucket, key, std::nullopt));
  if (reader->record().delete_marker) return NotFound(Detail::kKey, "key " + key + " (deleted)");
  return reader;
}

Status ObjectEngine::DeleteObject(const std::string& bucket, const std::string& key) {
  return DeleteVersion(bucket, key, std::nullopt).status();
}

Result<ObjectRecord> ObjectEngine::AddDeleteMarker(const std::string& bucket,
                                                   const std::string& key,
                                                   bool bypass_governance,
                                                   std::optional<uint64_t> only_if_latest,
                                                   const DeleteOptions* lifecycle) {
  WriteOptions options;
  options.md5 = false;
  options.bypass_governance = bypass_governance;
  ASSIGN_OR_RETURN(auto writer, NewWriter(bucket, key, {}, std::move(options)));
  writer->delete_marker_ = true;
  writer->lock_ = {};  // markers carry no lock
  writer->SetEtag("");
  if (!only_if_latest) return writer->Commit();
  return writer->Commit([&](const std::optional<ObjectRecord>& current) {
    if (!current || current->version_stamp != *only_if_latest) {
      return PreconditionFailed("the latest version changed");
    }
    if (lifecycle && lifecycle->keep) {  // the key lock is held here
      ASSIGN_OR_RETURN(auto versions, KeyVersions(bucket, key));
      return lifecycle->keep(*current, versions);
    }
    return Status::OK();
  });
}

Result<std::vector<ObjectRecord>> ObjectEngine::KeyVersions(const std::string& bucket,
                                                            const std::string& key) {
  std::vector<ObjectRecord> out;
  const std::string prefix = meta::ObjectKeyPrefix(bucket, key);
  auto it = kv_->NewIterator();
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto rec = DecodeObjectRecord(it->value());
    if (!rec) return Corruption("undecodable object record for " + bucket + "/" + key);
    rec->inline_data.clear();
    out.push_back(std::move(*rec));
  }
  RETURN_IF_ERROR(it->status());
  return out;
}

Result<DeleteOutcome> ObjectEngine::DeleteVersion(const std::string& bucket,
                                                  const std::string& key, const Version& version,
                                                  DeleteOptions options) {
  ASSIGN_OR_RETURN(BucketRecord b, GetBucket(bucket));
  DeleteOutcome out;
  if (!version && b.versioning != Versioning::kUnversioned) {
    // Enabled: a marker on top; Suspended: a null marker replacing the null version.
    ASSIGN_OR_RETURN(ObjectRecord marker, AddDeleteMarker(bucket, key, options.bypass_governance,
                                                          options.only_if_stamp, &options));
    out.delete_marker = true;
    out.version_id = marker.VersionId();
    return out;
  }
  std::shared_lock bucket_lock(BucketLock(bucket));
  std::lock_guard key_lock(KeyLock(bucket, key));
  ASSIGN_OR_RETURN(auto found, FindVersion(bucket, key, version));
  if (!found) {
    if (version) out.version_id = version->null ? "null" : VersionIdOf(version->stamp);
    return out;  // nothing to delete: not an error (S3)
  }
  if (options.only_if_stamp && found->second.version_stamp != *options.only_if_stamp) {
    return PreconditionFailed("the version changed");
  }
  if (options.keep) {
    ASSIGN_OR_RETURN(auto versions, KeyVersions(bucket, key));
    RETURN_IF_ERROR(options.keep(found->second, versions));
  }
  RETURN_IF_ERROR(CheckRemovable(found->second, NowNs(), options.bypass_governance));
  if (options.bypass_governance && RetentionActive(found->second.lock, NowNs())) {
    STRATA_LOG("object lock: GOVERNANCE retention bypassed to delete %s/%s version %s",
               bucket.c_str(), key.c_str(), found->second.VersionId().c_str());
  }
  meta::WriteBatch batch;
  batch.Delete(found->first);
  std::vector<std::string> files = found->second.DataFiles();
  for (const std::string& f : files) batch.Put(meta::GarbageKey(f), "");
  RETURN_IF_ERROR(kv_->Write(std::move(batch), /*sync=*/true));
  for (const std::string& f : files) CollectGarbage(f);
  if (version) {
    out.delete_marker = found->second.delete_marker;
    out.version_id = found->second.VersionId();
  }
  return out;
}

Status ObjectEngine::RewriteVersion(
    const std::string& bucket, const std::string& key, const Version& version,
    std::string_view what, const std::function<void(ObjectRecord&)>& change,
    const std::function<std::pair<std::string, std::string>(ObjectRecord&)>& piece) {
  std::shared_lock bucket_lock(BucketLock(bucket));
  std::lock_guard key_lock(KeyLock(bucket, key));
  ASSIGN_OR_RETURN(auto found, FindVersion(bucket, key, version));
  if (!found) return Missing(kv_, bucket, key, version);
  ObjectRecord& rec = found->second;
  if (rec.delete_marker) {
    if (!version) return NotFound(Detail::kKey, "key " + key + " (deleted)");
    return InvalidArgument(Detail::kVersion, "a delete marker has no " + std::string(what));
  }
  change(rec);
  if (SelfDescribing() && !rec.file_id.empty()) {
    // The data's trailer keeps what the write set; the current setting goes
    // to the version's record piece on the drives (rewritten, a newer
    // generation each time), durable before the metadata says so:
    // rebuild-index finds it. `piece` also sets the record's on-drives flag.
    storage::DataHeader header{bucket, key, "", 0, NextVersionStamp()};
    auto [id, trailer] = piece(rec);
    RETURN_IF_ERROR(WriteRecordPiece(id, header, trailer, /*intent=*/false));
  }
  meta::WriteBatch batch;
  batch.Put(found->first, EncodeObjectRecord(rec));
  return kv_->Write(std::move(batch), /*sync=*/true);
}

Status ObjectEngine::SetTags(const std::string& bucket, const std::string& key, Tags tags,
                             const Version& version) {
  return RewriteVersion(
      bucket, key, version, "tags", [&](ObjectRecord& rec) { rec.tags = std::move(tags); },
      [](ObjectRecord& rec) {
        rec.tags_on_drives = true;  // collected with the version (DataFiles)
        TagsRecord tr{rec.file_id, rec.version_stamp, rec.tags};
        return std::make_pair(TagsRecordId(rec.file_id),
                              EncodeTrailer(TrailerKind::kTags, EncodeTagsRecord(tr)));
      });
}

Status ObjectEngine::SetObjectAcl(const std::string& bucket, const std::string& key,
                                  const Version& version, std::string owner, std::string acl) {
  return RewriteVersion(
      bucket, key, version, "ACL",
      [&](ObjectRecord& rec) {
        rec.owner = std::move(owner);
        rec.acl = std::move(acl);
      },
      [](ObjectRecord& rec) {
        rec.acl_on_drives = true;
        AclRecord ar{rec.file_id, rec.version_stamp, rec.owner, rec.acl};
        return std::make_pair(AclRecordId(rec.file_id),
                              EncodeTrailer(TrailerKind::kAcl, EncodeAclRecord(ar)));
      });
}

Status ObjectEngine::UpdateLock(
    const std::string& bucket, const std::string& key, const Version& version,
    const std::function<Status(const BucketRecord&, ObjectLock&)>& change) {
  std::shared_lock bucket_lock(BucketLock(bucket));
  std::lock_guard key_lock(KeyLock(bucket, key));
  ASSIGN_OR_RETURN(BucketRecord b, GetBucket(bucket));
  if (!b.object_lock) {
    return PreconditionFailed(Detail::kBucketState, "bucket " + bucket + " has no Object Lock");
  }
  ASSIGN_OR_RETURN(auto found, FindVersion(bucket, key, version));
  if (!found) return Missing(kv_, bucket, key, version);
  ObjectRecord& rec = found->second;
  if (rec.delete_marker) return InvalidArgument(Detail::kVersion, "a delete marker has no lock");
  ObjectLock lock = rec.lock;
  RETURN_IF_ERROR(change(b, lock));
  if (lock == rec.lock) return Status::OK();
  rec.lock = lock;
  if (SelfDescribing() && !rec.file_id.empty()) {
    // Durable on the drives before the metadata says so: a rebuilt index
    // never has a weaker lock than the one acknowledged.
    storage::DataHeader header{bucket, key, "", 0, NextVersionStamp()};
    LockRecord lr{rec.file_id, rec.version_stamp, rec.lock};
    RETURN_IF_ERROR(WriteRecordPiece(LockRecordId(rec.file_id), header,
                                     EncodeTrailer(TrailerKind::kLock, EncodeLockRecord(lr)),
                                     /*intent=*/false));
    rec.lock_on_drives = true;
  }
  meta::WriteBatch batch;
  batch.Put(found->first, EncodeObjectRecord(rec));
  return kv_->Write(std::move(batch), /*sync=*/true);
}

Status ObjectEngine::SetRetention(const std::string& bucket, const std::string& key,
                                  const Version& version, LockMode mode, int64_t until_ns,
                                  bool bypass_governance) {
  return UpdateLock(bucket, key, version, [&](const BucketRecord&, ObjectLock& lock) {
    const int64_t now = NowNs();
    RETURN_IF_ERROR(CheckRetentionChange(lock, mode, until_ns, now, bypass_governance));
    if (bypass_governance && RetentionActive(lock, now) && lock.mode == LockMode::kGovernance &&
        (mode == LockMode::kNone || until_ns < lock.retain_until_ns)) {
      STRATA_LOG("object lock: GOVERNANCE retention of %s/%s shortened or removed with bypass",
                 bucket.c_str(), key.c_str());
    }
    lock.mode = mode;
    lock.retain_until_ns = mode == LockMode::kNone ? 0 : until_ns;
    return Status::OK();
  });
}

Status ObjectEngine::SetLegalHold(const std::string& bucket, const std::string& key,
                                  const Version& version, bool on) {
  return UpdateLock(bucket, key, version, [&](const BucketRecord&, ObjectLock& lock) {
    lock.legal_hold = on ? LegalHold::kOn : LegalHold::kOff;
    return Status::OK();
  });
}

Status ObjectEngine::SetBucketVersioning(const std::string& name, Versioning state) {
  if (state == Versioning::kUnversioned) {
    return InvalidArgument("a bucket cannot return to the unversioned state");
  }
  std::unique_lock lock(BucketLock(name));
  ASSIGN_OR_RETURN(BucketRecord rec, GetBucket(name));
  if (rec.object_lock && state == Versioning::kSuspended) {
    return PreconditionFailed(Detail::kBucketState,
                              "versioning cannot be suspended on a bucket with Object Lock");
  }
  if (rec.versioning == state) return Status::OK();
  rec.versioning = state;
  return WriteBucketLocked(name, rec);
}

Status ObjectEngine::SetObjectLockConfiguration(const std::string& name,
                                                const DefaultRetention& rule) {
  std::unique_lock lock(BucketLock(name));
  ASSIGN_OR_RETURN(BucketRecord rec, GetBucket(name));
  if (!rec.object_lock && rec.versioning != Versioning::kEnabled) {
    return PreconditionFailed(Detail::kBucketState,
                              "Object Lock needs versioning Enabled on the bucket");
  }
  if (rec.object_lock && rec.default_retention == rule) return Status::OK();
  rec.object_lock = true;
  rec.default_retention = rule;
  return WriteBucketLocked(name, rec);
}

}  // namespace strata::object

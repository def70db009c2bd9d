#include "object/rebuild.h"

#include <map>
#include <set>

#include "common/log.h"
#include "meta/keys.h"
#include "object/latest_index.h"
#include "object/record.h"

namespace strata::object {

namespace {

struct FoundPart {
  std::string bucket, key;
  uint64_t stamp = 0;  // which of two pieces of one part number is newer
  PartRecord rec;
};

struct FoundUpload {
  std::string bucket, key, marker_id;
  UploadRecord rec;
};

struct FoundTags {
  std::string id;
  uint64_t stamp = 0;
  TagsRecord rec;
};

struct FoundLock {
  std::string id;
  uint64_t stamp = 0;  // generation: the newest is the current setting
  LockRecord rec;
};

struct FoundAcl {
  std::string id;
  uint64_t stamp = 0;  // generation: the newest is the current ACL
  AclRecord rec;
};

// Everything the drives describe, then the records it makes.
class Rebuilder {
 public:
  Rebuilder(meta::KvStore& kv, RebuildReport& report) : kv_(kv), report_(report) {}

  // One piece: what its trailer says it is. False if undecodable.
  bool Add(const std::string& id, const storage::DataHeader& header, TrailerKind kind,
           std::string_view payload);
  void AddRemoved(const std::string& id) {
    ++report_.removed;
    garbage_.insert(id);  // the start-up sweep deletes its leftovers (and tombstones)
  }
  Status Write();

 private:
  void AddVersion(const storage::DataHeader& header, ObjectRecord rec);
  void AddPart(const std::string& id, const storage::DataHeader& header, const ObjectRecord& rec);
  void AddTags(const std::string& id, const storage::DataHeader& header, TagsRecord rec);
  void AddLock(const std::string& id, const storage::DataHeader& header, LockRecord rec);
  void AddAcl(const std::string& id, const storage::DataHeader& header, AclRecord rec);
  Status WriteObjects();
  Status WriteUploadsAndParts();
  Status WriteBuckets();
  Status Put(const std::string& key, const std::string& value);
  void NeedBucket(const std::string& name, int64_t created_ns);

  meta::KvStore& kv_;
  RebuildReport& report_;
  meta::WriteBatch batch_;
  std::map<std::string, BucketRecord> buckets_;
  // (bucket, key) -> versions by stamp (delete markers included).
  std::map<std::pair<std::string, std::string>, std::map<uint64_t, ObjectRecord>> versions_;
  std::map<std::string, FoundUpload> uploads_;                          // by upload id
  std::set<std::string> completed_;                                     // upload ids
  std::map<std::pair<std::string, uint32_t>, FoundPart> parts_;         // (upload id, number)
  std::map<std::string, FoundTags> tags_;                               // by the version's data id
  std::map<std::string, FoundLock> locks_;                              // by the version's data id
  std::map<std::string, FoundAcl> acls_;                                // by the version's data id
  std::set<std::string> referenced_;  // part ids of the surviving objects
  std::set<std::string> garbage_;
};

bool Rebuilder::Add(const std::string& id, const storage::DataHeader& header, TrailerKind kind,
                    std::string_view payload) {
  switch (kind) {
    case TrailerKind::kBucket: {
      auto rec = DecodeBucketRecord(payload);
      if (rec) buckets_[header.bucket] = *rec;
      return rec.has_value();
    }
    case TrailerKind::kObject:
    case TrailerKind::kManifest:
    case TrailerKind::kPart: {
      auto rec = DecodeObjectRecord(payload);
      if (!rec) return false;
      if (kind == TrailerKind::kPart) {
        AddPart(id, header, *rec);
        return true;
      }
      // A manifest's header names the upload it completed (older ones: none).
      if (kind == TrailerKind::kManifest && !header.upload_id.empty()) {
        completed_.insert(header.upload_id);
      }
      AddVersion(header, std::move(*rec));
      return true;
    }
    case TrailerKind::kUpload: {
      auto rec = DecodeUploadRecord(payload);
      if (rec) uploads_[header.upload_id] = {header.bucket, header.key, id, std::move(*rec)};
      return rec.has_value();
    }
    case TrailerKind::kTags: {
      auto rec = DecodeTagsRecord(payload);
      if (rec) AddTags(id, header, std::move(*rec));
      return rec.has_value();
    }
    case TrailerKind::kLock: {
      auto rec = DecodeLockRecord(payload);
      if (rec) AddLock(id, header, std::move(*rec));
      return rec.has_value();
    }
    case TrailerKind::kAcl: {
      auto rec = DecodeAclRecord(payload);
      if (rec) AddAcl(id, header, std::move(*rec));
      return rec.has_value();
    }
  }
  return false;
}

// Every versioned record and delete marker of a key is kept; of its null
// versions only the newest (the others were replaced while their data could
// not be collected: garbage). WriteObjects sorts that out.
void Rebuilder::AddVersion(const storage::DataHeader& header, ObjectRecord rec) {
  auto& versions = versions_[{header.bucket, header.key}];
  const uint64_t stamp = rec.version_stamp;
  versions.emplace(stamp, std::move(rec));
}

// A part piece's trailer is the part as an object record; the newer of two
// pieces of one part number wins (the other was replaced, not yet collected).
void Rebuilder::AddPart(const std::string& id, const storage::DataHeader& header,
                        const ObjectRecord& rec) {
  FoundPart part{header.bucket, header.key, header.version_stamp,
                 PartRecord{rec.size_bytes, rec.etag, rec.mtime_ns, id, rec.checksum_value, rec.sse.salt}};
  auto [it, inserted] = parts_.try_emplace({header.upload_id, header.part_number}, part);
  if (inserted) return;
  if (part.stamp > it->second.stamp) std::swap(it->second, part);
  garbage_.insert(part.rec.file_id);
}

void Rebuilder::AddTags(const std::string& id, const storage::DataHeader& header,
                        TagsRecord rec) {
  FoundTags found{id, header.version_stamp, std::move(rec)};
  auto [it, inserted] = tags_.try_emplace(found.rec.data_id, found);
  if (!inserted && found.stamp > it->second.stamp) it->second = std::move(found);
}

void Rebuilder::AddLock(const std::string& id, const storage::DataHeader& header,
                        LockRecord rec) {
  FoundLock found{id, header.version_stamp, std::move(rec)};
  auto [it, inserted] = locks_.try_emplace(found.rec.data_id, found);
  if (!inserted && found.stamp > it->second.stamp) it->second = std::move(found);
}

void Rebuilder::AddAcl(const std::string& id, const storage::DataHeader& header, AclRecord rec) {
  FoundAcl found{id, header.version_stamp, std::move(rec)};
  auto [it, inserted] = acls_.try_emplace(found.rec.data_id, found);
  if (!inserted && found.stamp > it->second.stamp) it->second = std::move(found);
}

Status Rebuilder::Put(const std::string& key, const std::string& value) {
  batch_.Put(key, value);
  if (batch_.ops().size() < 1000) return Status::OK();
  Status st = kv_.Write(batch_, /*sync=*/false);
  batch_ = meta::WriteBatch();
  return st;
}

void Rebuilder::NeedBucket(const std::string& name, int64_t created_ns) {
  if (buckets_.count(name)) return;  // a bucket whose marker is gone
  BucketRecord b;
  b.created_ns = created_ns;
  b.region = "us-east-1";
  buckets_[name] = b;
}

// The surviving versions, with the tags, lock settings and ACLs set after their write.
Status Rebuilder::WriteObjects() {
  for (auto& [where, versions] : versions_) {
    uint64_t newest_null = 0;
    bool has_null = false;
    for (const auto& [stamp, rec] : versions) {
      if (!rec.versioned) {
        newest_null = stamp;  // ascending: the last one met is the newest
        has_null = true;
      }
    }
    for (auto& [stamp, rec] : versions) {
      if (!rec.versioned && has_null && stamp != newest_null) {
        ++report_.replaced_versions;
        for (const std::string& f : rec.DataFiles()) garbage_.insert(f);
        continue;
      }
      NeedBucket(where.first, rec.mtime_ns);
      for (const PartRef& p : rec.parts) referenced_.insert(p.file_id);
      auto tags = tags_.find(rec.file_id);
      if (tags != tags_.end() && !rec.file_id.empty()) {
        rec.tags = tags->second.rec.tags;
        rec.tags_on_drives = true;
        ++report_.tag_sets;
        tags_.erase(tags);
      }
      auto lock = locks_.find(rec.file_id);
      if (lock != locks_.end() && !rec.file_id.empty()) {
        rec.lock = lock->second.rec.lock;
        rec.lock_on_drives = true;
        ++report_.lock_settings;
        locks_.erase(lock);
      }
      auto acl = acls_.find(rec.file_id);
      if (acl != acls_.end() && !rec.file_id.empty()) {
        rec.owner = acl->second.rec.owner;
        rec.acl = acl->second.rec.acl;
        rec.acl_on_drives = true;
        ++report_.acl_settings;
        acls_.erase(acl);
      }
      if (rec.delete_marker) ++report_.delete_markers;
      RETURN_IF_ERROR(
          Put(meta::ObjectVersionKey(where.first, where.second, rec.version_stamp),
              EncodeObjectRecord(rec)));
      ++report_.objects;
    }
  }
  for (const auto& [data_id, t] : tags_) garbage_.insert(t.id);  // of versions gone
  for (const auto& [data_id, l] : locks_) garbage_.insert(l.id);
  for (const auto& [data_id, a] : acls_) garbage_.insert(a.id);
  return Status::OK();
}

// Uploads with a marker and no manifest naming them are in progress: they
// come back with their parts. Parts of no such upload and of no surviving
// object are garbage.
Status Rebuilder::WriteUploadsAndParts() {
  for (const auto& [upload_id, u] : uploads_) {
    if (completed_.count(upload_id)) {
      garbage_.insert(u.marker_id);  // completed; its marker was not collected yet
      continue;
    }
    NeedBucket(u.bucket, u.rec.initiated_ns);
    RETURN_IF_ERROR(Put(meta::UploadKey(u.bucket, u.key, upload_id), EncodeUploadRecord(u.rec)));
    ++report_.uploads;
  }
  for (const auto& [where, part] : parts_) {
    const std::string& id = part.rec.file_id;
    if (referenced_.count(id) || garbage_.count(id)) continue;
    auto upload = uploads_.find(where.first);
    if (upload != uploads_.end() && !completed_.count(where.first)) {
      RETURN_IF_ERROR(Put(meta::PartKey(where.first, where.second), EncodePartRecord(part.rec)));
      ++report_.parts;
    } else {
      garbage_.insert(id);
      ++report_.orphan_parts;
    }
  }
  return Status::OK();
}

Status Rebuilder::WriteBuckets() {
  for (const auto& [name, rec] : buckets_) {
    RETURN_IF_ERROR(Put(meta::BucketKey(name), EncodeBucketRecord(rec)));
    ++report_.buckets;
  }
  return Status::OK();
}

// What no surviving record references is garbage: collected through G
// records, exactly as the engine does at start-up.
Status Rebuilder::Write() {
  RETURN_IF_ERROR(WriteObjects());
  RETURN_IF_ERROR(WriteUploadsAndParts());
  RETURN_IF_ERROR(WriteBuckets());
  for (const std::string& id : garbage_) RETURN_IF_ERROR(Put(meta::GarbageKey(id), ""));
  Status st = kv_.Write(batch_, /*sync=*/true);
  batch_ = meta::WriteBatch();
  return st;
}

}  // namespace

Result<RebuildReport> RebuildIndex(storage::DataStore& store, meta::KvStore& kv,
                                   const std::function<void(uint64_t, uint64_t)>& progress) {
  auto it = kv.NewIterator();
  it->Seek("");
  if (it->Valid()) return PreconditionFailed("the metadata store is not empty");

  RebuildReport report;
  if (store.inline_max_bytes() != 0) {  // small objects exist only in the lost metadata
    return NotImplemented("this data store keeps small objects only in the metadata; "
                          "rebuild-index needs an erasure-coded pool");
  }
  ASSIGN_OR_RETURN(auto ids, store.ListIds());
  Rebuilder rebuilder(kv, report);
  for (const std::string& id : ids) {
    if (++report.ids_scanned % 256 == 0 && progress) progress(report.ids_scanned, ids.size());
    auto ht = store.ReadHeaderAndTrailer(id);
    if (!ht.ok() && ht.status().code() == Code::kNotFound) {  // removed (a tombstone covers it)
      rebuilder.AddRemoved(id);
      continue;
    }
    auto trailer = ht.ok() ? DecodeTrailer(ht->second) : std::nullopt;
    if (!trailer || !rebuilder.Add(id, ht->first, trailer->first, trailer->second)) {
      ++report.unreadable;
      STRATA_LOG("rebuild: %s has no readable header/trailer; kept (%s)", id.c_str(),
                 ht.ok() ? "unknown trailer" : ht.status().ToString().c_str());
    }
  }
  if (progress) progress(ids.size(), ids.size());
  RETURN_IF_ERROR(rebuilder.Write());
  // The latest-version entries, from the versions just written: a rebuilt
  // index is whole, listing included (object/latest_index.h).
  RETURN_IF_ERROR(LatestIndex::Open(&kv).status());
  return report;
}

}  // namespace strata::object

// Multipart uploads: parts are written to their own data files and recorded
// under P<upload id><part number>; completing writes one object record that
// lists the part files in order (no data is copied).
#include <algorithm>

#include "common/encoding.h"
#include "common/hash.h"
#include "crypto/chunk_cipher.h"
#include "meta/keys.h"
#include "object/lock.h"
#include "object/engine.h"

namespace strata::object {

namespace {
// Upload ids: 8-byte big-endian creation stamp + 8 random bytes, in hex, so
// that within one key the ids sort in the order the uploads were created.
std::string NewUploadId(uint64_t stamp) {
  std::string raw;
  PutFixed64BE(&raw, stamp);
  raw += RandomBytes(8);
  return HexEncode(raw);
}

bool IsUploadId(const std::string& id) {
  return id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// Whether `rec` is what completing `upload_id` with `wanted` produced: made
// by that upload, from the same parts (by ETag, in order).
bool CompletedFrom(const ObjectRecord& rec, const std::string& upload_id,
                   const std::vector<CompletePart>& wanted) {
  if (rec.upload_id.empty() || rec.upload_id != upload_id || rec.parts.size() != wanted.size()) {
    return false;
  }
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (rec.parts[i].etag != wanted[i].etag) return false;
  }
  return true;
}
}  // namespace

Result<std::string> ObjectEngine::CreateUpload(const std::string& bucket, const std::string& key,
                                               UploadRecord record,
                                               std::string_view customer_key) {
  if (record.sse.mode == SseMode::kCustomer) {
    if (customer_key.size() != crypto::kDataKeyBytes) {
      return InvalidArgument("an SSE-C upload needs the customer's 32-byte key");
    }
    record.sse.salt = RandomBytes(crypto::kSaltBytes);
    record.sse.key_digest = crypto::CustomerKeyDigest(record.sse.salt, customer_key);
  }
  std::shared_lock bucket_lock(BucketLock(bucket));
  if (!PoolStore(record.pool)) return InvalidArgument("no pool named " + record.pool);
  ASSIGN_OR_RETURN(BucketRecord b, GetBucket(bucket));
  if (record.lock && !b.object_lock) {
    return PreconditionFailed(Detail::kBucketState, "bucket " + bucket + " has no Object Lock");
  }
  record.initiated_ns = NowNs();
  std::string id = NewUploadId(NextVersionStamp());
  meta::WriteBatch batch;
  if (SelfDescribing()) {
    // The upload's marker: rebuild-index restores uploads in progress (and
    // their parts) from it. Collected with the upload (DropUpload).
    std::string marker = UploadMarkerId(id);
    storage::DataHeader header{bucket, key, id, 0, NextVersionStamp()};
    RETURN_IF_ERROR(WriteRecordPiece(marker, header,
                                     EncodeTrailer(TrailerKind::kUpload, EncodeUploadRecord(record)),
                                     /*intent=*/true));
    batch.Delete(meta::IntentKey(marker));
  }
  batch.Put(meta::UploadKey(bucket, key, id), EncodeUploadRecord(record));
  RETURN_IF_ERROR(kv_->Write(std::move(batch), /*sync=*/true));
  return id;
}

Result<UploadRecord> ObjectEngine::GetUpload(const std::string& bucket, const std::string& key,
                                             const std::string& upload_id) {
  if (!IsUploadId(upload_id)) return NotFound(Detail::kUpload, "upload " + upload_id);
  ASSIGN_OR_RETURN(auto value, kv_->Get(meta::UploadKey(bucket, key, upload_id)));
  if (!value) return NotFound(Detail::kUpload, "upload " + upload_id);
  auto rec = DecodeUploadRecord(*value);
  if (!rec) return Corruption("undecodable upload record " + upload_id);
  return *rec;
}

Result<std::unique_ptr<ObjectWriter>> ObjectEngine::NewPartWriter(const std::string& bucket,
                                                                  const std::string& key,
                                                                  const std::string& upload_id,
                                                                  uint32_t part_number,
                                                                  std::string_view data_key) {
  ASSIGN_OR_RETURN(UploadRecord upload, GetUpload(bucket, key, upload_id));
  storage::DataStore* store = PoolStore(upload.pool);
  if (!store) return Unavailable("the upload's pool " + upload.pool + " is not configured");
  auto writer = std::unique_ptr<ObjectWriter>(new ObjectWriter(this, bucket, key, {}));
  writer->pool_ = upload.pool;
  writer->store_ = store;
  writer->upload_id_ = upload_id;
  writer->part_number_ = part_number;
  writer->version_stamp_ = NextVersionStamp();
  writer->mtime_ns_ = NowNs();
  if (upload.sse.on()) {
    if (data_key.empty()) {
      return Status(Code::kPreconditionFailed, "the upload is encrypted: its key is needed",
                    Detail::kSseKey);
    }
    if (data_key.size() != crypto::kDataKeyBytes ||
        (upload.sse.mode == SseMode::kCustomer &&
         crypto::CustomerKeyDigest(upload.sse.salt, data_key) != upload.sse.key_digest)) {
      return Status(Code::kPermissionDenied, "not the key the upload was created with",
                    Detail::kSseKey);
    }
    writer->StartEncryption(upload.sse, data_key);  // the part's own salt
  }
  return writer;
}

Status ObjectEngine::CommitPart(const std::string& bucket, const std::string& key,
                                const std::string& upload_id, uint32_t part_number,
                                PartRecord part) {
  std::lock_guard lock(UploadLock(upload_id));
  // A part racing an abort or complete loses: the upload must still exist.
  RETURN_IF_ERROR(GetUpload(bucket, key, upload_id).status());
  std::string part_key = meta::PartKey(upload_id, part_number);
  ASSIGN_OR_RETURN(auto old, kv_->Get(part_key));
  std::string replaced;
  if (old) {
    auto rec = DecodePartRecord(*old);
    if (!rec) return Corruption("undecodable part record");
    replaced = rec->file_id;
  }
  meta::WriteBatch batch;
  batch.Put(part_key, EncodePartRecord(part));
  batch.Delete(meta::IntentKey(part.file_id));
  if (!replaced.empty()) batch.Put(meta::GarbageKey(replaced), "");
  RETURN_IF_ERROR(kv_->Write(std::move(batch), /*sync=*/true));
  if (!replaced.empty()) CollectGarbage(replaced);
  return Status::OK();
}

Result<std::vector<PartInfo>> ObjectEngine::ListParts(const std::string& upload_id) {
  std::vector<PartInfo> parts;
  std::string prefix = meta::PartPrefix(upload_id);
  auto it = kv_->NewIterator();
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (it->key().size() != prefix.size() + 4) continue;
    auto rec = DecodePartRecord(it->value());
    if (!rec) return Corruption("undecodable part record");
    parts.push_back({meta::ParsePartNumber(it->key()), std::move(*rec)});
  }
  RETURN_IF_ERROR(it->status());
  return parts;
}

Result<std::vector<std::string>> ObjectEngine::DropUpload(const std::string& bucket,
                                                          const std::string& key,
                                                          const std::string& upload_id,
                                                          meta::WriteBatch* batch) {
  ASSIGN_OR_RETURN(auto parts, ListParts(upload_id));
  std::vector<std::string> files;
  batch->Delete(meta::UploadKey(bucket, key, upload_id));
  for (const PartInfo& p : parts) {
    batch->Delete(meta::PartKey(upload_id, p.part_number));
    files.push_back(p.record.file_id);
  }
  if (SelfDescribing()) files.push_back(UploadMarkerId(upload_id));  // NotFound if none: fine
  return files;
}

Status ObjectEngine::AbortUpload(const std::string& bucket, const std::string& key,
                                 const std::string& upload_id) {
  std::lock_guard lock(UploadLock(upload_id));
  RETURN_IF_ERROR(GetUpload(bucket, key, upload_id).status());
  meta::WriteBatch batch;
  ASSIGN_OR_RETURN(auto files, DropUpload(bucket, key, upload_id, &batch));
  for (const std::string& f : files) batch.Put(meta::GarbageKey(f), "");
  RETURN_IF_ERROR(kv_->Write(std::move(batch), /*sync=*/true));
  for (const std::string& f : files) CollectGarbage(f);
  return Status::OK();
}

Result<ObjectRecord> ObjectEngine::CompleteUpload(
    const std::string& bucket, const std::string& key, const std::string& upload_id,
    const std::vector<CompletePart>& wanted, CompleteProblem* problem,
    const std::function<Status(const std::optional<ObjectRecord>&)>& check,
    const std::function<Result<std::string>(const ObjectRecord&)>& object_checksum) {
  *problem = CompleteProblem::kNone;
  std::shared_lock bucket_lock(BucketLock(bucket));
  std::lock_guard key_lock(KeyLock(bucket, key));
  std::lock_guard upload_lock(UploadLock(upload_id));
  auto found_upload = GetUpload(bucket, key, upload_id);
  if (!found_upload.ok()) {
    // A retried Complete (the first response was lost) finds the upload gone
    // and the object it made: answer with that object, as AWS does.
    if (found_upload.status().code() == Code::kNotFound) {
      ASSIGN_OR_RETURN(auto latest, LatestVersion(bucket, key));
      if (latest && CompletedFrom(latest->second, upload_id, wanted)) return latest->second;
    }
    return found_upload.status();
  }
  UploadRecord upload = std::move(found_upload).value();
  ASSIGN_OR_RETURN(auto stored, ListParts(upload_id));
  if (wanted.empty()) {
    *problem = CompleteProblem::kInvalidPart;
    return InvalidArgument("no parts given");
  }
  ObjectRecord rec;
  rec.is_inline = false;
  std::string md5s;
  uint32_t previous = 0;
  for (size_t i = 0; i < wanted.size(); ++i) {
    const CompletePart& w = wanted[i];
    if (i > 0 && w.part_number <= previous) {
      *problem = CompleteProblem::kInvalidPartOrder;
      return InvalidArgument("parts must be in ascending order");
    }
    previous = w.part_number;
    auto found = std::find_if(stored.begin(), stored.end(),
                              [&](const PartInfo& p) { return p.part_number == w.part_number; });
    if (found == stored.end() || found->record.etag != w.etag) {
      *problem = CompleteProblem::kInvalidPart;
      return InvalidArgument("part " + std::to_string(w.part_number) + " not found or etag differs");
    }
    const PartRecord& p = found->record;
    if (i + 1 < wanted.size() && p.size_bytes < kMinPartBytes) {
      *problem = CompleteProblem::kEntityTooSmall;
      return InvalidArgument("part " + std::to_string(w.part_number) + " is smaller than 5 MiB");
    }
    rec.parts.push_back({p.file_id, p.size_bytes, p.etag, p.checksum, p.salt});
    rec.size_bytes += p.size_bytes;
    md5s += *HexDecode(p.etag);
  }
  StreamHash md5(StreamHash::Kind::kMd5);
  md5.Update(md5s.data(), md5s.size());
  rec.etag = HexEncode(md5.Final()) + "-" + std::to_string(wanted.size());
  rec.headers = upload.headers;
  rec.tags = upload.tags;
  rec.storage_class = upload.storage_class;
  rec.pool = upload.pool;
  rec.owner = upload.object_owner;
  rec.acl = upload.acl;
  rec.sse = upload.sse;  // salt: the upload's (key_digest's); each part has its own
  rec.checksum_algorithm = upload.checksum_algorithm;
  rec.checksum_type = upload.checksum_type;
  rec.upload_id = upload_id;
  if (object_checksum) {
    ASSIGN_OR_RETURN(rec.checksum_value, object_checksum(rec));
  }
  rec.version_stamp = NextVersionStamp();
  rec.mtime_ns = NowNs();
  ASSIGN_OR_RETURN(BucketRecord b, GetBucket(bucket));
  rec.versioned = b.versioning == Versioning::kEnabled;
  rec.lock = InitialLock(b, upload.lock, rec.mtime_ns);
  meta::WriteBatch batch;
  if (SelfDescribing()) {
    // The manifest: the finished record on the drives, for rebuild-index;
    // its header names the upload, which is thereby known to be complete.
    rec.file_id = NewFileId();
    storage::DataHeader header{bucket, key, upload_id, 0, rec.version_stamp};
    RETURN_IF_ERROR(WriteRecordPiece(rec.file_id, header,
                                     EncodeTrailer(TrailerKind::kManifest, EncodeObjectRecord(rec)),
                                     /*intent=*/true));
    batch.Delete(meta::IntentKey(rec.file_id));
  }

  // Parts uploaded but not named in the list become garbage.
  ASSIGN_OR_RETURN(auto files, DropUpload(bucket, key, upload_id, &batch));
  std::vector<std::string> unused;
  for (const std::string& f : files) {
    bool used = std::any_of(rec.parts.begin(), rec.parts.end(),
                            [&](const PartRef& p) { return p.file_id == f; });
    if (!used) unused.push_back(f);
  }
  Status st = CommitVersionLocked(bucket, key, rec, check, std::move(batch), unused);
  if (!st.ok()) {
    if (!rec.file_id.empty()) CollectGarbage(rec.file_id);  // the manifest
    return st;
  }
  return rec;
}

Result<ListUploadsResult> ObjectEngine::ListUploads(const std::string& bucket,
                                                    const ListUploadsParams& params) {
  ASSIGN_OR_RETURN(auto b, kv_->Get(meta::BucketKey(bucket)));
  if (!b) return NotFound(Detail::kBucket, "bucket " + bucket);
  ListUploadsResult result;
  if (params.max_uploads <= 0) return result;
  const std::string prefix = meta::UploadPrefix(bucket);
  std::string start = std::max(params.prefix, params.key_marker);
  auto it = kv_->NewIterator();
  it->Seek(prefix + start);
  int emitted = 0;
  while (it->Valid() && it->key().starts_with(prefix)) {
    std::string parsed_bucket, key, id;
    if (!meta::ParseUploadKey(it->key(), &parsed_bucket, &key, &id)) {
      return Corruption("bad upload key");
    }
    if (!key.starts_with(params.prefix)) break;
    // key-marker alone: uploads of keys after it; with upload-id-marker:
    // also uploads of that key with a greater id.
    bool after_marker = params.key_marker.empty() || key > params.key_marker ||
                        (key == params.key_marker && !params.upload_id_marker.empty() &&
                         id > params.upload_id_marker);
    if (!after_marker) {
      it->Next();
      continue;
    }
    size_t pos = params.delimiter.empty() ? std::string::npos
                                          : key.find(params.delimiter, params.prefix.size());
    if (pos != std::string::npos) {
      std::string common = key.substr(0, pos + params.delimiter.size());
      if (emitted == params.max_uploads) {
        result.is_truncated = true;
        break;
      }
      if (common > params.key_marker) {
        result.common_prefixes.push_back(common);
        result.next_key_marker = common;
        result.next_upload_id_marker.clear();
        ++emitted;
      }
      it->Seek(prefix + common + '\xff');
      continue;
    }
    if (emitted == params.max_uploads) {
      result.is_truncated = true;
      break;
    }
    auto rec = DecodeUploadRecord(it->value());
    if (!rec) return Corruption("undecodable upload record");
    result.uploads.push_back({key, id, std::move(*rec)});
    result.next_key_marker = key;
    result.next_upload_id_marker = id;
    ++emitted;
    it->Next();
  }
  RETURN_IF_ERROR(it->status());
  return result;
}

}  // namespace strata::object

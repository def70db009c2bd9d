#include "object/record.h"

#include <cstdint>

#include "common/encoding.h"
#include "common/hash.h"
#include "meta/keys.h"
#include "crypto/chunk_cipher.h"

namespace strata::object {

namespace {
// 1 = without the extension fields, 2 = without upload_id, 3 = without the
// lock fields, 4 = without owner and ACL
constexpr char kObjectFormat = 7;  // 7: the pool
constexpr char kUploadFormat = 5;  // 1 = without the lock, 2 = without the ACL, 3 = without SSE, 4 = without the pool
constexpr char kPartFormat = 2;  // 1 = without the salt
// 1 = without tags, 2 = without versioning and lock, 3 = without policy, 4 = without ownership / ACL
constexpr char kBucketFormat = 8;  // 8: notification and logging configurations
constexpr char kTagsFormat = 1;
constexpr char kLockFormat = 1;
constexpr char kAclFormat = 1;
constexpr uint64_t kFlagInline = 1;
constexpr uint64_t kFlagTagsOnDrives = 2;  // older decoders ignore it (they read flags & 1)
constexpr uint64_t kFlagVersioned = 4;     // format 4
constexpr uint64_t kFlagDeleteMarker = 8;  // format 4
constexpr uint64_t kFlagLockOnDrives = 16; // format 4
constexpr uint64_t kFlagAclOnDrives = 32;  // format 5
constexpr uint64_t kKnownFlags = 63;

}  // namespace

bool CustomerKeyMatches(const Encryption& sse, std::string_view key) {
  return sse.mode == SseMode::kCustomer && !sse.key_digest.empty() &&
         crypto::CustomerKeyDigest(sse.salt, key) == sse.key_digest;
}

namespace {

void PutEncryption(std::string* out, const Encryption& e) {
  out->push_back(static_cast<char>(e.mode));
  if (e.mode == SseMode::kNone) return;
  PutLengthPrefixed(out, e.wrapped_key);
  PutLengthPrefixed(out, e.key_arn);
  PutLengthPrefixed(out, e.context);
  out->push_back(e.bucket_key ? 1 : 0);
  PutLengthPrefixed(out, e.key_digest);
  PutLengthPrefixed(out, e.salt);
}

bool GetEncryption(std::string_view* in, Encryption* e) {
  if (in->empty() || static_cast<uint8_t>((*in)[0]) > static_cast<uint8_t>(SseMode::kCustomer)) {
    return false;
  }
  e->mode = static_cast<SseMode>((*in)[0]);
  in->remove_prefix(1);
  if (e->mode == SseMode::kNone) return true;
  std::string_view wrapped, arn, context, digest, salt;
  if (!GetLengthPrefixed(in, &wrapped) || !GetLengthPrefixed(in, &arn) ||
      !GetLengthPrefixed(in, &context) || in->empty() || static_cast<uint8_t>((*in)[0]) > 1) {
    return false;
  }
  e->bucket_key = (*in)[0] == 1;
  in->remove_prefix(1);
  if (!GetLengthPrefixed(in, &digest) || !GetLengthPrefixed(in, &salt)) return false;
  e->wrapped_key = wrapped;
  e->key_arn = arn;
  e->context = context;
  e->key_digest = digest;
  e->salt = salt;
  return true;
}

void PutLock(std::string* out, const ObjectLock& lock) {
  out->push_back(static_cast<char>(lock.mode));
  PutVarint64(out, static_cast<uint64_t>(lock.retain_until_ns));
  out->push_back(static_cast<char>(lock.legal_hold));
}

bool GetLock(std::string_view* in, ObjectLock* lock) {
  if (in->empty() || static_cast<uint8_t>((*in)[0]) > 2) return false;
  lock->mode = static_cast<LockMode>((*in)[0]);
  in->remove_prefix(1);
  uint64_t until;
  if (!GetVarint64(in, &until) || in->empty() || static_cast<uint8_t>((*in)[0]) > 2) return false;
  lock->retain_until_ns = static_cast<int64_t>(until);
  lock->legal_hold = static_cast<LegalHold>((*in)[0]);
  in->remove_prefix(1);
  return (lock->mode == LockMode::kNone) == (lock->retain_until_ns == 0);
}

bool GetString(std::string_view* in, std::string* out) {
  std::string_view s;
  if (!GetLengthPrefixed(in, &s)) return false;
  out->assign(s);
  return true;
}

void PutHeaders(std::string* out, const ObjectHeaders& h) {
  for (const std::string* s : {&h.content_type, &h.content_encoding, &h.content_disposition,
                               &h.content_language, &h.cache_control, &h.expires}) {
    PutLengthPrefixed(out, *s);
  }
  PutVarint64(out, h.user_metadata.size());
  for (const auto& [name, value] : h.user_metadata) {
    PutLengthPrefixed(out, name);
    PutLengthPrefixed(out, value);
  }
}

bool GetPairs(std::string_view* in, std::vector<std::pair<std::string, std::string>>* out) {
  uint64_t count;
  if (!GetVarint64(in, &count) || count > in->size()) return false;
  for (uint64_t i = 0; i < count; ++i) {
    std::string name, value;
    if (!GetString(in, &name) || !GetString(in, &value)) return false;
    out->emplace_back(std::move(name), std::move(value));
  }
  return true;
}

void PutPairs(std::string* out, const std::vector<std::pair<std::string, std::string>>& pairs) {
  PutVarint64(out, pairs.size());
  for (const auto& [name, value] : pairs) {
    PutLengthPrefixed(out, name);
    PutLengthPrefixed(out, value);
  }
}

bool GetHeaders(std::string_view* in, ObjectHeaders* h) {
  for (std::string* s : {&h->content_type, &h->content_encoding, &h->content_disposition,
                         &h->content_language, &h->cache_control, &h->expires}) {
    if (!GetString(in, s)) return false;
  }
  return GetPairs(in, &h->user_metadata);
}
}  // namespace

std::vector<std::string> ObjectRecord::DataFiles() const {
  std::vector<std::string> files;
  if (!is_inline && !file_id.empty()) files.push_back(file_id);
  for (const PartRef& p : parts) files.push_back(p.file_id);
  if (tags_on_drives && !file_id.empty()) files.push_back(TagsRecordId(file_id));
  if (lock_on_drives && !file_id.empty()) files.push_back(LockRecordId(file_id));
  if (acl_on_drives && !file_id.empty()) files.push_back(AclRecordId(file_id));
  for (const std::string& f : restore.files) files.push_back(f);
  return files;
}

std::string ObjectRecord::VersionId() const {
  return versioned ? VersionIdOf(version_stamp) : std::string("null");
}

std::string VersionIdOf(uint64_t stamp) { return meta::StampVersionId(stamp); }

std::optional<VersionSelector> ParseVersionId(std::string_view id) {
  if (id == "null") return VersionSelector{true, 0};
  if (id.size() != 16) return std::nullopt;
  uint64_t inverted = 0;
  for (char c : id) {
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    inverted = inverted << 4 | static_cast<uint64_t>(v);
  }
  return VersionSelector{false, ~inverted};
}

std::string LockRecordId(const std::string& data_id) {
  return Sha256Hex("lock/" + data_id).substr(0, 32);
}

std::string EncodeLockRecord(const LockRecord& r) {
  std::string out(1, kLockFormat);
  PutLengthPrefixed(&out, r.data_id);
  PutVarint64(&out, r.version_stamp);
  PutLock(&out, r.lock);
  return out;
}

std::optional<LockRecord> DecodeLockRecord(std::string_view in) {
  if (in.empty() || in[0] != kLockFormat) return std::nullopt;
  in.remove_prefix(1);
  LockRecord r;
  if (!GetString(&in, &r.data_id) || !GetVarint64(&in, &r.version_stamp) ||
      !GetLock(&in, &r.lock) || !in.empty()) {
    return std::nullopt;
  }
  return r;
}

std::string AclRecordId(const std::string& data_id) {
  return Sha256Hex("acl/" + data_id).substr(0, 32);
}

std::string EncodeAclRecord(const AclRecord& r) {
  std::string out(1, kAclFormat);
  PutLengthPrefixed(&out, r.data_id);
  PutVarint64(&out, r.version_stamp);
  PutLengthPrefixed(&out, r.owner);
  PutLengthPrefixed(&out, r.acl);
  return out;
}

std::optional<AclRecord> DecodeAclRecord(std::string_view in) {
  if (in.empty() || in[0] != kAclFormat) return std::nullopt;
  in.remove_prefix(1);
  AclRecord r;
  if (!GetString(&in, &r.data_id) || !GetVarint64(&in, &r.version_stamp) ||
      !GetString(&in, &r.owner) || !GetString(&in, &r.acl) || !in.empty()) {
    return std::nullopt;
  }
  return r;
}

std::string TagsRecordId(const std::string& data_id) {
  return Sha256Hex("tags/" + data_id).substr(0, 32);
}

std::string UploadMarkerId(const std::string& upload_id) {
  return Sha256Hex("upload/" + upload_id).substr(0, 32);
}

std::string EncodeTagsRecord(const TagsRecord& r) {
  std::string out(1, kTagsFormat);
  PutLengthPrefixed(&out, r.data_id);
  PutVarint64(&out, r.version_stamp);
  PutPairs(&out, r.tags);
  return out;
}

std::optional<TagsRecord> DecodeTagsRecord(std::string_view in) {
  if (in.empty() || in[0] != kTagsFormat) return std::nullopt;
  in.remove_prefix(1);
  TagsRecord r;
  if (!GetString(&in, &r.data_id) || !GetVarint64(&in, &r.version_stamp) ||
      !GetPairs(&in, &r.tags) || !in.empty()) {
    return std::nullopt;
  }
  return r;
}

std::string EncodeTrailer(TrailerKind kind, std::string_view payload) {
  std::string out(1, static_cast<char>(kind));
  out.append(payload);
  return out;
}

std::optional<std::pair<TrailerKind, std::string_view>> DecodeTrailer(std::string_view trailer) {
  if (trailer.empty()) return std::nullopt;
  char k = trailer[0];
  if (k != 'O' && k != 'P' && k != 'M' && k != 'B' && k != 'U' && k != 'T' && k != 'L' &&
      k != 'A') {
    return std::nullopt;
  }
  return std::make_pair(static_cast<TrailerKind>(k), trailer.substr(1));
}

std::string SealIdentity(std::string_view bucket, std::string_view key) {
  std::string id(bucket);
  id.push_back('\0');
  id.append(key);
  return id;
}

std::string EncodeObjectRecord(const ObjectRecord& r) {
  std::string out;
  out.push_back(kObjectFormat);
  PutVarint64(&out, (r.is_inline ? kFlagInline : 0) | (r.tags_on_drives ? kFlagTagsOnDrives : 0) |
                        (r.versioned ? kFlagVersioned : 0) |
                        (r.delete_marker ? kFlagDeleteMarker : 0) |
                        (r.lock_on_drives ? kFlagLockOnDrives : 0) |
                        (r.acl_on_drives ? kFlagAclOnDrives : 0));
  PutVarint64(&out, r.size_bytes);
  PutLengthPrefixed(&out, r.etag);
  PutVarint64(&out, static_cast<uint64_t>(r.mtime_ns));
  PutVarint64(&out, r.version_stamp);
  PutHeaders(&out, r.headers);
  PutLengthPrefixed(&out, r.is_inline ? r.inline_data : r.file_id);
  // Format 2 extension.
  PutVarint64(&out, r.parts.size());
  for (const PartRef& p : r.parts) {
    PutLengthPrefixed(&out, p.file_id);
    PutVarint64(&out, p.size_bytes);
    PutLengthPrefixed(&out, p.etag);
    PutLengthPrefixed(&out, p.checksum);
  }
  PutLengthPrefixed(&out, r.checksum_algorithm);
  PutLengthPrefixed(&out, r.checksum_value);
  PutLengthPrefixed(&out, r.checksum_type);
  PutPairs(&out, r.tags);
  PutLengthPrefixed(&out, r.storage_class);
  // Format 3 extension.
  PutLengthPrefixed(&out, r.upload_id);
  // Format 4 extension.
  PutLock(&out, r.lock);
  // Format 5 extension.
  PutLengthPrefixed(&out, r.owner);
  PutLengthPrefixed(&out, r.acl);
  // Format 6 extension: the encryption, then each part's salt.
  PutEncryption(&out, r.sse);
  if (r.sse.on()) {
    for (const PartRef& p : r.parts) PutLengthPrefixed(&out, p.salt);
  }
  PutLengthPrefixed(&out, r.pool);  // format 7
  out.push_back(r.restore.ongoing ? 1 : 0);
  PutVarint64(&out, r.restore.days);
  PutVarint64(&out, static_cast<uint64_t>(r.restore.expiry_ns));
  PutLengthPrefixed(&out, r.restore.pool);
  PutVarint64(&out, r.restore.files.size());
  for (const std::string& f : r.restore.files) PutLengthPrefixed(&out, f);
  return out;
}

namespace {
std::optional<ObjectRecord> DecodeRecord(std::string_view in, bool listed);
}  // namespace

std::optional<ObjectRecord> DecodeObjectRecord(std::string_view in) {
  return DecodeRecord(in, /*listed=*/false);
}

std::string EncodeListedRecord(ObjectRecord r) {
  r.inline_data.clear();
  return EncodeObjectRecord(r);
}

std::optional<ObjectRecord> DecodeListedRecord(std::string_view in) {
  return DecodeRecord(in, /*listed=*/true);
}

namespace {
std::optional<ObjectRecord> DecodeRecord(std::string_view in, bool listed) {
  if (in.empty() || in[0] < 1 || in[0] > kObjectFormat) return std::nullopt;
  const char format = in[0];
  const bool extended = format >= 2;
  in.remove_prefix(1);
  ObjectRecord r;
  uint64_t flags, mtime;
  if (!GetVarint64(&in, &flags) || !GetVarint64(&in, &r.size_bytes) || !GetString(&in, &r.etag) ||
      !GetVarint64(&in, &mtime) || !GetVarint64(&in, &r.version_stamp)) {
    return std::nullopt;
  }
  r.mtime_ns = static_cast<int64_t>(mtime);
  r.is_inline = flags & kFlagInline;
  r.tags_on_drives = flags & kFlagTagsOnDrives;
  if (format >= 4) {
    if (flags & ~kKnownFlags) return std::nullopt;
    r.versioned = flags & kFlagVersioned;
    r.delete_marker = flags & kFlagDeleteMarker;
    r.lock_on_drives = flags & kFlagLockOnDrives;
    r.acl_on_drives = flags & kFlagAclOnDrives;
    if (format < 5 && r.acl_on_drives) return std::nullopt;
  }
  if (!GetHeaders(&in, &r.headers)) return std::nullopt;
  if (!GetString(&in, r.is_inline ? &r.inline_data : &r.file_id)) return std::nullopt;
  if (extended) {
    uint64_t count;
    if (!GetVarint64(&in, &count) || count > in.size()) return std::nullopt;
    for (uint64_t i = 0; i < count; ++i) {
      PartRef p;
      if (!GetString(&in, &p.file_id) || !GetVarint64(&in, &p.size_bytes) ||
          !GetString(&in, &p.etag) || !GetString(&in, &p.checksum)) {
        return std::nullopt;
      }
      r.parts.push_back(std::move(p));
    }
    if (!GetString(&in, &r.checksum_algorithm) || !GetString(&in, &r.checksum_value) ||
        !GetString(&in, &r.checksum_type) || !GetPairs(&in, &r.tags) ||
        !GetString(&in, &r.storage_class)) {
      return std::nullopt;
    }
  }
  if (format >= 3 && !GetString(&in, &r.upload_id)) return std::nullopt;
  if (format >= 4 && !GetLock(&in, &r.lock)) return std::nullopt;
  if (format >= 5 && (!GetString(&in, &r.owner) || !GetString(&in, &r.acl))) return std::nullopt;
  if (format >= 6) {
    if (!GetEncryption(&in, &r.sse)) return std::nullopt;
    if (r.sse.on()) {
      for (PartRef& p : r.parts) {
        if (!GetString(&in, &p.salt)) return std::nullopt;
      }
    }
  }
  if (format >= 7) {
    uint64_t days, expiry, count;
    if (!GetString(&in, &r.pool) || in.empty() || static_cast<uint8_t>(in[0]) > 1) {
      return std::nullopt;
    }
    r.restore.ongoing = in[0] == 1;
    in.remove_prefix(1);
    if (!GetVarint64(&in, &days) || days > UINT32_MAX || !GetVarint64(&in, &expiry) ||
        !GetString(&in, &r.restore.pool) || !GetVarint64(&in, &count) || count > in.size()) {
      return std::nullopt;
    }
    r.restore.days = static_cast<uint32_t>(days);
    r.restore.expiry_ns = static_cast<int64_t>(expiry);
    for (uint64_t i = 0; i < count; ++i) {
      std::string f;
      if (!GetString(&in, &f)) return std::nullopt;
      r.restore.files.push_back(std::move(f));
    }
    // A copy is of the data files (none for inline data and markers), one
    // per file; an ongoing restore has no copy yet.
    const size_t data_files = r.is_inline || r.delete_marker ? 0
                              : r.parts.empty()               ? 1
                                                              : r.parts.size();
    if ((!r.restore.files.empty() && r.restore.files.size() != data_files) ||
        (r.restore.ongoing && (!r.restore.files.empty() || r.restore.expiry_ns != 0))) {
      return std::nullopt;
    }
  }
  if (!in.empty()) return std::nullopt;
  // Inline data is stored as written: sealed chunks when encrypted.
  const uint64_t stored = r.sse.on() ? crypto::SealedSize(r.size_bytes) : r.size_bytes;
  if (r.is_inline && r.inline_data.size() != (listed ? 0 : stored)) return std::nullopt;
  return r;
}
}  // namespace

std::string EncodeUploadRecord(const UploadRecord& r) {
  std::string out(1, kUploadFormat);
  PutVarint64(&out, static_cast<uint64_t>(r.initiated_ns));
  PutHeaders(&out, r.headers);
  PutLengthPrefixed(&out, r.checksum_algorithm);
  PutLengthPrefixed(&out, r.checksum_type);
  PutPairs(&out, r.tags);
  PutLengthPrefixed(&out, r.storage_class);
  PutLengthPrefixed(&out, r.owner);
  out.push_back(r.lock ? 1 : 0);  // format 2
  if (r.lock) PutLock(&out, *r.lock);
  PutLengthPrefixed(&out, r.object_owner);  // format 3
  PutLengthPrefixed(&out, r.acl);
  PutEncryption(&out, r.sse);  // format 4
  PutLengthPrefixed(&out, r.pool);  // format 5
  return out;
}

std::optional<UploadRecord> DecodeUploadRecord(std::string_view in) {
  if (in.empty() || in[0] < 1 || in[0] > kUploadFormat) return std::nullopt;
  const char format = in[0];
  in.remove_prefix(1);
  UploadRecord r;
  uint64_t initiated;
  if (!GetVarint64(&in, &initiated) || !GetHeaders(&in, &r.headers) ||
      !GetString(&in, &r.checksum_algorithm) || !GetString(&in, &r.checksum_type) ||
      !GetPairs(&in, &r.tags) || !GetString(&in, &r.storage_class) ||
      !GetString(&in, &r.owner)) {
    return std::nullopt;
  }
  if (format >= 2) {
    if (in.empty() || static_cast<uint8_t>(in[0]) > 1) return std::nullopt;
    const bool has_lock = in[0] == 1;
    in.remove_prefix(1);
    if (has_lock) {
      ObjectLock lock;
      if (!GetLock(&in, &lock)) return std::nullopt;
      r.lock = lock;
    }
  }
  if (format >= 3 && (!GetString(&in, &r.object_owner) || !GetString(&in, &r.acl))) {
    return std::nullopt;
  }
  if (format >= 4 && !GetEncryption(&in, &r.sse)) return std::nullopt;
  if (format >= 5 && !GetString(&in, &r.pool)) return std::nullopt;
  if (!in.empty()) return std::nullopt;
  r.initiated_ns = static_cast<int64_t>(initiated);
  return r;
}

std::string EncodePartRecord(const PartRecord& r) {
  std::string out(1, kPartFormat);
  PutVarint64(&out, r.size_bytes);
  PutLengthPrefixed(&out, r.etag);
  PutVarint64(&out, static_cast<uint64_t>(r.mtime_ns));
  PutLengthPrefixed(&out, r.file_id);
  PutLengthPrefixed(&out, r.checksum);
  PutLengthPrefixed(&out, r.salt);  // format 2
  return out;
}

std::optional<PartRecord> DecodePartRecord(std::string_view in) {
  if (in.empty() || in[0] < 1 || in[0] > kPartFormat) return std::nullopt;
  const char format = in[0];
  in.remove_prefix(1);
  PartRecord r;
  uint64_t mtime;
  if (!GetVarint64(&in, &r.size_bytes) || !GetString(&in, &r.etag) || !GetVarint64(&in, &mtime) ||
      !GetString(&in, &r.file_id) || !GetString(&in, &r.checksum)) {
    return std::nullopt;
  }
  if (format >= 2 && !GetString(&in, &r.salt)) return std::nullopt;
  if (!in.empty()) return std::nullopt;
  r.mtime_ns = static_cast<int64_t>(mtime);
  return r;
}

std::string EncodeBucketRecord(const BucketRecord& r) {
  std::string out;
  out.push_back(kBucketFormat);
  PutVarint64(&out, static_cast<uint64_t>(r.created_ns));
  PutLengthPrefixed(&out, r.region);
  PutLengthPrefixed(&out, r.owner);
  PutPairs(&out, r.tags);  // format 2
  // Format 3.
  out.push_back(static_cast<char>(r.versioning));
  out.push_back(r.object_lock ? 1 : 0);
  out.push_back(static_cast<char>(r.default_retention.mode));
  PutVarint64(&out, r.default_retention.days);
  PutVarint64(&out, r.default_retention.years);
  PutLengthPrefixed(&out, r.policy);  // format 4
  PutLengthPrefixed(&out, r.cors);
  out.push_back(static_cast<char>(r.public_access_block));
  out.push_back(static_cast<char>(r.ownership));  // format 5
  PutLengthPrefixed(&out, r.acl);
  out.push_back(static_cast<char>(r.default_sse));  // format 6
  PutLengthPrefixed(&out, r.default_kms_key);
  out.push_back(r.default_bucket_key ? 1 : 0);
  PutLengthPrefixed(&out, r.lifecycle);  // format 7
  PutVarint64(&out, r.lifecycle_min_transition_bytes);
  PutLengthPrefixed(&out, r.notification);  // format 8
  PutLengthPrefixed(&out, r.logging);
  return out;
}

std::optional<BucketRecord> DecodeBucketRecord(std::string_view in) {
  if (in.empty() || in[0] < 1 || in[0] > kBucketFormat) return std::nullopt;
  const char format = in[0];
  in.remove_prefix(1);
  BucketRecord r;
  uint64_t created;
  if (!GetVarint64(&in, &created) || !GetString(&in, &r.region) || !GetString(&in, &r.owner)) {
    return std::nullopt;
  }
  if (format >= 2 && !GetPairs(&in, &r.tags)) return std::nullopt;
  if (format >= 3) {
    uint64_t days, years;
    if (in.size() < 3 || static_cast<uint8_t>(in[0]) > 2 || static_cast<uint8_t>(in[1]) > 1 ||
        static_cast<uint8_t>(in[2]) > 2) {
      return std::nullopt;
    }
    r.versioning = static_cast<Versioning>(in[0]);
    r.object_lock = in[1] == 1;
    r.default_retention.mode = static_cast<LockMode>(in[2]);
    in.remove_prefix(3);
    if (!GetVarint64(&in, &days) || !GetVarint64(&in, &years) || days > UINT32_MAX ||
        years > UINT32_MAX) {
      return std::nullopt;
    }
    r.default_retention.days = static_cast<uint32_t>(days);
    r.default_retention.years = static_cast<uint32_t>(years);
  }
  if (format >= 4) {
    if (!GetString(&in, &r.policy) || !GetString(&in, &r.cors) || in.empty()) return std::nullopt;
    r.public_access_block = static_cast<uint8_t>(in[0]);
    in.remove_prefix(1);
  }
  if (format >= 5) {
    if (in.empty() || static_cast<uint8_t>(in[0]) > static_cast<uint8_t>(Ownership::kUnset)) {
      return std::nullopt;
    }
    r.ownership = static_cast<Ownership>(in[0]);
    in.remove_prefix(1);
    if (!GetString(&in, &r.acl)) return std::nullopt;
  }
  if (format >= 6) {
    if (in.empty() || (in[0] != 0 && in[0] != static_cast<char>(SseMode::kS3) &&
                       in[0] != static_cast<char>(SseMode::kKms))) {
      return std::nullopt;
    }
    r.default_sse = static_cast<SseMode>(in[0]);
    in.remove_prefix(1);
    if (!GetString(&in, &r.default_kms_key) || in.empty() || static_cast<uint8_t>(in[0]) > 1) {
      return std::nullopt;
    }
    r.default_bucket_key = in[0] == 1;
    in.remove_prefix(1);
  }
  if (format >= 7 && (!GetString(&in, &r.lifecycle) ||
                      !GetVarint64(&in, &r.lifecycle_min_transition_bytes))) {
    return std::nullopt;
  }
  if (format >= 8 && (!GetString(&in, &r.notification) || !GetString(&in, &r.logging))) {
    return std::nullopt;
  }
  if (!in.empty()) return std::nullopt;
  r.created_ns = static_cast<int64_t>(created);
  return r;
}

}  // namespace strata::object

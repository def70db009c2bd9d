// The metadata records the object engine stores in the KvStore, and their
// binary encoding (format documented in docs/formats/metadata-records.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::object {

// HTTP headers S3 stores with an object and returns on GET/HEAD.
struct ObjectHeaders {
  std::string content_type;
  std::string content_encoding;
  std::string content_disposition;
  std::string content_language;
  std::string cache_control;
  std::string expires;
  // x-amz-meta-* without the prefix, names lowercase, in request order.
  std::vector<std::pair<std::string, std::string>> user_metadata;
};

// Server-side encryption of a version (docs/formats/encryption.md). The
// data is stored in crypto/chunk_cipher.h's chunks under a data key: a fresh
// one per version (per upload) wrapped by the key service (SSE-S3, SSE-KMS),
// or the customer's own (SSE-C), of which only a salted digest is kept.
enum class SseMode : uint8_t { kNone = 0, kS3 = 1, kKms = 2, kCustomer = 3 };
struct Encryption {
  SseMode mode = SseMode::kNone;
  std::string wrapped_key;  // kS3, kKms: the data key as the key service wrapped it
  std::string key_arn;      // kKms: the master key's ARN
  std::string context;      // kKms: the encryption context (canonical JSON), also bound
  bool bucket_key = false;  // kKms: BucketKeyEnabled
  std::string key_digest;   // kCustomer: crypto::CustomerKeyDigest(salt, key)
  // The data file's salt (single-file and inline versions; a multipart
  // object's parts each have their own, PartRef::salt) and key_digest's.
  std::string salt;
  bool on() const { return mode != SseMode::kNone; }
  bool operator==(const Encryption&) const = default;
};

// What the encrypted chunks of an object are bound to (their associated
// data, crypto/chunk_cipher.h): bucket '\0' key.
std::string SealIdentity(std::string_view bucket, std::string_view key);

// SSE-C: whether `key` is the customer's key of `sse` (its salted digest).
bool CustomerKeyMatches(const Encryption& sse, std::string_view key);

// One part of a multipart object: its own data file, in order.
struct PartRef {
  std::string file_id;
  uint64_t size_bytes = 0;  // of plaintext
  std::string etag;      // hex MD5 of the part (SSE-C / SSE-KMS: masked, not its MD5)
  std::string checksum;  // base64, of the object's checksum algorithm ("" if none)
  std::string salt;      // encrypted objects: the part file's salt (format 6)
};

using Tags = std::vector<std::pair<std::string, std::string>>;

// Object Lock state of one version (issue 11). Retention is judged against
// the server's clock by object/lock.h, the one place that decides.
enum class LockMode : uint8_t { kNone = 0, kGovernance = 1, kCompliance = 2 };
enum class LegalHold : uint8_t { kUnset = 0, kOff = 1, kOn = 2 };
struct ObjectLock {
  LockMode mode = LockMode::kNone;
  int64_t retain_until_ns = 0;  // with mode != kNone
  LegalHold legal_hold = LegalHold::kUnset;
  bool operator==(const ObjectLock&) const = default;
};

// RestoreObject on a version in a cold pool (docs/tiers.md): a temporary
// copy of its data in another pool, readable until `expiry_ns`.
struct RestoreState {
  bool ongoing = false;  // requested, the copy not made yet
  uint32_t days = 0;     // how long the copy stays (from when it is made)
  int64_t expiry_ns = 0;  // the copy's end (0 while ongoing)
  std::string pool;       // where the copy is
  std::vector<std::string> files;  // the copy: one file, or one per part (in order)
  // A copy exists (inline versions: in the record) until expiry_ns.
  bool made() const { return !ongoing && expiry_ns != 0; }
  bool requested() const { return ongoing || made(); }
  bool operator==(const RestoreState&) const = default;
};

struct ObjectRecord {
  uint64_t size_bytes = 0;
  std::string etag;  // lowercase hex, no quotes
  int64_t mtime_ns = 0;
  uint64_t version_stamp = 0;  // also in the key (inverted); unique per write
  ObjectHeaders headers;
  // Exactly one of: inline data (small objects), a data file id, or parts.
  bool is_inline = true;
  std::string inline_data;
  std::string file_id;  // 32 hex chars; path objects/<id[0..2]>/<id>
  std::vector<PartRef> parts;  // multipart objects: the parts' files, in order
  // Additional checksum (x-amz-checksum-*): algorithm name as S3 spells it
  // ("CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"), base64 value, and
  // type ("FULL_OBJECT" or "COMPOSITE"); empty when none was stored.
  std::string checksum_algorithm;
  std::string checksum_value;
  std::string checksum_type;
  Tags tags;
  std::string storage_class;  // "" = STANDARD
  std::string upload_id;      // the multipart upload that completed into it ("" if none)
  // The tags were replaced after the write (PutObjectTagging) and the
  // current ones are also on the drives, in the tag record
  // TagsRecordId(file_id) (self-describing stores only; flag bit 1).
  bool tags_on_drives = false;
  // Versioning: false = the version "null" (written while the bucket was
  // never versioned or suspended; every record of formats 1-3). Flag bit 2.
  bool versioned = false;
  // A delete marker: no data (on self-describing stores an empty piece that
  // describes it). Flag bit 3.
  bool delete_marker = false;
  ObjectLock lock;  // format 4
  // The lock settings were changed after the write and the current ones are
  // also on the drives, in the lock record LockRecordId(file_id). Flag bit 4.
  bool lock_on_drives = false;
  // Format 5: the object's owner (canonical id; "" = the bucket's owner) and
  // its ACL (auth/acl.h's encoding; "" = the owner's FULL_CONTROL only).
  // Set from the write's options; changed by PutObjectAcl (then also in the
  // version's ACL record on the drives, acl_on_drives).
  std::string owner;
  std::string acl;
  bool acl_on_drives = false;
  // Format 6: server-side encryption (mode kNone: the data is as written).
  Encryption sse;
  // Format 7: the pool (tier) whose store holds the version's data files ("" =
  // the engine's first pool; inline versions keep it too, as their class's
  // pool). A transition rewrites the files into another pool and this field.
  std::string pool;
  // Format 7 too: a restore requested or made (RestoreObject).
  RestoreState restore;

  // Every data file the version owns (to garbage-collect it).
  std::vector<std::string> DataFiles() const;
  // "null", or the version's id (VersionIdOf the stamp).
  std::string VersionId() const;
};

// Version ids: 16 lowercase hex digits of (UINT64_MAX - stamp), so that they
// sort newest first, as the versions do in the metadata; "null" names the
// null version.
std::string VersionIdOf(uint64_t stamp);
struct VersionSelector {
  bool null = false;   // the version "null"
  uint64_t stamp = 0;  // otherwise
};
// nullopt if `id` is neither "null" nor a well-formed version id.
std::optional<VersionSelector> ParseVersionId(std::string_view id);

// A multipart upload in progress.
struct UploadRecord {
  int64_t initiated_ns = 0;
  ObjectHeaders headers;
  std::string checksum_algorithm;
  std::string checksum_type;
  Tags tags;
  std::string storage_class;
  std::string owner;
  // Object Lock settings named by CreateMultipartUpload (format 2); the
  // bucket's default applies at Complete when none is named.
  std::optional<ObjectLock> lock;
  // Format 3: the object's owner and ACL to be (ObjectRecord::owner / acl).
  std::string object_owner;
  std::string acl;
  // Format 4: the encryption every part is written with (salt: key_digest's).
  Encryption sse;
  // Format 5: the pool the parts are written to ("" = the first pool).
  std::string pool;
};

struct PartRecord {
  uint64_t size_bytes = 0;
  std::string etag;  // hex MD5
  int64_t mtime_ns = 0;
  std::string file_id;
  std::string checksum;  // base64 of the upload's algorithm, "" if none
  std::string salt;      // format 2: the part file's salt (encrypted uploads)
};

enum class Versioning : uint8_t { kUnversioned = 0, kEnabled = 1, kSuspended = 2 };

// PutObjectLockConfiguration's default retention (days or years, one of them).
struct DefaultRetention {
  LockMode mode = LockMode::kNone;  // kNone: no default rule
  uint32_t days = 0;
  uint32_t years = 0;
  bool operator==(const DefaultRetention&) const = default;
};

// kUnset: DeleteBucketOwnershipControls removed the setting (ACLs enabled,
// the writer owns its objects, as ObjectWriter).
enum class Ownership : uint8_t {
  kBucketOwnerEnforced = 0,
  kBucketOwnerPreferred = 1,
  kObjectWriter = 2,
  kUnset = 3,
};

struct BucketRecord {
  int64_t created_ns = 0;
  std::string region;
  std::string owner;  // canonical id of the creator (format <= 3: its access key)
  Tags tags;  // PutBucketTagging (up to 50)
  // Format 3.
  Versioning versioning = Versioning::kUnversioned;
  bool object_lock = false;  // once on, never off (and versioning stays Enabled)
  DefaultRetention default_retention;
  // Format 4: the bucket policy as PutBucketPolicy received it ("" = none),
  // the CORS configuration (CORSConfiguration XML as strata renders it; "" = none).
  std::string policy;
  std::string cors;
  // PutPublicAccessBlock: the k* bits below (0: none configured).
  uint8_t public_access_block = 0;
  // Format 5: object ownership (PutBucketOwnershipControls) and the bucket's
  // ACL (auth/acl.h's encoding; "" = the owner's FULL_CONTROL only).
  Ownership ownership = Ownership::kBucketOwnerEnforced;
  std::string acl;
  // Format 6: default encryption (PutBucketEncryption; kNone: none set),
  // kS3 or kKms with its key ("" = the AWS-managed key) and BucketKeyEnabled.
  SseMode default_sse = SseMode::kNone;
  std::string default_kms_key;
  bool default_bucket_key = false;
  // Format 7: the lifecycle configuration (LifecycleConfiguration XML as
  // strata renders it, tier/lifecycle.h; "" = none) and its
  // x-amz-transition-default-minimum-object-size: objects smaller than this
  // are not transitioned unless a rule's filter names a size (AWS's default,
  // all_storage_classes_128K: 128 KiB; varies_by_storage_class: 0).
  std::string lifecycle;
  uint64_t lifecycle_min_transition_bytes = 0;
  // Format 8: the event notification configuration (NotificationConfiguration
  // XML as strata renders it, notify/config.h; "" = none) and the server
  // access logging settings (BucketLoggingStatus as s3/access_log.h renders
  // it; "" = off).
  std::string notification;
  std::string logging;
};
inline constexpr uint8_t kBlockPublicAcls = 1, kIgnorePublicAcls = 2, kBlockPublicPolicy = 4,
                         kRestrictPublicBuckets = 8, kPublicAccessBlockSet = 0x80;

// What a data trailer (storage::DataWriter::Finish) holds: one kind byte,
// then the record. Lets rebuild-index tell the pieces on the drives apart.
enum class TrailerKind : char {
  kObject = 'O',    // an object version's data; payload: its ObjectRecord
  kPart = 'P',      // a multipart part; payload: an ObjectRecord of the part
  kManifest = 'M',  // a completed multipart object; payload: its ObjectRecord (parts listed)
  kBucket = 'B',    // a bucket marker; payload: its BucketRecord
  kUpload = 'U',    // a multipart upload in progress; payload: its UploadRecord
  kTags = 'T',      // the tags of an object version set after its write; payload: TagsRecord
  kLock = 'L',      // the lock settings of a version changed after its write; payload: LockRecord
  kAcl = 'A',       // the owner / ACL of a version changed after its write; payload: AclRecord
};
std::string EncodeTrailer(TrailerKind kind, std::string_view payload);
// nullopt if empty or of an unknown kind.
std::optional<std::pair<TrailerKind, std::string_view>> DecodeTrailer(std::string_view trailer);

// What PutObjectTagging leaves on a self-describing store: the current tags
// of the object version whose data (or multipart manifest) is `data_id`.
struct TagsRecord {
  std::string data_id;
  uint64_t version_stamp = 0;  // of the object version
  Tags tags;
};
std::string EncodeTagsRecord(const TagsRecord& r);
std::optional<TagsRecord> DecodeTagsRecord(std::string_view data);

// What PutObjectRetention / PutObjectLegalHold leave on a self-describing
// store: the current lock settings of the version whose data is `data_id`
// (rewritten as a newer generation at each change; rebuild-index keeps the
// newest), written before the metadata says so.
struct LockRecord {
  std::string data_id;
  uint64_t version_stamp = 0;
  ObjectLock lock;
};
std::string EncodeLockRecord(const LockRecord& r);
std::optional<LockRecord> DecodeLockRecord(std::string_view data);

// Data ids of the small records on self-describing stores (32 hex chars,
// derived so that the engine finds them again): the tag record of the
// version whose data is `data_id`, and the marker of an upload in progress.
struct AclRecord {
  std::string data_id;
  uint64_t version_stamp = 0;
  std::string owner, acl;
};
std::string EncodeAclRecord(const AclRecord& r);
std::optional<AclRecord> DecodeAclRecord(std::string_view data);
std::string AclRecordId(const std::string& data_id);
std::string TagsRecordId(const std::string& data_id);
std::string LockRecordId(const std::string& data_id);
std::string UploadMarkerId(const std::string& upload_id);

std::string EncodeObjectRecord(const ObjectRecord& r);
std::optional<ObjectRecord> DecodeObjectRecord(std::string_view data);
// A record as the latest-version index keeps it (object/latest_index.h): the
// version's record with its inline data left out (inline_data empty,
// is_inline kept); for listing, never for reading the object.
std::string EncodeListedRecord(ObjectRecord r);
std::optional<ObjectRecord> DecodeListedRecord(std::string_view data);
std::string EncodeUploadRecord(const UploadRecord& r);
std::optional<UploadRecord> DecodeUploadRecord(std::string_view data);
std::string EncodePartRecord(const PartRecord& r);
std::optional<PartRecord> DecodePartRecord(std::string_view data);
std::string EncodeBucketRecord(const BucketRecord& r);
std::optional<BucketRecord> DecodeBucketRecord(std::string_view data);

}  // namespace strata::object

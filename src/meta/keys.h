// The ONE registry of metadata key prefixes (like 3FS KeyPrefix-def.h).
// Every key in the KvStore starts with one of the bytes below; a new kind of
// record gets a new byte here, never an ad-hoc string elsewhere. The byte
// layouts are written down in docs/formats/metadata-keys.md.
//
// Values are encoded by object/record.h (see there for each value format).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>

#include "common/encoding.h"

namespace strata::meta {

// 'B' bucket record:   "B" + bucket name                      -> see object/record.h
inline constexpr char kBucketPrefix = 'B';
// 'O' object version:  "O" + bucket + '\0' + key + '\0' + BE64(UINT64_MAX - stamp)
//                                                              -> see object/record.h
inline constexpr char kObjectPrefix = 'O';
// 'I' write intent:    "I" + data file id: a data file being written, not yet
//                      committed; swept at start-up            -> see object/record.h
inline constexpr char kIntentPrefix = 'I';
// 'G' garbage:         "G" + data file id: committed away, to be deleted
//                                                              -> see object/record.h
inline constexpr char kGarbagePrefix = 'G';
// 'U' multipart upload: "U" + bucket + '\0' + key + '\0' + upload id
//                                                              -> see object/record.h
inline constexpr char kMultipartPrefix = 'U';
// 'P' uploaded part:   "P" + upload id + BE32(part number)     -> see object/record.h
inline constexpr char kPartPrefix = 'P';
// 'C' config:          "C" + name (e.g. "Croot-credentials")  -> see object/record.h
inline constexpr char kConfigPrefix = 'C';
// 'A' access control: "A" + kind + name, JSON values   -> see auth/identities.h
//   kind 'u' user (name), 'k' access key (id), 'g' group (name),
//   'p' managed policy (name), 's' the store's own identity ("account")
inline constexpr char kIamPrefix = 'A';
// 'K' key service: "K" + key id, JSON values           -> see kms/key_service.h
inline constexpr char kKmsPrefix = 'K';
// 'L' lifecycle: "Lscan" the scanner's progress (bucket + '\0' + key it
//   resumes after)                                      -> see tier/scanner.h
inline constexpr char kLifecyclePrefix = 'L';

// 'E' audit trail: "E" + kind + ... (records, chain hashes, checkpoints, gap
//   markers, the seal state, the bucket and identity indexes) -> see audit/record.h
inline constexpr char kAuditPrefix = 'E';
// 'N' event notifications: "Nq" + target id + '\0' + BE64(seq) -> one event
//   (its JSON) queued for delivery to that webhook    -> see notify/notifier.h
inline constexpr char kNotifyPrefix = 'N';
// 'S' bucket usage: "Sd" bucket '\0' BE64(seq) -> a change's delta (objects,
//   bytes), "St" bucket -> the folded total, "Sinit" -> the counts cover
//   every version (written after the one counting scan)   -> see object/usage.h
inline constexpr char kUsagePrefix = 'S';
// 'X' tier advisor: "Xs" the access statistics (JSON), "Xp" the execution
//   policy (JSON), "Xb" the executor's byte budget (BE64 day + BE64 bytes),
//   "Xr" + id -> one recommendation (JSON)             -> see advisor/advisor.h
inline constexpr char kAdvisorPrefix = 'X';
// 'T' latest version: "T" + bucket + '\0' + key -> the record of the key's
//   newest version when that is not a delete marker, without inline data;
//   no entry when the key has no versions or its newest is a marker. Derived
//   from the 'O' records in the same batches (object/latest_index.h); what
//   ListObjects reads, densely, whatever the number of old versions.
inline constexpr char kLatestPrefix = 'T';
inline constexpr char kAllPrefixes[] = {kBucketPrefix,    kObjectPrefix, kIntentPrefix,
                                        kGarbagePrefix,   kMultipartPrefix, kPartPrefix,
                                        kConfigPrefix,    kIamPrefix,    kKmsPrefix,
                                        kLifecyclePrefix, kAuditPrefix,  kNotifyPrefix,
                                        kUsagePrefix,     kAdvisorPrefix, kLatestPrefix};

inline std::string UsageDeltaPrefix() { return std::string(1, kUsagePrefix) + "d"; }
inline std::string UsageDeltaKey(std::string_view bucket, uint64_t seq) {
  std::string k = UsageDeltaPrefix();
  k.append(bucket).push_back('\0');
  PutFixed64BE(&k, seq);
  return k;
}
inline std::string UsageTotalPrefix() { return std::string(1, kUsagePrefix) + "t"; }
inline std::string UsageTotalKey(std::string_view bucket) {
  return UsageTotalPrefix() + std::string(bucket);
}
inline std::string UsageInitKey() { return std::string(1, kUsagePrefix) + "init"; }

// All queued events of one notification target (ids never hold '\0').
inline std::string NotifyQueuePrefix(std::string_view target) {
  std::string k(1, kNotifyPrefix);
  k.push_back('q');
  k.append(target).push_back('\0');
  return k;
}
inline std::string NotifyQueueKey(std::string_view target, uint64_t seq) {
  std::string k = NotifyQueuePrefix(target);
  PutFixed64BE(&k, seq);
  return k;
}

inline std::string AdvisorStatsKey() { return std::string(1, kAdvisorPrefix) + "s"; }
inline std::string AdvisorPolicyKey() { return std::string(1, kAdvisorPrefix) + "p"; }
inline std::string AdvisorBudgetKey() { return std::string(1, kAdvisorPrefix) + "b"; }
inline std::string AdvisorRecommendationPrefix() { return std::string(1, kAdvisorPrefix) + "r"; }
inline std::string AdvisorRecommendationKey(std::string_view id) {
  return AdvisorRecommendationPrefix() + std::string(id);
}
inline std::string LifecycleProgressKey() { return std::string(1, kLifecyclePrefix) + "scan"; }
// "Lr" + bucket + '\0' + key + '\0' + BE64(stamp): a version with a restore
// requested or made (object/move.cc writes it with the record; tier/restore.h
// walks them to make and expire the copies).
inline std::string RestoreIndexPrefix() { return std::string(1, kLifecyclePrefix) + "r"; }
inline std::string RestoreIndexKey(std::string_view bucket, std::string_view key, uint64_t stamp) {
  std::string k = RestoreIndexPrefix();
  k.append(bucket).push_back('\0');
  k.append(key).push_back('\0');
  for (int i = 7; i >= 0; --i) k.push_back(static_cast<char>((stamp >> (8 * i)) & 0xff));
  return k;
}
// Inverse of RestoreIndexKey; false if `raw` is not one.
inline bool ParseRestoreIndexKey(std::string_view raw, std::string* bucket, std::string* key,
                                 uint64_t* stamp) {
  if (!raw.starts_with(RestoreIndexPrefix()) || raw.size() < 2 + 2 + 8) return false;
  raw.remove_prefix(2);
  size_t a = raw.find('\0');
  if (a == std::string_view::npos) return false;
  std::string_view rest = raw.substr(a + 1);
  if (rest.size() < 9 || rest[rest.size() - 9] != '\0') return false;
  *bucket = std::string(raw.substr(0, a));
  *key = std::string(rest.substr(0, rest.size() - 9));
  uint64_t s = 0;
  for (char c : rest.substr(rest.size() - 8)) s = (s << 8) | static_cast<uint8_t>(c);
  *stamp = s;
  return true;
}

// A prefix byte used twice would silently merge two key spaces.
consteval bool PrefixesAreUnique() {
  for (size_t i = 0; i < std::size(kAllPrefixes); ++i)
    for (size_t j = i + 1; j < std::size(kAllPrefixes); ++j)
      if (kAllPrefixes[i] == kAllPrefixes[j]) return false;
  return true;
}
static_assert(PrefixesAreUnique(), "two key kinds share a prefix byte");

inline constexpr size_t kStampBytes = 8;

inline std::string BucketKey(std::string_view bucket) {
  std::string k(1, kBucketPrefix);
  k.append(bucket);
  return k;
}

// All versions of all objects of `bucket`. Bucket names never contain '\0'
// (S3 allows only [a-z0-9.-]), so '\0' ends the bucket name unambiguously.
inline std::string ObjectPrefix(std::string_view bucket) {
  std::string k(1, kObjectPrefix);
  k.append(bucket);
  k.push_back('\0');
  return k;
}

// All versions of one object. The trailing '\0' makes "a" scan apart from
// "ab" and keeps listing order equal to bytewise key order. This requires
// object keys without '\0' (the S3 layer must reject them); otherwise the
// versions of "a" would interleave with the key "a\0...".
inline std::string ObjectKeyPrefix(std::string_view bucket, std::string_view key) {
  std::string k = ObjectPrefix(bucket);
  k.append(key);
  k.push_back('\0');
  return k;
}

// The stamp is stored inverted so a forward scan meets the newest version first.
inline std::string ObjectVersionKey(std::string_view bucket, std::string_view key, uint64_t stamp) {
  std::string k = ObjectKeyPrefix(bucket, key);
  PutFixed64BE(&k, std::numeric_limits<uint64_t>::max() - stamp);
  return k;
}

// Inverse of ObjectVersionKey. False if `raw` is not a well-formed object
// version key (wrong prefix, too short, missing separators, '\0' in the key).
inline bool ParseObjectVersionKey(std::string_view raw, std::string* bucket, std::string* key,
                                  uint64_t* stamp) {
  // Shortest: prefix + "" + '\0' + "" + '\0' + stamp.
  if (raw.size() < 3 + kStampBytes || raw[0] != kObjectPrefix) return false;
  std::string_view body = raw.substr(1, raw.size() - 1 - kStampBytes);  // bucket\0key\0
  if (body.back() != '\0') return false;
  body.remove_suffix(1);
  size_t sep = body.find('\0');
  if (sep == std::string_view::npos) return false;
  std::string_view k = body.substr(sep + 1);
  if (k.find('\0') != std::string_view::npos) return false;
  bucket->assign(body.substr(0, sep));
  key->assign(k);
  *stamp =
      std::numeric_limits<uint64_t>::max() - DecodeFixed64BE(raw.data() + raw.size() - kStampBytes);
  return true;
}

// The S3 version id of a version stamp: 16 lowercase hex digits of the
// inverted stamp, so that ids of newer versions sort first.
inline std::string StampVersionId(uint64_t stamp) {
  static constexpr char kHex[] = "0123456789abcdef";
  const uint64_t inverted = ~stamp;
  std::string out(16, '0');
  for (int i = 0; i < 16; ++i) out[i] = kHex[(inverted >> (60 - 4 * i)) & 0xF];
  return out;
}

// All latest-version entries of `bucket`; a key's entry is this + key.
inline std::string LatestPrefix(std::string_view bucket) {
  std::string k(1, kLatestPrefix);
  k.append(bucket);
  k.push_back('\0');
  return k;
}
inline std::string LatestKey(std::string_view bucket, std::string_view key) {
  std::string k = LatestPrefix(bucket);
  k.append(key);
  return k;
}
// Written (in 'C') once every key's 'T' entry exists: absent after an
// upgrade or a rebuilt index, when the entries are made from the versions.
inline std::string LatestIndexReadyKey() { return std::string(1, kConfigPrefix) + "latest-index"; }

inline std::string IntentKey(std::string_view data_file_id) {
  std::string k(1, kIntentPrefix);
  k.append(data_file_id);
  return k;
}

inline std::string GarbageKey(std::string_view data_file_id) {
  std::string k(1, kGarbagePrefix);
  k.append(data_file_id);
  return k;
}

// All multipart uploads of `bucket` (ordered by key, then upload id).
inline std::string UploadPrefix(std::string_view bucket) {
  std::string k(1, kMultipartPrefix);
  k.append(bucket);
  k.push_back('\0');
  return k;
}

// Upload ids are fixed-length hex without '\0', so the last '\0' ends the key.
inline std::string UploadKey(std::string_view bucket, std::string_view key,
                             std::string_view upload_id) {
  std::string k = UploadPrefix(bucket);
  k.append(key);
  k.push_back('\0');
  k.append(upload_id);
  return k;
}

inline bool ParseUploadKey(std::string_view raw, std::string* bucket, std::string* key,
                           std::string* upload_id) {
  if (raw.size() < 3 || raw[0] != kMultipartPrefix) return false;
  std::string_view body = raw.substr(1);
  size_t first = body.find('\0');
  size_t last = body.rfind('\0');
  if (first == std::string_view::npos || first == last) return false;
  bucket->assign(body.substr(0, first));
  key->assign(body.substr(first + 1, last - first - 1));
  upload_id->assign(body.substr(last + 1));
  return true;
}

inline std::string PartPrefix(std::string_view upload_id) {
  std::string k(1, kPartPrefix);
  k.append(upload_id);
  return k;
}

inline std::string PartKey(std::string_view upload_id, uint32_t part_number) {
  std::string k = PartPrefix(upload_id);
  for (int i = 3; i >= 0; --i) k.push_back(static_cast<char>((part_number >> (8 * i)) & 0xFF));
  return k;
}

inline uint32_t ParsePartNumber(std::string_view raw) {
  uint32_t v = 0;
  for (size_t i = raw.size() - 4; i < raw.size(); ++i) v = v << 8 | static_cast<unsigned char>(raw[i]);
  return v;
}

inline std::string ConfigKey(std::string_view name) {
  std::string k(1, kConfigPrefix);
  k.append(name);
  return k;
}

inline std::string IamKey(char kind, std::string_view name) {
  std::string k(1, kIamPrefix);
  k.push_back(kind);
  k.append(name);
  return k;
}

inline std::string KmsKey(std::string_view id) {
  std::string k(1, kKmsPrefix);
  k.append(id);
  return k;
}

// The prefix alone, for scanning one key space ("B", "I", "G", ...).
inline std::string PrefixKey(char prefix) { return std::string(1, prefix); }

}  // namespace strata::meta

// ListObjects and ListVersions over the ordered metadata: range scans that
// group keys by the delimiter and skip a whole common prefix with one Seek.
// ListObjects reads the latest-version entries ('T', object/latest_index.h),
// one per listed key: its page latency does not grow with the number of old
// versions or delete markers. ListVersions reads the versions themselves.
#include <algorithm>
#include <string>

#include "meta/keys.h"
#include "object/engine.h"

namespace strata::object {

namespace {
// No valid UTF-8 key contains 0xFF, so prefix+"\xff" sorts after every key
// that starts with prefix and before every other key greater than prefix.
constexpr char kPastPrefix = '\xff';

// Sorts after every version of `key` and before the next key (object keys
// hold no '\0', so any longer key differs from `key` + '\0' at or before the
// separator with a greater byte).
std::string PastVersions(const std::string& bucket_prefix, const std::string& key) {
  std::string k = bucket_prefix + key;
  k.push_back('\0');
  k.append(meta::kStampBytes, '\xff');
  k.push_back('\0');
  return k;
}
}  // namespace

Result<ListResult> ObjectEngine::ListObjects(const std::string& bucket,
                                             const ListParams& params) {
  ASSIGN_OR_RETURN(auto b, kv_->Get(meta::BucketKey(bucket)));
  if (!b) return NotFound(Detail::kBucket, "bucket " + bucket);
  ListResult result;
  if (params.max_keys <= 0) return result;

  // The latest-version entries: one per key whose newest version is not a
  // delete marker, so every entry met is listed (object/latest_index.h).
  const std::string bucket_prefix = meta::LatestPrefix(bucket);
  std::string start = params.prefix;
  if (params.start_after > start) start = params.start_after;
  // A page's entries are built in place, never relocated.
  result.objects.reserve(std::min(params.max_keys, 1000));
  auto it = kv_->NewIterator();
  it->Seek(bucket_prefix + start);
  int emitted = 0;
  while (it->Valid()) {
    std::string_view raw = it->key();
    if (!raw.starts_with(bucket_prefix)) break;
    std::string key(raw.substr(bucket_prefix.size()));
    if (!key.starts_with(params.prefix)) break;  // keys with the prefix are contiguous
    if (key <= params.start_after) {
      it->Next();
      continue;
    }
    size_t pos = params.delimiter.empty()
                     ? std::string::npos
                     : key.find(params.delimiter, params.prefix.size());
    if (pos != std::string::npos) {
      std::string common = key.substr(0, pos + params.delimiter.size());
      if (common > params.start_after) {
        if (emitted == params.max_keys) {
          result.is_truncated = true;
          break;
        }
        result.common_prefixes.push_back(common);
        result.last_emitted = common;
        ++emitted;
      }
      it->Seek(bucket_prefix + common + kPastPrefix);
      continue;
    }
    if (emitted == params.max_keys) {
      result.is_truncated = true;
      break;
    }
    auto rec = DecodeListedRecord(it->value());
    if (!rec) return Corruption("undecodable object record for " + key);
    result.last_emitted = key;
    result.objects.push_back({std::move(key), std::move(*rec)});
    ++emitted;
    it->Next();
  }
  RETURN_IF_ERROR(it->status());
  return result;
}

// key-marker alone resumes after every version of that key; with
// version-id-marker, after that version of it (the versions after it are
// older). A marker version that no longer exists resumes where it would be.
Result<ListVersionsResult> ObjectEngine::ListVersions(const std::string& bucket,
                                                      const ListVersionsParams& params) {
  ASSIGN_OR_RETURN(auto b, kv_->Get(meta::BucketKey(bucket)));
  if (!b) return NotFound(Detail::kBucket, "bucket " + bucket);
  ListVersionsResult result;
  if (params.max_keys <= 0) return result;

  const std::string bucket_prefix = meta::ObjectPrefix(bucket);
  auto it = kv_->NewIterator();
  // Where to start, and (version-id-marker "null") the one record to skip to.
  std::string skip_through;  // resume after this metadata key
  bool skip_null_of_marker = false;
  if (!params.key_marker.empty() && !params.version_id_marker.empty()) {
    auto v = ParseVersionId(params.version_id_marker);
    if (!v) return InvalidArgument(Detail::kVersion, "Invalid version id specified");
    if (v->null) {
      skip_null_of_marker = true;
      it->Seek(meta::ObjectKeyPrefix(bucket, params.key_marker));
    } else {
      skip_through = meta::ObjectVersionKey(bucket, params.key_marker, v->stamp);
      it->Seek(skip_through);
      if (it->Valid() && it->key() == skip_through) it->Next();
    }
  } else if (!params.key_marker.empty()) {
    const std::string past = PastVersions(bucket_prefix, params.key_marker);
    it->Seek(params.prefix > params.key_marker ? bucket_prefix + params.prefix : past);
  } else {
    it->Seek(bucket_prefix + params.prefix);
  }
  if (skip_null_of_marker) {
    // Past the null version of key_marker (a suspended-era version: rare).
    const std::string kp = meta::ObjectKeyPrefix(bucket, params.key_marker);
    bool passed = false;
    for (; it->Valid() && it->key().starts_with(kp); it->Next()) {
      auto rec = DecodeObjectRecord(it->value());
      if (!rec) return Corruption("undecodable object record for " + params.key_marker);
      if (!rec->versioned) {
        it->Next();
        passed = true;
        break;
      }
    }
    if (!passed) it->Seek(PastVersions(bucket_prefix, params.key_marker));
  }
  int emitted = 0;
  std::string last_key;
  bool first_of_key = true;
  bool resumed_inside_key = !params.version_id_marker.empty() && !params.key_marker.empty();
  while (it->Valid()) {
    std::string_view raw = it->key();
    if (!raw.starts_with(bucket_prefix)) break;
    std::string parsed_bucket, key;
    uint64_t stamp;
    if (!meta::ParseObjectVersionKey(raw, &parsed_bucket, &key, &stamp)) {
      return Corruption("bad object key in metadata");
    }
    if (key < params.prefix) {
      it->Seek(bucket_prefix + params.prefix);
      continue;
    }
    if (!key.starts_with(params.prefix)) break;
    if (key != last_key) {
      // The first record met of a key is its latest, unless the listing
      // resumed inside that key (the marker's key: its latest went before).
      first_of_key = !(resumed_inside_key && key == params.key_marker);
      last_key = key;
    }
    size_t pos = params.delimiter.empty()
                     ? std::string::npos
                     : key.find(params.delimiter, params.prefix.size());
    if (pos != std::string::npos) {
      std::string common = key.substr(0, pos + params.delimiter.size());
      if (common > params.key_marker || params.key_marker.empty()) {
        if (emitted == params.max_keys) {
          result.is_truncated = true;
          break;
        }
        result.common_prefixes.push_back(common);
        result.next_key_marker = common;
        result.next_version_id_marker.clear();
        ++emitted;
      }
      it->Seek(bucket_prefix + common + kPastPrefix);
      continue;
    }
    if (emitted == params.max_keys) {
      result.is_truncated = true;
      break;
    }
    auto rec = DecodeObjectRecord(it->value());
    if (!rec) return Corruption("undecodable object record for " + key);
    rec->inline_data.clear();
    result.next_key_marker = key;
    result.next_version_id_marker = rec->VersionId();
    result.versions.push_back({key, std::move(*rec), first_of_key});
    first_of_key = false;
    ++emitted;
    it->Next();
  }
  RETURN_IF_ERROR(it->status());
  if (!result.is_truncated) {
    result.next_key_marker.clear();
    result.next_version_id_marker.clear();
  }
  return result;
}

}  // namespace strata::object

// ListObjects over the ordered metadata: a range scan that groups keys by the
// delimiter and skips a whole common prefix with one Seek.
#include <string>

#include "meta/keys.h"
#include "object/engine.h"

namespace strata::object {

namespace {
// No valid UTF-8 key contains 0xFF, so prefix+"\xff" sorts after every key
// that starts with prefix and before every other key greater than prefix.
constexpr char kPastPrefix = '\xff';
}  // namespace

Result<ListResult> ObjectEngine::ListObjects(const std::string& bucket,
                                             const ListParams& params) {
  ASSIGN_OR_RETURN(auto b, kv_->Get(meta::BucketKey(bucket)));
  if (!b) return NotFound(Detail::kBucket, "bucket " + bucket);
  ListResult result;
  if (params.max_keys <= 0) return result;

  const std::string bucket_prefix = meta::ObjectPrefix(bucket);
  std::string start = params.prefix;
  if (params.start_after > start) start = params.start_after;
  auto it = kv_->NewIterator();
  it->Seek(bucket_prefix + start);
  int emitted = 0;
  std::string last_key;  // skips older versions of the same key
  while (it->Valid()) {
    std::string_view raw = it->key();
    if (!raw.starts_with(bucket_prefix)) break;
    std::string parsed_bucket, key;
    uint64_t stamp;
    if (!meta::ParseObjectVersionKey(raw, &parsed_bucket, &key, &stamp)) {
      return Corruption("bad object key in metadata");
    }
    if (!key.starts_with(params.prefix)) break;  // keys with the prefix are contiguous
    if (key == last_key || key <= params.start_after) {
      last_key = key;
      it->Next();
      continue;
    }
    last_key = key;
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
    auto rec = DecodeObjectRecord(it->value());
    if (!rec) return Corruption("undecodable object record for " + key);
    rec->inline_data.clear();
    result.objects.push_back({key, std::move(*rec)});
    result.last_emitted = key;
    ++emitted;
    it->Next();
  }
  RETURN_IF_ERROR(it->status());
  return result;
}

}  // namespace strata::object

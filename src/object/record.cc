#include "object/record.h"

#include "common/encoding.h"

namespace strata::object {

namespace {
constexpr char kObjectFormat = 1;
constexpr char kBucketFormat = 1;
constexpr uint64_t kFlagInline = 1;

bool GetString(std::string_view* in, std::string* out) {
  std::string_view s;
  if (!GetLengthPrefixed(in, &s)) return false;
  out->assign(s);
  return true;
}
}  // namespace

std::string EncodeObjectRecord(const ObjectRecord& r) {
  std::string out;
  out.push_back(kObjectFormat);
  PutVarint64(&out, r.is_inline ? kFlagInline : 0);
  PutVarint64(&out, r.size_bytes);
  PutLengthPrefixed(&out, r.etag);
  PutVarint64(&out, static_cast<uint64_t>(r.mtime_ns));
  PutVarint64(&out, r.version_stamp);
  const ObjectHeaders& h = r.headers;
  for (const std::string* s : {&h.content_type, &h.content_encoding, &h.content_disposition,
                               &h.content_language, &h.cache_control, &h.expires}) {
    PutLengthPrefixed(&out, *s);
  }
  PutVarint64(&out, h.user_metadata.size());
  for (const auto& [name, value] : h.user_metadata) {
    PutLengthPrefixed(&out, name);
    PutLengthPrefixed(&out, value);
  }
  PutLengthPrefixed(&out, r.is_inline ? r.inline_data : r.file_id);
  return out;
}

std::optional<ObjectRecord> DecodeObjectRecord(std::string_view in) {
  if (in.empty() || in[0] != kObjectFormat) return std::nullopt;
  in.remove_prefix(1);
  ObjectRecord r;
  uint64_t flags, mtime, count;
  if (!GetVarint64(&in, &flags) || !GetVarint64(&in, &r.size_bytes) || !GetString(&in, &r.etag) ||
      !GetVarint64(&in, &mtime) || !GetVarint64(&in, &r.version_stamp)) {
    return std::nullopt;
  }
  r.mtime_ns = static_cast<int64_t>(mtime);
  r.is_inline = flags & kFlagInline;
  ObjectHeaders& h = r.headers;
  for (std::string* s : {&h.content_type, &h.content_encoding, &h.content_disposition,
                         &h.content_language, &h.cache_control, &h.expires}) {
    if (!GetString(&in, s)) return std::nullopt;
  }
  if (!GetVarint64(&in, &count) || count > in.size()) return std::nullopt;
  for (uint64_t i = 0; i < count; ++i) {
    std::string name, value;
    if (!GetString(&in, &name) || !GetString(&in, &value)) return std::nullopt;
    h.user_metadata.emplace_back(std::move(name), std::move(value));
  }
  if (!GetString(&in, r.is_inline ? &r.inline_data : &r.file_id)) return std::nullopt;
  if (!in.empty()) return std::nullopt;
  if (r.is_inline && r.inline_data.size() != r.size_bytes) return std::nullopt;
  return r;
}

std::string EncodeBucketRecord(const BucketRecord& r) {
  std::string out;
  out.push_back(kBucketFormat);
  PutVarint64(&out, static_cast<uint64_t>(r.created_ns));
  PutLengthPrefixed(&out, r.region);
  PutLengthPrefixed(&out, r.owner);
  return out;
}

std::optional<BucketRecord> DecodeBucketRecord(std::string_view in) {
  if (in.empty() || in[0] != kBucketFormat) return std::nullopt;
  in.remove_prefix(1);
  BucketRecord r;
  uint64_t created;
  if (!GetVarint64(&in, &created) || !GetString(&in, &r.region) || !GetString(&in, &r.owner)) {
    return std::nullopt;
  }
  r.created_ns = static_cast<int64_t>(created);
  return r;
}

}  // namespace strata::object

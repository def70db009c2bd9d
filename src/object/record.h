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

struct ObjectRecord {
  uint64_t size_bytes = 0;
  std::string etag;  // lowercase hex, no quotes
  int64_t mtime_ns = 0;
  uint64_t version_stamp = 0;  // also in the key (inverted); unique per write
  ObjectHeaders headers;
  // Exactly one of: inline data (small objects) or a data file id.
  bool is_inline = true;
  std::string inline_data;
  std::string file_id;  // 32 hex chars; path objects/<id[0..2]>/<id>
};

struct BucketRecord {
  int64_t created_ns = 0;
  std::string region;
  std::string owner;
};

std::string EncodeObjectRecord(const ObjectRecord& r);
std::optional<ObjectRecord> DecodeObjectRecord(std::string_view data);
std::string EncodeBucketRecord(const BucketRecord& r);
std::optional<BucketRecord> DecodeBucketRecord(std::string_view data);

}  // namespace strata::object

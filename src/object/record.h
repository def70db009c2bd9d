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

// One part of a multipart object: its own data file, in order.
struct PartRef {
  std::string file_id;
  uint64_t size_bytes = 0;
  std::string etag;      // hex MD5 of the part
  std::string checksum;  // base64, of the object's checksum algorithm ("" if none)
};

using Tags = std::vector<std::pair<std::string, std::string>>;

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

  // Every data file the version owns (to garbage-collect it).
  std::vector<std::string> DataFiles() const;
};

// A multipart upload in progress.
struct UploadRecord {
  int64_t initiated_ns = 0;
  ObjectHeaders headers;
  std::string checksum_algorithm;
  std::string checksum_type;
  Tags tags;
  std::string storage_class;
  std::string owner;
};

struct PartRecord {
  uint64_t size_bytes = 0;
  std::string etag;  // hex MD5
  int64_t mtime_ns = 0;
  std::string file_id;
  std::string checksum;  // base64 of the upload's algorithm, "" if none
};

struct BucketRecord {
  int64_t created_ns = 0;
  std::string region;
  std::string owner;
};

// What a data trailer (storage::DataWriter::Finish) holds: one kind byte,
// then the record. Lets rebuild-index tell the pieces on the drives apart.
enum class TrailerKind : char {
  kObject = 'O',    // an object version's data; payload: its ObjectRecord
  kPart = 'P',      // a multipart part; payload: an ObjectRecord of the part
  kManifest = 'M',  // a completed multipart object; payload: its ObjectRecord (parts listed)
  kBucket = 'B',    // a bucket marker; payload: its BucketRecord
};
std::string EncodeTrailer(TrailerKind kind, std::string_view payload);
// nullopt if empty or of an unknown kind.
std::optional<std::pair<TrailerKind, std::string_view>> DecodeTrailer(std::string_view trailer);

std::string EncodeObjectRecord(const ObjectRecord& r);
std::optional<ObjectRecord> DecodeObjectRecord(std::string_view data);
std::string EncodeUploadRecord(const UploadRecord& r);
std::optional<UploadRecord> DecodeUploadRecord(std::string_view data);
std::string EncodePartRecord(const PartRecord& r);
std::optional<PartRecord> DecodePartRecord(std::string_view data);
std::string EncodeBucketRecord(const BucketRecord& r);
std::optional<BucketRecord> DecodeBucketRecord(std::string_view data);

}  // namespace strata::object

// The shard file and drive format file of an erasure-coded pool
// (docs/formats/shard-file.md, docs/formats/drive-format.md): encoding,
// decoding and the stripe geometry. Pure: no I/O.
//
// A shard file is
//   header | stripe 0 block + crc | stripe 1 block + crc | ... | footer
// where every stripe but the last is full (block_bytes per shard) and the
// last one carries ceil(remaining / k) bytes per shard. The footer holds the
// trailer bytes given to DataWriter::Finish and the object's size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "storage/data_store.h"

namespace strata::storage {

// CRC32C (Castagnoli; the x-amz-checksum-crc32c polynomial) of a buffer.
uint32_t Crc32c(const void* data, size_t n);

void PutFixed32LE(std::string* dst, uint32_t v);
void PutFixed64LE(std::string* dst, uint64_t v);
uint32_t DecodeFixed32LE(const char* p);
uint64_t DecodeFixed64LE(const char* p);

// ---------------------------------------------------------------- header

inline constexpr std::string_view kShardMagic = "STRATASH";  // 8 bytes
inline constexpr uint32_t kShardFormatVersion = 1;
// magic(8) + version(4) + header length(4): enough to learn the full length.
inline constexpr size_t kShardHeaderPrefix = 16;
inline constexpr size_t kShardHeaderMax = 64 * 1024;
inline constexpr size_t kBlockCrcBytes = 4;

struct ShardHeader {
  std::string id;
  uint32_t shard_index = 0;
  uint32_t k = 0;
  uint32_t m = 0;
  uint32_t block_bytes = 0;
  DataHeader data;
};

std::string EncodeShardHeader(const ShardHeader& header);
// The whole header length announced by its first kShardHeaderPrefix bytes;
// Corruption if the magic, version or length is wrong.
Result<size_t> ShardHeaderLength(std::string_view prefix);
// Decodes a complete header (exactly ShardHeaderLength bytes); verifies its CRC.
Result<ShardHeader> DecodeShardHeader(std::string_view bytes);

// ---------------------------------------------------------------- footer

inline constexpr std::string_view kFooterMagic = "STRATAFT";  // 8 bytes
// size(8) + trailer length(4) + crc(4) + magic(8), after the trailer bytes.
inline constexpr size_t kFooterFixed = 24;
inline constexpr size_t kTrailerMax = 16 * 1024 * 1024;

struct ShardFooter {
  uint64_t object_size = 0;
  std::string trailer;
};

// trailer bytes followed by the fixed part.
std::string EncodeShardFooter(uint64_t object_size, std::string_view trailer);
// From the last kFooterFixed bytes of a file: the trailer length (so the
// caller knows how much more to read). Corruption on a bad magic/length.
Result<uint32_t> FooterTrailerLength(std::string_view fixed);
// Decodes trailer + fixed part (exactly trailer length + kFooterFixed bytes); verifies the CRC.
Result<ShardFooter> DecodeShardFooter(std::string_view bytes);

// ---------------------------------------------------------------- geometry

// Where each byte of an object lives, given k and the block size. Stripe s
// holds object bytes [s*k*B, min((s+1)*k*B, size)); its per-shard block
// length is L = min(B, ceil(stripe bytes / k)); data shard i holds stripe
// bytes [i*L, (i+1)*L) (zero-padded at the end of the object).
struct StripeLayout {
  uint64_t size = 0;
  uint32_t k = 1;
  uint32_t block_bytes = 1;

  uint64_t stripe_data_bytes() const { return uint64_t{k} * block_bytes; }
  uint64_t stripes() const { return (size + stripe_data_bytes() - 1) / stripe_data_bytes(); }
  uint64_t StripeStart(uint64_t s) const { return s * stripe_data_bytes(); }
  // Object bytes in stripe s.
  uint64_t StripeBytes(uint64_t s) const;
  // Per-shard block length of stripe s.
  uint32_t BlockLen(uint64_t s) const;
  // Offset of stripe s's block from the start of a shard's data area.
  uint64_t BlockOffset(uint64_t s) const { return s * (uint64_t{block_bytes} + kBlockCrcBytes); }
  // Bytes of a shard's data area (all blocks and their CRCs).
  uint64_t ShardDataBytes() const;
};

// ---------------------------------------------------------------- tombstone

// DRIVE/shards/xx/<id>.gone: `id` was removed while some drive was offline;
// every shard of it whose header version stamp is <= `removed_through` is
// dead (a returning drive's leftovers). docs/formats/shard-file.md.
inline constexpr std::string_view kTombstoneMagic = "STRATATB";  // 8 bytes
inline constexpr uint32_t kTombstoneFormatVersion = 1;

struct Tombstone {
  std::string id;
  uint64_t removed_through = 0;
};

std::string EncodeTombstone(const Tombstone& t);
// Corruption on a bad magic, version, length or CRC.
Result<Tombstone> DecodeTombstone(std::string_view bytes);

// ---------------------------------------------------------------- drive format

inline constexpr std::string_view kDriveFormatFile = "format";
inline constexpr std::string_view kDriveFormatFirstLine = "strata-drive-format 1";

struct DriveFormat {
  std::string deployment_id;
  std::string drive_id;
  uint32_t pool = 0;
  uint32_t set = 0;
  uint32_t position = 0;
  uint32_t drives = 0;
  uint32_t k = 0;
  uint32_t m = 0;
  uint32_t block_bytes = 0;
};

// "key=value" lines after kDriveFormatFirstLine, the last one "crc32c=<hex>"
// over every byte before it.
std::string EncodeDriveFormat(const DriveFormat& format);
Result<DriveFormat> DecodeDriveFormat(std::string_view text);

}  // namespace strata::storage

// The records of an archive pool's segment files (storage/archive_store.h;
// docs/formats/archive-segment.md). A segment is a sequence of records:
//
//   u8 type | u32 payload length | payload | u32 CRC32C of the three before
//
// Types: 'H' an entry starts (its id and DataHeader), 'F' one frame of its
// data (codec, raw length, the stored bytes), 'E' the entry ends (data size,
// trailer), 'A' the entry in progress was abandoned, 'T' a tombstone (an id
// and the generation it removes). Integers are little-endian.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "storage/data_store.h"

namespace strata::storage::archive {

inline constexpr size_t kRecordHeadBytes = 5;  // type + length
inline constexpr size_t kRecordTailBytes = 4;  // CRC32C
inline constexpr size_t kMaxPayloadBytes = 4u << 20;
inline constexpr size_t kFrameBytes = 1u << 20;  // raw bytes per frame

enum class Type : char {
  kEntry = 'H',
  kFrame = 'F',
  kEnd = 'E',
  kAbort = 'A',
  kTombstone = 'T',
};
enum class Codec : uint8_t { kRaw = 0, kZstd = 1 };

std::string EncodeRecord(Type type, std::string_view payload);
// The payload length a record head announces; nullopt if the type is
// unknown or the length past kMaxPayloadBytes.
std::optional<size_t> PayloadLength(std::string_view head);
struct Record {
  Type type;
  std::string_view payload;
};
// A whole record (head, payload, CRC); nullopt if it does not check.
std::optional<Record> DecodeRecord(std::string_view bytes);

std::string EntryPayload(const std::string& id, const DataHeader& header);
bool ParseEntry(std::string_view payload, std::string* id, DataHeader* header);
// Frame: codec and raw length before the stored bytes.
inline constexpr size_t kFramePrefixBytes = 5;
std::string FramePrefix(Codec codec, uint32_t raw_len);
bool ParseFramePrefix(std::string_view payload, Codec* codec, uint32_t* raw_len);
std::string EndPayload(uint64_t data_size, std::string_view trailer);
bool ParseEnd(std::string_view payload, uint64_t* data_size, std::string_view* trailer);
std::string TombstonePayload(const std::string& id, uint64_t stamp);
bool ParseTombstone(std::string_view payload, std::string* id, uint64_t* stamp);

}  // namespace strata::storage::archive

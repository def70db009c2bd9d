#include "storage/archive_format.h"

#include "common/checksum.h"
#include "common/le_coding.h"

namespace strata::storage::archive {
namespace {

using Cursor = LeReader;

bool KnownType(char t) {
  switch (static_cast<Type>(t)) {
    case Type::kEntry:
    case Type::kFrame:
    case Type::kEnd:
    case Type::kAbort:
    case Type::kTombstone:
      return true;
  }
  return false;
}

}  // namespace

std::string EncodeRecord(Type type, std::string_view payload) {
  std::string out;
  out.reserve(kRecordHeadBytes + payload.size() + kRecordTailBytes);
  out.push_back(static_cast<char>(type));
  PutLe32(out, static_cast<uint32_t>(payload.size()));
  out += payload;
  PutLe32(out, Crc32c(out.data(), out.size()));
  return out;
}

std::optional<size_t> PayloadLength(std::string_view head) {
  if (head.size() < kRecordHeadBytes || !KnownType(head[0])) return std::nullopt;
  const uint64_t n = GetLe(head, 1, 4);
  if (n > kMaxPayloadBytes) return std::nullopt;
  return static_cast<size_t>(n);
}

std::optional<Record> DecodeRecord(std::string_view bytes) {
  auto n = PayloadLength(bytes);
  if (!n || bytes.size() != kRecordHeadBytes + *n + kRecordTailBytes) return std::nullopt;
  const size_t covered = kRecordHeadBytes + *n;
  if (Crc32c(bytes.data(), covered) != GetLe(bytes, covered, 4)) return std::nullopt;
  return Record{static_cast<Type>(bytes[0]), bytes.substr(kRecordHeadBytes, *n)};
}

std::string EntryPayload(const std::string& id, const DataHeader& h) {
  std::string out;
  for (const std::string* s : {&id, &h.bucket, &h.key, &h.upload_id}) {
    PutLe32(out, static_cast<uint32_t>(s->size()));
    out += *s;
  }
  PutLe32(out, h.part_number);
  PutLe64(out, h.version_stamp);
  return out;
}

bool ParseEntry(std::string_view payload, std::string* id, DataHeader* h) {
  Cursor c{payload};
  *id = c.String();
  h->bucket = c.String();
  h->key = c.String();
  h->upload_id = c.String();
  h->part_number = static_cast<uint32_t>(c.Int(4));
  h->version_stamp = c.Int(8);
  return c.Done() && !id->empty();
}

std::string FramePrefix(Codec codec, uint32_t raw_len) {
  std::string out(1, static_cast<char>(codec));
  PutLe32(out, raw_len);
  return out;
}

bool ParseFramePrefix(std::string_view payload, Codec* codec, uint32_t* raw_len) {
  if (payload.size() < kFramePrefixBytes) return false;
  const uint8_t c = static_cast<uint8_t>(payload[0]);
  if (c != static_cast<uint8_t>(Codec::kRaw) && c != static_cast<uint8_t>(Codec::kZstd)) return false;
  *codec = static_cast<Codec>(c);
  *raw_len = static_cast<uint32_t>(GetLe(payload, 1, 4));
  if (*raw_len == 0 || *raw_len > kFrameBytes) return false;
  // A raw frame holds exactly its bytes.
  return *codec != Codec::kRaw || payload.size() - kFramePrefixBytes == *raw_len;
}

std::string EndPayload(uint64_t data_size, std::string_view trailer) {
  std::string out;
  PutLe64(out, data_size);
  out += trailer;
  return out;
}

bool ParseEnd(std::string_view payload, uint64_t* data_size, std::string_view* trailer) {
  if (payload.size() < 8) return false;
  *data_size = GetLe(payload, 0, 8);
  *trailer = payload.substr(8);
  return true;
}

std::string TombstonePayload(const std::string& id, uint64_t stamp) {
  std::string out;
  PutLe32(out, static_cast<uint32_t>(id.size()));
  out += id;
  PutLe64(out, stamp);
  return out;
}

bool ParseTombstone(std::string_view payload, std::string* id, uint64_t* stamp) {
  Cursor c{payload};
  *id = c.String();
  *stamp = c.Int(8);
  return c.Done() && !id->empty();
}

}  // namespace strata::storage::archive

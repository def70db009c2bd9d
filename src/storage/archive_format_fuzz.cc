// libFuzzer target: the records of archive segments (storage/archive_format.h).
// The input is one record as it would lie in a segment file. What decodes
// must be a known type with a payload within the limit, and each payload
// parser must either refuse or give values that encode back to the same
// payload.
// Seeds: tests/fuzz/archive_record/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "storage/archive_format.h"

using namespace strata::storage;
using namespace strata::storage::archive;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  (void)PayloadLength(in);
  auto r = DecodeRecord(in);
  if (!r) return 0;
  if (r->payload.size() > kMaxPayloadBytes) std::abort();
  if (EncodeRecord(r->type, r->payload) != in) std::abort();
  std::string id;
  DataHeader h;
  uint64_t n = 0;
  std::string_view trailer;
  Codec codec;
  uint32_t raw_len;
  switch (r->type) {
    case Type::kEntry:
      if (ParseEntry(r->payload, &id, &h) && EntryPayload(id, h) != r->payload) std::abort();
      break;
    case Type::kEnd:
      if (ParseEnd(r->payload, &n, &trailer) && EndPayload(n, trailer) != r->payload) std::abort();
      break;
    case Type::kTombstone:
      if (ParseTombstone(r->payload, &id, &n) && TombstonePayload(id, n) != r->payload) std::abort();
      break;
    case Type::kFrame:
      if (ParseFramePrefix(r->payload, &codec, &raw_len)) {
        if (FramePrefix(codec, raw_len) != r->payload.substr(0, kFramePrefixBytes)) std::abort();
        if (raw_len == 0 || raw_len > kFrameBytes) std::abort();
      }
      break;
    case Type::kAbort:
      break;
  }
  return 0;
}

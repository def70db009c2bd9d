// libFuzzer target: the on-drive formats of an erasure-coded pool
// (storage/shard_format.h): shard headers, shard footers, drive format files,
// the stripe geometry and tombstones. input[0] % 5 picks the decoder; bit 3 "re-seals"
// the input first (fixes its length fields and recomputes its CRC), so that
// the fuzzer gets past the checksums to the field decoding. Whatever decodes
// must satisfy the documented constraints and re-encode to an equal value.
// Seeds: tests/fuzz/shard_format/.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "storage/shard_format.h"

using namespace strata::storage;

namespace {

void SetFixed32LE(std::string* s, size_t at, uint32_t v) {
  std::string le;
  PutFixed32LE(&le, v);
  s->replace(at, 4, le);
}

void Header(std::string in, bool reseal) {
  if (reseal && in.size() >= kShardHeaderPrefix + 4 && in.size() <= kShardHeaderMax) {
    in.replace(0, 8, kShardMagic);
    SetFixed32LE(&in, 8, kShardFormatVersion);
    SetFixed32LE(&in, 12, static_cast<uint32_t>(in.size()));
    SetFixed32LE(&in, in.size() - 4, Crc32c(in.data(), in.size() - 4));
  }
  auto len = ShardHeaderLength(in);
  auto h = DecodeShardHeader(in);
  if (!h.ok()) return;
  FUZZ_CHECK(len.ok() && *len == in.size());
  FUZZ_CHECK(h->k >= 1 && h->k <= 255 && h->m <= 255 && h->shard_index <= 255);
  FUZZ_CHECK(h->block_bytes >= 1);
  auto again = DecodeShardHeader(EncodeShardHeader(*h));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(EncodeShardHeader(*again) == EncodeShardHeader(*h));
}

void Footer(std::string in, bool reseal) {
  if (reseal && in.size() >= kFooterFixed) {
    size_t fixed = in.size() - kFooterFixed;
    SetFixed32LE(&in, fixed + 8, static_cast<uint32_t>(fixed));
    in.replace(fixed + 16, 8, kFooterMagic);
    std::string resealed = EncodeShardFooter(DecodeFixed64LE(in.data() + fixed), in.substr(0, fixed));
    if (resealed.size() == in.size()) in = resealed;
  }
  auto f = DecodeShardFooter(in);
  if (!f.ok()) return;
  // Fixed-width: the encoding of what decoded is the input itself.
  FUZZ_CHECK(EncodeShardFooter(f->object_size, f->trailer) == in);
  auto len = FooterTrailerLength(std::string_view(in).substr(in.size() - kFooterFixed));
  FUZZ_CHECK(len.ok() && *len == f->trailer.size());
}

void Format(std::string in, bool reseal) {
  if (reseal) {
    size_t crc = in.rfind("crc32c=");
    if (crc != std::string::npos) in.resize(crc);
    if (!in.empty() && in.back() != '\n') in += "\n";
    char line[32];
    std::snprintf(line, sizeof(line), "crc32c=%08x\n", Crc32c(in.data(), in.size()));
    in += line;
  }
  auto f = DecodeDriveFormat(in);
  if (!f.ok()) return;
  // docs/formats/drive-format.md: k >= 1, k + m = drives, position < drives.
  FUZZ_CHECK(f->drives >= 1 && f->position < f->drives);
  FUZZ_CHECK(f->k >= 1 && f->block_bytes >= 1);
  FUZZ_CHECK(uint64_t{f->k} + f->m == f->drives);
  auto again = DecodeDriveFormat(EncodeDriveFormat(*f));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(EncodeDriveFormat(*again) == EncodeDriveFormat(*f));
}

void Geometry(std::string_view in) {
  if (in.size() < 13) return;
  StripeLayout l;
  // Object sizes far below 2^64 (5 TiB at most): stripes() would overflow near it.
  l.size = DecodeFixed64LE(in.data()) >> (16 + static_cast<uint8_t>(in[12]) % 48);
  l.k = 1 + static_cast<uint8_t>(in[8]) % 255;
  l.block_bytes = 1 + DecodeFixed32LE(in.data() + 9) % (64u << 20);
  uint64_t stripes = l.stripes();
  if (stripes > 4096) return;
  uint64_t total = 0;
  for (uint64_t s = 0; s < stripes; ++s) {
    uint64_t bytes = l.StripeBytes(s);
    FUZZ_CHECK(bytes >= 1 && bytes <= l.stripe_data_bytes());
    FUZZ_CHECK(uint64_t{l.BlockLen(s)} * l.k >= bytes && l.BlockLen(s) <= l.block_bytes);
    FUZZ_CHECK(l.BlockOffset(s) + l.BlockLen(s) + kBlockCrcBytes <= l.ShardDataBytes());
    total += bytes;
  }
  FUZZ_CHECK(total == l.size);
  FUZZ_CHECK(l.StripeBytes(stripes) == 0);
}

void TombstoneFile(std::string in, bool reseal) {
  if (reseal && in.size() >= 16) {
    in.replace(0, 8, kTombstoneMagic);
    SetFixed32LE(&in, 8, kTombstoneFormatVersion);
    SetFixed32LE(&in, in.size() - 4, Crc32c(in.data(), in.size() - 4));
  }
  auto t = DecodeTombstone(in);
  if (!t.ok()) return;
  std::string once = EncodeTombstone(*t);
  auto again = DecodeTombstone(once);
  FUZZ_CHECK(again.ok() && again->id == t->id && again->removed_through == t->removed_through);
  FUZZ_CHECK(EncodeTombstone(*again) == once);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool reseal = data[0] & 8;
  std::string in(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 5) {
    case 0: Header(std::move(in), reseal); break;
    case 1: Footer(std::move(in), reseal); break;
    case 2: Format(std::move(in), reseal); break;
    case 3: Geometry(in); break;
    case 4: TombstoneFile(std::move(in), reseal); break;
  }
  return 0;
}

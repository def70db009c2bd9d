#include "storage/shard_format.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <vector>

#include "common/checksum.h"
#include "common/encoding.h"

namespace strata::storage {

uint32_t Crc32c(const void* data, size_t n) { return strata::Crc32c(data, n); }

void PutFixed32LE(std::string* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void PutFixed64LE(std::string* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

uint32_t DecodeFixed32LE(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}

uint64_t DecodeFixed64LE(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(p[i]);
  return v;
}

// ---------------------------------------------------------------- header

std::string EncodeShardHeader(const ShardHeader& h) {
  std::string body;
  PutVarint64(&body, h.shard_index);
  PutVarint64(&body, h.k);
  PutVarint64(&body, h.m);
  PutVarint64(&body, h.block_bytes);
  PutLengthPrefixed(&body, h.id);
  PutLengthPrefixed(&body, h.data.bucket);
  PutLengthPrefixed(&body, h.data.key);
  PutLengthPrefixed(&body, h.data.upload_id);
  PutVarint64(&body, h.data.part_number);
  PutVarint64(&body, h.data.version_stamp);

  std::string out;
  out.reserve(kShardHeaderPrefix + body.size() + 4);
  out.append(kShardMagic);
  PutFixed32LE(&out, kShardFormatVersion);
  PutFixed32LE(&out, static_cast<uint32_t>(kShardHeaderPrefix + body.size() + 4));
  out.append(body);
  PutFixed32LE(&out, Crc32c(out.data(), out.size()));
  return out;
}

Result<size_t> ShardHeaderLength(std::string_view prefix) {
  if (prefix.size() < kShardHeaderPrefix) return Corruption("shard header: truncated");
  if (prefix.substr(0, kShardMagic.size()) != kShardMagic) {
    return Corruption("shard header: bad magic");
  }
  uint32_t version = DecodeFixed32LE(prefix.data() + 8);
  if (version != kShardFormatVersion) {
    return Corruption("shard header: unknown format version " + std::to_string(version));
  }
  uint32_t len = DecodeFixed32LE(prefix.data() + 12);
  if (len < kShardHeaderPrefix + 4 || len > kShardHeaderMax) {
    return Corruption("shard header: bad length " + std::to_string(len));
  }
  return static_cast<size_t>(len);
}

Result<ShardHeader> DecodeShardHeader(std::string_view bytes) {
  ASSIGN_OR_RETURN(size_t len, ShardHeaderLength(bytes));
  if (bytes.size() != len) return Corruption("shard header: length mismatch");
  uint32_t want = DecodeFixed32LE(bytes.data() + len - 4);
  if (Crc32c(bytes.data(), len - 4) != want) return Corruption("shard header: checksum mismatch");
  std::string_view in = bytes.substr(kShardHeaderPrefix, len - 4 - kShardHeaderPrefix);
  ShardHeader h;
  uint64_t index, k, m, block, part, stamp;
  std::string_view id, bucket, key, upload;
  if (!GetVarint64(&in, &index) || !GetVarint64(&in, &k) || !GetVarint64(&in, &m) ||
      !GetVarint64(&in, &block) || !GetLengthPrefixed(&in, &id) ||
      !GetLengthPrefixed(&in, &bucket) || !GetLengthPrefixed(&in, &key) ||
      !GetLengthPrefixed(&in, &upload) || !GetVarint64(&in, &part) ||
      !GetVarint64(&in, &stamp) || !in.empty()) {
    return Corruption("shard header: malformed fields");
  }
  if (index > 255 || k == 0 || k > 255 || m > 255 || block == 0 || block > UINT32_MAX ||
      part > UINT32_MAX) {
    return Corruption("shard header: field out of range");
  }
  if (index >= k + m) {  // shard i of k + m exists for i < k + m only
    return Corruption("shard header: shard index " + std::to_string(index) + " of a " +
                      std::to_string(k) + "+" + std::to_string(m) + " layout");
  }
  h.shard_index = static_cast<uint32_t>(index);
  h.k = static_cast<uint32_t>(k);
  h.m = static_cast<uint32_t>(m);
  h.block_bytes = static_cast<uint32_t>(block);
  h.id = std::string(id);
  h.data.bucket = std::string(bucket);
  h.data.key = std::string(key);
  h.data.upload_id = std::string(upload);
  h.data.part_number = static_cast<uint32_t>(part);
  h.data.version_stamp = stamp;
  return h;
}

// ---------------------------------------------------------------- footer

namespace {
uint32_t FooterCrc(std::string_view trailer, const char* size_and_len) {
  auto crc = Checksummer::Create(ChecksumAlgorithm::kCrc32c);
  crc->Update(trailer.data(), trailer.size());
  crc->Update(size_and_len, 12);
  std::string raw = crc->Final();
  uint32_t v = 0;
  for (unsigned char c : raw) v = v << 8 | c;
  return v;
}
}  // namespace

std::string EncodeShardFooter(uint64_t object_size, std::string_view trailer) {
  std::string out(trailer);
  size_t fixed = out.size();
  PutFixed64LE(&out, object_size);
  PutFixed32LE(&out, static_cast<uint32_t>(trailer.size()));
  PutFixed32LE(&out, FooterCrc(trailer, out.data() + fixed));
  out.append(kFooterMagic);
  return out;
}

Result<uint32_t> FooterTrailerLength(std::string_view fixed) {
  if (fixed.size() != kFooterFixed) return Corruption("shard footer: truncated");
  if (fixed.substr(16) != kFooterMagic) return Corruption("shard footer: bad magic");
  uint32_t len = DecodeFixed32LE(fixed.data() + 8);
  if (len > kTrailerMax) return Corruption("shard footer: bad trailer length");
  return len;
}

Result<ShardFooter> DecodeShardFooter(std::string_view bytes) {
  if (bytes.size() < kFooterFixed) return Corruption("shard footer: truncated");
  std::string_view fixed = bytes.substr(bytes.size() - kFooterFixed);
  ASSIGN_OR_RETURN(uint32_t len, FooterTrailerLength(fixed));
  if (bytes.size() != len + kFooterFixed) return Corruption("shard footer: length mismatch");
  std::string_view trailer = bytes.substr(0, len);
  if (FooterCrc(trailer, fixed.data()) != DecodeFixed32LE(fixed.data() + 12)) {
    return Corruption("shard footer: checksum mismatch");
  }
  ShardFooter f;
  f.object_size = DecodeFixed64LE(fixed.data());
  f.trailer = std::string(trailer);
  return f;
}

// ---------------------------------------------------------------- tombstone

std::string EncodeTombstone(const Tombstone& t) {
  std::string out(kTombstoneMagic);
  PutFixed32LE(&out, kTombstoneFormatVersion);
  PutLengthPrefixed(&out, t.id);
  PutFixed64LE(&out, t.removed_through);
  PutFixed32LE(&out, Crc32c(out.data(), out.size()));
  return out;
}

Result<Tombstone> DecodeTombstone(std::string_view bytes) {
  if (bytes.size() < kTombstoneMagic.size() + 4 + 1 + 8 + 4) return Corruption("tombstone: truncated");
  if (bytes.substr(0, kTombstoneMagic.size()) != kTombstoneMagic) {
    return Corruption("tombstone: bad magic");
  }
  uint32_t version = DecodeFixed32LE(bytes.data() + 8);
  if (version != kTombstoneFormatVersion) {
    return Corruption("tombstone: unknown format version " + std::to_string(version));
  }
  if (Crc32c(bytes.data(), bytes.size() - 4) != DecodeFixed32LE(bytes.data() + bytes.size() - 4)) {
    return Corruption("tombstone: checksum mismatch");
  }
  std::string_view in = bytes.substr(12, bytes.size() - 12 - 4);
  std::string_view id;
  if (!GetLengthPrefixed(&in, &id) || in.size() != 8) return Corruption("tombstone: malformed");
  return Tombstone{std::string(id), DecodeFixed64LE(in.data())};
}

// ---------------------------------------------------------------- geometry

uint64_t StripeLayout::StripeBytes(uint64_t s) const {
  uint64_t start = StripeStart(s);
  if (start >= size) return 0;
  return std::min<uint64_t>(stripe_data_bytes(), size - start);
}

uint32_t StripeLayout::BlockLen(uint64_t s) const {
  uint64_t bytes = StripeBytes(s);
  return static_cast<uint32_t>(std::min<uint64_t>(block_bytes, (bytes + k - 1) / k));
}

uint64_t StripeLayout::ShardDataBytes() const {
  uint64_t n = stripes();
  if (n == 0) return 0;
  return BlockOffset(n - 1) + BlockLen(n - 1) + kBlockCrcBytes;
}

// ---------------------------------------------------------------- drive format

std::string EncodeDriveFormat(const DriveFormat& f) {
  std::string out(kDriveFormatFirstLine);
  out += "\n";
  auto line = [&](std::string_view key, const std::string& value) {
    out.append(key);
    out += "=";
    out += value;
    out += "\n";
  };
  line("deployment", f.deployment_id);
  line("drive", f.drive_id);
  line("pool", std::to_string(f.pool));
  line("set", std::to_string(f.set));
  line("position", std::to_string(f.position));
  line("drives", std::to_string(f.drives));
  line("k", std::to_string(f.k));
  line("m", std::to_string(f.m));
  line("block_bytes", std::to_string(f.block_bytes));
  char crc[16];
  std::snprintf(crc, sizeof(crc), "%08x", Crc32c(out.data(), out.size()));
  line("crc32c", crc);
  return out;
}

namespace {
bool ParseU32(std::string_view s, uint32_t* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}
bool IsToken(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}
}  // namespace

Result<DriveFormat> DecodeDriveFormat(std::string_view text) {
  size_t crc_pos = text.rfind("crc32c=");
  if (text.substr(0, kDriveFormatFirstLine.size() + 1) !=
      std::string(kDriveFormatFirstLine) + "\n") {
    return Corruption("format file: not a strata drive format (bad first line)");
  }
  if (crc_pos == std::string_view::npos || (crc_pos > 0 && text[crc_pos - 1] != '\n')) {
    return Corruption("format file: no checksum line");
  }
  std::string_view crc_text = text.substr(crc_pos + 7);
  if (crc_text.empty() || crc_text.back() != '\n') return Corruption("format file: truncated");
  crc_text.remove_suffix(1);
  char want[16];
  std::snprintf(want, sizeof(want), "%08x", Crc32c(text.data(), crc_pos));
  if (crc_text != want) return Corruption("format file: checksum mismatch (torn or damaged)");

  DriveFormat f;
  std::string_view body = text.substr(kDriveFormatFirstLine.size() + 1,
                                      crc_pos - kDriveFormatFirstLine.size() - 1);
  bool seen[9] = {};
  while (!body.empty()) {
    size_t nl = body.find('\n');
    if (nl == std::string_view::npos) return Corruption("format file: unterminated line");
    std::string_view line = body.substr(0, nl);
    body.remove_prefix(nl + 1);
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) return Corruption("format file: line without '='");
    std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    bool ok = true;
    if (key == "deployment") {
      ok = IsToken(value), f.deployment_id = std::string(value), seen[0] = true;
    } else if (key == "drive") {
      ok = IsToken(value), f.drive_id = std::string(value), seen[1] = true;
    } else if (key == "pool") {
      ok = ParseU32(value, &f.pool), seen[2] = true;
    } else if (key == "set") {
      ok = ParseU32(value, &f.set), seen[3] = true;
    } else if (key == "position") {
      ok = ParseU32(value, &f.position), seen[4] = true;
    } else if (key == "drives") {
      ok = ParseU32(value, &f.drives), seen[5] = true;
    } else if (key == "k") {
      ok = ParseU32(value, &f.k), seen[6] = true;
    } else if (key == "m") {
      ok = ParseU32(value, &f.m), seen[7] = true;
    } else if (key == "block_bytes") {
      ok = ParseU32(value, &f.block_bytes), seen[8] = true;
    }  // unknown keys: written by a newer version, ignored
    if (!ok) return Corruption("format file: bad value for " + std::string(key));
  }
  for (bool s : seen) {
    if (!s) return Corruption("format file: a required key is missing");
  }
  if (f.drives == 0 || f.position >= f.drives || f.k == 0 || uint64_t{f.k} + f.m != f.drives ||
      f.block_bytes == 0) {
    return Corruption("format file: inconsistent layout");
  }
  return f;
}

}  // namespace strata::storage

// One shard of one id opened for reading (a "slot"): opening it, verifying
// its header (does it belong here?) and footer (is it complete?), and reading
// verified blocks. Used by the reader, heal and ReadHeaderAndTrailer.
#include <algorithm>

#include "storage/erasure_internal.h"

namespace strata::storage::internal {

namespace {
std::string Describe(const DataHeader& h) {
  return h.bucket + "/" + h.key + (h.upload_id.empty() ? "" : " upload " + h.upload_id) +
         " version stamp " + std::to_string(h.version_stamp);
}
}  // namespace

bool OfGeneration(ShardSlot& slot, const DataHeader& generation) {
  if (slot.header.data == generation) return true;
  slot.SetFault(Fault::kCorrupt, "shard of another generation (" + Describe(slot.header.data) +
                                     ", reading " + Describe(generation) + ")");
  return false;
}

int ChooseReference(const std::vector<ShardSlot>& slots, const std::vector<bool>& has_footer,
                    int k) {
  // Count the shards of each generation with a valid header; a generation
  // qualifies through its first shard with a valid footer.
  int best = -1;
  bool best_complete = false;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!has_footer[i]) continue;
    const DataHeader& gen = slots[i].header.data;
    int count = 0;
    for (const ShardSlot& s : slots) count += s.header_checked && s.header.data == gen ? 1 : 0;
    const bool complete = count >= k;
    if (best >= 0) {
      const uint64_t best_stamp = slots[best].header.data.version_stamp;
      if (best_complete && !complete) continue;
      if (best_complete == complete && gen.version_stamp <= best_stamp) continue;
    }
    best = static_cast<int>(i);
    best_complete = complete;
  }
  return best;
}

void RejectOtherGenerations(std::vector<ShardSlot>& slots, const DataHeader& generation) {
  for (ShardSlot& slot : slots) {
    if (slot.fault == Fault::kNone && slot.header_checked) OfGeneration(slot, generation);
  }
}

ShardSlot ErasureStoreImpl::OpenSlot(int i, const std::string& id, const std::string& suffix) {
  ShardSlot slot;
  const Drive& d = drive(i);
  if (!d.online()) {
    slot.SetFault(Fault::kOffline, d.path + ": drive " + DriveStateName(d.state));
    return slot;
  }
  auto file = fs_->NewReadableFile(ShardPath(i, id) + suffix);
  if (!file.ok()) {
    slot.SetFault(file.status().code() == Code::kNotFound ? Fault::kMissing : Fault::kIO,
                  file.status().ToString());
    return slot;
  }
  slot.file = std::move(file).value();
  return slot;
}

std::vector<ShardSlot> ErasureStoreImpl::OpenSlots(const std::string& id, int* found) {
  std::vector<ShardSlot> slots;
  slots.reserve(drive_count());
  *found = 0;
  for (int i = 0; i < drive_count(); ++i) {
    slots.push_back(OpenSlot(i, id));
    if (slots.back().file) ++*found;
  }
  return slots;
}

bool ErasureStoreImpl::CheckHeader(ShardSlot& slot, int i, const std::string& id,
                                   const DataHeader* generation) {
  if (slot.fault != Fault::kNone) return false;
  if (slot.header_checked) return generation == nullptr || OfGeneration(slot, *generation);
  std::string buf(4096, '\0');
  auto n = slot.file->ReadAt(0, buf.data(), buf.size());
  if (!n.ok()) {
    slot.SetFault(Fault::kIO, n.status().ToString());
    return false;
  }
  buf.resize(*n);
  auto len = ShardHeaderLength(buf);
  if (!len.ok()) {
    slot.SetFault(Fault::kCorrupt, ShardPath(i, id) + ": " + len.status().message());
    return false;
  }
  if (*len > buf.size()) {
    buf.assign(*len, '\0');
    auto n2 = slot.file->ReadAt(0, buf.data(), buf.size());
    if (!n2.ok()) {
      slot.SetFault(Fault::kIO, n2.status().ToString());
      return false;
    }
    buf.resize(*n2);
    if (*n2 < *len) {
      slot.SetFault(Fault::kCorrupt, ShardPath(i, id) + ": shard header: truncated");
      return false;
    }
  }
  auto header = DecodeShardHeader(std::string_view(buf).substr(0, *len));
  if (!header.ok()) {
    slot.SetFault(Fault::kCorrupt, ShardPath(i, id) + ": " + header.status().message());
    return false;
  }
  if (header->id != id || header->shard_index != static_cast<uint32_t>(i) ||
      header->k != static_cast<uint32_t>(k_) || header->m != static_cast<uint32_t>(m_) ||
      header->block_bytes != block_) {
    slot.SetFault(Fault::kCorrupt,
                  ShardPath(i, id) + ": shard header names id " + header->id + " shard " +
                      std::to_string(header->shard_index) + " of " + std::to_string(header->k) +
                      "+" + std::to_string(header->m) + "/" + std::to_string(header->block_bytes) +
                      ", expected shard " + std::to_string(i) + " of " + std::to_string(k_) + "+" +
                      std::to_string(m_) + "/" + std::to_string(block_));
    return false;
  }
  slot.header = std::move(header).value();
  slot.header_len = *len;
  slot.header_checked = true;
  return generation == nullptr || OfGeneration(slot, *generation);
}

Result<ShardFooter> ErasureStoreImpl::ReadFooter(ShardSlot& slot, int i, const std::string& id) {
  STRATA_CHECK(slot.header_checked, "ReadFooter before CheckHeader");
  uint64_t size = slot.file->Size();
  auto corrupt = [&](const std::string& why) {
    slot.SetFault(Fault::kCorrupt, ShardPath(i, id) + ": " + why);
    return Corruption(slot.why);
  };
  if (size < slot.header_len + kFooterFixed) return corrupt("shard footer: truncated");
  size_t want = static_cast<size_t>(std::min<uint64_t>(size - slot.header_len, 4096));
  std::string buf(want, '\0');
  auto n = slot.file->ReadAt(size - want, buf.data(), want);
  if (!n.ok()) {
    slot.SetFault(Fault::kIO, n.status().ToString());
    return n.status();
  }
  if (*n != want) return corrupt("shard footer: short read");
  auto len = FooterTrailerLength(std::string_view(buf).substr(want - kFooterFixed));
  if (!len.ok()) return corrupt(len.status().message());
  size_t total = *len + kFooterFixed;
  if (total > size - slot.header_len) return corrupt("shard footer: bad trailer length");
  if (total > want) {
    buf.assign(total, '\0');
    auto n2 = slot.file->ReadAt(size - total, buf.data(), total);
    if (!n2.ok()) {
      slot.SetFault(Fault::kIO, n2.status().ToString());
      return n2.status();
    }
    if (*n2 != total) return corrupt("shard footer: short read");
  } else {
    buf.erase(0, want - total);
  }
  auto footer = DecodeShardFooter(buf);
  if (!footer.ok()) return corrupt(footer.status().message());
  const uint64_t expected = slot.header_len + Layout(footer->object_size).ShardDataBytes() + total;
  if (expected != size) {
    return corrupt("shard file is " + std::to_string(size) + " bytes, its layout needs " +
                   std::to_string(expected));
  }
  return footer;
}

Fault ReadVerifiedBlock(ShardSlot& slot, const StripeLayout& layout, uint64_t s, uint32_t len,
                        uint8_t* dst, std::string* why) {
  STRATA_CHECK(slot.header_checked && len <= layout.block_bytes,
               "block of " + std::to_string(len) + " bytes read from a shard of " +
                   std::to_string(layout.block_bytes) + "-byte blocks");
  uint64_t off = slot.header_len + layout.BlockOffset(s);
  auto n = slot.file->ReadAt(off, reinterpret_cast<char*>(dst), len + kBlockCrcBytes);
  if (!n.ok()) {
    *why = n.status().ToString();
    return Fault::kIO;
  }
  if (*n != len + kBlockCrcBytes) {
    *why = "stripe " + std::to_string(s) + ": block truncated";
    return Fault::kCorrupt;
  }
  if (Crc32c(dst, len) != DecodeFixed32LE(reinterpret_cast<const char*>(dst) + len)) {
    *why = "stripe " + std::to_string(s) + ": block checksum mismatch";
    return Fault::kCorrupt;
  }
  return Fault::kNone;
}

Status StripeError(const std::string& id, uint64_t s, int good, int k,
                   const std::vector<Fault>& faults, const std::vector<std::string>& whys) {
  Fault worst = Fault::kNone;
  std::string detail;
  for (size_t i = 0; i < faults.size(); ++i) {
    if (faults[i] == Fault::kNone) continue;
    worst = std::max(worst, faults[i]);
    detail += "; shard " + std::to_string(i) + ": " + whys[i];
  }
  std::string msg = "data " + id + ": stripe " + std::to_string(s) + " has only " +
                    std::to_string(good) + " readable blocks, need " + std::to_string(k) + detail;
  switch (worst) {
    case Fault::kCorrupt:
    case Fault::kMissing:
      return Corruption(msg);
    case Fault::kIO:
      return IOError(msg);
    default:
      return Unavailable(msg);
  }
}

}  // namespace strata::storage::internal

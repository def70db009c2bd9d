// The erasure reader: serves object bytes from the data shards while their
// blocks verify; a missing, unreadable or corrupt block makes it read the
// other blocks of that stripe until k verify, reconstruct, serve the correct
// bytes and report the id for healing (docs/formats/shard-file.md, "Reading").
#include <cstring>
#include <mutex>

#include "common/checksum.h"
#include "storage/erasure_internal.h"

namespace strata::storage::internal {
namespace {

class ErasureReader : public DataReader {
 public:
  // `slots` are every drive's shard of `id`; slots[ref]'s header and footer
  // verified, and its generation is the one read (other generations count
  // as corrupt shards).
  ErasureReader(ErasureStoreImpl* store, std::string id, uint64_t size,
                std::vector<ShardSlot> slots, int ref);
  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) override;
  uint64_t size() const override { return layout_.size; }
  void ReportHealOnce();

 private:
  enum class BlockState : uint8_t { kUnknown, kGood, kBad };
  bool ReadDirect(uint64_t s, int i, uint32_t len, char* dst);
  void ResetCache(uint64_t s);
  Status LoadDataBlock(uint64_t s, int i);
  Status ReconstructStripe();
  // Reads block i of the cached stripe into cache_[i]; records why it failed.
  void ReadBlockToCache(int i);
  void SizeCacheBlock(int i);

  ErasureStoreImpl* store_;
  std::string id_;
  StripeLayout layout_;
  int k_, n_;
  std::vector<ShardSlot> slots_;
  DataHeader generation_;
  std::mutex mu_;
  // The stripe cache: the last stripe touched, block by block.
  int64_t cache_stripe_ = -1;
  uint32_t cache_len_ = 0;
  std::vector<std::vector<uint8_t>> cache_;
  std::vector<BlockState> state_;
  std::vector<Fault> fault_;
  std::vector<std::string> why_;
  std::vector<bool> slot_counted_;  // slot faults counted (drive error counters)
  bool heal_reported_ = false;
  // A data shard failed as a whole (missing, unreadable header, ...): known
  // at Open or met by ReadBlockToCache, never cleared; reads stop going
  // direct (see ReadAt).
  bool data_shard_lost_ = false;
  std::unique_ptr<Checksummer> crc_;
};

ErasureReader::ErasureReader(ErasureStoreImpl* store, std::string id, uint64_t size,
                             std::vector<ShardSlot> slots, int ref)
    : store_(store),
      id_(std::move(id)),
      layout_(store->Layout(size)),
      k_(store->k()),
      n_(store->drive_count()),
      slots_(std::move(slots)),
      cache_(n_),
      state_(n_, BlockState::kUnknown),
      fault_(n_, Fault::kNone),
      why_(n_),
      slot_counted_(n_, false) {
  STRATA_CHECK(static_cast<int>(slots_.size()) == n_ && ref >= 0 && ref < n_ &&
                   slots_[ref].header_checked,
               "reader needs one slot per drive and a verified reference");
  generation_ = slots_[ref].header.data;
  for (int j = 0; j < k_; ++j) data_shard_lost_ = data_shard_lost_ || slots_[j].fault != Fault::kNone;
}

void ErasureReader::ReportHealOnce() {
  if (heal_reported_) return;
  heal_reported_ = true;
  store_->ReportHeal(id_);
}

void ErasureReader::ResetCache(uint64_t s) {
  cache_stripe_ = static_cast<int64_t>(s);
  cache_len_ = layout_.BlockLen(s);
  std::fill(state_.begin(), state_.end(), BlockState::kUnknown);
  std::fill(fault_.begin(), fault_.end(), Fault::kNone);
}

bool ErasureReader::ReadDirect(uint64_t s, int i, uint32_t len, char* dst) {
  ShardSlot& slot = slots_[i];
  if (!store_->CheckHeader(slot, i, id_, &generation_)) return false;
  uint64_t off = slot.header_len + layout_.BlockOffset(s);
  // Read in slices and checksum each while it is still in the CPU cache:
  // verification then costs little next to the copy from the page cache.
  constexpr uint32_t kSlice = 128 * 1024;
  if (!crc_) crc_ = Checksummer::Create(ChecksumAlgorithm::kCrc32c);
  for (uint32_t done = 0; done < len;) {
    uint32_t want = std::min(kSlice, len - done);
    auto n = slot.file->ReadAt(off + done, dst + done, want);
    if (!n.ok() || *n != want) {
      crc_->Final();  // reset
      return false;   // the slow path re-reads it and records why
    }
    crc_->Update(dst + done, want);
    done += want;
  }
  std::string raw = crc_->Final();
  uint32_t got = 0;
  for (unsigned char c : raw) got = got << 8 | c;
  char crc[kBlockCrcBytes];
  auto c = slot.file->ReadAt(off + len, crc, kBlockCrcBytes);
  return c.ok() && *c == kBlockCrcBytes && got == DecodeFixed32LE(crc);
}

void ErasureReader::SizeCacheBlock(int i) {
  if (cache_[i].size() < store_->block_bytes() + kBlockCrcBytes) {
    cache_[i].resize(store_->block_bytes() + kBlockCrcBytes);
  }
}

void ErasureReader::ReadBlockToCache(int i) {
  ShardSlot& slot = slots_[i];
  if (!store_->CheckHeader(slot, i, id_, &generation_)) {
    state_[i] = BlockState::kBad;
    fault_[i] = slot.fault;
    why_[i] = slot.why;
    if (!slot_counted_[i]) {  // a shard that cannot be used counts once per reader
      slot_counted_[i] = true;
      store_->CountFault(i, slot.fault);
    }
    if (i < k_ && slot.fault != Fault::kNone) data_shard_lost_ = true;
    return;
  }
  SizeCacheBlock(i);
  fault_[i] =
      ReadVerifiedBlock(slot, layout_, cache_stripe_, cache_len_, cache_[i].data(), &why_[i]);
  state_[i] = fault_[i] == Fault::kNone ? BlockState::kGood : BlockState::kBad;
  store_->CountFault(i, fault_[i]);
}

Status ErasureReader::LoadDataBlock(uint64_t s, int i) {
  if (cache_stripe_ != static_cast<int64_t>(s)) ResetCache(s);
  if (state_[i] == BlockState::kUnknown) ReadBlockToCache(i);
  if (state_[i] == BlockState::kGood) return Status::OK();
  return ReconstructStripe();
}

Status ErasureReader::ReconstructStripe() {
  ReportHealOnce();  // something is missing or bad: the id needs healing
  int good = 0;
  for (int j = 0; j < n_; ++j) good += state_[j] == BlockState::kGood ? 1 : 0;
  for (int j = 0; j < n_ && good < k_; ++j) {
    if (state_[j] != BlockState::kUnknown) continue;
    ReadBlockToCache(j);
    if (state_[j] == BlockState::kGood) ++good;
  }
  if (good < k_) {
    Status st = StripeError(id_, cache_stripe_, good, k_, fault_, why_);
    cache_stripe_ = -1;  // retry from the drives next time
    return st;
  }
  // Only the data blocks are served: rebuild the missing ones, not parity.
  std::vector<uint8_t*> ptrs(n_);
  std::vector<bool> present(n_), wanted(n_);
  for (int j = 0; j < n_; ++j) {
    present[j] = state_[j] == BlockState::kGood;
    wanted[j] = j < k_ && !present[j];
    if (!present[j] && !wanted[j]) continue;  // never touched: no buffer
    SizeCacheBlock(j);
    ptrs[j] = cache_[j].data();
  }
  Status st = store_->code().Reconstruct(cache_len_, ptrs.data(), present, &wanted);
  if (!st.ok()) {
    cache_stripe_ = -1;
    return st;
  }
  std::fill(state_.begin(), state_.begin() + k_, BlockState::kGood);
  return Status::OK();
}

Result<size_t> ErasureReader::ReadAt(uint64_t offset, char* buf, size_t n) {
  std::lock_guard lock(mu_);
  if (offset >= layout_.size) return size_t{0};
  n = static_cast<size_t>(std::min<uint64_t>(n, layout_.size - offset));
  size_t done = 0;
  while (done < n) {
    const uint64_t pos = offset + done;
    const uint64_t s = pos / layout_.stripe_data_bytes();
    const uint64_t in_stripe = pos - layout_.StripeStart(s);
    const uint64_t stripe_bytes = layout_.StripeBytes(s);
    const uint32_t len = layout_.BlockLen(s);
    const int i = static_cast<int>(in_stripe / len);
    STRATA_CHECK(i < k_, "object byte " + std::to_string(pos) + " maps to shard " +
                             std::to_string(i) + " of k = " + std::to_string(k_));
    const uint64_t block_start = uint64_t{static_cast<uint32_t>(i)} * len;
    const uint64_t block_bytes = std::min<uint64_t>(len, stripe_bytes - block_start);
    const uint64_t in_block = in_stripe - block_start;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(block_bytes - in_block, n - done));
    // A whole block outside the cached stripe goes straight to the caller's
    // buffer (the common case of big sequential reads), unless a data shard
    // is known to be unusable: then every stripe needs rebuilding, and the
    // blocks read to serve it are the sources of the rebuild, read once.
    // Anything else goes through the stripe cache.
    if (cache_stripe_ != static_cast<int64_t>(s) && in_block == 0 && take == len &&
        !data_shard_lost_ && ReadDirect(s, i, len, buf + done)) {
      done += take;
      continue;
    }
    RETURN_IF_ERROR(LoadDataBlock(s, i));
    std::memcpy(buf + done, cache_[i].data() + in_block, take);
    done += take;
  }
  return n;
}

}  // namespace

Result<std::unique_ptr<DataReader>> ErasureStoreImpl::Open(const std::string& id, uint64_t size) {
  if (!ValidId(id)) return InvalidArgument("bad data id '" + id + "'");
  // Open every shard now: a reader keeps reading what it opened even if the
  // data is removed or replaced meanwhile (POSIX unlink semantics). Under the
  // shared id lock, so that they are one generation (see IdLock).
  std::shared_lock lock(IdLock(id));
  int found = 0;
  std::vector<ShardSlot> slots = OpenSlots(id, &found);
  if (found == 0) return NotFound("data " + id + ": no shard on any drive");
  // The reference: the first shard whose header and footer verify and whose
  // size is the one the metadata records.
  Status last, wrong_size;
  int ref = -1;
  for (int i = 0; i < drive_count() && ref < 0; ++i) {
    if (!CheckHeader(slots[i], i, id)) {
      last = Corruption(slots[i].why);
      continue;
    }
    auto footer = ReadFooter(slots[i], i, id);
    if (!footer.ok()) {
      last = footer.status();
    } else if (footer->object_size != size) {
      wrong_size = Corruption("data " + id + ": metadata records " + std::to_string(size) +
                              " bytes, shard " + std::to_string(i) + " says " +
                              std::to_string(footer->object_size));
      slots[i].SetFault(Fault::kCorrupt, wrong_size.message());
    } else {
      ref = i;
    }
  }
  lock.unlock();
  if (ref < 0) {
    if (!wrong_size.ok()) return wrong_size;
    return Corruption("data " + id + ": no shard has a valid header and footer (last: " +
                      last.ToString() + ")");
  }
  bool lost = false;  // a shard file gone from an online drive (wiped, deleted)
  for (const ShardSlot& slot : slots) lost = lost || slot.fault == Fault::kMissing;
  auto reader = std::make_unique<ErasureReader>(this, id, size, std::move(slots), ref);
  if (lost) reader->ReportHealOnce();  // costs no I/O: the opens told us
  return std::unique_ptr<DataReader>(std::move(reader));
}

}  // namespace strata::storage::internal

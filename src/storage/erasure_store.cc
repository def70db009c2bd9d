// ErasureDataStore: see erasure_store.h and docs/formats/shard-file.md,
// docs/formats/drive-format.md.
#include "storage/erasure_store.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "common/checksum.h"
#include "common/encoding.h"
#include "common/log.h"
#include "ec/erasure_code.h"
#include "io/dirs.h"
#include "storage/shard_format.h"

namespace strata::storage {

void DefaultLayout(int drives, int* k, int* m) {
  int parity;
  if (drives <= 1) {
    parity = 0;
  } else if (drives == 2) {
    parity = 1;
  } else if (drives == 3) {
    parity = 1;
  } else if (drives <= 8) {
    parity = 2;
  } else if (drives <= 11) {
    parity = 3;
  } else {
    parity = 4;
  }
  *k = std::max(drives, 1) - parity;
  *m = parity;
}

namespace {

constexpr int kMaxDrives = 16;
constexpr size_t kMinBlockBytes = 16;
constexpr size_t kMaxBlockBytes = 64 << 20;
constexpr int kIdLocks = 64;
constexpr const char* kPartSuffix = ".part";  // a shard being written
constexpr const char* kHealSuffix = ".heal";  // a shard being rebuilt

std::string RandomHex(size_t bytes) {
  std::random_device rd;
  std::string raw;
  for (size_t i = 0; i < bytes; ++i) raw.push_back(static_cast<char>(rd() & 0xFF));
  return HexEncode(raw);
}

// Ids name files: keep them to a safe alphabet.
bool ValidId(const std::string& id) {
  if (id.size() < 2 || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string StripSlashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string StateName(DriveState s) {
  switch (s) {
    case DriveState::kOnline:
      return "online";
    case DriveState::kMissing:
      return "missing";
    case DriveState::kUnformatted:
      return "unformatted";
    case DriveState::kFaulty:
      return "faulty";
  }
  return "?";
}

// Runs fn(i) for every i in `which`, concurrently when there is more than one
// (per-drive syncs: their latencies should overlap, not add up).
template <typename Fn>
void ForEachParallel(const std::vector<int>& which, Fn fn) {
  if (which.size() <= 1) {
    for (int i : which) fn(i);
    return;
  }
  std::vector<std::thread> threads;
  threads.reserve(which.size() - 1);
  for (size_t j = 1; j < which.size(); ++j) threads.emplace_back([&fn, i = which[j]] { fn(i); });
  fn(which[0]);
  for (auto& t : threads) t.join();
}

// Why a block (or a whole shard) could not be used; ordered by how much it
// says about the data (the worst one names the error of a failed read).
enum class Fault { kNone = 0, kOffline, kIO, kMissing, kCorrupt };

struct Drive {
  std::string path;
  int position = 0;
  DriveState state = DriveState::kOnline;
  std::string detail;
  bool online() const { return state == DriveState::kOnline; }
};

// One shard of one id, opened for reading.
struct ShardSlot {
  Fault fault = Fault::kNone;  // kNone: usable so far
  std::string why;
  std::unique_ptr<io::ReadableFile> file;
  bool header_checked = false;
  size_t header_len = 0;
  ShardHeader header;

  void SetFault(Fault f, std::string reason) {
    fault = f;
    why = std::move(reason);
  }
};

class ErasureStoreImpl;

// ---------------------------------------------------------------- writer

class ErasureWriter : public DataWriter {
 public:
  ErasureWriter(ErasureStoreImpl* store, std::string id, const DataHeader& header);
  ~ErasureWriter() override {
    if (!finished_) Abort();
  }
  Status Init();
  Status Append(std::string_view data) override;
  Status Finish(std::string_view trailer) override;
  void Abort() override;

 private:
  struct Shard {
    std::unique_ptr<io::WritableFile> file;
    std::string temp;
    std::string final_path;
    std::string dir;
    bool active = false;
    bool renamed = false;
    Status error;
  };
  void Fail(int i, const Status& st);
  int ActiveCount() const;
  Status CheckQuorum();
  Status FlushStripe(size_t bytes);
  void RemoveAll();

  ErasureStoreImpl* store_;
  std::string id_;
  DataHeader header_;
  int k_, m_, n_;
  size_t block_;
  std::vector<Shard> shards_;
  std::vector<uint8_t> stripe_;  // k * block bytes of data
  std::vector<std::vector<uint8_t>> parity_;
  size_t fill_ = 0;
  uint64_t size_ = 0;
  Status failed_;  // sticky
  bool finished_ = false;
};

// ---------------------------------------------------------------- reader

class ErasureReader : public DataReader {
 public:
  ErasureReader(ErasureStoreImpl* store, std::string id, uint64_t size,
                std::vector<ShardSlot> slots);
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

  ErasureStoreImpl* store_;
  std::string id_;
  StripeLayout layout_;
  int k_, m_, n_;
  std::vector<ShardSlot> slots_;
  std::mutex mu_;
  // The stripe cache: the last stripe touched, block by block.
  int64_t cache_stripe_ = -1;
  uint32_t cache_len_ = 0;
  std::vector<std::vector<uint8_t>> cache_;
  std::vector<BlockState> state_;
  std::vector<Fault> fault_;
  std::vector<std::string> why_;
  bool heal_reported_ = false;
  std::unique_ptr<Checksummer> crc_;
};

// ---------------------------------------------------------------- store

Status WriteFormat(io::FileSystem* fs, const std::string& drive, const DriveFormat& format);
struct FoundFormat {
  enum Kind { kAbsent, kBlank, kFormatted, kBroken } kind = kBlank;
  DriveFormat format;
  std::string why;
};
FoundFormat ReadFormat(io::FileSystem* fs, const std::string& drive);

class ErasureStoreImpl final : public ErasureDataStore {
 public:
  ErasureStoreImpl(io::FileSystem* fs, std::vector<Drive> drives, int k, int m, size_t block,
                   std::unique_ptr<ec::ErasureCode> code)
      : fs_(fs), drives_(std::move(drives)), k_(k), m_(m), block_(block), code_(std::move(code)) {}

  Result<std::unique_ptr<DataWriter>> Create(const std::string& id,
                                             const DataHeader& header) override {
    if (!ValidId(id)) return InvalidArgument("bad data id '" + id + "'");
    auto writer = std::make_unique<ErasureWriter>(this, id, header);
    RETURN_IF_ERROR(writer->Init());
    return std::unique_ptr<DataWriter>(std::move(writer));
  }

  Result<std::unique_ptr<DataReader>> Open(const std::string& id, uint64_t size) override;
  Status Remove(const std::string& id) override;
  size_t inline_max_bytes() const override { return 0; }

  int k() const override { return k_; }
  int m() const override { return m_; }
  std::vector<DriveInfo> Drives() override;
  void SetHealCallback(std::function<void(const std::string& id)> callback) override {
    std::lock_guard lock(cb_mu_);
    heal_cb_ = std::move(callback);
  }
  Result<HealResult> Heal(const std::string& id) override;
  Result<std::vector<std::string>> ListIds() override;
  Result<std::pair<DataHeader, std::string>> ReadHeaderAndTrailer(const std::string& id) override;

  // ---- used by the writer and reader
  int drive_count() const { return static_cast<int>(drives_.size()); }
  const Drive& drive(int i) const { return drives_[i]; }
  size_t block_bytes() const { return block_; }
  const ec::ErasureCode& code() const { return *code_; }
  io::FileSystem* fs() const { return fs_; }
  int quorum() const { return m_ >= 1 ? k_ + 1 : k_; }

  std::string ShardDir(int i, const std::string& id) const {
    return drives_[i].path + "/shards/" + id.substr(0, 2);
  }
  std::string ShardPath(int i, const std::string& id) const {
    return ShardDir(i, id) + "/" + id;
  }

  // Creates a shard file; recreates its shard sub-directory if someone
  // removed it, but never the drive itself: a drive whose format file is gone
  // was removed or unmounted, and writing there would fill the parent
  // filesystem with shards no restart would find.
  Result<std::unique_ptr<io::WritableFile>> NewShardFile(int i, const std::string& path) {
    auto file = fs_->NewWritableFile(path);
    if (file.ok() || file.status().code() != Code::kNotFound) return file;
    if (!fs_->FileExists(drives_[i].path + "/format")) RETURN_IF_ERROR(ReformatWiped(i));
    RETURN_IF_ERROR(io::CreateDirsDurably(fs_, path.substr(0, path.rfind('/'))));
    return fs_->NewWritableFile(path);
  }

  // A drive wiped while the server runs (its directory is there, empty) is
  // formatted again at its position, as Open does, so heal can refill it. A
  // drive whose directory is gone was removed or unmounted: never recreated.
  Status ReformatWiped(int i);

  void ReportHeal(const std::string& id) {
    std::function<void(const std::string&)> cb;
    {
      std::lock_guard lock(cb_mu_);
      cb = heal_cb_;
    }
    if (cb) cb(id);
  }

  // Opens drive i's shard of `id` (file only; the header is checked lazily).
  ShardSlot OpenSlot(int i, const std::string& id, const std::string& suffix = "") {
    ShardSlot slot;
    if (!drives_[i].online()) {
      slot.SetFault(Fault::kOffline, drives_[i].path + ": drive " + StateName(drives_[i].state));
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

  // Reads and verifies slot i's header: magic, CRC, and that it belongs here
  // (this id, this position, this pool's layout). Sets the slot's fault.
  bool CheckHeader(ShardSlot& slot, int i, const std::string& id) {
    if (slot.fault != Fault::kNone) return false;
    if (slot.header_checked) return true;
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
                        "+" + std::to_string(header->m) + "/" +
                        std::to_string(header->block_bytes) + ", expected shard " +
                        std::to_string(i) + " of " + std::to_string(k_) + "+" +
                        std::to_string(m_) + "/" + std::to_string(block_));
      return false;
    }
    slot.header = std::move(header).value();
    slot.header_len = *len;
    slot.header_checked = true;
    return true;
  }

  // Reads and verifies the footer of a slot whose header checked out.
  Result<ShardFooter> ReadFooter(ShardSlot& slot, int i, const std::string& id) {
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
    StripeLayout layout{footer->object_size, static_cast<uint32_t>(k_),
                        static_cast<uint32_t>(block_)};
    if (slot.header_len + layout.ShardDataBytes() + total != size) {
      return corrupt("shard file is " + std::to_string(size) + " bytes, its layout needs " +
                     std::to_string(slot.header_len + layout.ShardDataBytes() + total));
    }
    return footer;
  }

  std::mutex& IdLock(const std::string& id) {
    return id_locks_[std::hash<std::string>{}(id) % kIdLocks];
  }

 private:
  io::FileSystem* fs_;
  std::vector<Drive> drives_;
  int k_, m_;
  size_t block_;
  std::unique_ptr<ec::ErasureCode> code_;
  std::mutex cb_mu_;
  std::mutex reformat_mu_;
  std::function<void(const std::string&)> heal_cb_;
  std::mutex id_locks_[kIdLocks];
};

// Reads block of stripe s (len bytes + CRC) from a slot whose header checked
// out into dst (capacity len + 4). Returns kNone when it verified.
Fault ReadVerifiedBlock(ShardSlot& slot, const StripeLayout& layout, uint64_t s, uint32_t len,
                        uint8_t* dst, std::string* why) {
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

// The error of a stripe that has fewer than k good blocks.
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

// ---------------------------------------------------------------- writer impl

ErasureWriter::ErasureWriter(ErasureStoreImpl* store, std::string id, const DataHeader& header)
    : store_(store),
      id_(std::move(id)),
      header_(header),
      k_(store->k()),
      m_(store->m()),
      n_(store->drive_count()),
      block_(store->block_bytes()),
      shards_(n_),
      stripe_(k_ * block_),
      parity_(m_, std::vector<uint8_t>(block_)) {}

Status ErasureWriter::Init() {
  ShardHeader h;
  h.id = id_;
  h.k = k_;
  h.m = m_;
  h.block_bytes = static_cast<uint32_t>(block_);
  h.data = header_;
  for (int i = 0; i < n_; ++i) {
    Shard& sh = shards_[i];
    sh.dir = store_->ShardDir(i, id_);
    sh.final_path = store_->ShardPath(i, id_);
    sh.temp = sh.final_path + kPartSuffix;
    const Drive& d = store_->drive(i);
    if (!d.online()) {
      sh.error = Unavailable(d.path + ": drive " + StateName(d.state));
      continue;
    }
    auto file = store_->NewShardFile(i, sh.temp);
    if (!file.ok()) {
      sh.error = file.status().WithContext(d.path);
      continue;
    }
    sh.file = std::move(file).value();
    sh.active = true;
    h.shard_index = i;
    Status st = sh.file->Append(EncodeShardHeader(h));
    if (!st.ok()) Fail(i, st);
  }
  return CheckQuorum();
}

void ErasureWriter::Fail(int i, const Status& st) {
  Shard& sh = shards_[i];
  if (!sh.active) return;
  sh.active = false;
  sh.error = st.WithContext(store_->drive(i).path);
  if (sh.file) sh.file->Close().IgnoreError();
  sh.file.reset();
  store_->fs()->RemoveFile(sh.temp).IgnoreError();
  if (sh.renamed) store_->fs()->RemoveFile(sh.final_path).IgnoreError();
}

int ErasureWriter::ActiveCount() const {
  int n = 0;
  for (const Shard& sh : shards_) n += sh.active ? 1 : 0;
  return n;
}

Status ErasureWriter::CheckQuorum() {
  if (!failed_.ok()) return failed_;
  int active = ActiveCount();
  if (active >= store_->quorum()) return Status::OK();
  bool full = false;
  std::string detail;
  for (const Shard& sh : shards_) {
    if (sh.active || sh.error.ok()) continue;
    if (sh.error.code() == Code::kResourceExhausted) full = true;
    detail += "; " + sh.error.ToString();
  }
  std::string msg = "write quorum not reached for " + id_ + ": " + std::to_string(active) +
                    " of " + std::to_string(n_) + " shards writable, need " +
                    std::to_string(store_->quorum()) + detail;
  // Disk full on a drive is the actionable cause (507-style); otherwise the
  // pool is short of working drives (503).
  failed_ = full ? ResourceExhausted(msg) : Unavailable(msg);
  RemoveAll();
  return failed_;
}

Status ErasureWriter::Append(std::string_view data) {
  if (finished_) return Internal("append after finish");
  if (!failed_.ok()) return failed_;
  const size_t stripe_bytes = stripe_.size();
  while (!data.empty()) {
    size_t take = std::min(data.size(), stripe_bytes - fill_);
    std::memcpy(stripe_.data() + fill_, data.data(), take);
    fill_ += take;
    size_ += take;
    data.remove_prefix(take);
    if (fill_ == stripe_bytes) RETURN_IF_ERROR(FlushStripe(fill_));
  }
  return Status::OK();
}

Status ErasureWriter::FlushStripe(size_t bytes) {
  const size_t len = std::min(block_, (bytes + k_ - 1) / k_);
  std::memset(stripe_.data() + bytes, 0, k_ * len - bytes);  // pad the last stripe
  std::vector<const uint8_t*> data(k_);
  std::vector<uint8_t*> parity(m_);
  for (int i = 0; i < k_; ++i) data[i] = stripe_.data() + i * len;
  for (int j = 0; j < m_; ++j) parity[j] = parity_[j].data();
  if (m_ > 0) store_->code().Encode(len, data.data(), parity.data());
  for (int i = 0; i < n_; ++i) {
    Shard& sh = shards_[i];
    if (!sh.active) continue;
    const uint8_t* block = i < k_ ? data[i] : parity[i - k_];
    std::string crc;
    PutFixed32LE(&crc, Crc32c(block, len));
    Status st = sh.file->Append(std::string_view(reinterpret_cast<const char*>(block), len));
    if (st.ok()) st = sh.file->Append(crc);
    if (!st.ok()) Fail(i, st);
  }
  fill_ = 0;
  return CheckQuorum();
}

Status ErasureWriter::Finish(std::string_view trailer) {
  if (finished_) return Internal("finish twice");
  if (!failed_.ok()) return failed_;
  if (trailer.size() > kTrailerMax) return InvalidArgument("trailer too large");
  if (fill_ > 0) RETURN_IF_ERROR(FlushStripe(fill_));
  const std::string footer = EncodeShardFooter(size_, trailer);
  std::vector<int> active;
  for (int i = 0; i < n_; ++i) {
    if (!shards_[i].active) continue;
    Status st = shards_[i].file->Append(footer);
    if (!st.ok()) {
      Fail(i, st);
    } else {
      active.push_back(i);
    }
  }
  RETURN_IF_ERROR(CheckQuorum());
  // Sync + close every shard, then publish each under its final name and
  // make that durable. Drives are independent: overlap their latencies.
  std::vector<Status> results(n_);
  ForEachParallel(active, [&](int i) {
    Shard& sh = shards_[i];
    Status st = sh.file->Sync();
    Status close = sh.file->Close();
    if (st.ok()) st = close;
    if (st.ok()) st = store_->fs()->Rename(sh.temp, sh.final_path);
    if (st.ok()) {
      sh.renamed = true;
      st = store_->fs()->SyncDir(sh.dir);
    }
    results[i] = st;
  });
  for (int i : active) {
    shards_[i].file.reset();
    if (!results[i].ok()) Fail(i, results[i]);
  }
  RETURN_IF_ERROR(CheckQuorum());
  finished_ = true;
  int written = ActiveCount();
  if (written < n_) {
    STRATA_LOG("data %s written with %d of %d shards; queued for heal", id_.c_str(), written, n_);
    store_->ReportHeal(id_);  // restore full redundancy as soon as possible
  }
  return Status::OK();
}

void ErasureWriter::RemoveAll() {
  for (int i = 0; i < n_; ++i) {
    Shard& sh = shards_[i];
    if (sh.file) sh.file->Close().IgnoreError();
    sh.file.reset();
    sh.active = false;
    if (!store_->drive(i).online()) continue;
    store_->fs()->RemoveFile(sh.temp).IgnoreError();
    if (sh.renamed) store_->fs()->RemoveFile(sh.final_path).IgnoreError();
  }
}

void ErasureWriter::Abort() {
  if (finished_) return;
  finished_ = true;
  RemoveAll();
}

// ---------------------------------------------------------------- reader impl

ErasureReader::ErasureReader(ErasureStoreImpl* store, std::string id, uint64_t size,
                             std::vector<ShardSlot> slots)
    : store_(store),
      id_(std::move(id)),
      layout_{size, static_cast<uint32_t>(store->k()),
              static_cast<uint32_t>(store->block_bytes())},
      k_(store->k()),
      m_(store->m()),
      n_(store->drive_count()),
      slots_(std::move(slots)),
      cache_(n_),
      state_(n_, BlockState::kUnknown),
      fault_(n_, Fault::kNone),
      why_(n_) {}

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
  if (!store_->CheckHeader(slot, i, id_)) return false;
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
      return false;  // the slow path re-reads it and records why
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

void ErasureReader::ReadBlockToCache(int i) {
  ShardSlot& slot = slots_[i];
  if (!store_->CheckHeader(slot, i, id_)) {
    state_[i] = BlockState::kBad;
    fault_[i] = slot.fault;
    why_[i] = slot.why;
    return;
  }
  auto& buf = cache_[i];
  if (buf.size() < store_->block_bytes() + kBlockCrcBytes) {
    buf.resize(store_->block_bytes() + kBlockCrcBytes);
  }
  fault_[i] = ReadVerifiedBlock(slot, layout_, cache_stripe_, cache_len_, buf.data(), &why_[i]);
  state_[i] = fault_[i] == Fault::kNone ? BlockState::kGood : BlockState::kBad;
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
  std::vector<uint8_t*> ptrs(n_);
  std::vector<bool> present(n_);
  for (int j = 0; j < n_; ++j) {
    if (cache_[j].size() < store_->block_bytes() + kBlockCrcBytes) {
      cache_[j].resize(store_->block_bytes() + kBlockCrcBytes);
    }
    ptrs[j] = cache_[j].data();
    present[j] = state_[j] == BlockState::kGood;
  }
  Status st = store_->code().Reconstruct(cache_len_, ptrs.data(), present);
  if (!st.ok()) {
    cache_stripe_ = -1;
    return st;
  }
  std::fill(state_.begin(), state_.end(), BlockState::kGood);
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
    const uint64_t block_start = uint64_t{static_cast<uint32_t>(i)} * len;
    const uint64_t block_bytes = std::min<uint64_t>(len, stripe_bytes - block_start);
    const uint64_t in_block = in_stripe - block_start;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(block_bytes - in_block, n - done));
    // A whole block outside the cached stripe goes straight to the caller's
    // buffer (the common case of big sequential reads); anything else
    // through the stripe cache.
    if (cache_stripe_ != static_cast<int64_t>(s) && in_block == 0 && take == len &&
        ReadDirect(s, i, len, buf + done)) {
      done += take;
      continue;
    }
    RETURN_IF_ERROR(LoadDataBlock(s, i));
    std::memcpy(buf + done, cache_[i].data() + in_block, take);
    done += take;
  }
  return n;
}

// ---------------------------------------------------------------- store impl

Result<std::unique_ptr<DataReader>> ErasureStoreImpl::Open(const std::string& id, uint64_t size) {
  if (!ValidId(id)) return InvalidArgument("bad data id '" + id + "'");
  // Open every shard now: a reader keeps reading what it opened even if the
  // data is removed meanwhile (POSIX unlink semantics).
  std::vector<ShardSlot> slots;
  int found = 0;
  for (int i = 0; i < drive_count(); ++i) {
    slots.push_back(OpenSlot(i, id));
    if (slots.back().file) ++found;
  }
  if (found == 0) return NotFound("data " + id + ": no shard on any drive");
  Status last;
  for (int i = 0; i < drive_count(); ++i) {
    if (!CheckHeader(slots[i], i, id)) {
      last = Corruption(slots[i].why);
      continue;
    }
    auto footer = ReadFooter(slots[i], i, id);
    if (!footer.ok()) {
      last = footer.status();
      continue;
    }
    if (footer->object_size != size) {
      return Corruption("data " + id + ": metadata records " + std::to_string(size) +
                        " bytes, shard " + std::to_string(i) + " says " +
                        std::to_string(footer->object_size));
    }
    bool lost = false;  // a shard file gone from an online drive (wiped, deleted)
    for (const ShardSlot& slot : slots) lost = lost || slot.fault == Fault::kMissing;
    auto reader = std::make_unique<ErasureReader>(this, id, size, std::move(slots));
    if (lost) reader->ReportHealOnce();  // costs no I/O: the opens told us
    return std::unique_ptr<DataReader>(std::move(reader));
  }
  return Corruption("data " + id + ": no shard has a valid header and footer (last: " +
                    last.ToString() + ")");
}

Status ErasureStoreImpl::Remove(const std::string& id) {
  if (!ValidId(id)) return InvalidArgument("bad data id '" + id + "'");
  std::lock_guard lock(IdLock(id));
  bool any = false;
  Status failed;
  for (int i = 0; i < drive_count(); ++i) {
    if (!drives_[i].online()) continue;
    for (const char* suffix : {"", kPartSuffix, kHealSuffix}) {
      Status st = fs_->RemoveFile(ShardPath(i, id) + suffix);
      if (st.ok()) {
        any = true;
      } else if (st.code() != Code::kNotFound) {
        failed = st;
      }
    }
  }
  if (!failed.ok()) return failed;
  if (!any) return NotFound("data " + id + ": no shard on any drive");
  return Status::OK();
}

Status ErasureStoreImpl::ReformatWiped(int i) {
  std::lock_guard lock(reformat_mu_);
  const std::string& path = drives_[i].path;
  if (fs_->FileExists(path + "/format")) return Status::OK();  // another thread did it
  if (!fs_->FileExists(path)) return Unavailable("drive " + path + " is gone (directory missing)");
  for (int j = 0; j < drive_count(); ++j) {
    if (j == i) continue;
    FoundFormat f = ReadFormat(fs_, drives_[j].path);
    if (f.kind != FoundFormat::kFormatted) continue;
    DriveFormat format = f.format;
    format.position = static_cast<uint32_t>(i);
    format.drive_id = RandomHex(16);
    STRATA_LOG("drive %s was wiped: formatting it again at position %d", path.c_str(), i);
    return WriteFormat(fs_, path, format);
  }
  return Unavailable("drive " + path + " lost its format and no other drive has one");
}

std::vector<DriveInfo> ErasureStoreImpl::Drives() {
  std::vector<DriveInfo> out;
  for (const Drive& d : drives_) {
    DriveInfo info;
    info.path = d.path;
    info.position = d.position;
    info.state = d.state;
    info.detail = d.detail;
    if (d.online() && !fs_->FileExists(d.path + "/format")) {  // removed while running
      info.state = DriveState::kMissing;
      info.detail = "format file gone (drive removed or unmounted?)";
    }
    if (info.state == DriveState::kOnline) {
      auto subdirs = fs_->ListDir(d.path + "/shards");
      if (subdirs.ok()) {
        for (const std::string& sub : *subdirs) {
          auto names = fs_->ListDir(d.path + "/shards/" + sub);
          if (!names.ok()) continue;
          for (const std::string& name : *names) info.shard_files += ValidId(name) ? 1 : 0;
        }
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

Result<std::vector<std::string>> ErasureStoreImpl::ListIds() {
  std::set<std::string> ids;
  int listed = 0;
  Status last;
  for (const Drive& d : drives_) {
    if (!d.online()) continue;
    auto subdirs = fs_->ListDir(d.path + "/shards");
    if (!subdirs.ok()) {
      last = subdirs.status();
      continue;
    }
    bool ok = true;
    for (const std::string& sub : *subdirs) {
      auto names = fs_->ListDir(d.path + "/shards/" + sub);
      if (!names.ok()) {
        if (names.status().code() == Code::kNotFound) continue;
        last = names.status();
        ok = false;
        continue;
      }
      for (const std::string& name : *names) {
        if (ValidId(name) && name.compare(0, 2, sub) == 0) ids.insert(name);
      }
    }
    listed += ok ? 1 : 0;
  }
  if (listed == 0 && !last.ok()) return last;
  return std::vector<std::string>(ids.begin(), ids.end());
}

Result<std::pair<DataHeader, std::string>> ErasureStoreImpl::ReadHeaderAndTrailer(
    const std::string& id) {
  if (!ValidId(id)) return InvalidArgument("bad data id '" + id + "'");
  int found = 0;
  Status last;
  for (int i = 0; i < drive_count(); ++i) {
    ShardSlot slot = OpenSlot(i, id);
    if (!slot.file) continue;
    ++found;
    if (!CheckHeader(slot, i, id)) {
      last = Corruption(slot.why);
      continue;
    }
    auto footer = ReadFooter(slot, i, id);
    if (!footer.ok()) {
      last = footer.status();
      continue;
    }
    return std::make_pair(slot.header.data, std::move(footer->trailer));
  }
  if (found == 0) return NotFound("data " + id + ": no shard on any drive");
  return Corruption("data " + id + ": no shard has a valid header and trailer (last: " +
                    last.ToString() + ")");
}

Result<HealResult> ErasureStoreImpl::Heal(const std::string& id) {
  if (!ValidId(id)) return InvalidArgument("bad data id '" + id + "'");
  std::lock_guard lock(IdLock(id));
  const int n = drive_count();
  HealResult result;
  std::vector<ShardSlot> slots;
  std::vector<ShardFooter> footers(n);
  int found = 0;
  for (int i = 0; i < n; ++i) {
    slots.push_back(OpenSlot(i, id));
    if (slots[i].file) ++found;
  }
  if (found == 0) return NotFound("data " + id + ": no shard on any drive");
  // A shard with a good header but a bad footer (or one that disagrees) is
  // rewritten, but its blocks still count where they verify.
  int ref = -1;
  std::vector<bool> rebuild(n);
  std::vector<bool> has_footer(n);
  for (int i = 0; i < n; ++i) {
    if (!CheckHeader(slots[i], i, id)) continue;
    auto footer = ReadFooter(slots[i], i, id);
    if (!footer.ok()) {
      if (slots[i].fault == Fault::kCorrupt) slots[i].fault = Fault::kNone;
      continue;
    }
    footers[i] = std::move(footer).value();
    has_footer[i] = true;
    if (ref < 0) ref = i;
  }
  if (ref < 0) {  // nothing tells the size: nothing can be rebuilt
    result.was_healthy = false;
    result.unrecoverable = true;
    STRATA_LOG("heal %s: no shard has a valid header and footer", id.c_str());
    return result;
  }
  const ShardFooter& ref_footer = footers[ref];
  for (int i = 0; i < n; ++i) {
    rebuild[i] = slots[i].fault != Fault::kNone || !has_footer[i] ||
                 footers[i].object_size != ref_footer.object_size ||
                 footers[i].trailer != ref_footer.trailer;
  }
  const StripeLayout layout{ref_footer.object_size, static_cast<uint32_t>(k_),
                            static_cast<uint32_t>(block_)};
  const uint64_t stripes = layout.stripes();
  std::vector<std::vector<uint8_t>> buf(n, std::vector<uint8_t>(block_ + kBlockCrcBytes));
  std::string why;

  // Pass 1: verify every block of every usable shard.
  for (uint64_t s = 0; s < stripes && !result.unrecoverable; ++s) {
    const uint32_t len = layout.BlockLen(s);
    int good = 0;
    for (int i = 0; i < n; ++i) {
      if (slots[i].fault != Fault::kNone) continue;
      if (ReadVerifiedBlock(slots[i], layout, s, len, buf[i].data(), &why) == Fault::kNone) {
        ++good;
      } else {
        rebuild[i] = true;
      }
    }
    if (good < k_) result.unrecoverable = true;
  }
  int bad = static_cast<int>(std::count(rebuild.begin(), rebuild.end(), true));
  if (bad == 0) return result;
  result.was_healthy = false;
  if (result.unrecoverable) {
    STRATA_LOG("heal %s: unrecoverable (a stripe has fewer than %d good blocks)", id.c_str(), k_);
    return result;
  }

  // Pass 2: rebuild the bad shards into temp files, stripe by stripe.
  struct Target {
    int i;
    std::unique_ptr<io::WritableFile> file;
    std::string temp;
    Status st;
  };
  std::vector<Target> targets;
  ShardHeader header = slots[ref].header;
  for (int i = 0; i < n; ++i) {
    if (!rebuild[i]) continue;
    if (!drives_[i].online()) {
      ++result.shards_failed;
      continue;
    }
    Target t{i, nullptr, ShardPath(i, id) + kHealSuffix, Status::OK()};
    auto file = NewShardFile(i, t.temp);
    if (!file.ok()) {
      ++result.shards_failed;
      STRATA_LOG("heal %s: %s", id.c_str(), file.status().ToString().c_str());
      continue;
    }
    t.file = std::move(file).value();
    header.shard_index = i;
    t.st = t.file->Append(EncodeShardHeader(header));
    targets.push_back(std::move(t));
  }
  auto abandon = [&] {
    for (Target& t : targets) {
      if (t.file) t.file->Close().IgnoreError();
      fs_->RemoveFile(t.temp).IgnoreError();
    }
  };
  std::vector<uint8_t*> ptrs(n);
  std::vector<bool> present(n);
  std::vector<Fault> faults(n);
  std::vector<std::string> whys(n);
  for (uint64_t s = 0; s < stripes; ++s) {
    const uint32_t len = layout.BlockLen(s);
    int good = 0;
    std::fill(present.begin(), present.end(), false);
    for (int i = 0; i < n; ++i) {
      faults[i] = slots[i].fault != Fault::kNone ? slots[i].fault : Fault::kOffline;
      whys[i] = slots[i].fault != Fault::kNone ? slots[i].why : "not read";
    }
    // Healthy shards first; a shard being rebuilt may still hold good blocks.
    for (int pass = 0; pass < 2 && good < k_; ++pass) {
      for (int i = 0; i < n && good < k_; ++i) {
        if (rebuild[i] != (pass == 1)) continue;
        if (slots[i].fault != Fault::kNone) continue;
        faults[i] = ReadVerifiedBlock(slots[i], layout, s, len, buf[i].data(), &whys[i]);
        present[i] = faults[i] == Fault::kNone;
        good += present[i] ? 1 : 0;
      }
    }
    if (good < k_) {  // something rotted between the passes
      abandon();
      result.unrecoverable = true;
      Status st = StripeError(id, s, good, k_, faults, whys);
      STRATA_LOG("heal %s: %s", id.c_str(), st.ToString().c_str());
      return result;
    }
    for (int i = 0; i < n; ++i) ptrs[i] = buf[i].data();
    Status st = code_->Reconstruct(len, ptrs.data(), present);
    if (!st.ok()) {
      abandon();
      return st;
    }
    for (Target& t : targets) {
      if (!t.st.ok()) continue;
      std::string crc;
      PutFixed32LE(&crc, Crc32c(buf[t.i].data(), len));
      t.st = t.file->Append(std::string_view(reinterpret_cast<char*>(buf[t.i].data()), len));
      if (t.st.ok()) t.st = t.file->Append(crc);
    }
  }
  const std::string footer = EncodeShardFooter(ref_footer.object_size, ref_footer.trailer);
  for (Target& t : targets) {
    if (t.st.ok()) t.st = t.file->Append(footer);
    if (t.st.ok()) t.st = t.file->Sync();
    Status close = t.file->Close();
    if (t.st.ok()) t.st = close;
    t.file.reset();
    if (t.st.ok()) t.st = fs_->Rename(t.temp, ShardPath(t.i, id));
    if (t.st.ok()) t.st = fs_->SyncDir(ShardDir(t.i, id));
    if (t.st.ok()) {
      ++result.shards_rebuilt;
    } else {
      ++result.shards_failed;
      fs_->RemoveFile(t.temp).IgnoreError();
      STRATA_LOG("heal %s: shard %d: %s", id.c_str(), t.i, t.st.ToString().c_str());
    }
  }
  return result;
}

// ---------------------------------------------------------------- open / format



FoundFormat ReadFormat(io::FileSystem* fs, const std::string& drive) {
  FoundFormat out;
  if (!fs->FileExists(drive)) {
    out.kind = FoundFormat::kAbsent;
    return out;
  }
  std::string path = drive + "/" + std::string(kDriveFormatFile);
  if (!fs->FileExists(path)) {
    out.kind = FoundFormat::kBlank;
    return out;
  }
  auto file = fs->NewReadableFile(path);
  if (!file.ok()) {
    out.kind = FoundFormat::kBroken;
    out.why = file.status().ToString();
    return out;
  }
  std::string text(std::min<uint64_t>((*file)->Size(), 64 * 1024), '\0');
  auto n = (*file)->ReadAt(0, text.data(), text.size());
  if (!n.ok()) {
    out.kind = FoundFormat::kBroken;
    out.why = n.status().ToString();
    return out;
  }
  text.resize(*n);
  auto format = DecodeDriveFormat(text);
  if (!format.ok()) {
    out.kind = FoundFormat::kBroken;
    out.why = path + ": " + format.status().message();
    return out;
  }
  out.kind = FoundFormat::kFormatted;
  out.format = std::move(format).value();
  return out;
}

Status EnsureShardDirs(io::FileSystem* fs, const std::string& drive) {
  for (int i = 0; i < 256; ++i) {
    char sub[8];
    std::snprintf(sub, sizeof(sub), "%02x", i);
    RETURN_IF_ERROR(fs->CreateDirs(drive + "/shards/" + sub));
  }
  return Status::OK();
}

Status WriteFormat(io::FileSystem* fs, const std::string& drive, const DriveFormat& format) {
  RETURN_IF_ERROR(EnsureShardDirs(fs, drive));
  RETURN_IF_ERROR(fs->SyncDir(drive + "/shards"));
  std::string path = drive + "/" + std::string(kDriveFormatFile);
  std::string temp = path + ".tmp";
  ASSIGN_OR_RETURN(auto file, fs->NewWritableFile(temp));
  Status st = file->Append(EncodeDriveFormat(format));
  if (st.ok()) st = file->Sync();
  Status close = file->Close();
  if (st.ok()) st = close;
  if (st.ok()) st = fs->Rename(temp, path);
  if (st.ok()) st = fs->SyncDir(drive);
  if (!st.ok()) fs->RemoveFile(temp).IgnoreError();
  return st;
}

}  // namespace

Result<std::unique_ptr<ErasureDataStore>> ErasureDataStore::Open(io::FileSystem* fs,
                                                                 PoolOptions options) {
  const int n = static_cast<int>(options.drives.size());
  if (n < 1 || n > kMaxDrives) {
    return InvalidArgument("a pool needs 1 to " + std::to_string(kMaxDrives) + " drives, got " +
                           std::to_string(n));
  }
  std::set<std::string> seen;
  for (std::string& d : options.drives) {
    d = StripSlashes(d);
    if (d.empty()) return InvalidArgument("empty drive path");
    if (!seen.insert(d).second) return InvalidArgument("drive " + d + " is listed twice");
  }
  const bool explicit_layout = options.k != 0 || options.m != -1;
  int k = options.k, m = options.m;
  if (k == 0 && m == -1) {
    DefaultLayout(n, &k, &m);
  } else if (k == 0) {
    k = n - m;
  } else if (m == -1) {
    m = n - k;
  }
  if (k < 1 || m < 0 || k + m != n) {
    return InvalidArgument("erasure layout " + std::to_string(k) + "+" + std::to_string(m) +
                           " does not fit " + std::to_string(n) +
                           " drives (k >= 1, m >= 0, k + m == drives)");
  }
  size_t block = options.block_bytes;
  if (block < kMinBlockBytes || block > kMaxBlockBytes) {
    return InvalidArgument("block_bytes " + std::to_string(block) + " out of range [" +
                           std::to_string(kMinBlockBytes) + ", " +
                           std::to_string(kMaxBlockBytes) + "]");
  }

  // Read every drive's format file.
  std::vector<FoundFormat> found(n);
  std::map<std::string, int> deployments;
  int first_formatted = -1;
  for (int i = 0; i < n; ++i) {
    found[i] = ReadFormat(fs, options.drives[i]);
    if (found[i].kind == FoundFormat::kFormatted) {
      ++deployments[found[i].format.deployment_id];
      if (first_formatted < 0) first_formatted = i;
    }
  }
  std::string deployment = options.deployment_id;
  if (deployment.empty()) {
    if (first_formatted < 0) {
      deployment = RandomHex(16);
    } else {  // the deployment most drives agree on (ties: the first drive's)
      deployment = found[first_formatted].format.deployment_id;
      for (auto& [id, count] : deployments) {
        if (count > deployments[deployment]) deployment = id;
      }
    }
  }
  // Refuse drives of another deployment, in another order, or of another layout.
  const DriveFormat* layout_from = nullptr;
  for (int i = 0; i < n; ++i) {
    if (found[i].kind != FoundFormat::kFormatted) continue;
    const DriveFormat& f = found[i].format;
    const std::string& path = options.drives[i];
    if (f.deployment_id != deployment) {
      return PreconditionFailed("drive " + path + " belongs to deployment " + f.deployment_id +
                                ", expected deployment " + deployment +
                                " (a drive of another pool or server?)");
    }
    if (f.position != static_cast<uint32_t>(i)) {
      return PreconditionFailed("drive " + path + " is position " + std::to_string(f.position) +
                                " of deployment " + deployment + " but is listed at position " +
                                std::to_string(i) +
                                " (drives swapped? list them in their original order)");
    }
    if (f.drives != static_cast<uint32_t>(n)) {
      return PreconditionFailed("drive " + path + " was formatted for a pool of " +
                                std::to_string(f.drives) + " drives, " + std::to_string(n) +
                                " given");
    }
    if (f.pool != 0 || f.set != 0) {
      return PreconditionFailed("drive " + path + " belongs to pool " + std::to_string(f.pool) +
                                " set " + std::to_string(f.set) + ", expected pool 0 set 0");
    }
    if (layout_from == nullptr) {
      layout_from = &f;
      if (explicit_layout && (f.k != static_cast<uint32_t>(k) || f.m != static_cast<uint32_t>(m))) {
        return PreconditionFailed("drive " + path + " was formatted for " + std::to_string(f.k) +
                                  "+" + std::to_string(f.m) + ", " + std::to_string(k) + "+" +
                                  std::to_string(m) + " requested");
      }
    } else if (f.k != layout_from->k || f.m != layout_from->m ||
               f.block_bytes != layout_from->block_bytes) {
      return PreconditionFailed("drive " + path + " was formatted for " + std::to_string(f.k) +
                                "+" + std::to_string(f.m) + " with " +
                                std::to_string(f.block_bytes) + "-byte blocks, other drives for " +
                                std::to_string(layout_from->k) + "+" +
                                std::to_string(layout_from->m) + " with " +
                                std::to_string(layout_from->block_bytes));
    }
  }
  if (layout_from != nullptr) {  // an existing pool: its format is authoritative
    k = static_cast<int>(layout_from->k);
    m = static_cast<int>(layout_from->m);
    block = layout_from->block_bytes;
    if (block < kMinBlockBytes || block > kMaxBlockBytes) {
      return PreconditionFailed("drives were formatted with an unsupported block size " +
                                std::to_string(block));
    }
  }

  // Format blank drives (a new pool, or a wiped/replaced drive: it takes the
  // position it is listed at, which every other drive's format confirms).
  std::vector<Drive> drives(n);
  for (int i = 0; i < n; ++i) {
    Drive& d = drives[i];
    d.path = options.drives[i];
    d.position = i;
    const FoundFormat& f = found[i];
    if (f.kind == FoundFormat::kBroken) {
      d.state = DriveState::kFaulty;
      d.detail = "cannot read format file: " + f.why;
      continue;
    }
    if (f.kind == FoundFormat::kFormatted) {
      Status st = EnsureShardDirs(fs, d.path);
      if (!st.ok()) {
        d.state = DriveState::kFaulty;
        d.detail = st.ToString();
      }
      continue;
    }
    if (f.kind == FoundFormat::kAbsent) {
      if (first_formatted >= 0) {
        // An existing pool's drive directory is gone: an unmounted disk
        // (creating it would write into the parent file system) or a
        // deleted one. The operator recreates it empty to replace the drive.
        d.state = DriveState::kMissing;
        d.detail = "drive directory does not exist (unmounted or removed? create it empty to "
                   "replace the drive; it is then formatted and refilled by heal)";
        continue;
      }
      Status st = io::CreateDirsDurably(fs, d.path);
      if (!st.ok()) {
        d.state = DriveState::kMissing;
        d.detail = "drive directory missing and cannot be created: " + st.ToString();
        continue;
      }
    }
    DriveFormat format;
    format.deployment_id = deployment;
    format.drive_id = RandomHex(16);
    format.position = i;
    format.drives = n;
    format.k = k;
    format.m = m;
    format.block_bytes = static_cast<uint32_t>(block);
    Status st = WriteFormat(fs, d.path, format);
    if (!st.ok()) {
      d.state = DriveState::kUnformatted;
      d.detail = "cannot format: " + st.ToString();
      continue;
    }
    if (first_formatted >= 0) {
      d.detail = "was blank; formatted as position " + std::to_string(i) +
                 " (heal refills it)";
      STRATA_LOG("drive %s: %s", d.path.c_str(), d.detail.c_str());
    }
  }
  int online = 0;
  std::string detail;
  for (const Drive& d : drives) {
    if (d.online()) {
      ++online;
    } else {
      detail += "; " + d.path + ": " + StateName(d.state) + " (" + d.detail + ")";
      STRATA_LOG("drive %s: %s: %s", d.path.c_str(), StateName(d.state).c_str(),
                 d.detail.c_str());
    }
  }
  // Below k nothing can be read: refuse. From k to quorum-1 the pool serves
  // reads and refuses writes (Unavailable), which beats not starting at all.
  const int quorum = m >= 1 ? k + 1 : k;
  if (online < k) {
    return Unavailable("only " + std::to_string(online) + " of " + std::to_string(n) +
                       " drives usable, at least " + std::to_string(k) + " needed for " +
                       std::to_string(k) + "+" + std::to_string(m) + detail);
  }
  if (online < quorum) {
    STRATA_LOG("pool is read-only: %d of %d drives usable, %d needed for writes", online, n,
               quorum);
  }
  ASSIGN_OR_RETURN(auto code, ec::ErasureCode::Create(k, m));
  return std::unique_ptr<ErasureDataStore>(
      new ErasureStoreImpl(fs, std::move(drives), k, m, block, std::move(code)));
}

}  // namespace strata::storage

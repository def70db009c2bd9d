// ErasureDataStore: see erasure_store.h, erasure_internal.h (which file holds
// what) and docs/formats/shard-file.md, docs/formats/drive-format.md. This
// file: the store object, ids, Remove, ListIds, Drives, ReadHeaderAndTrailer.
#include <cstring>
#include <random>
#include <set>

#include "common/encoding.h"
#include "common/log.h"
#include "io/atomic_file.h"
#include "io/dirs.h"
#include "storage/erasure_internal.h"

namespace strata::storage {

void DefaultLayout(int drives, int* k, int* m) {
  int parity;
  if (drives <= 1) {
    parity = 0;
  } else if (drives <= 3) {
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

namespace internal {

std::string RandomHex(size_t bytes) {
  std::random_device rd;
  std::string raw;
  for (size_t i = 0; i < bytes; ++i) raw.push_back(static_cast<char>(rd() & 0xFF));
  return HexEncode(raw);
}

bool ValidId(const std::string& id) {
  if (id.size() < 2 || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace internal

std::string DriveStateName(DriveState s) {
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
  return "unknown";
}

namespace internal {

ErasureStoreImpl::ErasureStoreImpl(io::FileSystem* fs, std::vector<Drive> drives, int k, int m,
                                   size_t block, std::unique_ptr<ec::ErasureCode> code)
    : fs_(fs),
      drives_(std::move(drives)),
      k_(k),
      m_(m),
      block_(block),
      code_(std::move(code)),
      errors_(std::make_unique<ErrorCounters[]>(drives_.size())) {
  const std::string layout = std::to_string(k_) + "+" + std::to_string(m_) + " over " +
                             std::to_string(drives_.size()) + " drives, block " +
                             std::to_string(block_);
  STRATA_CHECK(k_ >= 1 && m_ >= 0, "erasure layout " + layout);
  STRATA_CHECK(k_ + m_ == drive_count() && drive_count() <= kMaxDrives, "erasure layout " + layout);
  STRATA_CHECK(block_ >= kMinBlockBytes && block_ <= kMaxBlockBytes, "erasure layout " + layout);
  STRATA_CHECK(code_ != nullptr && code_->k() == k_ && code_->m() == m_,
               "erasure code does not match the layout " + layout);
  for (int i = 0; i < drive_count(); ++i) {
    STRATA_CHECK(drives_[i].position == i, "drive " + drives_[i].path + " at index " +
                                               std::to_string(i) + " has position " +
                                               std::to_string(drives_[i].position));
  }
}

void ErasureStoreImpl::SetHealCallback(std::function<void(const std::string& id)> callback) {
  std::lock_guard lock(cb_mu_);
  heal_cb_ = std::move(callback);
}

void ErasureStoreImpl::ReportHeal(const std::string& id) {
  std::function<void(const std::string&)> cb;
  {
    std::lock_guard lock(cb_mu_);
    cb = heal_cb_;
  }
  if (cb) cb(id);
}

Result<std::unique_ptr<io::WritableFile>> ErasureStoreImpl::NewShardFile(int i,
                                                                        const std::string& path) {
  auto file = fs_->NewWritableFile(path);
  if (file.ok() || file.status().code() != Code::kNotFound) return file;
  if (!fs_->FileExists(drive(i).path + "/format")) RETURN_IF_ERROR(ReformatWiped(i));
  RETURN_IF_ERROR(io::CreateDirsDurably(fs_, path.substr(0, path.rfind('/'))));
  return fs_->NewWritableFile(path);
}

bool ErasureStoreImpl::AllDrivesPresent() {
  for (const Drive& d : drives_) {
    if (!d.online() || !fs_->FileExists(d.path + "/" + std::string(kDriveFormatFile))) return false;
  }
  return true;
}

std::optional<uint64_t> ErasureStoreImpl::ReadTombstone(const std::string& id) {
  std::optional<uint64_t> newest;
  for (int i = 0; i < drive_count(); ++i) {
    ShardSlot slot = OpenSlot(i, id, kGoneSuffix);
    if (!slot.file) continue;
    std::string bytes(std::min<uint64_t>(slot.file->Size(), 4096), '\0');
    auto n = slot.file->ReadAt(0, bytes.data(), bytes.size());
    auto tomb = n.ok() ? DecodeTombstone(bytes.substr(0, *n)) : Result<Tombstone>(n.status());
    if (!tomb.ok() || tomb->id != id) {
      STRATA_LOG("tombstone %s%s: %s", ShardPath(i, id).c_str(), kGoneSuffix,
                 tomb.ok() ? "names another id" : tomb.status().ToString().c_str());
      continue;
    }
    newest = std::max(newest.value_or(0), tomb->removed_through);
  }
  return newest;
}

Status ErasureStoreImpl::WriteTombstones(const std::string& id, uint64_t removed_through) {
  const std::string bytes = EncodeTombstone({id, removed_through});
  int written = 0;
  Status last;
  for (int i = 0; i < drive_count(); ++i) {
    if (!drives_[i].online()) continue;
    Status st = io::WriteFileAtomically(fs_, ShardPath(i, id) + kGoneSuffix, bytes);
    if (st.ok()) {
      ++written;
    } else {
      last = st;
    }
  }
  if (written > 0) return Status::OK();
  return last.ok() ? Unavailable("data " + id + ": no drive to record its removal on") : last;
}

void ErasureStoreImpl::RemoveTombstonesIfAllPresent(const std::string& id) {
  if (!AllDrivesPresent()) return;
  for (int i = 0; i < drive_count(); ++i) {
    fs_->RemoveFile(ShardPath(i, id) + kGoneSuffix).IgnoreError();
  }
}

namespace {
// The newest generation among the shards of `id` on the online drives (what
// a tombstone must cover); nullopt if no header is readable.
std::optional<uint64_t> NewestGeneration(ErasureStoreImpl* store, const std::string& id) {
  std::optional<uint64_t> newest;
  int found = 0;
  std::vector<ShardSlot> slots = store->OpenSlots(id, &found);
  for (int i = 0; i < store->drive_count(); ++i) {
    if (!store->CheckHeader(slots[i], i, id)) continue;
    newest = std::max(newest.value_or(0), slots[i].header.data.version_stamp);
  }
  return newest;
}
}  // namespace

Status ErasureStoreImpl::Remove(const std::string& id) {
  if (!ValidId(id)) return InvalidArgument("bad data id '" + id + "'");
  std::unique_lock lock(IdLock(id));  // exclusive: see IdLock
  // With a drive absent, its shards would come back with it: record the
  // removal (a tombstone covering every generation there is) on the others.
  const bool all_present = AllDrivesPresent();
  std::optional<uint64_t> tombstone;
  if (!all_present) {
    tombstone = NewestGeneration(this, id);
    if (auto old = ReadTombstone(id)) tombstone = std::max(tombstone.value_or(0), *old);
  }
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
  if (all_present) {
    for (int i = 0; i < drive_count(); ++i) {
      any = fs_->RemoveFile(ShardPath(i, id) + kGoneSuffix).ok() || any;
    }
  } else if (tombstone) {
    RETURN_IF_ERROR(WriteTombstones(id, *tombstone));
  }
  if (!any) return NotFound("data " + id + ": no shard on any drive");
  return Status::OK();
}

std::vector<DriveErrors> ErasureStoreImpl::DriveErrorCounts() {
  std::vector<DriveErrors> out(drives_.size());
  for (size_t i = 0; i < drives_.size(); ++i) {
    out[i] = {errors_[i].io.load(), errors_[i].corrupt.load(), errors_[i].missing.load(),
              errors_[i].write.load()};
  }
  return out;
}

void ErasureStoreImpl::CountFault(int i, Fault f) {
  CheckIndex(i);
  switch (f) {
    case Fault::kNone:
    case Fault::kOffline: return;
    case Fault::kIO: ++errors_[i].io; return;
    case Fault::kMissing: ++errors_[i].missing; return;
    case Fault::kCorrupt: ++errors_[i].corrupt; return;
  }
}

void ErasureStoreImpl::CountWriteError(int i) {
  CheckIndex(i);
  ++errors_[i].write;
}

std::vector<DriveInfo> ErasureStoreImpl::DriveStates() {
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
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<DriveInfo> ErasureStoreImpl::Drives() {
  std::vector<DriveInfo> out = DriveStates();
  for (DriveInfo& info : out) {
    if (info.state != DriveState::kOnline) continue;
    auto subdirs = fs_->ListDir(info.path + "/shards");
    if (!subdirs.ok()) continue;
    for (const std::string& sub : *subdirs) {
      auto names = fs_->ListDir(info.path + "/shards/" + sub);
      if (!names.ok()) continue;
      for (const std::string& name : *names) info.shard_files += ValidId(name) ? 1 : 0;
    }
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
        // Shards (<id>) and tombstones (<id>.gone); not the temporary files.
        std::string id = name;
        if (id.ends_with(kGoneSuffix)) id.resize(id.size() - std::strlen(kGoneSuffix));
        if (ValidId(id) && id.compare(0, 2, sub) == 0) ids.insert(id);
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
  std::shared_lock lock(IdLock(id));  // one generation of shards: see IdLock
  int found = 0;
  std::vector<ShardSlot> slots = OpenSlots(id, &found);
  if (found == 0) return NotFound("data " + id + ": no shard on any drive");
  std::vector<bool> has_footer(drive_count());
  std::vector<ShardFooter> footers(drive_count());
  const std::optional<uint64_t> removed = ReadTombstone(id);
  int live = 0;
  Status last;
  for (int i = 0; i < drive_count(); ++i) {
    if (!CheckHeader(slots[i], i, id)) {
      if (slots[i].file) last = Corruption(slots[i].why);
      continue;
    }
    if (removed && slots[i].header.data.version_stamp <= *removed) {
      slots[i].SetFault(Fault::kMissing, "removed (tombstone)");
      continue;
    }
    ++live;
    auto footer = ReadFooter(slots[i], i, id);
    if (!footer.ok()) {
      last = footer.status();
      continue;
    }
    footers[i] = std::move(footer).value();
    has_footer[i] = true;
  }
  if (removed && live == 0) return NotFound("data " + id + ": removed (tombstone)");
  int ref = ChooseReference(slots, has_footer, k_);
  if (ref < 0) {
    return Corruption("data " + id + ": no shard has a valid header and trailer (last: " +
                      last.ToString() + ")");
  }
  return std::make_pair(slots[ref].header.data, std::move(footers[ref].trailer));
}

}  // namespace internal
}  // namespace strata::storage

// Heal(id): verify every block of every shard of one id and rebuild the
// shards that are missing, truncated, of the wrong header/footer or with a
// bad block, from the k good blocks of each stripe, into <id>.heal, published
// over <id> (docs/formats/shard-file.md, "Heal").
//
// Locking (erasure_internal.h, at IdLock): the shards are opened under the
// id's shared lock, verified and rebuilt with no id lock held, and published
// under the exclusive lock only after checking that every drive's <id> is
// still the file the heal opened; an overwrite or a remove in between wins and
// the heal publishes nothing. So a heal of a large object keeps readers and
// writers of the other ids of its lock stripe waiting only for its renames.
// Removal leftovers (a tombstone) are handled wholly under the exclusive lock.
#include <algorithm>
#include <mutex>
#include <optional>
#include <shared_mutex>

#include "common/log.h"
#include "io/atomic_file.h"
#include "storage/erasure_internal.h"

namespace strata::storage::internal {
namespace {

// What a drive's <id> was when the heal opened it: whether there was one,
// which file (io::ReadableFile::Identity: a file renamed over <id> since is
// another, even one of the same bytes) and its size; only where the file
// system cannot name files, its header too (which names its generation: an
// overwrite has a newer version stamp). The check under the exclusive lock
// then reads no header where identities exist.
struct Seen {
  bool exists = false;
  std::string identity;
  uint64_t size = 0;
  std::string header;  // encoded; empty if it did not check out
  bool operator==(const Seen&) const = default;
};

Seen Look(ErasureStoreImpl* store, ShardSlot& slot, int i, const std::string& id) {
  Seen seen;
  if (!slot.file) return seen;
  seen.exists = true;
  seen.identity = slot.file->Identity();
  seen.size = slot.file->Size();
  if (seen.identity.empty() && (store->CheckHeader(slot, i, id) || slot.header_checked)) {
    seen.header = EncodeShardHeader(slot.header);
  }
  return seen;
}

// One Heal(id) run; the caller holds the id's heal lock (one heal per id: its
// <id>.heal files).
class HealJob {
 public:
  HealJob(ErasureStoreImpl* store, const std::string& id)
      : store_(store),
        fs_(store->fs()),
        id_(id),
        n_(store->drive_count()),
        k_(store->k()),
        footers_(n_),
        has_footer_(n_),
        rebuild_(n_),
        buf_(n_, std::vector<uint8_t>(store->block_bytes() + kBlockCrcBytes)) {}

  Result<HealResult> Run();

 private:
  // The heal proper, once removed generations are out of the way.
  Result<HealResult> Repair();
  struct Target {
    int i;
    std::unique_ptr<io::WritableFile> file;
    std::string temp;
    Status st;
  };

  // Reads every header and footer and picks the reference shard (the newest
  // generation with k shards, see internal::ChooseReference). A shard of
  // that generation with a bad (or disagreeing) footer is rebuilt, but its
  // blocks still count where they verify. False if no footer is valid.
  bool ChooseReference();
  // With a tombstone (the id was removed while a drive was absent): shards
  // of the generations it covers are dead. If nothing else is left, deletes
  // them (and the tombstones once every drive is present) and returns false.
  bool DropRemovedGenerations(uint64_t removed_through);
  // Pass 1: verify every block of every usable shard; marks bad shards.
  void VerifyAllBlocks();
  // One pass instead of two when shards to rebuild are known before any
  // block is read (missing, unreadable, another generation: the usual
  // repair after a drive was lost), with the targets open: each stripe's
  // usable blocks are read and verified once, and the good ones rebuild the
  // targets' blocks. False when a block of a shard not being rebuilt fails
  // its check: that shard needs rebuilding from its first stripe, so the
  // caller abandons the targets and goes the two-pass way, which reads and
  // counts every fault again (so this pass counts its faults only when it
  // returns true).
  bool VerifyAndRebuildStripes(Status* st);
  // Opens <id>.heal with its header for every shard to rebuild.
  void OpenTargets();
  // Pass 2: stripe by stripe, k good blocks -> the targets' blocks.
  Status RebuildStripes();
  // Reads k good blocks of stripe s into buf_ (healthy shards first: a shard
  // being rebuilt may still hold good blocks); false if fewer than k verify.
  bool ReadGoodBlocks(uint64_t s, uint32_t len, std::vector<bool>* present);
  void AppendRebuilt(uint32_t len);
  // Footer, sync, rename over <id>, directory sync, for every target; the
  // renames under the exclusive id lock, and only if no drive's <id> changed.
  void PublishTargets();
  // Under the exclusive id lock: whether every drive's <id> is still what the
  // heal opened (seen_).
  bool Unchanged();
  void AbandonTargets();
  // After a rebuild pass: publishes the targets, or abandons them when the
  // pass failed or met a stripe it cannot rebuild.
  Result<HealResult> Finish(const Status& rebuilt);

  ErasureStoreImpl* store_;
  io::FileSystem* fs_;
  const std::string& id_;
  const int n_, k_;
  std::vector<ShardSlot> slots_;
  std::vector<Seen> seen_;  // empty when the whole run holds the exclusive lock
  std::vector<ShardFooter> footers_;
  std::vector<bool> has_footer_;
  std::vector<bool> rebuild_;
  int ref_ = -1;
  StripeLayout layout_;
  std::vector<std::vector<uint8_t>> buf_;
  std::vector<Target> targets_;
  std::vector<Fault> faults_;
  std::vector<std::string> whys_;
  HealResult result_;
};

bool HealJob::ChooseReference() {
  for (int i = 0; i < n_; ++i) {
    if (!store_->CheckHeader(slots_[i], i, id_)) continue;
    auto footer = store_->ReadFooter(slots_[i], i, id_);
    if (!footer.ok()) {
      if (slots_[i].fault == Fault::kCorrupt) slots_[i].fault = Fault::kNone;
      continue;
    }
    footers_[i] = std::move(footer).value();
    has_footer_[i] = true;
  }
  ref_ = internal::ChooseReference(slots_, has_footer_, k_);
  if (ref_ < 0) return false;
  // Shards of another generation (a drive that missed a rewrite of this id)
  // are rebuilt, and their blocks never count.
  RejectOtherGenerations(slots_, slots_[ref_].header.data);
  const ShardFooter& ref = footers_[ref_];
  for (int i = 0; i < n_; ++i) {
    // What the heal (a scrub) met on each drive: shard files missing and read
    // errors. Shards of a removed or an older generation are marked corrupt
    // here by design (they are rebuilt), which is no fault of the drive.
    if (slots_[i].fault == Fault::kMissing || slots_[i].fault == Fault::kIO) {
      store_->CountFault(i, slots_[i].fault);
    }
    rebuild_[i] = slots_[i].fault != Fault::kNone || !has_footer_[i] ||
                  footers_[i].object_size != ref.object_size || footers_[i].trailer != ref.trailer;
  }
  layout_ = store_->Layout(ref.object_size);
  return true;
}

void HealJob::VerifyAllBlocks() {
  std::string why;
  for (uint64_t s = 0; s < layout_.stripes() && !result_.unrecoverable; ++s) {
    const uint32_t len = layout_.BlockLen(s);
    int good = 0;
    for (int i = 0; i < n_; ++i) {
      if (slots_[i].fault != Fault::kNone) continue;
      const Fault f = ReadVerifiedBlock(slots_[i], layout_, s, len, buf_[i].data(), &why);
      if (f == Fault::kNone) {
        ++good;
      } else {
        rebuild_[i] = true;
        store_->CountFault(i, f);
      }
    }
    if (good < k_) result_.unrecoverable = true;
  }
}

void HealJob::OpenTargets() {
  ShardHeader header = slots_[ref_].header;
  for (int i = 0; i < n_; ++i) {
    if (!rebuild_[i]) continue;
    if (!store_->drive(i).online()) {
      ++result_.shards_failed;
      continue;
    }
    Target t{i, nullptr, store_->ShardPath(i, id_) + kHealSuffix, Status::OK()};
    auto file = store_->NewShardFile(i, t.temp);
    if (!file.ok()) {
      ++result_.shards_failed;
      STRATA_LOG("heal %s: %s", id_.c_str(), file.status().ToString().c_str());
      continue;
    }
    t.file = std::move(file).value();
    header.shard_index = i;
    t.st = t.file->Append(EncodeShardHeader(header));
    targets_.push_back(std::move(t));
  }
}

bool HealJob::ReadGoodBlocks(uint64_t s, uint32_t len, std::vector<bool>* present) {
  int good = 0;
  std::fill(present->begin(), present->end(), false);
  for (int i = 0; i < n_; ++i) {
    faults_[i] = slots_[i].fault != Fault::kNone ? slots_[i].fault : Fault::kOffline;
    whys_[i] = slots_[i].fault != Fault::kNone ? slots_[i].why : "not read";
  }
  for (int pass = 0; pass < 2 && good < k_; ++pass) {
    for (int i = 0; i < n_ && good < k_; ++i) {
      if (rebuild_[i] != (pass == 1)) continue;
      if (slots_[i].fault != Fault::kNone) continue;
      faults_[i] = ReadVerifiedBlock(slots_[i], layout_, s, len, buf_[i].data(), &whys_[i]);
      (*present)[i] = faults_[i] == Fault::kNone;
      good += (*present)[i] ? 1 : 0;
    }
  }
  return good >= k_;
}

void HealJob::AppendRebuilt(uint32_t len) {
  for (Target& t : targets_) {
    if (!t.st.ok()) continue;
    std::string crc;
    PutFixed32LE(&crc, Crc32c(buf_[t.i].data(), len));
    t.st = t.file->Append(std::string_view(reinterpret_cast<char*>(buf_[t.i].data()), len));
    if (t.st.ok()) t.st = t.file->Append(crc);
  }
}

Status HealJob::RebuildStripes() {
  std::vector<uint8_t*> ptrs(n_);
  std::vector<bool> present(n_);
  faults_.assign(n_, Fault::kNone);
  whys_.assign(n_, "");
  for (uint64_t s = 0; s < layout_.stripes(); ++s) {
    const uint32_t len = layout_.BlockLen(s);
    if (!ReadGoodBlocks(s, len, &present)) {  // something rotted between the passes
      result_.unrecoverable = true;
      int good = static_cast<int>(std::count(present.begin(), present.end(), true));
      STRATA_LOG("heal %s: %s", id_.c_str(),
                 StripeError(id_, s, good, k_, faults_, whys_).ToString().c_str());
      return Status::OK();
    }
    for (int i = 0; i < n_; ++i) ptrs[i] = buf_[i].data();
    // Only the shards still being written: the other missing ones (offline
    // drives, targets that failed) would be decoded for nothing.
    std::vector<bool> wanted(n_, false);
    for (const Target& t : targets_) wanted[t.i] = t.st.ok();
    RETURN_IF_ERROR(store_->code().Reconstruct(len, ptrs.data(), present, &wanted));
    AppendRebuilt(len);
  }
  return Status::OK();
}

bool HealJob::VerifyAndRebuildStripes(Status* st) {
  std::vector<uint8_t*> ptrs(n_);
  std::vector<bool> present(n_);
  std::vector<std::pair<int, Fault>> counted;  // faults met, counted if this pass stands
  auto count = [&] {
    for (const auto& [i, f] : counted) store_->CountFault(i, f);
    return true;
  };
  faults_.assign(n_, Fault::kNone);
  whys_.assign(n_, "");
  for (uint64_t s = 0; s < layout_.stripes(); ++s) {
    const uint32_t len = layout_.BlockLen(s);
    int good = 0;
    for (int i = 0; i < n_; ++i) {
      present[i] = false;
      faults_[i] = slots_[i].fault != Fault::kNone ? slots_[i].fault : Fault::kOffline;
      whys_[i] = slots_[i].fault != Fault::kNone ? slots_[i].why : "not read";
      if (slots_[i].fault != Fault::kNone) continue;
      faults_[i] = ReadVerifiedBlock(slots_[i], layout_, s, len, buf_[i].data(), &whys_[i]);
      if (faults_[i] == Fault::kNone) {
        present[i] = true;
        ++good;
      } else if (rebuild_[i]) {
        counted.emplace_back(i, faults_[i]);  // being rebuilt anyway (or its drive is offline)
      } else {
        return false;  // a shard the heal thought good: see the declaration
      }
    }
    if (good < k_) {
      result_.unrecoverable = true;
      STRATA_LOG("heal %s: %s", id_.c_str(),
                 StripeError(id_, s, good, k_, faults_, whys_).ToString().c_str());
      return count();
    }
    for (int i = 0; i < n_; ++i) ptrs[i] = buf_[i].data();
    // A target whose block verified has it in buf_ already; the rest are decoded.
    std::vector<bool> wanted(n_, false);
    bool any = false;
    for (const Target& t : targets_) {
      wanted[t.i] = t.st.ok() && !present[t.i];
      any = any || wanted[t.i];
    }
    if (any) {
      *st = store_->code().Reconstruct(len, ptrs.data(), present, &wanted);
      if (!st->ok()) return count();
    }
    AppendRebuilt(len);
  }
  return count();
}

bool HealJob::Unchanged() {
  int found = 0;
  std::vector<ShardSlot> now = store_->OpenSlots(id_, &found);
  for (int i = 0; i < n_; ++i) {
    if (!(Look(store_, now[i], i, id_) == seen_[i])) return false;
  }
  return !store_->ReadTombstone(id_).has_value();
}

void HealJob::PublishTargets() {
  const ShardFooter& ref = footers_[ref_];
  const std::string footer = EncodeShardFooter(ref.object_size, ref.trailer);
  for (Target& t : targets_) {
    if (t.st.ok()) t.st = t.file->Append(footer);
    Status closed = io::SyncAndClose(t.file.get());
    if (t.st.ok()) t.st = closed;
    t.file.reset();
  }
  std::unique_lock<std::shared_mutex> lock;
  if (!seen_.empty()) {
    lock = std::unique_lock(store_->IdLock(id_));  // exclusive: see IdLock
    if (!Unchanged()) {
      result_.superseded = true;
      STRATA_LOG("heal %s: rewritten or removed while healing; nothing published", id_.c_str());
      AbandonTargets();
      return;
    }
  }
  for (Target& t : targets_) {
    if (t.st.ok()) t.st = io::PublishFile(fs_, t.temp, store_->ShardPath(t.i, id_));
    if (t.st.ok()) {
      ++result_.shards_rebuilt;
    } else {
      ++result_.shards_failed;
      fs_->RemoveFile(t.temp).IgnoreError();
      STRATA_LOG("heal %s: shard %d: %s", id_.c_str(), t.i, t.st.ToString().c_str());
    }
  }
}

void HealJob::AbandonTargets() {
  for (Target& t : targets_) {
    if (t.file) t.file->Close().IgnoreError();
    fs_->RemoveFile(t.temp).IgnoreError();
  }
  targets_.clear();
}

bool HealJob::DropRemovedGenerations(uint64_t removed_through) {
  int live = 0;
  for (int i = 0; i < n_; ++i) {
    if (!store_->CheckHeader(slots_[i], i, id_)) continue;
    if (slots_[i].header.data.version_stamp <= removed_through) {
      slots_[i].SetFault(Fault::kCorrupt, "removed (tombstone)");  // rebuilt if anything lives
    } else {
      ++live;
    }
  }
  if (live > 0) return true;
  int deleted = 0;
  for (int i = 0; i < n_; ++i) {
    if (slots_[i].file && fs_->RemoveFile(store_->ShardPath(i, id_)).ok()) ++deleted;
  }
  store_->RemoveTombstonesIfAllPresent(id_);
  if (deleted > 0) {
    STRATA_LOG("heal %s: removed earlier; deleted %d leftover shard(s)", id_.c_str(), deleted);
  }
  return false;
}

Result<HealResult> HealJob::Run() {
  int found = 0;
  std::optional<uint64_t> removed;
  {
    std::shared_lock lock(store_->IdLock(id_));  // one generation of shards: see IdLock
    slots_ = store_->OpenSlots(id_, &found);
    removed = store_->ReadTombstone(id_);
  }
  if (found > 0 && !removed) {
    for (int i = 0; i < n_; ++i) seen_.push_back(Look(store_, slots_[i], i, id_));
    return Repair();
  }
  // Nothing there, or removed: what follows deletes files. All of it under
  // the exclusive lock, from a fresh look.
  std::unique_lock lock(store_->IdLock(id_));  // exclusive: see IdLock
  slots_ = store_->OpenSlots(id_, &found);
  removed = store_->ReadTombstone(id_);
  if (found == 0) {
    if (removed) store_->RemoveTombstonesIfAllPresent(id_);
    return NotFound("data " + id_ + ": no shard on any drive");
  }
  if (removed && !DropRemovedGenerations(*removed)) {
    return NotFound("data " + id_ + ": removed (tombstone); its leftovers are deleted");
  }
  Result<HealResult> result = Repair();
  // A live generation rewritten everywhere supersedes the tombstone.
  if (removed && result.ok() && !result->unrecoverable && result->shards_failed == 0) {
    store_->RemoveTombstonesIfAllPresent(id_);
  }
  return result;
}

Result<HealResult> HealJob::Repair() {
  if (!ChooseReference()) {  // nothing tells the size: nothing can be rebuilt
    result_.was_healthy = false;
    result_.unrecoverable = true;
    STRATA_LOG("heal %s: no shard has a valid header and footer", id_.c_str());
    return result_;
  }
  if (std::any_of(rebuild_.begin(), rebuild_.end(), [](bool b) { return b; })) {
    const HealResult before = result_;
    result_.was_healthy = false;
    OpenTargets();
    Status st;
    if (VerifyAndRebuildStripes(&st)) {
      // Unrecoverable: as the two passes report it, before any target was opened.
      if (result_.unrecoverable) result_.shards_failed = before.shards_failed;
      return Finish(st);
    }
    AbandonTargets();  // another shard has a bad block: verify everything first
    result_ = before;
  }
  VerifyAllBlocks();
  if (std::none_of(rebuild_.begin(), rebuild_.end(), [](bool b) { return b; })) return result_;
  result_.was_healthy = false;
  if (result_.unrecoverable) {
    STRATA_LOG("heal %s: unrecoverable (a stripe has fewer than %d good blocks)", id_.c_str(), k_);
    return result_;
  }
  OpenTargets();
  return Finish(RebuildStripes());
}

Result<HealResult> HealJob::Finish(const Status& rebuilt) {
  if (!rebuilt.ok() || result_.unrecoverable) {
    AbandonTargets();
    if (!rebuilt.ok()) return rebuilt;
    return result_;
  }
  PublishTargets();
  return result_;
}

}  // namespace

Result<HealResult> ErasureStoreImpl::Heal(const std::string& id) {
  if (!ValidId(id)) return InvalidArgument("bad data id '" + id + "'");
  std::lock_guard lock(HealLock(id));  // one heal of an id at a time; the id lock: see HealJob
  // Superseded once (an overwrite or remove in between, or a header that read
  // differently the second time): look again at what is there now.
  Result<HealResult> result = HealJob(this, id).Run();
  if (result.ok() && result->superseded) result = HealJob(this, id).Run();
  return result;
}

}  // namespace strata::storage::internal

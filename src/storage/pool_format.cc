// Opening a pool (docs/formats/drive-format.md): read every drive's format
// file, agree on the deployment, refuse drives of another deployment, order
// or layout, format blank drives, decide each drive's state, and open if at
// least k drives are online.
#include <map>
#include <set>

#include "common/log.h"
#include "io/atomic_file.h"
#include "io/dirs.h"
#include "storage/erasure_internal.h"

namespace strata::storage {
namespace internal {

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
  auto broken = [&](std::string why) {
    out.kind = FoundFormat::kBroken;
    out.why = std::move(why);
    return out;
  };
  auto file = fs->NewReadableFile(path);
  if (!file.ok()) return broken(file.status().ToString());
  std::string text(std::min<uint64_t>((*file)->Size(), 64 * 1024), '\0');
  auto n = (*file)->ReadAt(0, text.data(), text.size());
  if (!n.ok()) return broken(n.status().ToString());
  text.resize(*n);
  auto format = DecodeDriveFormat(text);
  if (!format.ok()) return broken(path + ": " + format.status().message());
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
  return io::WriteFileAtomically(fs, drive + "/" + std::string(kDriveFormatFile),
                                 EncodeDriveFormat(format));
}

Status ErasureStoreImpl::ReformatWiped(int i) {
  std::lock_guard lock(reformat_mu_);
  const std::string& path = drive(i).path;
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

}  // namespace internal

namespace {

using internal::Drive;
using internal::FoundFormat;

// What Open works out, step by step.
struct PoolPlan {
  int n = 0, k = 0, m = 0;
  size_t block = 0;
  bool explicit_layout = false;
  std::vector<FoundFormat> found;
  int first_formatted = -1;  // >= 0: an existing pool
  std::string deployment;
};

std::string LayoutName(uint32_t k, uint32_t m) {
  return std::to_string(k) + "+" + std::to_string(m);
}

Status CheckBlockBytes(size_t block) {
  if (block >= internal::kMinBlockBytes && block <= internal::kMaxBlockBytes) return Status::OK();
  return InvalidArgument("block_bytes " + std::to_string(block) + " out of range [" +
                         std::to_string(internal::kMinBlockBytes) + ", " +
                         std::to_string(internal::kMaxBlockBytes) + "]");
}

// Step 1: the drive list and the requested layout (k >= 1, m >= 0,
// k + m == drives, 1..16 drives, block size in range).
Status ValidateOptions(PoolOptions& options, PoolPlan* plan) {
  const int n = static_cast<int>(options.drives.size());
  if (n < 1 || n > internal::kMaxDrives) {
    return InvalidArgument("a pool needs 1 to " + std::to_string(internal::kMaxDrives) +
                           " drives, got " + std::to_string(n));
  }
  std::set<std::string> seen;
  for (std::string& d : options.drives) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    if (d.empty()) return InvalidArgument("empty drive path");
    if (!seen.insert(d).second) return InvalidArgument("drive " + d + " is listed twice");
  }
  plan->n = n;
  plan->explicit_layout = options.k != 0 || options.m != -1;
  int k = options.k, m = options.m;
  if (k == 0 && m == -1) {
    DefaultLayout(n, &k, &m);
  } else if (k == 0) {
    k = n - m;
  } else if (m == -1) {
    m = n - k;
  }
  if (k < 1 || m < 0 || k + m != n) {
    return InvalidArgument("erasure layout " + LayoutName(k, m) + " does not fit " +
                           std::to_string(n) + " drives (k >= 1, m >= 0, k + m == drives)");
  }
  plan->k = k;
  plan->m = m;
  plan->block = options.block_bytes;
  return CheckBlockBytes(plan->block);
}

// Step 2: every drive's format file, and the deployment they belong to (the
// one named, else the one most formatted drives carry, ties: the first
// listed; a new one if no drive is formatted).
void ReadFormats(io::FileSystem* fs, const PoolOptions& options, PoolPlan* plan) {
  std::map<std::string, int> deployments;
  plan->found.resize(plan->n);
  for (int i = 0; i < plan->n; ++i) {
    plan->found[i] = internal::ReadFormat(fs, options.drives[i]);
    if (plan->found[i].kind != FoundFormat::kFormatted) continue;
    ++deployments[plan->found[i].format.deployment_id];
    if (plan->first_formatted < 0) plan->first_formatted = i;
  }
  plan->deployment = options.deployment_id;
  if (!plan->deployment.empty()) return;
  if (plan->first_formatted < 0) {
    plan->deployment = internal::RandomHex(16);
    return;
  }
  plan->deployment = plan->found[plan->first_formatted].format.deployment_id;
  for (auto& [id, count] : deployments) {
    if (count > deployments[plan->deployment]) plan->deployment = id;
  }
}

// Step 3a: a formatted drive belongs here: this deployment, this position,
// this drive count, pool 0 set 0.
Status CheckIdentity(const DriveFormat& f, const std::string& path, int i, const PoolPlan& plan) {
  if (f.deployment_id != plan.deployment) {
    return PreconditionFailed("drive " + path + " belongs to deployment " + f.deployment_id +
                              ", expected deployment " + plan.deployment +
                              " (a drive of another pool or server?)");
  }
  if (f.position != static_cast<uint32_t>(i)) {
    return PreconditionFailed("drive " + path + " is position " + std::to_string(f.position) +
                              " of deployment " + plan.deployment + " but is listed at position " +
                              std::to_string(i) +
                              " (drives swapped? list them in their original order)");
  }
  if (f.drives != static_cast<uint32_t>(plan.n)) {
    return PreconditionFailed("drive " + path + " was formatted for a pool of " +
                              std::to_string(f.drives) + " drives, " + std::to_string(plan.n) +
                              " given");
  }
  if (f.pool != 0 || f.set != 0) {
    return PreconditionFailed("drive " + path + " belongs to pool " + std::to_string(f.pool) +
                              " set " + std::to_string(f.set) + ", expected pool 0 set 0");
  }
  return Status::OK();
}

// Step 3b: every formatted drive has the same layout (and the one requested,
// if any); an existing pool's format is authoritative for k, m and B.
Status AgreeOnLayout(const PoolOptions& options, PoolPlan* plan) {
  const DriveFormat* layout_from = nullptr;
  for (int i = 0; i < plan->n; ++i) {
    if (plan->found[i].kind != FoundFormat::kFormatted) continue;
    const DriveFormat& f = plan->found[i].format;
    const std::string& path = options.drives[i];
    RETURN_IF_ERROR(CheckIdentity(f, path, i, *plan));
    if (layout_from == nullptr) {
      layout_from = &f;
      if (plan->explicit_layout && (f.k != static_cast<uint32_t>(plan->k) ||
                                    f.m != static_cast<uint32_t>(plan->m))) {
        return PreconditionFailed("drive " + path + " was formatted for " + LayoutName(f.k, f.m) +
                                  ", " + LayoutName(plan->k, plan->m) + " requested");
      }
    } else if (f.k != layout_from->k || f.m != layout_from->m ||
               f.block_bytes != layout_from->block_bytes) {
      return PreconditionFailed(
          "drive " + path + " was formatted for " + LayoutName(f.k, f.m) + " with " +
          std::to_string(f.block_bytes) + "-byte blocks, other drives for " +
          LayoutName(layout_from->k, layout_from->m) + " with " +
          std::to_string(layout_from->block_bytes));
    }
  }
  if (layout_from == nullptr) return Status::OK();
  plan->k = static_cast<int>(layout_from->k);
  plan->m = static_cast<int>(layout_from->m);
  plan->block = layout_from->block_bytes;
  if (!CheckBlockBytes(plan->block).ok()) {
    return PreconditionFailed("drives were formatted with an unsupported block size " +
                              std::to_string(plan->block));
  }
  return Status::OK();
}

// Step 4: one drive's state. Formatted drives get their shard directories;
// blank ones are formatted at the position they are listed at (a new pool, or
// a wiped/replaced drive: every other drive's format confirms the position);
// an existing pool's absent drive directory is never recreated.
Drive PrepareDrive(io::FileSystem* fs, const std::string& path, int i, const PoolPlan& plan) {
  Drive d;
  d.path = path;
  d.position = i;
  const FoundFormat& f = plan.found[i];
  auto fail = [&](DriveState state, std::string detail) {
    d.state = state;
    d.detail = std::move(detail);
    return d;
  };
  if (f.kind == FoundFormat::kBroken) {
    return fail(DriveState::kFaulty, "cannot read format file: " + f.why);
  }
  if (f.kind == FoundFormat::kFormatted) {
    Status st = internal::EnsureShardDirs(fs, d.path);
    return st.ok() ? d : fail(DriveState::kFaulty, st.ToString());
  }
  const bool existing_pool = plan.first_formatted >= 0;
  if (f.kind == FoundFormat::kAbsent) {
    if (existing_pool) {
      // An unmounted disk (creating it would write into the parent file
      // system) or a deleted one: the operator recreates it empty to replace it.
      return fail(DriveState::kMissing,
                  "drive directory does not exist (unmounted or removed? create it empty to "
                  "replace the drive; it is then formatted and refilled by heal)");
    }
    Status st = io::CreateDirsDurably(fs, d.path);
    if (!st.ok()) {
      return fail(DriveState::kMissing,
                  "drive directory missing and cannot be created: " + st.ToString());
    }
  }
  DriveFormat format;
  format.deployment_id = plan.deployment;
  format.drive_id = internal::RandomHex(16);
  format.position = i;
  format.drives = plan.n;
  format.k = plan.k;
  format.m = plan.m;
  format.block_bytes = static_cast<uint32_t>(plan.block);
  Status st = internal::WriteFormat(fs, d.path, format);
  if (!st.ok()) return fail(DriveState::kUnformatted, "cannot format: " + st.ToString());
  if (existing_pool) {
    d.detail = "was blank; formatted as position " + std::to_string(i) + " (heal refills it)";
    STRATA_LOG("drive %s: %s", d.path.c_str(), d.detail.c_str());
  }
  return d;
}

// Step 5: at least k drives online (below k nothing can be read); from k to
// quorum - 1 the pool serves reads and refuses writes (Unavailable), which
// beats not starting at all.
Status CheckEnoughOnline(const std::vector<Drive>& drives, const PoolPlan& plan) {
  int online = 0;
  std::string detail;
  for (const Drive& d : drives) {
    if (d.online()) {
      ++online;
      continue;
    }
    detail += "; " + d.path + ": " + DriveStateName(d.state) + " (" + d.detail + ")";
    STRATA_LOG("drive %s: %s: %s", d.path.c_str(), DriveStateName(d.state).c_str(),
               d.detail.c_str());
  }
  if (online < plan.k) {
    return Unavailable("only " + std::to_string(online) + " of " + std::to_string(plan.n) +
                       " drives usable, at least " + std::to_string(plan.k) + " needed for " +
                       LayoutName(plan.k, plan.m) + detail);
  }
  const int quorum = plan.m >= 1 ? plan.k + 1 : plan.k;
  if (online < quorum) {
    STRATA_LOG("pool is read-only: %d of %d drives usable, %d needed for writes", online, plan.n,
               quorum);
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<ErasureDataStore>> ErasureDataStore::Open(io::FileSystem* fs,
                                                                 PoolOptions options) {
  PoolPlan plan;
  RETURN_IF_ERROR(ValidateOptions(options, &plan));
  ReadFormats(fs, options, &plan);
  RETURN_IF_ERROR(AgreeOnLayout(options, &plan));
  std::vector<Drive> drives;
  for (int i = 0; i < plan.n; ++i) drives.push_back(PrepareDrive(fs, options.drives[i], i, plan));
  RETURN_IF_ERROR(CheckEnoughOnline(drives, plan));
  ASSIGN_OR_RETURN(auto code, ec::ErasureCode::Create(plan.k, plan.m));
  return std::unique_ptr<ErasureDataStore>(new internal::ErasureStoreImpl(
      fs, std::move(drives), plan.k, plan.m, plan.block, std::move(code)));
}

}  // namespace strata::storage

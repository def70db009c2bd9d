// FaultFileSystem: forwards to a base FileSystem unless a rule fires.
#include "io/fault_fs.h"

#include <algorithm>
#include <new>

namespace strata::io {
namespace {

class FaultWritableFile : public WritableFile {
 public:
  FaultWritableFile(FaultFileSystem* fs, std::string path, std::unique_ptr<WritableFile> base)
      : fs_(fs), path_(std::move(path)), base_(std::move(base)) {}

  Status Append(std::string_view data) override {
    long torn_bytes = -1;
    Status st = fs_->Check(FaultOp::kAppend, path_, &torn_bytes);
    if (st.ok()) return base_->Append(data);
    if (torn_bytes >= 0) {
      // A torn write: a prefix reached the file, then the device failed. The
      // base's own result is irrelevant; the caller sees the injected error.
      size_t n = std::min(data.size(), static_cast<size_t>(torn_bytes));
      base_->Append(data.substr(0, n)).IgnoreError();
    }
    return st;
  }

  Status Sync() override {
    RETURN_IF_ERROR(fs_->Check(FaultOp::kSync, path_));
    return base_->Sync();
  }

  Status Close() override {
    Status st = fs_->Check(FaultOp::kClose, path_);
    // close(2) releases the fd even when it reports an error, so close the base anyway.
    Status base_st = base_->Close();
    return st.ok() ? base_st : st;
  }

 private:
  FaultFileSystem* fs_;
  std::string path_;
  std::unique_ptr<WritableFile> base_;
};

class FaultReadableFile : public ReadableFile {
 public:
  FaultReadableFile(FaultFileSystem* fs, std::string path, std::unique_ptr<ReadableFile> base)
      : fs_(fs), path_(std::move(path)), base_(std::move(base)) {}

  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) const override {
    RETURN_IF_ERROR(fs_->Check(FaultOp::kRead, path_));
    auto got = base_->ReadAt(offset, buf, n);
    if (got.ok()) fs_->CountRead(path_, *got);
    return got;
  }
  uint64_t Size() const override { return base_->Size(); }
  std::string Identity() const override { return base_->Identity(); }

 private:
  FaultFileSystem* fs_;
  std::string path_;
  std::unique_ptr<ReadableFile> base_;
};

}  // namespace

void FaultFileSystem::CountRead(const std::string& path, size_t n) {
  std::lock_guard lock(mu_);
  for (auto& [p, bytes] : bytes_read_) {
    if (p == path) {
      bytes += n;
      return;
    }
  }
  bytes_read_.emplace_back(path, n);
}

uint64_t FaultFileSystem::BytesRead(const std::string& path_substring) const {
  std::lock_guard lock(mu_);
  uint64_t total = 0;
  for (const auto& [p, bytes] : bytes_read_) {
    if (p.find(path_substring) != std::string::npos) total += bytes;
  }
  return total;
}

void FaultFileSystem::AddRule(FaultRule rule) {
  std::lock_guard lock(mu_);
  rules_.push_back(std::move(rule));
}

void FaultFileSystem::ClearRules() {
  std::lock_guard lock(mu_);
  rules_.clear();
}

void FaultFileSystem::CutPowerAfter(long n) {
  std::lock_guard lock(mu_);
  power_budget_ = n;
}

bool FaultFileSystem::ConsumeMutatingOp() {
  std::lock_guard lock(mu_);
  return ConsumeLocked();
}

bool FaultFileSystem::ConsumeLocked() {
  ++mutating_ops_;
  if (power_budget_ < 0) return true;
  if (power_budget_ == 0) return false;
  --power_budget_;
  return true;
}

long FaultFileSystem::mutating_ops() const {
  std::lock_guard lock(mu_);
  return mutating_ops_;
}

Status FaultFileSystem::Check(FaultOp op, const std::string& path, long* torn_bytes) {
  std::lock_guard lock(mu_);
  if (op != FaultOp::kRead && !ConsumeLocked()) {
    ++injected_;
    if (torn_bytes != nullptr) *torn_bytes = -1;
    return IOError("power cut (injected) at " + path);
  }
  for (FaultRule& rule : rules_) {
    if (rule.op != op || path.find(rule.path_substring) == std::string::npos) continue;
    if (rule.skip > 0) {
      --rule.skip;
      continue;
    }
    if (rule.times == 0) continue;  // used up
    if (rule.times > 0) --rule.times;
    ++injected_;
    if (torn_bytes != nullptr) *torn_bytes = rule.torn_bytes;
    if (rule.throw_bad_alloc) throw std::bad_alloc();
    return rule.error;
  }
  return Status::OK();
}

Result<std::unique_ptr<WritableFile>> FaultFileSystem::NewWritableFile(const std::string& path) {
  RETURN_IF_ERROR(Check(FaultOp::kCreate, path));
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> base, base_->NewWritableFile(path));
  return std::unique_ptr<WritableFile>(new FaultWritableFile(this, path, std::move(base)));
}

Result<std::unique_ptr<WritableFile>> FaultFileSystem::NewBulkWritableFile(
    const std::string& path) {
  RETURN_IF_ERROR(Check(FaultOp::kCreate, path));
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> base, base_->NewBulkWritableFile(path));
  return std::unique_ptr<WritableFile>(new FaultWritableFile(this, path, std::move(base)));
}

Result<std::unique_ptr<ReadableFile>> FaultFileSystem::NewReadableFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> base, base_->NewReadableFile(path));
  return std::unique_ptr<ReadableFile>(new FaultReadableFile(this, path, std::move(base)));
}

Status FaultFileSystem::CreateDirs(const std::string& path) {
  RETURN_IF_ERROR(Check(FaultOp::kCreateDirs, path));
  return base_->CreateDirs(path);
}

Status FaultFileSystem::RemoveFile(const std::string& path) {
  RETURN_IF_ERROR(Check(FaultOp::kRemove, path));
  return base_->RemoveFile(path);
}

Status FaultFileSystem::Rename(const std::string& from, const std::string& to) {
  // Matched against "from -> to" so a substring of either path selects it.
  RETURN_IF_ERROR(Check(FaultOp::kRename, from + " -> " + to));
  return base_->Rename(from, to);
}

Status FaultFileSystem::SyncDir(const std::string& path) {
  RETURN_IF_ERROR(Check(FaultOp::kSyncDir, path));
  return base_->SyncDir(path);
}

Result<std::vector<std::string>> FaultFileSystem::ListDir(const std::string& path) {
  return base_->ListDir(path);
}

bool FaultFileSystem::FileExists(const std::string& path) { return base_->FileExists(path); }

Result<uint64_t> FaultFileSystem::FileSize(const std::string& path) {
  return base_->FileSize(path);
}

}  // namespace strata::io

// A FileSystem wrapper that injects faults: errors on chosen operations
// (EIO, ENOSPC), and torn writes (only the first N bytes of an Append land).
// Used by the object engine's tests to prove nothing acknowledged is lost and
// nothing torn is served.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "io/file_system.h"

namespace strata::io {

// Which call each op covers: kCreate NewWritableFile; kAppend/kSync/kClose the
// WritableFile methods; kRead ReadableFile::ReadAt (opening for read is not
// faulted: a missing file is already NotFound); kRename Rename (matched against
// both paths); kRemove RemoveFile; kSyncDir SyncDir; kCreateDirs CreateDirs.
// ListDir, FileExists and FileSize pass through.
enum class FaultOp {
  kCreate,
  kAppend,
  kSync,
  kClose,
  kRead,
  kRename,
  kRemove,
  kSyncDir,
  kCreateDirs
};

struct FaultRule {
  FaultOp op;
  std::string path_substring;  // empty matches every path
  Status error;                // what the operation returns
  int skip = 0;                // let this many matching calls succeed first
  int times = -1;              // fail this many times (-1: forever)
  // For kAppend: write this many bytes of the data before failing (torn write); -1: none.
  long torn_bytes = -1;
  // Throw std::bad_alloc instead of returning `error`: an allocation failing
  // inside the call (what callers on helper threads must survive).
  bool throw_bad_alloc = false;
};

class FaultFileSystem : public FileSystem {
 public:
  explicit FaultFileSystem(FileSystem* base) : base_(base) {}
  void AddRule(FaultRule rule);
  void ClearRules();
  int faults_injected() const { return injected_.load(); }

  // Power-cut point: after `n` more mutating calls (every op but kRead) each
  // later one fails with IOError, as if the machine stopped there; a test
  // then calls MemFileSystem::SimulateCrash. n < 0 switches it off.
  void CutPowerAfter(long n);
  // For other stores that share the same sequence of operations (a metadata
  // store wrapper in tests): counts one mutating op; false once power is cut.
  bool ConsumeMutatingOp();
  long mutating_ops() const;  // mutating calls seen so far (cut or not)
  // Bytes ReadAt returned from files whose path contains `path_substring`
  // (empty: all), counted since the file system was made: how much a reader
  // reads, for tests that bound it.
  uint64_t BytesRead(const std::string& path_substring) const;
  void CountRead(const std::string& path, size_t n);

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> NewBulkWritableFile(const std::string& path) override;
  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path) override;
  Status CreateDirs(const std::string& path) override;
  Status RemoveFile(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status SyncDir(const std::string& path) override;
  Result<std::vector<std::string>> ListDir(const std::string& path) override;
  bool FileExists(const std::string& path) override;
  Result<uint64_t> FileSize(const std::string& path) override;

  // Returns the injected error (and fills torn_bytes) if a rule fires for (op, path).
  // Rules are tried in the order added; the first that fires wins. A matching
  // call consumed by a rule's `skip` goes on to the next rule.
  Status Check(FaultOp op, const std::string& path, long* torn_bytes = nullptr);

 private:
  bool ConsumeLocked();  // mu_ held

  FileSystem* base_;
  mutable std::mutex mu_;
  long power_budget_ = -1;
  long mutating_ops_ = 0;
  std::vector<FaultRule> rules_;
  std::vector<std::pair<std::string, uint64_t>> bytes_read_;  // per path, mu_
  std::atomic<int> injected_{0};
};

}  // namespace strata::io

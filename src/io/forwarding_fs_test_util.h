// Tests: a FileSystem that forwards every call to a base one; test file
// systems derive from it and override what they change (a rename that
// sleeps, a read that throws).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/file_system.h"

namespace strata::io {

class ForwardingFs : public FileSystem {
 public:
  explicit ForwardingFs(FileSystem* base) : base_(base) {}
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& p) override {
    return base_->NewWritableFile(p);
  }
  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& p) override {
    return base_->NewReadableFile(p);
  }
  Status CreateDirs(const std::string& p) override { return base_->CreateDirs(p); }
  Status RemoveFile(const std::string& p) override { return base_->RemoveFile(p); }
  Status Rename(const std::string& from, const std::string& to) override {
    return base_->Rename(from, to);
  }
  Status SyncDir(const std::string& p) override { return base_->SyncDir(p); }
  Result<std::vector<std::string>> ListDir(const std::string& p) override {
    return base_->ListDir(p);
  }
  bool FileExists(const std::string& p) override { return base_->FileExists(p); }
  Result<uint64_t> FileSize(const std::string& p) override { return base_->FileSize(p); }

 private:
  FileSystem* base_;
};

}  // namespace strata::io

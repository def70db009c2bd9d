// The FileSystem seam: every data-file access of strata goes through this
// interface, so tests can swap in an in-memory twin (mem_fs) or a
// fault-injecting wrapper (fault_fs). Paths are plain strings; directories
// are separated by '/'.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::io {

// A file being written sequentially. Data is durable only after Sync().
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(std::string_view data) = 0;
  virtual Status Sync() = 0;  // fdatasync-equivalent: data and size durable
  virtual Status Close() = 0;
};

// A file read at arbitrary offsets; safe to call ReadAt from several threads.
class ReadableFile {
 public:
  virtual ~ReadableFile() = default;
  // Reads up to n bytes at offset into buf; returns bytes read (0 at EOF).
  virtual Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) const = 0;
  virtual uint64_t Size() const = 0;
  // The open descriptor, for zero-copy sends (sendfile); -1 where there is none.
  virtual int NativeFd() const { return -1; }
  // Which file this handle reads: equal for two handles of one file, different
  // from any other file while this handle is open (even one later renamed or
  // created at the same path); empty where the file system cannot tell.
  virtual std::string Identity() const { return {}; }
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // Creates (or truncates) a file for writing. The parent directory must exist.
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) = 0;
  // The same, for a long file written once and read later (an object's data):
  // the posix file system with PosixOptions::direct_bulk_writes writes its
  // bulk past the first 8 MiB with O_DIRECT (io/direct_writer.h), bypassing
  // the page cache. Data is durable only after Sync(), as for any file.
  virtual Result<std::unique_ptr<WritableFile>> NewBulkWritableFile(const std::string& path) {
    return NewWritableFile(path);
  }
  virtual Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path) = 0;
  virtual Status CreateDirs(const std::string& path) = 0;  // mkdir -p
  virtual Status RemoveFile(const std::string& path) = 0;  // NotFound if absent
  virtual Status Rename(const std::string& from, const std::string& to) = 0;  // atomic replace
  virtual Status SyncDir(const std::string& path) = 0;  // makes entries (create/rename) durable
  virtual Result<std::vector<std::string>> ListDir(const std::string& path) = 0;  // names only
  virtual bool FileExists(const std::string& path) = 0;
  virtual Result<uint64_t> FileSize(const std::string& path) = 0;
};

// The real filesystem (POSIX calls). Process-wide singleton-free: create one per use.
struct PosixOptions {
  // NewBulkWritableFile writes past the first 8 MiB with O_DIRECT; false
  // (the server's default, --direct-writes): bulk files are plain files.
  bool direct_bulk_writes = false;
};
std::unique_ptr<FileSystem> NewPosixFileSystem(PosixOptions options = {});

// Everything in memory. Tracks which bytes and directory entries were synced so
// SimulateCrash() can drop what a power loss would lose.
class MemFileSystem;
std::unique_ptr<MemFileSystem> NewMemFileSystem();

}  // namespace strata::io

// FileSystem over POSIX calls. Every error carries the path it concerns.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "io/file_system.h"
#include "io/write_behind.h"

namespace strata::io {
namespace {

Status PathError(const std::string& path, int err) { return ErrnoStatus(err, path); }

// sync_file_range(2) for WriteBehind. Waiting consumes a write-back error
// (the file's error cursor advances), and a failed start may be the only
// report of pages the file system gave up on, so every error is reported.
int SyncRange(int fd, WriteBehind::Op op, uint64_t offset, uint64_t length) {
  unsigned flags = op == WriteBehind::Op::kStart
                       ? SYNC_FILE_RANGE_WRITE
                       : SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                             SYNC_FILE_RANGE_WAIT_AFTER;
  int rc;
  do {
    rc = ::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(length), flags);
  } while (rc != 0 && errno == EINTR);
  if (rc == 0) return 0;
  // Not a file the kernel can write back by range (a pipe, a device, an
  // unusual file system): the final fdatasync does all the work, as before.
  if (errno == ESPIPE || errno == EINVAL || errno == ENOSYS) return 0;
  return errno;
}

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd)
      : path_(std::move(path)),
        fd_(fd),
        behind_([fd](WriteBehind::Op op, uint64_t off, uint64_t len) {
          return SyncRange(fd, op, off, len);
        }) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);  // an unclosed file is abandoned; errors have no one to go to
  }

  Status Append(std::string_view data) override {
    if (fd_ < 0) return InvalidArgument(path_ + ": append after close");
    // write(2) may be interrupted or write less than asked (signals, pipes, quotas).
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return PathError(path_, errno);
      }
      data.remove_prefix(static_cast<size_t>(n));
      if (int err = behind_.Appended(static_cast<uint64_t>(n)); err != 0) {
        return PathError(path_, err);
      }
    }
    return Status::OK();
  }

  Status Sync() override {
    if (fd_ < 0) return InvalidArgument(path_ + ": sync after close");
    if (int err = behind_.error(); err != 0) return PathError(path_, err);
    // fdatasync also flushes the size, which is all a reader of the data needs.
    if (::fdatasync(fd_) != 0) return PathError(path_, errno);
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    // Linux releases the fd even when close fails, so never retry it.
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return PathError(path_, errno);
    return Status::OK();
  }

 private:
  std::string path_;
  int fd_;
  WriteBehind behind_;
};

class PosixReadableFile : public ReadableFile {
 public:
  PosixReadableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixReadableFile() override { ::close(fd_); }
  int NativeFd() const override { return fd_; }

  Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) const override {
    size_t done = 0;
    while (done < n) {  // pread may return short counts before EOF
      ssize_t r = ::pread(fd_, buf + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return PathError(path_, errno);
      }
      if (r == 0) break;  // EOF
      done += static_cast<size_t>(r);
    }
    return done;
  }

  uint64_t Size() const override {
    struct stat st;
    // fstat on an open fd fails only on a broken kernel; 0 reads as "empty".
    if (::fstat(fd_, &st) != 0) return 0;
    return static_cast<uint64_t>(st.st_size);
  }
  // Device and inode: an inode is not reused while a descriptor holds it.
  std::string Identity() const override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return {};
    return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }

 private:
  std::string path_;
  int fd_;
};

class PosixFileSystem : public FileSystem {
 public:
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    int fd = OpenRetry(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return PathError(path, errno);
    return std::unique_ptr<WritableFile>(new PosixWritableFile(path, fd));
  }

  Result<std::unique_ptr<ReadableFile>> NewReadableFile(const std::string& path) override {
    int fd = OpenRetry(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return PathError(path, errno);
    return std::unique_ptr<ReadableFile>(new PosixReadableFile(path, fd));
  }

  Status CreateDirs(const std::string& path) override {
    // Create each prefix ending at a '/', then the whole path.
    for (size_t pos = path.find('/', 1);; pos = path.find('/', pos + 1)) {
      std::string prefix = path.substr(0, pos);
      if (!prefix.empty() && ::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
        return PathError(prefix, errno);
      }
      if (pos == std::string::npos) break;
    }
    // EEXIST above may have been a file in the way.
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return PathError(path, errno);
    if (!S_ISDIR(st.st_mode)) return PathError(path, ENOTDIR);
    return Status::OK();
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return PathError(path, errno);
    return Status::OK();
  }

  Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return PathError(from + " -> " + to, errno);
    return Status::OK();
  }

  Status SyncDir(const std::string& path) override {
    int fd = OpenRetry(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0) return PathError(path, errno);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) return PathError(path, err);
    return Status::OK();
  }

  Result<std::vector<std::string>> ListDir(const std::string& path) override {
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return PathError(path, errno);
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent* e = ::readdir(dir)) {
      std::string_view name = e->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
    }
    int err = errno;  // readdir returns null both at the end and on error
    ::closedir(dir);
    if (err != 0) return PathError(path, err);
    std::sort(names.begin(), names.end());  // same order as mem_fs, for tests
    return names;
  }

  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

  Result<uint64_t> FileSize(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return PathError(path, errno);
    if (S_ISDIR(st.st_mode)) return PathError(path, EISDIR);
    return static_cast<uint64_t>(st.st_size);
  }

 private:
  static int OpenRetry(const std::string& path, int flags, mode_t mode) {
    int fd;
    do {
      fd = ::open(path.c_str(), flags, mode);
    } while (fd < 0 && errno == EINTR);
    return fd;
  }
};

}  // namespace

std::unique_ptr<FileSystem> NewPosixFileSystem() { return std::make_unique<PosixFileSystem>(); }

}  // namespace strata::io

// FileSystem over POSIX calls. Every error carries the path it concerns.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "io/direct_writer.h"
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

// All n bytes: pwrite(2) at `offset`, or with offset < 0 write(2) at the
// file's position (which works on a pipe or a device too). Returns 0 or an
// errno.
int WriteAll(int fd, const char* buf, size_t n, int64_t offset) {
  while (n > 0) {
    ssize_t w = offset < 0 ? ::write(fd, buf, n) : ::pwrite(fd, buf, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (w == 0) return EIO;  // no progress on a regular file: never loop forever
    buf += w;
    n -= static_cast<size_t>(w);
    if (offset >= 0) offset += w;
  }
  return 0;
}

// A file written sequentially. A bulk file (NewBulkWritableFile) writes its
// first kDirectAfter bytes through the page cache with write-behind, and
// everything after, until the first Sync, with O_DIRECT (io/direct_writer.h)
// through a second descriptor of the same file. Where O_DIRECT cannot be
// opened (tmpfs) the whole file goes through the page cache.
class PosixWritableFile : public WritableFile {
 public:
  static constexpr uint64_t kDirectAfter = 8ull << 20;
  static_assert(kDirectAfter % DirectWriter::kAlign == 0);

  PosixWritableFile(std::string path, int fd, bool bulk)
      : path_(std::move(path)),
        fd_(fd),
        bulk_(bulk),
        behind_([fd](WriteBehind::Op op, uint64_t off, uint64_t len) {
          return SyncRange(fd, op, off, len);
        }) {}
  ~PosixWritableFile() override {
    direct_.reset();  // waits for its writes in flight; drops what is staged (abandoned)
    if (dfd_ >= 0) ::close(dfd_);
    if (fd_ >= 0) ::close(fd_);  // an unclosed file is abandoned; errors have no one to go to
  }

  Status Append(std::string_view data) override {
    if (fd_ < 0) return InvalidArgument(path_ + ": append after close");
    if (failed_ != 0) return PathError(path_, failed_);  // bytes before these are missing
    if (direct_) {
      if (int err = direct_->Append(data); err != 0) return PathError(path_, err);
      return Status::OK();
    }
    if (bulk_ && offset_ + data.size() > kDirectAfter) {
      // The bytes up to kDirectAfter through the page cache, the rest direct.
      std::string_view head = data.substr(0, kDirectAfter - offset_);
      RETURN_IF_ERROR(AppendBuffered(head));
      bulk_ = false;  // one try
      if (StartDirect()) {
        if (int err = direct_->Append(data.substr(head.size())); err != 0) {
          return PathError(path_, err);
        }
        return Status::OK();
      }
      return AppendBuffered(data.substr(head.size()));
    }
    return AppendBuffered(data);
  }

  Status Sync() override {
    if (fd_ < 0) return InvalidArgument(path_ + ": sync after close");
    RETURN_IF_ERROR(FinishDirect());
    if (int err = behind_.error(); err != 0) return PathError(path_, err);
    // fdatasync also flushes the size, which is all a reader of the data needs;
    // it covers the direct writes too (same inode) and flushes the device's
    // write cache behind them.
    if (::fdatasync(fd_) != 0) return PathError(path_, errno);
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    Status finished = FinishDirect();  // what is staged goes to the file first
    if (dfd_ >= 0) ::close(dfd_);
    dfd_ = -1;
    // Linux releases the fd even when close fails, so never retry it.
    int rc = ::close(fd_);
    fd_ = -1;
    RETURN_IF_ERROR(finished);
    if (rc != 0) return PathError(path_, errno);
    return Status::OK();
  }

 private:
  Status AppendBuffered(std::string_view data) {
    if (data.empty()) return Status::OK();
    // At the file's position until direct writes moved past it.
    const int64_t at = went_direct_ ? static_cast<int64_t>(offset_) : -1;
    if (int err = WriteAll(fd_, data.data(), data.size(), at); err != 0) {
      return PathError(path_, err);
    }
    offset_ += data.size();
    if (went_direct_) return Status::OK();  // write-behind counts from 0: its part is done
    if (int err = behind_.Appended(data.size()); err != 0) return PathError(path_, err);
    return Status::OK();
  }

  // Opens the O_DIRECT descriptor and the writer at offset_ (kDirectAfter).
  bool StartDirect() {
    // The same open file by its descriptor (the path may have been renamed),
    // or by its path where /proc is not mounted.
    const std::string self = "/proc/self/fd/" + std::to_string(fd_);
    dfd_ = ::open(self.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
    if (dfd_ < 0 && errno == ENOENT) dfd_ = ::open(path_.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
    if (dfd_ < 0) return false;  // EINVAL on tmpfs: the page cache it is
    struct stat a, b;
    if (::fstat(fd_, &a) != 0 || ::fstat(dfd_, &b) != 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino) {  // the path names another file now: not that one
      ::close(dfd_);
      dfd_ = -1;
      return false;
    }
    went_direct_ = true;
    direct_ = std::make_unique<DirectWriter>(
        offset_, [dfd = dfd_, fd = fd_](bool direct, const char* buf, size_t n, uint64_t off) {
          if (direct) return WriteAll(dfd, buf, n, static_cast<int64_t>(off));
          // A fallback chunk (or the tail) through the page cache: its
          // write-back starts now, as write-behind would have started it.
          int err = WriteAll(fd, buf, n, static_cast<int64_t>(off));
          return err != 0 ? err : SyncRange(fd, WriteBehind::Op::kStart, off, n);
        });
    return true;
  }

  // Writes what the direct writer holds and waits for it; later appends go
  // through the page cache after it.
  Status FinishDirect() {
    if (failed_ != 0) return PathError(path_, failed_);  // sticky: the file has a hole
    if (!direct_) return Status::OK();
    int err = direct_->Finish();
    offset_ = direct_->end();
    direct_.reset();
    if (err != 0) {
      failed_ = err;  // the bytes past the failure are not in the file
      return PathError(path_, err);
    }
    return Status::OK();
  }

  std::string path_;
  int fd_;
  int dfd_ = -1;
  bool bulk_;  // may still turn direct
  bool went_direct_ = false;
  uint64_t offset_ = 0;  // bytes in the file (direct ones once finished)
  int failed_ = 0;
  WriteBehind behind_;
  std::unique_ptr<DirectWriter> direct_;
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
  explicit PosixFileSystem(PosixOptions options) : options_(options) {}
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path) override {
    return Create(path, false);
  }
  Result<std::unique_ptr<WritableFile>> NewBulkWritableFile(const std::string& path) override {
    return Create(path, options_.direct_bulk_writes);
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
  static Result<std::unique_ptr<WritableFile>> Create(const std::string& path, bool bulk) {
    int fd = OpenRetry(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return PathError(path, errno);
    return std::unique_ptr<WritableFile>(new PosixWritableFile(path, fd, bulk));
  }

  static int OpenRetry(const std::string& path, int flags, mode_t mode) {
    int fd;
    do {
      fd = ::open(path.c_str(), flags, mode);
    } while (fd < 0 && errno == EINTR);
    return fd;
  }

  PosixOptions options_;
};

}  // namespace

std::unique_ptr<FileSystem> NewPosixFileSystem(PosixOptions options) {
  return std::make_unique<PosixFileSystem>(options);
}

}  // namespace strata::io

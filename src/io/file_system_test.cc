#include "io/file_system.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <sys/resource.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "io/fault_fs.h"
#include "io/dirs.h"
#include "io/mem_fs.h"
#include "io/seeded_bytes_test_util.h"
#include "io/write_behind.h"

namespace strata::io {
namespace {

// Writes `data` to `path` and syncs it; asserts every step.
void WriteFile(FileSystem* fs, const std::string& path, std::string_view data) {
  auto file = fs->NewWritableFile(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->Append(data).ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());
}

std::string ReadFile(FileSystem* fs, const std::string& path) {
  auto file = fs->NewReadableFile(path);
  if (!file.ok()) return "<" + file.status().ToString() + ">";
  std::string out((*file)->Size(), '\0');
  auto n = (*file)->ReadAt(0, out.data(), out.size());
  if (!n.ok()) return "<" + n.status().ToString() + ">";
  out.resize(*n);
  return out;
}

// A fresh directory under `base`, removed with everything in it at the end
// of the test; empty `path` where it could not be made. `fs_type` is its file
// system's statfs(2) magic (0 if unknown).
struct ScratchDir {
  explicit ScratchDir(const std::string& base) {
    std::string tmpl = base + "/strata_fs_test.XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) return;
    path = tmpl;
    struct statfs sfs{};
    if (::statfs(path.c_str(), &sfs) == 0) fs_type = static_cast<long>(sfs.f_type);
  }
  ~ScratchDir() {
    if (!path.empty()) std::filesystem::remove_all(path);
  }
  std::string path;
  long fs_type = 0;
};

// Page-cache state of [off, off + len) of `path` by cachestat(2) (Linux 6.5);
// `error` is the errno where it failed (ENOSYS: no cachestat on this kernel).
struct CacheStat {
  uint64_t nr_cache = 0, nr_dirty = 0, nr_writeback = 0, nr_evicted = 0, nr_recently_evicted = 0;
  int error = 0;
};
CacheStat CacheStatOf(const std::string& path, uint64_t off, uint64_t len) {
  CacheStat out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    out.error = errno;
    return out;
  }
  struct {
    uint64_t off, len;
  } range{off, len};
  constexpr long kCachestat = 451;  // x86-64, arm64 and the rest share the number
  long rc = ::syscall(kCachestat, fd, &range, &out, 0);  // fills the five counters
  if (rc != 0) out.error = errno;
  ::close(fd);
  return out;
}

// ---- Behaviour shared by every FileSystem ----

class FileSystemTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "posix") {
      char tmpl[] = "/tmp/strata_fs_test.XXXXXX";
      ASSERT_NE(::mkdtemp(tmpl), nullptr);
      root_ = tmpl;
      fs_ = NewPosixFileSystem();
    } else {
      root_ = "/root";
      fs_ = NewMemFileSystem();
      ASSERT_TRUE(fs_->CreateDirs(root_).ok());
    }
  }
  void TearDown() override {
    if (GetParam() == "posix") std::filesystem::remove_all(root_);
  }
  std::string Path(const std::string& name) const { return root_ + "/" + name; }

  std::string root_;
  std::unique_ptr<FileSystem> fs_;
};

TEST_P(FileSystemTest, WriteThenRead) {
  auto file = fs_->NewWritableFile(Path("f"));
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("hello").ok());
  ASSERT_TRUE((*file)->Append(" world").ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(*fs_->FileSize(Path("f")), 11u);

  auto reader = fs_->NewReadableFile(Path("f"));
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->Size(), 11u);
  char buf[32];
  auto n = (*reader)->ReadAt(6, buf, sizeof(buf));  // asks past EOF: gets the tail
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::string(buf, *n), "world");
  EXPECT_EQ(*(*reader)->ReadAt(11, buf, sizeof(buf)), 0u);  // exactly at EOF
  EXPECT_EQ(*(*reader)->ReadAt(1000, buf, sizeof(buf)), 0u);
}

TEST_P(FileSystemTest, BinaryDataRoundTrips) {
  std::string data;
  for (int i = 0; i < 70000; ++i) data.push_back(static_cast<char>(i * 7));
  WriteFile(fs_.get(), Path("bin"), data);
  EXPECT_EQ(ReadFile(fs_.get(), Path("bin")), data);
}

TEST_P(FileSystemTest, NewWritableFileTruncates) {
  WriteFile(fs_.get(), Path("f"), "long contents");
  WriteFile(fs_.get(), Path("f"), "new");
  EXPECT_EQ(ReadFile(fs_.get(), Path("f")), "new");
}

TEST_P(FileSystemTest, MissingThingsAreNotFound) {
  EXPECT_EQ(fs_->NewReadableFile(Path("nope")).status().code(), Code::kNotFound);
  EXPECT_EQ(fs_->FileSize(Path("nope")).status().code(), Code::kNotFound);
  EXPECT_EQ(fs_->RemoveFile(Path("nope")).code(), Code::kNotFound);
  EXPECT_EQ(fs_->Rename(Path("nope"), Path("x")).code(), Code::kNotFound);
  EXPECT_EQ(fs_->ListDir(Path("nodir")).status().code(), Code::kNotFound);
  EXPECT_EQ(fs_->NewWritableFile(Path("nodir/f")).status().code(), Code::kNotFound);
  EXPECT_FALSE(fs_->FileExists(Path("nope")));
}

TEST_P(FileSystemTest, ErrorsNameThePath) {
  Status st = fs_->RemoveFile(Path("nope"));
  EXPECT_NE(st.message().find(Path("nope")), std::string::npos) << st.ToString();
}

TEST_P(FileSystemTest, RenameReplacesAtomically) {
  WriteFile(fs_.get(), Path("a"), "old");
  WriteFile(fs_.get(), Path("b"), "new");
  ASSERT_TRUE(fs_->Rename(Path("b"), Path("a")).ok());
  EXPECT_EQ(ReadFile(fs_.get(), Path("a")), "new");
  EXPECT_FALSE(fs_->FileExists(Path("b")));
}

// Identity tells files apart, not names: two handles of one file agree; a
// file renamed over the name (same bytes) is another, while the first handle
// is open.
TEST_P(FileSystemTest, IdentityNamesTheFileNotThePath) {
  WriteFile(fs_.get(), Path("a"), "same");
  auto first = fs_->NewReadableFile(Path("a"));
  auto second = fs_->NewReadableFile(Path("a"));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_FALSE((*first)->Identity().empty());
  EXPECT_EQ((*first)->Identity(), (*second)->Identity());
  WriteFile(fs_.get(), Path("b"), "same");
  ASSERT_TRUE(fs_->Rename(Path("b"), Path("a")).ok());
  auto third = fs_->NewReadableFile(Path("a"));
  ASSERT_TRUE(third.ok());
  EXPECT_NE((*third)->Identity(), (*first)->Identity());
}

TEST_P(FileSystemTest, ListRemoveAndDirs) {
  ASSERT_TRUE(fs_->CreateDirs(Path("x/y/z")).ok());
  ASSERT_TRUE(fs_->CreateDirs(Path("x/y")).ok());  // already there: fine
  WriteFile(fs_.get(), Path("f2"), "2");
  WriteFile(fs_.get(), Path("f1"), "1");
  WriteFile(fs_.get(), Path("x/y/z/deep"), "d");
  EXPECT_EQ(*fs_->ListDir(root_), (std::vector<std::string>{"f1", "f2", "x"}));
  EXPECT_EQ(*fs_->ListDir(Path("x/y/z")), (std::vector<std::string>{"deep"}));

  ASSERT_TRUE(fs_->RemoveFile(Path("f1")).ok());
  EXPECT_EQ(*fs_->ListDir(root_), (std::vector<std::string>{"f2", "x"}));
  EXPECT_TRUE(fs_->FileExists(Path("x/y")));
  EXPECT_TRUE(fs_->SyncDir(Path("x/y/z")).ok());
  EXPECT_FALSE(fs_->CreateDirs(Path("f2/sub")).ok());  // a file is in the way
}

INSTANTIATE_TEST_SUITE_P(All, FileSystemTest, ::testing::Values("posix", "mem"),
                         [](const auto& info) { return info.param; });

TEST(PosixFileSystemTest, DiskFullIsResourceExhausted) {
  // /dev/full fails every write with ENOSPC: the real errno path, end to end.
  auto fs = NewPosixFileSystem();
  auto file = fs->NewWritableFile("/dev/full");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  Status st = (*file)->Append("x");
  EXPECT_EQ(st.code(), Code::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("/dev/full"), std::string::npos);
}

// A long write reaches the disk while it is being written
// (io/write_behind.h): before any Sync, the part of the file more than three
// windows back is neither dirty nor under write-back. Without write-behind
// all of it stays dirty until the final fdatasync (or the kernel's
// background flush, tens of seconds or gigabytes later). Read with
// cachestat(2) (Linux 6.5); skipped where there is none or on tmpfs.
TEST(PosixFileSystemTest, LongWritesAreWrittenBehind) {
  ScratchDir scratch("/var/tmp");
  ASSERT_FALSE(scratch.path.empty());
  const std::string& dir = scratch.path;
  if (scratch.fs_type == TMPFS_MAGIC) GTEST_SKIP() << dir << " is tmpfs: nothing to write back";

  auto fs = NewPosixFileSystem();
  const std::string path = dir + "/long";
  auto file = fs->NewWritableFile(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const uint64_t w = WriteBehind::kWindowBytes;
  std::string chunk((1 << 20) + 4097, 'w');  // appends that straddle pages and windows
  uint64_t total = 0;
  while (total < 6 * w) {
    ASSERT_TRUE((*file)->Append(chunk).ok());
    total += chunk.size();
  }

  const uint64_t back = total - 3 * w;
  CacheStat cs = CacheStatOf(path, 0, back);
  if (cs.error == ENOSYS) GTEST_SKIP() << "no cachestat(2) on this kernel";
  ASSERT_EQ(cs.error, 0) << std::strerror(cs.error);
  EXPECT_EQ(cs.nr_dirty, 0u) << "pages of the first " << back << " bytes still dirty";
  EXPECT_EQ(cs.nr_writeback, 0u) << "pages of the first " << back << " bytes in flight";

  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ(std::filesystem::file_size(path), total);
}

// A bulk file (an object's data) writes everything past its first 8 MiB with
// O_DIRECT: those bytes are in the file after Sync, and none of them passed
// through the page cache; the first 8 MiB and the partial last block did.
// Appends of odd sizes straddle pages and chunks.
TEST(PosixFileSystemTest, BulkFilesWriteTheirBulkAroundThePageCache) {
  ScratchDir scratch("/var/tmp");
  ASSERT_FALSE(scratch.path.empty());
  const std::string& dir = scratch.path;
  // Where O_DIRECT really bypasses the cache (btrfs with compression, ZFS,
  // ext4 data=journal write through it; overlayfs reports no pages at all).
  constexpr long kXfsMagic = 0x58465342;
  if (scratch.fs_type != EXT4_SUPER_MAGIC && scratch.fs_type != kXfsMagic) {
    GTEST_SKIP() << dir << " is not ext4 or XFS";
  }

  auto fs = NewPosixFileSystem({.direct_bulk_writes = true});
  const std::string path = dir + "/bulk";
  const uint64_t head = 8u << 20;
  const std::string data = SeededBytes(head + 11 * (1u << 20) + 4099, 5);
  auto file = fs->NewBulkWritableFile(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  for (size_t off = 0; off < data.size(); off += (1 << 20) + 4097) {
    ASSERT_TRUE((*file)->Append(std::string_view(data).substr(off, (1 << 20) + 4097)).ok());
  }
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());

  const uint64_t aligned_end = data.size() / 4096 * 4096;
  CacheStat direct = CacheStatOf(path, head, aligned_end - head);
  if (direct.error != 0) GTEST_SKIP() << "no cachestat(2) here: " << std::strerror(direct.error);
  EXPECT_EQ(direct.nr_cache, 0u) << "pages past 8 MiB went through the page cache";
  EXPECT_EQ(CacheStatOf(path, 0, head).nr_cache, head / 4096)
      << "the first 8 MiB are written (and stay) cached";
  EXPECT_EQ(CacheStatOf(path, aligned_end, 4096).nr_cache, 1u) << "the partial last block is cached";
  EXPECT_TRUE(ReadFile(fs.get(), path) == data) << "the file's bytes differ";

  // Switched off (the server's default): the same file goes whole through the cache.
  auto plain_fs = NewPosixFileSystem();
  const std::string plain = dir + "/plain";
  auto pf = plain_fs->NewBulkWritableFile(plain);
  ASSERT_TRUE(pf.ok()) << pf.status().ToString();
  ASSERT_TRUE((*pf)->Append(data).ok());
  ASSERT_TRUE((*pf)->Sync().ok());
  ASSERT_TRUE((*pf)->Close().ok());
  EXPECT_EQ(CacheStatOf(plain, head, aligned_end - head).nr_cache, (aligned_end - head) / 4096);
}

// Appending after a Sync goes on where the file ends (through the page
// cache), and a bulk file on a file system without O_DIRECT (tmpfs) is
// written whole through the page cache.
TEST(PosixFileSystemTest, BulkFilesAppendAfterSyncAndFallBackWithoutODirect) {
  for (std::string base : {"/var/tmp", "/dev/shm"}) {
    SCOPED_TRACE(base);
    if (!std::filesystem::is_directory(base)) continue;
    ScratchDir scratch(base);
    if (scratch.path.empty()) continue;  // not writable here
    const std::string& tmpl = scratch.path;
    auto fs = NewPosixFileSystem({.direct_bulk_writes = true});
    const std::string path = tmpl + "/bulk";
    const std::string a = SeededBytes((9u << 20) + 1, 1), b = SeededBytes((3u << 20) + 77, 2);
    auto file = fs->NewBulkWritableFile(path);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    ASSERT_TRUE((*file)->Append(a).ok());
    ASSERT_TRUE((*file)->Sync().ok());
    ASSERT_TRUE((*file)->Append(b).ok());
    ASSERT_TRUE((*file)->Sync().ok());
    ASSERT_TRUE((*file)->Close().ok());
    EXPECT_TRUE(ReadFile(fs.get(), path) == a + b) << "the file's bytes differ";
  }
}

// A bulk file closed without a Sync still holds every byte appended (what was
// staged for a direct write is written at Close).
TEST(PosixFileSystemTest, BulkFilesClosedWithoutSyncHoldEveryByte) {
  ScratchDir scratch("/var/tmp");
  ASSERT_FALSE(scratch.path.empty());
  const std::string& dir = scratch.path;
  auto fs = NewPosixFileSystem({.direct_bulk_writes = true});
  const std::string path = dir + "/bulk";
  const std::string data = SeededBytes((13u << 20) + 5, 3);
  auto file = fs->NewBulkWritableFile(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_TRUE((*file)->Append(data).ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_TRUE(ReadFile(fs.get(), path) == data) << "the file's bytes differ";
}

// A direct write that fails (here: past RLIMIT_FSIZE, EFBIG) fails the file
// for good: Sync and Close report it every time, and nothing appended after
// goes on past the hole it left.
TEST(PosixFileSystemTest, AFailedDirectWriteFailsTheFileForGood) {
  ScratchDir scratch("/var/tmp");
  ASSERT_FALSE(scratch.path.empty());
  const std::string& dir = scratch.path;
  auto fs = NewPosixFileSystem({.direct_bulk_writes = true});
  const std::string path = dir + "/bulk";
  auto file = fs->NewBulkWritableFile(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  struct rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  struct rlimit small = old;
  small.rlim_cur = 12u << 20;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string data = SeededBytes(20u << 20, 4);
  Status append = (*file)->Append(data);  // may see the failure already
  Status sync = (*file)->Sync();
  Status again = (*file)->Sync();
  Status more = (*file)->Append("x");
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(append.ok() && sync.ok()) << "a write past the limit went unreported";
  EXPECT_FALSE(again.ok()) << "a second Sync forgot the failure";
  EXPECT_FALSE(more.ok()) << "an Append after the failure was taken";
  EXPECT_FALSE((*file)->Close().ok()) << "Close forgot the failure";
}

// ---- MemFileSystem crash model ----

class MemCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs_->CreateDirs("/d").ok());
    ASSERT_TRUE(fs_->SyncDir("/").ok());  // makes /d itself durable
  }
  std::unique_ptr<MemFileSystem> fs_ = NewMemFileSystem();
};

TEST_F(MemCrashTest, UnsyncedBytesAreDropped) {
  auto file = fs_->NewWritableFile("/d/f");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(fs_->SyncDir("/d").ok());
  ASSERT_TRUE((*file)->Append("abc").ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Append("def").ok());
  EXPECT_EQ(ReadFile(fs_.get(), "/d/f"), "abcdef");
  fs_->SimulateCrash();
  EXPECT_EQ(ReadFile(fs_.get(), "/d/f"), "abc");
  // A handle from before the crash can no longer reach the file.
  ASSERT_TRUE((*file)->Append("late").ok());
  EXPECT_EQ(ReadFile(fs_.get(), "/d/f"), "abc");
}

TEST_F(MemCrashTest, CreateWithoutSyncDirVanishes) {
  WriteFile(fs_.get(), "/d/f", "data");  // data synced, entry not
  fs_->SimulateCrash();
  EXPECT_FALSE(fs_->FileExists("/d/f"));
  EXPECT_TRUE(fs_->FileExists("/d"));  // its parent was synced after it was made
}

TEST_F(MemCrashTest, DirectoryNeedsItsParentSynced) {
  ASSERT_TRUE(fs_->CreateDirs("/d/new/deeper").ok());
  WriteFile(fs_.get(), "/d/new/deeper/f", "x");
  ASSERT_TRUE(fs_->SyncDir("/d/new/deeper").ok());  // the file's entry, not the dirs'
  fs_->SimulateCrash();
  EXPECT_FALSE(fs_->FileExists("/d/new"));  // gone, and everything below it
  EXPECT_FALSE(fs_->FileExists("/d/new/deeper/f"));

  ASSERT_TRUE(fs_->CreateDirs("/d/new/deeper").ok());
  WriteFile(fs_.get(), "/d/new/deeper/f", "x");
  ASSERT_TRUE(fs_->SyncDir("/d/new/deeper").ok());
  ASSERT_TRUE(fs_->SyncDir("/d/new").ok());
  ASSERT_TRUE(fs_->SyncDir("/d").ok());
  fs_->SimulateCrash();
  EXPECT_EQ(ReadFile(fs_.get(), "/d/new/deeper/f"), "x");
}

TEST_F(MemCrashTest, SyncedEntryWithUnsyncedDataSurvivesEmpty) {
  auto file = fs_->NewWritableFile("/d/f");
  ASSERT_TRUE((*file)->Append("data").ok());
  ASSERT_TRUE(fs_->SyncDir("/d").ok());
  fs_->SimulateCrash();
  EXPECT_EQ(ReadFile(fs_.get(), "/d/f"), "");
}

TEST_F(MemCrashTest, RenameIsUndoneUntilSyncDir) {
  WriteFile(fs_.get(), "/d/tmp", "v1");
  ASSERT_TRUE(fs_->SyncDir("/d").ok());
  ASSERT_TRUE(fs_->Rename("/d/tmp", "/d/final").ok());
  fs_->SimulateCrash();
  EXPECT_EQ(ReadFile(fs_.get(), "/d/tmp"), "v1");
  EXPECT_FALSE(fs_->FileExists("/d/final"));

  ASSERT_TRUE(fs_->Rename("/d/tmp", "/d/final").ok());
  ASSERT_TRUE(fs_->SyncDir("/d").ok());
  fs_->SimulateCrash();
  EXPECT_FALSE(fs_->FileExists("/d/tmp"));
  EXPECT_EQ(ReadFile(fs_.get(), "/d/final"), "v1");
}

TEST_F(MemCrashTest, RemoveIsUndoneUntilSyncDir) {
  WriteFile(fs_.get(), "/d/f", "keep");
  ASSERT_TRUE(fs_->SyncDir("/d").ok());
  ASSERT_TRUE(fs_->RemoveFile("/d/f").ok());
  fs_->SimulateCrash();
  EXPECT_EQ(ReadFile(fs_.get(), "/d/f"), "keep");
  ASSERT_TRUE(fs_->RemoveFile("/d/f").ok());
  ASSERT_TRUE(fs_->SyncDir("/d").ok());
  fs_->SimulateCrash();
  EXPECT_FALSE(fs_->FileExists("/d/f"));
}

TEST_F(MemCrashTest, SyncDirCoversOnlyItsDirectory) {
  ASSERT_TRUE(fs_->CreateDirs("/e").ok());
  WriteFile(fs_.get(), "/d/f", "x");
  WriteFile(fs_.get(), "/e/g", "y");
  ASSERT_TRUE(fs_->SyncDir("/d").ok());
  fs_->SimulateCrash();
  EXPECT_TRUE(fs_->FileExists("/d/f"));
  EXPECT_FALSE(fs_->FileExists("/e/g"));
}

// ---- FaultFileSystem ----

class FaultFsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fs_.CreateDirs("/d").ok()); }
  std::unique_ptr<WritableFile> Open(const std::string& path) {
    auto file = fs_.NewWritableFile(path);
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    return file.ok() ? std::move(file).value() : nullptr;
  }
  std::unique_ptr<MemFileSystem> base_ = NewMemFileSystem();
  FaultFileSystem fs_{base_.get()};
};

TEST_F(FaultFsTest, EioOnAppendMatchesPathSubstring) {
  fs_.AddRule(
      {.op = FaultOp::kAppend, .path_substring = "shard", .error = ErrnoStatus(EIO, "injected")});
  auto hit = Open("/d/shard.1");
  auto miss = Open("/d/other");
  EXPECT_EQ(hit->Append("x").code(), Code::kIOError);
  EXPECT_TRUE(miss->Append("x").ok());
  EXPECT_EQ(fs_.faults_injected(), 1);
  EXPECT_EQ(*fs_.FileSize("/d/shard.1"), 0u);  // nothing landed: not a torn write
}

TEST_F(FaultFsTest, EioOnSync) {
  fs_.AddRule({.op = FaultOp::kSync, .path_substring = "", .error = ErrnoStatus(EIO, "inj")});
  auto file = Open("/d/f");
  ASSERT_TRUE(file->Append("x").ok());
  EXPECT_EQ(file->Sync().code(), Code::kIOError);
}

TEST_F(FaultFsTest, EnospcIsResourceExhausted) {
  fs_.AddRule({.op = FaultOp::kAppend, .path_substring = "", .error = ErrnoStatus(ENOSPC, "inj")});
  EXPECT_EQ(Open("/d/f")->Append("x").code(), Code::kResourceExhausted);
}

TEST_F(FaultFsTest, TornWriteLeavesExactlyNBytes) {
  auto file = Open("/d/f");
  ASSERT_TRUE(file->Append("xy").ok());
  fs_.AddRule({.op = FaultOp::kAppend,
               .path_substring = "/d/f",
               .error = ErrnoStatus(EIO, "inj"),
               .torn_bytes = 3});
  EXPECT_EQ(file->Append("abcdef").code(), Code::kIOError);
  EXPECT_EQ(*fs_.FileSize("/d/f"), 5u);
  EXPECT_EQ(ReadFile(&fs_, "/d/f"), "xyabc");
}

TEST_F(FaultFsTest, SkipThenTimes) {
  fs_.AddRule({.op = FaultOp::kAppend,
               .path_substring = "",
               .error = ErrnoStatus(EIO, "inj"),
               .skip = 2,
               .times = 1});
  auto file = Open("/d/f");
  EXPECT_TRUE(file->Append("1").ok());
  EXPECT_TRUE(file->Append("2").ok());
  EXPECT_FALSE(file->Append("3").ok());
  EXPECT_TRUE(file->Append("4").ok());
  EXPECT_EQ(fs_.faults_injected(), 1);
  EXPECT_EQ(ReadFile(&fs_, "/d/f"), "124");
}

TEST_F(FaultFsTest, NamespaceOpsAndReads) {
  WriteFile(&fs_, "/d/tmp.1", "data");
  fs_.AddRule({.op = FaultOp::kRename,
               .path_substring = "final",
               .error = ErrnoStatus(EIO, "inj"),
               .times = 1});
  fs_.AddRule(
      {.op = FaultOp::kRead, .path_substring = "", .error = ErrnoStatus(EIO, "inj"), .times = 1});
  fs_.AddRule({.op = FaultOp::kSyncDir, .path_substring = "", .error = ErrnoStatus(EIO, "inj")});
  fs_.AddRule({.op = FaultOp::kCreate, .path_substring = "new", .error = ErrnoStatus(EIO, "inj")});
  EXPECT_FALSE(fs_.Rename("/d/tmp.1", "/d/final").ok());  // matched by the target path
  EXPECT_TRUE(fs_.Rename("/d/tmp.1", "/d/final").ok());   // times = 1: used up
  EXPECT_FALSE(fs_.SyncDir("/d").ok());
  EXPECT_FALSE(fs_.NewWritableFile("/d/new").ok());
  EXPECT_EQ(ReadFile(&fs_, "/d/final"), "<IOError: inj: Input/output error>");
  EXPECT_EQ(ReadFile(&fs_, "/d/final"), "data");

  fs_.ClearRules();
  EXPECT_TRUE(fs_.SyncDir("/d").ok());
  EXPECT_EQ(fs_.faults_injected(), 4);
}

}  // namespace
}  // namespace strata::io

namespace strata::io {
namespace {

TEST(CreateDirsDurablyTest, NewChainSurvivesPowerLoss) {
  auto fs = NewMemFileSystem();
  ASSERT_TRUE(CreateDirsDurably(fs.get(), "/a/b/c").ok());
  ASSERT_TRUE(CreateDirsDurably(fs.get(), "/a/b/c").ok());  // existing: nothing to do
  ASSERT_TRUE(fs->CreateDirs("/a/plain").ok());              // for contrast
  fs->SimulateCrash();
  EXPECT_TRUE(fs->FileExists("/a/b/c"));
  EXPECT_FALSE(fs->FileExists("/a/plain"));
}

}  // namespace
}  // namespace strata::io

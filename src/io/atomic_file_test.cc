#include "io/atomic_file.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "io/fault_fs.h"
#include "io/mem_fs.h"

namespace strata::io {
namespace {

std::string ReadAll(FileSystem* fs, const std::string& path) {
  auto file = fs->NewReadableFile(path);
  if (!file.ok()) return "<" + std::string(CodeName(file.status().code())) + ">";
  std::string out((*file)->Size(), '\0');
  auto n = (*file)->ReadAt(0, out.data(), out.size());
  if (!n.ok()) return "<read error>";
  out.resize(*n);
  return out;
}

// The helper over mem_fs's crash model (what a power loss keeps: synced
// bytes, and directory entries as of the last SyncDir), with faults injected
// by fault_fs at each step of the sequence.
class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs_.CreateDirs("/d").ok());
    ASSERT_TRUE(fs_.SyncDir("/").ok());  // /d itself is durable
  }
  // A durable "/d/f" = "old".
  void WriteOld() {
    ASSERT_TRUE(WriteFileAtomically(&fs_, "/d/f", "old").ok());
    mem_->SimulateCrash();
    ASSERT_EQ(ReadAll(&fs_, "/d/f"), "old");
  }
  void ExpectNoTemp() { EXPECT_FALSE(fs_.FileExists("/d/f.tmp")); }

  std::unique_ptr<MemFileSystem> mem_ = NewMemFileSystem();
  FaultFileSystem fs_{mem_.get()};
};

TEST_F(AtomicFileTest, CrashAfterTheDirSyncKeepsTheFile) {
  ASSERT_TRUE(WriteFileAtomically(&fs_, "/d/f", "new bytes").ok());
  ExpectNoTemp();
  mem_->SimulateCrash();
  EXPECT_EQ(ReadAll(&fs_, "/d/f"), "new bytes");
  ExpectNoTemp();
}

TEST_F(AtomicFileTest, ReplacingIsDurableOnceItReturns) {
  WriteOld();
  ASSERT_TRUE(WriteFileAtomically(&fs_, "/d/f", "new").ok());
  mem_->SimulateCrash();
  EXPECT_EQ(ReadAll(&fs_, "/d/f"), "new");
}

TEST_F(AtomicFileTest, CrashBeforeTheDirSyncLosesTheFile) {
  // The rename happened, the directory sync failed: the new name is visible
  // but not durable, and the call says so.
  fs_.AddRule({.op = FaultOp::kSyncDir, .path_substring = "/d", .error = ErrnoStatus(EIO, "inj")});
  Status st = WriteFileAtomically(&fs_, "/d/f", "new");
  EXPECT_EQ(st.code(), Code::kIOError) << st.ToString();
  EXPECT_EQ(ReadAll(&fs_, "/d/f"), "new");
  ExpectNoTemp();
  mem_->SimulateCrash();
  EXPECT_FALSE(fs_.FileExists("/d/f"));  // lost, and nothing half-written instead
  ExpectNoTemp();
}

TEST_F(AtomicFileTest, CrashBeforeTheDirSyncOfAReplacementKeepsTheOldFile) {
  WriteOld();
  fs_.AddRule({.op = FaultOp::kSyncDir, .path_substring = "/d", .error = ErrnoStatus(EIO, "inj")});
  EXPECT_FALSE(WriteFileAtomically(&fs_, "/d/f", "new").ok());
  mem_->SimulateCrash();
  EXPECT_EQ(ReadAll(&fs_, "/d/f"), "old");  // the rename is undone: old, never a mixture
  ExpectNoTemp();
}

TEST_F(AtomicFileTest, FailuresBeforeTheRenameLeaveTheOldFileAndNoTemp) {
  WriteOld();
  const FaultRule rules[] = {
      {.op = FaultOp::kCreate, .path_substring = ".tmp", .error = ErrnoStatus(EIO, "inj")},
      {.op = FaultOp::kAppend, .path_substring = ".tmp", .error = ErrnoStatus(ENOSPC, "inj"),
       .torn_bytes = 1},
      {.op = FaultOp::kSync, .path_substring = ".tmp", .error = ErrnoStatus(EIO, "inj")},
      {.op = FaultOp::kClose, .path_substring = ".tmp", .error = ErrnoStatus(EIO, "inj")},
      {.op = FaultOp::kRename, .path_substring = ".tmp", .error = ErrnoStatus(EIO, "inj")},
  };
  for (const FaultRule& rule : rules) {
    fs_.ClearRules();
    fs_.AddRule(rule);
    Status st = WriteFileAtomically(&fs_, "/d/f", "new");
    EXPECT_FALSE(st.ok()) << static_cast<int>(rule.op);
    EXPECT_EQ(ReadAll(&fs_, "/d/f"), "old") << static_cast<int>(rule.op);
    ExpectNoTemp();
    mem_->SimulateCrash();
    EXPECT_EQ(ReadAll(&fs_, "/d/f"), "old") << static_cast<int>(rule.op);
  }
}

TEST_F(AtomicFileTest, PublishFileTellsWhetherTheRenameHappened) {
  auto file = fs_.NewWritableFile("/d/t");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("x").ok());
  ASSERT_TRUE(SyncAndClose(file->get()).ok());
  bool renamed = true;
  EXPECT_EQ(PublishFile(&fs_, "/d/missing", "/d/g", &renamed).code(), Code::kNotFound);
  EXPECT_FALSE(renamed);
  fs_.AddRule({.op = FaultOp::kSyncDir, .path_substring = "/d", .error = ErrnoStatus(EIO, "inj"),
               .times = 1});
  EXPECT_FALSE(PublishFile(&fs_, "/d/t", "/d/g", &renamed).ok());
  EXPECT_TRUE(renamed);
  EXPECT_EQ(ReadAll(&fs_, "/d/g"), "x");
  EXPECT_EQ(DirName("/a/b/c"), "/a/b");
  EXPECT_EQ(DirName("c"), "");
}

TEST_F(AtomicFileTest, SyncAndCloseClosesEvenWhenTheSyncFails) {
  fs_.AddRule({.op = FaultOp::kSync, .path_substring = "", .error = ErrnoStatus(EIO, "inj")});
  auto file = fs_.NewWritableFile("/d/s");
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE((*file)->Append("x").ok());
  EXPECT_EQ(SyncAndClose(file->get()).code(), Code::kIOError);
  EXPECT_FALSE((*file)->Append("y").ok());  // closed
}

}  // namespace
}  // namespace strata::io

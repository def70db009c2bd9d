#include "storage/plain_store.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "io/file_system.h"
#include "io/mem_fs.h"

namespace strata::storage {
namespace {

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 131 + i / 7);
  return s;
}

class PlainStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = OpenPlainDataStore(fs_.get(), "/data");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  void Write(const std::string& id, const std::string& data, size_t piece) {
    auto w = store_->Create(id, {});
    ASSERT_TRUE(w.ok());
    for (size_t off = 0; off < data.size(); off += piece) {
      ASSERT_TRUE((*w)->Append(std::string_view(data).substr(off, piece)).ok());
    }
    ASSERT_TRUE((*w)->Finish("").ok());
  }
  // Reads [offset, offset + n) in reads of at most `step` bytes.
  Result<std::string> Read(const std::string& id, uint64_t size, uint64_t offset, size_t n,
                           size_t step) {
    ASSIGN_OR_RETURN(auto r, store_->Open(id, size));
    std::string out;
    std::string buf(step, '\0');
    while (out.size() < n) {
      ASSIGN_OR_RETURN(size_t got, r->ReadAt(offset + out.size(), buf.data(),
                                             std::min(step, n - out.size())));
      if (got == 0) break;
      out.append(buf.data(), got);
    }
    return out;
  }
  void FlipByte(const std::string& path, uint64_t at) {
    auto f = fs_->NewReadableFile(path);
    std::string all(f.value()->Size(), '\0');
    ASSERT_TRUE(f.value()->ReadAt(0, all.data(), all.size()).ok());
    all[at] ^= 0x10;
    auto w = fs_->NewWritableFile(path);
    ASSERT_TRUE((*w)->Append(all).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  static std::string PathOf(const std::string& id) { return "/data/objects/" + id.substr(0, 2) + "/" + id; }

  std::unique_ptr<io::MemFileSystem> fs_ = io::NewMemFileSystem();
  std::unique_ptr<DataStore> store_;
};

TEST_F(PlainStoreTest, RoundTripsEverySizeAndRange) {
  const size_t kB = 64 * 1024;
  int n = 0;
  for (size_t size : {size_t{0}, size_t{1}, kB - 1, kB, kB + 1, 3 * kB + 17}) {
    std::string id = "ab" + std::to_string(n++);
    std::string data = Pattern(size);
    Write(id, data, 1000);
    EXPECT_EQ(*Read(id, size, 0, size, 1 << 20), data) << size;  // aligned, whole blocks
    EXPECT_EQ(*Read(id, size, 0, size, 777), data) << size;      // through the block cache
    for (uint64_t off : {uint64_t{1}, uint64_t{kB - 1}, uint64_t{kB}, uint64_t{kB + 5}}) {
      if (off >= size) continue;
      EXPECT_EQ(*Read(id, size, off, size - off, 4096), data.substr(off)) << size << "@" << off;
    }
  }
}

TEST_F(PlainStoreTest, FlippedBitFailsTheReadInsteadOfServingIt) {
  std::string data = Pattern(200 * 1024);
  for (uint64_t at : {uint64_t{0}, uint64_t{70000}, uint64_t{200 * 1024 - 1}}) {
    std::string id = "cd" + std::to_string(at);
    Write(id, data, 65536);
    FlipByte(PathOf(id), at);
    auto whole = Read(id, data.size(), 0, data.size(), 1 << 20);
    EXPECT_EQ(whole.status().code(), Code::kCorruption) << at;
    auto small = Read(id, data.size(), at, 1, 1);  // an 8-byte-probe-like read
    EXPECT_EQ(small.status().code(), Code::kCorruption) << at;
  }
}

TEST_F(PlainStoreTest, DamagedFooterOrTableIsRefused) {
  std::string data = Pattern(100 * 1024);
  Write("ef1", data, 4096);
  FlipByte(PathOf("ef1"), data.size() + 2);  // inside the CRC table
  EXPECT_EQ(store_->Open("ef1", data.size()).status().code(), Code::kCorruption);
  Write("ef2", data, 4096);
  EXPECT_EQ(store_->Open("ef2", data.size() + 1).status().code(), Code::kCorruption);
}

TEST_F(PlainStoreTest, LegacyFileWithoutFooterIsStillRead) {
  std::string data = Pattern(150 * 1024);
  auto w = fs_->NewWritableFile(PathOf("0a-legacy"));
  ASSERT_TRUE((*w)->Append(data).ok());
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_EQ(*Read("0a-legacy", data.size(), 0, data.size(), 65536), data);
}

// Check: the blocks under a range are verified and the caller learns how far
// the checked bytes reach, so it may send them from UnverifiedFd().
class PlainStoreCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/strata-plaincheck-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto s = OpenPlainDataStore(fs_.get(), dir_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(s).value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& id, const std::string& data) {
    auto w = store_->Create(id, {});
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(data).ok());
    ASSERT_TRUE((*w)->Finish("").ok());
  }
  std::string PathOf(const std::string& id) const {
    return dir_ + "/objects/" + id.substr(0, 2) + "/" + id;
  }
  std::unique_ptr<io::FileSystem> fs_ = io::NewPosixFileSystem();
  // Through a scratch of two blocks: reads of 128 KiB.
  Result<size_t> Check(DataReader& r, uint64_t offset, size_t n) {
    return r.Check(offset, n, scratch_.data(), scratch_.size());
  }
  std::string scratch_ = std::string(128 * 1024, '\0');
  std::string dir_;
  std::unique_ptr<DataStore> store_;
};

TEST_F(PlainStoreCheckTest, ChecksWholeBlocksAndSaysHowFarTheyReach) {
  const uint64_t kB = 64 * 1024;
  const std::string data = Pattern(5 * kB + 1000);
  Write("ab1", data);
  auto r = store_->Open("ab1", data.size());
  ASSERT_TRUE(r.ok());
  const int fd = (*r)->UnverifiedFd();
  ASSERT_GE(fd, 0);
  struct Case { uint64_t offset, n, want; };
  for (const Case& c : {Case{0, 1, kB}, Case{0, kB, kB}, Case{0, kB + 1, 2 * kB},
                        Case{kB + 5, 10, kB - 5}, Case{kB - 1, 2, kB + 1},
                        Case{5 * kB, 1, 1000}, Case{5 * kB + 999, 50, 1},
                        Case{0, 1 << 30, data.size()}, Case{data.size(), 10, 0}}) {
    auto got = Check(**r, c.offset, c.n);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, c.want) << c.offset << "+" << c.n;
    std::string bytes(*got, '\0');
    ASSERT_EQ(::pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(c.offset)),
              static_cast<ssize_t>(bytes.size()));
    EXPECT_EQ(bytes, data.substr(c.offset, *got)) << "the descriptor holds the data as stored";
  }
}

TEST_F(PlainStoreCheckTest, AFlippedBitFailsTheCheckOfItsBlockOnly) {
  const uint64_t kB = 64 * 1024;
  const std::string data = Pattern(4 * kB);
  Write("cd1", data);
  {
    std::string path = PathOf("cd1");
    FILE* f = std::fopen(path.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fseek(f, static_cast<long>(2 * kB + 3), SEEK_SET);
    char c = static_cast<char>(data[2 * kB + 3] ^ 0x01);
    std::fwrite(&c, 1, 1, f);
    std::fclose(f);
  }
  auto r = store_->Open("cd1", data.size());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Check(**r, 2 * kB + 100, 1).status().code(), Code::kCorruption);
  EXPECT_EQ(Check(**r, 0, 4 * kB).status().code(), Code::kCorruption);
  EXPECT_TRUE(Check(**r, kB + 7, kB - 7).ok()) << "ends exactly where the bad block starts";
  EXPECT_EQ(Check(**r, kB + 7, kB - 6).status().code(), Code::kCorruption);
  EXPECT_TRUE(Check(**r, 3 * kB, kB).ok());
}

TEST_F(PlainStoreTest, CheckNeedsADescriptorToSendFrom) {
  Write("ef9", Pattern(100 * 1024), 4096);
  auto r = store_->Open("ef9", 100 * 1024);
  ASSERT_TRUE(r.ok());
  EXPECT_LT((*r)->UnverifiedFd(), 0);  // memory files have none
  char scratch[64 * 1024];
  EXPECT_EQ((*r)->Check(0, 10, scratch, sizeof(scratch)).status().code(), Code::kNotImplemented);
}

}  // namespace
}  // namespace strata::storage

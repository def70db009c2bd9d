#include "object/check_ahead.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <vector>
#include <string>

#include "io/file_system.h"
#include "io/forwarding_fs_test_util.h"
#include "common/thread_count_test_util.h"
#include "meta/kv_store.h"
#include "object/plain_engine_test_util.h"

namespace strata::object {
namespace {

// The real file system, whose reads throw std::bad_alloc while `throwing`
// is set (an allocation failing inside the read); files keep their
// descriptors, so spans can be sent from them.
class ThrowingFileSystem : public io::ForwardingFs {
 public:
  ThrowingFileSystem() : ForwardingFs(posix_.get()) {}
  std::atomic<bool> throwing{false};

  Result<std::unique_ptr<io::ReadableFile>> NewReadableFile(const std::string& path) override {
    ASSIGN_OR_RETURN(std::unique_ptr<io::ReadableFile> f, ForwardingFs::NewReadableFile(path));
    return std::unique_ptr<io::ReadableFile>(new File(this, std::move(f)));
  }

 private:
  class File : public io::ReadableFile {
   public:
    File(ThrowingFileSystem* fs, std::unique_ptr<io::ReadableFile> base)
        : fs_(fs), base_(std::move(base)) {}
    Result<size_t> ReadAt(uint64_t offset, char* buf, size_t n) const override {
      if (fs_->throwing.load()) throw std::bad_alloc();
      return base_->ReadAt(offset, buf, n);
    }
    uint64_t Size() const override { return base_->Size(); }
    int NativeFd() const override { return base_->NativeFd(); }
    std::string Identity() const override { return base_->Identity(); }

   private:
    ThrowingFileSystem* fs_;
    std::unique_ptr<io::ReadableFile> base_;
  };
  static inline std::unique_ptr<io::FileSystem> posix_ = io::NewPosixFileSystem();
};

// An engine over a plain store on the real file system: its data files have
// descriptors to send from.
class CheckAheadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/strata-checkahead-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    OpenPlainEngine(fs_.get(), dir_, kv_.get(), &store_, &engine_);
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string Put(const std::string& key, size_t n) {
    std::string data(n, '\0');
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<char>((i * 7919) >> 5);
    auto w = engine_->NewWriter("b", key, {}, {});
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->Append(data).ok());
    EXPECT_TRUE((*w)->Commit().ok());
    return data;
  }
  // What a consumer sending every span would send.
  static std::string Drain(CheckAhead& a, Status* failed = nullptr) {
    std::string out;
    while (true) {
      auto span = a.Next();
      if (!span.ok()) {
        if (failed) *failed = span.status();
        return out;
      }
      if (span->length == 0) return out;
      std::string bytes(span->length, '\0');
      EXPECT_EQ(::pread(span->fd, bytes.data(), bytes.size(), static_cast<off_t>(span->offset)),
                static_cast<ssize_t>(bytes.size()));
      out += bytes;
    }
  }
  std::string OnlyDataFile() const {
    std::string found;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir_ + "/objects")) {
      if (e.is_regular_file()) found = e.path();
    }
    return found;
  }

  std::unique_ptr<ThrowingFileSystem> fs_ = std::make_unique<ThrowingFileSystem>();
  std::unique_ptr<meta::KvStore> kv_ = meta::NewMemStore();
  std::string dir_;
  std::unique_ptr<storage::DataStore> store_;
  std::unique_ptr<ObjectEngine> engine_;
};

TEST_F(CheckAheadTest, SpansCoverTheRangeInOrder) {
  const uint64_t kSpan = CheckAhead::kSpanBytes;
  const std::string data = Put("k", 5 * kSpan + 12345);
  auto reader = engine_->OpenObject("b", "k");
  ASSERT_TRUE(reader.ok());
  for (auto [from, to] : {std::pair<uint64_t, uint64_t>{0, data.size()}, {77, data.size() - 5},
                          {kSpan - 3, 3 * kSpan + 1}, {kSpan, kSpan + 1}, {9, 9}}) {
    CheckAhead ahead(**reader, from, to);
    EXPECT_EQ(ahead.threaded(), to - from > kSpan);
    EXPECT_TRUE(Drain(ahead) == data.substr(from, to - from)) << from << ".." << to;
    auto after = ahead.Next();  // stays done
    ASSERT_TRUE(after.ok());
    EXPECT_EQ(after->length, 0u);
  }
}

TEST_F(CheckAheadTest, ABadBlockEndsTheRangeBeforeItsSpan) {
  const uint64_t kSpan = CheckAhead::kSpanBytes;
  const std::string data = Put("rot", 4 * kSpan);
  const uint64_t bad = 2 * kSpan + kSpan / 2;
  {
    FILE* f = std::fopen(OnlyDataFile().c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fseek(f, static_cast<long>(bad), SEEK_SET);
    char c = static_cast<char>(data[bad] ^ 0x40);
    std::fwrite(&c, 1, 1, f);
    std::fclose(f);
  }
  auto reader = engine_->OpenObject("b", "rot");
  ASSERT_TRUE(reader.ok());
  // Threaded (the whole object, and from just before the bad block), and on
  // this thread (a range of one span or less).
  for (auto [from, to] : {std::pair<uint64_t, uint64_t>{0, data.size()}, {bad - 100, data.size()},
                          {bad - 100, bad + 1000}}) {
    CheckAhead ahead(**reader, from, to);
    EXPECT_EQ(ahead.threaded(), to - from > kSpan);
    Status failed;
    std::string got = Drain(ahead, &failed);
    EXPECT_EQ(failed.code(), Code::kCorruption) << from;
    EXPECT_LE(from + got.size(), bad - bad % (64 << 10)) << "bytes of the bad block were handed out";
    EXPECT_TRUE(got == data.substr(from, got.size()));
    EXPECT_FALSE(ahead.Next().ok());  // stays failed
  }
}

TEST_F(CheckAheadTest, AConsumerThatStopsEarlyJoinsTheHelper) {
  const std::string data = Put("big", 8 * CheckAhead::kSpanBytes);
  auto reader = engine_->OpenObject("b", "big");
  ASSERT_TRUE(reader.ok());
  CheckAhead ahead(**reader, 0, data.size());
  auto first = ahead.Next();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->length, CheckAhead::kSpanBytes);
}  // destroyed mid-range with the helper waiting for room: it stops and is joined


// An allocation failing inside a check's read ends the range with an error,
// on a bulk thread and on the consumer's: before, a bulk thread's task threw
// and the process ended.
TEST_F(CheckAheadTest, AnExceptionInACheckEndsTheRangeWithAnError) {
  const std::string data = Put("big", 3 * CheckAhead::kSpanBytes);
  auto reader = engine_->OpenObject("b", "big");
  ASSERT_TRUE(reader.ok());
  fs_->throwing = true;
  for (uint64_t to : {data.size(), uint64_t{100}}) {
    CheckAhead ahead(**reader, 0, to);
    EXPECT_EQ(ahead.threaded(), to == data.size());
    Status failed;
    EXPECT_EQ(Drain(ahead, &failed), "") << to;
    EXPECT_EQ(failed.code(), Code::kUnavailable) << to;
    EXPECT_FALSE(ahead.Next().ok()) << to;  // stays failed
  }
  fs_->throwing = false;
  CheckAhead after(**reader, 0, data.size());  // and nothing is left stuck
  EXPECT_TRUE(Drain(after) == data);
}

TEST_F(CheckAheadTest, ManyRangesShareTheBulkThreadsSpanBySpan) {
  const uint64_t kSpan = CheckAhead::kSpanBytes;
  const std::string data = Put("big", 6 * kSpan + 12345);
  auto reader = engine_->OpenObject("b", "big");
  ASSERT_TRUE(reader.ok());
  {  // dropped at once, their first steps still queued: those do nothing
    std::vector<std::unique_ptr<CheckAhead>> dropped;
    for (int i = 0; i < 40; ++i) dropped.push_back(std::make_unique<CheckAhead>(**reader, 0, data.size()));
  }
  const int before = ThreadsNow();
  constexpr int kRanges = 40;  // many more than the bulk threads
  std::vector<std::unique_ptr<ObjectReader>> readers;  // one each: a reader is not thread-safe
  std::vector<std::unique_ptr<CheckAhead>> ranges;
  std::vector<std::string> got(kRanges);
  for (int i = 0; i < kRanges; ++i) {
    auto r = engine_->OpenObject("b", "big");
    ASSERT_TRUE(r.ok());
    readers.push_back(std::move(*r));
    const uint64_t from = (i * 4099) % kSpan;
    ranges.push_back(std::make_unique<CheckAhead>(*readers.back(), from, data.size()));
    ASSERT_TRUE(ranges.back()->threaded());
  }
  EXPECT_LE(ThreadsNow(), before) << "a thread started per range";
  // One span from each in turn, as 40 senders sharing the threads would take them.
  for (bool more = true; more;) {
    more = false;
    for (int i = 0; i < kRanges; ++i) {
      auto span = ranges[i]->Next();
      ASSERT_TRUE(span.ok()) << span.status().ToString();
      if (span->length == 0) continue;
      more = true;
      std::string bytes(span->length, '\0');
      ASSERT_EQ(::pread(span->fd, bytes.data(), bytes.size(), static_cast<off_t>(span->offset)),
                static_cast<ssize_t>(bytes.size()));
      got[i] += bytes;
    }
  }
  for (int i = 0; i < kRanges; ++i) {
    EXPECT_TRUE(got[i] == data.substr((i * 4099) % kSpan)) << i;
  }
}

}  // namespace
}  // namespace strata::object

#include "io/direct_writer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/bulk_executor.h"
#include "io/seeded_bytes_test_util.h"

namespace strata::io {
namespace {

constexpr size_t C = DirectWriter::kChunkBytes;
constexpr size_t A = DirectWriter::kAlign;

// A file in memory written through WriteFn: records each call and checks
// what O_DIRECT demands of a direct one.
struct FakeFile {
  std::mutex mu;
  std::string bytes;
  struct Call {
    bool direct;
    size_t n;
    uint64_t offset;
  };
  std::vector<Call> calls;
  int fail_direct_with = 0;   // every direct write answers this errno
  int fail_at_call = -1;      // this call (0-based) answers EIO
  std::atomic<int> in_flight{0}, most_in_flight{0};

  DirectWriter::WriteFn Fn() {
    return [this](bool direct, const char* buf, size_t n, uint64_t offset) {
      int now = ++in_flight;
      int seen = most_in_flight.load();
      while (now > seen && !most_in_flight.compare_exchange_weak(seen, now)) {
      }
      int err = 0;
      {
        std::lock_guard lock(mu);
        const int index = static_cast<int>(calls.size());
        calls.push_back({direct, n, offset});
        if (direct) {
          EXPECT_EQ(reinterpret_cast<uintptr_t>(buf) % A, 0u) << "unaligned buffer";
          EXPECT_EQ(n % A, 0u) << "unaligned length";
          EXPECT_EQ(offset % A, 0u) << "unaligned offset";
          err = fail_direct_with;
        }
        if (index == fail_at_call) err = EIO;
        if (err == 0) {
          if (bytes.size() < offset + n) bytes.resize(offset + n, '\0');
          std::memcpy(bytes.data() + offset, buf, n);
        }
      }
      --in_flight;
      return err;
    };
  }
};

TEST(DirectWriterTest, AnyAppendPatternLandsWholeAndDirectWritesAreAligned) {
  const uint64_t start = 8u << 20;
  for (size_t total : {size_t{0}, size_t{1}, A - 1, A, A + 1, C - 1, C, C + 1, 3 * C + 5,
                       7 * C + A, 10 * C + 12345}) {
    for (size_t piece : {size_t{1000}, size_t{65536}, C - 7, size_t{3 * C}}) {
      SCOPED_TRACE("total " + std::to_string(total) + " piece " + std::to_string(piece));
      FakeFile f;
      std::string data = SeededBytes(total, static_cast<uint32_t>(total + piece));
      {
        DirectWriter w(start, f.Fn());
        for (size_t off = 0; off < total; off += piece) {
          ASSERT_EQ(w.Append(std::string_view(data).substr(off, piece)), 0);
        }
        ASSERT_EQ(w.Finish(), 0);
        EXPECT_EQ(w.end(), start + total);
      }
      ASSERT_EQ(f.bytes.size(), total == 0 ? 0 : start + total);
      if (total > 0) EXPECT_TRUE(f.bytes.substr(start) == data) << "bytes differ";
      size_t direct_bytes = 0, buffered_bytes = 0;
      for (const auto& c : f.calls) (c.direct ? direct_bytes : buffered_bytes) += c.n;
      EXPECT_EQ(direct_bytes, total / A * A) << "every whole block goes direct";
      EXPECT_EQ(buffered_bytes, total % A) << "only the partial last block through the cache";
      EXPECT_LE(f.most_in_flight.load(), static_cast<int>(DirectWriter::kChunks));
    }
  }
}

TEST(DirectWriterTest, AnEinvalFallsBackToThePageCacheForGood) {
  FakeFile f;
  f.fail_direct_with = EINVAL;  // a file system that refuses O_DIRECT's alignment
  std::string data = SeededBytes(12 * C + 100, 7);
  DirectWriter w(0, f.Fn());
  ASSERT_EQ(w.Append(data), 0);
  ASSERT_EQ(w.Finish(), 0);
  EXPECT_FALSE(w.direct());
  EXPECT_TRUE(f.bytes == data);
  int direct_tries = 0;
  for (const auto& c : f.calls) direct_tries += c.direct;
  // The first chunk tried direct, and those already started beside it (at
  // most kChunks at once); none after the first EINVAL came back.
  EXPECT_GE(direct_tries, 1);
  EXPECT_LE(direct_tries, static_cast<int>(DirectWriter::kChunks));
}

TEST(DirectWriterTest, AFailedWriteIsStickyAndReportedByFinish) {
  FakeFile f;
  f.fail_at_call = 1;  // the second chunk's write
  std::string data = SeededBytes(6 * C, 9);
  DirectWriter w(0, f.Fn());
  int first_error = 0;
  for (size_t off = 0; off < data.size(); off += C / 2) {
    int err = w.Append(std::string_view(data).substr(off, C / 2));
    if (err != 0 && first_error == 0) first_error = err;
  }
  EXPECT_EQ(w.Finish(), EIO);
  if (first_error != 0) {
    EXPECT_EQ(first_error, EIO);
  }
  EXPECT_EQ(w.Append("more"), EBADF) << "nothing after Finish";
  EXPECT_EQ(w.Finish(), EIO) << "the failure stays";
}

// A writer used on a bulk thread (a task) writes its chunks there itself:
// waiting for a chunk queued behind the very tasks that wait would deadlock
// once every bulk write thread waited so. More writers than there are bulk
// write threads run as tasks of that pool here; each finishes.
TEST(DirectWriterTest, WritersOnEveryBulkThreadAtOnceFinish) {
  const int n = BulkThreads() + 2;
  struct Shared {  // outlives a test that gave up waiting
    std::mutex mu;
    std::condition_variable cv;
    int done = 0, ok = 0;
    FakeFile files[64];
  };
  ASSERT_LE(n, 64);
  auto s = std::make_shared<Shared>();
  for (int i = 0; i < n; ++i) {
    RunBulkWrite([s, f = &s->files[i]] {
      std::string data = SeededBytes(4 * C + 10, 11);
      DirectWriter w(0, f->Fn());
      bool good = OnBulkThread() && w.Append(data) == 0 && w.Finish() == 0 && f->bytes == data;
      std::lock_guard lock(s->mu);
      ++s->done;
      s->ok += good;
      s->cv.notify_all();
    });
  }
  std::unique_lock lock(s->mu);
  ASSERT_TRUE(s->cv.wait_for(lock, std::chrono::seconds(60), [&] { return s->done == n; }))
      << s->done << " of " << n << " writers finished: the bulk threads deadlocked";
  EXPECT_EQ(s->ok, n);
  EXPECT_FALSE(OnBulkThread());
}

TEST(DirectWriterTest, DestroyedUnfinishedWaitsForItsWrites) {
  FakeFile f;
  std::string data = SeededBytes(5 * C, 3);
  {
    DirectWriter w(0, f.Fn());
    ASSERT_EQ(w.Append(data), 0);
  }  // no Finish: the destructor waits for the chunks in flight
  EXPECT_EQ(f.in_flight.load(), 0);
  std::lock_guard lock(f.mu);
  EXPECT_EQ(f.calls.size(), 5u);
}

}  // namespace
}  // namespace strata::io

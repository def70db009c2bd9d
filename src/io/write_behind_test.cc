#include "io/write_behind.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

namespace strata::io {
namespace {

constexpr uint64_t W = WriteBehind::kWindowBytes;

struct Call {
  WriteBehind::Op op;
  uint64_t offset, length;
  bool operator==(const Call&) const = default;
};

std::string Show(const std::vector<Call>& calls) {
  std::string s;
  for (const Call& c : calls) {
    s += (c.op == WriteBehind::Op::kStart ? "start " : "wait ") + std::to_string(c.offset / W) +
         (c.length == W ? "" : " len " + std::to_string(c.length)) + "; ";
  }
  return s;
}

TEST(WriteBehindTest, StartsEachWindowAndWaitsTwoBehind) {
  std::vector<Call> calls;
  WriteBehind wb([&](WriteBehind::Op op, uint64_t off, uint64_t len) {
    calls.push_back({op, off, len});
    return 0;
  });
  // Appends of odd sizes that straddle windows.
  EXPECT_EQ(wb.Appended(W - 1), 0);
  EXPECT_TRUE(calls.empty()) << "no full window yet";
  EXPECT_EQ(wb.Appended(1), 0);
  EXPECT_EQ(wb.Appended(W + W / 2), 0);
  EXPECT_EQ(wb.Appended(W / 2 + 3), 0);  // 3 windows and 3 bytes
  std::vector<Call> want = {{WriteBehind::Op::kStart, 0, W},
                            {WriteBehind::Op::kStart, W, W},
                            {WriteBehind::Op::kStart, 2 * W, W},
                            {WriteBehind::Op::kWait, 0, W}};
  EXPECT_EQ(calls, want) << Show(calls);
  // One append across several windows starts and waits for each in turn.
  calls.clear();
  EXPECT_EQ(wb.Appended(2 * W), 0);  // now 5 windows and 3 bytes
  want = {{WriteBehind::Op::kStart, 3 * W, W},
          {WriteBehind::Op::kWait, W, W},
          {WriteBehind::Op::kStart, 4 * W, W},
          {WriteBehind::Op::kWait, 2 * W, W}};
  EXPECT_EQ(calls, want) << Show(calls);
}

TEST(WriteBehindTest, SmallFilesNeverCallTheFileSystem) {
  int calls = 0;
  WriteBehind wb([&](WriteBehind::Op, uint64_t, uint64_t) { return ++calls, 0; });
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(wb.Appended(4096), 0);  // 4000 KiB < 8 MiB
  EXPECT_EQ(calls, 0);
}

TEST(WriteBehindTest, AFailedStartOrWaitIsSticky) {
  int fail_wait = 0;
  std::vector<Call> calls;
  WriteBehind wb([&](WriteBehind::Op op, uint64_t off, uint64_t len) {
    calls.push_back({op, off, len});
    if (op == WriteBehind::Op::kWait && fail_wait) return fail_wait;
    return 0;
  });
  EXPECT_EQ(wb.Appended(3 * W), 0);
  fail_wait = EIO;  // a wait that fails has consumed the file's error: keep it
  EXPECT_EQ(wb.Appended(W), EIO);
  EXPECT_EQ(wb.error(), EIO);
  fail_wait = 0;
  size_t before = calls.size();
  EXPECT_EQ(wb.Appended(4 * W), EIO) << "every later append reports it";
  EXPECT_EQ(calls.size(), before) << "and nothing more is attempted";

  // A start that fails may be the only report of pages the file system
  // dropped: kept the same way.
  calls.clear();
  WriteBehind wb2([&](WriteBehind::Op op, uint64_t off, uint64_t len) {
    calls.push_back({op, off, len});
    return op == WriteBehind::Op::kStart && off == W ? ENOSPC : 0;
  });
  EXPECT_EQ(wb2.Appended(W), 0);
  EXPECT_EQ(wb2.Appended(W), ENOSPC);
  EXPECT_EQ(wb2.error(), ENOSPC);
  EXPECT_EQ(wb2.Appended(W), ENOSPC);
  EXPECT_EQ(calls.size(), 2u) << Show(calls);
}

}  // namespace
}  // namespace strata::io

#include "common/thread_wait.h"

#include <gtest/gtest.h>

#include <thread>

#include "common/thread_priority.h"

namespace strata {
namespace {

struct Counting : ThreadWaitObserver {
  int begins = 0, ends = 0, bulk = 0;
  void WaitBegins() override { ++begins; }
  void WaitEnds() override { ++ends; }
  void TurnsBulk() override { ++bulk; }
};

TEST(ThreadWait, WaitsReachTheThreadsObserverOnly) {
  Counting c;
  std::thread([&] {
    { ScopedWait none; }  // no observer yet: nothing happens
    SetThreadWaitObserver(&c);
    {
      ScopedWait w;
      EXPECT_EQ(c.begins, 1);
      EXPECT_EQ(c.ends, 0);
    }
    EXPECT_EQ(c.ends, 1);
  }).join();
  { ScopedWait other; }  // this thread has none
  EXPECT_EQ(c.begins, 1);
}

TEST(ThreadWait, ABulkRequestLowersThePriorityAndEndsWithItBack) {
  Counting c;
  std::thread([&] {
    EXPECT_FALSE(TurnThisThreadBulk()) << "no observer: not a pool's thread";
    SetThreadWaitObserver(&c);
    const int before = ThisThreadNice();
    ASSERT_TRUE(TurnThisThreadBulk());
    EXPECT_EQ(c.bulk, 1) << "the pool hears of it, lowered or not";
    if (!CanRestoreNice() || BulkNice() == 0) {
      EXPECT_EQ(ThisThreadNice(), before) << "never lowered where it could not go back";
    } else {
      EXPECT_EQ(ThisThreadNice(), std::min(before + BulkNice(), 19));
    }
    EXPECT_FALSE(TurnThisThreadBulk()) << "once per request";
    { ScopedWait w; }  // a bulk thread no longer counts as running: its waits are not reported
    EXPECT_EQ(c.begins, 0);
    EXPECT_TRUE(EndThisThreadBulk());
    EXPECT_EQ(ThisThreadNice(), before);
    { ScopedWait w; }
    EXPECT_EQ(c.begins, 1);
  }).join();
}

}  // namespace
}  // namespace strata

#include "common/thread_priority.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

namespace strata {
namespace {

int NiceOfThisThread() {
  return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)));
}

TEST(ThreadPriorityTest, LowersOnlyTheCallingThread) {
  const int before = NiceOfThisThread();
  int helper_before = 0, helper_after = 0;
  std::thread t([&] {
    helper_before = NiceOfThisThread();
    LowerThisThreadPriority();
    helper_after = NiceOfThisThread();
    LowerThisThreadPriority(100);  // capped at the lowest priority
    EXPECT_EQ(NiceOfThisThread(), 19);
    LowerThisThreadPriority(-5);  // never raises it
    EXPECT_EQ(NiceOfThisThread(), 19);
  });
  t.join();
  EXPECT_EQ(helper_after, std::min(19, helper_before + kDefaultBulkNice));
  EXPECT_EQ(NiceOfThisThread(), before);  // the caller's other threads are untouched
}

TEST(ThreadPriorityTest, BulkNiceZeroLeavesThePriorityAlone) {
  SetBulkNice(0);
  int before = 0, after = 0;
  std::thread t([&] {
    before = NiceOfThisThread();
    LowerThisThreadPriority();
    after = NiceOfThisThread();
  });
  t.join();
  SetBulkNice(kDefaultBulkNice);
  EXPECT_EQ(after, before);
}

TEST(ThreadPriorityTest, NamesTheCallingThreadCutTo15Characters) {
  char main_before[16] = {}, main_after[16] = {}, short_name[16] = {}, long_name[16] = {};
  ::pthread_getname_np(::pthread_self(), main_before, sizeof main_before);
  std::thread t([&] {
    NameThisThread("heal");
    ::pthread_getname_np(::pthread_self(), short_name, sizeof short_name);
    NameThisThread("a-name-longer-than-fifteen");
    ::pthread_getname_np(::pthread_self(), long_name, sizeof long_name);
  });
  t.join();
  ::pthread_getname_np(::pthread_self(), main_after, sizeof main_after);
  EXPECT_STREQ(short_name, "heal");
  EXPECT_STREQ(long_name, "a-name-longer-t");
  EXPECT_STREQ(main_after, main_before);  // only the calling thread
}

}  // namespace
}  // namespace strata

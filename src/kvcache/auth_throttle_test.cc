#include "kvcache/auth_throttle.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::kvcache {
namespace {

constexpr uint64_t kMs = 1'000'000;

AuthThrottleOptions Options() {
  AuthThrottleOptions o;
  o.failures = 3;
  o.window_ms = 10'000;
  o.backoff_initial_ms = 1'000;
  o.backoff_max_ms = 4'000;
  o.max_addresses = 4;
  return o;
}

TEST(KvAuthThrottle, BacksOffAfterFailuresWithinTheWindow) {
  AuthThrottle t(Options());
  uint64_t now = 1'000'000 * kMs;
  t.RecordFailure("10.0.0.1", now);
  t.RecordFailure("10.0.0.1", now + 1);
  EXPECT_FALSE(t.Blocked("10.0.0.1", now + 2));
  t.RecordFailure("10.0.0.1", now + 2);
  EXPECT_TRUE(t.Blocked("10.0.0.1", now + 2));
  EXPECT_TRUE(t.Blocked("10.0.0.1", now + 999 * kMs));
  EXPECT_FALSE(t.Blocked("10.0.0.2", now + 2));  // per address
  EXPECT_FALSE(t.Blocked("10.0.0.1", now + 1000 * kMs + 2));
}

TEST(KvAuthThrottle, FailuresSpreadBeyondTheWindowDoNotCount) {
  AuthThrottle t(Options());
  uint64_t now = 1'000'000 * kMs;
  for (int i = 0; i < 10; ++i) {
    t.RecordFailure("a", now);
    t.RecordFailure("a", now + 1);
    now += 11'000 * kMs;  // a new window each time
    EXPECT_FALSE(t.Blocked("a", now));
  }
}

TEST(KvAuthThrottle, BackOffGrowsToTheMaximumThenDecays) {
  AuthThrottle t(Options());
  uint64_t now = 1'000'000 * kMs;
  uint64_t expect_ms[] = {1'000, 2'000, 4'000, 4'000};
  for (uint64_t period_ms : expect_ms) {
    for (int i = 0; i < 3; ++i) t.RecordFailure("a", now);
    EXPECT_TRUE(t.Blocked("a", now + period_ms * kMs - 1)) << period_ms;
    EXPECT_FALSE(t.Blocked("a", now + period_ms * kMs)) << period_ms;
    now += period_ms * kMs;
  }
  // Quiet for longer than the maximum back-off and a window: back to the start.
  now += 15'000 * kMs;
  for (int i = 0; i < 3; ++i) t.RecordFailure("a", now);
  EXPECT_FALSE(t.Blocked("a", now + 1'000 * kMs));
}

TEST(KvAuthThrottle, TableIsBounded) {
  AuthThrottle t(Options());
  uint64_t now = 1'000'000 * kMs;
  for (int i = 0; i < 3; ++i) t.RecordFailure("blocked", now);
  ASSERT_TRUE(t.Blocked("blocked", now));
  for (int i = 0; i < 3; ++i) t.RecordFailure("x" + std::to_string(i), now + 1);
  EXPECT_EQ(t.addresses(), 4u);
  EXPECT_TRUE(t.Blocked("blocked", now + 2));
  t.RecordFailure("y", now + 3);  // the least recently failed address goes
  EXPECT_EQ(t.addresses(), 4u);
  EXPECT_FALSE(t.Blocked("blocked", now + 4));
}

}  // namespace
}  // namespace strata::kvcache

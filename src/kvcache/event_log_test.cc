#include "kvcache/event_log.h"

#include <gtest/gtest.h>

namespace strata::kvcache {
namespace {

std::string K(int i) { return std::string(36, static_cast<char>('a' + i % 26)) + std::to_string(i); }

TEST(KvEventLogTest, RecordsOnlyOnceSomeoneReads) {
  EventLog log(8);
  log.Add(proto::EventKind::kStored, K(0));
  EXPECT_EQ(log.next(), 0u);  // off: nothing kept, nothing counted
  auto r = log.Read(0, 100);
  EXPECT_TRUE(r.events.empty());
  EXPECT_EQ(r.next, 0u);
  log.Add(proto::EventKind::kStored, K(1), K(0));
  log.Add(proto::EventKind::kRemoved, K(2));
  r = log.Read(0, 100);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].kind, proto::EventKind::kStored);
  EXPECT_EQ(r.events[0].key, K(1));
  EXPECT_EQ(r.events[0].parent, K(0));
  EXPECT_EQ(r.events[1].kind, proto::EventKind::kRemoved);
  EXPECT_EQ(r.events[1].parent, "");
  EXPECT_EQ(r.next, 2u);
  EXPECT_EQ(r.lost, 0u);
}

TEST(KvEventLogTest, CursorPagesAndReportsWhatTheRingDropped) {
  EventLog log(4);
  log.Read(0, 0);
  for (int i = 0; i < 10; ++i) log.Add(proto::EventKind::kStored, K(i));
  auto r = log.Read(3, 2);  // 3..5 were overwritten: 6..9 are held
  EXPECT_EQ(r.lost, 3u);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].key, K(6));
  EXPECT_EQ(r.next, 8u);
  r = log.Read(r.next, 100);
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[1].key, K(9));
  EXPECT_EQ(r.lost, 0u);
  r = log.Read(r.next, 100);
  EXPECT_TRUE(r.events.empty());
  EXPECT_EQ(r.next, 10u);
  // A cursor from a previous server life: unknown loss, start at the oldest held.
  r = log.Read(1000, 100);
  EXPECT_EQ(r.lost, EventLog::kLostUnknown);
  ASSERT_EQ(r.events.size(), 4u);
  EXPECT_EQ(r.events[0].key, K(6));
}

}  // namespace
}  // namespace strata::kvcache

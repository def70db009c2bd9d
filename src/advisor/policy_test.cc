// The advisor's execution policy (advisor/policy.h): strict parsing, what it
// allows, the time window.
#include "advisor/policy.h"

#include <gtest/gtest.h>

namespace strata::advisor {
namespace {

TEST(PolicyTest, DefaultsAndRoundTrip) {
  auto p = ParsePolicy("{}");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->enabled);
  EXPECT_TRUE(p->require_approval);
  EXPECT_EQ(p->moves, std::vector<std::string>{"hot->warm"});
  Policy q;
  q.enabled = false;
  q.require_approval = false;
  q.buckets = {"team-*"};
  q.prefixes = {"ckpt/"};
  q.moves = {"hot->warm", "warm->hot", "kv->expire"};
  q.max_bytes_per_day = 12345;
  q.window_start_hour = 22;
  q.window_end_hour = 6;
  q.max_objects_per_second = 0;
  auto r = ParsePolicy(PolicyJson(q));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(PolicyJson(*r), PolicyJson(q));
}

TEST(PolicyTest, RefusesWhatItDoesNotKnow) {
  for (const char* bad : {"[]", "{", R"({"enable": true})", R"({"enabled": 1})",
                          R"({"moves": ["hot-warm"]})", R"({"moves": ["hot->tape"]})",
                          R"({"moves": "hot->warm"})", R"({"buckets": [1]})",
                          R"({"moves": ["kv->warm"]})", R"({"moves": ["hot->expire"]})",
                          R"({"max_bytes_per_day": -1})", R"({"window_end_hour": 25})",
                          R"({"max_bytes_per_day": 1.5})"}) {
    auto p = ParsePolicy(bad);
    EXPECT_FALSE(p.ok()) << bad;
    if (!p.ok()) {
      EXPECT_EQ(p.status().code(), Code::kInvalidArgument) << bad;
      EXPECT_NE(p.status().message().find("advisor policy"), std::string::npos) << bad;
    }
  }
}

Recommendation Rec(std::string bucket, std::string prefix, std::string from, std::string to) {
  Recommendation r;
  r.bucket = std::move(bucket);
  r.prefix = std::move(prefix);
  r.from_media = std::move(from);
  r.to_media = std::move(to);
  return r;
}

TEST(PolicyTest, AllowsOnlyItsMovesBucketsAndPrefixes) {
  Policy p;
  p.buckets = {"team-*", "backups"};
  p.prefixes = {"ckpt/"};
  EXPECT_EQ(PolicyRefusal(p, Rec("team-a", "ckpt/2026-10/", "hot", "warm")), "");
  EXPECT_EQ(PolicyRefusal(p, Rec("backups", "ckpt/x/", "hot", "warm")), "");
  EXPECT_NE(PolicyRefusal(p, Rec("team-a", "ckpt/x/", "warm", "cold")).find("warm->cold"),
            std::string::npos);
  EXPECT_NE(PolicyRefusal(p, Rec("other", "ckpt/x/", "hot", "warm")).find("bucket other"),
            std::string::npos);
  EXPECT_NE(PolicyRefusal(p, Rec("team-a", "rag/", "hot", "warm")).find("prefix rag/"),
            std::string::npos);
  p.moves.clear();
  EXPECT_NE(PolicyRefusal(p, Rec("team-a", "ckpt/", "hot", "warm")).find("allowed: none"),
            std::string::npos);
}

TEST(PolicyTest, Globs) {
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("*", "abc"));
  EXPECT_TRUE(GlobMatch("a*c", "abbbc"));
  EXPECT_TRUE(GlobMatch("a*b*c", "axxbyyc"));
  EXPECT_FALSE(GlobMatch("a*c", "abcd"));
  EXPECT_FALSE(GlobMatch("abc", "ab"));
  EXPECT_TRUE(GlobMatch("team-*", "team-"));
  EXPECT_FALSE(GlobMatch("team-*", "team"));
}

TEST(PolicyTest, Window) {
  constexpr int64_t kHour = 3600ll * 1'000'000'000;
  Policy p;
  EXPECT_TRUE(InWindow(p, 0));
  EXPECT_TRUE(InWindow(p, 23 * kHour));
  p.window_start_hour = 22;
  p.window_end_hour = 6;  // wraps midnight
  EXPECT_TRUE(InWindow(p, 23 * kHour));
  EXPECT_TRUE(InWindow(p, 24 * kHour + 5 * kHour));
  EXPECT_FALSE(InWindow(p, 6 * kHour));
  EXPECT_FALSE(InWindow(p, 12 * kHour));
  p.window_start_hour = 9;
  p.window_end_hour = 17;
  EXPECT_TRUE(InWindow(p, 9 * kHour));
  EXPECT_FALSE(InWindow(p, 17 * kHour));
  p.window_end_hour = 9;
  EXPECT_FALSE(InWindow(p, 9 * kHour));  // empty
}

}  // namespace
}  // namespace strata::advisor

// Access statistics (advisor/access_stats.h): prefixes, per-day counts,
// decay, sampling, the memory bound and a restart through Serialize/Restore.
#include "advisor/access_stats.h"

#include <gtest/gtest.h>

namespace strata::advisor {
namespace {

constexpr int64_t kDay = 1'000'000'000;  // one "day" = 1 s here

StatsOptions Opts() {
  StatsOptions o;
  o.day_ns = kDay;
  return o;
}

TEST(PrefixOfTest, CutsAfterTheDepthsSlash) {
  EXPECT_EQ(PrefixOf("ckpt/2026-10/shard-3", 2), "ckpt/2026-10/");
  EXPECT_EQ(PrefixOf("ckpt/2026-10/a/b/c", 2), "ckpt/2026-10/");
  EXPECT_EQ(PrefixOf("rag/index", 2), "rag/");
  EXPECT_EQ(PrefixOf("top.bin", 2), "");
  EXPECT_EQ(PrefixOf("a/b/c", 1), "a/");
  EXPECT_EQ(PrefixOf("a/b/c", 0), "");
  EXPECT_EQ(PrefixOf("//x", 2), "//");
}

TEST(AccessStatsTest, CountsPerPrefixAndDay) {
  AccessStats s(Opts());
  for (int i = 0; i < 5; ++i) s.RecordRead("b", "rag/index/p" + std::to_string(i), 100, 10 * kDay + i);
  s.RecordRead("b", "rag/index/p0", 100, 12 * kDay);
  s.RecordRead("b", "ckpt/x/y", 7, 12 * kDay);
  s.RecordRead("c", "rag/index/p0", 1, 12 * kDay);
  auto snap = s.Snapshot(12 * kDay);
  ASSERT_EQ(snap.size(), 3u);
  EXPECT_EQ(snap[0].bucket, "b");
  EXPECT_EQ(snap[0].prefix, "ckpt/x/");
  const PrefixStats& rag = snap[1];
  EXPECT_EQ(rag.prefix, "rag/index/");
  EXPECT_EQ(rag.total_reads, 6u);
  EXPECT_EQ(rag.total_bytes, 600u);
  EXPECT_EQ(rag.ReadsOnDay(10), 5u);
  EXPECT_EQ(rag.ReadsOnDay(11), 0u);
  EXPECT_EQ(rag.ReadsOnDay(12), 1u);
  EXPECT_EQ(rag.ReadsInWindow(12, 3), 6u);
  EXPECT_EQ(rag.ReadsInWindow(12, 2), 1u);
  EXPECT_EQ(rag.ActiveDays(12, 30), 2);
  EXPECT_EQ(rag.last_read_ns, 12 * kDay);
  EXPECT_EQ(rag.first_read_ns, 10 * kDay);
  EXPECT_EQ(snap[2].bucket, "c");
}

TEST(AccessStatsTest, OldDaysLeaveTheRing) {
  AccessStats s(Opts());
  s.RecordRead("b", "p/q/r", 1, 1 * kDay);
  s.RecordRead("b", "p/q/r", 1, (1 + kDays) * kDay);  // day 1's slot is reused
  auto snap = s.Snapshot((1 + kDays) * kDay);
  ASSERT_EQ(snap.size(), 1u);
  EXPECT_EQ(snap[0].ReadsOnDay(1), 0u);
  EXPECT_EQ(snap[0].ReadsOnDay(1 + kDays), 1u);
  EXPECT_EQ(snap[0].ReadsInWindow(1 + kDays, kDays), 1u);
  EXPECT_EQ(snap[0].total_reads, 2u);
}

TEST(AccessStatsTest, DecaysWithTheHalfLife) {
  StatsOptions o = Opts();
  o.half_life_days = 2;
  AccessStats s(o);
  for (int i = 0; i < 8; ++i) s.RecordRead("b", "k", 1000, 0);
  auto later = s.Snapshot(4 * kDay);  // two half-lives
  ASSERT_EQ(later.size(), 1u);
  EXPECT_NEAR(later[0].reads, 2.0, 1e-9);
  EXPECT_NEAR(later[0].bytes_read, 2000.0, 1e-6);
  EXPECT_EQ(later[0].total_reads, 8u);  // the totals do not decay
}

TEST(AccessStatsTest, SamplesOneInNWeightedByN) {
  StatsOptions o = Opts();
  o.sample_every = 4;
  AccessStats s(o);
  for (int i = 0; i < 400; ++i) s.RecordRead("b", "a/b/c", 10, kDay);
  auto snap = s.Snapshot(kDay);
  ASSERT_EQ(snap.size(), 1u);
  EXPECT_EQ(s.recorded(), 100u);
  EXPECT_EQ(snap[0].total_reads, 400u);
  EXPECT_EQ(snap[0].total_bytes, 4000u);
}

TEST(AccessStatsTest, StaysWithinItsBoundAndKeepsTheBusiest) {
  StatsOptions o = Opts();
  o.max_prefixes = 160;  // 10 per shard
  AccessStats s(o);
  for (int i = 0; i < 50; ++i) s.RecordRead("b", "busy/" + std::to_string(i) + "/x", 1, kDay);
  for (int r = 0; r < 20; ++r) {
    for (int i = 0; i < 50; ++i) s.RecordRead("b", "busy/" + std::to_string(i) + "/x", 1, kDay);
  }
  for (int i = 0; i < 5000; ++i) s.RecordRead("b", "scan/" + std::to_string(i) + "/x", 1, kDay);
  EXPECT_LE(s.size(), 160u);
  EXPECT_GT(s.dropped(), 4000u);
  size_t busy = 0;
  for (const PrefixStats& p : s.Snapshot(kDay)) busy += p.prefix.starts_with("busy/");
  // Trimming drops the least-read first: the busy prefixes outlive the one-off scan.
  EXPECT_EQ(busy, 50u);
}

TEST(AccessStatsTest, SurvivesARestart) {
  AccessStats a(Opts());
  a.RecordRead("b", "x/y/z", 5, 3 * kDay);
  a.RecordRead("b", "x/y/z", 5, 4 * kDay);
  a.RecordRead("b2", "k", 1, 4 * kDay);
  AccessStats b(Opts());
  ASSERT_TRUE(b.Restore(a.Serialize()).ok());
  auto x = a.Snapshot(5 * kDay), y = b.Snapshot(5 * kDay);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i].prefix, y[i].prefix);
    EXPECT_EQ(x[i].total_reads, y[i].total_reads);
    EXPECT_DOUBLE_EQ(x[i].reads, y[i].reads);
    EXPECT_EQ(x[i].day_reads, y[i].day_reads);
    EXPECT_EQ(x[i].last_read_ns, y[i].last_read_ns);
  }
  EXPECT_FALSE(b.Restore("{").ok());
  EXPECT_FALSE(b.Restore(R"({"version":1,"prefixes":[{"b":"x"}]})").ok());
  EXPECT_FALSE(b.Restore(R"({"version":2,"prefixes":[]})").ok());
  EXPECT_EQ(b.size(), y.size());  // a refused document changes nothing
}

// A damaged metadata record is refused whole, never trusted: a version that
// is not a number (it threw out of Restore, ending the server), and figures
// that would break the arithmetic later (a count from a huge float, a
// negative day, a negative decayed figure, a short day ring).
TEST(AccessStatsTest, RestoreRefusesDamagedFigures) {
  auto ring = [](std::string_view first) {  // kDays counts, the first one `first`
    std::string days = "[" + std::string(first);
    for (int i = 1; i < kDays; ++i) days += ",0";
    return days + "]";
  };
  auto doc = [&](std::string_view field, std::string_view value) {
    const std::string days = ring("0");
    std::string p = R"({"b":"bk","p":"x/","r":1.5,"br":10.0,"tr":3,"tb":30,"f":1,"l":2,"a":2,"ld":0,"d":)" + days + "}";
    if (!field.empty()) {
      const std::string key = "\"" + std::string(field) + "\":";
      size_t at = p.find(key) + key.size();
      size_t end = p.find_first_of(",}", at);
      if (field == "d") end = p.find(']', at) + 1;
      p.replace(at, end - at, value);
    }
    return R"({"version":1,"prefixes":[)" + p + "]}";
  };
  AccessStats s(Opts());
  ASSERT_TRUE(s.Restore(doc("", "")).ok()) << doc("", "");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.Restore(R"({"version":"1","prefixes":[]})").code(), Code::kInvalidArgument);
  EXPECT_EQ(s.Restore(R"({"version":1.0,"prefixes":[]})").code(), Code::kInvalidArgument);
  for (auto [field, value] : std::vector<std::pair<std::string, std::string>>{
           {"tr", "1e300"}, {"tb", "-1"}, {"ld", "-5"}, {"a", "-1"}, {"f", "4.5"},
           {"l", "9223372036854775807"}, {"r", "-1"}, {"br", "\"many\""}, {"b", "7"},
           {"d", "[1,2,3]"}, {"d", ring("-1")}, {"d", ring("4294967296")}, {"d", ring("0.5")}}) {
    EXPECT_EQ(s.Restore(doc(field, value)).code(), Code::kInvalidArgument) << field << "=" << value;
  }
  EXPECT_EQ(s.size(), 1u);  // none of them changed what was held
}

}  // namespace
}  // namespace strata::advisor

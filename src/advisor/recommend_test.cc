// Recommendations on synthetic access traces (advisor/recommend.h): a
// checkpoint directory going cold moves hot -> warm, a RAG index heating up
// moves warm -> hot, a one-off scan moves nothing, and so on; with the
// evidence and the modelled effect each one carries.
#include "advisor/recommend.h"

#include <gtest/gtest.h>

#include "tier/lifecycle.h"

namespace strata::advisor {
namespace {

constexpr int64_t kDay = 1'000'000'000;  // one "day" = 1 s
constexpr uint64_t kMiB = 1ull << 20;

tier::ClassMap FourTiers() {
  auto m = tier::ClassMap::Make({{"hot", tier::Media::kHot},
                                 {"gpu", tier::Media::kGpuDirect},
                                 {"warm", tier::Media::kWarm},
                                 {"cold", tier::Media::kCold}},
                                {});
  EXPECT_TRUE(m.ok());
  return m.ok() ? *m : tier::ClassMap();
}

// `n` objects of `size` under bucket/prefix in `cls`, written on `day`.
PrefixInventory Holding(std::string bucket, std::string prefix, int n, uint64_t size,
                        std::string cls, int64_t day, int64_t now) {
  PrefixInventory inv;
  inv.bucket = std::move(bucket);
  inv.prefix = std::move(prefix);
  for (int i = 0; i < n; ++i) {
    object::ObjectRecord r;
    r.size_bytes = size;
    r.storage_class = cls == "STANDARD" ? "" : cls;
    r.mtime_ns = day * kDay;
    AddToInventory(inv, r, now, kDay);
  }
  return inv;
}

StatsOptions Opts() {
  StatsOptions o;
  o.day_ns = kDay;
  return o;
}

class RecommendTest : public ::testing::Test {
 protected:
  std::vector<Recommendation> Run(const std::vector<PrefixInventory>& inv, int64_t today) {
    return Recommend(inv, stats_.Snapshot(today * kDay), classes_, t_, model_, today * kDay, kDay);
  }
  tier::ClassMap classes_ = FourTiers();
  AccessStats stats_{Opts()};
  Thresholds t_;
  Coefficients model_;
};

TEST_F(RecommendTest, CheckpointDirectoryGoingColdMovesHotToWarm) {
  // Written on day 10, read back (restarts) on days 11-13, then nothing.
  for (int d = 11; d <= 13; ++d) {
    for (int i = 0; i < 8; ++i) stats_.RecordRead("ml", "ckpt/2026-10/shard-" + std::to_string(i), 64 * kMiB, d * kDay);
  }
  auto inv = {Holding("ml", "ckpt/2026-10/", 8, 512 * kMiB, "STANDARD", 10, 60 * kDay)};
  // Day 40: only 27 days without a read: not yet.
  EXPECT_TRUE(Run(inv, 40).empty());
  auto recs = Run(inv, 60);
  ASSERT_EQ(recs.size(), 1u);
  const Recommendation& r = recs[0];
  EXPECT_EQ(r.kind, "colder");
  EXPECT_EQ(r.from_media, "hot");
  EXPECT_EQ(r.to_media, "warm");
  EXPECT_EQ(r.to_class, "STANDARD_IA");
  EXPECT_EQ(r.to_pool, "warm");
  EXPECT_EQ(r.from_classes, std::vector<std::string>{"STANDARD"});
  EXPECT_EQ(r.objects_to_move, 8u);
  EXPECT_EQ(r.bytes_to_move, 8 * 512 * kMiB);
  EXPECT_EQ(r.capacity_change.at("hot"), -static_cast<int64_t>(8 * 512 * kMiB));
  EXPECT_EQ(r.capacity_change.at("warm"), static_cast<int64_t>(8 * 512 * kMiB));
  EXPECT_NEAR(r.idle_days, 47, 1e-9);
  EXPECT_EQ(r.last_read_ns, 13 * kDay + 0);
  EXPECT_EQ(r.reads_in_window, 0u);  // days 31-60
  EXPECT_EQ(r.daily_reads.size(), 30u);
  // The summary says what, how much, why and where to.
  EXPECT_EQ(r.summary, "prefix `ml/ckpt/2026-10/` — 4.0 GiB on hot, no reads for 47 days → warm (STANDARD_IA)");
  // Modelled effect with the coefficients: 4 GiB = 1/256 TiB.
  EXPECT_NEAR(r.watts_before, 1.2 / 256, 1e-12);
  EXPECT_NEAR(r.watts_after, 0.4 / 256, 1e-12);
  EXPECT_NEAR(r.cost_month_before, 60.0 / 256, 1e-12);
  EXPECT_NEAR(r.cost_month_after, 15.0 / 256, 1e-12);
  // The lifecycle rule it proposes is one strata's own parser accepts.
  ASSERT_FALSE(r.lifecycle_rule.empty());
  auto parsed = tier::ParseLifecycle(
      "<LifecycleConfiguration>" + r.lifecycle_rule + "</LifecycleConfiguration>",
      [](std::string_view c) { return tier::IsStorageClass(c); });
  ASSERT_TRUE(std::holds_alternative<tier::Configuration>(parsed)) << r.lifecycle_rule;
  const tier::Rule& rule = std::get<tier::Configuration>(parsed).rules.at(0);
  EXPECT_EQ(rule.filter.prefix, "ckpt/2026-10/");
  ASSERT_EQ(rule.transitions.size(), 1u);
  EXPECT_EQ(rule.transitions[0].storage_class, "STANDARD_IA");
  EXPECT_EQ(rule.transitions[0].when.days, 30u);
  // Same situation, same id (a re-analysis refreshes, never duplicates).
  EXPECT_EQ(Run(inv, 61).at(0).id, r.id);
}

TEST_F(RecommendTest, RagIndexHeatingUpMovesWarmToHot) {
  // 100 index shards on warm; read 40k times a day on days 20-24.
  for (int d = 20; d <= 24; ++d) {
    for (int i = 0; i < 40000; ++i) stats_.RecordRead("kb", "rag/index/s" + std::to_string(i % 100), 4096, d * kDay + i);
  }
  auto inv = {Holding("kb", "rag/index/", 100, 2 * kMiB, "STANDARD_IA", 1, 24 * kDay)};
  auto recs = Run(inv, 24);
  ASSERT_EQ(recs.size(), 1u);
  const Recommendation& r = recs[0];
  EXPECT_EQ(r.kind, "hotter");
  EXPECT_EQ(r.from_media, "warm");
  EXPECT_EQ(r.to_media, "hot");
  EXPECT_EQ(r.to_class, "STANDARD");
  EXPECT_EQ(r.to_pool, "hot");
  EXPECT_EQ(r.active_days, 5);
  EXPECT_EQ(r.reads_in_window, 200000u);
  EXPECT_DOUBLE_EQ(r.reads_per_active_day, 40000);
  EXPECT_DOUBLE_EQ(r.rereads_per_object, 2000);
  EXPECT_EQ(r.summary, "`kb/rag/index/` read 40k times/day on 5 of the last 30 days from warm → hot (STANDARD)");
  EXPECT_TRUE(r.lifecycle_rule.empty());  // lifecycle never moves data up: a one-off move
  EXPECT_EQ(r.daily_reads.back(), 40000u);
}

TEST_F(RecommendTest, OneOffScanMovesNothing) {
  // A training job reads each of 5000 warm objects once, all on day 30.
  for (int i = 0; i < 5000; ++i) stats_.RecordRead("data", "corpus/v1/" + std::to_string(i), kMiB, 30 * kDay + i);
  auto inv = {Holding("data", "corpus/v1/", 5000, kMiB, "STANDARD_IA", 2, 31 * kDay)};
  EXPECT_TRUE(Run(inv, 31).empty());
  // Even a second pass on another day is no pattern of re-reads worth hot media.
  for (int i = 0; i < 5000; ++i) stats_.RecordRead("data", "corpus/v1/" + std::to_string(i), kMiB, 33 * kDay + i);
  EXPECT_TRUE(Run(inv, 33).empty());
}

TEST_F(RecommendTest, RecentlyWrittenOrStillReadStaysPut) {
  // Never read, but written 5 days ago: not idle long enough.
  auto fresh = {Holding("b", "new/", 4, 8 * kMiB, "STANDARD", 55, 60 * kDay)};
  EXPECT_TRUE(Run(fresh, 60).empty());
  // Old, but read yesterday.
  stats_.RecordRead("b", "old/x", 1, 59 * kDay);
  auto read = {Holding("b", "old/", 4, 8 * kMiB, "STANDARD", 1, 60 * kDay)};
  EXPECT_TRUE(Run(read, 60).empty());
  // Too small to be worth a move.
  auto tiny = {Holding("b", "tiny/", 1, 1000, "STANDARD", 1, 60 * kDay)};
  EXPECT_TRUE(Run(tiny, 60).empty());
  // Never read and 59 days old: the summary says "never read".
  auto idle = {Holding("b", "idle/", 4, 8 * kMiB, "STANDARD", 1, 60 * kDay)};
  auto recs = Run(idle, 60);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_NE(recs[0].summary.find("never read for 59 days"), std::string::npos) << recs[0].summary;
}

TEST_F(RecommendTest, EachTierStepsOneDown) {
  auto inv = {Holding("b", "g/", 2, 4 * kMiB, "EXPRESS_ONEZONE", 1, 200 * kDay)};
  auto recs = Run(inv, 200);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].from_media, "gpu-direct");
  EXPECT_EQ(recs[0].to_class, "STANDARD");
  // warm -> cold only after archive_days (180).
  auto warm = {Holding("b", "w/", 2, 4 * kMiB, "STANDARD_IA", 1, 100 * kDay)};
  EXPECT_TRUE(Run(warm, 100).empty());
  recs = Run(warm, 190);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].to_media, "cold");
  EXPECT_EQ(recs[0].to_class, "GLACIER");
  // A prefix split over two tiers gets one recommendation per tier.
  PrefixInventory mixed = Holding("b", "m/", 2, 4 * kMiB, "STANDARD", 1, 200 * kDay);
  PrefixInventory more = Holding("b", "m/", 3, 4 * kMiB, "EXPRESS_ONEZONE", 1, 200 * kDay);
  for (const auto& [c, n] : more.by_class) mixed.by_class[c] = n;
  recs = Run({mixed}, 200);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_NE(recs[0].id, recs[1].id);
}

TEST_F(RecommendTest, OnePoolMeansNothingToMove) {
  classes_ = tier::ClassMap();
  auto inv = {Holding("b", "idle/", 4, 8 * kMiB, "STANDARD", 1, 100 * kDay)};
  EXPECT_TRUE(Run(inv, 100).empty());
  // Two pools where warm classes map onto the hot pool: nothing either.
  auto m = tier::ClassMap::Make({{"hot", tier::Media::kHot}, {"warm", tier::Media::kWarm}},
                                {{"STANDARD_IA", "hot"}});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  classes_ = *m;
  EXPECT_TRUE(Run(inv, 100).empty());
}

TEST_F(RecommendTest, JsonRoundTrip) {
  auto inv = {Holding("b", "idle/", 4, 8 * kMiB, "STANDARD", 1, 100 * kDay)};
  auto recs = Run(inv, 100);
  ASSERT_EQ(recs.size(), 1u);
  recs[0].state = "approved";
  recs[0].moved_bytes = 77;
  auto back = ParseRecommendation(RecommendationJson(recs[0], &model_));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(RecommendationJson(*back), RecommendationJson(recs[0]));
  EXPECT_EQ(back->moved_bytes, 77u);
  EXPECT_NE(RecommendationJson(recs[0], &model_).find("\"watts_per_tib\":0.4"), std::string::npos);
  EXPECT_FALSE(ParseRecommendation("[1]").ok());
  EXPECT_FALSE(ParseRecommendation(R"({"objects": "many"})").ok());
  // A float where a whole number is held is refused (converting 1e300 to an
  // integer is undefined); the double fields take fractions.
  for (const char* damaged : {R"({"objects": 1e300})", R"({"window_days": 2.5})",
                              R"({"daily_reads": [1, 2.5]})", R"({"by_class": {"STANDARD": {"bytes": -1e30}}})",
                              R"({"capacity_change": {"hot": 1e19}})"}) {
    EXPECT_EQ(ParseRecommendation(damaged).status().code(), Code::kInvalidArgument) << damaged;
  }
  auto fractions = ParseRecommendation(R"({"idle_days": 34.5, "watts_after": 0.25, "objects": 3})");
  ASSERT_TRUE(fractions.ok());
  EXPECT_DOUBLE_EQ(fractions->idle_days, 34.5);
  EXPECT_EQ(fractions->objects, 3u);
}

TEST(HumanBytesTest, Units) {
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
  EXPECT_EQ(HumanBytes(3.1 * 1024 * 1024 * 1024 * 1024), "3.1 TiB");
}

}  // namespace
}  // namespace strata::advisor

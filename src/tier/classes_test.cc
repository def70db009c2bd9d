// Storage class -> pool mapping (tier/classes.h).
#include "tier/classes.h"

#include <gtest/gtest.h>

namespace strata::tier {
namespace {

TEST(ClassMapTest, DefaultIsOnePoolForEveryClass) {
  ClassMap m;
  for (std::string_view c : StorageClasses()) EXPECT_EQ(m.PoolOf(c), "") << c;
  EXPECT_EQ(m.PoolOf(""), "");
  EXPECT_TRUE(IsStorageClass("GLACIER_IR"));
  EXPECT_FALSE(IsStorageClass("glacier"));
  EXPECT_FALSE(IsStorageClass("TAPE"));
}

TEST(ClassMapTest, FourTiersByMedia) {
  auto m = ClassMap::Make({{"hot", Media::kHot},
                           {"gpu", Media::kGpuDirect},
                           {"warm", Media::kWarm},
                           {"cold", Media::kCold}},
                          {});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->PoolOf("STANDARD"), "hot");
  EXPECT_EQ(m->PoolOf(""), "hot");
  EXPECT_EQ(m->PoolOf("EXPRESS_ONEZONE"), "gpu");
  EXPECT_EQ(m->PoolOf("STANDARD_IA"), "warm");
  EXPECT_EQ(m->PoolOf("ONEZONE_IA"), "warm");
  EXPECT_EQ(m->PoolOf("GLACIER_IR"), "warm");
  EXPECT_EQ(m->PoolOf("GLACIER"), "cold");
  EXPECT_EQ(m->PoolOf("DEEP_ARCHIVE"), "cold");
  EXPECT_EQ(m->MediaOf("cold"), Media::kCold);
  EXPECT_EQ(m->MediaOf(""), Media::kHot);
}

TEST(ClassMapTest, MissingMediaFallsBackToPrimaryAndOverridesApply) {
  auto m = ClassMap::Make({{"fast", Media::kHot}, {"slow", Media::kWarm}},
                          {{"GLACIER", "slow"}});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->PoolOf("GLACIER"), "slow");
  EXPECT_EQ(m->PoolOf("DEEP_ARCHIVE"), "fast");  // no cold pool
  EXPECT_EQ(m->PoolOf("EXPRESS_ONEZONE"), "fast");
}

TEST(ClassMapTest, BadConfigurationsAreRefusedWithAMessage) {
  auto unknown_pool = ClassMap::Make({{"hot", Media::kHot}}, {{"GLACIER", "tape"}});
  ASSERT_FALSE(unknown_pool.ok());
  EXPECT_NE(unknown_pool.status().message().find("'tape'"), std::string::npos);
  auto unknown_class = ClassMap::Make({{"hot", Media::kHot}}, {{"ARCHIVE", "hot"}});
  EXPECT_FALSE(unknown_class.ok());
  EXPECT_FALSE(ClassMap::Make({}, {}).ok());
}

TEST(ClassMapTest, ThePrimaryIsStandardsPoolAndComesFirst) {
  auto m = ClassMap::Make({{"warm", Media::kWarm}, {"cold", Media::kCold}, {"hot", Media::kHot}},
                          {});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->pools().size(), 3u);
  EXPECT_EQ(m->pools()[0].name, "hot");
  EXPECT_EQ(m->pools()[1].name, "warm");
  EXPECT_EQ(m->pools()[2].name, "cold");
  EXPECT_EQ(m->MediaOf(""), Media::kHot);
  // STANDARD mapped elsewhere: that pool is the primary.
  auto o = ClassMap::Make({{"a", Media::kHot}, {"b", Media::kWarm}}, {{"STANDARD", "b"}});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->pools()[0].name, "b");
  EXPECT_EQ(o->PoolOf(""), "b");
}

}  // namespace
}  // namespace strata::tier

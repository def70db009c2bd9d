#include "meta/keys.h"

#include <gtest/gtest.h>

namespace strata::meta {
namespace {

using namespace std::string_literals;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// Object keys as S3 allows them (no '\0'), chosen to include prefixes of each
// other, separators, and bytes on both sides of 0x80.
const std::vector<std::string> kObjectKeys = {
    "",     "a",    "a/",       "a/b",  "a b",      "a\x01",          "ab", "abc", "b",
    "\x7f", "\x80", "\xc3\xa9", "\xff", "\xff\xff", "zz/\xe2\x82\xac"};

TEST(KeysTest, ObjectKeyPrefixPreservesKeyOrder) {
  for (const auto& a : kObjectKeys) {
    for (const auto& b : kObjectKeys) {
      if (!(a < b)) continue;  // std::string compares as unsigned bytes
      SCOPED_TRACE(HexEncode(a) + " < " + HexEncode(b));
      EXPECT_LT(ObjectKeyPrefix("bkt", a), ObjectKeyPrefix("bkt", b));
      // Every version of a sorts before every version of b, so a listing
      // scan meets keys in order even when a is a prefix of b.
      EXPECT_LT(ObjectVersionKey("bkt", a, 0), ObjectVersionKey("bkt", b, kMax));
      // And no key's range contains another's.
      EXPECT_FALSE(ObjectVersionKey("bkt", b, 7).starts_with(ObjectKeyPrefix("bkt", a)));
    }
  }
}

TEST(KeysTest, BucketsDoNotInterleave) {
  // "a" is a prefix of "ab"; the '\0' terminator keeps their objects apart.
  EXPECT_LT(ObjectVersionKey("a", "\xff\xff", 0), ObjectPrefix("ab"));
  EXPECT_FALSE(ObjectPrefix("ab").starts_with(ObjectPrefix("a")));
  EXPECT_TRUE(ObjectVersionKey("a", "k", 1).starts_with(ObjectPrefix("a")));
}

TEST(KeysTest, NewestVersionSortsFirst) {
  EXPECT_LT(ObjectVersionKey("b", "k", 10), ObjectVersionKey("b", "k", 5));
  EXPECT_LT(ObjectVersionKey("b", "k", kMax), ObjectVersionKey("b", "k", 0));
  EXPECT_LT(ObjectVersionKey("b", "k", 0x100), ObjectVersionKey("b", "k", 0xff));
}

TEST(KeysTest, ParseObjectVersionKeyRoundTrips) {
  for (const auto& key : kObjectKeys) {
    for (uint64_t stamp : {uint64_t{0}, uint64_t{1}, uint64_t{0x0102030405060708}, kMax}) {
      std::string raw = ObjectVersionKey("my-bucket", key, stamp);
      std::string bucket, parsed_key;
      uint64_t parsed_stamp = 0;
      ASSERT_TRUE(ParseObjectVersionKey(raw, &bucket, &parsed_key, &parsed_stamp));
      EXPECT_EQ(bucket, "my-bucket");
      EXPECT_EQ(parsed_key, key);
      EXPECT_EQ(parsed_stamp, stamp);
    }
  }
}

TEST(KeysTest, ParseRejectsMalformedKeys) {
  std::string bucket, key;
  uint64_t stamp;
  std::string good = ObjectVersionKey("b", "k", 1);
  EXPECT_FALSE(ParseObjectVersionKey("", &bucket, &key, &stamp));
  EXPECT_FALSE(ParseObjectVersionKey(good.substr(0, good.size() - 1), &bucket, &key, &stamp));
  EXPECT_FALSE(ParseObjectVersionKey("B" + good.substr(1), &bucket, &key, &stamp));
  EXPECT_FALSE(ParseObjectVersionKey("Ob" + std::string(9, 'x'), &bucket, &key, &stamp));
  // A key containing '\0' is not representable (see keys.h).
  EXPECT_FALSE(ParseObjectVersionKey(ObjectVersionKey("b", "k\0k"s, 1), &bucket, &key, &stamp));
}

TEST(KeysTest, SimpleKeysCarryTheirPrefix) {
  EXPECT_EQ(BucketKey("photos"), "Bphotos");
  EXPECT_EQ(IntentKey("f00d"), "If00d");
  EXPECT_EQ(GarbageKey("f00d"), "Gf00d");
  EXPECT_EQ(ConfigKey("root-credentials"), "Croot-credentials");
  EXPECT_EQ(ObjectPrefix("b"), "Ob\0"s);
  EXPECT_EQ(ObjectKeyPrefix("b", "k"), "Ob\0k\0"s);
  EXPECT_EQ(ObjectVersionKey("b", "k", kMax), "Ob\0k\0"s + std::string(8, '\0'));
  EXPECT_TRUE(IntentKey("x").starts_with(PrefixKey(kIntentPrefix)));
}

}  // namespace
}  // namespace strata::meta

// The lifecycle rules as pure functions: ClassRank, DueAfterDays, Matches,
// Evaluate (every rule kind, filter and version case), AbortDue, ExpirationOf.
#include "tier/lifecycle.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tier/lifecycle_test_util.h"

namespace strata::tier {
namespace {

using namespace lifecycle_test;

// ---- Evaluation -------------------------------------------------------------

TEST(LifecycleTest, TransitionsAllowedAsAwsDoes) {
  for (const char* to : {"STANDARD_IA", "INTELLIGENT_TIERING", "ONEZONE_IA", "GLACIER_IR", "GLACIER",
                         "DEEP_ARCHIVE"}) {
    for (const char* from : {"", "STANDARD", "REDUCED_REDUNDANCY", "EXPRESS_ONEZONE"}) {
      EXPECT_TRUE(TransitionAllowed(from, to)) << from << " -> " << to;
    }
    EXPECT_FALSE(TransitionAllowed(to, to)) << to;
    EXPECT_FALSE(TransitionAllowed("DEEP_ARCHIVE", to));
    EXPECT_FALSE(TransitionAllowed(to, "STANDARD"));
  }
  EXPECT_TRUE(TransitionAllowed("STANDARD_IA", "INTELLIGENT_TIERING"));
  EXPECT_TRUE(TransitionAllowed("STANDARD_IA", "GLACIER_IR"));
  EXPECT_FALSE(TransitionAllowed("INTELLIGENT_TIERING", "STANDARD_IA"));
  EXPECT_TRUE(TransitionAllowed("INTELLIGENT_TIERING", "ONEZONE_IA"));
  EXPECT_FALSE(TransitionAllowed("ONEZONE_IA", "GLACIER_IR"));
  EXPECT_FALSE(TransitionAllowed("ONEZONE_IA", "INTELLIGENT_TIERING"));
  EXPECT_TRUE(TransitionAllowed("ONEZONE_IA", "GLACIER"));
  EXPECT_FALSE(TransitionAllowed("GLACIER_IR", "ONEZONE_IA"));
  EXPECT_TRUE(TransitionAllowed("GLACIER_IR", "DEEP_ARCHIVE"));
  EXPECT_FALSE(TransitionAllowed("GLACIER", "GLACIER_IR"));
}

TEST(LifecycleTest, ClassRank) {
  EXPECT_EQ(ClassRank(""), 0);
  EXPECT_EQ(ClassRank("STANDARD"), 0);
  EXPECT_EQ(ClassRank("EXPRESS_ONEZONE"), 0);
  EXPECT_EQ(ClassRank("REDUCED_REDUNDANCY"), 0);
  EXPECT_EQ(ClassRank("SOMETHING_ELSE"), 0);
  EXPECT_LT(ClassRank("STANDARD"), ClassRank("INTELLIGENT_TIERING"));
  EXPECT_LT(ClassRank("INTELLIGENT_TIERING"), ClassRank("STANDARD_IA"));
  EXPECT_LT(ClassRank("STANDARD_IA"), ClassRank("ONEZONE_IA"));
  EXPECT_LT(ClassRank("ONEZONE_IA"), ClassRank("GLACIER_IR"));
  EXPECT_LT(ClassRank("GLACIER_IR"), ClassRank("GLACIER"));
  EXPECT_LT(ClassRank("GLACIER"), ClassRank("DEEP_ARCHIVE"));
  EXPECT_EQ(ClassRank("glacier"), 0);  // names are exact
}

TEST(LifecycleTest, DueAfterDays) {
  const int64_t two_s = 2 * kSecond;
  EXPECT_EQ(DueAfterDays(3 * kSecond, 1, two_s), 6 * kSecond);  // 5 s, up to the next even second
  EXPECT_EQ(DueAfterDays(4 * kSecond, 1, two_s), 6 * kSecond);  // already on a boundary
  EXPECT_EQ(DueAfterDays(4 * kSecond + 1, 1, two_s), 8 * kSecond);
  EXPECT_EQ(DueAfterDays(1, 0, two_s), 2 * kSecond);  // Days 0: the next boundary
  EXPECT_EQ(DueAfterDays(0, 0, two_s), 0);
  EXPECT_EQ(DueAfterDays(-3 * kSecond, 1, two_s), 0);  // before the epoch: -1 s rounds up to 0
  EXPECT_EQ(DueAfterDays(-5 * kSecond, 1, two_s), -2 * kSecond);
  // AWS: created 2024-01-01 10:00 UTC, 1 day -> due 2024-01-03 00:00 UTC.
  EXPECT_EQ(DueAfterDays(At(0, 10), 1, kDay), At(2));
  EXPECT_EQ(DueAfterDays(At(0), 1, kDay), At(1));
  EXPECT_EQ(DueAfterDays(At(0, 23) + 59 * 60 * kSecond, 30, kDay), At(31));
  EXPECT_EQ(DueAfterDays(At(0, 1), 365, kDay), At(366));
  // Saturates instead of wrapping; a day of 0 ns counts as 1 ns.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(DueAfterDays(At(0), std::numeric_limits<uint32_t>::max(), kDay), kMax);
  EXPECT_EQ(DueAfterDays(kMax - 5, 1, kDay), kMax);
  EXPECT_EQ(DueAfterDays(5, 3, 0), 8);
  EXPECT_EQ(DueAfterDays(5, 3, -7), 8);
}

TEST(LifecycleTest, Matches) {
  Rule r;
  r.filter = {"logs/", {{"a", "1"}, {"b", ""}}, 10, 20};
  auto facts = [](std::string key, uint64_t size, Tags tags) {
    VersionFacts v;
    v.key = std::move(key);
    v.size_bytes = size;
    v.tags = std::move(tags);
    return v;
  };
  const Tags tags = {{"c", "3"}, {"b", ""}, {"a", "1"}};
  EXPECT_TRUE(Matches(r, facts("logs/x", 15, tags)));
  EXPECT_FALSE(Matches(r, facts("log/x", 15, tags)));
  EXPECT_FALSE(Matches(r, facts("logs/x", 10, tags)));  // exclusive
  EXPECT_FALSE(Matches(r, facts("logs/x", 20, tags)));  // exclusive
  EXPECT_TRUE(Matches(r, facts("logs/x", 11, tags)));
  EXPECT_TRUE(Matches(r, facts("logs/x", 19, tags)));
  EXPECT_FALSE(Matches(r, facts("logs/x", 15, {{"a", "1"}})));
  EXPECT_FALSE(Matches(r, facts("logs/x", 15, {{"a", "2"}, {"b", ""}})));
  EXPECT_FALSE(Matches(r, facts("logs/x", 15, {{"a", "1"}, {"b", "x"}})));
  EXPECT_TRUE(Matches(Rule{}, VersionFacts{}));  // no conditions: everything
}

// The rules of the table's cases, one configuration.
const char kRules[] = R"(<LifecycleConfiguration>
  <Rule><ID>exp-days</ID><Filter><Prefix>days/</Prefix></Filter><Status>Enabled</Status>
    <Expiration><Days>10</Days></Expiration></Rule>
  <Rule><ID>exp-date</ID><Prefix>date/</Prefix><Status>Enabled</Status>
    <Expiration><Date>2024-03-01T00:00:00Z</Date></Expiration></Rule>
  <Rule><ID>off</ID><Filter><Prefix>off/</Prefix></Filter><Status>Disabled</Status>
    <Expiration><Days>1</Days></Expiration>
    <Transition><Days>0</Days><StorageClass>GLACIER</StorageClass></Transition>
    <NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration>
  </Rule>
  <Rule><ID>markers</ID><Filter><Prefix>m/</Prefix></Filter><Status>Enabled</Status>
    <Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>
  <Rule><ID>m-days</ID><Filter><Prefix>md/</Prefix></Filter><Status>Enabled</Status>
    <Expiration><Days>1</Days></Expiration></Rule>
  <Rule><ID>tiers</ID><Filter><Prefix>tier/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Days>30</Days><StorageClass>STANDARD_IA</StorageClass></Transition>
    <Transition><Days>60</Days><StorageClass>GLACIER</StorageClass></Transition>
    <Transition><Days>180</Days><StorageClass>DEEP_ARCHIVE</StorageClass></Transition>
    <Expiration><Days>365</Days></Expiration></Rule>
  <Rule><ID>tier-date</ID><Filter><Prefix>tdate/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Date>2024-02-01T00:00:00.000Z</Date><StorageClass>GLACIER_IR</StorageClass>
    </Transition></Rule>
  <Rule><ID>both-move</ID><Filter><Prefix>both/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Days>5</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>
  <Rule><ID>both-expire</ID><Filter><Prefix>both/</Prefix></Filter><Status>Enabled</Status>
    <Expiration><Days>3</Days></Expiration></Rule>
  <Rule><ID>warm</ID><Filter><Prefix>cold/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Days>30</Days><StorageClass>STANDARD_IA</StorageClass></Transition></Rule>
  <Rule><ID>colder</ID><Filter><Prefix>cold/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Days>40</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>
  <Rule><ID>also-glacier</ID><Filter><Prefix>cold/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>
  <Rule><ID>nc</ID><Filter><Prefix>nc/</Prefix></Filter><Status>Enabled</Status>
    <NoncurrentVersionTransition><NoncurrentDays>5</NoncurrentDays>
      <StorageClass>GLACIER_IR</StorageClass></NoncurrentVersionTransition>
    <NoncurrentVersionTransition><NoncurrentDays>8</NoncurrentDays>
      <StorageClass>GLACIER</StorageClass>
      <NewerNoncurrentVersions>1</NewerNoncurrentVersions></NoncurrentVersionTransition>
    <NoncurrentVersionExpiration><NoncurrentDays>10</NoncurrentDays>
      <NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>
  <Rule><ID>tagged</ID><Filter><Tag><Key>tier</Key><Value>cold</Value></Tag></Filter>
    <Status>Enabled</Status>
    <Transition><Days>1</Days><StorageClass>DEEP_ARCHIVE</StorageClass></Transition></Rule>
  <Rule><ID>and</ID><Filter><And><Prefix>and/</Prefix><Tag><Key>a</Key><Value>1</Value></Tag>
    <Tag><Key>b</Key><Value>2</Value></Tag><ObjectSizeGreaterThan>100</ObjectSizeGreaterThan>
    <ObjectSizeLessThan>1000</ObjectSizeLessThan></And></Filter><Status>Enabled</Status>
    <Expiration><Days>1</Days></Expiration></Rule>
  <Rule><ID>big</ID><Filter><ObjectSizeGreaterThan>1000000</ObjectSizeGreaterThan></Filter>
    <Status>Enabled</Status>
    <Transition><Days>0</Days><StorageClass>GLACIER_IR</StorageClass></Transition></Rule>
  <Rule><ID>small</ID><Filter><ObjectSizeLessThan>10</ObjectSizeLessThan></Filter>
    <Status>Enabled</Status>
    <Transition><Days>0</Days><StorageClass>INTELLIGENT_TIERING</StorageClass></Transition></Rule>
  <Rule><ID>all</ID><Filter/><Status>Enabled</Status>
    <NoncurrentVersionExpiration><NoncurrentDays>100</NoncurrentDays></NoncurrentVersionExpiration>
  </Rule>
</LifecycleConfiguration>)";

struct EvalCase {
  const char* name;
  VersionFacts v;
  int64_t now;
  Action want;
};

// A current version of `key` (size 500), created 2024-01-01 10:00 UTC.
VersionFacts Current(std::string key, bool versioned = false) {
  VersionFacts v;
  v.key = std::move(key);
  v.size_bytes = 500;
  v.mtime_ns = At(0, 10);
  v.is_latest = true;
  v.versioned_bucket = versioned;
  return v;
}
// A noncurrent version of `key` since 2024-01-01 10:00, `newer` noncurrent ones after it.
VersionFacts Noncurrent(std::string key, uint32_t newer = 0, bool marker = false) {
  VersionFacts v;
  v.key = std::move(key);
  v.size_bytes = marker ? 0 : 500;
  v.mtime_ns = At(-10);
  v.delete_marker = marker;
  v.noncurrent_since_ns = At(0, 10);
  v.newer_noncurrent = newer;
  v.versioned_bucket = true;
  return v;
}
VersionFacts Marker(std::string key, bool only) {
  VersionFacts v;
  v.key = std::move(key);
  v.mtime_ns = At(0, 10);
  v.is_latest = true;
  v.delete_marker = true;
  v.only_version = only;
  v.versioned_bucket = true;
  return v;
}
VersionFacts With(VersionFacts v, std::function<void(VersionFacts&)> f) {
  f(v);
  return v;
}

const Action kNothing{};
Action Del(std::string rule) { return {ActionKind::kDelete, "", std::move(rule)}; }
Action AddMarker(std::string rule) { return {ActionKind::kAddMarker, "", std::move(rule)}; }
Action Move(std::string c, std::string rule) {
  return {ActionKind::kTransition, std::move(c), std::move(rule)};
}

TEST(LifecycleTest, Evaluate) {
  Configuration c = Parse(kRules);
  const std::vector<EvalCase> cases = {
      // Expiration Days: due at the midnight after creation + 10 days.
      {"days: not yet", Current("days/a"), At(10, 23), kNothing},
      {"days: due, unversioned", Current("days/a"), At(11), Del("exp-days")},
      {"days: due, versioned", Current("days/a", true), At(11), AddMarker("exp-days")},
      {"days: other prefix", Current("day/a"), At(400), kNothing},
      // Expiration Date (legacy Prefix).
      {"date: before", Current("date/a"), At(59, 23), kNothing},
      {"date: on the day", Current("date/a"), At(60), Del("exp-date")},
      {"date: versioned", Current("date/a", true), At(61), AddMarker("exp-date")},
      {"date: created after the date",
       With(Current("date/a"), [](auto& v) { v.mtime_ns = At(100); }), At(101), Del("exp-date")},
      // A disabled rule does nothing.
      {"disabled: current", Current("off/a"), At(500), kNothing},
      {"disabled: noncurrent", Noncurrent("off/a"), At(50), kNothing},
      // Delete markers.
      {"marker: the only version", Marker("m/a", true), At(0, 11), Del("markers")},
      {"marker: other versions left", Marker("m/a", false), At(500), kNothing},
      {"marker: Expiration Days never removes one", Marker("md/a", true), At(500), kNothing},
      {"marker: no rule", Marker("x/a", true), At(500), kNothing},
      {"marker flag: a current version is untouched", Current("m/a", true), At(500), kNothing},
      {"marker noncurrent: NoncurrentVersionExpiration", Noncurrent("x/a", 0, true), At(101),
       Del("all")},
      {"marker noncurrent: not yet", Noncurrent("x/a", 0, true), At(100, 23), kNothing},
      // Transitions of current versions: the coldest due one.
      {"tiers: nothing yet", Current("tier/a"), At(30, 23), kNothing},
      {"tiers: STANDARD_IA", Current("tier/a"), At(31), Move("STANDARD_IA", "tiers")},
      {"tiers: GLACIER", Current("tier/a"), At(61), Move("GLACIER", "tiers")},
      {"tiers: DEEP_ARCHIVE", Current("tier/a"), At(181), Move("DEEP_ARCHIVE", "tiers")},
      {"tiers: expiration wins", Current("tier/a"), At(366), Del("tiers")},
      {"tiers: versioned, transition before a marker", Current("tier/a", true), At(366),
       Move("DEEP_ARCHIVE", "tiers")},
      {"tiers: already there",
       With(Current("tier/a"), [](auto& v) { v.storage_class = "DEEP_ARCHIVE"; }), At(200),
       kNothing},
      {"tiers: never warmer", With(Current("tier/a"), [](auto& v) { v.storage_class = "GLACIER"; }),
       At(100), kNothing},
      {"tiers: from GLACIER on",
       With(Current("tier/a"), [](auto& v) { v.storage_class = "GLACIER"; }), At(181),
       Move("DEEP_ARCHIVE", "tiers")},
      {"tiers: same class",
       With(Current("tier/a"), [](auto& v) { v.storage_class = "STANDARD_IA"; }), At(31), kNothing},
      {"tiers: STANDARD spelled out",
       With(Current("tier/a"), [](auto& v) { v.storage_class = "STANDARD"; }), At(31),
       Move("STANDARD_IA", "tiers")},
      {"tier date: before", Current("tdate/a"), At(30, 23), kNothing},
      {"tier date: on the day", Current("tdate/a"), At(31), Move("GLACIER_IR", "tier-date")},
      // Across rules: deletion > transition > marker; coldest; first on ties.
      {"both: only the expiration due yet", Current("both/a", true), At(4),
       AddMarker("both-expire")},
      {"both: unversioned deletion wins", Current("both/a"), At(6), Del("both-expire")},
      {"both: versioned transition wins", Current("both/a", true), At(6),
       Move("GLACIER", "both-move")},
      {"cold: only the 1-day rule due", Current("cold/a"), At(2), Move("GLACIER", "also-glacier")},
      {"cold: coldest of three, first on a tie", Current("cold/a"), At(41),
       Move("GLACIER", "colder")},
      {"cold: from STANDARD_IA",
       With(Current("cold/a"), [](auto& v) { v.storage_class = "STANDARD_IA"; }), At(31),
       Move("GLACIER", "also-glacier")},
      // Noncurrent versions.
      {"nc: not yet", Noncurrent("nc/a", 5), At(5, 23), kNothing},
      {"nc: GLACIER_IR", Noncurrent("nc/a", 0), At(6), Move("GLACIER_IR", "nc")},
      {"nc: GLACIER needs one newer", Noncurrent("nc/a", 0), At(9), Move("GLACIER_IR", "nc")},
      {"nc: GLACIER", Noncurrent("nc/a", 1), At(9), Move("GLACIER", "nc")},
      {"nc: two newest kept", Noncurrent("nc/a", 1), At(11), Move("GLACIER", "nc")},
      {"nc: expired", Noncurrent("nc/a", 2), At(11), Del("nc")},
      {"nc: expired, many newer", Noncurrent("nc/a", 50), At(11), Del("nc")},
      {"nc: expiration not yet", Noncurrent("nc/a", 2), At(10, 23), Move("GLACIER", "nc")},
      {"nc: marker is never moved", Noncurrent("nc/a", 2, true), At(10, 23), kNothing},
      {"nc: marker expires", Noncurrent("nc/a", 2, true), At(11), Del("nc")},
      {"nc: a current version ignores noncurrent rules", Current("nc/a", true), At(500), kNothing},
      {"nc: noncurrent ignores current rules", Noncurrent("days/a"), At(99), kNothing},
      {"nc: the catch-all", Noncurrent("days/a"), At(101), Del("all")},
      // Filters.
      {"tag: matches",
       With(Current("x"),
            [](auto& v) {
              v.tags = {{"tier", "cold"}};
            }),
       At(2), Move("DEEP_ARCHIVE", "tagged")},
      {"tag: other value",
       With(Current("x"),
            [](auto& v) {
              v.tags = {{"tier", "hot"}};
            }),
       At(2), kNothing},
      {"tag: absent", Current("x"), At(2), kNothing},
      {"and: all hold",
       With(Current("and/x"),
            [](auto& v) {
              v.tags = {{"b", "2"}, {"z", "0"}, {"a", "1"}};
            }),
       At(2), Del("and")},
      {"and: a tag missing",
       With(Current("and/x"),
            [](auto& v) {
              v.tags = {{"a", "1"}};
            }),
       At(2), kNothing},
      {"and: prefix",
       With(Current("an/x"),
            [](auto& v) {
              v.tags = {{"a", "1"}, {"b", "2"}};
            }),
       At(2), kNothing},
      {"and: too small",
       With(Current("and/x"),
            [](auto& v) {
              v.tags = {{"a", "1"}, {"b", "2"}};
              v.size_bytes = 100;
            }),
       At(2), kNothing},
      {"and: too big",
       With(Current("and/x"),
            [](auto& v) {
              v.tags = {{"a", "1"}, {"b", "2"}};
              v.size_bytes = 1000;
            }),
       At(2), kNothing},
      {"size: greater", With(Current("x"), [](auto& v) { v.size_bytes = 1000001; }), At(1),
       Move("GLACIER_IR", "big")},
      {"size: not greater", With(Current("x"), [](auto& v) { v.size_bytes = 1000000; }), At(1),
       kNothing},
      {"size: less", With(Current("x"), [](auto& v) { v.size_bytes = 9; }), At(1),
       Move("INTELLIGENT_TIERING", "small")},
      {"size: not less", With(Current("x"), [](auto& v) { v.size_bytes = 10; }), At(1), kNothing},
      {"size: Days 0 is the next midnight", With(Current("x"), [](auto& v) { v.size_bytes = 9; }),
       At(0, 23), kNothing},
  };
  for (const EvalCase& e : cases) {
    Action got = Evaluate(c, e.v, e.now, kDay);
    EXPECT_EQ(got, e.want) << e.name << ": got kind " << static_cast<int>(got.kind) << " "
                           << got.storage_class << " by " << got.rule_id;
  }
}

// Transitions only where AWS supports them, whatever the rule says.
TEST(LifecycleTest, EvaluateFollowsTheSupportedTransitions) {
  Configuration c = Parse(Doc(
      "<Rule><ID>ia</ID><Filter/><Status>Enabled</Status>"
      "<Transition><Days>30</Days><StorageClass>STANDARD_IA</StorageClass></Transition>"
      "<Transition><Days>90</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>"
      "<Rule><ID>it</ID><Filter><Prefix>it/</Prefix></Filter><Status>Enabled</Status>"
      "<Transition><Days>30</Days><StorageClass>INTELLIGENT_TIERING</StorageClass></Transition>"
      "</Rule>"));
  auto in = [](std::string key, std::string cls) {
    return With(Current(std::move(key)), [cls](auto& v) { v.storage_class = cls; });
  };
  EXPECT_EQ(Evaluate(c, in("x", "INTELLIGENT_TIERING"), At(40), kDay), kNothing);
  EXPECT_EQ(Evaluate(c, in("x", "INTELLIGENT_TIERING"), At(100), kDay), Move("GLACIER", "ia"));
  EXPECT_EQ(Evaluate(c, in("x", ""), At(40), kDay), Move("STANDARD_IA", "ia"));
  // STANDARD_IA may go on to INTELLIGENT_TIERING (ranked hotter, but supported).
  EXPECT_EQ(Evaluate(c, in("it/x", "STANDARD_IA"), At(40), kDay), Move("INTELLIGENT_TIERING", "it"));
  EXPECT_EQ(Evaluate(c, in("it/x", "ONEZONE_IA"), At(40), kDay), kNothing);
  EXPECT_EQ(Evaluate(c, in("x", "DEEP_ARCHIVE"), At(400), kDay), kNothing);
}

TEST(LifecycleTest, EvaluateWithShortDays) {
  // --lifecycle-day-seconds 2: a "day" of 2 s, due on even seconds.
  const int64_t day = 2 * kSecond;
  Configuration c = Parse(
      Doc("<Rule><ID>e</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"
          "<Transition><Days>0</Days><StorageClass>GLACIER</StorageClass></Transition>"
          "<NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays></"
          "NoncurrentVersionExpiration></Rule>"));
  VersionFacts v;
  v.key = "k";
  v.mtime_ns = 3 * kSecond;
  v.is_latest = true;
  EXPECT_EQ(Evaluate(c, v, 3 * kSecond, day), kNothing);
  EXPECT_EQ(Evaluate(c, v, 4 * kSecond, day), Move("GLACIER", "e"));  // Days 0: the next boundary
  EXPECT_EQ(Evaluate(c, v, 6 * kSecond - 1, day), Move("GLACIER", "e"));
  EXPECT_EQ(Evaluate(c, v, 6 * kSecond, day), Del("e"));  // 3 s + 2 s -> 6 s
  VersionFacts nc;
  nc.key = "k";
  nc.noncurrent_since_ns = 1 * kSecond;
  nc.versioned_bucket = true;
  EXPECT_EQ(Evaluate(c, nc, 7 * kSecond, day), kNothing);  // 1 s + 6 s -> 8 s
  EXPECT_EQ(Evaluate(c, nc, 8 * kSecond, day), Del("e"));
  EXPECT_EQ(Evaluate(Configuration{}, v, 1000 * kSecond, day), kNothing);
}

TEST(LifecycleTest, AbortDue) {
  Configuration c = Parse(
      Doc("<Rule><ID>off</ID><Prefix>up/</Prefix><Status>Disabled</Status>" + Abort("1") +
          "</Rule>"
          "<Rule><ID>legacy</ID><Prefix>up/</Prefix><Status>Enabled</Status>" +
          Abort("3") +
          "</Rule>"
          "<Rule><ID>filter</ID><Filter><Prefix>up/</Prefix></Filter><Status>Enabled</Status>" +
          Abort("2") +
          "</Rule>"
          "<Rule><ID>and</ID><Filter><And><Prefix>and/</Prefix></And></Filter><Status>Enabled</"
          "Status>" +
          Abort("1") +
          "</Rule>"
          "<Rule><ID>noabort</ID><Filter><Prefix>no/</Prefix></Filter><Status>Enabled</Status>" +
          kOk +
          "</Rule>"
          "<Rule><ID>every</ID><Filter/><Status>Enabled</Status>" +
          Abort("10") + "</Rule>"));
  EXPECT_EQ(AbortDue(c, "up/a", At(0, 10), At(2, 23), kDay), std::nullopt);  // "off" is disabled
  EXPECT_EQ(AbortDue(c, "up/a", At(0, 10), At(3), kDay), "filter");          // the first due
  EXPECT_EQ(AbortDue(c, "up/a", At(0, 10), At(4), kDay), "legacy");
  EXPECT_EQ(AbortDue(c, "and/a", At(0, 10), At(2), kDay), "and");
  EXPECT_EQ(AbortDue(c, "and/a", At(0, 10), At(1, 23), kDay), std::nullopt);
  EXPECT_EQ(AbortDue(c, "no/a", At(0, 10), At(10, 23), kDay), std::nullopt);
  EXPECT_EQ(AbortDue(c, "no/a", At(0, 10), At(11), kDay), "every");
  EXPECT_EQ(AbortDue(c, "up", At(0, 10), At(11), kDay), "every");
  // Tag and size filters never select an upload (a hand-built rule; parsing
  // refuses them with AbortIncompleteMultipartUpload).
  Configuration t;
  Rule r = Simple("t", FilterForm::kFilter, Filter{"", {{"k", "v"}}, {}, {}});
  r.abort_upload_days = 1;
  t.rules.push_back(r);
  r.id = "s";
  r.filter = Filter{"", {}, {}, 100};
  t.rules.push_back(r);
  EXPECT_EQ(AbortDue(t, "a", At(0), At(100), kDay), std::nullopt);
  r.id = "p";
  r.filter = {};
  t.rules.push_back(r);
  EXPECT_EQ(AbortDue(t, "a", At(0), At(100), kDay), "p");
  EXPECT_EQ(AbortDue(t, "a", 0, 2 * kSecond - 1, 2 * kSecond), std::nullopt);  // 1 day of 2 s
  EXPECT_EQ(AbortDue(t, "a", 0, 2 * kSecond, 2 * kSecond), "p");
}

TEST(LifecycleTest, ExpirationOf) {
  Configuration c = Parse(Doc(
      "<Rule><ID>long</ID><Filter><Prefix>a</Prefix></Filter><Status>Enabled</Status>" + Exp("30") +
      "</Rule>"
      "<Rule><ID>off</ID><Filter><Prefix>a</Prefix></Filter><Status>Disabled</Status>" +
      Exp("1") +
      "</Rule>"
      "<Rule><ID>short</ID><Filter><Prefix>ab</Prefix></Filter><Status>Enabled</Status>" +
      Exp("5") +
      "</Rule>"
      "<Rule><ID>same</ID><Filter><Prefix>ab</Prefix></Filter><Status>Enabled</Status>" +
      Exp("5") +
      "</Rule>"
      "<Rule><ID>date</ID><Filter><Prefix>abc</Prefix></Filter><Status>Enabled</Status>"
      "<Expiration><Date>2024-01-03T00:00:00Z</Date></Expiration></Rule>"
      "<Rule><ID>move</ID><Filter/><Status>Enabled</Status>" +
      Tr(Days(0), "GLACIER") +
      "</Rule>"
      "<Rule><ID>marker</ID><Filter/><Status>Enabled</Status>"
      "<Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></"
      "Rule>"));
  auto info = ExpirationOf(c, Current("a/x"), kDay);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->expiry_ns, At(31));
  EXPECT_EQ(info->rule_id, "long");
  info = ExpirationOf(c, Current("abx"), kDay);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->expiry_ns, At(6));
  EXPECT_EQ(info->rule_id, "short");  // the earliest; the first of equals
  info = ExpirationOf(c, Current("abc"), kDay);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->expiry_ns, At(2));
  EXPECT_EQ(info->rule_id, "date");
  info = ExpirationOf(c, Current("abc"), 2 * kSecond);  // short days: Days 5 long past the Date
  ASSERT_TRUE(info);
  EXPECT_EQ(info->rule_id, "short");
  EXPECT_EQ(ExpirationOf(c, Current("zzz"), kDay),
            std::nullopt);  // only a transition and the marker flag
  EXPECT_EQ(ExpirationOf(c, Marker("a/x", true), kDay), std::nullopt);
  EXPECT_EQ(ExpirationOf(c, Noncurrent("a/x"), kDay), std::nullopt);
  EXPECT_EQ(ExpirationOf(c, With(Current("a/x", true), [](auto&) {}), kDay)->rule_id, "long");
}

// x-amz-transition-default-minimum-object-size: a small version is not
// transitioned by a rule without a size filter, and the expiration that the
// transition would have outranked still applies.
TEST(LifecycleMinimumSize, SmallVersionsSkipTransitionsNotExpiration) {
  Rule r;
  r.id = "r";
  r.transitions.push_back({When{1, std::nullopt}, "GLACIER_IR"});
  r.expiration = When{2, std::nullopt};
  Configuration c;
  c.rules = {r};
  VersionFacts v;
  v.key = "k";
  v.size_bytes = 1000;
  v.is_latest = true;
  v.versioned_bucket = true;
  v.min_transition_bytes = 128 << 10;
  const int64_t day = 1'000'000'000, later = 10 * day;
  EXPECT_EQ(Evaluate(c, v, later, day).kind, ActionKind::kAddMarker);
  v.size_bytes = 200 << 10;
  EXPECT_EQ(Evaluate(c, v, later, day).kind, ActionKind::kTransition);
  // A size filter overrides the default minimum.
  c.rules[0].filter_form = FilterForm::kFilter;
  c.rules[0].filter.size_greater_than = 10;
  v.size_bytes = 1000;
  EXPECT_EQ(Evaluate(c, v, later, day).kind, ActionKind::kTransition);
}

}  // namespace
}  // namespace strata::tier

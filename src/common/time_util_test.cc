#include "common/time_util.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

namespace strata {
namespace {

constexpr int64_t kNs = 1000000000;
constexpr int64_t k1994 = 784111777;        // Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example)
constexpr int64_t k1999End = 946684799;     // 1999-12-31T23:59:59Z
constexpr int64_t k2000 = 946684800;        // 2000-01-01T00:00:00Z
constexpr int64_t k2038Max = 2147483647;    // 2038-01-19T03:14:07Z, the last 32-bit time_t
constexpr int64_t k2100Mar1 = 4107542400;   // 2100-03-01T00:00:00Z (2100 is no leap year)
constexpr int64_t k2024 = 1704067200;       // 2024-01-01T00:00:00Z

// ---- calendar ---------------------------------------------------------------------

TEST(CalendarTest, LeapYears) {
  for (int64_t y : {1996, 2000, 2004, 2024, 2400}) EXPECT_TRUE(IsLeapYear(y)) << y;
  for (int64_t y : {1900, 1999, 2023, 2100, 2200}) EXPECT_FALSE(IsLeapYear(y)) << y;
  EXPECT_EQ(DaysInMonth(2024, 2), 29);
  EXPECT_EQ(DaysInMonth(2100, 2), 28);
  EXPECT_EQ(DaysInMonth(2000, 2), 29);
  EXPECT_EQ(DaysInMonth(2023, 4), 30);
  EXPECT_EQ(DaysInMonth(2023, 12), 31);
  EXPECT_EQ(DaysInMonth(2023, 13), 0);
}

TEST(CalendarTest, CivilRoundTripsAndWeekdays) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(1969, 12, 31), -1);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1) - DaysFromCivil(2000, 2, 28), 2);
  EXPECT_EQ(DaysFromCivil(2100, 3, 1) - DaysFromCivil(2100, 2, 28), 1);
  const CivilTime epoch = CivilFromUnix(0);
  EXPECT_EQ(epoch.year, 1970);
  EXPECT_EQ(epoch.weekday, 4);  // Thursday
  const CivilTime before = CivilFromUnix(-1);
  EXPECT_EQ(before.year, 1969);
  EXPECT_EQ(before.month, 12);
  EXPECT_EQ(before.day, 31);
  EXPECT_EQ(before.second, 59);
  EXPECT_EQ(before.weekday, 3);  // Wednesday
  EXPECT_EQ(CivilFromUnix(k2000).weekday, 6);  // Saturday
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> any(-62135596800, 253402300799);  // years 1..9999
  for (int i = 0; i < 20000; ++i) {
    const int64_t t = any(rng);
    const CivilTime c = CivilFromUnix(t);
    EXPECT_EQ(UnixFromCivil(c.year, c.month, c.day, c.hour, c.minute, c.second), t) << t;
  }
}

TEST(CalendarTest, UnixFromCivilRefusesOutOfRangeFields) {
  EXPECT_EQ(UnixFromCivil(2024, 2, 29, 0, 0, 0), 1709164800);
  EXPECT_FALSE(UnixFromCivil(2023, 2, 29, 0, 0, 0));
  EXPECT_FALSE(UnixFromCivil(2100, 2, 29, 0, 0, 0));
  EXPECT_FALSE(UnixFromCivil(1900, 2, 29, 0, 0, 0));
  EXPECT_FALSE(UnixFromCivil(2024, 2, 30, 0, 0, 0));
  EXPECT_FALSE(UnixFromCivil(2024, 4, 31, 0, 0, 0));
  EXPECT_FALSE(UnixFromCivil(2024, 0, 1, 0, 0, 0));
  EXPECT_FALSE(UnixFromCivil(2024, 13, 1, 0, 0, 0));
  EXPECT_FALSE(UnixFromCivil(2024, 1, 0, 0, 0, 0));
  EXPECT_FALSE(UnixFromCivil(2024, 1, 1, 24, 0, 0));
  EXPECT_FALSE(UnixFromCivil(2024, 1, 1, 0, 60, 0));
  EXPECT_FALSE(UnixFromCivil(2024, 1, 1, 0, 0, 60));
  EXPECT_FALSE(UnixFromCivil(-1, 1, 1, 0, 0, 0));
}

// ---- ISO 8601 basic ------------------------------------------------------------------

TEST(AmzDateTest, FormatsAndParsesEdges) {
  const std::pair<int64_t, const char*> kCases[] = {
      {0, "19700101T000000Z"},
      {1369353600, "20130524T000000Z"},
      {k1999End, "19991231T235959Z"},
      {k2000, "20000101T000000Z"},
      {951782400, "20000229T000000Z"},
      {k2038Max, "20380119T031407Z"},
      {k2038Max + 1, "20380119T031408Z"},
      {k2100Mar1 - 1, "21000228T235959Z"},
      {k2100Mar1, "21000301T000000Z"},
      {-1, "19691231T235959Z"},
  };
  for (const auto& [t, text] : kCases) {
    EXPECT_EQ(FormatAmzDate(t), text);
    EXPECT_EQ(ParseAmzDate(text), t) << text;
  }
}

TEST(AmzDateTest, RoundTrips) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int64_t> any(0, 253402300799);  // up to 9999-12-31T23:59:59Z
  for (int i = 0; i < 20000; ++i) {
    const int64_t t = any(rng);
    EXPECT_EQ(ParseAmzDate(FormatAmzDate(t)), t) << t;
  }
}

TEST(AmzDateTest, RefusesInvalidFields) {
  for (const char* bad : {"20130524T000000", "20130524T000000z", "20130524 000000Z",
                          "2013-05-24T00:00:00Z", "20131324T000000Z", "20130024T000000Z",
                          "20130532T000000Z", "20130229T000000Z", "21000229T000000Z",
                          "20130524T240000Z", "20130524T006000Z", "20130524T000060Z",
                          "2013052AT000000Z", "+0130524T000000Z", " 20130524T000000Z", ""}) {
    EXPECT_FALSE(ParseAmzDate(bad)) << bad;
  }
}

// ---- HTTP dates ----------------------------------------------------------------------

TEST(HttpDateTest, FormatsImfFixdate) {
  EXPECT_EQ(FormatHttpDate(k1994 * kNs), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(FormatHttpDate(k1994 * kNs + 999999999), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(FormatHttpDate(k1999End * kNs), "Fri, 31 Dec 1999 23:59:59 GMT");
  EXPECT_EQ(FormatHttpDate((k2038Max + 1) * kNs), "Tue, 19 Jan 2038 03:14:08 GMT");
  EXPECT_EQ(FormatHttpDate(k2100Mar1 * kNs), "Mon, 01 Mar 2100 00:00:00 GMT");
  EXPECT_EQ(FormatHttpDate(-kNs), "Wed, 31 Dec 1969 23:59:59 GMT");
  EXPECT_EQ(FormatHttpDate(int64_t{1796547907} * kNs), "Sun, 06 Dec 2026 09:05:07 GMT");
  // The ends of what int64 nanoseconds can say.
  EXPECT_EQ(FormatHttpDate(std::numeric_limits<int64_t>::max()), "Fri, 11 Apr 2262 23:47:16 GMT");
  EXPECT_EQ(FormatHttpDate(std::numeric_limits<int64_t>::min()), "Tue, 21 Sep 1677 00:12:43 GMT");
}

TEST(HttpDateTest, ParsesTheThreeFormsRfc9110Names) {
  EXPECT_EQ(ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT", k2024), k1994);
  EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT", k2024), k1994);
  EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994", k2024), k1994);
  EXPECT_EQ(ParseHttpDate("Sun Nov 06 08:49:37 1994", k2024), k1994);
  EXPECT_EQ(ParseHttpDate("Mon, 01 Mar 2100 00:00:00 GMT", k2024), k2100Mar1);
  EXPECT_EQ(ParseHttpDate("Tue, 19 Jan 2038 03:14:08 GMT", k2024), k2038Max + 1);
  EXPECT_EQ(ParseHttpDate("Fri, 31 Dec 1999 23:59:59 GMT"), k1999End);  // the clock's "now"
}

TEST(HttpDateTest, RoundTripsFormattedDates) {
  std::mt19937_64 rng(13);
  std::uniform_int_distribution<int64_t> any(0, 9000000000);  // nanoseconds fit int64 until 2262
  for (int i = 0; i < 20000; ++i) {
    const int64_t t = any(rng);
    EXPECT_EQ(ParseHttpDate(FormatHttpDate(t * kNs), k2024), t) << t;
  }
}

TEST(HttpDateTest, TwoDigitYearsAreNeverMoreThanFiftyYearsAhead) {
  auto year_of = [](std::string_view date, int64_t now) {
    std::optional<int64_t> t = ParseHttpDate(date, now);
    return t ? CivilFromUnix(*t).year : -1;
  };
  EXPECT_EQ(year_of("Monday, 01-Jan-74 00:00:00 GMT", k2024), 2074);
  EXPECT_EQ(year_of("Tuesday, 01-Jan-75 00:00:00 GMT", k2024), 1975);
  EXPECT_EQ(year_of("Wednesday, 01-Jan-30 00:00:00 GMT", k2024), 2030);
  EXPECT_EQ(year_of("Friday, 31-Dec-99 23:59:59 GMT", k2024), 1999);
  const int64_t in_2090 = 3786912000;  // 2090-01-01
  EXPECT_EQ(year_of("Tuesday, 01-Jan-10 00:00:00 GMT", in_2090), 2110);
  EXPECT_EQ(year_of("Thursday, 01-Jan-70 00:00:00 GMT", in_2090), 2070);
}

TEST(HttpDateTest, RefusesOtherFormsAndInvalidFields) {
  for (const char* bad : {
           "Sun, 06 Nov 1994 08:49:37 UTC",   // IMF-fixdate is GMT only
           "Sun, 06 Nov 1994 08:49:37 +0000",
           "Sun, 6 Nov 1994 08:49:37 GMT",
           "Sun, 06 Nov 94 08:49:37 GMT",
           "Sun 06 Nov 1994 08:49:37 GMT",
           "Xyz, 06 Nov 1994 08:49:37 GMT",
           "Sun, 06 Nox 1994 08:49:37 GMT",
           "Sun, 29 Feb 2100 00:00:00 GMT",
           "Sun, 30 Feb 2024 00:00:00 GMT",
           "Sun, 06 Nov 1994 24:00:00 GMT",
           "Sun, 06 Nov 1994 08:60:00 GMT",
           "Sun, 06 Nov 1994 08:49:60 GMT",
           "Sun, 06 Nov 1994 08:49:37 GMT ",
           "Sun, 06 Nov 1994 8:49:37 GMT",
           "Sun, 06 Nov 1994 08:49:37",
           "Sunday, 06-Nov-1994 08:49:37 GMT",
           "Sun, 06-Nov-94 08:49:37 GMT",
           "Sunday, 06-Nov-94 08:49:37 UTC",
           "Sun Nov  6 08:49:37 94",
           "Sun Nov 6 08:49:37 1994",
           "Sun Nov 31 08:49:37 1994",
           "1994-11-06T08:49:37Z",
           "784111777",
           "",
       }) {
    EXPECT_FALSE(ParseHttpDate(bad, k2024)) << bad;
  }
}

TEST(Rfc1123DateTest, AcceptsZonesAndAppliesOffsets) {
  EXPECT_EQ(ParseRfc1123Date("Sun, 06 Nov 1994 08:49:37 GMT"), k1994);
  EXPECT_EQ(ParseRfc1123Date("Sun, 06 Nov 1994 08:49:37 UTC"), k1994);
  EXPECT_EQ(ParseRfc1123Date("Sun, 06 Nov 1994 08:49:37 Z"), k1994);
  EXPECT_EQ(ParseRfc1123Date("Sun, 06 Nov 1994 08:49:37 +0000"), k1994);
  EXPECT_EQ(ParseRfc1123Date("Sun, 06 Nov 1994 08:49:37 -0000"), k1994);
  EXPECT_EQ(ParseRfc1123Date("Sun, 06 Nov 1994 01:49:37 -0700"), k1994);
  EXPECT_EQ(ParseRfc1123Date("Sun, 06 Nov 1994 10:19:37 +0130"), k1994);
  for (const char* bad : {"Sun, 06 Nov 1994 08:49:37 +2400", "Sun, 06 Nov 1994 08:49:37 +0060",
                          "Sun, 06 Nov 1994 08:49:37 GMT+1", "Sun, 06 Nov 1994 08:49:37 CET",
                          "Sun, 06 Nov 1994 08:49:37 ", "Sunday, 06-Nov-94 08:49:37 GMT",
                          "Sun Nov  6 08:49:37 1994", "Sun, 31 Nov 1994 08:49:37 GMT"}) {
    EXPECT_FALSE(ParseRfc1123Date(bad)) << bad;
  }
}

// ---- ISO 8601 extended ---------------------------------------------------------------

TEST(Iso8601Test, FormatsMilliseconds) {
  EXPECT_EQ(FormatIso8601(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatIso8601(1255369800 * kNs + 123456789), "2009-10-12T17:50:00.123Z");
  EXPECT_EQ(FormatIso8601(k1999End * kNs + 999999999), "1999-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatIso8601(k2038Max * kNs), "2038-01-19T03:14:07.000Z");
  EXPECT_EQ(FormatIso8601(k2100Mar1 * kNs), "2100-03-01T00:00:00.000Z");
}

TEST(Iso8601Test, ParsesWithAndWithoutFraction) {
  EXPECT_EQ(ParseIso8601Ms("2015-12-30T12:00:00.000Z"), 1451476800000);
  EXPECT_EQ(ParseIso8601Ms("2015-12-30T12:00:00Z"), 1451476800000);
  EXPECT_EQ(ParseIso8601Ms("1970-01-01T00:00:01.5Z"), 1500);
  EXPECT_EQ(ParseIso8601Ms("1970-01-01T00:00:01.123456Z"), 1123);
  EXPECT_EQ(ParseIso8601Ms("2024-02-29T23:59:59.999Z"), 1709251199999);
  EXPECT_EQ(ParseIso8601Ms("2100-03-01t00:00:00z"), k2100Mar1 * 1000);
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<int64_t> any(0, 9000000000000);  // milliseconds, until 2255
  for (int i = 0; i < 20000; ++i) {
    const int64_t ms = any(rng);
    EXPECT_EQ(ParseIso8601Ms(FormatIso8601(ms * 1000000)), ms) << ms;
  }
}

TEST(Iso8601Test, RefusesInvalidFields) {
  for (const char* bad : {"2015-12-30T12:00:00", "2015-12-30 12:00:00Z", "2015-13-30T12:00:00Z",
                          "2015-12-30T12:00:00.Z", "2015-02-29T00:00:00Z", "2100-02-29T00:00:00Z",
                          "2015-12-32T00:00:00Z", "2015-12-30T24:00:00Z", "2015-12-30T12:00:60Z",
                          "2015-12-30T12:00:00+00:00", "2015-12-30T12:00:00.000ZZ", "yesterday",
                          ""}) {
    EXPECT_FALSE(ParseIso8601Ms(bad)) << bad;
  }
}

}  // namespace
}  // namespace strata

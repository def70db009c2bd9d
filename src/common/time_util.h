// The clock and every date format strata reads or writes, one implementation
// each (UTC throughout, proleptic Gregorian calendar):
//
//   ISO 8601 basic     20130524T000000Z                 SigV4 x-amz-date / X-Amz-Date
//   IMF-fixdate        Fri, 24 May 2013 00:00:00 GMT    HTTP Date, Last-Modified (RFC 9110)
//   RFC 850 (obsolete) Friday, 24-May-13 00:00:00 GMT   accepted in HTTP-date fields
//   asctime            Fri May 24 00:00:00 2013         accepted in HTTP-date fields
//   ISO 8601 extended  2013-05-24T00:00:00.000Z         S3 XML, POST policy expiration
//
// Parsers take the whole string (no leading or trailing text) and refuse
// out-of-range fields: month 13, Feb 29 of a common year, hour 24, second 60.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

int64_t UnixNowNs();
// Monotonic nanoseconds (steady clock: intervals, deadlines, pacing; not a date).
int64_t SteadyNowNs();

// ---- calendar ------------------------------------------------------------------
bool IsLeapYear(int64_t year);
int DaysInMonth(int64_t year, int month);  // month 1-12
// Days since 1970-01-01 of a date (fields not range-checked; H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t year, int month, int day);

struct CivilTime {
  int64_t year;
  int month;    // 1-12
  int day;      // 1-31
  int hour;     // 0-23
  int minute;   // 0-59
  int second;   // 0-59
  int weekday;  // 0 = Sunday
};
CivilTime CivilFromUnix(int64_t unix_seconds);
// Unix seconds of valid fields; nullopt if any is out of range.
std::optional<int64_t> UnixFromCivil(int64_t year, int month, int day, int hour, int minute,
                                     int second);

// ---- ISO 8601 basic (SigV4) ------------------------------------------------------
std::string FormatAmzDate(int64_t unix_seconds);  // "20130524T000000Z"
std::optional<int64_t> ParseAmzDate(std::string_view s);

// ---- HTTP dates (RFC 9110 section 5.6.7) -------------------------------------------
std::string FormatHttpDate(int64_t unix_ns);  // IMF-fixdate "Wed, 12 Oct 2009 17:50:00 GMT"
// Any of the three HTTP-date forms, as a recipient must accept them
// (If-Modified-Since, x-amz-copy-source-if-unmodified-since, ...). A two-digit
// RFC 850 year is the year with those digits nearest `now_unix`, never more
// than 50 years ahead of it. Unix seconds.
std::optional<int64_t> ParseHttpDate(std::string_view s, int64_t now_unix);
std::optional<int64_t> ParseHttpDate(std::string_view s);  // now: the clock
// The IMF-fixdate layout with an RFC 5322 zone: "GMT", "UTC", "Z" or a numeric
// "+0000" / "-0700" (SigV2 clients such as s3cmd send that form in Date and
// x-amz-date). Unix seconds, the offset applied. Only this form is accepted
// for signed request times.
std::optional<int64_t> ParseRfc1123Date(std::string_view s);

// ---- ISO 8601 extended (S3 XML) -------------------------------------------------------
std::string FormatIso8601(int64_t unix_ns);  // "2009-10-12T17:50:00.000Z"
// "2009-10-12T17:50:00Z", optionally with a fraction ("...:00.5Z"); unix
// milliseconds, the fraction truncated to them.
std::optional<int64_t> ParseIso8601Ms(std::string_view s);

}  // namespace strata

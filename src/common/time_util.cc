#include "common/time_util.h"

#include <array>
#include <chrono>
#include <cstdio>

namespace strata {

namespace {

constexpr int64_t kSecondsPerDay = 86400;
constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<std::string_view, 7> kDays = {"Sun", "Mon", "Tue", "Wed",
                                                   "Thu", "Fri", "Sat"};
constexpr std::array<std::string_view, 7> kLongDays = {
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// A fixed-width run of decimal digits; -1 if any character is not one.
int Digits(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return -1;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// 1-12 for "Jan".."Dec", 0 otherwise.
int MonthFromName(std::string_view name) {
  for (size_t i = 0; i < kMonths.size(); ++i) {
    if (kMonths[i] == name) return static_cast<int>(i) + 1;
  }
  return 0;
}

template <size_t N>
bool IsOneOf(std::string_view s, const std::array<std::string_view, N>& names) {
  for (std::string_view name : names) {
    if (s == name) return true;
  }
  return false;
}

// "HH:MM:SS" at `at`.
bool ParseClock(std::string_view s, size_t at, int* hour, int* minute, int* second) {
  if (at + 8 > s.size() || s[at + 2] != ':' || s[at + 5] != ':') return false;
  *hour = Digits(s, at, 2);
  *minute = Digits(s, at + 3, 2);
  *second = Digits(s, at + 6, 2);
  return *hour >= 0 && *minute >= 0 && *second >= 0;
}

// Seconds east of UTC: "GMT", "UTC", "Z" or "+HHMM"/"-HHMM".
std::optional<int64_t> ZoneOffset(std::string_view zone) {
  if (zone == "GMT" || zone == "UTC" || zone == "Z") return 0;
  if (zone.size() != 5 || (zone[0] != '+' && zone[0] != '-')) return std::nullopt;
  const int hours = Digits(zone, 1, 2), minutes = Digits(zone, 3, 2);
  if (hours < 0 || minutes < 0 || hours > 23 || minutes > 59) return std::nullopt;
  const int64_t offset = hours * 3600 + minutes * 60;
  return zone[0] == '+' ? offset : -offset;
}

// "Sun, 06 Nov 1994 08:49:37 <zone>": the zone is returned for the caller to judge.
std::optional<int64_t> ParseFixdateLayout(std::string_view s, std::string_view* zone) {
  // "Sun, 06 Nov 1994 08:49:37 " is 26 characters.
  if (s.size() < 27 || s.substr(3, 2) != ", " || s[7] != ' ' || s[11] != ' ' || s[16] != ' ' ||
      s[25] != ' ' || !IsOneOf(s.substr(0, 3), kDays)) {
    return std::nullopt;
  }
  int hour, minute, second;
  if (!ParseClock(s, 17, &hour, &minute, &second)) return std::nullopt;
  *zone = s.substr(26);
  return UnixFromCivil(Digits(s, 12, 4), MonthFromName(s.substr(8, 3)), Digits(s, 5, 2), hour,
                       minute, second);
}

// "Sunday, 06-Nov-94 08:49:37 GMT" (RFC 850, obsolete).
std::optional<int64_t> ParseRfc850(std::string_view s, int64_t now_unix) {
  const size_t comma = s.find(", ");
  if (comma == std::string_view::npos || !IsOneOf(s.substr(0, comma), kLongDays)) {
    return std::nullopt;
  }
  std::string_view rest = s.substr(comma + 2);  // "06-Nov-94 08:49:37 GMT"
  if (rest.size() != 22 || rest[2] != '-' || rest[6] != '-' || rest[9] != ' ' ||
      rest.substr(18) != " GMT") {
    return std::nullopt;
  }
  const int yy = Digits(rest, 7, 2);
  int hour, minute, second;
  if (yy < 0 || !ParseClock(rest, 10, &hour, &minute, &second)) return std::nullopt;
  // RFC 9110: a year that appears more than 50 years in the future is the
  // most recent past year with the same last two digits.
  const int64_t now_year = CivilFromUnix(now_unix).year;
  int64_t year = FloorDiv(now_year, 100) * 100 + yy;
  if (year > now_year + 50) {
    year -= 100;
  } else if (year <= now_year - 50) {
    year += 100;
  }
  return UnixFromCivil(year, MonthFromName(rest.substr(3, 3)), Digits(rest, 0, 2), hour, minute,
                       second);
}

// "Sun Nov  6 08:49:37 1994" (C asctime); the day may also be "06".
std::optional<int64_t> ParseAsctime(std::string_view s) {
  if (s.size() != 24 || s[3] != ' ' || s[7] != ' ' || s[10] != ' ' || s[19] != ' ' ||
      !IsOneOf(s.substr(0, 3), kDays)) {
    return std::nullopt;
  }
  const int day = s[8] == ' ' ? Digits(s, 9, 1) : Digits(s, 8, 2);
  int hour, minute, second;
  if (day < 0 || !ParseClock(s, 11, &hour, &minute, &second)) return std::nullopt;
  return UnixFromCivil(Digits(s, 20, 4), MonthFromName(s.substr(4, 3)), day, hour, minute, second);
}

}  // namespace

int64_t UnixNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---- calendar ------------------------------------------------------------------

bool IsLeapYear(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int DaysInMonth(int64_t year, int month) {
  static constexpr int kLengths[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12) return 0;
  return month == 2 && IsLeapYear(year) ? 29 : kLengths[month - 1];
}

int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2;
  const int64_t era = FloorDiv(year, 400);
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

CivilTime CivilFromUnix(int64_t unix_seconds) {
  const int64_t days = FloorDiv(unix_seconds, kSecondsPerDay);
  const int64_t second_of_day = unix_seconds - days * kSecondsPerDay;
  const int64_t z = days + 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t day_of_era = z - era * 146097;
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t mp = (5 * day_of_year + 2) / 153;
  CivilTime t;
  t.day = static_cast<int>(day_of_year - (153 * mp + 2) / 5 + 1);
  t.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  t.year = year_of_era + era * 400 + (t.month <= 2);
  t.hour = static_cast<int>(second_of_day / 3600);
  t.minute = static_cast<int>(second_of_day / 60 % 60);
  t.second = static_cast<int>(second_of_day % 60);
  const int64_t weekday = (days + 4) % 7;  // 1970-01-01 was a Thursday
  t.weekday = static_cast<int>(weekday < 0 ? weekday + 7 : weekday);
  return t;
}

std::optional<int64_t> UnixFromCivil(int64_t year, int month, int day, int hour, int minute,
                                     int second) {
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) ||
      hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    return std::nullopt;
  }
  return DaysFromCivil(year, month, day) * kSecondsPerDay + hour * 3600 + minute * 60 + second;
}

// ---- ISO 8601 basic ------------------------------------------------------------------

std::string FormatAmzDate(int64_t unix_seconds) {
  const CivilTime t = CivilFromUnix(unix_seconds);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04lld%02d%02dT%02d%02d%02dZ", static_cast<long long>(t.year),
                t.month, t.day, t.hour, t.minute, t.second);
  return buf;
}

std::optional<int64_t> ParseAmzDate(std::string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return std::nullopt;
  const int year = Digits(s, 0, 4), month = Digits(s, 4, 2), day = Digits(s, 6, 2);
  const int hour = Digits(s, 9, 2), minute = Digits(s, 11, 2), second = Digits(s, 13, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) {
    return std::nullopt;
  }
  return UnixFromCivil(year, month, day, hour, minute, second);
}

// ---- HTTP dates ----------------------------------------------------------------------

std::string FormatHttpDate(int64_t unix_ns) {
  const CivilTime t = CivilFromUnix(FloorDiv(unix_ns, 1000000000));
  // Every response carries one or two of these (Date, Last-Modified):
  // written digit by digit, where snprintf cost ~3k instructions each.
  // Nanoseconds in an int64 span the years 1677 to 2262: always four digits.
  std::string out = "Www, DD Mmm YYYY HH:MM:SS GMT";
  auto two = [&out](size_t at, int v) {
    out[at] = static_cast<char>('0' + v / 10);
    out[at + 1] = static_cast<char>('0' + v % 10);
  };
  out.replace(0, 3, kDays[t.weekday]);
  two(5, t.day);
  out.replace(8, 3, kMonths[t.month - 1]);
  two(12, static_cast<int>(t.year / 100));
  two(14, static_cast<int>(t.year % 100));
  two(17, t.hour);
  two(20, t.minute);
  two(23, t.second);
  return out;
}

std::optional<int64_t> ParseHttpDate(std::string_view s, int64_t now_unix) {
  std::string_view zone;
  if (std::optional<int64_t> t = ParseFixdateLayout(s, &zone)) {
    if (zone == "GMT") return t;
    return std::nullopt;
  }
  if (std::optional<int64_t> t = ParseRfc850(s, now_unix)) return t;
  return ParseAsctime(s);
}

std::optional<int64_t> ParseHttpDate(std::string_view s) {
  return ParseHttpDate(s, UnixNowNs() / 1000000000);
}

std::optional<int64_t> ParseRfc1123Date(std::string_view s) {
  std::string_view zone;
  std::optional<int64_t> t = ParseFixdateLayout(s, &zone);
  if (!t) return std::nullopt;
  std::optional<int64_t> offset = ZoneOffset(zone);
  if (!offset) return std::nullopt;
  return *t - *offset;
}

// ---- ISO 8601 extended ---------------------------------------------------------------

std::string FormatIso8601(int64_t unix_ns) {
  const int64_t ms = FloorDiv(unix_ns, 1000000);
  const CivilTime t = CivilFromUnix(FloorDiv(ms, 1000));
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ",
                static_cast<long long>(t.year), t.month, t.day, t.hour, t.minute, t.second,
                static_cast<int>(ms - FloorDiv(ms, 1000) * 1000));
  return buf;
}

std::optional<int64_t> ParseIso8601Ms(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.fraction]Z; 't' and 'z' as ISO 8601 allows.
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't')) {
    return std::nullopt;
  }
  const int year = Digits(s, 0, 4), month = Digits(s, 5, 2), day = Digits(s, 8, 2);
  int hour, minute, second;
  if (year < 0 || month < 0 || day < 0 || !ParseClock(s, 11, &hour, &minute, &second)) {
    return std::nullopt;
  }
  size_t i = 19;
  int64_t ms = 0;
  if (s[i] == '.') {
    const size_t start = ++i;
    int64_t scale = 100;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, scale /= 10) ms += (s[i] - '0') * scale;
    if (i == start) return std::nullopt;
  }
  if (i + 1 != s.size() || (s[i] != 'Z' && s[i] != 'z')) return std::nullopt;
  std::optional<int64_t> t = UnixFromCivil(year, month, day, hour, minute, second);
  if (!t) return std::nullopt;
  return *t * 1000 + ms;
}

}  // namespace strata

#include "common/time_util.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace strata {

int64_t UnixNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string FormatHttpDate(int64_t unix_ns) {
  time_t secs = static_cast<time_t>(unix_ns / 1000000000);
  tm t;
  gmtime_r(&secs, &t);
  char buf[64];
  strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &t);
  return buf;
}

std::string FormatIso8601(int64_t unix_ns) {
  time_t secs = static_cast<time_t>(unix_ns / 1000000000);
  int millis = static_cast<int>((unix_ns / 1000000) % 1000);
  tm t;
  gmtime_r(&secs, &t);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", t.tm_year + 1900,
                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, millis);
  return buf;
}

std::optional<int64_t> ParseHttpDate(std::string_view s) {
  std::string str(s);
  for (const char* fmt : {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT",
                          "%a %b %d %H:%M:%S %Y"}) {
    tm t{};
    const char* end = strptime(str.c_str(), fmt, &t);
    if (end && *end == '\0') return static_cast<int64_t>(timegm(&t));
  }
  return std::nullopt;
}

}  // namespace strata

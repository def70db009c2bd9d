// Time formats S3 uses: RFC 7231 HTTP dates and ISO 8601 with milliseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

int64_t UnixNowNs();
std::string FormatHttpDate(int64_t unix_ns);  // "Wed, 12 Oct 2009 17:50:00 GMT"
std::string FormatIso8601(int64_t unix_ns);   // "2009-10-12T17:50:00.000Z"
// Parses an RFC 7231 IMF-fixdate (also RFC 850 / asctime forms); unix seconds.
std::optional<int64_t> ParseHttpDate(std::string_view s);

}  // namespace strata

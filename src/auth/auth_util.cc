#include "auth/auth_util.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "common/encoding.h"

namespace strata::auth::detail {

// ---- text -------------------------------------------------------------------

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t pos = s.find(sep);
    parts.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) return parts;
    s.remove_prefix(pos + 1);
  }
}

std::string JoinLines(std::initializer_list<std::string_view> lines) {
  std::string out;
  bool first = true;
  for (std::string_view line : lines) {
    if (!first) out.push_back('\n');
    first = false;
    out.append(line);
  }
  return out;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsHexDigits(std::string_view s, size_t length) {
  return s.size() == length && std::all_of(s.begin(), s.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0;
         });
}

bool IsLowerHexDigits(std::string_view s, size_t length) {
  return IsHexDigits(s, length) &&
         std::none_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'F'; });
}

std::string Hex(const Sha256Digest& d) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool SignaturesEqual(std::string_view expected_hex, std::string_view given_hex) {
  return ConstantTimeEqual(expected_hex, AsciiLower(given_hex));
}

// ---- requests ---------------------------------------------------------------

const std::string* FindHeader(const Headers* headers, std::string_view name) {
  if (headers == nullptr) return nullptr;
  for (const auto& [key, value] : *headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

const std::string* FindParam(const QueryParams& params, std::string_view name) {
  for (const auto& [key, value] : params) {
    if (key == name) return &value;
  }
  return nullptr;
}

QueryParams DecodeQuery(std::string_view raw_query) {
  QueryParams params;
  if (raw_query.empty()) return params;
  for (std::string_view item : Split(raw_query, '&')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string_view key = item.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    std::optional<std::string> k = UriDecode(key, /*plus_as_space=*/true);
    std::optional<std::string> v = UriDecode(value, /*plus_as_space=*/true);
    params.emplace_back(k ? std::move(*k) : std::string(key),
                        v ? std::move(*v) : std::string(value));
  }
  return params;
}

// ---- time -------------------------------------------------------------------

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day) {
  year -= month <= 2;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

int ToInt(std::string_view digits) {
  int v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  return v;
}

int64_t UnixSeconds(int year, int month, int day, int hour, int minute, int second) {
  return DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
}

// Seconds east of UTC for "GMT", "UTC", "Z" or "+HHMM"/"-HHMM".
std::optional<int64_t> ZoneOffset(std::string_view zone) {
  if (zone == "GMT" || zone == "UTC" || zone == "Z") return 0;
  if (zone.size() != 5 || (zone[0] != '+' && zone[0] != '-') || !AllDigits(zone.substr(1))) {
    return std::nullopt;
  }
  const int hours = ToInt(zone.substr(1, 2)), minutes = ToInt(zone.substr(3, 2));
  if (hours > 23 || minutes > 59) return std::nullopt;
  const int64_t offset = hours * 3600 + minutes * 60;
  return zone[0] == '+' ? offset : -offset;
}

}  // namespace

std::string FormatAmzDate(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  size_t n = std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return std::string(buf, n);
}

// Formatting the result back and comparing rejects out-of-range fields such
// as month 13 or Feb 30.
std::optional<int64_t> ParseAmzDate(std::string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return std::nullopt;
  if (!AllDigits(s.substr(0, 8)) || !AllDigits(s.substr(9, 6))) return std::nullopt;
  int64_t t = UnixSeconds(ToInt(s.substr(0, 4)), ToInt(s.substr(4, 2)), ToInt(s.substr(6, 2)),
                          ToInt(s.substr(9, 2)), ToInt(s.substr(11, 2)), ToInt(s.substr(13, 2)));
  if (FormatAmzDate(t) != s) return std::nullopt;
  return t;
}

std::optional<int64_t> ParseHttpDate(std::string_view s) {
  static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
  // "Fri, 24 May 2013 00:00:00 " is 26 characters; the zone follows.
  if (s.size() < 27 || s.substr(3, 2) != ", " || s[25] != ' ') return std::nullopt;
  if (s[7] != ' ' || s[11] != ' ' || s[16] != ' ' || s[19] != ':' || s[22] != ':') {
    return std::nullopt;
  }
  std::optional<int64_t> offset = ZoneOffset(s.substr(26));
  if (!offset) return std::nullopt;
  size_t month_index = kMonths.find(s.substr(8, 3));
  if (month_index == std::string_view::npos || month_index % 3 != 0) return std::nullopt;
  std::string_view day = s.substr(5, 2), year = s.substr(12, 4);
  std::string_view hour = s.substr(17, 2), minute = s.substr(20, 2), second = s.substr(23, 2);
  for (std::string_view part : {day, year, hour, minute, second}) {
    if (!AllDigits(part)) return std::nullopt;
  }
  const int month = static_cast<int>(month_index / 3) + 1;
  int64_t t =
      UnixSeconds(ToInt(year), month, ToInt(day), ToInt(hour), ToInt(minute), ToInt(second));
  // Round-trip through the ISO form to reject out-of-range fields.
  std::string iso = std::string(year) + (month < 10 ? "0" : "") + std::to_string(month);
  for (std::string_view part : {day, std::string_view("T"), hour, minute, second}) iso.append(part);
  if (FormatAmzDate(t) != iso + "Z") return std::nullopt;
  return t - *offset;
}

// ---- payload ----------------------------------------------------------------

Parsed<Payload> ParseContentSha256(std::string_view value, bool allow_streaming) {
  struct Literal {
    std::string_view text;
    PayloadMode mode;
    bool streaming;
  };
  static constexpr Literal kLiterals[] = {
      {"UNSIGNED-PAYLOAD", PayloadMode::kUnsignedPayload, false},
      {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD", PayloadMode::kStreamingSigned, true},
      {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", PayloadMode::kStreamingSignedTrailer, true},
      {"STREAMING-UNSIGNED-PAYLOAD-TRAILER", PayloadMode::kStreamingUnsignedTrailer, true},
  };
  if (IsLowerHexDigits(value, 64)) return Payload{PayloadMode::kSignedPayload, std::string(value)};
  for (const Literal& literal : kLiterals) {
    if (value == literal.text && (allow_streaming || !literal.streaming)) {
      return Payload{literal.mode, std::string(value)};
    }
  }
  return Fail(AuthErrorKind::kInvalidContentSha256,
              "x-amz-content-sha256 must be a lowercase hex SHA-256 or a payload mode");
}

}  // namespace strata::auth::detail

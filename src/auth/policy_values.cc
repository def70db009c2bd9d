#include "auth/policy_values.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

#include "common/encoding.h"
#include "common/time_util.h"

namespace strata::auth::policy_internal {

// ---- text -------------------------------------------------------------------------

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }



bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// ---- wildcards --------------------------------------------------------------------

// Bytes of the UTF-8 character at t[i]: the lead byte and the continuation
// bytes it announces (fewer when the text is malformed), so that '?' stands
// for one character, as in AWS, not for one byte.
size_t CharLength(std::string_view t, size_t i) {
  const auto lead = static_cast<unsigned char>(t[i]);
  size_t want = 1;
  if (lead >= 0xC0 && lead < 0xE0) want = 2;
  if (lead >= 0xE0 && lead < 0xF0) want = 3;
  if (lead >= 0xF0 && lead < 0xF8) want = 4;
  size_t n = 1;
  while (n < want && i + n < t.size() && (static_cast<unsigned char>(t[i + n]) & 0xC0) == 0x80) {
    ++n;
  }
  return n;
}

// The greedy two-pointer match with one backtrack point (the last '*'): when
// the text after a '*' stops matching, that '*' takes one more character and
// the rest of the pattern is retried. Earlier stars never need revisiting, so
// this is O(|pattern| * |text|) at worst, never exponential.
// `literal` is empty or holds one byte per pattern byte, non-zero where the
// pattern byte is literal text even if it is '*' or '?' (expanded policy
// variables and ${*}).
bool MatchWildcards(std::string_view p, std::string_view literal, std::string_view t,
                    bool ignore_case) {
  auto is = [&](size_t i, char wildcard) {
    return p[i] == wildcard && (literal.empty() || literal[i] == 0);
  };
  size_t pi = 0, ti = 0;
  size_t star = kNpos, star_ti = 0;
  while (ti < t.size()) {
    if (pi < p.size()) {
      if (is(pi, '*')) {
        star = pi++;
        star_ti = ti;
        continue;
      }
      if (is(pi, '?')) {
        ++pi;
        ti += CharLength(t, ti);
        continue;
      }
      const bool same = ignore_case ? LowerAscii(p[pi]) == LowerAscii(t[ti]) : p[pi] == t[ti];
      if (same) {
        ++pi;
        ++ti;
        continue;
      }
    }
    if (star == kNpos) return false;
    star_ti += CharLength(t, star_ti);
    ti = star_ti;
    pi = star + 1;
  }
  while (pi < p.size() && is(pi, '*')) ++pi;
  return pi == p.size();
}

bool SameText(std::string_view a, std::string_view b, bool ignore_case) {
  return ignore_case ? EqualsIgnoreCase(a, b) : a == b;
}

// Bytes before the first wildcard.
size_t LiteralPrefix(std::string_view p) { return std::min(p.find_first_of("*?"), p.size()); }

// MatchWildcards with the literal head compared at once (one memcmp): most
// patterns of a policy fail there, or have no wildcard at all, or end in
// their only '*'. `literal_prefix` is LiteralPrefix(p), computed at Parse.
bool MatchGlob(std::string_view p, size_t literal_prefix, std::string_view t, bool ignore_case) {
  if (literal_prefix == p.size()) return SameText(p, t, ignore_case);
  if (t.size() < literal_prefix ||
      !SameText(std::string_view(p.data(), literal_prefix),
                std::string_view(t.data(), literal_prefix), ignore_case)) {
    return false;
  }
  p.remove_prefix(literal_prefix);
  t.remove_prefix(literal_prefix);
  if (p == "*") return true;
  return MatchWildcards(p, {}, t, ignore_case);
}

std::string_view SliceMask(std::string_view literal, size_t pos, size_t n) {
  return literal.empty() ? literal : literal.substr(pos, n);
}

// arn:partition:service:region:account:resource
bool LooksLikeArn(std::string_view s) {
  if (!s.starts_with("arn:")) return false;
  size_t colons = 0;
  for (char c : s) colons += c == ':';
  return colons >= 5;
}

// ArnEquals / ArnLike as AWS defines them: the six colon-separated parts are
// matched one by one, so a wildcard in one part never spans a ':' into the
// next. The resource part is the rest of the ARN and may hold ':' itself; a
// pattern with fewer parts lets its last part take whatever is left.
bool ArnMatches(std::string_view p, std::string_view literal, std::string_view arn) {
  if (!LooksLikeArn(arn)) return false;
  for (int part = 0; part < 5; ++part) {
    const size_t pc = p.find(':');
    if (pc == kNpos) break;
    const size_t ac = arn.find(':');
    if (!MatchWildcards(p.substr(0, pc), SliceMask(literal, 0, pc), arn.substr(0, ac), false)) {
      return false;
    }
    p.remove_prefix(pc + 1);
    literal = SliceMask(literal, pc + 1);
    arn.remove_prefix(ac + 1);
  }
  return MatchWildcards(p, literal, arn, false);
}

// ---- numbers, dates, addresses ------------------------------------------------------

std::optional<double> ParseNumber(std::string_view s) {
  double v = 0;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

// s[pos, pos + n) as a number if those are all digits.
bool ReadDigits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!IsDigit(s[i])) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

// Epoch seconds ("1700000000", a fraction truncated: aws:EpochTime).
std::optional<int64_t> ParseEpochSeconds(std::string_view s) {
  const size_t dot = s.find('.');
  std::string_view whole = s.substr(0, dot);
  if (!AllDigits(whole) || whole.size() > 15) return std::nullopt;
  if (dot != kNpos && !AllDigits(s.substr(dot + 1))) return std::nullopt;
  int64_t v = 0;
  for (char c : whole) v = v * 10 + (c - '0');
  return v;
}

// "+02:00", "-0530", "+02" after an ISO 8601 time: seconds east of UTC.
std::optional<int64_t> ParseZoneOffset(std::string_view z) {
  if (z.size() < 3 || (z[0] != '+' && z[0] != '-')) return std::nullopt;
  int hours = 0, minutes = 0;
  if (!ReadDigits(z, 1, 2, &hours)) return std::nullopt;
  std::string_view rest = z.substr(3);
  if (!rest.empty() && rest[0] == ':') rest.remove_prefix(1);
  if (!rest.empty() && (rest.size() != 2 || !ReadDigits(rest, 0, 2, &minutes))) {
    return std::nullopt;
  }
  if (hours > 23 || minutes > 59) return std::nullopt;
  const int64_t seconds = hours * 3600 + minutes * 60;
  return z[0] == '-' ? -seconds : seconds;
}

// ISO 8601 extended: "2026-12-01", "2026-12-01T10:00Z", "2026-12-01T10:00:00.123+02:00";
// no zone means UTC. A fraction of a second is truncated.
std::optional<int64_t> ParseIsoDate(std::string_view s) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!ReadDigits(s, 0, 4, &year) || s.size() < 10 || s[4] != '-' || s[7] != '-' ||
      !ReadDigits(s, 5, 2, &month) || !ReadDigits(s, 8, 2, &day)) {
    return std::nullopt;
  }
  int64_t offset = 0;
  if (s.size() > 10) {
    if (s[10] != 'T' || s.size() < 16 || s[13] != ':' || !ReadDigits(s, 11, 2, &hour) ||
        !ReadDigits(s, 14, 2, &minute)) {
      return std::nullopt;
    }
    size_t i = 16;
    if (i < s.size() && s[i] == ':') {
      if (!ReadDigits(s, i + 1, 2, &second)) return std::nullopt;
      i += 3;
      if (i < s.size() && s[i] == '.') {
        size_t j = i + 1;
        while (j < s.size() && IsDigit(s[j])) ++j;
        if (j == i + 1) return std::nullopt;
        i = j;
      }
    }
    std::string_view zone = s.substr(i);
    if (zone == "Z") {
      offset = 0;
    } else if (!zone.empty()) {
      auto z = ParseZoneOffset(zone);
      if (!z) return std::nullopt;
      offset = *z;
    }
  }
  auto t = UnixFromCivil(year, month, day, hour, minute, second);
  if (!t) return std::nullopt;
  return *t - offset;
}

// A Date* value: ISO 8601 extended or basic (aws:CurrentTime), or epoch
// seconds (aws:EpochTime).
std::optional<int64_t> ParseDate(std::string_view s) {
  if (auto epoch = ParseEpochSeconds(s)) return epoch;
  if (auto basic = ParseAmzDate(s)) return basic;
  return ParseIsoDate(s);
}

// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) count as the IPv4 address, so a
// dual-stack listener's peers match IPv4 CIDRs.
bool IsV4Mapped(const uint8_t* b) {
  static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(b, kPrefix, 12) == 0;
}

// Dotted-quad IPv4 as inet_pton reads it (four decimal parts of 0-255, no
// leading zeros), without its copy to a C string: aws:SourceIp is parsed
// once per IpAddress condition evaluated.
bool ParseIpv4(std::string_view s, uint8_t* out) {
  size_t i = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
    const size_t start = i;
    int v = 0;
    while (i < s.size() && IsDigit(s[i]) && i - start < 3) v = v * 10 + (s[i++] - '0');
    if (i == start || v > 255 || (s[start] == '0' && i - start > 1)) return false;
    out[part] = static_cast<uint8_t>(v);
  }
  return i == s.size();
}

// An IPv6 address in `s`; false if it is not one.
bool ParseIpv6(std::string_view s, uint8_t* out) {
  char buf[INET6_ADDRSTRLEN + 1];
  if (s.empty() || s.size() >= sizeof(buf)) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  return inet_pton(AF_INET6, buf, out) == 1;
}

std::optional<IpAddress> ParseIp(std::string_view s) {
  IpAddress ip;
  if (ParseIpv4(s, ip.bytes)) return ip;
  if (!ParseIpv6(s, ip.bytes)) return std::nullopt;
  if (IsV4Mapped(ip.bytes)) {
    std::memmove(ip.bytes, ip.bytes + 12, 4);
    std::memset(ip.bytes + 4, 0, 12);
  } else {
    ip.v6 = true;
  }
  return ip;
}

// "10.0.0.0/8", "2001:db8::/32", or a bare address (/32, /128). Host bits may be set.
std::optional<Cidr> ParseCidr(std::string_view s) {
  const size_t slash = s.find('/');
  Cidr cidr;
  // Parse the address as written (not mapped yet) to know its family's width.
  std::string_view addr = s.substr(0, slash);
  int max_prefix = 32;
  if (!ParseIpv4(addr, cidr.address.bytes)) {
    if (!ParseIpv6(addr, cidr.address.bytes)) return std::nullopt;
    cidr.address.v6 = true;
    max_prefix = 128;
  }
  cidr.prefix = max_prefix;
  if (slash != kNpos) {
    std::string_view bits = s.substr(slash + 1);
    if (!AllDigits(bits) || bits.size() > 3) return std::nullopt;
    int prefix = 0;
    for (char c : bits) prefix = prefix * 10 + (c - '0');
    if (prefix > max_prefix) return std::nullopt;
    cidr.prefix = prefix;
  }
  if (cidr.address.v6 && cidr.prefix >= 96 && IsV4Mapped(cidr.address.bytes)) {
    std::memmove(cidr.address.bytes, cidr.address.bytes + 12, 4);
    std::memset(cidr.address.bytes + 4, 0, 12);
    cidr.address.v6 = false;
    cidr.prefix -= 96;
  }
  return cidr;
}

bool CidrContains(const Cidr& cidr, const IpAddress& ip) {
  if (cidr.address.v6 != ip.v6) return false;
  const int whole = cidr.prefix / 8, rest = cidr.prefix % 8;
  if (std::memcmp(cidr.address.bytes, ip.bytes, whole) != 0) return false;
  if (rest == 0) return true;
  const auto mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (cidr.address.bytes[whole] & mask) == (ip.bytes[whole] & mask);
}

}  // namespace strata::auth::policy_internal

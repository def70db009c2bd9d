#include "auth/policy.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/encoding.h"
#include "common/time_util.h"

namespace strata::auth {

namespace {

using Json = nlohmann::json;
constexpr size_t kNpos = std::string_view::npos;

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

std::string_view SliceMask(std::string_view literal, size_t pos, size_t n = kNpos) {
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

struct IpAddress {
  bool v6 = false;
  uint8_t bytes[16] = {};
};

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

struct Cidr {
  IpAddress address;
  int prefix = 0;  // bits
};

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

// ---- the compiled form -----------------------------------------------------------

// A pattern of the policy: an action (lowercased), a principal ARN, a
// Resource or a String* / Arn* condition value. `parts` is empty when it has
// no policy variables (the common case: matched as `text` without any
// copying); otherwise it is expanded per request.
struct Pattern {
  enum class Part { kPattern, kVariable, kLiteral };
  std::string text;           // as written
  size_t literal_prefix = 0;  // LiteralPrefix(text)
  std::vector<std::pair<Part, std::string>> parts;
};

enum class Family {
  kString, kStringIgnoreCase, kStringLike, kArn, kNumeric, kDate, kBool, kBinary, kIp, kNull,
};
enum class Compare { kEq, kLt, kLe, kGt, kGe };
enum class Qualifier { kNone, kForAnyValue, kForAllValues };

struct OperatorInfo {
  std::string_view name;
  Family family;
  Compare compare;
  bool negated;
};

constexpr OperatorInfo kOperators[] = {
    {"StringEquals", Family::kString, Compare::kEq, false},
    {"StringNotEquals", Family::kString, Compare::kEq, true},
    {"StringEqualsIgnoreCase", Family::kStringIgnoreCase, Compare::kEq, false},
    {"StringNotEqualsIgnoreCase", Family::kStringIgnoreCase, Compare::kEq, true},
    {"StringLike", Family::kStringLike, Compare::kEq, false},
    {"StringNotLike", Family::kStringLike, Compare::kEq, true},
    {"NumericEquals", Family::kNumeric, Compare::kEq, false},
    {"NumericNotEquals", Family::kNumeric, Compare::kEq, true},
    {"NumericLessThan", Family::kNumeric, Compare::kLt, false},
    {"NumericLessThanEquals", Family::kNumeric, Compare::kLe, false},
    {"NumericGreaterThan", Family::kNumeric, Compare::kGt, false},
    {"NumericGreaterThanEquals", Family::kNumeric, Compare::kGe, false},
    {"DateEquals", Family::kDate, Compare::kEq, false},
    {"DateNotEquals", Family::kDate, Compare::kEq, true},
    {"DateLessThan", Family::kDate, Compare::kLt, false},
    {"DateLessThanEquals", Family::kDate, Compare::kLe, false},
    {"DateGreaterThan", Family::kDate, Compare::kGt, false},
    {"DateGreaterThanEquals", Family::kDate, Compare::kGe, false},
    {"Bool", Family::kBool, Compare::kEq, false},
    {"BinaryEquals", Family::kBinary, Compare::kEq, false},
    {"IpAddress", Family::kIp, Compare::kEq, false},
    {"NotIpAddress", Family::kIp, Compare::kEq, true},
    // AWS gives ArnEquals wildcards too: the two are the same operator.
    {"ArnEquals", Family::kArn, Compare::kEq, false},
    {"ArnLike", Family::kArn, Compare::kEq, false},
    {"ArnNotEquals", Family::kArn, Compare::kEq, true},
    {"ArnNotLike", Family::kArn, Compare::kEq, true},
    {"Null", Family::kNull, Compare::kEq, false},
};

struct Operator {
  Family family = Family::kString;
  Compare compare = Compare::kEq;
  bool negated = false;
  Qualifier qualifier = Qualifier::kNone;
  bool if_exists = false;
};

// One policy value of a condition, compiled for its operator's family.
struct Value {
  Pattern text;          // String*, Arn*
  double number = 0;     // Numeric*
  int64_t date = 0;      // Date*: epoch seconds
  bool boolean = false;  // Bool, Null
  std::string binary;    // BinaryEquals: the decoded bytes
  Cidr cidr;             // IpAddress, NotIpAddress
};

// Distinct condition keys of a policy whose request values one Evaluate
// looks up once (most policies test a handful; the rest are looked up each time).
constexpr size_t kCachedKeys = 32;
constexpr uint16_t kUncachedKey = UINT16_MAX;

struct Condition {
  Operator op;
  std::string key;  // lowercased
  std::vector<Value> values;
  uint16_t key_index = kUncachedKey;  // into EvalScratch's looked-up values
};

struct PrincipalSet {
  bool everyone = false;
  std::vector<Pattern> arns;  // account ids stored as their root ARN
  std::vector<std::string> canonical_ids;
};

struct Statement {
  bool deny = false;
  bool has_principal = false;  // resource policies: Principal or NotPrincipal
  bool not_principal = false;
  PrincipalSet principals;
  bool not_action = false;
  std::vector<std::string> actions;   // as written
  std::vector<Pattern> action_lower;  // what is matched
  bool not_resource = false;
  std::vector<Pattern> resources;
  std::vector<Condition> conditions;
};

// ---- evaluation ----------------------------------------------------------------------

const Principal& Caller(const EvalRequest& r) {
  static const Principal kAnonymous;
  return r.principal != nullptr ? *r.principal : kAnonymous;
}

const std::vector<std::string>* RequestValues(const EvalRequest& r, std::string_view key) {
  return r.conditions != nullptr ? r.conditions->Values(key) : nullptr;
}

// A policy variable's value: the key's single value in the request; the
// principal keys fall back to the caller. nullptr: unresolved.
const std::string* VariableValue(const EvalRequest& r, std::string_view key) {
  if (const auto* values = RequestValues(r, key)) {
    return values->size() == 1 ? &(*values)[0] : nullptr;
  }
  const Principal& p = Caller(r);
  const std::string* field = nullptr;
  if (key == "aws:username") field = &p.username;
  if (key == "aws:userid") field = &p.user_id;
  if (key == "aws:principalarn") field = &p.arn;
  return field != nullptr && !field->empty() ? field : nullptr;
}

// The text of a pattern with variables for this request, with a mask marking the bytes
// that are literal (variable values and ${*} ${?} ${$}). False: a variable is
// unresolved, and the pattern matches nothing.
bool Expand(const Pattern& t, const EvalRequest& r, std::string* pattern, std::string* literal) {
  for (const auto& [kind, text] : t.parts) {
    std::string_view piece = text;
    if (kind == Pattern::Part::kVariable) {
      const std::string* value = VariableValue(r, text);
      if (value == nullptr) return false;
      piece = *value;
    }
    pattern->append(piece);
    literal->append(piece.size(), kind == Pattern::Part::kPattern ? '\0' : '\1');
  }
  return true;
}

bool MatchText(Family how, std::string_view p, std::string_view literal, std::string_view text) {
  switch (how) {
    case Family::kString: return p == text;
    case Family::kStringIgnoreCase: return EqualsIgnoreCase(p, text);
    case Family::kArn: return ArnMatches(p, literal, text);
    default: return MatchWildcards(p, literal, text, false);
  }
}

bool MatchPattern(const Pattern& t, Family how, std::string_view text, const EvalRequest& r) {
  if (t.parts.empty()) {
    return how == Family::kStringLike ? MatchGlob(t.text, t.literal_prefix, text, false)
                                      : MatchText(how, t.text, {}, text);
  }
  std::string pattern, literal;
  return Expand(t, r, &pattern, &literal) && MatchText(how, pattern, literal, text);
}

template <typename T>
bool Compared(T a, T b, Compare c) {
  switch (c) {
    case Compare::kEq: return a == b;
    case Compare::kLt: return a < b;
    case Compare::kLe: return a <= b;
    case Compare::kGt: return a > b;
    case Compare::kGe: return a >= b;
  }
  return false;
}

// What one Evaluate has parsed of the request's values already: the address
// of aws:SourceIp is tested by many statements of a policy, parsed once.
struct EvalScratch {
  const std::string* ip_text = nullptr;  // the request value parsed below
  std::optional<IpAddress> ip;
  // The request's values of the policy's first kCachedKeys distinct keys.
  std::array<const std::vector<std::string>*, kCachedKeys> values{};
  uint32_t looked_up = 0;  // bit i: values[i] is set
};

// Whether one request value matches any of the policy values under the
// operator's positive form. nullopt: the value is malformed for the operator
// (not a number, date, address or ARN), which no operator accepts, negated or not.
std::optional<bool> MatchesAny(const Condition& c, const std::string& v, const EvalRequest& r,
                               EvalScratch* scratch) {
  const Family f = c.op.family;
  switch (f) {
    case Family::kNumeric: {
      auto n = ParseNumber(v);
      if (!n) return std::nullopt;
      for (const Value& p : c.values) {
        if (Compared(*n, p.number, c.op.compare)) return true;
      }
      return false;
    }
    case Family::kDate: {
      auto d = ParseDate(v);
      if (!d) return std::nullopt;
      for (const Value& p : c.values) {
        if (Compared(*d, p.date, c.op.compare)) return true;
      }
      return false;
    }
    case Family::kIp: {
      if (scratch->ip_text != &v) {
        scratch->ip = ParseIp(v);
        scratch->ip_text = &v;
      }
      const std::optional<IpAddress>& ip = scratch->ip;
      if (!ip) return std::nullopt;
      for (const Value& p : c.values) {
        if (CidrContains(p.cidr, *ip)) return true;
      }
      return false;
    }
    case Family::kBool:
      for (const Value& p : c.values) {
        if (EqualsIgnoreCase(v, p.boolean ? "true" : "false")) return true;
      }
      return false;
    case Family::kBinary:
      for (const Value& p : c.values) {
        if (v == p.binary) return true;
      }
      return false;
    default:
      if (f == Family::kArn && !LooksLikeArn(v)) return std::nullopt;
      for (const Value& p : c.values) {
        if (MatchPattern(p.text, f, v, r)) return true;
      }
      return false;
  }
}

bool ConditionHolds(const Condition& c, const EvalRequest& r, EvalScratch* scratch) {
  const std::vector<std::string>* values;
  if (c.key_index == kUncachedKey) {
    values = RequestValues(r, c.key);
  } else if (scratch->looked_up & (1u << c.key_index)) {
    values = scratch->values[c.key_index];
  } else {
    values = scratch->values[c.key_index] = RequestValues(r, c.key);
    scratch->looked_up |= 1u << c.key_index;
  }
  const bool absent = values == nullptr || values->empty();
  if (c.op.family == Family::kNull) {
    for (const Value& p : c.values) {
      if (p.boolean == absent) return true;
    }
    return false;
  }
  if (absent) {
    if (c.op.if_exists) return true;
    switch (c.op.qualifier) {
      case Qualifier::kForAllValues: return true;
      case Qualifier::kForAnyValue: return false;
      case Qualifier::kNone: return c.op.negated;
    }
  }
  // A request value "satisfies" the operator when it matches some policy
  // value (positive operators) or none (negated ones). Without a qualifier a
  // positive operator needs one satisfying value and a negated one needs all
  // of them (no request value matches any policy value).
  const bool need_all = c.op.qualifier == Qualifier::kForAllValues ||
                        (c.op.qualifier == Qualifier::kNone && c.op.negated);
  for (const std::string& v : *values) {
    auto any = MatchesAny(c, v, r, scratch);
    const bool satisfied = any.has_value() && *any != c.op.negated;
    if (need_all && !satisfied) return false;
    if (!need_all && satisfied) return true;
  }
  return need_all;
}

bool PrincipalMatches(const PrincipalSet& set, const Principal& p) {
  if (set.everyone) return true;
  if (p.kind == Principal::Kind::kAnonymous) return false;
  for (const Pattern& arn : set.arns) {
    if (MatchGlob(arn.text, arn.literal_prefix, p.arn, false)) return true;
  }
  for (const std::string& id : set.canonical_ids) {
    if (id == p.canonical_id) return true;
  }
  return false;
}

bool ActionMatches(const Statement& s, std::string_view action) {
  for (const Pattern& pattern : s.action_lower) {
    if (MatchGlob(pattern.text, pattern.literal_prefix, action, /*ignore_case=*/true)) {
      return !s.not_action;
    }
  }
  return s.not_action;
}

bool ResourceMatches(const Statement& s, const EvalRequest& r) {
  for (const Pattern& t : s.resources) {
    if (MatchPattern(t, Family::kStringLike, r.resource, r)) return !s.not_resource;
  }
  return s.not_resource;
}

bool StatementMatches(const Statement& s, const EvalRequest& r, EvalScratch* scratch) {
  if (s.has_principal && PrincipalMatches(s.principals, Caller(r)) == s.not_principal) {
    return false;
  }
  if (!ActionMatches(s, r.action) || !ResourceMatches(s, r)) return false;
  for (const Condition& c : s.conditions) {
    if (!ConditionHolds(c, r, scratch)) return false;
  }
  return true;
}

// ---- IsPublic ------------------------------------------------------------------------

constexpr std::string_view kPinningKeys[] = {
    "aws:sourceip",      "aws:sourcearn",        "aws:sourcevpc",
    "aws:sourcevpce",    "aws:sourceaccount",    "aws:principalaccount",
    "aws:userid",        "aws:principalarn",
    "s3:x-amz-server-side-encryption-aws-kms-key-id",
};

// A value that names one thing: no policy variable and, for the wildcard
// operators, no wildcard; a CIDR narrower than the whole address space.
bool IsFixedValue(const Condition& c, const Value& v) {
  switch (c.op.family) {
    case Family::kIp: return v.cidr.prefix > 0;
    case Family::kStringLike:
    case Family::kArn:
      return v.text.parts.empty() && v.text.text.find_first_of("*?") == std::string::npos;
    default: return v.text.parts.empty();
  }
}

// Whether the condition can only hold for requests carrying fixed values of
// one of the keys above: a positive string / ARN / IP operator that an absent
// key does not satisfy.
bool PinsToFixedValues(const Condition& c) {
  const Family f = c.op.family;
  if (f != Family::kString && f != Family::kStringIgnoreCase && f != Family::kStringLike &&
      f != Family::kArn && f != Family::kIp) {
    return false;
  }
  if (c.op.negated || c.op.if_exists || c.op.qualifier == Qualifier::kForAllValues) return false;
  bool pinning_key = false;
  for (std::string_view k : kPinningKeys) pinning_key |= c.key == k;
  if (!pinning_key) return false;
  for (const Value& v : c.values) {
    if (!IsFixedValue(c, v)) return false;
  }
  return true;
}

bool StatementIsPublic(const Statement& s) {
  if (s.deny || !s.has_principal || !(s.not_principal || s.principals.everyone)) return false;
  for (const Condition& c : s.conditions) {
    if (PinsToFixedValues(c)) return false;
  }
  return true;
}

// ---- compilation ------------------------------------------------------------------------

int EvaluationCost(Family f) {
  switch (f) {
    case Family::kNull: return 0;
    case Family::kBool:
    case Family::kBinary:
    case Family::kString:
    case Family::kStringIgnoreCase: return 1;
    case Family::kStringLike:
    case Family::kArn: return 2;
    default: return 3;  // values parsed per request: numbers, dates, addresses
  }
}

std::optional<Operator> ParseOperator(std::string_view name) {
  Operator op;
  if (name.starts_with("ForAnyValue:")) {
    op.qualifier = Qualifier::kForAnyValue;
    name.remove_prefix(12);
  } else if (name.starts_with("ForAllValues:")) {
    op.qualifier = Qualifier::kForAllValues;
    name.remove_prefix(13);
  }
  if (name.ends_with("IfExists")) {
    op.if_exists = true;
    name.remove_suffix(8);
  }
  for (const OperatorInfo& info : kOperators) {
    if (info.name != name) continue;
    // Null asks about presence itself: neither IfExists nor a set qualifier means anything.
    if (info.family == Family::kNull && (op.if_exists || op.qualifier != Qualifier::kNone)) {
      return std::nullopt;
    }
    op.family = info.family;
    op.compare = info.compare;
    op.negated = info.negated;
    return op;
  }
  return std::nullopt;
}

bool IsConditionKey(std::string_view key) {
  for (std::string_view prefix : {"aws:", "s3:", "strata:"}) {
    if (StartsWithIgnoreCase(key, prefix) && key.size() > prefix.size()) return true;
  }
  return false;
}

// "s3:GetObject", "s3:Get*", "*": a service name, ':' and a non-empty name.
bool IsAction(std::string_view a) {
  if (a == "*") return true;
  const size_t colon = a.find(':');
  if (colon == kNpos || colon == 0 || colon + 1 == a.size()) return false;
  for (char c : a.substr(0, colon)) {
    const bool ok = IsDigit(c) || (LowerAscii(c) >= 'a' && LowerAscii(c) <= 'z') || c == '-';
    if (!ok) return false;
  }
  return true;
}

// `${key}` becomes a variable, `${*}` `${?}` `${$}` literal characters; a
// `${` without a closing brace, or `${}`, stays text.
Pattern CompilePattern(std::string_view text, bool variables) {
  Pattern t;
  t.text = std::string(text);
  t.literal_prefix = LiteralPrefix(text);
  if (!variables || text.find("${") == kNpos) return t;
  std::string pending;  // pattern text not yet added to t.parts
  auto flush = [&] {
    if (!pending.empty()) t.parts.emplace_back(Pattern::Part::kPattern, std::move(pending));
    pending.clear();
  };
  size_t i = 0;
  while (true) {
    const size_t open = text.find("${", i);
    const size_t close = open == kNpos ? kNpos : text.find('}', open + 2);
    if (close == kNpos) break;
    std::string_view inner = text.substr(open + 2, close - open - 2);
    if (inner.empty()) {
      pending.append(text.substr(i, close + 1 - i));
    } else {
      pending.append(text.substr(i, open - i));
      flush();
      if (inner == "*" || inner == "?" || inner == "$") {
        t.parts.emplace_back(Pattern::Part::kLiteral, std::string(inner));
      } else {
        t.parts.emplace_back(Pattern::Part::kVariable, AsciiLower(TrimBlanks(inner)));
      }
    }
    i = close + 1;
  }
  if (t.parts.empty()) return t;  // only `${}` or unclosed `${`: plain text after all
  pending.append(text.substr(i));
  flush();
  return t;
}

// Condition values are strings, numbers or booleans, compared as their text.
std::optional<std::string> ScalarText(const Json& v) {
  if (v.is_string()) return v.get_ref<const std::string&>();
  if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) return v.dump();
  return std::nullopt;
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

class Compiler {
 public:
  explicit Compiler(Policy::Kind kind) : kind_(kind) {}

  const std::string& error() const { return error_; }

  bool Document(const Json& doc, std::vector<Statement>* out) {
    if (!doc.is_object()) return Fail("Policy must be a JSON object");
    for (const auto& item : doc.items()) {
      const std::string& k = item.key();
      if (k != "Version" && k != "Id" && k != "Statement") return Fail("Unknown element: " + k);
    }
    if (auto it = doc.find("Version"); it != doc.end()) {
      if (!it->is_string() || (*it != "2012-10-17" && *it != "2008-10-17")) {
        return Fail("Policy has an invalid Version (2012-10-17 or 2008-10-17)");
      }
      // Policy variables exist only in the 2012 language; before, ${...} was plain text.
      variables_ = *it == "2012-10-17";
    }
    if (auto it = doc.find("Id"); it != doc.end() && !it->is_string()) {
      return Fail("Id must be a string");
    }
    auto it = doc.find("Statement");
    if (it == doc.end()) return Fail("Policy is missing the Statement element");
    if (it->is_object()) return StatementAt(*it, 1, out);
    if (!it->is_array() || it->empty()) {
      return Fail("Statement must be an object or a non-empty array");
    }
    for (size_t i = 0; i < it->size(); ++i) {
      if (!StatementAt((*it)[i], i + 1, out)) return false;
    }
    return true;
  }

 private:
  bool Fail(std::string message) {
    error_ = context_ + message;
    return false;
  }

  bool StatementAt(const Json& s, size_t number, std::vector<Statement>* out) {
    context_ = "Statement " + std::to_string(number);
    if (s.is_object()) {
      if (auto sid = s.find("Sid"); sid != s.end() && sid->is_string()) {
        context_ += " (Sid " + Quoted(sid->get_ref<const std::string&>()) + ")";
      }
    }
    context_ += ": ";
    if (!s.is_object()) return Fail("must be an object");
    Statement st;
    if (!CompileStatement(s, &st)) return false;
    out->push_back(std::move(st));
    context_.clear();
    return true;
  }

  bool CompileStatement(const Json& s, Statement* st) {
    static constexpr std::string_view kElements[] = {
        "Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction",
        "Resource", "NotResource", "Condition"};
    for (const auto& item : s.items()) {
      bool known = false;
      for (std::string_view e : kElements) known |= item.key() == e;
      if (!known) return Fail("Unknown element: " + item.key());
    }
    if (auto sid = s.find("Sid"); sid != s.end() && !sid->is_string()) {
      return Fail("Sid must be a string");
    }
    return Effect(s, st) && PrincipalElement(s, st) && ActionElement(s, st) &&
           ResourceElement(s, st) && ConditionElement(s, st);
  }

  // The element named `name` or its Not form; nullptr if neither (then
  // `*negated` is unspecified). Both present: an error.
  bool Either(const Json& s, const std::string& name, const Json** found, bool* negated) {
    auto plain = s.find(name), not_form = s.find("Not" + name);
    if (plain != s.end() && not_form != s.end()) {
      return Fail("has both " + name + " and Not" + name);
    }
    *negated = not_form != s.end();
    *found = plain != s.end() ? &*plain : not_form != s.end() ? &*not_form : nullptr;
    return true;
  }

  // A string or a non-empty array of strings.
  bool Strings(const Json& v, std::string_view element, std::vector<std::string>* out) {
    if (v.is_string()) {
      out->push_back(v.get<std::string>());
      return true;
    }
    if (!v.is_array() || v.empty()) {
      return Fail(std::string(element) + " must be a string or a non-empty array of strings");
    }
    for (const Json& e : v) {
      if (!e.is_string()) return Fail(std::string(element) + " must hold only strings");
      out->push_back(e.get<std::string>());
    }
    return true;
  }

  bool Effect(const Json& s, Statement* st) {
    auto it = s.find("Effect");
    if (it == s.end()) return Fail("missing Effect");
    if (*it != "Allow" && *it != "Deny") return Fail("Effect must be Allow or Deny");
    st->deny = *it == "Deny";
    return true;
  }

  bool PrincipalElement(const Json& s, Statement* st) {
    const Json* v = nullptr;
    if (!Either(s, "Principal", &v, &st->not_principal)) return false;
    if (kind_ == Policy::Kind::kIdentity) {
      return v == nullptr ||
             Fail("Principal and NotPrincipal are not allowed in an identity policy");
    }
    if (v == nullptr) return Fail("missing Principal");
    st->has_principal = true;
    const std::string element = st->not_principal ? "NotPrincipal" : "Principal";
    if (v->is_string()) {
      if (*v != "*") return Fail("Invalid principal in policy: " + v->get<std::string>());
      st->principals.everyone = true;
      return true;
    }
    if (!v->is_object() || v->empty()) return Fail(element + " must be \"*\" or an object");
    for (const auto& item : v->items()) {
      std::vector<std::string> ids;
      if (!Strings(item.value(), element + "." + item.key(), &ids)) return false;
      if (!PrincipalIds(item.key(), ids, &st->principals)) return false;
    }
    return true;
  }

  bool PrincipalIds(const std::string& type, const std::vector<std::string>& ids,
                    PrincipalSet* set) {
    if (type == "AWS") {
      for (const std::string& id : ids) {
        if (id == "*") {
          set->everyone = true;
        } else if (id.size() == 12 && AllDigits(id)) {
          set->arns.push_back(CompilePattern("arn:aws:iam::" + id + ":root", false));
        } else if (id.starts_with("arn:")) {
          set->arns.push_back(CompilePattern(id, false));
        } else {
          return Fail("Invalid principal in policy: " + id);
        }
      }
      return true;
    }
    if (type == "CanonicalUser") {
      set->canonical_ids.insert(set->canonical_ids.end(), ids.begin(), ids.end());
      return true;
    }
    // Service and federated principals are valid, but no strata caller is one.
    if (type == "Service" || type == "Federated") return true;
    return Fail("Invalid principal type in policy: " + type);
  }

  bool ActionElement(const Json& s, Statement* st) {
    const Json* v = nullptr;
    if (!Either(s, "Action", &v, &st->not_action)) return false;
    if (v == nullptr) return Fail("missing Action");
    if (!Strings(*v, st->not_action ? "NotAction" : "Action", &st->actions)) return false;
    for (const std::string& a : st->actions) {
      if (!IsAction(a)) return Fail("Policy has invalid action: " + a);
      st->action_lower.push_back(CompilePattern(AsciiLower(a), false));
    }
    return true;
  }

  bool ResourceElement(const Json& s, Statement* st) {
    const Json* v = nullptr;
    if (!Either(s, "Resource", &v, &st->not_resource)) return false;
    if (v == nullptr) return Fail("missing Resource");
    std::vector<std::string> patterns;
    if (!Strings(*v, st->not_resource ? "NotResource" : "Resource", &patterns)) return false;
    for (const std::string& p : patterns) {
      if (p != "*" && !p.starts_with("arn:")) return Fail("Policy has invalid resource: " + p);
      st->resources.push_back(CompilePattern(p, variables_));
    }
    return true;
  }

  bool ConditionElement(const Json& s, Statement* st) {
    auto it = s.find("Condition");
    if (it == s.end()) return true;
    if (!it->is_object()) return Fail("Condition must be an object");
    for (const auto& block : it->items()) {
      auto op = ParseOperator(block.key());
      if (!op) return Fail("Policy has an invalid condition operator: " + block.key());
      if (!block.value().is_object() || block.value().empty()) {
        return Fail("Condition " + block.key() + " must be an object of condition keys");
      }
      for (const auto& entry : block.value().items()) {
        Condition c;
        c.op = *op;
        if (!IsConditionKey(entry.key())) {
          return Fail("Policy has an invalid condition key: " + entry.key());
        }
        c.key = AsciiLower(entry.key());
        if (!ConditionValues(block.key(), entry.value(), &c)) return false;
        st->conditions.push_back(std::move(c));
      }
    }
    // All conditions must hold, in any order: the cheap ones first, so a
    // failing one spares parsing numbers, dates and addresses.
    std::stable_sort(st->conditions.begin(), st->conditions.end(),
                     [](const Condition& a, const Condition& b) {
                       return EvaluationCost(a.op.family) < EvaluationCost(b.op.family);
                     });
    return true;
  }

  bool ConditionValues(const std::string& op_name, const Json& v, Condition* c) {
    if (v.is_array() && v.empty()) return Fail("Condition " + op_name + " has no values");
    auto add = [&](const Json& e) {
      auto text = ScalarText(e);
      if (!text) {
        return Fail("Condition " + op_name + " values must be strings, numbers or booleans");
      }
      Value value;
      if (!CompileValue(*text, c->op.family, &value)) return false;
      c->values.push_back(std::move(value));
      return true;
    };
    if (!v.is_array()) return add(v);
    for (const Json& e : v) {
      if (!add(e)) return false;
    }
    return true;
  }

  bool CompileValue(const std::string& text, Family family, Value* value) {
    switch (family) {
      case Family::kNumeric: {
        auto n = ParseNumber(text);
        if (!n) return Fail("Invalid numeric value: " + text);
        value->number = *n;
        return true;
      }
      case Family::kDate: {
        auto d = ParseDate(text);
        if (!d) return Fail("Invalid date: " + text);
        value->date = *d;
        return true;
      }
      case Family::kIp: {
        auto cidr = ParseCidr(text);
        if (!cidr) return Fail("Invalid IP address: " + text);
        value->cidr = *cidr;
        return true;
      }
      case Family::kBool:
      case Family::kNull:
        if (!EqualsIgnoreCase(text, "true") && !EqualsIgnoreCase(text, "false")) {
          return Fail("Invalid boolean value: " + text);
        }
        value->boolean = EqualsIgnoreCase(text, "true");
        return true;
      case Family::kBinary: {
        auto bytes = Base64Decode(text);
        if (!bytes) return Fail("Invalid base64 binary value: " + text);
        value->binary = std::move(*bytes);
        return true;
      }
      default:
        value->text = CompilePattern(text, variables_);
        return true;
    }
  }

  Policy::Kind kind_;
  bool variables_ = false;
  std::string context_;  // "Statement 2 (Sid "x"): " while compiling a statement
  std::string error_;
};

}  // namespace

// ---- public API ----------------------------------------------------------------------------

void MapConditionContext::Set(std::string_view key, std::vector<std::string> values) {
  std::string lower = AsciiLower(key);
  for (auto& [k, v] : entries_) {
    if (k == lower) {
      v = std::move(values);
      return;
    }
  }
  entries_.emplace_back(std::move(lower), std::move(values));
}

const std::vector<std::string>* MapConditionContext::Values(std::string_view key_lower) const {
  for (const auto& [k, v] : entries_) {
    if (k == key_lower) return &v;
  }
  return nullptr;
}

struct Policy::Compiled {
  std::vector<Statement> statements;
};

Policy::Policy(std::unique_ptr<Compiled> compiled) : compiled_(std::move(compiled)) {}
Policy::Policy(Policy&&) noexcept = default;
Policy& Policy::operator=(Policy&&) noexcept = default;
Policy::~Policy() = default;

std::variant<Policy, PolicyError> Policy::Parse(std::string_view json, Kind kind) {
  try {
    Json doc;
    try {
      doc = Json::parse(json.begin(), json.end());
    } catch (const Json::parse_error& e) {
      return PolicyError{"Policy is not valid JSON (at byte " + std::to_string(e.byte) + ")"};
    } catch (const Json::exception&) {  // a number out of range
      return PolicyError{"Policy is not valid JSON"};
    }
    auto compiled = std::make_unique<Compiled>();
    Compiler compiler(kind);
    if (!compiler.Document(doc, &compiled->statements)) return PolicyError{compiler.error()};
    // Number the distinct condition keys, so one Evaluate asks for each once.
    std::vector<std::string> keys;
    for (Statement& s : compiled->statements) {
      for (Condition& c : s.conditions) {
        auto it = std::find(keys.begin(), keys.end(), c.key);
        size_t index = static_cast<size_t>(it - keys.begin());
        if (it == keys.end()) keys.push_back(c.key);
        if (index < kCachedKeys) c.key_index = static_cast<uint16_t>(index);
      }
    }
    return Policy(std::move(compiled));
  } catch (const std::exception& e) {
    // Nothing above should throw once the JSON is parsed; never let it escape.
    return PolicyError{std::string("Policy could not be read: ") + e.what()};
  }
}

Decision Policy::Evaluate(const EvalRequest& request) const {
  bool allowed = false;
  EvalScratch scratch;
  for (const Statement& s : compiled_->statements) {
    if (allowed && !s.deny) continue;  // once allowed, only a deny can change the answer
    if (!StatementMatches(s, request, &scratch)) continue;
    if (s.deny) return Decision::kDeny;
    allowed = true;
  }
  return allowed ? Decision::kAllow : Decision::kNotApplicable;
}

std::vector<std::string> Policy::ResourcePatterns() const {
  std::vector<std::string> out;
  for (const Statement& s : compiled_->statements) {
    for (const Pattern& t : s.resources) out.push_back(t.text);
  }
  return out;
}

std::vector<std::string> Policy::ActionPatterns() const {
  std::vector<std::string> out;
  for (const Statement& s : compiled_->statements) {
    out.insert(out.end(), s.actions.begin(), s.actions.end());
  }
  return out;
}

bool Policy::IsPublic() const {
  for (const Statement& s : compiled_->statements) {
    if (StatementIsPublic(s)) return true;
  }
  return false;
}

size_t Policy::statement_count() const { return compiled_->statements.size(); }

bool WildcardMatch(std::string_view pattern, std::string_view text, bool ignore_case) {
  return MatchGlob(pattern, LiteralPrefix(pattern), text, ignore_case);
}

}  // namespace strata::auth

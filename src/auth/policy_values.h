// The policy language's values and matching (auth/ only): ASCII text
// helpers, the wildcard and ARN matchers, numbers, dates and IP addresses as
// IAM reads them. Shared by the compiler (policy_compile.cc) and the
// evaluator (policy.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace strata::auth::policy_internal {

inline constexpr size_t kNpos = std::string_view::npos;

char LowerAscii(char c);
bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix);
bool IsDigit(char c);
bool AllDigits(std::string_view s);

// '*' any run, '?' one UTF-8 character; `literal` empty or one byte per
// pattern byte, non-zero where the byte is literal even if '*' or '?'.
bool MatchWildcards(std::string_view p, std::string_view literal, std::string_view t,
                    bool ignore_case);
bool SameText(std::string_view a, std::string_view b, bool ignore_case);
// Bytes before the first wildcard.
size_t LiteralPrefix(std::string_view p);
// MatchWildcards with the literal head (LiteralPrefix(p)) compared at once.
bool MatchGlob(std::string_view p, size_t literal_prefix, std::string_view t, bool ignore_case);
std::string_view SliceMask(std::string_view literal, size_t pos, size_t n = kNpos);
bool LooksLikeArn(std::string_view s);
// ArnEquals / ArnLike: part by part, a wildcard never crossing a ':'.
bool ArnMatches(std::string_view p, std::string_view literal, std::string_view arn);

std::optional<double> ParseNumber(std::string_view s);
// ISO 8601 (several forms) or epoch seconds: epoch seconds.
std::optional<int64_t> ParseDate(std::string_view s);

struct IpAddress {
  bool v6 = false;
  uint8_t bytes[16] = {};
};
struct Cidr {
  IpAddress address;
  int prefix = 0;  // bits
};
std::optional<IpAddress> ParseIp(std::string_view s);
// "10.0.0.0/8", "2001:db8::/32", or a bare address (/32, /128).
std::optional<Cidr> ParseCidr(std::string_view s);
bool CidrContains(const Cidr& cidr, const IpAddress& ip);

}  // namespace strata::auth::policy_internal

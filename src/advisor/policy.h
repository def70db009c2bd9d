// The operator's execution policy (docs/advisor.md): what the advisor may
// carry out, where, how much per day and when — and whether it waits for
// an approval first. A JSON document (admin API `advisor-policy`):
//   {"enabled": true, "require_approval": true, "buckets": ["*"],
//    "prefixes": [], "moves": ["hot->warm"], "max_bytes_per_day": 1099511627776,
//    "window_start_hour": 0, "window_end_hour": 24, "max_objects_per_second": 50}
// enabled false stops execution (what is under way pauses where it is).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "advisor/recommend.h"
#include "common/status.h"

namespace strata::advisor {

struct Policy {
  bool enabled = true;
  bool require_approval = true;
  std::vector<std::string> buckets = {"*"};  // globs ('*' any run of characters)
  std::vector<std::string> prefixes;          // key prefixes a move's prefix must start with; none: any
  std::vector<std::string> moves = {"hot->warm"};  // "<from media>-><to media>"
  uint64_t max_bytes_per_day = 1ull << 40;
  int window_start_hour = 0, window_end_hour = 24;  // UTC [start, end); start > end wraps
  uint32_t max_objects_per_second = 50;             // 0: no limit
};

// Strict: unknown fields, wrong types, unknown media, hours outside 0..24
// are InvalidArgument with a message naming the field.
Result<Policy> ParsePolicy(std::string_view json);
std::string PolicyJson(const Policy& p);

// Why `p` does not allow carrying out `r` ("" when it does; the window and
// `enabled` are not part of it).
std::string PolicyRefusal(const Policy& p, const Recommendation& r);
// Whether `unix_ns` is inside the policy's time window.
bool InWindow(const Policy& p, int64_t unix_ns);
bool GlobMatch(std::string_view pattern, std::string_view s);

}  // namespace strata::advisor

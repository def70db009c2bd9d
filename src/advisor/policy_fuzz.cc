// libFuzzer target: the advisor's execution policy (advisor/policy.h), the
// JSON body of PUT advisor-policy. The first byte picks what the rest is:
//   even  a policy document. What parses must hold the policy's bounds
//         (hours 0..24, a rate up to 1e6, every move FROM->TO of known
//         media), round-trip through PolicyJson to an equal policy and the
//         same bytes, cover the recommendation its own first move, bucket
//         and prefix describe, and have a window of the hours its bounds
//         say (start < end: end - start; start > end wraps; equal: none).
//   odd   "pattern\ntext": GlobMatch against a dynamic-programming matcher.
// Seeds: tests/fuzz/advisor_policy/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "advisor/policy.h"
#include "fuzz_util.h"
#include "tier/classes.h"

using namespace strata::advisor;

namespace {

// '*' matches any run of characters, every other byte itself.
bool ReferenceGlob(std::string_view p, std::string_view s) {
  std::vector<std::vector<char>> m(p.size() + 1, std::vector<char>(s.size() + 1, 0));
  m[0][0] = 1;
  for (size_t i = 1; i <= p.size(); ++i) {
    for (size_t j = 0; j <= s.size(); ++j) {
      if (p[i - 1] == '*') {
        m[i][j] = m[i - 1][j] || (j > 0 && m[i][j - 1]);
      } else {
        m[i][j] = j > 0 && p[i - 1] == s[j - 1] && m[i - 1][j - 1];
      }
    }
  }
  return m[p.size()][s.size()];
}

bool Same(const Policy& a, const Policy& b) {
  return a.enabled == b.enabled && a.require_approval == b.require_approval &&
         a.buckets == b.buckets && a.prefixes == b.prefixes && a.moves == b.moves &&
         a.max_bytes_per_day == b.max_bytes_per_day &&
         a.window_start_hour == b.window_start_hour && a.window_end_hour == b.window_end_hour &&
         a.max_objects_per_second == b.max_objects_per_second;
}

void CheckPolicy(std::string_view in) {
  auto parsed = ParsePolicy(in);
  if (!parsed.ok()) {
    FUZZ_CHECK(!parsed.status().message().empty());
    return;
  }
  const Policy& p = *parsed;
  FUZZ_CHECK(p.window_start_hour >= 0 && p.window_start_hour <= 24);
  FUZZ_CHECK(p.window_end_hour >= 0 && p.window_end_hour <= 24);
  FUZZ_CHECK(p.max_objects_per_second <= 1'000'000);
  for (const std::string& m : p.moves) {
    const size_t arrow = m.find("->");
    FUZZ_CHECK(arrow != std::string::npos);
    FUZZ_CHECK(strata::tier::ParseMedia(std::string_view(m).substr(0, arrow)).has_value());
    FUZZ_CHECK(strata::tier::ParseMedia(std::string_view(m).substr(arrow + 2)).has_value());
  }
  const std::string doc = PolicyJson(p);
  auto back = ParsePolicy(doc);
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(Same(*back, p));
  FUZZ_CHECK(PolicyJson(*back) == doc);

  // The recommendation the policy's own first entries describe is covered.
  if (!p.moves.empty() && !p.buckets.empty()) {
    Recommendation r;
    const size_t arrow = p.moves[0].find("->");
    r.from_media = p.moves[0].substr(0, arrow);
    r.to_media = p.moves[0].substr(arrow + 2);
    for (char c : p.buckets[0]) {
      if (c != '*') r.bucket.push_back(c);  // each '*' matching nothing
    }
    r.prefix = (p.prefixes.empty() ? std::string() : p.prefixes[0]) + "more/";
    FUZZ_CHECK(PolicyRefusal(p, r).empty());
  }
  // The window holds the hours its bounds say.
  int hours = 0;
  for (int h = 0; h < 24; ++h) hours += InWindow(p, int64_t{h} * 3600 * 1'000'000'000);
  const int start = p.window_start_hour, end = p.window_end_hour;
  const int want = start == end ? 0 : start < end ? end - start : (24 - start) + end;
  FUZZ_CHECK(hours == want);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    CheckPolicy(in);
    return 0;
  }
  if (in.size() > 512) return 0;  // the reference matcher is quadratic
  std::string_view rest = in;
  const std::string_view pattern = strata::fuzz::NextLine(&rest);
  FUZZ_CHECK(GlobMatch(pattern, rest) == ReferenceGlob(pattern, rest));
  return 0;
}

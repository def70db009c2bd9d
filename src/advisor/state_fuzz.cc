// libFuzzer target: the advisor's documents restored from metadata at
// start-up (advisor/access_stats.h, advisor/recommend.h). A damaged record
// must be refused with InvalidArgument, never crash the server or leave
// figures that break the arithmetic later. The first byte picks the document:
//   even  the access statistics (AccessStats::Restore). What is restored
//         must hold non-negative, finite figures; serialised and restored
//         again it must give the same snapshot; and recording a read into
//         every restored prefix, then taking a snapshot, must stay defined
//         (UBSan checks the arithmetic) and count that read.
//   odd   one recommendation (ParseRecommendation). What parses must
//         round-trip: rendered, parsed again and rendered to the same bytes.
// Seeds: tests/fuzz/advisor_state/.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "advisor/access_stats.h"
#include "advisor/recommend.h"
#include "fuzz_util.h"

using namespace strata::advisor;

namespace {

constexpr int64_t kDayNs = 86400ll * 1'000'000'000;
constexpr int64_t kNow = 1'796'083'200ll * 1'000'000'000;  // 2026-12-01T00:00:00Z

auto Fields(const PrefixStats& s) {
  return std::tie(s.bucket, s.prefix, s.reads, s.bytes_read, s.total_reads, s.total_bytes,
                  s.first_read_ns, s.last_read_ns, s.as_of_ns, s.last_day, s.day_reads);
}

void CheckStats(std::string_view in) {
  StatsOptions o;
  o.max_prefixes = 64;
  AccessStats stats(o);
  if (strata::Status st = stats.Restore(in); !st.ok()) {
    FUZZ_CHECK(st.code() == strata::Code::kInvalidArgument);
    FUZZ_CHECK(stats.size() == 0);
    return;
  }
  const std::vector<PrefixStats> snap = stats.Snapshot(kNow);
  for (const PrefixStats& s : snap) {
    FUZZ_CHECK(std::isfinite(s.reads) && s.reads >= 0);
    FUZZ_CHECK(std::isfinite(s.bytes_read) && s.bytes_read >= 0);
    FUZZ_CHECK(s.first_read_ns >= 0 && s.last_read_ns >= 0 && s.as_of_ns >= 0 && s.last_day >= 0);
    const int64_t today = stats.DayOf(kNow);
    FUZZ_CHECK(s.ActiveDays(today, kDays) <= kDays);
    (void)s.ReadsInWindow(today, kDays);
  }
  AccessStats again(o);
  FUZZ_CHECK(again.Restore(stats.Serialize()).ok());
  const std::vector<PrefixStats> snap2 = again.Snapshot(kNow);
  FUZZ_CHECK(snap2.size() == snap.size());
  for (size_t i = 0; i < snap.size(); ++i) FUZZ_CHECK(Fields(snap2[i]) == Fields(snap[i]));

  // A read into each restored prefix, at a time after and before what it holds.
  for (const PrefixStats& s : snap) {
    const uint64_t before = s.total_reads;
    for (int64_t at : {kNow, int64_t{1}, s.last_read_ns + kDayNs}) {
      again.RecordRead(s.bucket, s.prefix + "k", 4096, at);
    }
    for (const PrefixStats& t : again.Snapshot(kNow)) {
      if (t.bucket == s.bucket && t.prefix == s.prefix && PrefixOf(s.prefix + "k", o.prefix_depth) == s.prefix) {
        FUZZ_CHECK(t.total_reads >= before || before > UINT64_MAX - 3);
        FUZZ_CHECK(std::isfinite(t.reads) && t.reads >= 0);
      }
    }
  }
}

void CheckRecommendation(std::string_view in) {
  auto parsed = ParseRecommendation(in);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == strata::Code::kInvalidArgument);
    return;
  }
  const std::string doc = RecommendationJson(*parsed);
  auto back = ParseRecommendation(doc);
  FUZZ_CHECK(back.ok());
  FUZZ_CHECK(RecommendationJson(*back) == doc);
  Coefficients model;
  (void)RecommendationJson(*back, &model);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    CheckStats(in);
  } else {
    CheckRecommendation(in);
  }
  return 0;
}

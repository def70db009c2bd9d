// The tier advisor's cost on the read path (issue 18: the access statistics
// may cost at most 3 % of 4 KiB GET throughput): two servers from the same
// binary, one with --advisor off, the other with the default (every read
// counted: --advisor-sample 1), measured in interleaved runs with the order
// alternating (see audit_cases.cc for why). Every key is under one prefix,
// "get/", so all readers meet on one statistics shard: the worst case.
#include <cstdio>

#include "s3_cases.h"
#include "server_process.h"

namespace strata::bench {

void RunAdvisorOverhead(const CaseOptions& opt, const std::string& binary, Report& report) {
  constexpr int kConcurrency = 16;
  ServerOptions off_options;
  off_options.extra_args = {"--advisor", "off", "--kv-listen", "off"};
  ServerOptions on_options;
  on_options.extra_args = {"--advisor-sample", "1", "--kv-listen", "off"};
  std::unique_ptr<ServerProcess> off = ServerProcess::Start(binary, off_options);
  std::unique_ptr<ServerProcess> on = ServerProcess::Start(binary, on_options);
  std::fprintf(stderr, "[s3bench] advisor group: --advisor off on port %d, on on port %d\n",
               off->port(), on->port());
  const Target off_target{off->host(), off->port(), off->credentials()};
  const Target on_target{on->host(), on->port(), on->credentials()};
  PopulateSmallGetKeys(off_target, opt.small_get_keys);
  PopulateSmallGetKeys(on_target, opt.small_get_keys);
  const std::string c = std::to_string(kConcurrency);
  Row& off_row = report.Add("get4k_advisor_off_c" + c, "GET 4 KiB, c=" + c + ", --advisor off",
                            Unit::kOpsPerSecond);
  Comparison vs_off;
  vs_off.limit_ids = {off_row.id};
  vs_off.limit_label = "same, --advisor off";
  vs_off.target = 0.97;
  Row& on_row = report.Add("get4k_advisor_on_c" + c, "GET 4 KiB, c=" + c + ", every read counted",
                           Unit::kOpsPerSecond, vs_off);
  for (int run = 0; run < opt.runs; ++run) {
    std::pair<Row*, const Target*> order[] = {{&off_row, &off_target}, {&on_row, &on_target}};
    if (run % 2 == 1) std::swap(order[0], order[1]);
    for (auto [row, target] : order) {
      report.MeasureRun(*row, run, opt.runs, [&, target = target](int) {
        TimedResult t = TimedSmallGets(*target, kConcurrency, opt.duration_s, opt.small_get_keys);
        return RunFigure{t.OpsPerSecond(), t.PercentileUs(0.50), t.PercentileUs(0.99)};
      });
    }
  }
}

}  // namespace strata::bench

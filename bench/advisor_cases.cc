// The tier advisor's cost on the read path (issue 18: the access statistics
// may cost at most 3 % of 4 KiB GET throughput): two servers from the same
// binary, one with --advisor off, the other with the default (every read
// counted: --advisor-sample 1), measured in interleaved runs with the order
// alternating (see audit_cases.cc for why). Every key is under one prefix,
// "get/", so all readers meet on one statistics shard: the worst case. The
// server's CPU per GET is reported beside throughput (target: at most 3 %
// more with every read counted).
#include <cmath>
#include <cstdio>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "advisor/access_stats.h"
#include "common/time_util.h"
#include "s3_cases.h"
#include "server_process.h"
#include "workload.h"

namespace strata::bench {

namespace {

// The statistics on their own: kThreads threads counting reads of keys under
// one prefix (one shard, one mutex: the worst case) for `seconds`, each read
// stamped with the wall clock as the server does. CPU nanoseconds per read.
double StatsNanosPerRead(double seconds) {
  constexpr int kThreads = 16;
  advisor::AccessStats stats(advisor::StatsOptions{});
  std::vector<std::string> keys;
  for (int i = 0; i < 1024; ++i) keys.push_back("get/" + std::to_string(i));
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> reads{0};
  std::mutex mu;
  double cpu = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const double c0 = ThreadCpuSeconds();
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 256; ++i) {
          stats.RecordRead("bench", keys[(n + i + t) % keys.size()], 4096, UnixNowNs());
        }
        n += 256;
      }
      reads.fetch_add(n);
      std::lock_guard lock(mu);
      cpu += ThreadCpuSeconds() - c0;
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& t : threads) t.join();
  return reads.load() ? cpu * 1e9 / static_cast<double>(reads.load()) : NAN;
}

}  // namespace

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
  FeatureRows rows = MeasureFeatureCost(
      opt, report,
      {&off_target, off->pid(), "get4k_advisor_off_c" + c, "GET 4 KiB, c=" + c + ", --advisor off"},
      {&on_target, on->pid(), "get4k_advisor_on_c" + c, "GET 4 KiB, c=" + c + ", every read counted"},
      0.97, 1.03, [&](const Target& target, int) {
        return TimedSmallGets(target, kConcurrency, opt.duration_s, opt.small_get_keys);
      });
  // The counting alone, in-process, against the server's CPU per GET above:
  // a figure the shared cores' scheduling does not blur.
  Comparison of_get;
  of_get.limit_ids = {rows.off_cpu->id};
  of_get.limit_label = "server CPU per GET";
  of_get.target = 0.03;
  of_get.at_most = true;
  Row& per_read = report.Add("advisor_stats_ns_per_read",
                             "  statistics alone, CPU per counted read (16 threads, 1 prefix)",
                             Unit::kMicroseconds, of_get);
  report.Measure(per_read, opt.runs, [&](int) {
    return RunFigure{StatsNanosPerRead(std::min(opt.duration_s, 1.0)) / 1000.0};
  });
}

}  // namespace strata::bench

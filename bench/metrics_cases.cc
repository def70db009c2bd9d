// The cost of a Prometheus scrape on a store with many buckets (issue 15:
// "/metrics scrape time with 10,000 buckets"): every bucket has its own
// per-bucket series (strata_bucket_objects / strata_bucket_bytes), so the
// exposition grows with the bucket count. One server with --metrics-listen,
// `buckets` buckets created from 16 connections, then one timed GET /metrics
// per run (the median is the figure); the exposition's size and series count
// are printed as a note. Informational: no limit of this machine bounds it.
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "s3_cases.h"
#include "server_process.h"
#include "workload.h"

namespace strata::bench {

void RunMetricsScrape(const CaseOptions& opt, const std::string& binary, int buckets,
                      Report& report) {
  const int metrics_port = Socket::ListenLoopback(0).LocalPort();
  ServerOptions o;
  o.extra_args = {"--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port), "--kv-listen",
                  "off"};
  std::unique_ptr<ServerProcess> server = ServerProcess::Start(binary, o);
  const Target t{server->host(), server->port(), server->credentials()};
  std::fprintf(stderr, "[s3bench] metrics group: creating %d buckets on port %d\n", buckets,
               server->port());
  constexpr int kCreators = 16;
  std::atomic<int> next{0};
  std::vector<std::thread> creators;
  std::exception_ptr failed;
  std::mutex failed_mu;
  for (int w = 0; w < kCreators; ++w) {
    creators.emplace_back([&] {
      try {
        S3Client c(t.host, t.port, t.credentials);
        for (int i = next++; i < buckets; i = next++) {
          char name[32];
          std::snprintf(name, sizeof name, "scrape-%06d", i);
          S3Request req("PUT", std::string("/") + name);
          ExpectStatus(c.Send(req, ""), 200, "CreateBucket");
        }
      } catch (...) {
        std::lock_guard lock(failed_mu);
        if (!failed) failed = std::current_exception();
      }
    });
  }
  for (auto& th : creators) th.join();
  if (failed) std::rethrow_exception(failed);

  Row& row = report.Add("metrics_scrape_" + std::to_string(buckets),
                        "GET /metrics, " + std::to_string(buckets) + " buckets",
                        Unit::kMilliseconds);
  size_t bytes = 0, series = 0;
  S3Client scraper(t.host, metrics_port, t.credentials);
  for (int run = 0; run < opt.runs; ++run) {
    report.MeasureRun(row, run, opt.runs, [&](int) {
      const double start = NowSeconds();
      S3Response r = scraper.Send(S3Request("GET", "/metrics"), "");
      const double ms = (NowSeconds() - start) * 1e3;
      ExpectStatus(r, 200, "GET /metrics");
      bytes = r.body.size();
      series = 0;
      for (size_t at = 0; at < r.body.size();) {
        size_t end = r.body.find('\n', at);
        if (end == std::string::npos) end = r.body.size();
        if (end > at && r.body[at] != '#') ++series;
        at = end + 1;
      }
      if (r.body.find("strata_bucket_objects{bucket=\"scrape-000000\"}") == std::string::npos) {
        throw BenchError("the exposition lacks the buckets' series");
      }
      return RunFigure{ms, ms * 1e3, ms * 1e3};
    });
  }
  report.AddNote("metrics group: the exposition for " + std::to_string(buckets) + " buckets is " +
                 std::to_string(bytes) + " bytes, " + std::to_string(series) + " samples");
}

}  // namespace strata::bench

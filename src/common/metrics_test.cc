#include "common/metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace strata::metrics {
namespace {

TEST(MetricsTest, CountersGaugesAndLabelsRender) {
  Registry r;
  auto& req = r.AddCounter("strata_test_requests_total", "Requests.", {"operation", "code"});
  req.With({"GetObject", "200"}).Add();
  req.With({"GetObject", "200"}).Add(2);
  req.With({"PutObject", "503"}).Add();
  r.AddGauge("strata_test_in_flight", "In flight.").With({}).Set(4);
  const std::string text = r.Render();
  EXPECT_NE(text.find("# HELP strata_test_requests_total Requests.\n"
                      "# TYPE strata_test_requests_total counter\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("strata_test_requests_total{operation=\"GetObject\",code=\"200\"} 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("strata_test_requests_total{operation=\"PutObject\",code=\"503\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE strata_test_in_flight gauge\nstrata_test_in_flight 4\n"),
            std::string::npos)
      << text;
}

TEST(MetricsTest, HistogramBucketsAreCumulativeAndInclusive) {
  Registry r;
  auto& h = r.AddHistogram("strata_test_seconds", "Latency.", {"op"}, {0.1, 0.5, 1});
  auto& s = h.With({"x"});
  for (double v : {0.05, 0.1, 0.2, 0.7, 3.0}) s.Observe(v);
  const std::string text = r.Render();
  for (const char* line : {"strata_test_seconds_bucket{op=\"x\",le=\"0.1\"} 2\n",
                           "strata_test_seconds_bucket{op=\"x\",le=\"0.5\"} 3\n",
                           "strata_test_seconds_bucket{op=\"x\",le=\"1\"} 4\n",
                           "strata_test_seconds_bucket{op=\"x\",le=\"+Inf\"} 5\n",
                           "strata_test_seconds_count{op=\"x\"} 5\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
  EXPECT_NE(text.find("strata_test_seconds_sum{op=\"x\"} 4.05"), std::string::npos) << text;
}

TEST(MetricsTest, SnapshotReadsOneFamilyAsItIsNow) {
  Registry r;
  auto& c = r.AddCounter("strata_test_requests_total", "Requests.", {"operation", "code"});
  auto& h = r.AddHistogram("strata_test_seconds", "Latency.", {"op"}, {0.1, 0.5});
  c.With({"GetObject", "200"}).Add(3);
  c.With({"PutObject", "503"}).Add();
  for (double v : {0.05, 0.2, 0.7}) h.With({"x"}).Observe(v);
  EXPECT_TRUE(r.Snapshot("strata_test_missing").empty());
  auto counters = r.Snapshot("strata_test_requests_total");
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0].labels, (Labels{"GetObject", "200"}));
  EXPECT_EQ(counters[0].value, 3);
  EXPECT_EQ(counters[1].labels, (Labels{"PutObject", "503"}));
  EXPECT_EQ(counters[1].value, 1);
  EXPECT_TRUE(counters[0].cumulative.empty());
  auto hist = r.Snapshot("strata_test_seconds");
  ASSERT_EQ(hist.size(), 1u);
  EXPECT_EQ(hist[0].bounds, (std::vector<double>{0.1, 0.5}));
  EXPECT_EQ(hist[0].cumulative, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(hist[0].value, 3);
  EXPECT_DOUBLE_EQ(hist[0].sum, 0.95);
  h.With({"x"}).Observe(0.01);  // a snapshot is a copy: later observations are not in it
  EXPECT_EQ(hist[0].cumulative[0], 1u);
  EXPECT_EQ(r.Snapshot("strata_test_seconds")[0].cumulative[0], 2u);
}

TEST(MetricsTest, EscapingAndValues) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(FormatValue(3), "3");
  EXPECT_EQ(FormatValue(0.25), "0.25");
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
  Registry r;
  r.AddCollector([](std::vector<Collected>& out) {
    out.push_back({"strata_test_pool_bytes", "Pool.", "gauge", {{{{"pool", "we\"ird"}}, 7}}});
  });
  EXPECT_NE(r.Render().find("strata_test_pool_bytes{pool=\"we\\\"ird\"} 7\n"), std::string::npos)
      << r.Render();
}

TEST(MetricsTest, ConcurrentAddsAllCount) {
  Registry r;
  auto& c = r.AddCounter("strata_test_total", "T.", {"t"});
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) c.With({"same"}).Add();
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(c.With({"same"}).value(), 40000);
}

TEST(MetricsTest, ProcessCollectorReadsProc) {
  Registry r;
  AddProcessCollector(r);
  const std::string text = r.Render();
  for (const char* name : {"process_cpu_seconds_total ", "process_resident_memory_bytes ",
                           "process_open_fds ", "process_max_fds ", "process_start_time_seconds "}) {
    size_t at = text.find(std::string("\n") + name);
    ASSERT_NE(at, std::string::npos) << name;
    double v = std::stod(text.substr(at + 1 + std::string(name).size()));
    if (std::string(name) != "process_cpu_seconds_total ") EXPECT_GT(v, 0) << name;
  }
}

}  // namespace
}  // namespace strata::metrics

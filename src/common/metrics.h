// Metrics in the Prometheus text exposition format (version 0.0.4): counters,
// gauges and histograms with labels, kept by the code that counts (atomics:
// a hot path pays one relaxed add), plus collectors that read a value when a
// scrape renders (process, capacity, queues). `strata server
// --metrics-listen` serves Registry::Render() on GET /metrics.
//
// Written here rather than taken from a library: no Prometheus client for
// C++ is packaged in Debian 12 (prometheus-cpp is not), and the text format
// is small (https://prometheus.io/docs/instrumenting/exposition_formats/).
//
// Names follow Prometheus conventions: `strata_` prefix, base units
// (seconds, bytes), `_total` on counters. Families are registered once at
// start-up; label values are bounded by their callers (operation names, HTTP
// status codes, pool names — never keys or request ids).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::metrics {

class Counter {
 public:
  void Add(double n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

class Gauge {
 public:
  void Set(double v) { v_.store(v, std::memory_order_relaxed); }
  void Add(double n) { v_.fetch_add(n, std::memory_order_relaxed); }
  double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

class Histogram {
 public:
  explicit Histogram(const std::vector<double>* bounds);
  void Observe(double v);
  // Cumulative counts per bound (then +Inf), the sum and the count.
  std::vector<uint64_t> Cumulative() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }
  const std::vector<double>& bounds() const { return *bounds_; }

 private:
  const std::vector<double>* bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // one per bound, then +Inf
  std::atomic<double> sum_{0};
};

// Latency buckets in seconds: 0.5 ms to 10 s.
const std::vector<double>& LatencyBuckets();

using Labels = std::vector<std::string>;  // values, in the family's label order

template <class M>
class Family {
 public:
  // The series of these label values (made on first use). Keep the
  // reference: the series lives as long as the registry.
  M& With(const Labels& values);

 private:
  friend class Registry;
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         const std::vector<double>* bounds = nullptr)
      : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)),
        bounds_(bounds) {}
  std::string name_, help_;
  std::vector<std::string> label_names_;
  const std::vector<double>* bounds_;
  mutable std::mutex mu_;
  std::map<Labels, std::unique_ptr<M>> series_;  // guarded by mu_
};

// One series of a registered family as it is now (Registry::Snapshot).
struct SeriesSnapshot {
  Labels labels;
  double value = 0;                  // counter / gauge; a histogram's count
  std::vector<uint64_t> cumulative;  // histogram: per bound, then +Inf
  std::vector<double> bounds;        // histogram
  double sum = 0;                    // histogram
};

// What a collector reports at scrape time: one family's samples.
struct Sample {
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};
struct Collected {
  std::string name, help;
  std::string type;  // "gauge" or "counter"
  std::vector<Sample> samples;
};
using Collector = std::function<void(std::vector<Collected>& out)>;

class Registry {
 public:
  Registry();
  ~Registry();
  Family<Counter>& AddCounter(std::string name, std::string help,
                              std::vector<std::string> label_names = {});
  Family<Gauge>& AddGauge(std::string name, std::string help,
                          std::vector<std::string> label_names = {});
  Family<Histogram>& AddHistogram(std::string name, std::string help,
                                  std::vector<std::string> label_names,
                                  std::vector<double> bounds);
  void AddCollector(Collector c);

  // The whole exposition, families in registration order, then collected ones.
  std::string Render() const;
  // The series of the registered family `name` (counter, gauge or histogram;
  // not collectors), ordered by label values; empty when there is none. For
  // readers inside the process (the admin API's `requests` document).
  std::vector<SeriesSnapshot> Snapshot(std::string_view name) const;

 private:
  struct Entry;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<std::unique_ptr<std::vector<double>>> bounds_;
  std::vector<Collector> collectors_;
};

// The content type of Render()'s text.
inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

// Label values as the format escapes them (backslash, double quote, newline).
std::string EscapeLabelValue(std::string_view v);
// A sample value as the format writes it (integers without a fraction,
// +Inf / -Inf / NaN spelled out).
std::string FormatValue(double v);

// Process metrics from /proc/self (RSS, virtual memory, open descriptors,
// CPU seconds, start time) and the descriptor limit, as the Prometheus
// client libraries name them (process_*).
void AddProcessCollector(Registry& r);

}  // namespace strata::metrics

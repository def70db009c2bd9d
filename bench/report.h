// The result table: one row per figure, each the median of R runs, printed
// with the runs themselves and, for S3 rows, the same-run limit it is
// bounded by, the fraction of that limit and the target.
#pragma once

#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::bench {

enum class Unit {
  kBytesPerSecond,  // shown as GB/s (10^9 bytes, like docs/performance.md and shared/limits.md)
  kOpsPerSecond,
  kMilliseconds,  // latency figures (listing pages)
  kMicroseconds,  // short latency figures (KV LOOKUP)
  kCores,         // CPU-seconds per second of wall clock (how many cores were busy)
};

// How a row relates to a limit measured in the same run.
struct Comparison {
  std::vector<std::string> limit_ids;  // limit = the smallest of these rows' medians
  std::string limit_label;             // e.g. "RR c=16", "min(loopback, MD5)"
  double target = NAN;                 // fraction to reach (NaN: informational only)
  bool at_most = false;                // latency ratios: stay at or below target
  bool ratio = false;                  // print the fraction as "12.3x" (target ">= 10x")
};

// Thrown by a case when the server lacks the operation (HTTP 501): the row
// shows "n/a (<what>)" and this is not an error.
class NotImplementedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Row {
  std::string id;
  std::string label;
  Unit unit = Unit::kOpsPerSecond;
  Comparison comparison;
  std::vector<double> runs;            // the main figure of each run
  std::vector<double> p50_us, p99_us;  // per run, when latency is meaningful
  std::string note;                    // "n/a (...)" or "FAILED: ..."
  bool failed = false;

  double median() const;
};

// One run's result: the main figure plus optional latency percentiles.
struct RunFigure {
  double value = NAN;
  double p50_us = NAN;
  double p99_us = NAN;
};

class Report {
 public:
  Row& Add(std::string id, std::string label, Unit unit, Comparison comparison = {});
  const Row* Find(const std::string& id) const;

  // Runs `one_run(run_index)` `runs` times into `row`, printing progress to
  // stderr. A BenchError marks the row FAILED; NotImplementedError marks it
  // n/a; either way the remaining runs of the row are skipped.
  void Measure(Row& row, int runs, const std::function<RunFigure(int run)>& one_run);
  // One run (index `run` of `runs`) of `row`, for cases that interleave the
  // runs of several rows. Skipped (returns false) once the row is FAILED or
  // n/a; returns whether the run succeeded.
  bool MeasureRun(Row& row, int run, int runs, const std::function<RunFigure(int run)>& one_run);

  // A line printed after the table (summaries that are not a row's figure).
  void AddNote(std::string line) { notes_.push_back(std::move(line)); }

  void Print(std::FILE* out) const;
  bool AnyFailed() const;

 private:
  struct ComparisonCells {
    std::string limit, fraction, target;
  };
  ComparisonCells Compare(const Row& row) const;
  double LimitOf(const Comparison& c) const;  // NaN if a limit row is missing
  std::deque<Row> rows_;                      // deque: references returned by Add stay valid
  std::vector<std::string> notes_;
};

}  // namespace strata::bench

#include "report.h"

#include <algorithm>
#include <cstdarg>

#include "net.h"
#include "workload.h"

namespace strata::bench {
namespace {

std::string Printf(const char* fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

std::string FormatLatencyUs(double us) {
  if (std::isnan(us)) return "-";
  if (us < 1000) return Printf("%.0f us", us);
  return Printf("%.2f ms", us / 1000);
}

std::string FormatValue(Unit unit, double v) {
  if (std::isnan(v)) return "-";
  switch (unit) {
    case Unit::kBytesPerSecond:
      return Printf("%.2f GB/s", v / 1e9);
    case Unit::kOpsPerSecond:
      return Printf("%.0f ops/s", v);
    case Unit::kMilliseconds:
      return Printf("%.2f ms", v);
    case Unit::kMicroseconds:
      return Printf("%.1f us", v);
    case Unit::kCores:
      return Printf("%.2f cores", v);
  }
  return "?";
}

// The bare number, for the list of runs.
std::string FormatRun(Unit unit, double v) {
  switch (unit) {
    case Unit::kBytesPerSecond:
      return Printf("%.2f", v / 1e9);
    case Unit::kOpsPerSecond:
      return Printf("%.0f", v);
    case Unit::kMilliseconds:
      return Printf("%.2f", v);
    case Unit::kMicroseconds:
      return Printf("%.1f", v);
    case Unit::kCores:
      return Printf("%.2f", v);
  }
  return "?";
}

}  // namespace

double Row::median() const { return Median(runs); }

Row& Report::Add(std::string id, std::string label, Unit unit, Comparison comparison) {
  Row& row = rows_.emplace_back();
  row.id = std::move(id);
  row.label = std::move(label);
  row.unit = unit;
  row.comparison = std::move(comparison);
  return row;
}

const Row* Report::Find(const std::string& id) const {
  for (const Row& row : rows_) {
    if (row.id == id) return &row;
  }
  return nullptr;
}

void Report::Measure(Row& row, int runs, const std::function<RunFigure(int run)>& one_run) {
  for (int run = 0; run < runs; ++run) {
    if (!MeasureRun(row, run, runs, one_run)) return;
  }
}

bool Report::MeasureRun(Row& row, int run, int runs,
                        const std::function<RunFigure(int run)>& one_run) {
  if (row.failed || !row.note.empty()) return false;
  try {
    RunFigure fig = one_run(run);
    row.runs.push_back(fig.value);
    if (!std::isnan(fig.p50_us)) row.p50_us.push_back(fig.p50_us);
    if (!std::isnan(fig.p99_us)) row.p99_us.push_back(fig.p99_us);
    std::fprintf(stderr, "[s3bench] %-42s run %d/%d: %s  p50 %s  p99 %s\n", row.label.c_str(),
                 run + 1, runs, FormatValue(row.unit, fig.value).c_str(),
                 FormatLatencyUs(fig.p50_us).c_str(), FormatLatencyUs(fig.p99_us).c_str());
    return true;
  } catch (const NotImplementedError& e) {
    row.note = std::string("n/a (") + e.what() + ")";
    row.runs.clear();
    std::fprintf(stderr, "[s3bench] %-42s %s\n", row.label.c_str(), row.note.c_str());
  } catch (const BenchError& e) {
    row.note = std::string("FAILED: ") + e.what();
    row.failed = true;
    std::fprintf(stderr, "[s3bench] %-42s %s\n", row.label.c_str(), row.note.c_str());
  }
  return false;
}

double Report::LimitOf(const Comparison& c) const {
  if (c.limit_ids.empty()) return NAN;
  double limit = INFINITY;
  for (const std::string& id : c.limit_ids) {
    const Row* row = Find(id);
    if (row == nullptr || row->runs.empty()) return NAN;
    limit = std::min(limit, row->median());
  }
  return limit;
}

// "limit", "fraction" and "target" cells of a row ("" where not applicable).
Report::ComparisonCells Report::Compare(const Row& row) const {
  ComparisonCells cells;
  const Comparison& c = row.comparison;
  double limit = LimitOf(c);
  if (std::isnan(limit)) return cells;
  cells.limit = c.limit_label + " " + FormatValue(Find(c.limit_ids.front())->unit, limit);
  double fraction = row.median() / limit;
  bool as_ratio = c.at_most || c.ratio;
  cells.fraction = as_ratio ? Printf(fraction < 0.1 ? "%.3fx" : "%.2fx", fraction)
                            : Printf("%.1f %%", fraction * 100);
  if (std::isnan(c.target)) return cells;
  bool met = c.at_most ? fraction <= c.target : fraction >= c.target;
  if (c.at_most) {
    cells.target = Printf("<= %.2fx", c.target);
  } else if (c.ratio) {
    cells.target = Printf(">= %.0fx", c.target);
  } else {
    cells.target = Printf(">= %.0f %%", c.target * 100);
  }
  cells.target.append(met ? " ok" : " MISS");
  return cells;
}

void Report::Print(std::FILE* out) const {
  const char* row_fmt = "%-40s %-14s %-9s %-9s %-30s %-9s %-12s %s\n";
  std::fprintf(out, row_fmt, "case", "median", "p50", "p99", "limit (same run)", "fraction",
               "target", "runs");
  std::fprintf(out, "%s\n", std::string(154, '-').c_str());
  for (const Row& row : rows_) {
    if (!row.note.empty()) {
      std::fprintf(out, "%-40s %s\n", row.label.c_str(), row.note.c_str());
      continue;
    }
    ComparisonCells cells = Compare(row);
    std::string runs;
    for (double v : row.runs) {
      if (!runs.empty()) runs.append(" ");
      runs.append(FormatRun(row.unit, v));
    }
    std::fprintf(out, row_fmt, row.label.c_str(), FormatValue(row.unit, row.median()).c_str(),
                 FormatLatencyUs(Median(row.p50_us)).c_str(),
                 FormatLatencyUs(Median(row.p99_us)).c_str(), cells.limit.c_str(),
                 cells.fraction.c_str(), cells.target.c_str(), runs.c_str());
  }
  if (!notes_.empty()) std::fprintf(out, "\n");
  for (const std::string& line : notes_) std::fprintf(out, "%s\n", line.c_str());
}

bool Report::AnyFailed() const {
  return std::any_of(rows_.begin(), rows_.end(), [](const Row& r) { return r.failed; });
}

}  // namespace strata::bench

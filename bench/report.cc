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
    case Unit::kBytesPerSecond: return Printf("%.2f GB/s", v / 1e9);
    case Unit::kOpsPerSecond: return Printf("%.0f ops/s", v);
    case Unit::kMilliseconds: return Printf("%.2f ms", v);
  }
  return "?";
}

// The bare number, for the list of runs.
std::string FormatRun(Unit unit, double v) {
  switch (unit) {
    case Unit::kBytesPerSecond: return Printf("%.2f", v / 1e9);
    case Unit::kOpsPerSecond: return Printf("%.0f", v);
    case Unit::kMilliseconds: return Printf("%.2f", v);
  }
  return "?";
}

double MedianOf(const std::vector<double>& v) { return Median(v); }

}  // namespace

double Row::median() const { return MedianOf(runs); }

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
    try {
      RunFigure fig = one_run(run);
      row.runs.push_back(fig.value);
      if (!std::isnan(fig.p50_us)) row.p50_us.push_back(fig.p50_us);
      if (!std::isnan(fig.p99_us)) row.p99_us.push_back(fig.p99_us);
      std::fprintf(stderr, "[s3bench] %-40s run %d/%d: %s  p50 %s  p99 %s\n", row.label.c_str(),
                   run + 1, runs, FormatValue(row.unit, fig.value).c_str(),
                   FormatLatencyUs(fig.p50_us).c_str(), FormatLatencyUs(fig.p99_us).c_str());
    } catch (const NotImplementedError& e) {
      row.note = std::string("n/a (") + e.what() + ")";
      row.runs.clear();
      std::fprintf(stderr, "[s3bench] %-40s %s\n", row.label.c_str(), row.note.c_str());
      return;
    } catch (const BenchError& e) {
      row.note = std::string("FAILED: ") + e.what();
      row.failed = true;
      std::fprintf(stderr, "[s3bench] %-40s %s\n", row.label.c_str(), row.note.c_str());
      return;
    }
  }
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

void Report::Print(std::FILE* out) const {
  const char* header_fmt = "%-36s %-14s %-9s %-9s %-30s %-9s %-12s %s\n";
  std::fprintf(out, header_fmt, "case", "median", "p50", "p99", "limit (same run)", "fraction",
               "target", "runs");
  std::fprintf(out, "%s\n", std::string(150, '-').c_str());
  for (const Row& row : rows_) {
    if (!row.note.empty()) {
      std::fprintf(out, "%-36s %s\n", row.label.c_str(), row.note.c_str());
      continue;
    }
    std::string limit_text, fraction_text, target_text;
    double limit = LimitOf(row.comparison);
    if (!std::isnan(limit)) {
      const Row* first = Find(row.comparison.limit_ids.front());
      limit_text = row.comparison.limit_label + " " + FormatValue(first->unit, limit);
      double fraction = row.median() / limit;
      fraction_text = row.comparison.at_most ? Printf("%.2fx", fraction)
                                             : Printf("%.1f %%", fraction * 100);
      if (!std::isnan(row.comparison.target)) {
        bool met = row.comparison.at_most ? fraction <= row.comparison.target
                                          : fraction >= row.comparison.target;
        target_text = row.comparison.at_most ? Printf("<= %.1fx", row.comparison.target)
                                             : Printf(">= %.0f %%", row.comparison.target * 100);
        target_text += met ? " ok" : " MISS";
      }
    }
    std::string runs_text;
    for (double v : row.runs) runs_text += (runs_text.empty() ? "" : " ") + FormatRun(row.unit, v);
    std::fprintf(out, header_fmt, row.label.c_str(), FormatValue(row.unit, row.median()).c_str(),
                 FormatLatencyUs(MedianOf(row.p50_us)).c_str(),
                 FormatLatencyUs(MedianOf(row.p99_us)).c_str(), limit_text.c_str(),
                 fraction_text.c_str(), target_text.c_str(), runs_text.c_str());
  }
}

bool Report::AnyFailed() const {
  return std::any_of(rows_.begin(), rows_.end(), [](const Row& r) { return r.failed; });
}

}  // namespace strata::bench

#include "common/metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace strata::metrics {

Histogram::Histogram(const std::vector<double>* bounds)
    : bounds_(bounds), counts_(new std::atomic<uint64_t>[bounds->size() + 1]) {
  for (size_t i = 0; i <= bounds->size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double v) {
  size_t i = std::lower_bound(bounds_->begin(), bounds_->end(), v) - bounds_->begin();
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::Cumulative() const {
  std::vector<uint64_t> out(bounds_->size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_->size(); ++i) {
    running += counts_[i].load(std::memory_order_relaxed);
    out[i] = running;
  }
  return out;
}

const std::vector<double>& LatencyBuckets() {
  static const std::vector<double> b = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                        0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return b;
}

template <class M>
M& Family<M>::With(const Labels& values) {
  std::lock_guard lock(mu_);
  auto& slot = series_[values];
  if (!slot) {
    if constexpr (std::is_same_v<M, Histogram>) {
      slot = std::make_unique<Histogram>(bounds_);
    } else {
      slot = std::make_unique<M>();
    }
  }
  return *slot;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  // The shortest form that reads back as the same double (0.1, not 0.10000000000000001).
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

namespace {

std::string LabelText(const std::vector<std::string>& names, const Labels& values,
                      std::string_view extra_name = {}, std::string_view extra_value = {}) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    out += out.empty() ? "{" : ",";
    out += names[i] + "=\"" + EscapeLabelValue(values[i]) + "\"";
  }
  if (!extra_name.empty()) {
    out += out.empty() ? "{" : ",";
    out += std::string(extra_name) + "=\"" + std::string(extra_value) + "\"";
  }
  if (!out.empty()) out += "}";
  return out;
}

void Head(std::string& out, const std::string& name, const std::string& help, const char* type) {
  out += "# HELP " + name + " ";
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

struct Registry::Entry {
  std::unique_ptr<Family<Counter>> counter;
  std::unique_ptr<Family<Gauge>> gauge;
  std::unique_ptr<Family<Histogram>> histogram;

  void Render(std::string& out) const {
    if (counter) Simple(*counter, "counter", out);
    if (gauge) Simple(*gauge, "gauge", out);
    if (histogram) {
      const Family<Histogram>& f = *histogram;
      Head(out, f.name_, f.help_, "histogram");
      std::lock_guard lock(f.mu_);
      for (const auto& [labels, h] : f.series_) {
        std::vector<uint64_t> cum = h->Cumulative();
        for (size_t i = 0; i <= h->bounds().size(); ++i) {
          const std::string le = i < h->bounds().size() ? FormatValue(h->bounds()[i]) : "+Inf";
          out += f.name_ + "_bucket" + LabelText(f.label_names_, labels, "le", le) + " " +
                 std::to_string(cum[i]) + "\n";
        }
        out += f.name_ + "_sum" + LabelText(f.label_names_, labels) + " " + FormatValue(h->sum()) +
               "\n";
        out += f.name_ + "_count" + LabelText(f.label_names_, labels) + " " +
               std::to_string(cum.back()) + "\n";
      }
    }
  }
  template <class M>
  static void Simple(const Family<M>& f, const char* type, std::string& out) {
    Head(out, f.name_, f.help_, type);
    std::lock_guard lock(f.mu_);
    for (const auto& [labels, m] : f.series_) {
      out += f.name_ + LabelText(f.label_names_, labels) + " " + FormatValue(m->value()) + "\n";
    }
  }
};

Registry::Registry() = default;
Registry::~Registry() = default;

Family<Counter>& Registry::AddCounter(std::string name, std::string help,
                                      std::vector<std::string> label_names) {
  std::lock_guard lock(mu_);
  auto e = std::make_unique<Entry>();
  e->counter.reset(new Family<Counter>(std::move(name), std::move(help), std::move(label_names)));
  entries_.push_back(std::move(e));
  return *entries_.back()->counter;
}

Family<Gauge>& Registry::AddGauge(std::string name, std::string help,
                                  std::vector<std::string> label_names) {
  std::lock_guard lock(mu_);
  auto e = std::make_unique<Entry>();
  e->gauge.reset(new Family<Gauge>(std::move(name), std::move(help), std::move(label_names)));
  entries_.push_back(std::move(e));
  return *entries_.back()->gauge;
}

Family<Histogram>& Registry::AddHistogram(std::string name, std::string help,
                                          std::vector<std::string> label_names,
                                          std::vector<double> bounds) {
  std::lock_guard lock(mu_);
  std::sort(bounds.begin(), bounds.end());
  bounds_.push_back(std::make_unique<std::vector<double>>(std::move(bounds)));
  auto e = std::make_unique<Entry>();
  e->histogram.reset(new Family<Histogram>(std::move(name), std::move(help),
                                           std::move(label_names), bounds_.back().get()));
  entries_.push_back(std::move(e));
  return *entries_.back()->histogram;
}

std::vector<SeriesSnapshot> Registry::Snapshot(std::string_view name) const {
  std::vector<SeriesSnapshot> out;
  auto SnapshotSimple = [&out](const auto& f) {  // a counter's or gauge's family
    std::lock_guard lock(f.mu_);
    for (const auto& [labels, m] : f.series_) out.push_back({labels, m->value(), {}, {}, 0});
  };
  std::lock_guard lock(mu_);
  for (const auto& e : entries_) {
    if (e->counter && e->counter->name_ == name) SnapshotSimple(*e->counter);
    if (e->gauge && e->gauge->name_ == name) SnapshotSimple(*e->gauge);
    if (e->histogram && e->histogram->name_ == name) {
      const Family<Histogram>& f = *e->histogram;
      std::lock_guard series_lock(f.mu_);
      for (const auto& [labels, h] : f.series_) {
        SeriesSnapshot snap{labels, 0, h->Cumulative(), h->bounds(), h->sum()};
        snap.value = static_cast<double>(snap.cumulative.back());
        out.push_back(std::move(snap));
      }
    }
  }
  return out;
}

void Registry::AddCollector(Collector c) {
  std::lock_guard lock(mu_);
  collectors_.push_back(std::move(c));
}

std::string Registry::Render() const {
  std::vector<Collector> collectors;
  std::string out;
  {
    std::lock_guard lock(mu_);
    for (const auto& e : entries_) e->Render(out);
    collectors = collectors_;
  }
  std::vector<Collected> got;
  for (const Collector& c : collectors) c(got);
  for (const Collected& f : got) {
    Head(out, f.name, f.help, f.type == "counter" ? "counter" : "gauge");
    for (const Sample& s : f.samples) {
      std::vector<std::string> names, values;
      for (const auto& [n, v] : s.labels) {
        names.push_back(n);
        values.push_back(v);
      }
      out += f.name + LabelText(names, values) + " " + FormatValue(s.value) + "\n";
    }
  }
  return out;
}

void AddProcessCollector(Registry& r) {
  r.AddCollector([](std::vector<Collected>& out) {
    const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
    double vsize = 0, rss = 0;
    {
      std::ifstream statm("/proc/self/statm");
      double pages_v = 0, pages_r = 0;
      if (statm >> pages_v >> pages_r) {
        vsize = pages_v * page;
        rss = pages_r * page;
      }
    }
    double start_s = 0;
    {
      // Field 22 of /proc/self/stat: start time in clock ticks after boot.
      std::ifstream stat("/proc/self/stat");
      std::string line;
      std::getline(stat, line);
      size_t close = line.rfind(')');
      if (close != std::string::npos) {
        std::istringstream rest(line.substr(close + 2));
        std::string field;
        for (int i = 3; i <= 22 && rest >> field; ++i) {
          if (i == 22) start_s = std::strtod(field.c_str(), nullptr) / ::sysconf(_SC_CLK_TCK);
        }
      }
      std::ifstream uptime_boot("/proc/stat");
      std::string key;
      double btime = 0;
      while (uptime_boot >> key) {
        if (key == "btime") {
          uptime_boot >> btime;
          break;
        }
      }
      start_s += btime;
    }
    double fds = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
      while (dirent* e = ::readdir(d)) fds += e->d_name[0] != '.';
      ::closedir(d);
      fds -= 1;  // the directory stream's own descriptor
    }
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    const double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
                       ru.ru_stime.tv_usec / 1e6;
    rlimit rl{};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    out.push_back({"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                   "counter", {{{}, cpu}}});
    out.push_back({"process_resident_memory_bytes", "Resident memory size in bytes.", "gauge",
                   {{{}, rss}}});
    out.push_back({"process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge",
                   {{{}, vsize}}});
    out.push_back({"process_open_fds", "Number of open file descriptors.", "gauge", {{{}, fds}}});
    out.push_back({"process_max_fds", "Maximum number of open file descriptors.", "gauge",
                   {{{}, static_cast<double>(rl.rlim_cur)}}});
    out.push_back({"process_start_time_seconds",
                   "Start time of the process since unix epoch in seconds.", "gauge",
                   {{{}, start_s}}});
  });
}

}  // namespace strata::metrics

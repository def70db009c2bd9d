#include "energy/meter.h"

#include <sys/resource.h>
#include <time.h>

namespace strata::energy {

Coefficients ForMedia(std::string_view media) {
  Coefficients c;
  if (media == "warm" || media == "cold") c.storage_joules_per_byte = 40e-9;
  return c;
}

std::string_view WorkloadKindName(WorkloadKind k) {
  switch (k) {
    case WorkloadKind::kBucket: return "bucket";
    case WorkloadKind::kIdentity: return "identity";
    case WorkloadKind::kKvNamespace: return "kv_namespace";
  }
  return "bucket";
}

double ThreadCpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double TakeThreadCpuSeconds() {
  // A thread's CPU clock starts at 0: the first call takes all of it.
  thread_local double taken = 0;
  const double now = ThreadCpuSeconds();
  const double used = now - taken;
  taken = now;
  return used > 0 ? used : 0;
}

double ProcessCpuSeconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

Meter::Meter(Coefficients c, std::unique_ptr<RaplReader> rapl,
             std::function<double()> process_cpu_seconds)
    : c_(c), rapl_(std::move(rapl)), process_cpu_seconds_(std::move(process_cpu_seconds)) {
  cpu_at_start_ = process_cpu_seconds_();
}

void Meter::Record(std::initializer_list<Name> names, double cpu_seconds, uint64_t bytes) {
  std::lock_guard lock(mu_);
  bytes_ += bytes;
  for (const Name& n : names) {
    if (n.name.empty()) continue;
    auto key = std::make_pair(n.kind, std::string(n.name));
    auto it = workloads_.find(key);
    if (it == workloads_.end()) {
      size_t& count = names_[n.kind];
      if (count >= kMaxNames) {
        key.second = "(other)";
      } else {
        ++count;
      }
      it = workloads_.try_emplace(key).first;
    }
    it->second.cpu_seconds += cpu_seconds;
    it->second.bytes += bytes;
  }
}

EnergyReport Meter::Snapshot() {
  EnergyReport r;
  r.coefficients = c_;
  const double per_byte = c_.network_joules_per_byte + c_.storage_joules_per_byte;
  std::map<std::pair<WorkloadKind, std::string>, Totals> workloads;
  {
    std::lock_guard lock(mu_);
    workloads = workloads_;
    r.bytes = bytes_;
  }
  r.process_cpu_seconds = process_cpu_seconds_() - cpu_at_start_;
  r.node_modelled_joules =
      r.process_cpu_seconds * c_.cpu_joules_per_second + static_cast<double>(r.bytes) * per_byte;
  if (rapl_) {
    r.rapl_domains = rapl_->Domains();
    auto j = rapl_->Joules();
    if (j.ok()) {
      r.node_measured_joules = *j;
    } else {
      r.rapl_error = j.status().ToString();
    }
  }
  for (const auto& [key, t] : workloads) {
    WorkloadFigure f{key.first, key.second, t.cpu_seconds, t.bytes};
    f.modelled_joules = t.cpu_seconds * c_.cpu_joules_per_second + static_cast<double>(t.bytes) * per_byte;
    if (r.node_measured_joules && r.node_modelled_joules > 0) {
      f.measured_joules = *r.node_measured_joules * f.modelled_joules / r.node_modelled_joules;
    }
    r.workloads.push_back(std::move(f));
  }
  return r;
}

}  // namespace strata::energy

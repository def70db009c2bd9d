// Energy per node and per workload (bucket, identity, KV namespace), every
// figure labelled by where it comes from:
//
//   measured   the RAPL package counters (energy/rapl.h), when readable: the
//              node's joules since start (the whole package: every process
//              on it); a workload's measured figure is the node's measured
//              joules times the workload's share of the modelled ones.
//   modelled   CPU-seconds and bytes times documented coefficients
//              (Coefficients below, docs/energy.md): a workload's own
//              CPU-seconds and bytes; the node's process CPU-seconds
//              (getrusage: background work included) and every workload's bytes.
//
// Record() is called once per request (S3) or per KV operation batch with
// the thread CPU time the request used and the bytes it moved.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "energy/rapl.h"

namespace strata::energy {

struct Coefficients {
  double cpu_joules_per_second = 15.0;     // one busy server core and its share of the package
  double network_joules_per_byte = 1e-9;   // NIC and switch port, ~1 nJ/B
  double storage_joules_per_byte = 2e-9;   // the data's media (ForMedia)
};
// The coefficients for data on `media` ("gpu-direct", "hot": NVMe 2 nJ/B;
// "warm", "cold": disks 40 nJ/B; anything else: hot).
Coefficients ForMedia(std::string_view media);

enum class WorkloadKind { kBucket, kIdentity, kKvNamespace };
std::string_view WorkloadKindName(WorkloadKind k);  // "bucket", "identity", "kv_namespace"

struct WorkloadFigure {
  WorkloadKind kind;
  std::string name;
  double cpu_seconds = 0;
  uint64_t bytes = 0;
  double modelled_joules = 0;
  std::optional<double> measured_joules;  // with RAPL
};

struct EnergyReport {
  double node_modelled_joules = 0;
  std::optional<double> node_measured_joules;  // with RAPL
  double process_cpu_seconds = 0;
  uint64_t bytes = 0;  // moved by every workload
  std::vector<std::string> rapl_domains;
  std::string rapl_error;  // a counter that could be read at start and no longer can
  Coefficients coefficients;
  std::vector<WorkloadFigure> workloads;  // by kind, then name
};

class Meter {
 public:
  // `rapl` may be null (modelled only); `process_cpu_seconds` returns the
  // process's CPU time so far (user + system).
  Meter(Coefficients c, std::unique_ptr<RaplReader> rapl,
        std::function<double()> process_cpu_seconds);

  // One request's (or KV operation's) CPU time and bytes: counted once for
  // the node's bytes and added to each workload it names ("" names none). At
  // most kMaxNames names per kind are kept; later ones add to "(other)".
  struct Name {
    WorkloadKind kind;
    std::string_view name;
  };
  void Record(std::initializer_list<Name> names, double cpu_seconds, uint64_t bytes);
  static constexpr size_t kMaxNames = 10000;

  EnergyReport Snapshot();
  bool measured() const { return rapl_ != nullptr; }

 private:
  struct Totals {
    double cpu_seconds = 0;
    uint64_t bytes = 0;
  };
  Coefficients c_;
  std::unique_ptr<RaplReader> rapl_;
  std::function<double()> process_cpu_seconds_;
  double cpu_at_start_ = 0;
  std::mutex mu_;
  std::map<std::pair<WorkloadKind, std::string>, Totals> workloads_;
  std::map<WorkloadKind, size_t> names_;
  uint64_t bytes_ = 0;  // of every Record
};

// This thread's CPU time (CLOCK_THREAD_CPUTIME_ID), and the process's.
double ThreadCpuSeconds();
double ProcessCpuSeconds();

// The CPU time this thread used since its previous call (since the thread
// started, on the first): one clock read per request where reads before and
// after would take two. Called as an S3 request ends, it charges the request
// with everything its thread did since the previous one ended: reading its
// head, but also work for no one request (a loop leader's accepts and sweeps,
// protocol errors, console pages, the previous request's access log line),
// which no workload was charged with before.
double TakeThreadCpuSeconds();

}  // namespace strata::energy

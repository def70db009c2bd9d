// Fixed-duration closed-loop load: N worker threads, each with its own state
// (connection), issue operations back to back until the deadline; the latency
// of every operation is recorded.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace strata::bench {

struct TimedResult {
  double seconds = 0;  // from the common start to the last op's end
  uint64_t ops = 0;
  std::vector<int64_t> latency_ns;  // sorted ascending

  double OpsPerSecond() const { return seconds > 0 ? ops / seconds : 0; }
  double PercentileUs(double q) const;  // q in [0, 1]
};

// One operation of a worker; `seq` counts that worker's operations from 0.
using Operation = std::function<void(uint64_t seq)>;
// Called on the worker's own thread before the clock starts: open the
// connection there and return the operation (which owns it).
using WorkerFactory = std::function<Operation(int worker)>;

// Runs `workers` threads for `duration_s` seconds (each does at least one
// operation). If any operation throws, all workers stop and the first error
// is rethrown as BenchError.
TimedResult RunTimed(int workers, double duration_s, const WorkerFactory& factory);

// Median of a small sample (mean of the middle two when even); NaN if empty.
double Median(std::vector<double> values);

// Seconds since an arbitrary fixed point (steady clock).
double NowSeconds();
// CPU seconds this thread has used: figures of what one core can do, whatever
// else the shared machine runs meanwhile.
double ThreadCpuSeconds();
// User + system CPU seconds of all threads of process `pid` so far
// (/proc/PID/stat, clock-tick resolution).
double ProcessCpuSeconds(pid_t pid);
// The CPU seconds of the threads of `pid` named `name` (their comm, as the
// server names them with NameThisThread), summed; 0 if there are none.
double ThreadsCpuSeconds(pid_t pid, const std::string& name);
// A memory figure of process `pid` from /proc/PID/status, bytes: "VmRSS" (resident now) or
// "VmHWM" (the peak resident set); 0 if unreadable.
uint64_t ProcessMemoryBytes(pid_t pid, const char* field = "VmRSS");
// CPU-seconds the whole machine has spent busy since boot (/proc/stat: every
// state but idle and iowait, all CPUs): load generator, server and kernel.
double MachineBusySeconds();

}  // namespace strata::bench

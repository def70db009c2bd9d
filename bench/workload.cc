#include "workload.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <latch>
#include <mutex>
#include <string>
#include <thread>

#include "net.h"

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;

int64_t ToNs(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

// What the workers share: the start signal, the stop flag and the first error.
struct RunState {
  explicit RunState(int workers) : ready(workers) {}
  std::latch ready;  // every worker has connected
  std::atomic<bool> started{false};
  Clock::time_point start, deadline;
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::string first_error;

  void Fail(const std::string& message) {
    std::lock_guard<std::mutex> lock(mu);
    if (!failed.exchange(true)) first_error = message;
  }
};

struct WorkerOutput {
  std::vector<int64_t> latency_ns;
  Clock::time_point end;
};

void WorkerMain(int index, const WorkerFactory& factory, RunState& state, WorkerOutput& out) {
  Operation op;
  try {
    op = factory(index);
  } catch (const std::exception& e) {
    state.Fail(e.what());
  }
  state.ready.count_down();
  state.started.wait(false);
  out.end = state.start;
  if (!op) return;
  try {
    for (uint64_t seq = 0; !state.failed.load(std::memory_order_relaxed); ++seq) {
      Clock::time_point t0 = Clock::now();
      op(seq);
      out.end = Clock::now();
      out.latency_ns.push_back(ToNs(out.end - t0));
      if (out.end >= state.deadline) break;
    }
  } catch (const std::exception& e) {
    state.Fail(e.what());
  }
}

}  // namespace

double TimedResult::PercentileUs(double q) const {
  if (latency_ns.empty()) return NAN;
  size_t index = static_cast<size_t>(q * static_cast<double>(latency_ns.size() - 1) + 0.5);
  return static_cast<double>(latency_ns[std::min(index, latency_ns.size() - 1)]) / 1e3;
}

TimedResult RunTimed(int workers, double duration_s, const WorkerFactory& factory) {
  RunState state(workers);
  std::vector<WorkerOutput> outputs(workers);
  std::vector<std::thread> threads;
  threads.reserve(workers);
  for (int i = 0; i < workers; ++i) {
    threads.emplace_back(WorkerMain, i, std::cref(factory), std::ref(state), std::ref(outputs[i]));
  }
  state.ready.wait();
  state.start = Clock::now();
  state.deadline = state.start + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(duration_s));
  state.started = true;
  state.started.notify_all();
  for (std::thread& t : threads) t.join();
  if (state.failed) throw BenchError(state.first_error);

  TimedResult result;
  Clock::time_point end = state.start;
  for (WorkerOutput& out : outputs) {
    end = std::max(end, out.end);
    result.latency_ns.insert(result.latency_ns.end(), out.latency_ns.begin(), out.latency_ns.end());
  }
  std::sort(result.latency_ns.begin(), result.latency_ns.end());
  result.ops = result.latency_ns.size();
  result.seconds = static_cast<double>(ToNs(end - state.start)) / 1e9;
  return result;
}

double Median(std::vector<double> values) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

uint64_t ProcessMemoryBytes(pid_t pid, const char* field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  const std::string want = std::string(field) + ":";
  for (std::string line; std::getline(f, line);) {
    if (line.rfind(want, 0) == 0) return std::stoull(line.substr(want.size())) * 1024;
  }
  return 0;
}

namespace {
// utime + stime of a /proc stat file, in seconds; -1 if it cannot be read.
double StatCpuSeconds(const std::string& path) {
  std::ifstream in(path);
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return -1;
  std::istringstream fields(stat.substr(paren + 1));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // Fields 3.. follow the name; utime and stime are fields 14 and 15.
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}
}  // namespace

double ThreadsCpuSeconds(pid_t pid, const std::string& name) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  double total = 0;
  std::error_code error;
  // Threads come and go while this runs: no step of the walk may throw.
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    const std::filesystem::directory_entry& task = *it;
    std::ifstream comm(task.path() / "comm");
    std::string got;
    if (!std::getline(comm, got) || got != name) continue;
    double s = StatCpuSeconds((task.path() / "stat").string());
    if (s > 0) total += s;  // a thread that ended meanwhile counts nothing
  }
  return total;
}

double ProcessCpuSeconds(pid_t pid) {
  double s = StatCpuSeconds("/proc/" + std::to_string(pid) + "/stat");
  if (s < 0) throw BenchError("cannot read /proc/" + std::to_string(pid));
  return s;
}

double MachineBusySeconds() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;  // "cpu": the sum over all CPUs
  if (cpu != "cpu") throw BenchError("cannot read /proc/stat");
  unsigned long long v[8] = {};  // user nice system idle iowait irq softirq steal
  for (auto& x : v) in >> x;
  const unsigned long long busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return static_cast<double>(busy) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double NowSeconds() { return static_cast<double>(ToNs(Clock::now().time_since_epoch())) / 1e9; }

}  // namespace strata::bench

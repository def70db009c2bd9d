#include "ec_cases.h"

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "ec/erasure_code.h"
#include "net.h"
#include "server_process.h"
#include "workload.h"

namespace strata::bench {
namespace {

namespace fs = std::filesystem;

constexpr char kBucket[] = "bench-ec";
constexpr int kPoolDrives = 6;
// The drives whose shards the degraded case deletes: 2 and 5 of --drives
// (0-based 1 and 4). Shard i of every object lives on drive i, data first, so
// with 4+2 this is one data shard (rebuilt on every stripe) and one parity.
constexpr int kLostDrives[] = {1, 4};
constexpr size_t kCodeBlock = 1 << 20;  // per-shard block, like bench/ec_bench.cc
constexpr double kHealWaitSeconds = 300;

// The integer after "name": in a flat JSON object; -1 if absent.
long JsonNumber(std::string_view json, std::string_view name) {
  std::string needle(1, '"');
  needle.append(name).append("\":");
  size_t at = json.find(needle);
  if (at == std::string_view::npos) return -1;
  return std::strtol(std::string(json.substr(at + needle.size(), 24)).c_str(), nullptr, 10);
}

// k and m of the pool, from the admin API (GET /_strata/admin/drives).
std::pair<int, int> PoolLayout(const Target& target) {
  S3Response resp = target.NewClient()->Send({"GET", "/_strata/admin/drives"}, "");
  ExpectStatus(resp, 200, "GET /_strata/admin/drives");
  long k = JsonNumber(resp.body, "k"), m = JsonNumber(resp.body, "m");
  if (k < 1 || m < 0) throw BenchError("GET /_strata/admin/drives: no k/m in " + resp.body);
  return {static_cast<int>(k), static_cast<int>(m)};
}

// Waits until the pool's healer has worked off every id queued so far
// (GET /_strata/admin/heal-status: healed_from_queue catches up with queued).
void WaitForHealerIdle(const Target& target) {
  auto client = target.NewClient();
  const double deadline = NowSeconds() + kHealWaitSeconds;
  while (true) {
    S3Response resp = client->Send({"GET", "/_strata/admin/heal-status"}, "");
    ExpectStatus(resp, 200, "GET /_strata/admin/heal-status");
    long queued = JsonNumber(resp.body, "queued");
    long healed = JsonNumber(resp.body, "healed_from_queue");
    if (queued < 0 || healed < 0) throw BenchError("heal-status: unexpected answer " + resp.body);
    if (healed >= queued) return;
    if (NowSeconds() > deadline) {
      throw BenchError("the healer is still busy after " +
                       std::to_string(static_cast<int>(kHealWaitSeconds)) + " s: " + resp.body);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// A server under test: where to send requests, and its process for CPU time.
struct Server {
  Target target;
  pid_t pid = -1;
};


// What the timed parts of one run's operations added up to: wall seconds,
// the server's CPU seconds (all its threads, the healer included) over the
// same intervals, of which its healer thread's ("heal"), and how many
// whole-object operations.
struct Tally {
  double seconds = 0;
  double server_cpu_s = 0;
  double heal_cpu_s = 0;
  int ops = 0;
};

// Times `op` (the request itself; connecting and checks around it are not
// timed) into *tally.
template <typename Op>
void TimeInto(const Server& server, Tally* tally, Op op) {
  double cpu = ProcessCpuSeconds(server.pid);
  double heal = ThreadsCpuSeconds(server.pid, "heal");
  double start = NowSeconds();
  op();
  tally->seconds += NowSeconds() - start;
  tally->server_cpu_s += ProcessCpuSeconds(server.pid) - cpu;
  tally->heal_cpu_s += ThreadsCpuSeconds(server.pid, "heal") - heal;
  ++tally->ops;
}

// One PutObject of `size` pattern bytes on a connection opened before the
// clock starts; timed from the first byte sent to the complete response.
void TimedPut(const Server& server, const std::string& key, uint64_t size, Tally* tally) {
  auto client = server.target.NewClient();
  client->Connect();
  S3Request req("PUT", ObjectPath(kBucket, key));
  req.body_size = size;
  S3Response resp;
  TimeInto(server, tally, [&] { resp = client->SendStreaming(req, PatternBody(0, size)); });
  ExpectStatus(resp, 200, "PUT " + key);
}

// One GetObject of the whole object, every byte checked against the pattern
// as it arrives (inside the timed part, as in the other GET cases).
void TimedGet(const Server& server, const std::string& key, uint64_t size, Tally* tally) {
  auto client = server.target.NewClient();
  client->Connect();
  uint64_t received = 0;
  BodySink sink = VerifyingSink(0, &received);
  S3Response resp;
  TimeInto(server, tally, [&] {
    resp = client->Send({"GET", ObjectPath(kBucket, key)}, "", &sink);
  });
  ExpectStatus(resp, 200, "GET " + key);
  if (received != size) {
    throw BenchError("GET " + key + ": " + std::to_string(received) + " bytes, expected " +
                     std::to_string(size));
  }
}

// Sequential whole-object operations `once(i, &tally)` until their timed
// parts add up to `min_seconds` (at least one): a single 256 MiB GET takes
// ~0.1 s, too short to mean much alone on a shared machine.
Tally RepeatFor(double min_seconds, const std::function<void(int, Tally*)>& once) {
  Tally tally;
  for (int i = 0; i == 0 || tally.seconds < min_seconds; ++i) once(i, &tally);
  return tally;
}

// Run `run` of a throughput row (bytes per timed second) and of its
// companion row (bytes per server CPU-second), both from one Tally.
// With `no_heal_row`, also bytes per server CPU-second less the healer's.
void MeasurePair(Report& report, Row& rate_row, Row& cpu_row, int run, int runs, uint64_t size,
                 const std::function<Tally()>& one_run, Row* no_heal_row = nullptr) {
  Tally tally;
  bool ok = report.MeasureRun(rate_row, run, runs, [&](int) {
    tally = one_run();
    return RunFigure{static_cast<double>(size) * tally.ops / tally.seconds};
  });
  if (!ok) return;
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  report.MeasureRun(cpu_row, run, runs, [&](int) {
    return RunFigure{static_cast<double>(size) * tally.ops / std::max(tally.server_cpu_s, tick)};
  });
  if (no_heal_row == nullptr) return;
  report.MeasureRun(*no_heal_row, run, runs, [&](int) {
    const double cpu = std::max(tally.server_cpu_s - tally.heal_cpu_s, tick);
    return RunFigure{static_cast<double>(size) * tally.ops / cpu};
  });
}

void Delete(const Target& target, const std::string& key) {
  ExpectStatus(target.NewClient()->Send({"DELETE", ObjectPath(kBucket, key)}, ""), 204,
               "DELETE " + key);
}

// k data + m parity blocks of kCodeBlock bytes, data random.
struct CodeBuffers {
  CodeBuffers(int k, int m) : blocks(k + m, std::vector<uint8_t>(kCodeBlock)) {
    std::mt19937_64 rng(k * 31 + m);
    for (int i = 0; i < k; ++i) {
      for (uint8_t& b : blocks[i]) b = static_cast<uint8_t>(rng());
    }
    for (auto& b : blocks) pointers.push_back(b.data());
  }
  std::vector<std::vector<uint8_t>> blocks;
  std::vector<uint8_t*> pointers;
};

// Runs `op` (processing `data_bytes` of data) repeatedly for `seconds` of
// this thread's CPU time; data bytes per CPU-second.
template <typename Op>
double PerCpuSecond(double seconds, size_t data_bytes, Op op) {
  op();  // warm up: page the buffers in, resolve ISA-L's dispatch
  uint64_t ops = 0;
  double start = ThreadCpuSeconds();
  double end = start;
  while (end - start < seconds) {
    for (int i = 0; i < 4; ++i) op();
    ops += 4;
    end = ThreadCpuSeconds();
  }
  return static_cast<double>(ops * data_bytes) / (end - start);
}

// ISA-L encode and reconstruct rows (ec::ErasureCode, as the server uses it).
void MeasureCode(const CaseOptions& opt, int k, int m, Report& report) {
  const std::string shape = std::to_string(k) + "+" + std::to_string(m);
  const double seconds = std::min(opt.duration_s, 1.0);
  const size_t data_bytes = static_cast<size_t>(k) * kCodeBlock;
  Row& encode = report.Add("ec_encode", "ISA-L encode " + shape + ", 1 MiB blocks (CPU-s)",
                           Unit::kBytesPerSecond);
  Row& rebuild = report.Add("ec_reconstruct", "ISA-L rebuild drives 2+5 of " + shape + " (CPU-s)",
                            Unit::kBytesPerSecond);
  auto code = ec::ErasureCode::Create(k, m);
  if (!code.ok()) throw BenchError("ec::ErasureCode::Create: " + code.status().ToString());
  const ec::ErasureCode& ec = **code;
  CodeBuffers buffers(k, m);
  uint8_t* const* shards = buffers.pointers.data();
  report.Measure(encode, opt.runs, [&](int) {
    return RunFigure{
        PerCpuSecond(seconds, data_bytes, [&] { ec.Encode(kCodeBlock, shards, shards + k); })};
  });
  if (m == 0) {
    rebuild.note = "n/a (no parity)";
    return;
  }
  // The blocks of the degraded GET's lost drives that exist in this shape.
  std::vector<bool> present(k + m, true);
  for (int lost : kLostDrives) {
    if (lost < k + m) present[lost] = false;
  }
  ec.Encode(kCodeBlock, shards, shards + k);
  const std::vector<std::vector<uint8_t>> expected = buffers.blocks;
  report.Measure(rebuild, opt.runs, [&](int) {
    double rate = PerCpuSecond(seconds, data_bytes, [&] {
      Status st = ec.Reconstruct(kCodeBlock, shards, present);
      if (!st.ok()) throw BenchError("Reconstruct: " + st.ToString());
    });
    if (buffers.blocks != expected) throw BenchError("Reconstruct rebuilt wrong bytes");
    return RunFigure{rate};
  });
}

// Deletes the lost drives' shards of the large objects: the files under their
// shard directories of at least `min_bytes` (the 4 KiB objects' shards are far
// smaller, and stay).
void DeleteLargeShards(const ServerProcess& process, uint64_t min_bytes) {
  for (int lost : kLostDrives) {
    const fs::path shards = fs::path(process.drive_dirs().at(lost)) / "shards";
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(shards, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      std::error_code size_error;
      if (it->is_regular_file(size_error) && it->file_size(size_error) >= min_bytes) {
        fs::remove(it->path(), size_error);
      }
    }
    if (error) throw BenchError("walking " + shards.string() + ": " + error.message());
  }
}

// Background heal work until stopped: deletes the lost drives' shards of
// `key`, opens it (a 1-byte ranged GET: the server queues it for healing on
// open) and waits for the healer to finish, back to back.
class HealLoop {
 public:
  HealLoop(const Target& target, const ServerProcess& process, const std::string& key,
           uint64_t min_bytes)
      : thread_([this, &target, &process, key, min_bytes] {
          try {
            auto client = target.NewClient();
            while (!stop_.load()) {
              DeleteLargeShards(process, min_bytes);
              S3Request req("GET", ObjectPath(kBucket, key));
              req.extra_headers.push_back({"Range", "bytes=0-0"});
              ExpectStatus(client->Send(req, ""), 206, "GET bytes=0-0 of the healed object");
              WaitForHealerIdle(target);
              heals_.fetch_add(1);
            }
          } catch (const std::exception& e) {
            std::fprintf(stderr, "[s3bench] ec: the heal loop failed: %s\n", e.what());
            failed_.store(true);
          }
        }) {}
  ~HealLoop() { Stop(); }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  bool failed() const { return failed_.load(); }
  int heals() const { return heals_.load(); }

 private:
  std::atomic<bool> stop_{false}, failed_{false};
  std::atomic<int> heals_{0};
  std::thread thread_;
};

// Tail isolation from the healer: 4 KiB GETs at c=16 on the pool alone, then
// while the healer rebuilds two shards of a large object back to back (the
// healer runs at the bulk priority and holds no id lock while it rebuilds:
// docs/formats/shard-file.md, "Heal"). Runs alternate alone / healing.
void MeasureSmallGetsBesideHeal(const CaseOptions& opt, const Server& pool,
                                const ServerProcess& process, const std::string& shape, int k,
                                Report& report) {
  constexpr int kConcurrency = 16;
  const uint64_t size = opt.ec_bytes;
  const std::string c = std::to_string(kConcurrency);
  Row& alone = report.Add("ec_get4k_alone", shape + ": GET 4 KiB c=" + c + " alone (p99)",
                          Unit::kMicroseconds);
  Row& healing = report.Add(
      "ec_get4k_healing",
      shape + ": GET 4 KiB c=" + c + " while 2 shards of " + SizeLabel(size) +
          " are rebuilt back to back (p99)",
      Unit::kMicroseconds, Comparison{{"ec_get4k_alone"}, "p99 alone", 3.0, true, true});
  PopulateSmallGetKeys(pool.target, opt.small_get_keys);
  const std::string key = "ec-healed";
  {
    S3Request req("PUT", ObjectPath(kBucket, key));
    req.body_size = size;
    ExpectStatus(pool.target.NewClient()->SendStreaming(req, PatternBody(0, size)), 200,
                 "PUT the object to heal");
  }
  auto small_gets = [&] {
    TimedResult r = TimedSmallGets(pool.target, kConcurrency, opt.duration_s, opt.small_get_keys);
    return RunFigure{r.PercentileUs(0.99), r.PercentileUs(0.50), r.PercentileUs(0.99)};
  };
  int heals = 0;
  for (int run = 0; run < opt.runs; ++run) {
    report.MeasureRun(alone, run, opt.runs, [&](int) { return small_gets(); });
    report.MeasureRun(healing, run, opt.runs, [&](int) {
      HealLoop loop(pool.target, process, key, size / (2 * k));
      RunFigure figure = small_gets();
      loop.Stop();
      if (loop.failed()) throw BenchError("ec: the heal loop failed");
      if (loop.heals() == 0) throw BenchError("ec: no heal finished during the timed GETs");
      heals += loop.heals();
      return figure;
    });
  }
  report.AddNote("ec: " + std::to_string(heals) + " heals of " + SizeLabel(size) +
                 " (2 shards each) finished beside the 4 KiB GETs");
  Delete(pool.target, key);
}

}  // namespace

void RunErasureCoding(const CaseOptions& opt, const std::string& strata_binary, Report& report) {
  const uint64_t size = opt.ec_bytes;
  const std::string size_label = SizeLabel(size);
  std::unique_ptr<ServerProcess> single_process = ServerProcess::Start(strata_binary);
  ServerOptions pool_options;
  pool_options.drives = kPoolDrives;
  std::unique_ptr<ServerProcess> pool_process = ServerProcess::Start(strata_binary, pool_options);
  const Server single{
      {single_process->host(), single_process->port(), single_process->credentials()},
      single_process->pid()};
  const Server pool{{pool_process->host(), pool_process->port(), pool_process->credentials()},
                    pool_process->pid()};
  auto [k, m] = PoolLayout(pool.target);
  const std::string shape = std::to_string(k) + "+" + std::to_string(m);
  std::fprintf(stderr,
               "[s3bench] ec: 1-drive server pid %d port %d (%s); %d-drive %s server pid %d "
               "port %d (%s, drives %s/drive1..%d)\n",
               single.pid, single.target.port, single_process->data_dir().c_str(), kPoolDrives,
               shape.c_str(), pool.pid, pool.target.port, pool_process->data_dir().c_str(),
               fs::path(pool_process->data_dir()).parent_path().c_str(), kPoolDrives);
  EnsureBucket(single.target, kBucket);
  EnsureBucket(pool.target, kBucket);

  MeasureCode(opt, k, m, report);

  const Unit rate = Unit::kBytesPerSecond;
  const std::string pool_label = shape + ", " + std::to_string(kPoolDrives) + " drives: ";
  Row& put_single = report.Add("ec_put_1", "1 drive: PUT " + size_label + ", 1 stream", rate);
  Row& get_single = report.Add("ec_get_1", "1 drive: GET " + size_label + ", 1 stream", rate);
  Row& put_pool = report.Add("ec_put_pool", pool_label + "PUT " + size_label, rate,
                             {{"ec_put_1"}, "1-drive PUT", 0.70});
  Row& get_pool = report.Add("ec_get_pool", pool_label + "GET " + size_label, rate,
                             {{"ec_get_1"}, "1-drive GET", 0.90});
  Row& get_degraded = report.Add("ec_get_degraded", shape + ", drives 2+5 lost: GET " + size_label,
                                 rate, {{"ec_get_pool"}, "healthy " + shape + " GET", 0.50});
  // The same operations per CPU-second of the server process (information:
  // on a shared machine this moves far less than wall-clock throughput).
  Row& put_single_cpu = report.Add("ec_put_1_cpu", "1 drive: PUT, per server CPU-s", rate);
  Row& get_single_cpu = report.Add("ec_get_1_cpu", "1 drive: GET, per server CPU-s", rate);
  Row& put_pool_cpu = report.Add("ec_put_pool_cpu", shape + ": PUT, per server CPU-s", rate,
                                 {{"ec_put_1_cpu"}, "1-drive PUT"});
  Row& get_pool_cpu = report.Add("ec_get_pool_cpu", shape + ": GET, per server CPU-s", rate,
                                 {{"ec_get_1_cpu"}, "1-drive GET"});
  Row& get_degraded_cpu =
      report.Add("ec_get_degraded_cpu", shape + " degraded: GET, per server CPU-s", rate,
                 {{"ec_get_pool_cpu"}, "healthy " + shape + " GET"});
  // The same less the healer thread's CPU: the healer rebuilds the lost
  // shards while the GET runs (reads k blocks, decodes, writes and syncs two
  // shards), and that is the larger part of the row above.
  Row& get_degraded_no_heal_cpu =
      report.Add("ec_get_degraded_noheal_cpu",
                 shape + " degraded: GET, per server CPU-s less the healer's", rate,
                 {{"ec_get_pool_cpu"}, "healthy " + shape + " GET"});

  // Interleaved: run r of every row, then run r+1, so that load drift on a
  // shared machine affects both servers alike. Within a run each figure
  // repeats its operation until --duration-s of timed time (RepeatFor).
  // Every PUT creates a fresh key; the previous one is deleted untimed, and
  // the GETs read the last one.
  const double min_seconds = opt.duration_s;
  auto puts = [&](const Server& server, const std::string& prefix, std::string* last) {
    return RepeatFor(min_seconds, [&](int i, Tally* tally) {
      std::string key = prefix + std::to_string(i);
      TimedPut(server, key, size, tally);
      if (!last->empty()) Delete(server.target, *last);
      *last = key;
    });
  };
  auto gets = [&](const Server& server, const std::string& key) {
    return RepeatFor(min_seconds, [&](int, Tally* tally) { TimedGet(server, key, size, tally); });
  };
  for (int run = 0; run < opt.runs; ++run) {
    const std::string prefix = "ec-object-r" + std::to_string(run) + "-";
    const int runs = opt.runs;
    std::string single_key, pool_key;
    MeasurePair(report, put_single, put_single_cpu, run, runs, size,
                [&] { return puts(single, prefix, &single_key); });
    MeasurePair(report, get_single, get_single_cpu, run, runs, size,
                [&] { return gets(single, single_key); });
    if (!single_key.empty()) Delete(single.target, single_key);
    MeasurePair(report, put_pool, put_pool_cpu, run, runs, size,
                [&] { return puts(pool, prefix, &pool_key); });
    MeasurePair(report, get_pool, get_pool_cpu, run, runs, size,
                [&] { return gets(pool, pool_key); });
    MeasurePair(report, get_degraded, get_degraded_cpu, run, runs, size, [&] {
      return RepeatFor(min_seconds, [&](int, Tally* tally) {
        // Nothing may still be healing from the previous GET; then lose the
        // two drives' shards (the drives stay formatted and online). The
        // server queues the object for healing when the GET opens it, so the
        // healer rebuilds the lost shards while the timed GET runs.
        WaitForHealerIdle(pool.target);
        for (int lost : kLostDrives) {
          const std::string shards = pool_process->drive_dirs().at(lost) + "/shards";
          std::error_code error;
          fs::remove_all(shards, error);
          if (error) throw BenchError("rm -rf " + shards + ": " + error.message());
        }
        TimedGet(pool, pool_key, size, tally);
      });
    }, &get_degraded_no_heal_cpu);
    WaitForHealerIdle(pool.target);  // untimed: the heal the last degraded GET started
    if (!pool_key.empty()) Delete(pool.target, pool_key);
  }
  MeasureSmallGetsBesideHeal(opt, pool, *pool_process, shape, k, report);
  S3Response heal = pool.target.NewClient()->Send({"GET", "/_strata/admin/heal-status"}, "");
  std::fprintf(stderr, "[s3bench] ec: pool heal-status at the end: %s\n", heal.body.c_str());
}

}  // namespace strata::bench

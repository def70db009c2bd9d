// Issue 17's isolation figures, on a server of its own:
//  - tail isolation: 4 KiB GET at c=16 alone, then while 4 streams GET and 2 streams PUT
//    large objects back to back (target: p99 under that load <= 3x p99 alone);
//  - connection scale: 4 KiB GET at c=16 with 16, 1,024 and 8,192 (smoke: 256) keep-alive connections
//    open (the extra ones idle after one request each; target: ops/s at 8,192 >= 80 % of
//    16), and the server's RSS per idle connection (target <= 16 KiB).
// The 4 KiB rows give the p99 (or ops/s) as their figure; p50 and p99 are in their columns.
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "net.h"
#include "s3_cases.h"
#include "server_process.h"

namespace strata::bench {
namespace {

constexpr int kConcurrency = 16;
constexpr char kMixedBucket[] = "bench-mixed";
constexpr char kLargeGetKey[] = "mixed/large";

// Background load: `gets` threads GET the large object whole, `puts` threads PUT objects of
// the same size, each back to back until stopped. Every GET is checked byte for byte.
class LargeLoad {
 public:
  LargeLoad(const Target& target, uint64_t size, int gets, int puts) {
    for (int i = 0; i < gets + puts; ++i) {
      threads_.emplace_back([this, &target, size, i, gets] {
        try {
          auto client = target.NewClient();
          client->Connect();
          while (!stop_.load()) {
            if (i < gets) {
              uint64_t received = 0;
              BodySink sink = VerifyingSink(0, &received);
              S3Response r = client->Send({"GET", ObjectPath(kMixedBucket, kLargeGetKey)}, "",
                                          &sink);
              ExpectStatus(r, 200, "background GET");
              if (received != size) throw BenchError("background GET: short body");
            } else {
              S3Request req("PUT", ObjectPath(kMixedBucket, "mixed/put-" + std::to_string(i)));
              req.body_size = size;
              ExpectStatus(client->SendStreaming(req, PatternBody(0, size)), 200,
                           "background PUT");
            }
            requests_.fetch_add(1);
          }
        } catch (const std::exception& e) {
          std::fprintf(stderr, "[s3bench] mixed: background load failed: %s\n", e.what());
          failed_.store(true);
        }
      });
    }
  }
  ~LargeLoad() { Stop(); }
  // Waits for the requests in flight (a large one may take seconds).
  void Stop() {
    stop_.store(true);
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  bool failed() const { return failed_.load(); }
  uint64_t requests() const { return requests_.load(); }

 private:
  std::atomic<bool> stop_{false}, failed_{false};
  std::atomic<uint64_t> requests_{0};
  std::vector<std::thread> threads_;
};

// `n` keep-alive connections that each made one request (GET /health) and stay open.
std::vector<Socket> OpenIdleConnections(const Target& target, int n) {
  std::vector<Socket> socks;
  const std::string req = "GET /health HTTP/1.1\r\nHost: bench\r\n\r\n";
  for (int i = 0; i < n; ++i) {
    socks.push_back(Socket::Connect(target.host, target.port));
    socks.back().WriteAll(req.data(), req.size());
  }
  for (Socket& s : socks) {  // every one answered: the server holds them as served connections
    char buf[4096];
    size_t got = s.ReadSome(buf, sizeof(buf));
    if (got < 12 || std::string(buf, 9) != "HTTP/1.1 ") {
      throw BenchError("idle connection: no HTTP answer");
    }
  }
  return socks;
}

}  // namespace

void RunMixed(const CaseOptions& opt, const std::string& binary, Report& report) {
  // Room for 8,192 sockets here; the server raises its own limit (main.cc).
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  ServerOptions options;
  const int most = opt.mixed_max_connections;
  options.extra_args = {"--kv-listen", "off", "--max-connections", std::to_string(most + 64)};
  std::unique_ptr<ServerProcess> server = ServerProcess::Start(binary, options);
  const Target target{server->host(), server->port(), server->credentials()};
  std::fprintf(stderr, "[s3bench] mixed group: server on port %d\n", server->port());
  PopulateSmallGetKeys(target, opt.small_get_keys);
  EnsureBucket(target, kMixedBucket);
  const uint64_t size = opt.large_bytes;
  {
    S3Request req("PUT", ObjectPath(kMixedBucket, kLargeGetKey));
    req.body_size = size;
    ExpectStatus(target.NewClient()->SendStreaming(req, PatternBody(0, size)), 200,
                 "PUT the large object");
  }
  const std::string c = std::to_string(kConcurrency);
  auto small_gets = [&] {
    return TimedSmallGets(target, kConcurrency, opt.duration_s, opt.small_get_keys);
  };

  // ---- tail isolation ----
  Row& alone = report.Add("mixed_get4k_alone", "GET 4 KiB c=" + c + " alone (p99)",
                          Unit::kMicroseconds);
  Row& loaded = report.Add(
      "mixed_get4k_loaded",
      "GET 4 KiB c=" + c + " + 4 GET, 2 PUT of " + SizeLabel(size) + " (p99)",
      Unit::kMicroseconds, Comparison{{"mixed_get4k_alone"}, "p99 alone", 3.0, true, true});
  Row& alone_ops = report.Add("mixed_get4k_alone_ops", "GET 4 KiB c=" + c + " alone (ops/s)",
                              Unit::kOpsPerSecond);
  Row& loaded_ops = report.Add("mixed_get4k_loaded_ops",
                               "GET 4 KiB c=" + c + " under that load (ops/s)",
                               Unit::kOpsPerSecond, Comparison{{"mixed_get4k_alone_ops"}, "alone"});
  auto figure = [](const TimedResult& r, double value) {
    return RunFigure{value, r.PercentileUs(0.50), r.PercentileUs(0.99)};
  };
  uint64_t background = 0;
  for (int run = 0; run < opt.runs; ++run) {  // alone, then loaded, in every run
    TimedResult a, l;
    report.MeasureRun(alone, run, opt.runs, [&](int) {
      a = small_gets();
      return figure(a, a.PercentileUs(0.99));
    });
    report.MeasureRun(alone_ops, run, opt.runs, [&](int) { return figure(a, a.OpsPerSecond()); });
    report.MeasureRun(loaded, run, opt.runs, [&](int) {
      LargeLoad load(target, size, 4, 2);
      // Let the large streams get going before the clock starts.
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      l = small_gets();
      load.Stop();
      if (load.failed()) throw BenchError("mixed: the background load failed");
      background += load.requests();
      return figure(l, l.PercentileUs(0.99));
    });
    report.MeasureRun(loaded_ops, run, opt.runs, [&](int) { return figure(l, l.OpsPerSecond()); });
  }
  report.AddNote("mixed: " + std::to_string(background) +
                 " large requests completed beside the loaded 4 KiB runs (GETs verified)");

  // ---- connection scale ----
  std::vector<int> counts = {kConcurrency};
  if (most > 1024) counts.push_back(1024);
  if (most > kConcurrency) counts.push_back(most);
  for (int n : counts) {
    const std::string label = "GET 4 KiB c=" + c + ", " + std::to_string(n) + " connections open";
    Comparison vs_few;
    if (n != kConcurrency) vs_few = {{"mixed_conns_" + std::to_string(kConcurrency)}, "16 open", 0.80};
    Row& row = report.Add("mixed_conns_" + std::to_string(n), label, Unit::kOpsPerSecond, vs_few);
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < static_cast<rlim_t>(n) + 64) {
      row.note = "n/a (RLIMIT_NOFILE " + std::to_string(rl.rlim_cur) + " is too low)";
      continue;
    }
    const uint64_t rss_before = ProcessMemoryBytes(server->pid());
    std::vector<Socket> idle = OpenIdleConnections(target, n - kConcurrency);
    const uint64_t rss_after = ProcessMemoryBytes(server->pid());
    report.Measure(row, opt.runs, [&](int) {
      TimedResult r = small_gets();
      return RunFigure{r.OpsPerSecond(), r.PercentileUs(0.50), r.PercentileUs(0.99)};
    });
    if (n != kConcurrency && rss_before && rss_after) {
      const double per = static_cast<double>(rss_after) - static_cast<double>(rss_before);
      char note[160];
      std::snprintf(note, sizeof(note),
                    "mixed: %d idle keep-alive connections grew the server's RSS by %.1f KiB "
                    "each (target <= 16 KiB)",
                    n - kConcurrency, per / (n - kConcurrency) / 1024);
      report.AddNote(note);
    }
  }
}

}  // namespace strata::bench

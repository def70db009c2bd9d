// s3bench: the benchmark every strata performance claim is measured with.
//
// Measures, in one run on one machine, S3 figures (4 KiB PUT/GET ops/s, large
// object PUT/GET throughput, ListObjectsV2 page latency) and the machine
// limits they are bounded by (loopback TCP, 4 KiB request/response rate, MD5
// on one core), and prints each S3 figure as a fraction of its limit. The
// erasure-coding group (ec_cases.h) compares a 4+2 pool of 6 drive
// directories with the single-directory store, healthy and with 2 drives'
// shards deleted, next to the ISA-L encode rate. The KV-cache group
// (kv_cases.h) measures the lean KV protocol (LOOKUP latency, 2 MiB block
// GET/PUT, 64 KiB block ops/s) against the S3 path of the same server and
// loopback TCP. Every figure is the median of --runs runs; the runs are
// printed too.
//
//   s3bench [--smoke] [--endpoint http://HOST:PORT] [--strata PATH]
//           [--duration-s S] [--runs N] [--only CASE[,CASE...]]
//
// Without --endpoint it starts its own strata server (fresh temp dir, free
// port, generated credentials) and stops it at the end. With --endpoint the
// credentials come from STRATA_ROOT_USER/STRATA_ROOT_PASSWORD (or
// AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY). The ec group always starts its own
// two servers (it deletes drive directories), so it is n/a with --endpoint.
// The kv group starts its own server with a KV listener; with --endpoint it
// needs --kv-endpoint (the same server's KV listener), else it is n/a.
//
// Exit status: 0 when every case ran (an operation the server lacks, HTTP 501,
// is reported as n/a), 1 on any failed request, wrong status or wrong data, 2
// on bad usage.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli11.h"
#include "ec_cases.h"
#include "kv_cases.h"
#include "machine_limits.h"
#include "net.h"
#include "report.h"
#include "s3_cases.h"
#include "kv_index_cases.h"
#include "server_process.h"

namespace strata::bench {
namespace {

const std::set<std::string> kAllCases = {"loopback",  "rr",        "md5",  "put4k", "get4k",
                                         "put_large", "get_large", "list", "versions", "access", "sse", "ec",
                                         "kv",        "kv_index", "audit", "advisor", "notify", "metrics",
                                         "mixed"};
const std::set<std::string> kS3Cases = {"put4k", "get4k",    "put_large", "get_large",
                                        "list",  "versions", "access", "sse"};

struct Options {
  bool smoke = false;
  std::string endpoint;
  std::string strata_binary;
  std::string kv_endpoint;  // HOST:PORT, with --endpoint
  std::set<std::string> cases = kAllCases;
  CaseOptions s3;
  KvCaseOptions kv;
};

[[noreturn]] void UsageError(const std::string& message) {
  std::fprintf(stderr, "s3bench: %s\n(s3bench --help lists the options)\n", message.c_str());
  std::exit(2);
}

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Smoke mode changes the defaults; explicit flags still win.
void ApplySmokeDefaults(Options& opt) {
  opt.s3.duration_s = 0.3;
  opt.s3.runs = 1;
  opt.s3.large_bytes = 64ull << 20;
  opt.s3.list_small_keys = 1000;
  opt.s3.list_large_keys = 2000;
  opt.s3.small_get_keys = 100;
  opt.s3.ec_bytes = 16ull << 20;
  opt.s3.version_keys = 200;
  opt.s3.version_depth = 10;
  opt.kv.get_blocks = 16;
  opt.kv.small_blocks = 100;
  opt.s3.mixed_max_connections = 256;
}

// Parses the flags (CLI11); --help or a bad line ends the program here (exit 0 or 2).
Options ParseOptions(int argc, char** argv) {
  Options opt;
  CLI::App app(
      "s3bench: S3, KV and erasure-coding figures with this machine's limits, "
      "measured in the same run (docs/performance.md)",
      "s3bench");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_flag("--smoke", opt.smoke,
               "seconds-long run for CI: short cases, 1 run, 64 MiB instead of 1 GiB, 1k/2k "
               "listing keys instead of 10k/1M, 16 MiB instead of 256 MiB in the ec group, "
               "16/100 stored KV blocks instead of 64/1000 in the kv group");
  app.add_option("--endpoint", opt.endpoint,
                 "benchmark a running server; credentials from STRATA_ROOT_USER/"
                 "STRATA_ROOT_PASSWORD or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY. Default: "
                 "start our own server")
      ->type_name("http://HOST:PORT");
  app.add_option("--strata", opt.strata_binary,
                 "strata binary to start (default: found next to s3bench)")
      ->type_name("PATH");
  double duration_s = 0;
  CLI::Option* duration =
      app.add_option("--duration-s", duration_s, "seconds per timed run (default 5; smoke 0.3)")
          ->type_name("S")
          ->check(cli::PositiveReal());
  int runs = 0;
  CLI::Option* runs_flag =
      app.add_option("--runs", runs, "runs per figure, median reported (default 3; smoke 1)")
          ->type_name("N")
          ->transform(cli::WholeNumber(1, 1000));
  std::set<std::string> cases;
  CLI::Option* only = app.add_option_function<std::string>(
                             "--only",
                             [&cases](const std::string& list) {
                               for (const std::string& c : SplitCommas(list)) {
                                 if (c == "limits") {
                                   cases.insert({"loopback", "rr", "md5"});
                                 } else if (kAllCases.count(c)) {
                                   cases.insert(c);
                                 } else {
                                   throw CLI::ValidationError("--only", "unknown case " + c);
                                 }
                               }
                             },
                             "comma-separated subset of: limits (= loopback,rr,md5), put4k, "
                             "get4k, put_large, get_large, list, versions, access, sse, ec, audit, advisor, notify, metrics, mixed, kv, "
                             "kv_index")
                          ->type_name("CASES");
  app.add_option("--kv-endpoint", opt.kv_endpoint,
                 "with --endpoint: that server's KV listener (for the kv group)")
      ->type_name("HOST:PORT");
  uint64_t large_mib = 0, ec_mib = 0;
  CLI::Option* large =
      app.add_option("--large-mib", large_mib, "large object size in MiB (default 1024; smoke 64)")
          ->type_name("N")
          ->transform(cli::WholeNumber(1, 1 << 20));
  CLI::Option* ec = app.add_option("--ec-mib", ec_mib,
                                   "object size of the ec group in MiB (default 256; smoke 16)")
                        ->type_name("N")
                        ->transform(cli::WholeNumber(1, 1 << 20));
  int list_keys[2] = {0, 0};
  CLI::Option* list =
      app.add_option_function<std::string>(
             "--list-keys",
             [&list_keys](const std::string& v) {
               std::vector<std::string> counts = SplitCommas(v);
               for (size_t i = 0; i < counts.size() && i < 2; ++i) {
                 std::optional<int64_t> n = cli::ParseWholeNumber(counts[i]);
                 list_keys[i] = n && *n > 0 && *n <= 100'000'000 ? int(*n) : 0;
               }
               if (counts.size() != 2 || !list_keys[0] || !list_keys[1]) {
                 throw CLI::ValidationError("--list-keys", "needs two counts, e.g. 10000,1000000");
               }
             },
             "keys in the two listing buckets (default 10000,1000000)")
          ->type_name("A,B");
  app.footer(
      "\nWithout --endpoint s3bench starts its own strata server (fresh temp dir, free port,\n"
      "generated credentials). The ec group always starts its own two servers (n/a with\n"
      "--endpoint); the kv group needs --kv-endpoint with --endpoint.\n"
      "Exit status: 0 when every case ran (HTTP 501 is reported as n/a), 1 on any failed\n"
      "request, wrong status or wrong data, 2 on bad usage.\n");

  std::vector<std::string> args(argv + 1, argv + argc);
  if (auto e = cli::Parse(app, args)) std::exit(cli::Report(*e, "s3bench"));
  if (opt.smoke) ApplySmokeDefaults(opt);
  if (*duration) opt.s3.duration_s = duration_s;
  if (*runs_flag) opt.s3.runs = runs;
  if (*large) opt.s3.large_bytes = large_mib << 20;
  if (*ec) opt.s3.ec_bytes = ec_mib << 20;
  if (*list) {
    opt.s3.list_small_keys = list_keys[0];
    opt.s3.list_large_keys = list_keys[1];
  }
  if (*only) opt.cases = cases;
  return opt;
}

std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// ---- limits -----------------------------------------------------------------------

// Measures the limits. The S3 figures are compared with the first
// measurement; the optional second one, after the S3 cases, only shows how
// much the machine's state (other load on shared cores) drifted meanwhile.
void RunLimits(const Options& opt, Report& report, bool after_s3) {
  const CaseOptions& o = opt.s3;
  const std::string id_suffix = after_s3 ? "_after" : "";
  const std::string prefix = after_s3 ? "limit after: " : "limit: ";
  if (opt.cases.count("loopback")) {
    Row& row = report.Add("loopback" + id_suffix, prefix + "loopback TCP, 1 stream",
                          Unit::kBytesPerSecond);
    report.Measure(row, o.runs,
                   [&](int) { return RunFigure{MeasureLoopbackBytesPerSecond(o.duration_s)}; });
  }
  if (opt.cases.count("rr")) {
    for (int c : {1, 16}) {
      Row& row =
          report.Add("rr_c" + std::to_string(c) + id_suffix,
                     prefix + "4 KiB echo req/resp, c=" + std::to_string(c), Unit::kOpsPerSecond);
      report.Measure(row, o.runs, [&](int) {
        TimedResult r = MeasureEchoRequestResponse(c, o.duration_s);
        return RunFigure{r.OpsPerSecond(), r.PercentileUs(0.50), r.PercentileUs(0.99)};
      });
    }
  }
  if (opt.cases.count("md5")) {
    Row& row =
        report.Add("md5" + id_suffix, prefix + "MD5, 1 core (per CPU-s)", Unit::kBytesPerSecond);
    report.Measure(row, o.runs,
                   [&](int) { return RunFigure{MeasureMd5BytesPerSecond(o.duration_s)}; });
  }
}

// ---- S3 ---------------------------------------------------------------------------

Credentials CredentialsFromEnvironment() {
  auto env = [](const char* a, const char* b) -> std::string {
    if (const char* v = std::getenv(a)) return v;
    if (const char* v = std::getenv(b)) return v;
    return "";
  };
  Credentials c;
  c.access_key = env("STRATA_ROOT_USER", "AWS_ACCESS_KEY_ID");
  c.secret_key = env("STRATA_ROOT_PASSWORD", "AWS_SECRET_ACCESS_KEY");
  if (const char* region = std::getenv("AWS_DEFAULT_REGION")) c.region = region;
  if (c.access_key.empty() || c.secret_key.empty()) {
    UsageError("--endpoint needs STRATA_ROOT_USER/STRATA_ROOT_PASSWORD in the environment");
  }
  return c;
}

// Runs one group of S3 rows; an error outside the timed runs (creating a
// bucket or the keys a case needs) becomes a FAILED row instead of aborting.
void RunS3Case(const char* name, Report& report, const std::function<void()>& run) {
  try {
    run();
  } catch (const BenchError& e) {
    Row& row = report.Add(name, name, Unit::kOpsPerSecond);
    row.note = std::string("FAILED: ") + e.what();
    row.failed = true;
    std::fprintf(stderr, "[s3bench] %s: %s\n", name, row.note.c_str());
  }
}

void RunS3(const Options& opt, const Target& target, Report& report) {
  const CaseOptions& o = opt.s3;
  const std::pair<const char*, void (*)(const CaseOptions&, const Target&, Report&)> cases[] = {
      {"put4k", RunSmallPut},
      {"get4k", RunSmallGet},
      {"put_large", RunLargePut},
      {"get_large", RunLargeGet},
      {"list", RunList},
      {"versions", RunVersions},
      {"access", RunAccess},
      {"sse", RunSse}};
  for (const auto& [name, run] : cases) {
    if (!opt.cases.count(name)) continue;
    RunS3Case((std::string(name) + " setup").c_str(), report, [&] { run(o, target, report); });
  }
}

// A group that starts its own servers from the strata binary: n/a with
// --endpoint; `run` gets the binary's path.
void RunOwnServerGroup(const Options& opt, Report& report, const char* name, Unit unit,
                       const std::function<void(const std::string& binary)>& run) {
  if (!opt.cases.count(name)) return;
  if (!opt.endpoint.empty()) {
    Row& row = report.Add(name, std::string(name) + " group", unit);
    row.note = "n/a (starts its own servers; not run with --endpoint)";
    return;
  }
  std::string binary = opt.strata_binary.empty() ? FindStrataNextToSelf() : opt.strata_binary;
  if (binary.empty()) UsageError("no strata binary next to s3bench; pass --strata PATH");
  RunS3Case((std::string(name) + " setup").c_str(), report, [&] { run(binary); });
}

// The groups with servers of their own: ec (two: a 4+2 pool and one drive,
// ec_cases.h), audit (trail on and off), advisor (statistics on and off),
// notify (three servers and a receiver), metrics (10,000 buckets, smoke 200:
// scrape time), mixed (tail isolation and connection scale, mixed_cases.cc).
void RunOwnServerGroups(const Options& opt, Report& report) {
  const CaseOptions& o = opt.s3;
  RunOwnServerGroup(opt, report, "ec", Unit::kBytesPerSecond,
                    [&](const std::string& b) { RunErasureCoding(o, b, report); });
  RunOwnServerGroup(opt, report, "audit", Unit::kOpsPerSecond,
                    [&](const std::string& b) { RunAuditOverhead(o, b, report); });
  RunOwnServerGroup(opt, report, "advisor", Unit::kOpsPerSecond,
                    [&](const std::string& b) { RunAdvisorOverhead(o, b, report); });
  RunOwnServerGroup(opt, report, "notify", Unit::kOpsPerSecond,
                    [&](const std::string& b) { RunNotifyOverhead(o, b, report); });
  RunOwnServerGroup(opt, report, "metrics", Unit::kMilliseconds, [&](const std::string& b) {
    RunMetricsScrape(o, b, opt.smoke ? 200 : 10'000, report);
  });
  RunOwnServerGroup(opt, report, "mixed", Unit::kOpsPerSecond,
                    [&](const std::string& b) { RunMixed(o, b, report); });
}

// The kv group: its own server with a KV listener, or --endpoint + --kv-endpoint.
void RunKv(const Options& opt, Report& report) {
  if (!opt.cases.count("kv")) return;
  if (!opt.endpoint.empty()) {
    size_t colon = opt.kv_endpoint.rfind(':');
    if (colon == std::string::npos) {
      Row& row = report.Add("kv", "kv group", Unit::kBytesPerSecond);
      row.note = "n/a (with --endpoint, pass --kv-endpoint HOST:PORT)";
      return;
    }
    Target target;
    std::tie(target.host, target.port) = ParseEndpoint(opt.endpoint);
    target.credentials = CredentialsFromEnvironment();
    std::optional<int64_t> kv_port = cli::ParseWholeNumber(opt.kv_endpoint.substr(colon + 1));
    if (!kv_port || *kv_port < 1 || *kv_port > 65535) {
      UsageError("--kv-endpoint needs HOST:PORT, got " + opt.kv_endpoint);
    }
    KvEndpoint kv{opt.kv_endpoint.substr(0, colon), static_cast<int>(*kv_port)};
    RunS3Case("kv setup", report, [&] { RunKvCache(opt.s3, opt.kv, target, kv, report); });
    return;
  }
  std::string binary = opt.strata_binary.empty() ? FindStrataNextToSelf() : opt.strata_binary;
  if (binary.empty()) UsageError("no strata binary next to s3bench; pass --strata PATH");
  RunS3Case("kv setup", report, [&] {
    int kv_port = Socket::ListenLoopback(0).LocalPort();
    ServerOptions options;
    options.extra_args = {"--kv-listen", "127.0.0.1:" + std::to_string(kv_port)};
    std::unique_ptr<ServerProcess> server = ServerProcess::Start(binary, options);
    std::fprintf(stderr, "[s3bench] kv group: started %s, S3 port %d, KV port %d\n", binary.c_str(),
                 server->port(), kv_port);
    // The S3 port accepts first; wait for the KV listener too.
    for (int attempt = 0;; ++attempt) {
      try {
        Socket::Connect(server->host(), kv_port);
        break;
      } catch (const BenchError&) {
        if (attempt >= 300) throw BenchError("the KV listener did not come up");
        usleep(50'000);
      }
    }
    Target target{server->host(), server->port(), server->credentials()};
    RunKvCache(opt.s3, opt.kv, target, KvEndpoint{server->host(), kv_port}, report);
  });
}

bool NeedsServer(const Options& opt) {
  for (const std::string& c : opt.cases) {
    if (kS3Cases.count(c)) return true;
  }
  return false;
}

int Main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  Options opt = ParseOptions(argc, argv);
  std::unique_ptr<ServerProcess> server;
  Target target;
  if (NeedsServer(opt)) {
    if (!opt.endpoint.empty()) {
      std::tie(target.host, target.port) = ParseEndpoint(opt.endpoint);
      target.credentials = CredentialsFromEnvironment();
    } else {
      std::string binary = opt.strata_binary.empty() ? FindStrataNextToSelf() : opt.strata_binary;
      if (binary.empty()) UsageError("no strata binary next to s3bench; pass --strata PATH");
      server = ServerProcess::Start(binary);
      target = {server->host(), server->port(), server->credentials()};
      opt.s3.server_pid = server->pid();
      std::fprintf(stderr, "[s3bench] started %s on port %d, data in %s\n", binary.c_str(),
                   server->port(), server->data_dir().c_str());
    }
  }

  std::string load_before = ReadFirstLine("/proc/loadavg");
  double start_s = NowSeconds();
  Report report;
  RunLimits(opt, report, /*after_s3=*/false);
  if (NeedsServer(opt)) RunS3(opt, target, report);
  server.reset();  // stop the server before the ec group and printing
  RunOwnServerGroups(opt, report);
  RunKv(opt, report);
  if (opt.cases.count("kv_index")) {
    RunS3Case("kv_index", report,
              [&] { RunKvIndex(opt.s3, opt.smoke ? 100'000 : 10'000'000, report); });
  }
  if (NeedsServer(opt) || opt.cases.count("ec") || opt.cases.count("kv") ||
      opt.cases.count("audit") || opt.cases.count("advisor") || opt.cases.count("notify") ||
      opt.cases.count("metrics") || opt.cases.count("mixed")) {
    RunLimits(opt, report, /*after_s3=*/true);
  }

  std::printf(
      "\ns3bench %s mode: %d run(s) per figure (median; runs listed), %.1f s per timed run, "
      "%ld CPUs shared by load generator and server\n",
      opt.smoke ? "smoke" : "full", opt.s3.runs, opt.s3.duration_s, sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("load average before: %s; after: %s; total %.0f s\n\n", load_before.c_str(),
              ReadFirstLine("/proc/loadavg").c_str(), NowSeconds() - start_s);
  report.Print(stdout);
  std::fflush(stdout);
  if (report.AnyFailed()) {
    std::fprintf(stderr, "s3bench: some cases FAILED (see above)\n");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace strata::bench

int main(int argc, char** argv) {
  try {
    return strata::bench::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "s3bench: %s\n", e.what());
    return 1;
  }
}

// Event notifications' cost on the request path (issue 15: 4 KiB PUT with
// every PUT notified to a live receiver >= 90 % of the same server's PUTs
// without a notification configuration; a receiver that is down leaves the
// request path as it is). Three servers from the same binary, each with one
// webhook target declared: one bucket without a notification configuration,
// one notifying a live receiver (an HTTP server in this process answering
// 200), one notifying a port where nothing listens. Runs interleaved.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>

#include "http/server.h"
#include "s3_cases.h"
#include "server_process.h"

namespace strata::bench {
namespace {

constexpr char kNotifyXml[] =
    "<NotificationConfiguration><QueueConfiguration><Id>bench</Id>"
    "<Queue>arn:strata:sqs::hook:webhook</Queue><Event>s3:ObjectCreated:*</Event>"
    "</QueueConfiguration></NotificationConfiguration>";

// A file holding `text`, removed with this object.
struct TempConfig {
  explicit TempConfig(const std::string& text) {
    char name[] = "/tmp/strata-bench-notify-XXXXXX";
    int fd = ::mkstemp(name);
    if (fd < 0) throw BenchError("cannot make a temporary config file");
    ::close(fd);
    path = name;
    std::ofstream(path) << text;
  }
  ~TempConfig() { ::unlink(path.c_str()); }
  std::string path;
};

std::string WebhookConfig(int port) {
  return "[notify.webhook.hook]\nendpoint = \"http://127.0.0.1:" + std::to_string(port) +
         "/events\"\n";
}

void Configure(const Target& t) {
  S3Client client(t.host, t.port, t.credentials);
  S3Request req("PUT", "/" + std::string(kSmallBucket), "notification=");
  req.body_size = sizeof(kNotifyXml) - 1;
  ExpectStatus(client.Send(req, kNotifyXml), 200, "PutBucketNotificationConfiguration");
}

}  // namespace

void RunNotifyOverhead(const CaseOptions& opt, const std::string& binary, Report& report) {
  constexpr int kConcurrency = 16;
  std::atomic<uint64_t> received{0};
  http::ServerOptions ro;
  ro.port = 0;
  ro.worker_threads = 4;
  auto receiver = http::Server::Start(
      ro,
      [&](const http::Request&, ByteSource& body, http::ResponseWriter& out) {
        char buf[4096];
        for (;;) {
          auto n = body.Read(buf, sizeof buf);
          if (!n.ok() || *n == 0) break;
        }
        ++received;
        out.Start(200, {}, 0).IgnoreError();
      },
      [](http::ProtocolError, http::ResponseWriter& out) { out.Start(400, {}, 0).IgnoreError(); });
  if (!receiver.ok()) throw BenchError("receiver: " + receiver.status().ToString());
  // A port nobody listens on: bind one, note it, close it.
  int dead_port = 0;
  {
    auto probe = http::Server::Start(ro, [](const http::Request&, ByteSource&,
                                            http::ResponseWriter&) {},
                                     [](http::ProtocolError, http::ResponseWriter&) {});
    if (!probe.ok()) throw BenchError("probe: " + probe.status().ToString());
    dead_port = (*probe)->port();
    (*probe)->Stop();
  }
  TempConfig live_cfg(WebhookConfig((*receiver)->port()));
  TempConfig dead_cfg(WebhookConfig(dead_port));
  auto start = [&](const std::string& config) {
    ServerOptions o;
    o.extra_args = {"--config", config, "--kv-listen", "off"};
    return ServerProcess::Start(binary, o);
  };
  std::unique_ptr<ServerProcess> off = start(live_cfg.path);
  std::unique_ptr<ServerProcess> live = start(live_cfg.path);
  std::unique_ptr<ServerProcess> dead = start(dead_cfg.path);
  std::fprintf(stderr,
               "[s3bench] notify group: no configuration on port %d, live receiver on %d, "
               "receiver down on %d\n",
               off->port(), live->port(), dead->port());
  const Target off_t{off->host(), off->port(), off->credentials()};
  const Target live_t{live->host(), live->port(), live->credentials()};
  const Target dead_t{dead->host(), dead->port(), dead->credentials()};
  for (const Target* t : {&off_t, &live_t, &dead_t}) EnsureBucket(*t, kSmallBucket);
  Configure(live_t);
  Configure(dead_t);

  const std::string c = std::to_string(kConcurrency);
  Row& off_row = report.Add("put4k_notify_off_c" + c, "PUT 4 KiB, c=" + c + ", no notifications",
                            Unit::kOpsPerSecond);
  Comparison vs_off;
  vs_off.limit_ids = {off_row.id};
  vs_off.limit_label = "same, no notifications";
  vs_off.target = 0.90;
  Row& live_row = report.Add("put4k_notify_live_c" + c,
                             "PUT 4 KiB, c=" + c + ", each notified to a live receiver",
                             Unit::kOpsPerSecond, vs_off);
  Row& dead_row = report.Add("put4k_notify_dead_c" + c,
                             "PUT 4 KiB, c=" + c + ", each notified, receiver down",
                             Unit::kOpsPerSecond, vs_off);
  uint64_t live_puts = 0;
  for (int run = 0; run < opt.runs; ++run) {
    for (auto [row, target] : {std::pair{&off_row, &off_t}, std::pair{&live_row, &live_t},
                               std::pair{&dead_row, &dead_t}}) {
      report.MeasureRun(*row, run, opt.runs, [&, row = row, target = target](int r) {
        TimedResult t = TimedSmallPuts(*target, kConcurrency, opt.duration_s,
                                       "notify/r" + std::to_string(r));
        if (row == &live_row) live_puts += t.ops;
        return RunFigure{t.OpsPerSecond(), t.PercentileUs(0.50), t.PercentileUs(0.99)};
      });
    }
  }
  // The live rows mean something only if the events did arrive.
  for (int i = 0; i < 300 && received.load() < live_puts; ++i) ::usleep(100'000);
  report.AddNote("notify group: the live receiver got " + std::to_string(received.load()) +
                 " events for " + std::to_string(live_puts) + " notified PUTs");
  (*receiver)->Stop();
}

}  // namespace strata::bench

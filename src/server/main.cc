// strata: the S3 server (and, later, admin tools).
//   strata server [--listen HOST:PORT] [--data DIR] [--domain D] [--region R] [--workers N]
#include <signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/log.h"
#include "http/server.h"
#include "io/file_system.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "s3/service.h"
#include "server/config.h"
#include "storage/plain_store.h"

namespace {

constexpr char kUsage[] =
    "usage: strata server [--listen HOST:PORT] [--data DIR] [--domain DOMAIN]\n"
    "                     [--region REGION] [--workers N]\n"
    "  Root credentials come from STRATA_ROOT_USER / STRATA_ROOT_PASSWORD, or are\n"
    "  generated on first start and kept in DIR/root-credentials.\n";

int RunServer(const std::vector<std::string>& args) {
  using namespace strata;
  auto parsed = server::ParseServerArgs(args);
  if (auto* err = std::get_if<std::string>(&parsed)) {
    std::fprintf(stderr, "strata: %s\n%s", err->c_str(), kUsage);
    return 2;
  }
  const server::Config& cfg = std::get<server::Config>(parsed);
  auto fs = io::NewPosixFileSystem();
  if (Status st = fs->CreateDirs(cfg.data_dir + "/meta"); !st.ok()) {
    std::fprintf(stderr, "strata: cannot create data dir: %s\n", st.ToString().c_str());
    return 1;
  }
  auto creds = server::LoadRootCredentials(cfg.data_dir);
  if (auto* err = std::get_if<std::string>(&creds)) {
    std::fprintf(stderr, "strata: %s\n", err->c_str());
    return 1;
  }
  const server::RootCredentials& root = std::get<server::RootCredentials>(creds);

  auto kv = meta::OpenRocksDbStore(cfg.data_dir + "/meta");
  if (!kv.ok()) {
    std::fprintf(stderr, "strata: cannot open metadata: %s\n", kv.status().ToString().c_str());
    return 1;
  }
  auto store = storage::OpenPlainDataStore(fs.get(), cfg.data_dir);
  if (!store.ok()) {
    std::fprintf(stderr, "strata: cannot open data store: %s\n", store.status().ToString().c_str());
    return 1;
  }
  auto engine = object::ObjectEngine::Open(store->get(), kv->get());
  if (!engine.ok()) {
    std::fprintf(stderr, "strata: cannot open object engine: %s\n",
                 engine.status().ToString().c_str());
    return 1;
  }
  s3::ServiceConfig scfg;
  scfg.region = cfg.region;
  scfg.domain = cfg.domain;
  auto secrets = [root](std::string_view ak) -> std::optional<std::string> {
    if (ak == root.access_key) return root.secret_key;
    return std::nullopt;
  };
  s3::Service service(engine->get(), secrets, scfg);

  // Block the stop signals in every thread; main waits for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  http::ServerOptions opts;
  opts.host = cfg.listen_host;
  opts.port = cfg.listen_port;
  opts.worker_threads = cfg.workers;
  auto server = http::Server::Start(
      opts,
      [&service](const http::Request& req, ByteSource& body, http::ResponseWriter& out) {
        service.Handle(req, body, out);
      },
      [&service](http::ProtocolError e, http::ResponseWriter& out) {
        service.HandleProtocolError(e, out);
      });
  if (!server.ok()) {
    std::fprintf(stderr, "strata: %s\n", server.status().ToString().c_str());
    return 1;
  }
  std::printf("strata S3 server\n  endpoint:   http://%s:%d\n  region:     %s\n  data:       %s\n",
              cfg.listen_host.c_str(), (*server)->port(), cfg.region.c_str(), cfg.data_dir.c_str());
  std::printf("  access key: %s\n  secret key: %s%s\n", root.access_key.c_str(),
              root.secret_key.c_str(),
              root.generated ? "   (generated; kept in DATA/root-credentials)" : "");
  std::fflush(stdout);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  STRATA_LOG("signal %d: shutting down", sig);
  (*server)->Stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "server") return RunServer({args.begin() + 1, args.end()});
  std::fprintf(stderr, "strata: unknown command %s\n%s", args[0].c_str(), kUsage);
  return 2;
}

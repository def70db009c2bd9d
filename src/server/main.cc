// strata: the S3 server and its admin commands (the command line: config.h;
// `strata --help`, `strata server --help`, ...).
//   strata server [--listen HOST:PORT] [--data DIR] [--drives D1,...,DN] [--ec K+M] ...
//   strata admin drives|heal [bucket[/prefix]]   (talks to a running server)
//   strata admin rebuild-index --drives ... [--data DIR]   (offline)
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "auth/authorizer.h"
#include "auth/identities.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/thread_priority.h"
#include "common/time_util.h"
#include "http/server.h"
#include "io/file_system.h"
#include "kms/key_service.h"
#include "kms/kmip_client.h"
#include "kvcache/server.h"
#include "meta/kv_store.h"
#include "notify/notifier.h"
#include "s3/access_log.h"
#include "object/engine.h"
#include "object/rebuild.h"
#include "object/usage.h"
#include "energy/meter.h"
#include "s3/bucket_configs.h"
#include "s3/service.h"
#include "advisor/advisor.h"
#include "server/admin_api.h"
#include "server/console.h"
#include "server/admin_cli.h"
#include "server/checkpointer.h"
#include "server/config.h"
#include "server/load_cli.h"
#include "server/metrics_endpoint.h"
#include "server/storage_setup.h"
#include "storage/erasure_store.h"
#include "storage/healer.h"
#include "tier/classes.h"
#include "tier/restore.h"
#include "tier/scanner.h"

namespace strata::server {
namespace {

// Each connection is a descriptor: take the hard limit (Debian's soft
// default of 1024 is far below the connection cap).
void RaiseDescriptorLimit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
}

// The KV tier's namespace rights: strata:KvRead / KvWrite / KvAdmin on the
// namespace's bucket, by the caller's identity policies and the bucket's
// policy (auth/authorizer.h: root has all of them unless a policy denies).
kvcache::NamespaceRights KvNamespaceRights(auth::IdentityStore* ids, s3::BucketConfigs* configs,
                                           std::string_view access_key, const std::string& bucket,
                                           const std::string& peer_address, bool secure) {
  kvcache::NamespaceRights rights{false, false, false};
  auto caller = ids->Resolve(access_key);
  if (!caller) return rights;
  // The S3 path's compiled copy (a stored policy that does not compile
  // denies everything there, and so here).
  auto config = configs->Get(bucket);
  const auth::Policy* bucket_policy = config ? config->policy.get() : nullptr;
  const std::string arn = "arn:aws:s3:::" + bucket;
  // The condition keys of this path: who, from where, when, over TLS or not
  // (--kv-tls: every connection of the listener).
  auth::MapConditionContext conditions;
  conditions.Set("aws:SourceIp", peer_address);
  conditions.Set("aws:SecureTransport", secure ? "true" : "false");
  conditions.Set("aws:CurrentTime", FormatIso8601(UnixNowNs()));
  conditions.Set("aws:EpochTime", std::to_string(UnixNowNs() / 1000000000));
  conditions.Set("aws:PrincipalArn", caller->principal.arn);
  conditions.Set("aws:userid", caller->principal.user_id);
  if (!caller->principal.username.empty()) conditions.Set("aws:username", caller->principal.username);
  auto allowed = [&](std::string_view action) {
    auth::AccessQuery q{action, arn, &conditions};
    return auth::Authorize(*caller, bucket_policy, q) == auth::AccessDecision::kAllow;
  };
  rights.read = allowed("strata:KvRead");
  rights.write = allowed("strata:KvWrite");
  rights.admin = allowed("strata:KvAdmin");
  return rights;
}

// The healer's repairs as system records of the audit trail (none when it
// is off): key = the data file, bucket empty, operation HealRepair, result
// OK or Unrecoverable.
std::function<void(const std::string&, int, bool)> AuditRepairs(audit::AuditLog* log,
                                                                 std::string pool) {
  if (!log) return nullptr;
  return [log, pool = std::move(pool)](const std::string& id, int, bool unrecoverable) {
    audit::Actor a = audit::SystemActor("healer", "HealRepair", "", id);
    a.source = pool;  // the pool whose drives were repaired ("" : --drives)
    log->RecordRequest(a, audit::Kind::kSystem, unrecoverable ? "Unrecoverable" : "OK", 0);
  };
}

// The KV tier's evictions as system records of the audit trail (none when
// it is off), one per namespace, cause and summary interval: operation
// KvEviction, bucket the namespace's, key "quota blocks=N" or "ttl blocks=N",
// bytes the bytes those blocks held.
std::function<void(const kvcache::EvictionSummary&)> AuditEvictions(audit::AuditLog* log) {
  if (!log) return nullptr;
  return [log](const kvcache::EvictionSummary& e) {
    auto record = [&](const char* cause, uint64_t blocks, uint64_t bytes) {
      if (blocks == 0) return;
      audit::Actor a = audit::SystemActor("kvcache", "KvEviction", e.bucket,
                                          std::string(cause) + " blocks=" + std::to_string(blocks));
      a.bytes_in = &bytes;
      log->RecordRequest(a, audit::Kind::kSystem, "OK", 0);
    };
    record("quota", e.quota_blocks, e.quota_bytes);
    record("ttl", e.ttl_blocks, e.ttl_bytes);
  };
}

int RunServer(const Config& cfg) {
  // Block the stop signals before the first thread starts (RocksDB's, the healer's, the
  // listeners'): every thread inherits the mask, so a SIGTERM is never delivered to a thread
  // that dies of it with the banner unflushed and the engine not stopped; main waits for the
  // signals below, once the server is up (one that came during start-up waits until then).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);  // reloads the TLS certificate
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  SetLogFormat(cfg.json_logs ? LogFormat::kJson : LogFormat::kText);
  RestrictFileModes(cfg);
  RaiseDescriptorLimit();
  SetBulkNice(cfg.bulk_nice);
  auto opened = OpenStorage(cfg, true);
  if (auto* err = std::get_if<std::string>(&opened)) {
    std::fprintf(stderr, "strata: %s\n", err->c_str());
    return 1;
  }
  Storage& st = std::get<Storage>(opened);
  auto creds = LoadRootCredentials(cfg.data_dir);
  if (auto* err = std::get_if<std::string>(&creds)) {
    std::fprintf(stderr, "strata: %s\n", err->c_str());
    return 1;
  }
  const RootCredentials& root = std::get<RootCredentials>(creds);
  auto iam_key = LoadIamKey(cfg.data_dir, cfg.iam_key_file);
  if (auto* err = std::get_if<std::string>(&iam_key)) {
    std::fprintf(stderr, "strata: %s\n", err->c_str());
    return 1;
  }
  // The audit trail decorates the metadata store: everything that changes
  // something writes through `kv` (server/audit_admin.cc, docs/audit.md).
  std::unique_ptr<audit::AuditLog> audit_log;
  if (cfg.audit) {
    auto audit_key = LoadAuditKey(cfg.data_dir, cfg.audit_key_file);
    if (auto* err = std::get_if<std::string>(&audit_key)) {
      std::fprintf(stderr, "strata: %s\n", err->c_str());
      return 1;
    }
    auto opened_log = OpenAuditLog(st.kv.get(), std::get<IamKey>(audit_key).bytes,
                                   cfg.audit_checkpoint_records, cfg.audit_checkpoint_seconds);
    if (auto* err = std::get_if<std::string>(&opened_log)) {
      std::fprintf(stderr, "strata: %s\n", err->c_str());
      return 1;
    }
    audit_log = std::move(std::get<0>(opened_log));
    audit_log->Start();
    if (std::get<IamKey>(audit_key).generated) {
      STRATA_LOG("audit: made the checkpoint key %s (keep a copy off the box: it proves the "
                 "trail was not rewritten)",
                 (cfg.audit_key_file.empty() ? cfg.data_dir + "/audit.key" : cfg.audit_key_file)
                     .c_str());
    }
  }
  // Event notifications decorate the store above the audit trail: an event
  // is queued in the batch of the change it tells of (docs/notifications.md).
  std::unique_ptr<notify::Notifier> notifier;
  if (!cfg.webhooks.empty()) {
    notify::NotifierOptions no;
    no.region = cfg.region;
    for (const WebhookConfig& w : cfg.webhooks) {
      no.targets.push_back({w.id, w.endpoint, w.auth_token, static_cast<size_t>(w.queue_limit),
                            w.ca_file, w.timeout_seconds * 1000});
    }
    audit::AuditLog* log = audit_log.get();
    no.on_drop = [log](const std::string& target, const notify::Event& e) {
      if (!log) return;
      audit::Actor a = audit::SystemActor("notify", "NotificationDropped", e.bucket, e.key);
      log->RecordRequest(a, audit::Kind::kSystem, "QueueFull " + target + " " + e.name, 0);
    };
    auto opened = notify::Notifier::Open(audit_log ? audit_log->store() : st.kv.get(),
                                         std::move(no));
    if (!opened.ok()) {
      std::fprintf(stderr, "strata: %s\n", opened.status().message().c_str());
      return 1;
    }
    notifier = std::move(opened).value();
    notifier->Start();
  }
  // Per-bucket usage, counted in the same batches (object/usage.h).
  auto usage = object::UsageCounter::Open(notifier    ? notifier->store()
                                          : audit_log ? audit_log->store()
                                                      : st.kv.get());
  if (!usage.ok()) {
    std::fprintf(stderr, "strata: usage: %s\n", usage.status().ToString().c_str());
    return 1;
  }
  (*usage)->Start();
  meta::KvStore* kv_store = (*usage)->store();
  auto identities = auth::IdentityStore::Open(kv_store, std::get<IamKey>(iam_key).bytes,
                                              {root.access_key, root.secret_key});
  if (!identities.ok()) {
    std::fprintf(stderr, "strata: cannot open the identity store: %s\n",
                 identities.status().ToString().c_str());
    return 1;
  }

  auto kms_key = LoadKmsKey(cfg.data_dir, cfg.kms_key_file);
  if (auto* err = std::get_if<std::string>(&kms_key)) {
    std::fprintf(stderr, "strata: %s\n", err->c_str());
    return 1;
  }
  std::unique_ptr<kms::KmipClient> kmip;
  if (cfg.kmip_port >= 0) {
    auto client = kms::KmipClient::Create({cfg.kmip_host, static_cast<uint16_t>(cfg.kmip_port),
                                           cfg.kmip_ca, cfg.kmip_cert, cfg.kmip_key});
    if (!client.ok()) {
      std::fprintf(stderr, "strata: the KMIP key server: %s\n", client.status().ToString().c_str());
      return 1;
    }
    kmip = std::move(client).value();
    STRATA_LOG("key service: external keys at %s", kmip->Describe().c_str());
  }
  auto kms = kms::KeyService::Open(kv_store, std::get<IamKey>(kms_key).bytes, cfg.region,
                                   (*identities)->account(), kmip.get());
  if (!kms.ok()) {
    std::fprintf(stderr, "strata: cannot open the key service: %s\n",
                 kms.status().ToString().c_str());
    return 1;
  }
  if (std::get<IamKey>(kms_key).generated) {
    STRATA_LOG("key service: made the operator key %s (keep a copy off the box: encrypted "
               "objects are unreadable without it)",
               (cfg.kms_key_file.empty() ? cfg.data_dir + "/kms.key" : cfg.kms_key_file).c_str());
  }

  TidyRemotePools(st);
  auto engine = st.pools.empty() ? object::ObjectEngine::Open(st.data, kv_store)
                                 : object::ObjectEngine::Open(st.pools, kv_store);
  if (!engine.ok()) {
    std::fprintf(stderr, "strata: cannot open object engine: %s\n",
                 engine.status().ToString().c_str());
    return 1;
  }
  std::unique_ptr<storage::Healer> healer;
  std::unique_ptr<Checkpointer> checkpointer;
  if (st.erasure) {
    storage::HealerOptions ho;
    ho.scrub_interval_s = cfg.scrub_interval_s;
    ho.on_repair = AuditRepairs(audit_log.get(), "");
    healer = std::make_unique<storage::Healer>(st.erasure.get(), ho);
    st.erasure->SetHealCallback([h = healer.get()](const std::string& id) { h->Enqueue(id); });
    healer->Start();
    checkpointer = std::make_unique<Checkpointer>(st.kv.get(), st.fs.get(), cfg.drives,
                                                  cfg.checkpoint_interval_s);
    checkpointer->Start();
  }
  // The erasure-coded pools of a tiered layout heal and scrub on their own.
  std::vector<std::unique_ptr<storage::Healer>> pool_healers;
  std::vector<std::pair<std::string, storage::Healer*>> named_healers;
  std::vector<std::pair<std::string, storage::ErasureDataStore*>> named_erasure;
  if (healer) named_healers.emplace_back("", healer.get());
  if (st.erasure) named_erasure.emplace_back("", st.erasure.get());
  for (size_t i = 0; i < st.pool_stores.size(); ++i) {
    auto* erasure = dynamic_cast<storage::ErasureDataStore*>(st.pool_stores[i].get());
    if (!erasure) continue;
    named_erasure.emplace_back(st.pools[i].name, erasure);
    storage::HealerOptions ho;
    ho.scrub_interval_s = cfg.scrub_interval_s;
    ho.on_repair = AuditRepairs(audit_log.get(), st.pools[i].name);
    pool_healers.push_back(std::make_unique<storage::Healer>(erasure, ho));
    erasure->SetHealCallback([h = pool_healers.back().get()](const std::string& id) { h->Enqueue(id); });
    pool_healers.back()->Start();
    named_healers.emplace_back(st.pools[i].name, pool_healers.back().get());
  }
  ServerAdminApi admin(engine->get(), st.erasure.get(), healer.get(), identities->get(),
                       kms->get());
  admin.SetTiers(DescribeTiers(cfg, st), st.classes.Mapping());
  admin.SetUsage(usage->get());
  admin.SetRegion(cfg.region);
  // Sealed audit segments go into an Object-Lock bucket; the exporter holds
  // the engine, so it is taken back before the engine goes (ExportGuard).
  std::optional<AuditExport> audit_export;
  if (audit_log && !cfg.audit_bucket.empty()) {
    audit_export = AuditExport{engine->get(), cfg.audit_bucket};
    Status started = StartAuditExport(
        *audit_log, *audit_export, (*identities)->root().canonical_id,
        static_cast<uint32_t>(cfg.audit_retention_days),
        static_cast<uint64_t>(cfg.audit_export_records),
        static_cast<int64_t>(cfg.audit_export_seconds) * 1'000'000'000);
    if (!started.ok()) {
      std::fprintf(stderr, "strata: audit export: %s\n", started.message().c_str());
      return 1;
    }
  }
  struct ExportGuard {
    audit::AuditLog* log;
    ~ExportGuard() {
      if (log) log->SetExporter(nullptr, 0, 0);
    }
  } export_guard{audit_export ? audit_log.get() : nullptr};
  admin.SetAudit(audit_log.get(), audit_export);

  // Prometheus metrics (server/metrics_endpoint.h), served only with
  // --metrics-listen; kept also for the console (the admin API's `requests`
  // document reads request counts and latencies from them).
  std::unique_ptr<metrics::Registry> registry;
  std::string metrics_token;
  if (cfg.metrics_listen_port >= 0 || cfg.console) {
    registry = std::make_unique<metrics::Registry>();
    metrics::AddProcessCollector(*registry);
    if (cfg.metrics_listen_port >= 0 && !cfg.metrics_token_file.empty()) {
      auto token = ReadMetricsToken(cfg.metrics_token_file);
      if (!token.ok()) {
        std::fprintf(stderr, "strata: %s\n", token.status().message().c_str());
        return 1;
      }
      metrics_token = *token;
    }
  }

  // Energy (docs/energy.md): measured where RAPL counters are readable,
  // modelled always, per node and per workload.
  const std::string media = cfg.pools.empty() ? "hot" : cfg.pools.front().media;
  energy::Meter meter(energy::ForMedia(media),
                      energy::RaplReader::Open(st.fs.get(), cfg.powercap_root),
                      energy::ProcessCpuSeconds);
  STRATA_LOG("energy: %s", meter.measured()
                               ? ("measured by the RAPL counters under " + cfg.powercap_root +
                                  ", and modelled").c_str()
                               : ("modelled (no readable RAPL counters under " +
                                  cfg.powercap_root + ")").c_str());
  admin.SetEnergy(&meter);

  // Server access logs of buckets with PutBucketLogging on (s3/access_log.h).
  s3::AccessLogDelivery access_logs(engine->get(), cfg.region,
                                    int64_t{cfg.access_log_delivery_seconds} * 1'000'000'000);
  access_logs.Start();

  s3::ServiceConfig scfg;
  scfg.energy = &meter;
  scfg.access_logs = &access_logs;
  scfg.metrics = registry.get();
  scfg.access_log = cfg.access_log;
  scfg.audit = audit_log.get();
  if (notifier) scfg.notify_targets = notifier->target_ids();
  scfg.region = cfg.region;
  scfg.domain = cfg.domain;
  scfg.sigv2 = cfg.sigv2;
  scfg.admin = &admin;
  scfg.identities = identities->get();
  scfg.kms = kms->get();
  scfg.sse_c_over_http = cfg.sse_c_over_http;
  scfg.classes = &st.classes;
  scfg.lifecycle_day_ns = static_cast<int64_t>(cfg.lifecycle_day_seconds) * 1'000'000'000;
  auth::IdentityStore* ids = identities->get();
  auto secrets = [ids](std::string_view ak) { return ids->Secret(ak); };
  // Lifecycle (tier/scanner.h) and restores from the cold tier (tier/restore.h).
  tier::ScannerOptions lo;
  lo.day_ns = scfg.lifecycle_day_ns;
  lo.interval_ns = cfg.lifecycle_interval_s > 0
                       ? static_cast<int64_t>(cfg.lifecycle_interval_s) * 1'000'000'000
                       : std::clamp<int64_t>(lo.day_ns / 4, 1'000'000'000, 3600ll * 1'000'000'000);
  lo.max_actions_per_s = static_cast<uint32_t>(cfg.lifecycle_max_actions_per_s);
  tier::Scanner lifecycle(engine->get(), kv_store, &st.classes, lo);
  admin.SetLifecycle(&lifecycle);
  tier::Restorer restorer(engine->get(), kv_store, &st.classes, lo.day_ns, lo.interval_ns);
  scfg.restorer = &restorer;
  // The tier advisor (docs/advisor.md): statistics of every GET, an analysis
  // every interval, approved moves carried out within the operator's policy.
  // The KV-cache tier starts below, after the S3 listener; the advisor and
  // the admin API reach it through this pointer once it runs.
  std::atomic<kvcache::Server*> kv_running{nullptr};
  std::unique_ptr<advisor::Advisor> tier_advisor;
  if (cfg.advisor) {
    advisor::AdvisorOptions ao;
    ao.stats.day_ns = lo.day_ns;
    ao.stats.prefix_depth = cfg.advisor_prefix_depth;
    ao.stats.max_prefixes = static_cast<size_t>(cfg.advisor_max_prefixes);
    ao.stats.sample_every = static_cast<uint32_t>(cfg.advisor_sample);
    ao.thresholds.cold_days = cfg.advisor_cold_days;
    ao.thresholds.hot_reads_per_day = cfg.advisor_hot_reads_per_day;
    ao.thresholds.min_bytes = static_cast<uint64_t>(cfg.advisor_min_bytes);
    ao.thresholds.kv_idle_days = cfg.advisor_kv_idle_days;
    if (!cfg.advisor_currency.empty()) ao.model.currency = cfg.advisor_currency;
    for (const auto& [name, figures] : cfg.advisor_media_costs) {
      if (auto m = tier::ParseMedia(name)) {
        ao.model.media[static_cast<size_t>(*m)] = {figures.first, figures.second};
      }
    }
    ao.kv_namespaces = [&kv_running] {
      std::vector<advisor::KvNamespaceFacts> out;
      const kvcache::Server* kv = kv_running.load();
      if (!kv) return out;
      for (const kvcache::NamespaceStats& n : kv->namespace_stats()) {
        advisor::KvNamespaceFacts f;
        f.bucket = n.bucket;
        f.blocks = n.blocks;
        f.bytes = n.bytes;
        f.last_access_ns = static_cast<int64_t>(n.last_access_ns);
        f.lookups = n.lookups;
        f.hits = n.hits;
        f.misses = n.misses;
        f.ttl_s = n.ttl_s;
        out.push_back(std::move(f));  // blocks live in the first pool ("")
      }
      return out;
    };
    ao.kv_expire = [&kv_running](const std::string& bucket,
                                 int64_t idle_since_ns) -> Result<advisor::KvExpired> {
      kvcache::Server* kv = kv_running.load();
      if (!kv) return Unavailable("the KV-cache tier is not running");
      ASSIGN_OR_RETURN(kvcache::ExpireResult r,
                       kv->ExpireNamespace(bucket, static_cast<uint64_t>(std::max<int64_t>(0, idle_since_ns))));
      return advisor::KvExpired{r.blocks, r.bytes, r.blocks_left};
    };
    ao.interval_ns = cfg.advisor_interval_s > 0
                         ? static_cast<int64_t>(cfg.advisor_interval_s) * 1'000'000'000
                         : std::clamp<int64_t>(lo.day_ns / 4, 60ll * 1'000'000'000,
                                               3600ll * 1'000'000'000);
    ao.tick_ns = std::clamp<int64_t>(lo.day_ns / 20, 100'000'000, 5'000'000'000);
    auto opened = advisor::Advisor::Open(engine->get(), kv_store, &st.classes, ao);
    if (!opened.ok()) {
      std::fprintf(stderr, "strata: advisor: %s\n", opened.status().ToString().c_str());
      return 1;
    }
    tier_advisor = std::move(opened).value();
    admin.SetAdvisor(tier_advisor.get());
    scfg.on_read = [a = tier_advisor.get()](std::string_view bucket, std::string_view key,
                                            uint64_t bytes) { a->RecordRead(bucket, key, bytes); };
  }
  s3::Service service(engine->get(), scfg);
  lifecycle.Start();
  restorer.Start();
  if (tier_advisor) tier_advisor->Start();

  http::ServerOptions opts;
  opts.host = cfg.listen_host;
  opts.port = cfg.listen_port;
  opts.worker_threads = cfg.workers;
  opts.max_worker_threads = cfg.max_workers;
  opts.event_loops = cfg.event_loops;
  opts.max_connections = cfg.max_connections;
  opts.idle_timeout_ms = cfg.idle_timeout_s * 1000;
  opts.header_timeout_ms = cfg.header_timeout_s * 1000;
  opts.min_body_bytes_per_s = static_cast<uint64_t>(cfg.min_body_bytes_per_s);
  // The web console (server/console.h) on the same listeners.
  std::unique_ptr<Console> console;
  if (cfg.console) console = std::make_unique<Console>(&admin, ids, audit_log.get());
  auto handler = [&service, c = console.get()](const http::Request& req, ByteSource& body,
                                               http::ResponseWriter& out) {
    if (c && Console::Owns(req)) return c->Handle(req, body, out);
    service.Handle(req, body, out);
  };
  auto on_error = [&service](http::ProtocolError e, http::ResponseWriter& out) {
    service.HandleProtocolError(e, out);
  };
  // The plain S3 listener opens last (below): once it answers, every other listener (TLS,
  // KV-cache, metrics) is already open, so a readiness probe on it means the whole server.
  std::shared_ptr<TlsContext> tls;
  std::unique_ptr<http::Server> tls_server;
  if (cfg.tls_listen_port >= 0 || cfg.kv_tls) {  // one certificate for both listeners
    auto loaded = TlsContext::Load(cfg.tls_cert, cfg.tls_key);
    if (!loaded.ok()) {
      std::fprintf(stderr, "strata: TLS: %s\n", loaded.status().message().c_str());
      return 1;
    }
    tls = *loaded;
  }
  if (cfg.tls_listen_port >= 0) {
    http::ServerOptions tls_opts = opts;
    tls_opts.host = cfg.tls_listen_host;
    tls_opts.port = cfg.tls_listen_port;
    tls_opts.tls = tls;
    auto started = http::Server::Start(tls_opts, handler, on_error);
    if (!started.ok()) {
      std::fprintf(stderr, "strata: %s\n", started.status().ToString().c_str());
      return 1;
    }
    tls_server = std::move(started).value();
  }
  std::string kv_line, metrics_line;  // printed with the banner, once every listener is open
  std::unique_ptr<kvcache::Server> kv;  // the KV-cache tier: same credentials and engine
  if (cfg.kv_listen_port >= 0) {
    kvcache::ServerOptions kvo;
    kvo.host = cfg.kv_listen_host;
    kvo.port = static_cast<uint16_t>(cfg.kv_listen_port);
    kvo.region = cfg.region;
    kvo.energy = &meter;
    kvo.kms = kms->get();  // namespaces whose bucket has default encryption
    kvo.worker_threads = cfg.kv_workers;
    kvo.max_connections = static_cast<size_t>(cfg.kv_max_connections);
    kvo.max_connections_per_address = static_cast<size_t>(cfg.kv_max_connections_per_ip);
    kvo.idle_timeout_ms = static_cast<uint32_t>(cfg.kv_idle_timeout_s) * 1000u;
    kvo.on_evictions = AuditEvictions(audit_log.get());
    kvo.eviction_summary_interval_ms = static_cast<uint32_t>(cfg.kv_eviction_summary_s) * 1000u;
    kvo.default_quota_bytes = cfg.kv_default_quota_bytes;
    kvo.max_total_bytes = cfg.kv_max_bytes_explicit ? cfg.kv_max_bytes : HalfOfCapacity(cfg);
    // Root is the operator: it may open (and set the quota and TTL of) any namespace.
    kvo.is_operator = [root_key = root.access_key](std::string_view ak) { return ak == root_key; };
    if (cfg.kv_tls) kvo.tls = tls;
    kvo.namespace_rights = [ids, configs = &service.bucket_configs(), secure = cfg.kv_tls](
                               std::string_view ak, const std::string& b, const std::string& peer) {
      return KvNamespaceRights(ids, configs, ak, b, peer, secure);
    };
    auto started = kvcache::Server::Start(engine->get(), secrets, std::move(kvo));
    if (started.ok()) {
      kv = std::move(started).value();
      kv_running = kv.get();
      kv_line = "  kv-cache:   " + cfg.kv_listen_host + ":" + std::to_string(kv->port()) +
                (cfg.kv_tls ? "  (TLS)" : "") + "\n";
    } else {
      STRATA_LOG("kv-cache tier off: %s", started.status().ToString().c_str());
      if (cfg.kv_listen_explicit) return 1;
    }
  }
  admin.SetRequestSources(registry.get(), [&kv_running] {
    const kvcache::Server* kv = kv_running.load();
    return kv ? kv->namespace_stats() : std::vector<kvcache::NamespaceStats>{};
  });
  std::unique_ptr<http::Server> metrics_server;
  if (registry && cfg.metrics_listen_port >= 0) {
    MetricsSources sources;
    for (const PoolConfig& p : cfg.pools) {
      if (!p.remote) sources.pool_dirs.emplace_back(p.name, PoolPath(cfg, p.drives[0]));
    }
    if (cfg.pools.empty()) {
      sources.pool_dirs.emplace_back("", cfg.drives.empty() ? cfg.data_dir : cfg.drives[0]);
    }
    sources.lifecycle = &lifecycle;
    sources.audit = audit_log.get();
    sources.notifier = notifier.get();
    sources.usage = usage->get();
    sources.energy = &meter;
    sources.healers = named_healers;
    sources.erasure = named_erasure;
    sources.kv = [&kv]() -> const kvcache::Server* { return kv.get(); };
    AddServerCollectors(*registry, std::move(sources));
    auto started = StartMetricsServer(cfg.metrics_listen_host, cfg.metrics_listen_port,
                                      registry.get(), metrics_token);
    if (!started.ok()) {
      std::fprintf(stderr, "strata: metrics: %s\n", started.status().ToString().c_str());
      return 1;
    }
    metrics_server = std::move(started).value();
    metrics_line = "  metrics:    http://" + cfg.metrics_listen_host + ":" +
                   std::to_string(metrics_server->port()) + "/metrics" +
                   (metrics_token.empty() ? "" : "  (bearer token)") + "\n";
  }
  auto server = http::Server::Start(opts, handler, on_error);
  if (!server.ok()) {
    std::fprintf(stderr, "strata: %s\n", server.status().ToString().c_str());
    return 1;
  }
  std::printf("strata S3 server\n  endpoint:   http://%s:%d\n  region:     %s\n  data:       %s\n",
              cfg.listen_host.c_str(), (*server)->port(), cfg.region.c_str(), cfg.data_dir.c_str());
  if (tls_server) {
    std::printf("  https:      https://%s:%d  (certificate %s; SIGHUP reloads it)\n",
                cfg.tls_listen_host.c_str(), tls_server->port(), cfg.tls_cert.c_str());
  }
  if (st.erasure) {
    std::printf("  drives:     %zu, erasure coding %d+%d\n", cfg.drives.size(), st.erasure->k(),
                st.erasure->m());
  }
  std::printf("  account:    %s\n", ids->account().c_str());
  std::printf("  access key: %s\n", root.access_key.c_str());
  if (root.generated) {  // shown once, when it is made; never again (logs are read by many)
    std::printf("  secret key: %s   (generated; kept in DATA/root-credentials, mode 0600)\n",
                root.secret_key.c_str());
  }
  std::fputs(kv_line.c_str(), stdout);
  std::fputs(metrics_line.c_str(), stdout);
  std::fflush(stdout);

  int sig = 0;
  while (true) {
    sigwait(&stop_signals, &sig);
    if (sig != SIGHUP) break;
    if (!tls) {
      STRATA_LOG("SIGHUP: no TLS listener, nothing to reload");
    } else if (Status s = tls->Reload(); s.ok()) {
      STRATA_LOG("SIGHUP: TLS certificate reloaded from %s", cfg.tls_cert.c_str());
    } else {
      STRATA_LOG("SIGHUP: TLS reload failed, the old certificate stays: %s", s.message().c_str());
    }
  }
  STRATA_LOG("signal %d: shutting down", sig);
  if (metrics_server) metrics_server->Stop();
  (*server)->Stop();
  lifecycle.Stop();
  restorer.Stop();
  if (tier_advisor) tier_advisor->Stop();  // saves the statistics
  if (tls_server) tls_server->Stop();
  if (kv) kv->Stop();
  if (healer) healer->Stop();
  for (auto& h : pool_healers) h->Stop();
  access_logs.Stop();              // delivers what is buffered
  (*usage)->Stop();                // folds the last deltas
  if (notifier) notifier->Stop();  // what is queued stays queued for the next start
  if (audit_log) audit_log->Stop();  // chains the last records and signs the head
  if (checkpointer) checkpointer->Stop();
  return 0;
}

int RebuildIndex(const Config& cfg) {
  auto opened = OpenStorage(cfg, true);
  if (auto* err = std::get_if<std::string>(&opened)) {
    std::fprintf(stderr, "strata: %s\n", err->c_str());
    return 1;
  }
  Storage& st = std::get<Storage>(opened);
  auto report = object::RebuildIndex(*st.erasure, *st.kv, [](uint64_t done, uint64_t total) {
    std::fprintf(stderr, "\rrebuild-index: %llu / %llu pieces scanned",
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total));
  });
  std::fprintf(stderr, "\n");
  if (!report.ok()) {
    std::fprintf(stderr, "strata: rebuild-index failed: %s\n", report.status().ToString().c_str());
    return 1;
  }
  std::printf("rebuild-index done: %llu pieces scanned, %llu buckets, %llu object versions "
              "restored (%llu delete markers, %llu with lock settings changed after the write), "
              "%llu replaced versions and %llu orphan parts to collect, %llu unreadable; "
              "%llu with ACLs changed after the write\n",
              static_cast<unsigned long long>(report->ids_scanned),
              static_cast<unsigned long long>(report->buckets),
              static_cast<unsigned long long>(report->objects),
              static_cast<unsigned long long>(report->delete_markers),
              static_cast<unsigned long long>(report->lock_settings),
              static_cast<unsigned long long>(report->replaced_versions),
              static_cast<unsigned long long>(report->orphan_parts),
              static_cast<unsigned long long>(report->unreadable),
              static_cast<unsigned long long>(report->acl_settings));
  return 0;
}

int Main(const std::vector<std::string>& args) {
  auto parsed = ParseCommandLine(args);
  if (auto* e = std::get_if<UsageError>(&parsed)) return cli::Report(*e, "strata");
  struct {
    int operator()(const ServerCommand& c) const { return RunServer(c.config); }
    int operator()(const RebuildIndexCommand& c) const { return RebuildIndex(c.config); }
    int operator()(const AdminDrivesCommand& c) const { return RunAdminDrives(c.admin); }
    int operator()(const AdminHealCommand& c) const {
      return RunAdminHeal(c.admin, c.bucket, c.prefix);
    }
    int operator()(const AdminIamCommand& c) const { return RunAdminIam(c); }
    int operator()(const LoadCommand& c) const { return RunLoad(c.args); }
  } run;
  return std::visit(run, std::get<Command>(parsed));
}

}  // namespace
}  // namespace strata::server

int main(int argc, char** argv) {
  return strata::server::Main(std::vector<std::string>(argv + 1, argv + argc));
}

#include "server/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string_view>

#include "common/cli11.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "server/config_file.h"

namespace strata::server {

namespace {

using cli::WholeNumber;

constexpr char kCredentialsText[] =
    "Root credentials come from STRATA_ROOT_USER / STRATA_ROOT_PASSWORD (a secret of at\n"
    "least 16 characters), or are generated on first start and kept in DIR/root-credentials.\n";

[[noreturn]] void Invalid(const std::string& flag, const std::string& message) {
  throw CLI::ValidationError(flag, message);
}

void SplitHostPort(const std::string& flag, const std::string& text, std::string* host, int* port) {
  if (!ParseHostPort(text, host, port)) {
    Invalid(flag, "needs HOST:PORT with a port from 0 to 65535, got '" + text + "'");
  }
}

// An integer flag: a whole decimal number in [lo, hi]; the default shown in --help.
template <typename Int>
void AddNumber(CLI::App& app, const std::string& flag, Int& slot, int64_t lo, int64_t hi,
               const std::string& type, const std::string& description) {
  app.add_option(flag, slot, description)
      ->type_name(type)
      ->transform(WholeNumber(lo, hi))
      ->capture_default_str();
}

// --data, --drives, --ec: where the data is (the server and rebuild-index).
void AddStorageOptions(CLI::App& app, Config& c) {
  app.add_option("--data", c.data_dir, "data directory (with --drives: the metadata only)")
      ->type_name("DIR")
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--direct-writes", [&c](const std::string& v) { c.direct_writes = v == "on"; },
         "write an object's data past its first 8 MiB with O_DIRECT, around the page cache: "
         "a quarter less server CPU per PUT byte, and a checkpoint burst does not evict the "
         "cached small objects; but a GET right after such a PUT reads from the drive, and a "
         "single stream is bound by the drive's direct write speed (default off)")
      ->type_name("on|off")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--iam-key-file", c.iam_key_file,
                 "file with the key (64 hex digits) sealing the users' secret keys "
                 "(default: DATA/iam.key, made on first start)")
      ->type_name("FILE");
  app.add_option("--kms-key-file", c.kms_key_file,
                 "file with the operator key (64 hex digits) sealing the key service's master "
                 "keys, SSE-S3 and SSE-KMS (default: DATA/kms.key, made on first start; keep a "
                 "copy off the box)")
      ->type_name("FILE");
  app.add_option_function<std::string>(
         "--drives",
         [&c](const std::string& v) {
           c.drives.clear();
           size_t pos = 0;
           while (true) {
             size_t comma = v.find(',', pos);
             std::string d = v.substr(pos, comma == std::string::npos ? comma : comma - pos);
             if (d.empty()) Invalid("--drives", "has an empty entry: '" + v + "'");
             c.drives.push_back(d);
             if (comma == std::string::npos) break;
             pos = comma + 1;
           }
         },
         "erasure-code object data over these drives (directories or mount points)")
      ->type_name("D1,...,DN");
  app.add_option_function<std::string>(
         "--ec",
         [&c](const std::string& v) {
           if (!ParseLayout(v, &c.ec_k, &c.ec_m)) {
             Invalid("--ec", "needs K+M with K >= 1 and M >= 0, e.g. 4+2, got '" + v + "'");
           }
         },
         "data+parity shards with --drives (default: 4 drives 2+2, 6 drives 4+2, 12 drives 8+4)")
      ->type_name("K+M");
}

void AddServerOptions(CLI::App& app, Config& c) {
  // Read before the other flags (ParseCommandLine), which override it.
  app.add_option("--config", c.config_file,
                 "settings in TOML (docs/configuration.md): pools, storage classes, lifecycle; "
                 "flags override the file")
      ->type_name("FILE");
  app.add_option_function<std::string>(
         "--listen",
         [&c](const std::string& v) {
           SplitHostPort("--listen", v, &c.listen_host, &c.listen_port);
         },
         "S3 listener address")
      ->type_name("HOST:PORT")
      ->default_str(c.listen_host + ":" + std::to_string(c.listen_port));
  app.add_option_function<std::string>(
         "--metrics-listen",
         [&c](const std::string& v) {
           c.metrics_listen_port = -1;
           if (v != "off") {
             SplitHostPort("--metrics-listen", v, &c.metrics_listen_host, &c.metrics_listen_port);
           }
         },
         "Prometheus metrics listener (GET /metrics; off unless given)")
      ->type_name("HOST:PORT|off");
  app.add_option_function<std::string>(
         "--log-format",
         [&c](const std::string& v) { c.json_logs = v == "json"; },
         "server log lines as JSON objects (default) or plain text")
      ->type_name("json|text")
      ->check(CLI::IsMember({"json", "text"}));
  app.add_option_function<std::string>(
         "--audit", [&c](const std::string& v) { c.audit = v == "on"; },
         "the audit trail: a hash-chained record of every change, denied and mutating request "
         "(default on)")
      ->type_name("on|off")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--audit-key-file", c.audit_key_file,
                 "file with the key (64 hex digits) signing the audit trail's checkpoints "
                 "(default: DATA/audit.key, made on first start; keep a copy off the box)")
      ->type_name("FILE");
  app.add_option("--audit-bucket", c.audit_bucket,
                 "export sealed audit segments as objects into this bucket, made with Object Lock "
                 "and COMPLIANCE retention (config: audit_retention_days; default: no export)")
      ->type_name("BUCKET");
  app.add_flag("--access-log", c.access_log,
               "log one JSON line per S3 request (request id, identity, operation, bucket, key, "
               "status, bytes, duration)");
  app.add_option("--metrics-token-file", c.metrics_token_file,
                 "file holding the bearer token /metrics asks for (none: no token)")
      ->type_name("FILE");
  app.add_option("--access-log-delivery-seconds", c.access_log_delivery_seconds,
                 "how often server access logs (PutBucketLogging) are delivered (default 60)")
      ->check(CLI::Range(1, 86400))
      ->type_name("S");
  app.add_option("--powercap-root", c.powercap_root,
                 "where the RAPL energy counters are (default /sys/class/powercap; none "
                 "readable: energy figures are modelled)")
      ->type_name("DIR");
  app.add_option_function<std::string>(
         "--listen-tls",
         [&c](const std::string& v) {
           SplitHostPort("--listen-tls", v, &c.tls_listen_host, &c.tls_listen_port);
         },
         "HTTPS listener address (TLS 1.2+; needs --tls-cert and --tls-key)")
      ->type_name("HOST:PORT");
  app.add_option("--tls-cert", c.tls_cert, "certificate chain (PEM) of the HTTPS listener "
                 "and of --kv-tls; re-read with the key on SIGHUP")
      ->type_name("FILE");
  app.add_option("--tls-key", c.tls_key, "private key (PEM) of --tls-cert")->type_name("FILE");
  AddStorageOptions(app, c);
  app.add_option("--domain", c.domain,
                 "enable virtual-host addressing (BUCKET.DOMAIN); path style always works")
      ->type_name("DOMAIN");
  app.add_option("--region", c.region, "the region requests are signed for")
      ->type_name("REGION")
      ->capture_default_str();
  AddNumber(app, "--workers", c.workers, 1, 65536, "N",
            "S3 requests served at once (worker threads running; one waiting on a slow client "
            "hands its place to another thread)");
  AddNumber(app, "--max-workers", c.max_workers, 1, 65536, "N",
            "S3 worker threads at most, those waiting on slow clients included (at least "
            "--workers)");
  AddNumber(app, "--event-loops", c.event_loops, 0, 256, "N",
            "S3 event loops: each parks idle connections and serves GETs and HEADs without a "
            "body on the thread leading it (0: four per core, at most 64)");
  AddNumber(app, "--bulk-nice", c.bulk_nice, 0, 19, "N",
            "nice increment of the threads that move bulk bytes for large GETs and PUTs, and of "
            "the healer, so small requests go first on busy cores (0: none)");
  app.add_option_function<std::string>(
         "--sigv2", [&c](const std::string& v) { c.sigv2 = v == "on"; },
         "accept AWS Signature Version 2 requests (off: 400 InvalidRequest)")
      ->type_name("on|off")
      ->check(CLI::IsMember({"on", "off"}).description(""))
      ->default_str("on");
  AddNumber(app, "--max-connections", c.max_connections, 1, 1'000'000'000, "N",
            "open S3 connections; one more is answered 503 SlowDown");
  AddNumber(app, "--idle-timeout-s", c.idle_timeout_s, 1, 1'000'000'000, "S",
            "close idle keep-alive connections after");
  AddNumber(app, "--header-timeout-s", c.header_timeout_s, 1, 1'000'000'000, "S",
            "a request head must arrive within");
  AddNumber(app, "--min-body-rate", c.min_body_bytes_per_s, 0, 1'000'000'000, "BYTES_PER_S",
            "bodies slower than this after a 10 s grace are cut (0: no minimum)");
  AddNumber(app, "--scrub-interval-s", c.scrub_interval_s, 0, 1'000'000'000, "S",
            "with --drives: seconds between scrubber passes (0: no scrubbing)");
  AddNumber(app, "--checkpoint-interval-s", c.checkpoint_interval_s, 0, 1'000'000'000, "S",
            "with --drives: seconds between metadata checkpoints onto the drives (0: none)");
  AddNumber(app, "--lifecycle-day-seconds", c.lifecycle_day_seconds, 1, 86400, "S",
            "the length of one lifecycle day (shorter for tests)");
  AddNumber(app, "--lifecycle-interval-s", c.lifecycle_interval_s, 0, 7 * 86400, "S",
            "seconds between lifecycle scanner passes (0: a quarter day, 1 s to 1 h)");
  AddNumber(app, "--lifecycle-rate", c.lifecycle_max_actions_per_s, 0, 1'000'000, "N",
            "lifecycle actions per second at most (0: no limit)");
  app.add_option_function<std::string>(
         "--console", [&c](const std::string& v) { c.console = v == "on"; },
         "the web console at /_strata/console/ on the S3 listeners (docs/console.md)")
      ->type_name("on|off")
      ->check(CLI::IsMember({"on", "off"}).description(""))
      ->default_str("on");
  app.add_option_function<std::string>(
         "--advisor", [&c](const std::string& v) { c.advisor = v == "on"; },
         "the tier advisor: access statistics, recommendations, approved moves (docs/advisor.md)")
      ->type_name("on|off")
      ->check(CLI::IsMember({"on", "off"}).description(""))
      ->default_str("on");
  AddNumber(app, "--advisor-sample", c.advisor_sample, 1, 1'000'000, "N",
            "count one GET in N in the advisor's access statistics");
  AddNumber(app, "--advisor-prefix-depth", c.advisor_prefix_depth, 0, 16, "N",
            "key prefixes the advisor tracks end at the N-th '/'");
  AddNumber(app, "--advisor-max-prefixes", c.advisor_max_prefixes, 16, 10'000'000, "N",
            "prefixes the advisor keeps statistics for (the least read go first)");
  AddNumber(app, "--advisor-interval-s", c.advisor_interval_s, 0, 7 * 86400, "S",
            "seconds between advisor analyses (0: a quarter lifecycle day, 1 min to 1 h)");
  AddNumber(app, "--advisor-cold-days", c.advisor_cold_days, 1, 36500, "DAYS",
            "recommend one tier colder after this many days without reads or writes");
  AddNumber(app, "--advisor-hot-reads", c.advisor_hot_reads_per_day, 1, 1'000'000'000, "N",
            "recommend warm -> hot for prefixes read this often per day on 3+ days");
  AddNumber(app, "--advisor-min-bytes", c.advisor_min_bytes, 0, int64_t{1} << 60, "BYTES",
            "recommend no move for prefixes holding less than this");
  AddNumber(app, "--advisor-kv-idle-days", c.advisor_kv_idle_days, 1, 36500, "DAYS",
            "recommend expiring KV-cache namespaces not accessed for this many days");
  app.add_option_function<std::string>(
         "--kv-listen",
         [&c](const std::string& v) {
           c.kv_listen_explicit = true;
           c.kv_listen_port = -1;
           if (v != "off") SplitHostPort("--kv-listen", v, &c.kv_listen_host, &c.kv_listen_port);
         },
         "KV-cache listener address, or off (failing to listen on the default only logs)")
      ->type_name("HOST:PORT|off")
      ->default_str(c.kv_listen_host + ":" + std::to_string(c.kv_listen_port));
  app.add_option_function<std::string>(
         "--kmip-endpoint",
         [&c](const std::string& v) { SplitHostPort("--kmip-endpoint", v, &c.kmip_host, &c.kmip_port); },
         "external KMIP key server for SSE-KMS keys made with --external (needs --kmip-cert "
         "and --kmip-key)")
      ->type_name("HOST:PORT");
  app.add_option("--kmip-ca", c.kmip_ca, "CA certificates (PEM) the KMIP server's certificate "
                 "must chain to (default: the system's)")->type_name("FILE");
  app.add_option("--kmip-cert", c.kmip_cert, "strata's client certificate (PEM) for the KMIP server")
      ->type_name("FILE");
  app.add_option("--kmip-key", c.kmip_key, "the private key (PEM) of --kmip-cert")->type_name("FILE");
  app.add_flag("--sse-c-over-http", c.sse_c_over_http,
               "accept SSE-C (customer-provided) keys over plain HTTP; for tests only: AWS "
               "refuses them without TLS");
  app.add_flag("--kv-tls", c.kv_tls,
               "the KV-cache listener speaks TLS only (TLS 1.2+), with --tls-cert and --tls-key");
  AddNumber(app, "--kv-workers", c.kv_workers, 1, 4096, "N", "KV request worker threads");
  AddNumber(app, "--kv-max-connections", c.kv_max_connections, 1, 1'000'000, "N",
            "open KV connections");
  AddNumber(app, "--kv-max-connections-per-ip", c.kv_max_connections_per_ip, 1, 1'000'000, "N",
            "open KV connections from one address");
  AddNumber(app, "--kv-idle-timeout-s", c.kv_idle_timeout_s, 0, 7 * 24 * 3600, "S",
            "close authenticated KV connections idle for this long (0: never)");
  AddNumber(app, "--kv-eviction-summary-s", c.kv_eviction_summary_s, 1, 86400, "S",
            "how often the audit trail gets one KvEviction record per namespace that evicted "
            "blocks (default 60)");
  // Byte counts up to 10^18 - 1 (ParseWholeNumber's 18 digits).
  constexpr int64_t kMaxBytes = 999'999'999'999'999'999;
  app.add_option("--kv-default-quota", c.kv_default_quota_bytes,
                 "per-namespace quota when the client gives none (0: none)")
      ->type_name("BYTES")
      ->transform(WholeNumber(0, kMaxBytes))
      ->capture_default_str();
  app.add_option("--kv-max-bytes", c.kv_max_bytes,
                 "cap of the whole KV tier; PUTs over it are refused (0: none; default: half "
                 "the data store's capacity)")
      ->type_name("BYTES")
      ->transform(WholeNumber(0, kMaxBytes))
      ->each([&c](const std::string&) { c.kv_max_bytes_explicit = true; });
  app.footer(std::string("\n") + kCredentialsText);
}

// "http://HOST:PORT" or "HOST:PORT" (port 9000 when absent).
void ParseEndpoint(const std::string& url, AdminOptions* out) {
  std::string rest = url;
  if (rest.starts_with("http://")) {
    rest = rest.substr(7);
  } else if (rest.find("://") != std::string::npos) {
    Invalid("--endpoint", "only http:// endpoints are supported, got '" + url + "'");
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  size_t colon = rest.rfind(':');
  if (colon == std::string::npos || rest.back() == ']') rest += ":9000";
  std::string host;
  int port = 0;
  SplitHostPort("--endpoint", rest, &host, &port);
  if (host.empty() || port == 0) Invalid("--endpoint", "needs http://HOST:PORT, got '" + url + "'");
  out->host = host;
  out->port = static_cast<uint16_t>(port);
}

void AddAdminOptions(CLI::App& app, AdminOptions& a) {
  app.add_option_function<std::string>(
         "--endpoint", [&a](const std::string& v) { ParseEndpoint(v, &a); },
         "the running server (root credentials from STRATA_ROOT_USER/STRATA_ROOT_PASSWORD, "
         "else AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, else --data)")
      ->type_name("URL")
      ->default_str("http://" + a.host + ":" + std::to_string(a.port));
  app.add_option("--data", a.data_dir, "the server's data directory (for DIR/root-credentials)")
      ->type_name("DIR")
      ->capture_default_str();
}

// Options given twice: the last one counts (scripts append overrides).
void LastOneWins(CLI::App& app) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

}  // namespace

std::variant<Command, UsageError> ParseCommandLine(const std::vector<std::string>& args) {
  CLI::App app("strata: an S3-compatible object store with a KV-cache tier", "strata");
  app.require_subcommand(0, 1);

  ServerCommand server;
  CLI::App* server_cmd =
      app.add_subcommand("server", "run the S3 server and the KV-cache listener");
  LastOneWins(*server_cmd);
  AddServerOptions(*server_cmd, server.config);

  LoadCommand load;
  CLI::App* load_cmd = app.add_subcommand(
      "load", "load a safetensors checkpoint from S3 with strata.loader (strata load --help)");
  load_cmd->prefix_command();  // everything after `load` is the loader's
  load_cmd->set_help_flag();   // `strata load --help`: the loader's own help

  CLI::App* admin = app.add_subcommand(
      "admin", "operate a server: drives, heal, rebuild-index, users, keys, groups, policies, "
               "kms, tiers, audit, energy");
  admin->require_subcommand(0, 1);
  AdminDrivesCommand drives;
  CLI::App* drives_cmd = admin->add_subcommand("drives", "drive states of a running server");
  LastOneWins(*drives_cmd);
  AddAdminOptions(*drives_cmd, drives.admin);
  AdminHealCommand heal;
  std::string heal_target;
  CLI::App* heal_cmd = admin->add_subcommand(
      "heal", "verify and repair objects of a running server, with progress and a summary");
  LastOneWins(*heal_cmd);
  heal_cmd->add_option("target", heal_target, "what to heal (default: every bucket)")
      ->type_name("BUCKET[/PREFIX]");
  AddAdminOptions(*heal_cmd, heal.admin);
  // The identity commands: <noun> <verb> ARGS, each one admin API action.
  AdminIamCommand iam;
  struct IamVerb {
    CLI::App* app;
    std::string method, action;
    std::vector<std::string> arg_names;  // query parameters, in the order of the positionals
  };
  std::vector<IamVerb> verbs;
  std::vector<std::string> iam_args(3);
  std::string attach_user, attach_group;
  auto noun = [&](const char* name, const char* what) {
    CLI::App* n = admin->add_subcommand(name, what);
    n->require_subcommand(1);
    return n;
  };
  auto verb = [&](CLI::App* n, const char* name, const char* what, const char* method,
                  std::string action, std::vector<std::pair<std::string, std::string>> args) {
    CLI::App* v = n->add_subcommand(name, what);
    LastOneWins(*v);
    AddAdminOptions(*v, iam.admin);
    IamVerb entry{v, method, std::move(action), {}};
    for (size_t i = 0; i < args.size(); ++i) {
      v->add_option(args[i].first, iam_args[i], args[i].second)->required();
      entry.arg_names.push_back(args[i].first);
    }
    verbs.push_back(entry);
    return v;
  };
  CLI::App* user = noun("user", "users: create, list, show, delete, enable, disable");
  verb(user, "create", "create a user (no keys, no rights yet)", "POST", "user-create", {{"name", "user name"}});
  verb(user, "list", "every user with its access key ids", "GET", "users", {});
  verb(user, "show", "one user", "GET", "user", {{"name", "user name"}});
  verb(user, "delete", "delete a user and its keys", "POST", "user-delete", {{"name", "user name"}});
  verb(user, "enable", "let a disabled user sign requests again", "POST", "user-enable", {{"name", "user name"}});
  verb(user, "disable", "refuse every request signed by the user", "POST", "user-disable", {{"name", "user name"}});
  CLI::App* key = noun("key", "access keys: create (prints the secret once), enable, disable, delete");
  verb(key, "create", "a new access key for a user (at most two: rotate by creating the second)",
       "POST", "key-create", {{"user", "user name"}});
  verb(key, "enable", "re-enable an access key", "POST", "key-enable", {{"id", "access key id"}});
  verb(key, "disable", "refuse requests signed with an access key", "POST", "key-disable", {{"id", "access key id"}});
  verb(key, "delete", "delete an access key", "POST", "key-delete", {{"id", "access key id"}});
  CLI::App* group = noun("group", "groups: create, list, delete, add, remove");
  verb(group, "create", "create a group", "POST", "group-create", {{"name", "group name"}});
  verb(group, "list", "every group with its members and policies", "GET", "groups", {});
  verb(group, "delete", "delete a group (its members leave it)", "POST", "group-delete", {{"name", "group name"}});
  verb(group, "add", "add a user to a group", "POST", "group-add", {{"group", "group name"}, {"user", "user name"}});
  verb(group, "remove", "remove a user from a group", "POST", "group-remove", {{"group", "group name"}, {"user", "user name"}});
  CLI::App* policy = noun("policy", "identity policies: put, show, list, delete, attach, detach");
  CLI::App* put = verb(policy, "put", "create or replace a policy from an IAM policy document",
                       "PUT", "policy", {{"name", "policy name"}});
  put->add_option("file", iam.body_file, "the JSON document ('-': standard input)")->required();
  verb(policy, "show", "one policy with its document", "GET", "policy", {{"name", "policy name"}});
  verb(policy, "list", "every policy and where it is attached", "GET", "policies", {});
  verb(policy, "delete", "delete a policy (detach it first)", "POST", "policy-delete", {{"name", "policy name"}});
  for (auto [name, action] : {std::pair{"attach", "policy-attach"}, std::pair{"detach", "policy-detach"}}) {
    CLI::App* v = verb(policy, name, std::string(name) == "attach" ? "attach a policy to a user or group"
                                                                   : "detach a policy from a user or group",
                       "POST", action, {{"name", "policy name"}});
    v->add_option("--user", attach_user, "the user")->type_name("USER");
    v->add_option("--group", attach_group, "the group")->type_name("GROUP");
  }

  CLI::App* kms = noun("kms", "the key service of SSE-S3 / SSE-KMS: create-key, list, show, "
                             "rotate, disable, enable");
  std::string kms_alias, kms_description;
  bool kms_external = false;
  CLI::App* create_key = verb(kms, "create-key", "a new KMS key (prints its id and ARN)", "POST",
                              "kms-create-key", {});
  create_key->add_option("--alias", kms_alias, "alias/NAME to name it by")->type_name("ALIAS");
  create_key->add_option("--description", kms_description, "what it is for")->type_name("TEXT");
  create_key->add_flag("--external", kms_external,
                       "make it in the external KMIP key server (the server's --kmip-endpoint)");
  verb(kms, "list", "every key with its state and rotations", "GET", "kms-keys", {});
  verb(kms, "show", "one key", "GET", "kms-key", {{"key", "key id, ARN or alias/NAME"}});
  verb(kms, "rotate", "new key material; objects under the old stay readable", "POST",
       "kms-rotate", {{"key", "key id, ARN or alias/NAME"}});
  verb(kms, "disable", "refuse every use of the key: its objects become unreadable", "POST",
       "kms-disable", {{"key", "key id, ARN or alias/NAME"}});
  verb(kms, "enable", "allow a disabled key again", "POST", "kms-enable",
       {{"key", "key id, ARN or alias/NAME"}});

  // strata admin audit verify|checkpoint|query (docs/audit.md).
  CLI::App* audit = noun("audit", "the audit trail: verify, checkpoint, query");
  verb(audit, "verify", "walk the hash chain and its checkpoints; name the first damage", "GET",
       "audit-verify", {});
  verb(audit, "checkpoint", "seal and sign the trail's head now (keep the printed head off the box)",
       "POST", "audit-checkpoint", {});
  CLI::App* audit_query = verb(audit, "query", "records by time, identity, bucket, key prefix, "
                               "operation, result", "GET", "audit-query", {});
  std::vector<std::pair<std::string, std::string>> audit_filters = {
      {"from", "ISO 8601 time (2026-12-01T00:00:00Z) the records start at"},
      {"to", "ISO 8601 time they end at"},
      {"identity", "access key id ('' : anonymous; strata:lifecycle, strata:restore)"},
      {"bucket", "bucket"},
      {"prefix", "key prefix"},
      {"operation", "operation (PutObject, DeleteObject, ...)"},
      {"result", "OK, an S3 error code, or error (anything but OK)"},
      {"kind", "change, request, denied or system"},
      {"limit", "at most this many records (default 1000)"},
      {"after", "resume after this seq (the 'next' of a previous page)"}};
  std::vector<std::string> audit_values(audit_filters.size());
  std::vector<CLI::Option*> audit_options;
  for (size_t i = 0; i < audit_filters.size(); ++i) {
    audit_options.push_back(audit_query->add_option("--" + audit_filters[i].first,
                                                    audit_values[i], audit_filters[i].second));
  }
  audit_query->add_flag("--json", iam.json_lines, "one JSON object per line instead of a table");

  // strata admin energy: joules per node and workload (admin_cli.cc prints them).
  {
    CLI::App* v = admin->add_subcommand(
        "energy", "joules per node, bucket, identity and KV namespace, measured or modelled");
    LastOneWins(*v);
    AddAdminOptions(*v, iam.admin);
    verbs.push_back(IamVerb{v, "GET", "energy", {}});
  }
  // strata admin tiers: one admin API action, printed as a table (admin_cli.cc).
  {
    CLI::App* v = admin->add_subcommand("tiers", "pools, storage classes, capacity and objects per tier");
    LastOneWins(*v);
    AddAdminOptions(*v, iam.admin);
    verbs.push_back(IamVerb{v, "GET", "tiers", {}});
  }

  // strata admin advisor ... (docs/advisor.md; admin_cli.cc prints the replies).
  CLI::App* advisor = noun("advisor", "the tier advisor: list, show, approve, reject, policy, run, "
                                      "stop, resume, stats");
  std::string advisor_state, advisor_reason, advisor_policy_file;
  CLI::App* advisor_list = verb(advisor, "list", "the recommendations, newest first, with the "
                                "executor's state", "GET", "advisor-list", {});
  advisor_list->add_option("--state", advisor_state,
                           "only these: pending, approved, executing, waiting, done, rejected, "
                           "failed, expired")->type_name("STATE");
  advisor_list->add_flag("--json", iam.json_lines, "one JSON object per line instead of a table");
  verb(advisor, "show", "one recommendation: evidence, expected effect, action, progress", "GET",
       "advisor-show", {{"id", "recommendation id"}});
  verb(advisor, "approve", "carry a recommendation out (within the execution policy)", "POST",
       "advisor-approve", {{"id", "recommendation id"}});
  CLI::App* advisor_reject = verb(advisor, "reject", "decline a recommendation (it is not raised "
                                  "again)", "POST", "advisor-reject", {{"id", "recommendation id"}});
  advisor_reject->add_option("--reason", advisor_reason, "why (kept with it)")->type_name("TEXT");
  CLI::App* advisor_policy = verb(advisor, "policy", "show the execution policy, or replace it "
                                  "from a JSON file", "GET", "advisor-policy", {});
  advisor_policy->add_option("file", advisor_policy_file,
                             "the new policy (JSON; '-': standard input)")->type_name("FILE");
  verb(advisor, "run", "analyse now (inventory and statistics -> recommendations)", "POST",
       "advisor-run", {});
  verb(advisor, "stop", "stop carrying out moves (the policy's enabled: false)", "POST",
       "advisor-stop", {});
  verb(advisor, "resume", "carry out approved moves again", "POST", "advisor-resume", {});
  verb(advisor, "stats", "the most read prefixes (the advisor's access statistics)", "GET",
       "advisor-stats", {});

  RebuildIndexCommand rebuild;
  CLI::App* rebuild_cmd = admin->add_subcommand(
      "rebuild-index", "recreate lost metadata from the drives (server stopped, DIR/meta absent)");
  LastOneWins(*rebuild_cmd);
  AddStorageOptions(*rebuild_cmd, rebuild.config);

  // --config FILE of `strata server`: its settings first, the flags on top.
  if (!args.empty() && args[0] == "server") {
    for (size_t i = 1; i < args.size(); ++i) {
      std::string file;
      if (args[i] == "--config" && i + 1 < args.size()) file = args[i + 1];
      if (args[i].starts_with("--config=")) file = args[i].substr(9);
      if (file.empty()) continue;
      if (auto err = LoadConfigFile(file, &server.config)) {
        return cli::Usage("--config: " + *err, server_cmd->help("strata"));
      }
    }
  }
  if (auto e = cli::Parse(app, args)) return *e;
  if (server_cmd->parsed()) {
    const Config& c = server.config;
    if (auto err = CheckPools(c)) return cli::Usage(*err, server_cmd->help("strata"));
    if (!c.metrics_token_file.empty() && c.metrics_listen_port < 0) {
      return cli::Usage("--metrics-token-file needs --metrics-listen HOST:PORT",
                        server_cmd->help("strata"));
    }
    if (c.tls_listen_port >= 0 && (c.tls_cert.empty() || c.tls_key.empty())) {
      return cli::Usage("--listen-tls needs --tls-cert and --tls-key",
                        server_cmd->help("strata"));
    }
    if (c.kv_tls && (c.tls_cert.empty() || c.tls_key.empty())) {
      return cli::Usage("--kv-tls needs --tls-cert and --tls-key", server_cmd->help("strata"));
    }
    if (c.kmip_port >= 0 && (c.kmip_cert.empty() || c.kmip_key.empty())) {
      return cli::Usage("--kmip-endpoint needs --kmip-cert and --kmip-key (KMIP servers ask for a "
                        "client certificate)", server_cmd->help("strata"));
    }
    if (c.kmip_port < 0 && (!c.kmip_ca.empty() || !c.kmip_cert.empty() || !c.kmip_key.empty())) {
      return cli::Usage("--kmip-ca / --kmip-cert / --kmip-key need --kmip-endpoint HOST:PORT",
                        server_cmd->help("strata"));
    }
    if (c.kv_tls && c.kv_listen_port < 0) {
      return cli::Usage("--kv-tls needs the KV-cache listener (--kv-listen HOST:PORT, not off)",
                        server_cmd->help("strata"));
    }
    if (c.tls_listen_port < 0 && !c.kv_tls && (!c.tls_cert.empty() || !c.tls_key.empty())) {
      return cli::Usage("--tls-cert / --tls-key need --listen-tls HOST:PORT or --kv-tls",
                        server_cmd->help("strata"));
    }
    return Command(server);
  }
  if (drives_cmd->parsed()) return Command(drives);
  if (load_cmd->parsed()) {
    load.args = load_cmd->remaining();
    return Command(load);
  }
  if (heal_cmd->parsed()) {
    size_t slash = heal_target.find('/');
    heal.bucket = heal_target.substr(0, slash);
    if (slash != std::string::npos) heal.prefix = heal_target.substr(slash + 1);
    return Command(heal);
  }
  for (const IamVerb& v : verbs) {
    if (!v.app->parsed()) continue;
    iam.method = v.method;
    iam.action = v.action;
    for (size_t i = 0; i < v.arg_names.size(); ++i) iam.query.emplace_back(v.arg_names[i], iam_args[i]);
    if (v.action == "policy-attach" || v.action == "policy-detach") {
      if (attach_user.empty() == attach_group.empty()) {
        return cli::Usage(v.action.substr(7) + " needs exactly one of --user or --group",
                          v.app->help("strata admin policy"));
      }
      if (!attach_user.empty()) iam.query.emplace_back("user", attach_user);
      if (!attach_group.empty()) iam.query.emplace_back("group", attach_group);
    }
    if (v.action == "audit-query") {
      for (size_t i = 0; i < audit_filters.size(); ++i) {
        if (audit_options[i]->count() > 0) {
          iam.query.emplace_back(audit_filters[i].first, audit_values[i]);
        }
      }
    }
    if (v.action == "advisor-list" && !advisor_state.empty()) {
      iam.query.emplace_back("state", advisor_state);
    }
    if (v.action == "advisor-reject" && !advisor_reason.empty()) {
      iam.query.emplace_back("reason", advisor_reason);
    }
    if (v.action == "advisor-policy" && !advisor_policy_file.empty()) {
      iam.method = "PUT";
      iam.body_file = advisor_policy_file;
    }
    if (v.action == "kms-create-key") {
      if (!kms_alias.empty()) iam.query.emplace_back("alias", kms_alias);
      if (!kms_description.empty()) iam.query.emplace_back("description", kms_description);
      if (kms_external) iam.query.emplace_back("external", "true");
    }
    return Command(iam);
  }
  if (rebuild_cmd->parsed()) {
    if (rebuild.config.drives.empty()) {
      return cli::Usage(
          "rebuild-index needs --drives (a single directory keeps small objects "
          "only in the metadata)",
          rebuild_cmd->help("strata admin"));
    }
    return Command(rebuild);
  }
  if (admin->parsed())
    return cli::Usage("admin needs a command: drives, heal, rebuild-index, user, key, group, "
                      "policy, kms, tiers, audit or energy",
                      admin->help("strata"));
  return cli::Usage("missing command: server or admin", app.help());
}

bool ParseHostPort(const std::string& text, std::string* host, int* port) {
  size_t colon = text.rfind(':');
  std::optional<int64_t> p;
  if (colon != std::string::npos) p = cli::ParseWholeNumber(text.substr(colon + 1));
  if (!p || *p > 65535) return false;
  *host = text.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  *port = static_cast<int>(*p);
  return true;
}

bool ParseLayout(const std::string& text, int* k, int* m) {
  size_t plus = text.find('+');
  if (plus == std::string::npos) return false;
  std::optional<int64_t> kk = cli::ParseWholeNumber(text.substr(0, plus));
  std::optional<int64_t> mm = cli::ParseWholeNumber(text.substr(plus + 1));
  if (!kk || !mm || *kk < 1 || *kk > 255 || *mm > 255) return false;
  *k = static_cast<int>(*kk);
  *m = static_cast<int>(*mm);
  return true;
}

std::string PoolPath(const Config& c, const std::string& drive) {
  if (drive.starts_with("/")) return drive;
  return c.data_dir + "/" + drive;
}

std::optional<std::string> CheckPools(const Config& c) {
  if (c.pools.empty()) {
    if (!c.storage_classes.empty()) return "[storage_classes] needs [[pool]] declarations";
    return std::nullopt;
  }
  if (!c.drives.empty()) {
    return "--drives (or drives =) and [[pool]] are exclusive: a tiered layout declares its "
           "drives per pool";
  }
  // Normalized (no trailing slash, "." and ".." resolved lexically) with a slash appended, so
  // that nesting is a prefix test.
  auto normal = [&](const std::string& d) {
    std::vector<std::string> parts;
    std::string path = PoolPath(c, d), part;
    const bool absolute = path.starts_with("/");
    for (size_t i = 0; i <= path.size(); ++i) {
      if (i == path.size() || path[i] == '/') {
        if (part == "..") {
          if (!parts.empty()) parts.pop_back();
        } else if (!part.empty() && part != ".") {
          parts.push_back(part);
        }
        part.clear();
      } else {
        part.push_back(path[i]);
      }
    }
    std::string out = absolute ? "/" : "";
    for (const std::string& p : parts) out += p + "/";
    return out;
  };
  std::vector<std::pair<std::string, std::string>> seen;  // normalized drive, pool
  const std::string meta = normal("meta");
  for (size_t i = 0; i < c.pools.size(); ++i) {
    const PoolConfig& p = c.pools[i];
    if (p.name.empty()) return std::string("a pool needs a name");
    for (size_t j = 0; j < i; ++j) {
      if (c.pools[j].name == p.name) return "two pools are named '" + p.name + "'";
    }
    if (p.media != "gpu-direct" && p.media != "hot" && p.media != "warm" && p.media != "cold") {
      return "pool '" + p.name + "': media '" + p.media +
             "' is not one of gpu-direct, hot, warm, cold";
    }
    if (p.remote) {
      if (!p.drives.empty()) return "pool '" + p.name + "' has a remote bucket and drives";
      for (size_t j = 0; j < i; ++j) {
        const auto& o = c.pools[j].remote;
        if (o && o->endpoint == p.remote->endpoint && o->bucket == p.remote->bucket &&
            (o->prefix.starts_with(p.remote->prefix) || p.remote->prefix.starts_with(o->prefix))) {
          return "pool '" + p.name + "': its remote bucket and prefix overlap pool '" +
                 c.pools[j].name + "''s (each sweeps what is under its prefix)";
        }
      }
      continue;
    }
    if (p.drives.empty()) return "pool '" + p.name + "' has no path or drives";
    if (p.drives.size() == 1 && (p.ec_k > 1 || p.ec_m > 0)) {
      return "pool '" + p.name + "': one directory is a 1+0 layout; ec needs several drives";
    }
    if (p.drives.size() > 1 && p.ec_k > 0 &&
        static_cast<size_t>(p.ec_k + p.ec_m) > p.drives.size()) {
      return "pool '" + p.name + "': ec " + std::to_string(p.ec_k) + "+" + std::to_string(p.ec_m) +
             " needs at least " + std::to_string(p.ec_k + p.ec_m) + " drives";
    }
    for (const std::string& d : p.drives) {
      // A one-directory pool keeps its files in DIR/objects (the plain store),
      // so the data directory itself may be one: the pool of the objects
      // written before tiers ("path = \".\"").
      const std::string n = p.archive          ? normal(d + "/segments")
                            : p.drives.size() == 1 ? normal(d + "/objects")
                                                   : normal(d);
      if (n.starts_with(meta) || meta.starts_with(n)) {
        return "pool '" + p.name + "': drive " + d + " overlaps the metadata directory " +
               c.data_dir + "/meta";
      }
      for (const auto& [other, owner] : seen) {
        if (n.starts_with(other) || other.starts_with(n)) {
          return "pool '" + p.name + "': drive " + d + " overlaps a drive of pool '" + owner +
                 "' (every drive belongs to one pool)";
        }
      }
      seen.emplace_back(n, p.name);
    }
  }
  for (const auto& [cls, pool] : c.storage_classes) {
    bool known = false;
    for (const PoolConfig& p : c.pools) known = known || p.name == pool;
    if (!known) return "[storage_classes] " + cls + " = '" + pool + "': no pool of that name";
  }
  return std::nullopt;
}

std::variant<Config, UsageError> ParseServerArgs(const std::vector<std::string>& args) {
  std::vector<std::string> line = {"server"};
  line.insert(line.end(), args.begin(), args.end());
  auto parsed = ParseCommandLine(line);
  if (auto* e = std::get_if<UsageError>(&parsed)) return *e;
  return std::get<ServerCommand>(std::get<Command>(parsed)).config;
}

std::variant<RootCredentials, std::string> LoadRootCredentials(const std::string& data_dir) {
  const char* user = std::getenv("STRATA_ROOT_USER");
  const char* password = std::getenv("STRATA_ROOT_PASSWORD");
  if (user && password && *user && *password) {
    if (std::string_view(password).size() < kMinRootSecretChars) {
      return "STRATA_ROOT_PASSWORD must be at least " + std::to_string(kMinRootSecretChars) +
             " characters (it has " + std::to_string(std::string_view(password).size()) + ")";
    }
    return RootCredentials{user, password, false};
  }
  if ((user && *user) != (password && *password)) {
    return "set both STRATA_ROOT_USER and STRATA_ROOT_PASSWORD, or neither";
  }
  std::string path = data_dir + "/root-credentials";
  std::ifstream in(path);
  if (in) {
    RootCredentials c;
    std::getline(in, c.access_key);
    std::getline(in, c.secret_key);
    if (c.access_key.empty() || c.secret_key.empty()) return path + " is malformed";
    if (c.secret_key.size() < kMinRootSecretChars) {
      return path + ": the secret key must be at least " + std::to_string(kMinRootSecretChars) +
             " characters";
    }
    return c;
  }
  RootCredentials c;
  c.access_key = "STRATA" + HexEncode(RandomBytes(7));
  for (char& ch : c.access_key)
    ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  c.secret_key = Base64Encode(RandomBytes(30));
  c.generated = true;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot create " + path;
  std::string text = c.access_key + "\n" + c.secret_key + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return "cannot write " + path;
  return c;
}

namespace {

// A 32-byte key in a file of 64 hex digits: `key_file`, else DATA/`name`,
// made (random, mode 0600, synced with its directory) when absent.
std::variant<IamKey, std::string> LoadKeyFile(const std::string& data_dir,
                                              const std::string& key_file,
                                              const std::string& name, const std::string& what) {
  const std::string path = key_file.empty() ? data_dir + "/" + name : key_file;
  std::ifstream in(path);
  if (in) {
    std::string hex;
    std::getline(in, hex);
    auto bytes = HexDecode(hex);
    if (!bytes || bytes->size() != 32) return path + ": must hold 64 hex digits (a 32-byte key)";
    return IamKey{*bytes, false};
  }
  if (!key_file.empty()) return "cannot read the " + what + " file " + path;
  IamKey key{RandomBytes(32), true};
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot create " + path;
  std::string text = HexEncode(key.bytes) + "\n";
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  // The key must outlive a power loss with the secrets it sealed: sync its directory too.
  int dir = ::open(data_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ok = ::fsync(dir) == 0 && ok;
    ::close(dir);
  }
  if (!ok) return "cannot write " + path;
  return key;
}

}  // namespace

std::variant<IamKey, std::string> LoadIamKey(const std::string& data_dir,
                                             const std::string& key_file) {
  return LoadKeyFile(data_dir, key_file, "iam.key", "IAM key");
}

std::variant<IamKey, std::string> LoadKmsKey(const std::string& data_dir,
                                             const std::string& key_file) {
  return LoadKeyFile(data_dir, key_file, "kms.key", "key service's operator key");
}

std::variant<IamKey, std::string> LoadAuditKey(const std::string& data_dir,
                                               const std::string& key_file) {
  return LoadKeyFile(data_dir, key_file, "audit.key", "audit trail's checkpoint key");
}

}  // namespace strata::server

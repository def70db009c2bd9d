// The command line of `strata` (CLI11): `strata server` and its flags, the
// admin commands, and the typed result main() dispatches on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/cli.h"

namespace strata::server {

// [pool.remote]: a bucket of another S3 endpoint as a pool. At namespace
// scope, not nested in PoolConfig: clang rejects std::optional<Nested>::emplace()
// for a nested struct with default member initializers while the enclosing
// class is incomplete.
struct RemotePoolConfig {
  std::string endpoint;  // "http://HOST:PORT" or "https://HOST[:PORT]"
  std::string bucket;
  std::string prefix;    // this server's alone: its orphan sweep owns what is under it
  std::string region = "us-east-1";
  std::string access_key, secret_key;
  std::string ca_file;   // https: PEM trust anchors ("" = the system's)
  int timeout_s = 30;
  int part_size_mib = 8;
};

// [pool.archive]: with `path`, data packed into append-only segment files,
// zstd-compressed where it pays.
struct ArchivePoolConfig {
  int segment_size_mib = 256;
  int zstd_level = 3;
};

// One pool (tier) of a tiered layout ([[pool]] in the config file).
struct PoolConfig {
  std::string name;
  std::string media;  // gpu-direct, hot, warm, cold
  // One directory (`path`: a plain single-drive store) or several drives
  // (erasure-coded K+M). Relative paths are under the data directory.
  std::vector<std::string> drives;
  int ec_k = 0;   // 0: default for the drive count
  int ec_m = -1;  // -1: default
  // Or a bucket of another S3 endpoint ([pool.remote]; no path or drives).
  using Remote = RemotePoolConfig;
  std::optional<Remote> remote;
  // Or, with `path`, a local archive pool ([pool.archive]).
  using Archive = ArchivePoolConfig;
  std::optional<Archive> archive;
};

// [notify.webhook.ID]: a target of event notifications (docs/notifications.md).
struct WebhookConfig {
  std::string id;
  std::string endpoint;    // http[s]://HOST[:PORT][/PATH]
  std::string auth_token;  // sent as "Authorization: Bearer TOKEN" ("" : none)
  std::string ca_file;     // https: PEM trust anchors ("" = the system's)
  int queue_limit = 100000;  // events waiting; more are dropped (counted, audited)
  int timeout_seconds = 5;   // per wait of one delivery
};

struct Config {
  std::string listen_host = "127.0.0.1";
  int listen_port = 9000;
  // HTTPS beside HTTP (--listen-tls HOST:PORT; port -1: none), with the
  // certificate chain and key in PEM (re-read on SIGHUP).
  std::string tls_listen_host = "127.0.0.1";
  int tls_listen_port = -1;
  std::string tls_cert, tls_key;
  std::string data_dir = "./data";
  // --direct-writes on|off: an object's data past its first 8 MiB is written
  // with O_DIRECT, around the page cache (io/direct_writer.h). Off by
  // default: on the machine measured it cost single-stream PUT and a GET
  // right after a PUT more than the CPU it saved (docs/performance.md).
  bool direct_writes = false;
  std::string domain;  // virtual-host style base domain (optional)
  std::string region = "us-east-1";
  bool sigv2 = true;  // --sigv2 on|off: accept AWS Signature Version 2 requests
  int workers = 64;
  // Worker threads in all, counting those waiting on slow clients (http/server.h).
  int max_workers = 1024;
  // S3 event loops (http/server.h); 0: four per core, at most 64.
  int event_loops = 0;
  // Nice increment of bulk helper threads (a large GET's read-ahead, a large
  // PUT's MD5): small requests go first on busy cores. 0: no change.
  int bulk_nice = 10;
  // S3 listener limits (http::ServerOptions): open connections, idle keep-alive
  // time, whole-head deadline, minimum body rate after a 10 s grace (0: none).
  int max_connections = 8192;
  int idle_timeout_s = 60;
  int header_timeout_s = 20;
  int min_body_bytes_per_s = 4096;
  // Erasure-coded pool: data on these drives, metadata stays in data_dir.
  std::vector<std::string> drives;
  int ec_k = 0;   // 0: default for the drive count
  int ec_m = -1;  // -1: default
  int scrub_interval_s = 24 * 3600;
  int checkpoint_interval_s = 600;  // RocksDB checkpoint onto drives
  // KV-cache listener (--kv-listen HOST:PORT | off); port -1: off. Failing to
  // listen on the default address only logs; on an explicit one it is fatal.
  std::string kv_listen_host = "127.0.0.1";
  int kv_listen_port = 7450;
  bool kv_listen_explicit = false;
  // --kv-tls: the KV-cache listener speaks TLS only, with --tls-cert/--tls-key.
  bool kv_tls = false;
  int kv_workers = 32;
  int kv_max_connections = 4096;
  int kv_max_connections_per_ip = 512;
  int kv_idle_timeout_s = 300;  // 0: none
  int kv_eviction_summary_s = 60;  // how often KvEviction audit records summarise evictions
  // Per-namespace quota when a client gives none, and the cap of the whole
  // KV tier (default: half the capacity of the data store's file systems,
  // measured at start); 0: none. Over them PUTs evict (quota) or are refused.
  uint64_t kv_default_quota_bytes = 8ull << 30;
  uint64_t kv_max_bytes = 0;
  bool kv_max_bytes_explicit = false;
  // The key that seals the identity store's secret keys (64 hex digits in a
  // file); empty: DATA/iam.key, made on first start (mode 0600).
  std::string iam_key_file;
  // The operator key of the key service (SSE-S3, SSE-KMS): its master keys
  // are sealed under it; empty: DATA/kms.key, made on first start (0600).
  // Keep a copy off the box: without it encrypted objects cannot be read.
  std::string kms_key_file;
  // An external KMIP key server (docs/encryption.md): keys made with
  // `strata admin kms create-key --external` live there. Mutual TLS: the
  // server is checked against kmip_ca ("" = the system's trust store), and
  // strata presents kmip_cert / kmip_key. kmip_port < 0: none.
  std::string kmip_host;
  int kmip_port = -1;
  std::string kmip_ca, kmip_cert, kmip_key;
  // --sse-c-over-http: accept SSE-C keys on plain HTTP (tests; AWS refuses).
  bool sse_c_over_http = false;
  // --config FILE (TOML, server/config_file.h): read before the flags, which
  // override it.
  std::string config_file;
  // Tiers (docs/tiers.md): the pools of the config file (empty: the one pool
  // of --data or --drives) and storage class -> pool overrides.
  std::vector<PoolConfig> pools;
  std::vector<std::pair<std::string, std::string>> storage_classes;
  // The lifecycle scanner: the length of one lifecycle "day" (tests shorten
  // it), seconds between passes (0: a quarter day, at most an hour, at least
  // one second) and its action rate.
  int lifecycle_day_seconds = 86400;
  int lifecycle_interval_s = 0;
  int lifecycle_max_actions_per_s = 1000;
  // The tier advisor (docs/advisor.md): off, or on with one GET in
  // `advisor_sample` counted, prefixes `advisor_prefix_depth` deep, at most
  // `advisor_max_prefixes` of them, an analysis every `advisor_interval_s`
  // (0: a quarter lifecycle day, 1 min to 1 h); its "day" is the lifecycle day.
  bool advisor = true;
  // The web console at /_strata/console/ (docs/console.md).
  bool console = true;
  int advisor_sample = 1;
  int advisor_prefix_depth = 2;
  int advisor_max_prefixes = 10000;
  int advisor_interval_s = 0;
  int advisor_cold_days = 30;
  int advisor_hot_reads_per_day = 1000;
  int64_t advisor_min_bytes = 1 << 20;  // smaller prefixes are not worth a move
  int advisor_kv_idle_days = 7;  // KV namespaces idle this long: "kv->expire"
  // The advisor's power and cost model ([advisor_model] in the config file):
  // media name -> {watts per TiB, cost per TiB-month}; the media not named
  // keep the built-in figures (docs/advisor.md).
  std::string advisor_currency;  // "" = USD
  std::vector<std::pair<std::string, std::pair<double, double>>> advisor_media_costs;
  // Prometheus metrics on GET /metrics of their own listener (port -1: off),
  // with a bearer token read from a file (empty: no token asked).
  std::string metrics_listen_host = "127.0.0.1";
  int metrics_listen_port = -1;
  std::string metrics_token_file;
  // Energy (docs/energy.md): RAPL counters under this powercap tree when
  // readable (measured), else the model only.
  std::string powercap_root = "/sys/class/powercap";
  // Server access logs (PutBucketLogging) go out this often (best effort, as AWS).
  int access_log_delivery_seconds = 60;
  // Logs: JSON Lines (common/log.h) or text; one line per S3 request with
  // --access-log.
  bool json_logs = true;
  bool access_log = false;
  // The audit trail (docs/audit.md): on unless --audit off. Its checkpoints
  // are signed with the key in audit_key_file (64 hex digits; empty:
  // DATA/audit.key, made on first start: keep a copy off the box), every
  // audit_checkpoint_records records or audit_checkpoint_seconds.
  bool audit = true;
  std::string audit_key_file;
  int audit_checkpoint_records = 1000;
  int audit_checkpoint_seconds = 10;
  // Sealed segments exported as objects into audit_bucket ("" : none, the
  // default: COMPLIANCE retention cannot be undone, so the operator opts in),
  // made with Object Lock and COMPLIANCE retention of audit_retention_days,
  // after audit_export_records records or audit_export_seconds.
  std::string audit_bucket;
  int audit_retention_days = 365;
  int audit_export_records = 10000;
  int audit_export_seconds = 3600;
  // Event notification targets ([notify.webhook.ID] in the config file).
  std::vector<WebhookConfig> webhooks;
};

// Checks the pools of a tiered layout: names unique and non-empty, known
// media, one path or several drives each, no drive shared or nested between
// pools (nor with --drives, which a tiered layout replaces). The message
// names what is wrong; nullopt when fine (or no pools).
std::optional<std::string> CheckPools(const Config& c);
// "HOST:PORT" (HOST may be empty: every address; "[v6]" loses its brackets)
// and "K+M" (K 1-255, M 0-255), as the flags and the config file take them.
bool ParseHostPort(const std::string& text, std::string* host, int* port);
bool ParseLayout(const std::string& text, int* k, int* m);
// A pool directory as opened: absolute, or under the data directory.
std::string PoolPath(const Config& c, const std::string& drive);

// Root secrets set by the operator are at least this long (the KV AUTH and
// SigV4 both rest on them; a short one falls to guessing).
inline constexpr size_t kMinRootSecretChars = 16;

using cli::UsageError;

// Where `strata admin drives|heal` finds the server and its credentials.
struct AdminOptions {
  std::string host = "127.0.0.1";  // --endpoint http://HOST:PORT
  uint16_t port = 9000;
  std::string data_dir = "./data";  // --data: DIR/root-credentials when the environment has none
};

// The commands, each with what its flags say.
struct ServerCommand {  // strata server
  Config config;
};
struct RebuildIndexCommand {  // strata admin rebuild-index: drives, ec, data_dir
  Config config;
};
struct AdminDrivesCommand {  // strata admin drives
  AdminOptions admin;
};
struct AdminHealCommand {  // strata admin heal [BUCKET[/PREFIX]]
  AdminOptions admin;
  std::string bucket;  // empty: every bucket
  std::string prefix;  // empty: the whole bucket, its marker included
};
// strata admin user|key|group|policy ...: one identity action of the admin
// API (server/iam_admin.cc), e.g. `user create alice` -> POST user-create?name=alice.
struct AdminIamCommand {
  AdminOptions admin;
  std::string method;  // GET, POST, PUT
  std::string action;  // "user-create"
  std::vector<std::pair<std::string, std::string>> query;
  std::string body_file;  // policy put: the document ("-": stdin)
  bool json_lines = false;  // audit query --json
};
// strata load URI ...: every argument after `load`, for the Python loader
// (server/load_cli.h), which parses them itself.
struct LoadCommand {
  std::vector<std::string> args;
};
using Command = std::variant<ServerCommand, RebuildIndexCommand, AdminDrivesCommand,
                             AdminHealCommand, AdminIamCommand, LoadCommand>;

// Parses argv after the program name. --help anywhere gives kHelp with that
// command's help; a bad line gives kUsage naming the flag and what it needs.
std::variant<Command, UsageError> ParseCommandLine(const std::vector<std::string>& args);

// The flags of `strata server` alone (argv after the "server" word).
std::variant<Config, UsageError> ParseServerArgs(const std::vector<std::string>& args);

struct RootCredentials {
  std::string access_key;
  std::string secret_key;
  bool generated = false;
};

// From STRATA_ROOT_USER/STRATA_ROOT_PASSWORD, else from <data>/root-credentials,
// else freshly generated and stored there (mode 0600). Never a fixed default;
// a secret shorter than kMinRootSecretChars is an error.
std::variant<RootCredentials, std::string> LoadRootCredentials(const std::string& data_dir);

// The IAM master key (32 bytes): from `key_file` (64 hex digits) when given,
// else from DATA/iam.key, made (random, mode 0600, synced) when absent.
struct IamKey {
  std::string bytes;
  bool generated = false;
};
std::variant<IamKey, std::string> LoadIamKey(const std::string& data_dir,
                                             const std::string& key_file);
// The key service's operator key, the same way: `key_file` or DATA/kms.key.
std::variant<IamKey, std::string> LoadKmsKey(const std::string& data_dir,
                                             const std::string& key_file);
// The audit trail's checkpoint key, the same way: `key_file` or DATA/audit.key.
std::variant<IamKey, std::string> LoadAuditKey(const std::string& data_dir,
                                               const std::string& key_file);

}  // namespace strata::server

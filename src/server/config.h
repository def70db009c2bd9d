// Command-line configuration of `strata server`.
#pragma once

#include <string>
#include <variant>
#include <vector>

namespace strata::server {

struct Config {
  std::string listen_host = "127.0.0.1";
  int listen_port = 9000;
  std::string data_dir = "./data";
  std::string domain;  // virtual-host style base domain (optional)
  std::string region = "us-east-1";
  bool sigv2 = true;  // --sigv2 on|off: accept AWS Signature Version 2 requests
  int workers = 64;
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
  int kv_listen_port = 9100;
  bool kv_listen_explicit = false;
  int kv_workers = 32;
  int kv_max_connections = 4096;
  int kv_max_connections_per_ip = 512;
  int kv_idle_timeout_s = 300;  // 0: none
  // Per-namespace quota when a client gives none, and the cap of the whole
  // KV tier (default: half the capacity of the data store's file systems,
  // measured at start); 0: none. Over them PUTs evict (quota) or are refused.
  uint64_t kv_default_quota_bytes = 8ull << 30;
  uint64_t kv_max_bytes = 0;
  bool kv_max_bytes_explicit = false;
};

// Root secrets set by the operator are at least this long (the KV AUTH and
// SigV4 both rest on them; a short one falls to guessing).
inline constexpr size_t kMinRootSecretChars = 16;

// Parses argv after the "server" word; returns the config or an error text.
std::variant<Config, std::string> ParseServerArgs(const std::vector<std::string>& args);

struct RootCredentials {
  std::string access_key;
  std::string secret_key;
  bool generated = false;
};

// From STRATA_ROOT_USER/STRATA_ROOT_PASSWORD, else from <data>/root-credentials,
// else freshly generated and stored there (mode 0600). Never a fixed default;
// a secret shorter than kMinRootSecretChars is an error.
std::variant<RootCredentials, std::string> LoadRootCredentials(const std::string& data_dir);

}  // namespace strata::server

// `strata server --metrics-listen HOST:PORT`: the Prometheus endpoint. Its
// own HTTP listener (never the S3 port: scrapers need no S3 credentials and
// S3 clients never see it) answering GET /metrics with the registry's text;
// with --metrics-token-file, only to `Authorization: Bearer <token>`.
//
// Besides what the S3 front end counts as it serves (strata_s3_*), the
// collectors here read at scrape time: the process (process_*), every
// pool's file-system capacity, the drives' states, the lifecycle scanner's and the healers'
// totals, the KV-cache listener's connections. Names: docs/metrics.md.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "audit/log.h"
#include "common/metrics.h"
#include "common/status.h"
#include "http/server.h"
#include "kvcache/server.h"
#include "energy/meter.h"
#include "notify/notifier.h"
#include "object/usage.h"
#include "storage/erasure_store.h"
#include "storage/healer.h"
#include "tier/scanner.h"

namespace strata::server {

struct MetricsSources {
  std::vector<std::pair<std::string, std::string>> pool_dirs;  // pool name, a directory of it
  tier::Scanner* lifecycle = nullptr;
  std::vector<std::pair<std::string, storage::Healer*>> healers;  // pool name ("" = the drives)
  // The erasure-coded stores whose drives are reported (pool name as above).
  std::vector<std::pair<std::string, storage::ErasureDataStore*>> erasure;
  // The KV-cache listener, once started (null before and when off).
  std::function<const kvcache::Server*()> kv;
  audit::AuditLog* audit = nullptr;  // null: the trail is off
  notify::Notifier* notifier = nullptr;  // null: no webhook targets
  object::UsageCounter* usage = nullptr;  // per-bucket objects and bytes
  energy::Meter* energy = nullptr;        // joules per node and workload
};
void AddServerCollectors(metrics::Registry& registry, MetricsSources sources);

// Serves `registry` on host:port; `token` empty: no Authorization asked.
Result<std::unique_ptr<http::Server>> StartMetricsServer(const std::string& host, int port,
                                                         metrics::Registry* registry,
                                                         std::string token);
// The token in `path` (one line; surrounding blanks dropped); an error if
// the file cannot be read or holds no token.
Result<std::string> ReadMetricsToken(const std::string& path);

}  // namespace strata::server

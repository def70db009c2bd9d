// The admin API's "requests" action (docs/admin-api.md): what the console's
// overview charts are drawn from. S3 requests by operation with their
// latency histograms (from the metrics registry), and every KV-cache
// namespace's lookups, hits and misses. All are counts since start-up: a
// reader takes two documents and divides the differences by the time between
// them (`time_ns`) for rates, latency quantiles over its own interval and hit
// rates.
#include <nlohmann/json.hpp>

#include "common/metrics.h"
#include "common/time_util.h"
#include "kvcache/server.h"
#include "server/admin_api.h"

namespace strata::server {

namespace {

nlohmann::json S3Requests(const metrics::Registry& registry) {
  using nlohmann::json;
  // Requests and errors by operation (labels: operation, code).
  std::map<std::string, std::array<double, 3>> counts;  // all, 4xx, 5xx
  for (const metrics::SeriesSnapshot& s : registry.Snapshot("strata_s3_requests_total")) {
    if (s.labels.size() != 2) continue;
    auto& c = counts[s.labels[0]];
    c[0] += s.value;
    if (!s.labels[1].empty() && s.labels[1][0] == '4') c[1] += s.value;
    if (!s.labels[1].empty() && s.labels[1][0] == '5') c[2] += s.value;
  }
  json ops = json::array();
  json bounds = json::array();
  for (const metrics::SeriesSnapshot& s :
       registry.Snapshot("strata_s3_request_duration_seconds")) {
    if (s.labels.size() != 1) continue;
    if (bounds.empty()) bounds = s.bounds;
    const auto& c = counts[s.labels[0]];
    ops.push_back({{"operation", s.labels[0]},
                   {"requests", static_cast<uint64_t>(c[0])},
                   {"client_errors", static_cast<uint64_t>(c[1])},
                   {"server_errors", static_cast<uint64_t>(c[2])},
                   {"latency_counts", s.cumulative},
                   {"latency_sum_seconds", s.sum}});
  }
  if (bounds.empty()) bounds = metrics::LatencyBuckets();
  return {{"latency_bounds_seconds", std::move(bounds)}, {"operations", std::move(ops)}};
}

nlohmann::json KvRequests(const std::vector<kvcache::NamespaceStats>& stats) {
  using nlohmann::json;
  json namespaces = json::array();
  uint64_t lookups = 0, hits = 0, misses = 0, served = 0;
  for (const kvcache::NamespaceStats& n : stats) {
    lookups += n.lookups;
    hits += n.hits;
    misses += n.misses;
    served += n.bytes_served;
    namespaces.push_back(
        {{"bucket", n.bucket},
         {"lookups", n.lookups},
         {"hits", n.hits},
         {"misses", n.misses},
         {"bytes_served", n.bytes_served},
         {"evictions", n.evictions},
         {"blocks", n.blocks},
         {"bytes", n.bytes},
         {"last_access", n.last_access_ns ? FormatIso8601(static_cast<int64_t>(n.last_access_ns))
                                          : std::string()}});
  }
  return {{"lookups", lookups}, {"hits", hits},           {"misses", misses},
          {"bytes_served", served}, {"namespaces", std::move(namespaces)}};
}

}  // namespace

std::optional<std::pair<int, std::string>> HandleRequestsAction(
    const metrics::Registry* registry,
    const std::function<std::vector<kvcache::NamespaceStats>()>& kv, const std::string& method,
    const std::string& action) {
  if (action != "requests") return std::nullopt;
  if (method != "GET") return AdminError(405, "requests takes GET");
  const int64_t now = UnixNowNs();
  nlohmann::json doc = {{"time", FormatIso8601(now)}, {"time_ns", now}};
  doc["s3"] = registry ? S3Requests(*registry) : nlohmann::json(nullptr);
  doc["kv"] = KvRequests(kv ? kv() : std::vector<kvcache::NamespaceStats>{});
  return std::make_pair(
      200, doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace strata::server

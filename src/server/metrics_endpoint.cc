#include "server/metrics_endpoint.h"

#include <sys/statvfs.h>

#include <openssl/crypto.h>

#include <fstream>
#include <sstream>

#include "common/encoding.h"

namespace strata::server {

void AddServerCollectors(metrics::Registry& registry, MetricsSources sources) {
  registry.AddCollector([s = std::move(sources)](std::vector<metrics::Collected>& out) {
    metrics::Collected cap{"strata_pool_capacity_bytes",
                           "Size of the file system holding each pool (remote pools: none).",
                           "gauge", {}};
    metrics::Collected avail{"strata_pool_available_bytes",
                             "Bytes available to strata on the file system of each pool.", "gauge",
                             {}};
    for (const auto& [pool, dir] : s.pool_dirs) {
      struct statvfs v {};
      if (::statvfs(dir.c_str(), &v) != 0) continue;
      cap.samples.push_back({{{"pool", pool}}, static_cast<double>(v.f_blocks) * v.f_frsize});
      avail.samples.push_back({{{"pool", pool}}, static_cast<double>(v.f_bavail) * v.f_frsize});
    }
    out.push_back(std::move(cap));
    out.push_back(std::move(avail));
    if (s.lifecycle) {
      const tier::ScanStats t = s.lifecycle->totals();
      out.push_back({"strata_lifecycle_versions_scanned_total",
                     "Versions the lifecycle scanner has looked at.", "counter",
                     {{{}, static_cast<double>(t.versions)}}});
      out.push_back({"strata_lifecycle_actions_total",
                     "Lifecycle actions by kind (failed and raced ones are retried later).",
                     "counter",
                     {{{{"action", "expire"}}, static_cast<double>(t.deleted)},
                      {{{"action", "delete_marker"}}, static_cast<double>(t.markers)},
                      {{{"action", "transition"}}, static_cast<double>(t.transitioned)},
                      {{{"action", "abort_upload"}}, static_cast<double>(t.aborted_uploads)},
                      {{{"action", "locked"}}, static_cast<double>(t.locked)},
                      {{{"action", "raced"}}, static_cast<double>(t.raced)},
                      {{{"action", "failed"}}, static_cast<double>(t.failed)}}});
    }
    if (s.audit) {
      const audit::AuditLog::Stats a = s.audit->stats();
      out.push_back({"strata_audit_records_total",
                     "Audit records written since start (changes, requests, denials, system).",
                     "counter", {{{}, static_cast<double>(a.records)}}});
      out.push_back({"strata_audit_dropped_total",
                     "Request records dropped because the audit queue was full.", "counter",
                     {{{}, static_cast<double>(a.dropped)}}});
      out.push_back({"strata_audit_write_failures_total",
                     "Audit queue or sealer writes that failed.", "counter",
                     {{{}, static_cast<double>(a.failures)}}});
      out.push_back({"strata_audit_unsealed_records",
                     "Records (and seqs in flight) not yet in the hash chain.", "gauge",
                     {{{}, static_cast<double>(a.next_seq - 1 - a.sealed_seq)}}});
      out.push_back({"strata_audit_checkpoint_seq",
                     "The seq of the latest signed checkpoint.", "gauge",
                     {{{}, static_cast<double>(a.checkpoint_seq)}}});
    }
    if (s.energy) {
      const energy::EnergyReport r = s.energy->Snapshot();
      metrics::Collected node{"strata_energy_joules_total",
                              "Energy of the node since start: source=\"measured\" from the "
                              "RAPL package counters (every process on the package), "
                              "source=\"modelled\" from CPU-seconds and bytes (docs/energy.md).",
                              "counter", {}};
      node.samples.push_back({{{"source", "modelled"}}, r.node_modelled_joules});
      if (r.node_measured_joules) {
        node.samples.push_back({{{"source", "measured"}}, *r.node_measured_joules});
      }
      metrics::Collected work{"strata_energy_workload_joules_total",
                              "Modelled energy of each workload (bucket, identity, KV namespace) "
                              "since start: its CPU-seconds and bytes times the coefficients.",
                              "counter", {}};
      for (const energy::WorkloadFigure& w : r.workloads) {
        work.samples.push_back({{{"kind", std::string(energy::WorkloadKindName(w.kind))},
                                 {"workload", w.name},
                                 {"source", "modelled"}},
                                w.modelled_joules});
      }
      out.push_back(std::move(node));
      out.push_back(std::move(work));
    }
    if (s.usage) {
      metrics::Collected objects{"strata_bucket_objects",
                                 "Object versions each bucket holds (delete markers not counted).",
                                 "gauge", {}};
      metrics::Collected bytes{"strata_bucket_bytes",
                               "Bytes of the object versions each bucket holds.", "gauge", {}};
      for (const auto& [bucket, u] : s.usage->Snapshot()) {
        objects.samples.push_back({{{"bucket", bucket}}, static_cast<double>(u.objects)});
        bytes.samples.push_back({{{"bucket", bucket}}, static_cast<double>(u.bytes)});
      }
      out.push_back(std::move(objects));
      out.push_back(std::move(bytes));
    }
    if (s.notifier) {
      metrics::Collected queued{"strata_notify_queued_events",
                                "Events waiting in each webhook target's queue.", "gauge", {}};
      metrics::Collected delivered{"strata_notify_delivered_total",
                                   "Events delivered to each webhook target since start.",
                                   "counter", {}};
      metrics::Collected failures{"strata_notify_delivery_failures_total",
                                  "Delivery attempts that failed (retried with backoff).",
                                  "counter", {}};
      metrics::Collected dropped{"strata_notify_dropped_total",
                                 "Events dropped because the target's queue was full.", "counter",
                                 {}};
      for (const notify::Notifier::TargetStats& t : s.notifier->stats()) {
        queued.samples.push_back({{{"target", t.id}}, static_cast<double>(t.queued)});
        delivered.samples.push_back({{{"target", t.id}}, static_cast<double>(t.delivered)});
        failures.samples.push_back({{{"target", t.id}}, static_cast<double>(t.failures)});
        dropped.samples.push_back({{{"target", t.id}}, static_cast<double>(t.dropped)});
      }
      for (auto* c : {&queued, &delivered, &failures, &dropped}) out.push_back(std::move(*c));
    }
    if (!s.erasure.empty()) {
      // One series per drive and state, 1 for the state it is in (the
      // Prometheus way to expose an enum): alert on state!="online" == 1.
      metrics::Collected state{"strata_drive_state",
                               "1 for the state each drive of an erasure-coded pool is in, else 0.",
                               "gauge", {}};
      metrics::Collected online{"strata_drives_online",
                                "Drives of each erasure-coded pool that are online.", "gauge", {}};
      metrics::Collected total{"strata_drives", "Drives of each erasure-coded pool.", "gauge", {}};
      metrics::Collected errors{
          "strata_drive_errors_total",
          "Errors met on each drive since start: io (reads that failed), corrupt (blocks or "
          "shard headers that failed their checks), missing (shard files absent), write (shard "
          "writes that failed).",
          "counter", {}};
      constexpr storage::DriveState kStates[] = {
          storage::DriveState::kOnline, storage::DriveState::kMissing,
          storage::DriveState::kUnformatted, storage::DriveState::kFaulty};
      for (const auto& [pool, store] : s.erasure) {
        int up = 0;
        const std::vector<storage::DriveInfo> drives = store->DriveStates();
        for (const storage::DriveInfo& d : drives) {
          up += d.state == storage::DriveState::kOnline ? 1 : 0;
          for (storage::DriveState st : kStates) {
            state.samples.push_back({{{"pool", pool},
                                      {"drive", d.path},
                                      {"position", std::to_string(d.position)},
                                      {"state", storage::DriveStateName(st)}},
                                     d.state == st ? 1.0 : 0.0});
          }
        }
        online.samples.push_back({{{"pool", pool}}, static_cast<double>(up)});
        total.samples.push_back({{{"pool", pool}}, static_cast<double>(drives.size())});
        const std::vector<storage::DriveErrors> counts = store->DriveErrorCounts();
        for (size_t i = 0; i < drives.size() && i < counts.size(); ++i) {
          const storage::DriveErrors& e = counts[i];
          for (auto [kind, n] : {std::pair{"io", e.io}, std::pair{"corrupt", e.corrupt},
                                 std::pair{"missing", e.missing}, std::pair{"write", e.write}}) {
            errors.samples.push_back({{{"pool", pool},
                                       {"drive", drives[i].path},
                                       {"position", std::to_string(drives[i].position)},
                                       {"kind", kind}},
                                      static_cast<double>(n)});
          }
        }
      }
      for (auto* c : {&state, &online, &total, &errors}) out.push_back(std::move(*c));
    }
    if (!s.healers.empty()) {
      metrics::Collected queued{"strata_heal_queue_length",
                                "Data files waiting for the healer.", "gauge", {}};
      metrics::Collected rebuilt{"strata_heal_shards_rebuilt_total",
                                 "Shards the healer and scrubber rewrote.", "counter", {}};
      metrics::Collected lost{"strata_heal_unrecoverable_total",
                              "Data files found with too few shards to rebuild.", "counter", {}};
      metrics::Collected scrubbed{"strata_scrub_files_checked_total",
                                  "Data files the scrubber has verified.", "counter", {}};
      metrics::Collected passes{"strata_scrub_passes_total", "Completed scrub passes.", "counter",
                                {}};
      for (const auto& [pool, h] : s.healers) {
        const storage::HealerStats st = h->stats();
        const std::vector<std::pair<std::string, std::string>> l = {{"pool", pool}};
        queued.samples.push_back({l, static_cast<double>(st.queued)});
        rebuilt.samples.push_back({l, static_cast<double>(st.shards_rebuilt)});
        lost.samples.push_back({l, static_cast<double>(st.unrecoverable)});
        scrubbed.samples.push_back({l, static_cast<double>(st.scrubbed)});
        passes.samples.push_back({l, static_cast<double>(st.scrub_passes)});
      }
      for (auto* c : {&queued, &rebuilt, &lost, &scrubbed, &passes}) out.push_back(std::move(*c));
    }
    if (const kvcache::Server* kv = s.kv ? s.kv() : nullptr) {
      const kvcache::ServerStats st = kv->stats();
      out.push_back({"strata_kv_connections", "Open KV-cache protocol connections.", "gauge",
                     {{{}, static_cast<double>(st.connections)}}});
      out.push_back({"strata_kv_connections_refused_total",
                     "KV-cache connections refused over a connection cap.", "counter",
                     {{{}, static_cast<double>(st.refused)}}});
      out.push_back({"strata_kv_connection_timeouts_total",
                     "KV-cache connections closed by a deadline.", "counter",
                     {{{{"deadline", "auth"}}, static_cast<double>(st.auth_timeouts)},
                      {{{"deadline", "idle"}}, static_cast<double>(st.idle_timeouts)}}});
      struct Field {
        const char* name;
        const char* help;
        const char* type;
        uint64_t kvcache::NamespaceStats::*member;
      };
      static constexpr Field kFields[] = {
          {"strata_kv_lookups_total", "KV-cache block lookups, by namespace.", "counter",
           &kvcache::NamespaceStats::lookups},
          {"strata_kv_hits_total", "KV-cache blocks found, by namespace.", "counter",
           &kvcache::NamespaceStats::hits},
          {"strata_kv_misses_total", "KV-cache blocks not found, by namespace.", "counter",
           &kvcache::NamespaceStats::misses},
          {"strata_kv_served_bytes_total", "KV-cache block bytes served, by namespace.", "counter",
           &kvcache::NamespaceStats::bytes_served},
          {"strata_kv_requested_bytes_total",
           "KV-cache block bytes asked for (served or not), by namespace.", "counter",
           &kvcache::NamespaceStats::bytes_requested},
          {"strata_kv_evictions_total", "KV-cache blocks evicted (quota, TTL), by namespace.",
           "counter", &kvcache::NamespaceStats::evictions},
          {"strata_kv_blocks", "KV-cache blocks held, by namespace.", "gauge",
           &kvcache::NamespaceStats::blocks},
          {"strata_kv_stored_bytes", "KV-cache block bytes held, by namespace.", "gauge",
           &kvcache::NamespaceStats::bytes},
      };
      const std::vector<kvcache::NamespaceStats> spaces = kv->namespace_stats();
      for (const Field& f : kFields) {
        metrics::Collected c{f.name, f.help, f.type, {}};
        for (const kvcache::NamespaceStats& n : spaces) {
          c.samples.push_back({{{"namespace", n.bucket}}, static_cast<double>(n.*(f.member))});
        }
        out.push_back(std::move(c));
      }
    }
  });
}

namespace {

void Reply(http::ResponseWriter& out, int status, const std::string& body,
           http::Headers extra = {}) {
  http::Headers h = {{"Content-Type", "text/plain; charset=utf-8"}};
  h.insert(h.end(), extra.begin(), extra.end());
  if (out.Start(status, h, body.size()).ok()) out.Write(body).IgnoreError();
}

bool TokenMatches(const std::string* header, const std::string& token) {
  if (!header || !header->starts_with("Bearer ")) return false;
  std::string_view got = std::string_view(*header).substr(7);
  return got.size() == token.size() && CRYPTO_memcmp(got.data(), token.data(), token.size()) == 0;
}

}  // namespace

Result<std::unique_ptr<http::Server>> StartMetricsServer(const std::string& host, int port,
                                                         metrics::Registry* registry,
                                                         std::string token) {
  http::ServerOptions o;
  o.host = host;
  o.port = port;
  o.worker_threads = 2;
  o.max_connections = 64;
  auto handler = [registry, token = std::move(token)](const http::Request& req, ByteSource&,
                                                      http::ResponseWriter& out) {
    if (req.raw_path != "/metrics") return Reply(out, 404, "not found: try /metrics\n");
    if (req.method != "GET" && req.method != "HEAD") {
      return Reply(out, 405, "GET /metrics\n", {{"Allow", "GET, HEAD"}});
    }
    if (!token.empty() && !TokenMatches(req.Header("authorization"), token)) {
      return Reply(out, 401, "a bearer token is required\n",
                   {{"WWW-Authenticate", "Bearer realm=\"strata metrics\""}});
    }
    const std::string text = registry->Render();
    http::Headers h = {{"Content-Type", std::string(metrics::kContentType)}};
    if (req.method == "HEAD") {
      out.Start(200, h, text.size(), /*send_body=*/false).IgnoreError();
      return;
    }
    if (out.Start(200, h, text.size()).ok()) out.Write(text).IgnoreError();
  };
  auto on_error = [](http::ProtocolError, http::ResponseWriter& out) {
    Reply(out, 400, "bad request\n");
  };
  return http::Server::Start(o, handler, on_error);
}

Result<std::string> ReadMetricsToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("cannot read the metrics token file " + path);
  std::string line;
  std::getline(in, line);
  std::string token(TrimBlanks(line));
  if (token.empty()) return InvalidArgument("the metrics token file " + path + " holds no token");
  return token;
}

}  // namespace strata::server

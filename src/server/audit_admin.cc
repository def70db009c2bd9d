// The audit trail in the server: opening it over the metadata store, and
// the admin actions (docs/admin-api.md):
//   GET  audit-verify       walk the chain and checkpoints, name the first damage
//   POST audit-checkpoint   seal and sign the head now
//   GET  audit-query?from=&to=&identity=&bucket=&prefix=&operation=&result=&kind=&limit=&after=
#include <nlohmann/json.hpp>

#include "audit/query.h"
#include "common/encoding.h"
#include "common/time_util.h"
#include "server/admin_api.h"

namespace strata::server {

namespace {

nlohmann::json CheckpointJson(const audit::Checkpoint& c) {
  return {{"seq", c.seq},
          {"time", c.seq ? FormatIso8601(c.time_ns) : ""},
          {"hash", HexEncode(c.hash)},
          {"mac", HexEncode(c.mac)}};
}

std::pair<int, std::string> Verify(audit::AuditLog& log) {
  if (Status s = log.Flush(); !s.ok()) return AdminErrorFrom(s);
  audit::VerifyReport rep = log.Verify();
  nlohmann::json j = {{"ok", rep.ok()},
                      {"problem", std::string(audit::ProblemName(rep.problem))},
                      {"problem_seq", rep.problem_seq},
                      {"detail", rep.detail},
                      {"records", rep.records},
                      {"gaps", rep.gaps},
                      {"checkpoints", rep.checkpoints},
                      {"unsealed", rep.unsealed},
                      {"head_seq", rep.head_seq},
                      {"head_hash", rep.head_hash},
                      {"latest_checkpoint", CheckpointJson(rep.latest)}};
  return {200, j.dump()};
}

std::pair<int, std::string> Checkpoint(audit::AuditLog& log) {
  if (Status s = log.Flush(/*checkpoint=*/true); !s.ok()) return AdminErrorFrom(s);
  audit::VerifyReport rep = log.Verify();
  nlohmann::json j = {{"ok", rep.ok()},
                      {"detail", rep.detail},
                      {"latest_checkpoint", CheckpointJson(rep.latest)}};
  return {200, j.dump()};
}

std::pair<int, std::string> Query(audit::AuditLog& log,
                                  const std::vector<std::pair<std::string, std::string>>& query) {
  audit::QueryFilter f;
  for (const auto& [k, v] : query) {
    if (k == "from" || k == "to") {
      auto t = ParseIso8601Ms(v);
      if (!t) return AdminError(400, k + ": not an ISO 8601 time (2026-12-01T10:00:00Z): " + v);
      // Milliseconds, as the records show them; `to` takes in its whole millisecond.
      if (k == "from") {
        f.from_ns = *t * 1'000'000;
      } else {
        f.to_ns = *t * 1'000'000 + 999'999;
      }
    } else if (k == "identity") {
      f.identity = v;
    } else if (k == "bucket") {
      f.bucket = v;
    } else if (k == "prefix") {
      f.key_prefix = v;
    } else if (k == "operation") {
      f.operation = v;
    } else if (k == "result") {
      f.result = v;
    } else if (k == "kind") {
      f.kind = v;
    } else if (k == "limit" || k == "after") {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || (k == "limit" && (n < 1 || n > 100000))) {
        return AdminError(400, k + ": not a number in range: " + v);
      }
      if (k == "limit") {
        f.limit = n;
      } else {
        f.after_seq = n;
      }
    } else {
      return AdminError(400, "audit-query: unknown parameter " + k);
    }
  }
  if (Status s = log.Flush(); !s.ok()) return AdminErrorFrom(s);  // queued records too
  auto page = audit::Query(log.inner(), f);
  if (!page.ok()) return AdminErrorFrom(page.status());
  std::string out = "{\"records\":[";
  for (size_t i = 0; i < page->records.size(); ++i) {
    if (i) out += ",";
    out += audit::RecordJson(page->records[i]);
  }
  out += "],\"next_after\":" + std::to_string(page->next_after) + "}";
  return {200, out};
}

}  // namespace

std::variant<std::unique_ptr<audit::AuditLog>, std::string> OpenAuditLog(
    meta::KvStore* kv, const std::string& key, int checkpoint_records, int checkpoint_seconds) {
  audit::LogOptions o;
  o.key = key;
  o.checkpoint_every = static_cast<uint64_t>(checkpoint_records);
  o.checkpoint_interval_ns = static_cast<int64_t>(checkpoint_seconds) * 1'000'000'000;
  auto log = audit::AuditLog::Open(kv, std::move(o));
  if (!log.ok()) return "cannot open the audit trail: " + log.status().ToString();
  return std::move(log).value();
}

std::optional<std::pair<int, std::string>> HandleAuditAction(
    audit::AuditLog& log, const std::string& method, const std::string& action,
    const std::vector<std::pair<std::string, std::string>>& query) {
  if (action == "audit-verify" && method == "GET") return Verify(log);
  if (action == "audit-checkpoint" && method == "POST") return Checkpoint(log);
  if (action == "audit-query" && method == "GET") return Query(log, query);
  return std::nullopt;
}

}  // namespace strata::server

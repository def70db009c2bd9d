// The audit trail in the server: opening it over the metadata store, and
// the admin actions (docs/admin-api.md):
//   GET  audit-verify       walk the chain and checkpoints, name the first damage
//   POST audit-checkpoint   seal and sign the head now
//   GET  audit-query?from=&to=&identity=&bucket=&prefix=&operation=&result=&kind=&limit=&after=
#include <nlohmann/json.hpp>

#include "audit/export.h"
#include "audit/query.h"
#include "common/log.h"
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

// The exported segments, in order: each sound, agreeing with the store, and
// together covering 1..exported without holes. "" when fine.
std::string CheckExports(audit::AuditLog& log, object::ObjectEngine& engine,
                         const std::string& bucket, uint64_t* segments) {
  const uint64_t exported = log.exported_seq();
  uint64_t next = 1;
  object::ListParams params;
  params.prefix = "segments/";
  for (;;) {
    auto page = engine.ListObjects(bucket, params);
    if (!page.ok()) return "cannot list the audit bucket " + bucket + ": " + page.status().message();
    for (const object::ListEntry& e : page->objects) {
      auto reader = engine.OpenObject(bucket, e.key);
      if (!reader.ok()) return "segment " + e.key + ": " + reader.status().message();
      std::string doc(e.record.size_bytes, '\0');
      size_t got = 0;
      while (got < doc.size()) {
        auto n = (*reader)->ReadAt(got, doc.data() + got, doc.size() - got);
        if (!n.ok()) return "segment " + e.key + ": " + n.status().message();
        if (*n == 0) break;
        got += *n;
      }
      doc.resize(got);
      audit::SegmentCheck c = audit::CheckSegment(log.inner(), log.key(), doc);
      if (!c.ok()) return "segment " + e.key + ": " + c.problem;
      if (e.key != audit::SegmentObjectName(c.first, c.last)) {
        return "segment " + e.key + " holds records " + std::to_string(c.first) + ".." +
               std::to_string(c.last);
      }
      if (c.first != next) {
        return "the exported segments skip records " + std::to_string(next) + ".." +
               std::to_string(c.first - 1);
      }
      next = c.last + 1;
      ++*segments;
    }
    if (!page->is_truncated) break;
    params.start_after = page->last_emitted;
  }
  if (next != exported + 1) {
    return "records " + std::to_string(next) + ".." + std::to_string(exported) +
           " were exported but no segment holds them";
  }
  return "";
}

std::pair<int, std::string> Verify(audit::AuditLog& log, const AuditExport* exports) {
  if (Status s = log.Flush(); !s.ok()) return AdminErrorFrom(s);
  audit::VerifyReport rep = log.Verify();
  uint64_t segments = 0;
  std::string export_problem;
  if (exports) export_problem = CheckExports(log, *exports->engine, exports->bucket, &segments);
  if (rep.ok() && !export_problem.empty()) {
    rep.problem = audit::Problem::kAltered;
    rep.detail = export_problem;
  }
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
                      {"latest_checkpoint", CheckpointJson(rep.latest)},
                      {"exported_seq", log.exported_seq()},
                      {"segments", segments},
                      {"export_bucket", exports ? exports->bucket : ""}};
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

Status StartAuditExport(audit::AuditLog& log, const AuditExport& exports,
                        const std::string& owner, uint32_t retention_days,
                        uint64_t min_records, int64_t interval_ns) {
  object::ObjectEngine& engine = *exports.engine;
  auto existing = engine.GetBucket(exports.bucket);
  if (existing.ok()) {
    if (!existing->object_lock) {
      return PreconditionFailed("the audit bucket " + exports.bucket +
                                " exists without Object Lock; name another (audit_bucket)");
    }
  } else if (existing.status().code() == Code::kNotFound) {
    object::BucketRecord rec;
    rec.created_ns = UnixNowNs();
    rec.owner = owner;
    rec.versioning = object::Versioning::kEnabled;
    rec.object_lock = true;
    rec.default_retention = {object::LockMode::kCompliance, retention_days, 0};
    RETURN_IF_ERROR(engine.CreateBucket(exports.bucket, rec));
    STRATA_LOG("audit: made the audit bucket %s (Object Lock, COMPLIANCE %u days)",
               exports.bucket.c_str(), retention_days);
  } else {
    return existing.status();
  }
  const std::string bucket = exports.bucket;
  object::ObjectEngine* e = exports.engine;
  log.SetExporter(
      [e, bucket](uint64_t first, uint64_t last, const std::string& doc) -> Status {
        object::ObjectHeaders headers;
        headers.content_type = "application/x-ndjson";
        ASSIGN_OR_RETURN(auto w, e->NewWriter(bucket, audit::SegmentObjectName(first, last),
                                              headers));
        RETURN_IF_ERROR(w->Append(doc));
        return w->Commit().status();
      },
      min_records, interval_ns);
  return Status::OK();
}

std::optional<std::pair<int, std::string>> HandleAuditAction(
    audit::AuditLog& log, const AuditExport* exports, const std::string& method,
    const std::string& action, const std::vector<std::pair<std::string, std::string>>& query) {
  if (action == "audit-verify" && method == "GET") return Verify(log, exports);
  if (action == "audit-checkpoint" && method == "POST") return Checkpoint(log);
  if (action == "audit-query" && method == "GET") return Query(log, query);
  return std::nullopt;
}

}  // namespace strata::server

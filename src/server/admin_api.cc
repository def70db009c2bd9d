#include "server/admin_api.h"

#include <sys/statvfs.h>

#include <nlohmann/json.hpp>

#include "server/admin_wire.h"
#include "tier/scanner.h"

namespace strata::server {

std::pair<int, std::string> AdminError(int status, std::string_view message) {
  return {status, admin::Encode(admin::ErrorReply{std::string(message)})};
}

std::pair<int, std::string> AdminErrorFrom(const Status& s) {
  int status = 500;
  switch (s.code()) {
    case Code::kInvalidArgument: status = 400; break;
    case Code::kNotFound: status = 404; break;
    case Code::kAlreadyExists:
    case Code::kPreconditionFailed: status = 409; break;
    case Code::kUnavailable: status = 503; break;
    default: break;
  }
  return AdminError(status, s.message());
}


std::pair<int, std::string> ServerAdminApi::HandleAs(
    const std::string& caller, const std::string& method, const std::string& action,
    const std::vector<std::pair<std::string, std::string>>& query, const std::string& body) {
  if (auto r = HandleAdvisorAction(advisor_, caller, method, action, query, body)) return *r;
  if (identities_) {
    if (auto r = HandleBucketAction(engine_, identities_, usage_, region_, caller, method, action,
                                    query, body)) {
      return *r;
    }
  }
  return Handle(method, action, query, body);
}

std::pair<int, std::string> ServerAdminApi::Handle(
    const std::string& method, const std::string& action,
    const std::vector<std::pair<std::string, std::string>>& query, const std::string& body) {
  if (identities_) {
    if (auto r = HandleIamAction(*identities_, method, action, query, body)) return *r;
  }
  if (kms_) {
    if (auto r = HandleKmsAction(*kms_, method, action, query)) return *r;
  }
  if (audit_) {
    if (auto r = HandleAuditAction(*audit_, audit_export_ ? &*audit_export_ : nullptr, method,
                                   action, query)) {
      return *r;
    }
  } else if (action.starts_with("audit-")) {
    return AdminError(409, "the audit trail is off (--audit off)");
  }
  if (auto r = HandleEnergyAction(energy_, method, action)) return *r;
  if (auto r = HandleRequestsAction(metrics_, kv_stats_, method, action)) return *r;
  auto q = [&](std::string_view name) -> const std::string* {
    for (const auto& [k, v] : query) {
      if (k == name) return &v;
    }
    return nullptr;
  };
  if (action == "drives" && method == "GET") return Drives();
  if (action == "heal-status" && method == "GET") return HealStatus();
  if (action == "tiers" && method == "GET") return Tiers();
  if (action == "heal-object" && method == "POST") {
    const std::string* bucket = q("bucket");
    const std::string* key = q("key");
    if (!bucket || !key) return AdminError(400, "heal-object needs bucket and key");
    object::Version version;
    if (const std::string* v = q("versionId")) {
      version = object::ParseVersionId(*v);
      if (!version) return AdminError(400, "heal-object: invalid versionId " + *v);
    }
    return HealObject(*bucket, *key, version);
  }
  if (action == "heal-bucket" && method == "POST") {
    const std::string* bucket = q("bucket");
    if (!bucket) return AdminError(400, "heal-bucket needs bucket");
    return HealBucket(*bucket);
  }
  return AdminError(404, "unknown admin action " + method + " " + action);
}

std::pair<int, std::string> ServerAdminApi::Drives() {
  admin::DrivesReply reply;
  if (!store_) {
    reply.layout = "single directory (no erasure coding)";
    return {200, admin::Encode(reply)};
  }
  reply.erasure_coded = true;
  reply.k = store_->k();
  reply.m = store_->m();
  for (const storage::DriveInfo& d : store_->Drives()) {
    reply.drives.push_back({d.position, d.path, storage::DriveStateName(d.state), d.detail, d.shard_files});
  }
  return {200, admin::Encode(reply)};
}

std::pair<int, std::string> ServerAdminApi::HealObject(const std::string& bucket,
                                                       const std::string& key,
                                                       const object::Version& version) {
  // Any version, delete markers included (a marker is a piece on the drives too).
  auto rec = engine_->HeadVersion(bucket, key, version);
  if (!rec.ok()) {
    return AdminError(rec.status().code() == Code::kNotFound ? 404 : 500, rec.status().ToString());
  }
  admin::HealReply reply;
  if (store_) {
    for (const std::string& id : rec->DataFiles()) {
      auto r = store_->Heal(id);
      if (!r.ok()) {
        reply.errors += (reply.errors.empty() ? "" : "; ") + id + ": " + r.status().ToString();
        continue;
      }
      reply.shards_rebuilt += static_cast<uint64_t>(r->shards_rebuilt);
      reply.unrecoverable |= r->unrecoverable;
    }
  }
  return {200, admin::Encode(reply)};
}

// The bucket's marker (what rebuild-index restores empty buckets from).
std::pair<int, std::string> ServerAdminApi::HealBucket(const std::string& bucket) {
  auto rec = engine_->GetBucket(bucket);
  if (!rec.ok()) {
    return AdminError(rec.status().code() == Code::kNotFound ? 404 : 500, rec.status().ToString());
  }
  admin::HealReply reply;
  if (store_) {
    auto r = store_->Heal(object::ObjectEngine::BucketMarkerId(bucket));
    if (!r.ok()) {
      reply.errors = r.status().ToString();
    } else {
      reply.shards_rebuilt = static_cast<uint64_t>(r->shards_rebuilt);
      reply.unrecoverable = r->unrecoverable;
    }
  }
  return {200, admin::Encode(reply)};
}

std::pair<int, std::string> ServerAdminApi::HealStatus() {
  admin::HealStatusReply reply;
  if (!healer_) {
    reply.healer = "none (single directory)";
    return {200, admin::Encode(reply)};
  }
  storage::HealerStats s = healer_->stats();
  reply.has_healer = true;
  reply.queued = s.queued;
  reply.healed_from_queue = s.healed_from_queue;
  reply.scrubbed = s.scrubbed;
  reply.shards_rebuilt = s.shards_rebuilt;
  reply.unrecoverable = s.unrecoverable;
  reply.scrub_passes = s.scrub_passes;
  return {200, admin::Encode(reply)};
}

std::pair<int, std::string> ServerAdminApi::Tiers() {
  auto usage = engine_->Usage();
  if (!usage.ok()) return AdminErrorFrom(usage.status());
  nlohmann::json pools = nlohmann::json::array();
  for (size_t i = 0; i < usage->pools.size(); ++i) {
    const object::PoolUsage& u = usage->pools[i];
    const TierDescription* d = nullptr;
    for (const TierDescription& t : tiers_) {
      if (t.name == u.pool) d = &t;
    }
    uint64_t capacity = 0, free = 0;
    std::vector<std::string> drives = d ? d->drives : std::vector<std::string>{};
    for (const std::string& dir : drives) {
      struct statvfs sv {};
      if (::statvfs(dir.c_str(), &sv) == 0) {
        capacity += static_cast<uint64_t>(sv.f_blocks) * sv.f_frsize;
        free += static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize;
      }
    }
    nlohmann::json by_class = nlohmann::json::object();
    uint64_t objects = 0, bytes = 0;
    for (const auto& [cls, n] : u.by_class) {
      by_class[cls.empty() ? "STANDARD" : cls] = {{"objects", n.first}, {"bytes", n.second}};
      objects += n.first;
      bytes += n.second;
    }
    pools.push_back({{"name", u.pool.empty() ? "default" : u.pool},
                     {"primary", i == 0},
                     {"media", d ? d->media : "hot"},
                     {"layout", d ? d->layout : ""},
                     {"drives", drives},
                     {"capacity_bytes", capacity},
                     {"free_bytes", free},
                     {"objects", objects},
                     {"bytes", bytes},
                     {"by_class", by_class},
                     {"restored_copies", u.restored_copies},
                     {"restored_bytes", u.restored_bytes}});
  }
  nlohmann::json classes = nlohmann::json::object();
  for (const auto& [cls, pool] : classes_) classes[cls] = pool.empty() ? "default" : pool;
  nlohmann::json doc = {{"pools", pools},
                        {"storage_classes", classes},
                        {"in_flight",
                         {{"restores", usage->restores_ongoing},
                          {"uncommitted_writes", usage->writes_in_flight}}}};
  if (lifecycle_) {
    const tier::ScanStats t = lifecycle_->totals();
    doc["lifecycle"] = {{"passes", lifecycle_->passes()},      {"versions_scanned", t.versions},
                        {"expired", t.deleted},                {"delete_markers", t.markers},
                        {"transitioned", t.transitioned},      {"aborted_uploads", t.aborted_uploads},
                        {"locked", t.locked},                  {"raced", t.raced},
                        {"failed", t.failed}};
  }
  return {200, doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

}  // namespace strata::server

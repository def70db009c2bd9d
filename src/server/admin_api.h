// The server's implementation of s3::AdminApi (/_strata/admin/<action>; the
// documents: admin_wire.h, docs/admin-api.md):
//   GET  drives                      drive states of the pool (JSON)
//   POST heal-object?bucket=&key=[&versionId=]
//                                    verify every shard of one version (default:
//                                    the latest, a delete marker too), rebuild what is bad
//   POST heal-bucket?bucket=         the same for the bucket's marker
//   GET  heal-status                 the background healer's counters
//   GET  tiers                       every pool: media, layout, drives, capacity,
//                                    objects and bytes per storage class, restores,
//                                    the lifecycle scanner's progress
//   GET  requests                    S3 requests and latency histograms by operation,
//                                    KV-cache lookups / hits / misses per namespace
// the identity actions (iam_admin.cc): user-*, key-*, group-*, policy-*,
// the key service's (kms_admin.cc): kms-*, the audit trail's
// (audit_admin.cc): audit-verify, audit-checkpoint, audit-query, and the
// tier advisor's (advisor_admin.cc): advisor-*.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <variant>

#include "audit/log.h"
#include "auth/identities.h"
#include "kms/key_service.h"
#include "object/engine.h"
#include "object/usage.h"
#include "s3/admin_api.h"
#include "storage/erasure_store.h"
#include "storage/healer.h"

namespace strata::energy {
class Meter;
}
namespace strata::advisor {
class Advisor;
}
namespace strata::metrics {
class Registry;
}
namespace strata::tier {
class Scanner;
}
namespace strata::kvcache {
struct NamespaceStats;
}

namespace strata::server {

// One pool as `GET tiers` describes it (what the engine does not know).
struct TierDescription {
  std::string name;    // the engine's pool name ("" for the one default pool)
  std::string media;   // gpu-direct, hot, warm, cold
  std::string layout;  // "1+0 (one directory)", "4+2 over 6 drives"
  std::vector<std::string> drives;
};

// Where the audit trail's sealed segments go (docs/audit.md).
struct AuditExport {
  object::ObjectEngine* engine = nullptr;
  std::string bucket;
};

class ServerAdminApi : public s3::AdminApi {
 public:
  // store/healer are null for a single-directory (plain) data store.
  ServerAdminApi(object::ObjectEngine* engine, storage::ErasureDataStore* store,
                 storage::Healer* healer, auth::IdentityStore* identities,
                 kms::KeyService* kms = nullptr)
      : engine_(engine), store_(store), healer_(healer), identities_(identities), kms_(kms) {}

  // The pools (in the engine's order) and storage class -> pool mapping.
  void SetTiers(std::vector<TierDescription> tiers,
                std::vector<std::pair<std::string, std::string>> classes) {
    tiers_ = std::move(tiers);
    classes_ = std::move(classes);
  }

  void SetAudit(audit::AuditLog* audit, std::optional<AuditExport> exports) {
    audit_ = audit;
    audit_export_ = std::move(exports);
  }
  void SetEnergy(energy::Meter* meter) { energy_ = meter; }
  void SetAdvisor(advisor::Advisor* a) { advisor_ = a; }
  void SetUsage(object::UsageCounter* usage) { usage_ = usage; }
  void SetRegion(std::string region) { region_ = std::move(region); }
  // The lifecycle scanner, whose progress `GET tiers` reports.
  void SetLifecycle(const tier::Scanner* scanner) { lifecycle_ = scanner; }
  // The `requests` document's sources: the metrics registry (S3 requests
  // and latencies; null: none kept) and the KV-cache tier's namespaces.
  void SetRequestSources(const metrics::Registry* registry,
                         std::function<std::vector<kvcache::NamespaceStats>()> kv) {
    metrics_ = registry;
    kv_stats_ = std::move(kv);
  }

  std::pair<int, std::string> Handle(
      const std::string& method, const std::string& action,
      const std::vector<std::pair<std::string, std::string>>& query,
      const std::string& body) override;
  std::pair<int, std::string> HandleAs(
      const std::string& caller, const std::string& method, const std::string& action,
      const std::vector<std::pair<std::string, std::string>>& query,
      const std::string& body) override;

 private:
  std::pair<int, std::string> Drives();
  std::pair<int, std::string> HealObject(const std::string& bucket, const std::string& key,
                                         const object::Version& version);
  std::pair<int, std::string> HealBucket(const std::string& bucket);
  std::pair<int, std::string> HealStatus();
  std::pair<int, std::string> Tiers();

  object::ObjectEngine* engine_;
  storage::ErasureDataStore* store_;
  storage::Healer* healer_;
  auth::IdentityStore* identities_;
  kms::KeyService* kms_;
  audit::AuditLog* audit_ = nullptr;
  std::optional<AuditExport> audit_export_;
  energy::Meter* energy_ = nullptr;
  advisor::Advisor* advisor_ = nullptr;
  object::UsageCounter* usage_ = nullptr;
  std::string region_ = "us-east-1";
  const metrics::Registry* metrics_ = nullptr;
  const tier::Scanner* lifecycle_ = nullptr;
  std::function<std::vector<kvcache::NamespaceStats>()> kv_stats_;
  std::vector<TierDescription> tiers_;
  std::vector<std::pair<std::string, std::string>> classes_;
};

// The admin API's error document {"error": message} with `status`, and the
// one for a Status of the identity or key service (400 InvalidArgument, 404
// NotFound, 409 AlreadyExists / PreconditionFailed, else 500).
std::pair<int, std::string> AdminError(int status, std::string_view message);
std::pair<int, std::string> AdminErrorFrom(const Status& s);

// The "energy" action (server/energy_admin.cc, docs/energy.md); nullopt for
// other actions.
std::optional<std::pair<int, std::string>> HandleEnergyAction(energy::Meter* meter,
                                                              const std::string& method,
                                                              const std::string& action);

// The "requests" action (server/requests_admin.cc): S3 requests and
// latencies by operation, KV-cache lookups and hits; nullopt for other actions.
std::optional<std::pair<int, std::string>> HandleRequestsAction(
    const metrics::Registry* registry,
    const std::function<std::vector<kvcache::NamespaceStats>()>& kv, const std::string& method,
    const std::string& action);

// The tier advisor's actions (server/advisor_admin.cc, docs/advisor.md);
// `caller` (the signing access key) is who approves or rejects. A null
// advisor answers 409; nullopt for other actions.
std::optional<std::pair<int, std::string>> HandleAdvisorAction(
    advisor::Advisor* advisor, const std::string& caller, const std::string& method,
    const std::string& action, const std::vector<std::pair<std::string, std::string>>& query,
    const std::string& body);

// buckets and presign (server/bucket_admin.cc): what the console's bucket
// pages use. nullopt for other actions.
std::optional<std::pair<int, std::string>> HandleBucketAction(
    object::ObjectEngine* engine, auth::IdentityStore* identities, object::UsageCounter* usage,
    const std::string& region, const std::string& caller, const std::string& method,
    const std::string& action, const std::vector<std::pair<std::string, std::string>>& query,
    const std::string& body);

// The identity actions (server/iam_admin.cc, docs/admin-api.md): users, keys,
// groups, policies. nullopt when `action` is not one of them.
std::optional<std::pair<int, std::string>> HandleIamAction(
    auth::IdentityStore& identities, const std::string& method, const std::string& action,
    const std::vector<std::pair<std::string, std::string>>& query, const std::string& body);

// The key service's actions (server/kms_admin.cc, docs/admin-api.md).
std::optional<std::pair<int, std::string>> HandleKmsAction(
    kms::KeyService& kms, const std::string& method, const std::string& action,
    const std::vector<std::pair<std::string, std::string>>& query);

// The audit trail over `kv` (audit_admin.cc): the log, or the message.
std::variant<std::unique_ptr<audit::AuditLog>, std::string> OpenAuditLog(
    meta::KvStore* kv, const std::string& key, int checkpoint_records, int checkpoint_seconds);

// Makes the audit bucket if needed (Object Lock, versioning, COMPLIANCE
// default retention of `retention_days`, owned by `owner`) and hands the log
// its exporter. PreconditionFailed if the bucket exists without Object Lock.
Status StartAuditExport(audit::AuditLog& log, const AuditExport& exports,
                        const std::string& owner, uint32_t retention_days,
                        uint64_t min_records, int64_t interval_ns);

// The audit trail's actions (exports: null when there are none); nullopt
// when `action` is not one of them.
std::optional<std::pair<int, std::string>> HandleAuditAction(
    audit::AuditLog& log, const AuditExport* exports, const std::string& method,
    const std::string& action, const std::vector<std::pair<std::string, std::string>>& query);

}  // namespace strata::server

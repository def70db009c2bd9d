#include "object/lock.h"

namespace strata::object {

namespace {
constexpr int64_t kDayNs = 86400LL * 1000000000LL;

Status Locked(std::string_view message) { return PermissionDenied(Detail::kLocked, message); }
}  // namespace

bool RetentionActive(const ObjectLock& lock, int64_t now_ns) {
  return lock.mode != LockMode::kNone && lock.retain_until_ns > now_ns;
}

Status CheckRemovable(const ObjectRecord& rec, int64_t now_ns, bool bypass_governance) {
  if (rec.delete_marker) return Status::OK();
  const ObjectLock& lock = rec.lock;
  if (lock.legal_hold == LegalHold::kOn) return Locked("the version is under a legal hold");
  if (!RetentionActive(lock, now_ns)) return Status::OK();
  if (lock.mode == LockMode::kCompliance) {
    return Locked("the version is under COMPLIANCE retention");
  }
  if (!bypass_governance) return Locked("the version is under GOVERNANCE retention");
  return Status::OK();
}

Status CheckRetentionChange(const ObjectLock& current, LockMode mode, int64_t until_ns,
                            int64_t now_ns, bool bypass_governance) {
  if (!RetentionActive(current, now_ns)) return Status::OK();
  const bool keeps_or_extends = mode != LockMode::kNone && until_ns >= current.retain_until_ns;
  if (current.mode == LockMode::kCompliance) {
    if (keeps_or_extends && mode == LockMode::kCompliance) return Status::OK();
    return Locked("a COMPLIANCE retention can only be extended");
  }
  // GOVERNANCE.
  if (keeps_or_extends) return Status::OK();  // the same or later date, either mode
  if (bypass_governance) return Status::OK();
  return Locked("shortening or removing a GOVERNANCE retention needs "
                "x-amz-bypass-governance-retention");
}

int64_t DefaultRetainUntil(const DefaultRetention& d, int64_t now_ns) {
  const int64_t days = d.days != 0 ? int64_t{d.days} : int64_t{d.years} * 365;
  return now_ns + days * kDayNs;
}

ObjectLock InitialLock(const BucketRecord& bucket, const std::optional<ObjectLock>& requested,
                       int64_t now_ns) {
  ObjectLock lock;
  if (requested) lock = *requested;
  if (lock.mode == LockMode::kNone && bucket.object_lock &&
      bucket.default_retention.mode != LockMode::kNone) {
    lock.mode = bucket.default_retention.mode;
    lock.retain_until_ns = DefaultRetainUntil(bucket.default_retention, now_ns);
  }
  return lock;
}

std::string_view LockModeName(LockMode mode) {
  switch (mode) {
    case LockMode::kGovernance: return "GOVERNANCE";
    case LockMode::kCompliance: return "COMPLIANCE";
    case LockMode::kNone: break;
  }
  return "";
}

}  // namespace strata::object

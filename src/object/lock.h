// Object Lock's rules, in one place: every path that removes, replaces or
// relocks an object version (DELETE by version id, a PUT replacing the null
// version, PutObjectRetention, the admin API, lifecycle and tiering later)
// asks here, so none of them can bypass a retention or a legal hold.
// Retention is judged by the server's clock (the caller passes NowNs()).
#pragma once

#include <cstdint>
#include <optional>

#include "common/status.h"
#include "object/record.h"

namespace strata::object {

// A retention whose date has not passed.
bool RetentionActive(const ObjectLock& lock, int64_t now_ns);

// OK if `rec` may be removed (or replaced in place). PermissionDenied with
// Detail::kLocked if a legal hold is on, a COMPLIANCE retention is active, or
// a GOVERNANCE retention is active and `bypass_governance` is false (the
// caller grants it only to an identity allowed s3:BypassGovernanceRetention
// that sent x-amz-bypass-governance-retention: true). Delete markers carry no
// lock.
Status CheckRemovable(const ObjectRecord& rec, int64_t now_ns, bool bypass_governance);

// OK if a version's retention may change from `current` to (`mode`,
// `until_ns`) (mode kNone: remove it). Extending, or GOVERNANCE -> COMPLIANCE,
// is always allowed; an active COMPLIANCE retention can never be shortened,
// removed or turned into GOVERNANCE; an active GOVERNANCE one only with
// `bypass_governance`. An expired retention may be replaced freely.
Status CheckRetentionChange(const ObjectLock& current, LockMode mode, int64_t until_ns,
                            int64_t now_ns, bool bypass_governance);

// The lock of a new version in `bucket`: what the request asked for
// (`requested`: mode/date and/or legal hold), with the bucket's default
// retention when the request named no mode. Callers have validated that the
// bucket has Object Lock when the request names any setting.
ObjectLock InitialLock(const BucketRecord& bucket, const std::optional<ObjectLock>& requested,
                       int64_t now_ns);

// Where the bucket default's period ends for a version written at `now_ns`
// (days of 86400 s; a year is 365 days).
int64_t DefaultRetainUntil(const DefaultRetention& d, int64_t now_ns);

std::string_view LockModeName(LockMode mode);  // "GOVERNANCE", "COMPLIANCE", ""

}  // namespace strata::object

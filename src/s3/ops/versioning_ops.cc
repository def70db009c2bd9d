// Versioning and Object Lock operations: Get/PutBucketVersioning,
// Get/PutObjectLockConfiguration, Get/PutObjectRetention,
// Get/PutObjectLegalHold. Every change of a lock setting is logged with the
// identity that made it (the audit trail of a later issue takes these over).
#include <cerrno>
#include <cstdlib>

#include "common/encoding.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/time_util.h"
#include "object/lock.h"
#include "s3/access.h"
#include "s3/ops/object_write.h"
#include "s3/ops/versioning.h"
#include "s3/router.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

constexpr size_t kMaxConfigBody = 64 * 1024;

std::variant<std::string, Error> ReadConfigBody(OpContext& ctx) {
  auto body = ReadSmallBody(ctx, kMaxConfigBody);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  if (auto e = CheckBodyIntegrity(ctx, std::get<std::string>(body), /*required=*/true)) return *e;
  return body;
}

std::optional<object::LockMode> ParseMode(std::string_view s) {
  if (s == "GOVERNANCE") return object::LockMode::kGovernance;
  if (s == "COMPLIANCE") return object::LockMode::kCompliance;
  return std::nullopt;
}

// A positive decimal integer that fits 32 bits; nullopt otherwise.
std::optional<uint32_t> PositiveInt(const std::string& s) {
  if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
  if (v == 0 || v > 0xFFFFFFFFull) return std::nullopt;
  return static_cast<uint32_t>(v);
}

// KV-cache buckets (kv-*) stay unversioned and unlocked: their blocks are a
// cache the tier evicts at will.
bool IsKvBucket(const std::string& bucket) { return IsReservedBucketName(bucket); }

}  // namespace

// ---- bucket versioning ------------------------------------------------------------

OpResult GetBucketVersioning(OpContext& ctx) {
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);
  XmlWriter w;
  w.Open("VersioningConfiguration");
  if (bucket->versioning == object::Versioning::kEnabled) w.Element("Status", "Enabled");
  if (bucket->versioning == object::Versioning::kSuspended) w.Element("Status", "Suspended");
  w.Close("VersioningConfiguration");
  return SendXml(ctx, w.Finish());
}

OpResult PutBucketVersioning(OpContext& ctx) {
  auto body = ReadConfigBody(ctx);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  auto conf = ParseVersioningConfiguration(std::get<std::string>(body));
  if (!conf) return MakeError(ErrorCode::kMalformedXML);
  object::Versioning state;
  if (conf->status == "Enabled") {
    state = object::Versioning::kEnabled;
  } else if (conf->status == "Suspended") {
    state = object::Versioning::kSuspended;
  } else {
    return MakeError(ErrorCode::kMalformedXML);
  }
  if (!conf->mfa_delete.empty() && conf->mfa_delete != "Disabled") {
    if (conf->mfa_delete != "Enabled") return MakeError(ErrorCode::kMalformedXML);
    return MakeError(ErrorCode::kInvalidRequest, "MFA Delete is not supported by this server");
  }
  if (IsKvBucket(ctx.route.bucket)) {
    return MakeError(ErrorCode::kInvalidBucketState, "KV-cache buckets cannot be versioned");
  }
  Status st = ctx.engine.SetBucketVersioning(ctx.route.bucket, state);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  STRATA_LOG("versioning: %s set %s on bucket %s", ctx.access_key.c_str(),
             conf->status.c_str(), ctx.route.bucket.c_str());
  return SendEmpty(ctx, 200);
}

// ---- Object Lock configuration ------------------------------------------------------

OpResult GetObjectLockConfiguration(OpContext& ctx) {
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);
  if (!bucket->object_lock) return MakeError(ErrorCode::kObjectLockConfigurationNotFoundError);
  XmlWriter w;
  w.Open("ObjectLockConfiguration");
  w.Element("ObjectLockEnabled", "Enabled");
  const object::DefaultRetention& d = bucket->default_retention;
  if (d.mode != object::LockMode::kNone) {
    w.Open("Rule");
    w.Open("DefaultRetention");
    w.Element("Mode", object::LockModeName(d.mode));
    if (d.days != 0) w.Element("Days", std::to_string(d.days));
    if (d.years != 0) w.Element("Years", std::to_string(d.years));
    w.Close("DefaultRetention");
    w.Close("Rule");
  }
  w.Close("ObjectLockConfiguration");
  return SendXml(ctx, w.Finish());
}

OpResult PutObjectLockConfiguration(OpContext& ctx) {
  auto body = ReadConfigBody(ctx);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  auto conf = ParseObjectLockConfiguration(std::get<std::string>(body));
  if (!conf || conf->enabled != "Enabled") return MakeError(ErrorCode::kMalformedXML);
  object::DefaultRetention rule;
  if (conf->has_rule) {
    if (!conf->has_default_retention || !conf->mode) return MakeError(ErrorCode::kMalformedXML);
    auto mode = ParseMode(*conf->mode);
    if (!mode) return MakeError(ErrorCode::kMalformedXML);
    if (conf->days.has_value() == conf->years.has_value()) {
      return MakeError(ErrorCode::kMalformedXML);  // exactly one of Days and Years
    }
    const std::string& n = conf->days ? *conf->days : *conf->years;
    auto value = PositiveInt(n);
    if (!value) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "Default retention period must be a positive integer value.");
    }
    // AWS's limits: 100 years (36500 days).
    if ((conf->days && *value > 36500) || (conf->years && *value > 100)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "Default retention period is too large.");
    }
    rule.mode = *mode;
    (conf->days ? rule.days : rule.years) = *value;
  }
  if (IsKvBucket(ctx.route.bucket)) {
    return MakeError(ErrorCode::kInvalidBucketState, "KV-cache buckets cannot use Object Lock");
  }
  Status st = ctx.engine.SetObjectLockConfiguration(ctx.route.bucket, rule);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  STRATA_LOG("object lock: %s configured bucket %s (default %s %u days %u years)",
             ctx.access_key.c_str(), ctx.route.bucket.c_str(),
             rule.mode == object::LockMode::kNone ? "none"
                                                  : std::string(object::LockModeName(rule.mode)).c_str(),
             rule.days, rule.years);
  return SendEmpty(ctx, 200);
}

// ---- retention and legal hold --------------------------------------------------------

namespace {

// The version named (or the latest) of a bucket with Object Lock.
std::variant<object::ObjectRecord, Error> LockTarget(OpContext& ctx, object::Version* version) {
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);
  if (!bucket->object_lock) {
    return MakeError(ErrorCode::kInvalidRequest, "Bucket is missing Object Lock Configuration");
  }
  return RequestedVersion(ctx, version);
}

http::Headers VersionIdHeader(const object::ObjectRecord& rec) {
  return {{"x-amz-version-id", rec.VersionId()}};
}

}  // namespace

OpResult GetObjectRetention(OpContext& ctx) {
  object::Version version;
  auto target = LockTarget(ctx, &version);
  if (auto* e = std::get_if<Error>(&target)) return *e;
  const object::ObjectRecord& rec = std::get<object::ObjectRecord>(target);
  if (rec.lock.mode == object::LockMode::kNone) {
    return MakeError(ErrorCode::kNoSuchObjectLockConfiguration);
  }
  XmlWriter w;
  w.Open("Retention");
  w.Element("Mode", object::LockModeName(rec.lock.mode));
  w.Element("RetainUntilDate", FormatRetainUntil(rec.lock.retain_until_ns));
  w.Close("Retention");
  return SendXml(ctx, w.Finish(), 200, VersionIdHeader(rec));
}

OpResult PutObjectRetention(OpContext& ctx) {
  auto body = ReadConfigBody(ctx);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  auto conf = ParseRetention(std::get<std::string>(body));
  if (!conf) return MakeError(ErrorCode::kMalformedXML);
  object::LockMode mode = object::LockMode::kNone;
  int64_t until = 0;
  const int64_t now = ctx.engine.NowNs();
  const bool has_mode = conf->mode && !conf->mode->empty();
  const bool has_date = conf->retain_until && !conf->retain_until->empty();
  if (has_mode != has_date) return MakeError(ErrorCode::kMalformedXML);
  if (has_mode) {
    auto m = ParseMode(*conf->mode);
    if (!m) return MakeError(ErrorCode::kMalformedXML);
    auto t = ParseRetainUntil(*conf->retain_until);
    if (!t) return MakeError(ErrorCode::kMalformedXML);
    if (*t <= now) {
      return MakeError(ErrorCode::kInvalidArgument, "The retain until date must be in the future!");
    }
    mode = *m;
    until = *t;
  }
  // The retention asked for is what the s3:object-lock-* keys test.
  auth::MapConditionContext extra;
  if (has_mode) {
    extra.Set("s3:object-lock-mode", *conf->mode);
    extra.Set("s3:object-lock-retain-until-date", *conf->retain_until);
    extra.Set("s3:object-lock-remaining-retention-days",
              std::to_string((until - now) / (86400LL * 1000000000LL)));
  }
  if (!Allows(ctx, RouteAction(ctx), ctx.route.key, &extra)) return AccessDeniedError();
  object::Version version;
  auto target = LockTarget(ctx, &version);
  if (auto* e = std::get_if<Error>(&target)) return *e;
  const object::ObjectRecord& rec = std::get<object::ObjectRecord>(target);
  const bool bypass = BypassGovernance(ctx, ctx.route.key);
  Status st = ctx.engine.SetRetention(ctx.route.bucket, ctx.route.key, version, mode, until, bypass);
  STRATA_LOG("object lock: %s %s retention of %s/%s version %s to %s %s%s",
             ctx.access_key.c_str(), st.ok() ? "set" : "was refused setting",
             ctx.route.bucket.c_str(), ctx.route.key.c_str(), rec.VersionId().c_str(),
             mode == object::LockMode::kNone ? "none" : std::string(object::LockModeName(mode)).c_str(),
             mode == object::LockMode::kNone ? "" : FormatRetainUntil(until).c_str(),
             bypass ? " (bypass governance)" : "");
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchKey);
  return SendEmpty(ctx, 200, VersionIdHeader(rec));
}

OpResult GetObjectLegalHold(OpContext& ctx) {
  object::Version version;
  auto target = LockTarget(ctx, &version);
  if (auto* e = std::get_if<Error>(&target)) return *e;
  const object::ObjectRecord& rec = std::get<object::ObjectRecord>(target);
  if (rec.lock.legal_hold == object::LegalHold::kUnset) {
    return MakeError(ErrorCode::kNoSuchObjectLockConfiguration);
  }
  XmlWriter w;
  w.Open("LegalHold");
  w.Element("Status", rec.lock.legal_hold == object::LegalHold::kOn ? "ON" : "OFF");
  w.Close("LegalHold");
  return SendXml(ctx, w.Finish(), 200, VersionIdHeader(rec));
}

OpResult PutObjectLegalHold(OpContext& ctx) {
  auto body = ReadConfigBody(ctx);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  auto status = ParseLegalHold(std::get<std::string>(body));
  if (!status || (*status != "ON" && *status != "OFF")) return MakeError(ErrorCode::kMalformedXML);
  object::Version version;
  auto target = LockTarget(ctx, &version);
  if (auto* e = std::get_if<Error>(&target)) return *e;
  const object::ObjectRecord& rec = std::get<object::ObjectRecord>(target);
  Status st = ctx.engine.SetLegalHold(ctx.route.bucket, ctx.route.key, version, *status == "ON");
  STRATA_LOG("object lock: %s %s legal hold %s on %s/%s version %s", ctx.access_key.c_str(),
             st.ok() ? "set" : "failed to set", status->c_str(), ctx.route.bucket.c_str(),
             ctx.route.key.c_str(), rec.VersionId().c_str());
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchKey);
  return SendEmpty(ctx, 200, VersionIdHeader(rec));
}

}  // namespace strata::s3

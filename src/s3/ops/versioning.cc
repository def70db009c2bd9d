#include "s3/ops/versioning.h"

#include "common/encoding.h"
#include "common/log.h"
#include "common/time_util.h"
#include "object/lock.h"
#include "s3/access.h"

namespace strata::s3 {

namespace {
Error BadVersion() { return MakeError(ErrorCode::kInvalidArgument, "Invalid version id specified"); }

}  // namespace

std::variant<object::VersionSelector, Error> ParseRequestVersionId(std::string_view id) {
  if (id.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "Version id cannot be the empty string");
  }
  auto v = object::ParseVersionId(id);
  if (!v) return BadVersion();
  return *v;
}

std::variant<object::Version, Error> RequestVersion(const Route& route) {
  const std::string* v = route.Query("versionId");
  if (!v) return object::Version();
  auto parsed = ParseRequestVersionId(*v);
  if (auto* e = std::get_if<Error>(&parsed)) return *e;
  return object::Version(std::get<object::VersionSelector>(parsed));
}

std::optional<int64_t> ParseRetainUntil(std::string_view s) {
  std::string t(s);
  if (t.ends_with("+00:00")) t = t.substr(0, t.size() - 6) + "Z";
  auto ms = ParseIso8601Ms(t);
  if (!ms) return std::nullopt;
  return *ms * 1000000;
}

std::string FormatRetainUntil(int64_t ns) { return FormatIso8601(ns); }

void AddVersionHeaders(const object::BucketRecord& bucket, const object::ObjectRecord& rec,
                       http::Headers* h) {
  if (NamesVersions(bucket)) h->emplace_back("x-amz-version-id", rec.VersionId());
  if (rec.lock.mode != object::LockMode::kNone) {
    h->emplace_back("x-amz-object-lock-mode", std::string(object::LockModeName(rec.lock.mode)));
    h->emplace_back("x-amz-object-lock-retain-until-date",
                    FormatRetainUntil(rec.lock.retain_until_ns));
  }
  if (rec.lock.legal_hold != object::LegalHold::kUnset) {
    h->emplace_back("x-amz-object-lock-legal-hold",
                    rec.lock.legal_hold == object::LegalHold::kOn ? "ON" : "OFF");
  }
}

Error DeleteMarkerError(const object::ObjectRecord& marker, bool named) {
  Error e = MakeError(named ? ErrorCode::kMethodNotAllowed : ErrorCode::kNoSuchKey);
  e.headers.emplace_back("x-amz-delete-marker", "true");
  e.headers.emplace_back("x-amz-version-id", marker.VersionId());
  if (named) e.headers.emplace_back("Allow", "DELETE");
  return e;
}

std::variant<object::ObjectRecord, Error> RequestedVersion(OpContext& ctx,
                                                           object::Version* version) {
  auto v = RequestVersion(ctx.route);
  if (auto* e = std::get_if<Error>(&v)) return *e;
  *version = std::get<object::Version>(v);
  auto rec = ctx.engine.HeadVersion(ctx.route.bucket, ctx.route.key, *version);
  if (!rec.ok()) return FromStatus(rec.status(), ErrorCode::kNoSuchKey);
  if (rec->delete_marker) return DeleteMarkerError(*rec, version->has_value());
  if (!*version) *version = object::ParseVersionId(rec->VersionId());
  return std::move(rec).value();
}

std::variant<std::optional<object::ObjectLock>, Error> LockFromRequest(
    const http::Request& req, const object::BucketRecord& bucket, int64_t now_ns) {
  const std::string* mode = req.Header("x-amz-object-lock-mode");
  const std::string* until = req.Header("x-amz-object-lock-retain-until-date");
  const std::string* hold = req.Header("x-amz-object-lock-legal-hold");
  if (!mode && !until && !hold) return std::optional<object::ObjectLock>();
  if (!bucket.object_lock) {
    return MakeError(ErrorCode::kInvalidRequest, "Bucket is missing Object Lock Configuration");
  }
  object::ObjectLock lock;
  if (mode || until) {
    if (!mode || !until) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both "
                       "be supplied");
    }
    if (*mode == "GOVERNANCE") {
      lock.mode = object::LockMode::kGovernance;
    } else if (*mode == "COMPLIANCE") {
      lock.mode = object::LockMode::kCompliance;
    } else {
      return MakeError(ErrorCode::kInvalidArgument, "Unknown wormMode directive.");
    }
    auto t = ParseRetainUntil(*until);
    if (!t) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "The retain until date must be provided in ISO 8601 format");
    }
    if (*t <= now_ns) {
      return MakeError(ErrorCode::kInvalidArgument, "The retain until date must be in the future!");
    }
    lock.retain_until_ns = *t;
  }
  if (hold) {
    if (*hold == "ON") {
      lock.legal_hold = object::LegalHold::kOn;
    } else if (*hold == "OFF") {
      lock.legal_hold = object::LegalHold::kOff;
    } else {
      return MakeError(ErrorCode::kInvalidArgument, "Legal Hold must be either of 'ON' or 'OFF'");
    }
  }
  return std::optional<object::ObjectLock>(lock);
}

bool BypassGovernance(OpContext& ctx, std::string_view key) {
  const std::string* h = ctx.http.Header("x-amz-bypass-governance-retention");
  if (!h || !EqualsIgnoreCase(*h, "true")) return false;
  const bool allowed = Allows(ctx, "s3:BypassGovernanceRetention", key);
  STRATA_LOG("object lock: %s asks to bypass GOVERNANCE retention (%s %s/%.*s): %s",
             ctx.access_key.empty() ? "anonymous" : ctx.access_key.c_str(),
             ctx.http.method.c_str(), ctx.route.bucket.c_str(), static_cast<int>(key.size()),
             key.data(), allowed ? "allowed" : "not allowed s3:BypassGovernanceRetention");
  return allowed;
}

}  // namespace strata::s3

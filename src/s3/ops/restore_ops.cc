// RestoreObject and the cold tier's rules on reads (docs/tiers.md): a version
// whose data is in a pool of media "cold" is archived — GET and CopyObject
// of it answer 403 InvalidObjectState until RestoreObject has made a
// temporary copy (tier/restore.h); HEAD always works and says where the
// restore stands (x-amz-restore).
#include "common/time_util.h"
#include "s3/ops/object_write.h"
#include "s3/ops/versioning.h"
#include "s3/router.h"
#include "s3/xml.h"
#include "tier/classes.h"
#include "tier/lifecycle.h"
#include "tier/restore.h"

namespace strata::s3 {
namespace {

bool InColdPool(const ServiceConfig& config, const object::ObjectRecord& rec) {
  return config.classes && config.classes->MediaOf(rec.pool) == tier::Media::kCold;
}

}  // namespace

bool Archived(const OpContext& ctx, const object::ObjectRecord& rec) {
  if (rec.delete_marker || !InColdPool(ctx.config, rec)) return false;
  return !(rec.restore.made() && rec.restore.expiry_ns > ctx.engine.NowNs());
}

void AddRestoreHeader(const object::ObjectRecord& rec, http::Headers* h) {
  if (rec.restore.ongoing) {
    h->emplace_back("x-amz-restore", "ongoing-request=\"true\"");
  } else if (rec.restore.made()) {
    h->emplace_back("x-amz-restore", "ongoing-request=\"false\", expiry-date=\"" +
                                         FormatHttpDate(rec.restore.expiry_ns) + "\"");
  }
}

OpResult RestoreObject(OpContext& ctx) {
  auto body = ReadSmallBody(ctx, 64 * 1024);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  auto req = ParseRestoreRequest(std::get<std::string>(body));
  if (!req) return MakeError(ErrorCode::kMalformedXML);
  if (req->unsupported) {
    return MakeError(ErrorCode::kNotImplemented,
                     "Restores of type SELECT and output locations are not supported.");
  }
  if (!req->tier.empty() && req->tier != "Expedited" && req->tier != "Standard" &&
      req->tier != "Bulk") {
    return MakeError(ErrorCode::kMalformedXML);
  }
  uint32_t days = 0;
  if (req->days.empty() || req->days.size() > 9 ||
      req->days.find_first_not_of("0123456789") != std::string::npos ||
      (days = static_cast<uint32_t>(std::stoul(req->days))) == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "Days must be a positive integer");
  }
  object::Version version;
  auto found = RequestedVersion(ctx, &version);
  if (auto* e = std::get_if<Error>(&found)) return *e;
  const object::ObjectRecord& rec = std::get<object::ObjectRecord>(found);
  if (!InColdPool(ctx.config, rec)) {
    return MakeError(ErrorCode::kInvalidObjectState,
                     "Restore is not allowed for the object's current storage class");
  }
  if (!ctx.config.restorer) return MakeError(ErrorCode::kNotImplemented, "no restore worker");
  const int64_t extend_to = tier::DueAfterDays(ctx.engine.NowNs(), days, ctx.config.lifecycle_day_ns);
  auto outcome = ctx.engine.RequestRestore(ctx.route.bucket, ctx.route.key, rec.version_stamp,
                                           days, extend_to);
  if (!outcome.ok()) return FromStatus(outcome.status(), ErrorCode::kNoSuchKey);
  http::Headers h = BaseHeaders(ctx);
  switch (*outcome) {
    case object::RestoreRequestOutcome::kInProgress:
      return MakeError(ErrorCode::kRestoreAlreadyInProgress);
    case object::RestoreRequestOutcome::kExtended:
      return SendEmpty(ctx, 200, h);
    case object::RestoreRequestOutcome::kStarted:
      ctx.config.restorer->Enqueue(ctx.route.bucket, ctx.route.key, rec.version_stamp);
      return SendEmpty(ctx, 202, h);
  }
  return SendEmpty(ctx, 202, h);
}

}  // namespace strata::s3

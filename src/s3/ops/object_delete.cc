// DeleteObject and DeleteObjects (multi-object delete, Quiet mode), with
// versions: a delete marker, the null version, or exactly the version named.
#include "s3/access.h"
#include "s3/ops/op_context.h"
#include "s3/ops/versioning.h"
#include "s3/xml.h"

namespace strata::s3 {

OpResult DeleteObject(OpContext& ctx) {
  auto version = RequestVersion(ctx.route);
  if (auto* e = std::get_if<Error>(&version)) return *e;
  object::DeleteOptions options;
  options.bypass_governance = BypassGovernance(ctx, ctx.route.key);
  auto out = ctx.engine.DeleteVersion(ctx.route.bucket, ctx.route.key,
                                      std::get<object::Version>(version), options);
  if (!out.ok()) return FromStatus(out.status(), ErrorCode::kNoSuchBucket);
  http::Headers h;
  if (out->delete_marker) h.emplace_back("x-amz-delete-marker", "true");
  if (!out->version_id.empty()) h.emplace_back("x-amz-version-id", out->version_id);
  return SendEmpty(ctx, 204, h);
}

OpResult DeleteObjects(OpContext& ctx) {
  auto body = ReadSmallBody(ctx, 2 << 20);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  auto req = ParseDeleteRequest(std::get<std::string>(body));
  if (!req) return MakeError(ErrorCode::kMalformedXML);
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);

  XmlWriter w;
  w.Open("DeleteResult");
  for (size_t i = 0; i < req->keys.size(); ++i) {
    const std::string& key = req->keys[i];
    const std::optional<std::string>& version_id = req->version_ids[i];
    Error err = MakeError(ErrorCode::kInternalError);
    bool ok = false;
    object::DeleteOutcome outcome;
    object::Version version;
    if (key.empty() || key.size() > 1024) {
      err = MakeError(key.empty() ? ErrorCode::kInvalidArgument : ErrorCode::kKeyTooLongError);
    } else if (version_id) {
      auto v = ParseRequestVersionId(*version_id);
      if (auto* e = std::get_if<Error>(&v)) {
        err = *e;
      } else {
        version = std::get<object::VersionSelector>(v);
      }
    }
    if (key.empty() || key.size() > 1024 || (version_id && !version)) {
      // err set above
    } else if (!Allows(ctx, version_id ? "s3:DeleteObjectVersion" : "s3:DeleteObject", key)) {
      err = AccessDeniedError();  // as AWS: this key fails, the others go on
    } else {
      object::DeleteOptions options;
      options.bypass_governance = BypassGovernance(ctx, key);
      auto out = ctx.engine.DeleteVersion(ctx.route.bucket, key, version, options);
      ok = out.ok();
      if (ok) {
        outcome = *out;
      } else {
        err = FromStatus(out.status(), ErrorCode::kNoSuchBucket);
      }
    }
    if (ok && req->quiet) continue;
    if (ok) {
      w.Open("Deleted");
      w.Element("Key", key);
      if (version_id) {
        w.Element("VersionId", *version_id);
        if (outcome.delete_marker) {
          w.Element("DeleteMarker", "true");
          w.Element("DeleteMarkerVersionId", outcome.version_id);
        }
      } else if (outcome.delete_marker) {
        w.Element("DeleteMarker", "true");
        w.Element("DeleteMarkerVersionId", outcome.version_id);
      }
      w.Close("Deleted");
    } else {
      w.Open("Error");
      w.Element("Key", key);
      if (version_id) w.Element("VersionId", *version_id);
      w.Element("Code", err.CodeString());
      w.Element("Message", err.Message());
      w.Close("Error");
    }
  }
  w.Close("DeleteResult");
  return SendXml(ctx, w.Finish());
}

}  // namespace strata::s3

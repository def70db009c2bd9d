// DeleteObject and DeleteObjects (multi-object delete, Quiet mode).
#include "s3/ops/op_context.h"
#include "s3/xml.h"

namespace strata::s3 {

OpResult DeleteObject(OpContext& ctx) {
  const std::string* v = ctx.route.Query("versionId");
  if (v && *v != "null") return MakeError(ErrorCode::kNoSuchVersion);
  Status st = ctx.engine.DeleteObject(ctx.route.bucket, ctx.route.key);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 204);
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
  for (const std::string& key : req->keys) {
    Error err = MakeError(ErrorCode::kInternalError);
    bool ok = false;
    if (key.empty() || key.size() > 1024) {
      err = MakeError(key.empty() ? ErrorCode::kInvalidArgument : ErrorCode::kKeyTooLongError);
    } else {
      Status st = ctx.engine.DeleteObject(ctx.route.bucket, key);
      ok = st.ok();
      if (!ok) err = FromStatus(st, ErrorCode::kNoSuchBucket);
    }
    if (ok && req->quiet) continue;
    if (ok) {
      w.Open("Deleted");
      w.Element("Key", key);
      w.Close("Deleted");
    } else {
      w.Open("Error");
      w.Element("Key", key);
      w.Element("Code", err.CodeString());
      w.Element("Message", err.Message());
      w.Close("Error");
    }
  }
  w.Close("DeleteResult");
  return SendXml(ctx, w.Finish());
}

}  // namespace strata::s3

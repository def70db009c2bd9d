// CORS: Put/Get/DeleteBucketCors and the preflight (OPTIONS). The headers of
// actual cross-origin requests are added by service.cc (CorsHeadersFor).
#include "s3/bucket_configs.h"
#include "s3/cors.h"
#include "s3/ops/object_write.h"
#include "s3/ops/op_context.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

constexpr size_t kMaxCorsBody = 64 * 1024;

Error Forbidden(std::string_view why) {
  return MakeError(ErrorCode::kAccessForbidden, "CORSResponse: " + std::string(why));
}

}  // namespace

OpResult PutBucketCors(OpContext& ctx) {
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);
  auto body = ReadSmallBody(ctx, kMaxCorsBody);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  const std::string& xml = std::get<std::string>(body);
  if (auto e = CheckBodyIntegrity(ctx, xml, /*required=*/true)) return e;
  auto rules = ParseCorsConfiguration(xml);
  if (!rules) return MakeError(ErrorCode::kMalformedXML);
  if (auto why = ValidateCors(*rules)) return MakeError(ErrorCode::kInvalidRequest, *why);
  Status st = ctx.engine.SetBucketCors(ctx.route.bucket, RenderCorsConfiguration(*rules));
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 200);
}

OpResult GetBucketCors(OpContext& ctx) {
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);
  if (bucket->cors.empty()) return MakeError(ErrorCode::kNoSuchCORSConfiguration);
  return SendXml(ctx, bucket->cors);
}

OpResult DeleteBucketCors(OpContext& ctx) {
  Status st = ctx.engine.SetBucketCors(ctx.route.bucket, "");
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 204);
}

OpResult PreflightCors(OpContext& ctx) {
  const std::string* origin = ctx.http.Header("origin");
  if (!origin || origin->empty()) {
    return MakeError(ErrorCode::kBadRequest, "Insufficient information. Origin request header needed.");
  }
  const std::string* method = ctx.http.Header("access-control-request-method");
  if (!method || method->empty()) {
    return MakeError(ErrorCode::kBadRequest,
                     "Invalid Access-Control-Request-Method: " + (method ? *method : std::string("null")));
  }
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);
  auto config = ctx.config.bucket_configs->Get(ctx.route.bucket);
  if (!config || config->cors.empty()) return Forbidden("CORS is not enabled for this bucket.");
  std::vector<std::string> headers;
  if (const std::string* h = ctx.http.Header("access-control-request-headers")) {
    headers = SplitHeaderList(*h);
  }
  const CorsRule* rule = MatchCors(config->cors, *origin, *method, headers);
  if (!rule) {
    return Forbidden(
        "This CORS request is not allowed. This is usually because the evaluation of Origin, "
        "request method / Access-Control-Request-Method or Access-Control-Request-Headers are "
        "not whitelisted by the resource's CORS spec.");
  }
  return SendEmpty(ctx, 200, CorsHeaders(*rule, *origin, /*preflight=*/true, headers));
}

}  // namespace strata::s3

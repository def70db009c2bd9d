// Server access logging: Put/GetBucketLogging. The settings are parsed by
// s3/access_log.h and checked against the target bucket as AWS checks them;
// the service (s3/service.cc) writes a record of every request to a logged
// bucket and AccessLogDelivery delivers them.
#include "s3/access_log.h"
#include "s3/bucket_configs.h"
#include "s3/ops/op_context.h"
#include "s3/router.h"

namespace strata::s3 {

namespace {

constexpr size_t kMaxLoggingBytes = 64 << 10;

Error TargetError(std::string message) {
  return MakeError(ErrorCode::kInvalidTargetBucketForLogging, std::move(message));
}

}  // namespace

OpResult GetBucketLogging(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const object::BucketRecord& b = std::get<object::BucketRecord>(bucket);
  return SendXml(ctx, b.logging.empty() ? RenderBucketLoggingStatus(std::nullopt) : b.logging);
}

OpResult PutBucketLogging(OpContext& ctx) {
  auto body = ReadSmallBody(ctx, kMaxLoggingBytes);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const object::BucketRecord& source = std::get<object::BucketRecord>(bucket);
  ParsedLogging parsed = ParseBucketLoggingStatus(std::get<std::string>(body));
  if (auto* err = std::get_if<LoggingError>(&parsed)) {
    return MakeError(err->problem == LoggingProblem::kMalformedXml ? ErrorCode::kMalformedXML
                                                                   : ErrorCode::kInvalidArgument,
                     err->message);
  }
  const std::optional<LoggingTarget>& target = std::get<std::optional<LoggingTarget>>(parsed);
  if (target) {
    if (IsReservedBucketName(target->bucket) || IsReservedBucketName(ctx.route.bucket)) {
      return TargetError("KV-cache buckets neither keep nor receive access logs");
    }
    auto t = ctx.engine.GetBucket(target->bucket);
    if (!t.ok()) {
      if (t.status().code() == Code::kNotFound) {
        return TargetError("The target bucket for logging does not exist");
      }
      return FromStatus(t.status());
    }
    if (BucketOwnerId(ctx, *t) != BucketOwnerId(ctx, source)) {
      return TargetError("The owner for the bucket to be logged and the target bucket must be the same.");
    }
    if (t->default_retention.mode != object::LockMode::kNone) {
      return TargetError("The target bucket for logging must not have a default retention period "
                         "(Object Lock) configured");
    }
    if (t->default_sse != object::SseMode::kNone) {
      return TargetError("strata does not deliver access logs into a bucket with default "
                         "encryption; choose a target bucket without it");
    }
  }
  Status st = ctx.engine.SetBucketLogging(ctx.route.bucket,
                                          target ? RenderBucketLoggingStatus(target) : "");
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 200);
}

}  // namespace strata::s3

// Bucket event notifications: Put/GetBucketNotificationConfiguration. The
// document is parsed and checked by notify/config.h against the webhook
// targets the operator declared, and stored as it renders it; the notifier
// (notify/notifier.h) reads it from the bucket record.
#include <algorithm>

#include "notify/config.h"
#include "s3/ops/op_context.h"
#include "s3/router.h"

namespace strata::s3 {
namespace {

constexpr size_t kMaxNotificationBytes = 1 << 20;

ErrorCode CodeOf(notify::Problem p) {
  switch (p) {
    case notify::Problem::kMalformedXml: return ErrorCode::kMalformedXML;
    case notify::Problem::kInvalidArgument: return ErrorCode::kInvalidArgument;
    case notify::Problem::kNotImplemented: return ErrorCode::kNotImplemented;
  }
  return ErrorCode::kMalformedXML;
}

}  // namespace

OpResult GetBucketNotificationConfiguration(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const object::BucketRecord& b = std::get<object::BucketRecord>(bucket);
  // AWS answers an empty configuration, not an error, when none is set.
  return SendXml(ctx, b.notification.empty() ? notify::RenderConfiguration({}) : b.notification);
}

OpResult PutBucketNotificationConfiguration(OpContext& ctx) {
  auto body = ReadSmallBody(ctx, kMaxNotificationBytes);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  if (IsReservedBucketName(ctx.route.bucket)) {
    return MakeError(ErrorCode::kInvalidBucketState,
                     "KV-cache buckets do not send event notifications");
  }
  const std::vector<std::string>& targets = ctx.config.notify_targets;
  auto parsed = notify::ParseConfiguration(std::get<std::string>(body), [&](std::string_view id) {
    return std::find(targets.begin(), targets.end(), id) != targets.end();
  });
  if (auto* err = std::get_if<notify::ParseError>(&parsed)) {
    return MakeError(CodeOf(err->problem), err->message);
  }
  const notify::Configuration& c = std::get<notify::Configuration>(parsed);
  Status st = ctx.engine.SetBucketNotification(ctx.route.bucket,
                                               c.rules.empty() ? "" : notify::RenderConfiguration(c));
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 200);
}

}  // namespace strata::s3

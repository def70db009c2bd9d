// Bucket lifecycle: Put/Get/DeleteBucketLifecycleConfiguration. The rules
// are parsed and validated by tier/lifecycle.h and stored as it renders them;
// the lifecycle scanner (tier/scanner.h) applies them. x-amz-expiration on
// object responses: ExpirationHeader below.
#include "common/time_util.h"
#include "s3/bucket_configs.h"
#include "s3/ops/object_write.h"
#include "s3/router.h"
#include "tier/classes.h"
#include "tier/lifecycle.h"
#include "tier/scanner.h"

namespace strata::s3 {
namespace {

constexpr size_t kMaxLifecycleBytes = 1 << 20;
constexpr uint64_t kDefaultMinTransitionBytes = 128 << 10;  // all_storage_classes_128K
constexpr char kMinSizeHeader[] = "x-amz-transition-default-minimum-object-size";

ErrorCode CodeOf(tier::Problem p) {
  switch (p) {
    case tier::Problem::kMalformedXml: return ErrorCode::kMalformedXML;
    case tier::Problem::kInvalidArgument: return ErrorCode::kInvalidArgument;
    case tier::Problem::kInvalidRequest: return ErrorCode::kInvalidRequest;
  }
  return ErrorCode::kMalformedXML;
}

std::string MinSizeName(uint64_t min_bytes) {
  return min_bytes == 0 ? "varies_by_storage_class" : "all_storage_classes_128K";
}

}  // namespace

OpResult GetBucketLifecycleConfiguration(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const object::BucketRecord& b = std::get<object::BucketRecord>(bucket);
  if (b.lifecycle.empty()) return MakeError(ErrorCode::kNoSuchLifecycleConfiguration);
  return SendXml(ctx, b.lifecycle, 200,
                 {{kMinSizeHeader, MinSizeName(b.lifecycle_min_transition_bytes)}});
}

OpResult PutBucketLifecycleConfiguration(OpContext& ctx) {
  auto body = ReadSmallBody(ctx, kMaxLifecycleBytes);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  // AWS requires Content-MD5 or an x-amz-checksum-* on this call.
  if (auto e = CheckBodyIntegrity(ctx, std::get<std::string>(body), /*required=*/true)) return *e;
  if (IsReservedBucketName(ctx.route.bucket)) {
    return MakeError(ErrorCode::kInvalidBucketState,
                     "KV-cache buckets expire their blocks by TTL and quota, not by lifecycle rules");
  }
  uint64_t min_bytes = kDefaultMinTransitionBytes;
  if (const std::string* h = ctx.http.Header(kMinSizeHeader)) {
    if (*h == "varies_by_storage_class") {
      min_bytes = 0;
    } else if (*h != "all_storage_classes_128K") {
      return MakeError(ErrorCode::kInvalidArgument,
                       "x-amz-transition-default-minimum-object-size must be "
                       "all_storage_classes_128K or varies_by_storage_class");
    }
  }
  auto parsed = tier::ParseLifecycle(std::get<std::string>(body), [](std::string_view c) {
    return tier::IsStorageClass(c) && c != "STANDARD" && c != "EXPRESS_ONEZONE" &&
           c != "REDUCED_REDUNDANCY";
  });
  if (auto* err = std::get_if<tier::ParseError>(&parsed)) {
    return MakeError(CodeOf(err->problem), err->message);
  }
  Status st = ctx.engine.SetBucketLifecycle(
      ctx.route.bucket, tier::RenderLifecycle(std::get<tier::Configuration>(parsed)), min_bytes);
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 200, {{kMinSizeHeader, MinSizeName(min_bytes)}});
}

OpResult DeleteBucketLifecycle(OpContext& ctx) {
  Status st = ctx.engine.SetBucketLifecycle(ctx.route.bucket, "");
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 204);
}

std::optional<std::string> ExpirationHeader(OpContext& ctx, const std::string& key,
                                            const object::ObjectRecord& rec) {
  if (rec.delete_marker) return std::nullopt;
  auto config = ctx.config.bucket_configs->Get(ctx.route.bucket);
  if (!config || !config->lifecycle) return std::nullopt;
  // The same facts the scanner judges by (its versioning does not matter here).
  const tier::VersionFacts v = tier::Scanner::FactsAt(key, {&rec}, 0, object::BucketRecord{});
  auto info = tier::ExpirationOf(*config->lifecycle, v, ctx.config.lifecycle_day_ns);
  if (!info) return std::nullopt;
  return "expiry-date=\"" + FormatHttpDate(info->expiry_ns) + "\", rule-id=\"" +
         info->rule_id + "\"";
}

}  // namespace strata::s3

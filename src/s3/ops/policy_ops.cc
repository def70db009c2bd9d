// Bucket policies: Put/Get/DeleteBucketPolicy and GetBucketPolicyStatus. The
// document is compiled when it is put (a policy that does not compile is
// refused with MalformedPolicy saying why), stored as sent in the bucket
// record, and its compiled form cached by s3/access.h for the request path.
#include "common/encoding.h"
#include "common/hash.h"
#include "common/log.h"
#include "s3/access.h"
#include "s3/ops/object_write.h"
#include "s3/ops/op_context.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

// AWS's limit on a bucket policy.
constexpr size_t kMaxBucketPolicyBytes = 20 * 1024;

Error Malformed(const std::string& why) { return MakeError(ErrorCode::kMalformedPolicy, why); }

// A bucket policy may only speak of its own bucket and its objects, and only
// of S3 (and strata's KV) actions: as AWS, anything else is refused.
std::optional<Error> CheckScope(const auth::Policy& policy, const std::string& bucket) {
  const std::string arn = BucketArn(bucket);
  for (const std::string& r : policy.ResourcePatterns()) {
    bool ok = r == arn || (r.starts_with(arn) && r[arn.size()] == '/');
    if (!ok) return Malformed("Policy has invalid resource: " + r);
  }
  for (const std::string& a : policy.ActionPatterns()) {
    std::string lower = AsciiLower(a);
    if (lower != "*" && !lower.starts_with("s3:") && !lower.starts_with("strata:")) {
      return Malformed("Policy has invalid action: " + a);
    }
  }
  return std::nullopt;
}

}  // namespace

OpResult PutBucketPolicy(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  std::string body;
  char buf[16384];
  while (true) {  // read one byte past the limit to tell "at" from "over"
    auto n = ctx.body.Read(buf, sizeof(buf));
    if (!n.ok()) return FromBodyStatus(n.status());
    if (*n == 0) break;
    body.append(buf, *n);
    if (body.size() > kMaxBucketPolicyBytes) return MakeError(ErrorCode::kPolicyTooLarge);
  }
  if (auto e = CheckBodyIntegrity(ctx, body, /*required=*/false)) return e;
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || body[first] != '{') return Malformed(
      "Policies must be valid JSON and the first byte must be '{'");
  auto parsed = auth::Policy::Parse(body, auth::Policy::Kind::kResource);
  if (auto* e = std::get_if<auth::PolicyError>(&parsed)) return Malformed(e->message);
  if (auto e = CheckScope(std::get<auth::Policy>(parsed), ctx.route.bucket)) return e;
  // As AWS: BlockPublicPolicy refuses a policy that would make the bucket public.
  const auto& record = std::get<object::BucketRecord>(bucket);
  if ((record.public_access_block & object::kBlockPublicPolicy) &&
      std::get<auth::Policy>(parsed).IsPublic()) {
    return MakeError(ErrorCode::kAccessDenied,
                     "Access Denied: the bucket's public access block (BlockPublicPolicy) "
                     "refuses a public policy");
  }
  Status st = ctx.engine.SetBucketPolicy(ctx.route.bucket, body);
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  STRATA_LOG("bucket policy: %s set the policy of %s (%zu bytes)",
             ctx.caller->principal.arn.c_str(), ctx.route.bucket.c_str(), body.size());
  return SendEmpty(ctx, 204);
}

OpResult GetBucketPolicy(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const std::string& policy = std::get<object::BucketRecord>(bucket).policy;
  if (policy.empty()) return MakeError(ErrorCode::kNoSuchBucketPolicy);
  http::Headers h = BaseHeaders(ctx);
  h.emplace_back("Content-Type", "application/json");
  if (ctx.out.Start(200, h, policy.size()).ok()) ctx.out.Write(policy).IgnoreError();
  return std::nullopt;
}

OpResult DeleteBucketPolicy(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  Status st = ctx.engine.SetBucketPolicy(ctx.route.bucket, "");
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  STRATA_LOG("bucket policy: %s deleted the policy of %s", ctx.caller->principal.arn.c_str(),
             ctx.route.bucket.c_str());
  return SendEmpty(ctx, 204);  // as AWS, also when there was none
}

OpResult GetBucketPolicyStatus(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const std::string& text = std::get<object::BucketRecord>(bucket).policy;
  if (text.empty()) return MakeError(ErrorCode::kNoSuchBucketPolicy);
  auto parsed = auth::Policy::Parse(text, auth::Policy::Kind::kResource);
  const auth::Policy* policy = std::get_if<auth::Policy>(&parsed);
  XmlWriter w;
  w.Open("PolicyStatus");
  w.Element("IsPublic", policy && policy->IsPublic() ? "true" : "false");
  w.Close("PolicyStatus");
  return SendXml(ctx, w.Finish());
}

}  // namespace strata::s3

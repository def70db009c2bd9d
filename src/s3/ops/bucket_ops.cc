// Bucket operations: ListBuckets, CreateBucket, DeleteBucket, HeadBucket,
// GetBucketLocation.
#include "common/log.h"
#include "common/time_util.h"
#include "s3/access.h"
#include "s3/ops/object_write.h"
#include "s3/ops/op_context.h"
#include "s3/xml.h"

namespace strata::s3 {

OpResult ListBuckets(OpContext& ctx) {
  auto buckets = ctx.engine.ListBuckets();
  if (!buckets.ok()) return FromStatus(buckets.status());
  XmlWriter w;
  w.Open("ListAllMyBucketsResult");
  WriteOwner(ctx, w, "Owner", ctx.caller->principal.canonical_id);
  w.Open("Buckets");
  for (const auto& [name, rec] : *buckets) {
    w.Open("Bucket");
    w.Element("Name", name);
    w.Element("CreationDate", FormatIso8601(rec.created_ns));
    w.Close("Bucket");
  }
  w.Close("Buckets");
  w.Close("ListAllMyBucketsResult");
  return SendXml(ctx, w.Finish());
}

OpResult CreateBucket(OpContext& ctx) {
  auto body = ReadSmallBody(ctx, 64 * 1024);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  auto region = ParseCreateBucketConfiguration(std::get<std::string>(body));
  if (!region) return MakeError(ErrorCode::kMalformedXML);
  // As AWS: a bucket lives in the region of the endpoint it was created at.
  if (!region->empty() && *region != ctx.config.region) {
    return MakeError(ErrorCode::kIllegalLocationConstraintException,
                     "The " + *region + " location constraint is incompatible for the region "
                     "specific endpoint this request was sent to.");
  }
  object::BucketRecord rec;
  rec.created_ns = UnixNowNs();
  rec.region = region->empty() ? ctx.config.region : *region;
  rec.owner = ctx.caller->principal.canonical_id;
  auto acl = NewBucketAcl(ctx, rec.owner);
  if (auto* e = std::get_if<Error>(&acl)) return *e;
  std::tie(rec.ownership, rec.acl) = std::get<std::pair<object::Ownership, std::string>>(acl);
  if (const std::string* lock = ctx.http.Header("x-amz-bucket-object-lock-enabled")) {
    if (*lock == "true" || *lock == "True" || *lock == "TRUE") {
      // Object Lock needs versioning, which can then never be suspended.
      rec.versioning = object::Versioning::kEnabled;
      rec.object_lock = true;
      STRATA_LOG("object lock: %s created bucket %s with Object Lock", ctx.access_key.c_str(),
                 ctx.route.bucket.c_str());
    } else if (*lock != "false" && *lock != "False" && *lock != "FALSE") {
      return MakeError(ErrorCode::kInvalidArgument,
                       "x-amz-bucket-object-lock-enabled must be true or false");
    }
  }
  Status st = ctx.engine.CreateBucket(ctx.route.bucket, rec);
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);  // a deleted namesake's may be cached
  if (st.code() == Code::kAlreadyExists) return MakeError(ErrorCode::kBucketAlreadyOwnedByYou);
  if (!st.ok()) return FromStatus(st);
  return SendEmpty(ctx, 200, {{"Location", "/" + ctx.route.bucket}});
}

OpResult DeleteBucket(OpContext& ctx) {
  Status st = ctx.engine.DeleteBucket(ctx.route.bucket);
  ctx.config.bucket_configs->Invalidate(ctx.route.bucket);
  if (st.code() == Code::kPreconditionFailed) return MakeError(ErrorCode::kBucketNotEmpty);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 204);
}

OpResult HeadBucket(OpContext& ctx) {
  auto rec = ctx.engine.GetBucket(ctx.route.bucket);
  if (!rec.ok()) return FromStatus(rec.status(), ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 200, {{"x-amz-bucket-region", rec->region}});
}

OpResult GetBucketLocation(OpContext& ctx) {
  auto rec = ctx.engine.GetBucket(ctx.route.bucket);
  if (!rec.ok()) return FromStatus(rec.status(), ErrorCode::kNoSuchBucket);
  // AWS answers an empty LocationConstraint for us-east-1.
  std::string region = rec->region == "us-east-1" ? "" : rec->region;
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<LocationConstraint xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" +
                    XmlEscape(region) + "</LocationConstraint>";
  return SendXml(ctx, xml);
}

}  // namespace strata::s3

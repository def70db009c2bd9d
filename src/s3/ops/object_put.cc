// PutObject: streams the body into a new object version and commits it,
// verifying Content-MD5 and any additional checksum, honouring If-Match /
// If-None-Match atomically.
#include "common/encoding.h"
#include "s3/ops/acl_request.h"
#include "s3/ops/object_write.h"
#include "s3/ops/sse.h"
#include "s3/ops/versioning.h"

namespace strata::s3 {

OpResult PutObject(OpContext& ctx) {
  auto content_md5 = ContentMd5(ctx.http);
  if (auto* e = std::get_if<Error>(&content_md5)) return *e;
  const std::optional<std::string>& want_md5 = std::get<std::optional<std::string>>(content_md5);
  object::WriteOptions options;
  auto storage_class = StorageClassFromRequest(ctx.http);
  if (auto* e = std::get_if<Error>(&storage_class)) return *e;
  options.storage_class = std::get<std::string>(storage_class);
  options.pool = PoolOfClass(ctx.config, options.storage_class);
  if (const std::string* tagging = ctx.http.Header("x-amz-tagging")) {
    auto tags = ParseTaggingHeader(*tagging);
    if (auto* e = std::get_if<Error>(&tags)) return *e;
    options.tags = std::get<object::Tags>(tags);
  }
  auto headers = HeadersFromRequest(ctx.http);
  if (auto* e = std::get_if<Error>(&headers)) return *e;
  auto checksum = ChecksumCheck::FromRequest(ctx.http);
  if (auto* e = std::get_if<Error>(&checksum)) return *e;
  ChecksumCheck& check = std::get<ChecksumCheck>(checksum);
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);
  auto lock = LockFromRequest(ctx.http, *bucket, ctx.engine.NowNs());
  if (auto* e = std::get_if<Error>(&lock)) return *e;
  options.lock = std::get<std::optional<object::ObjectLock>>(lock);
  if (options.lock && !want_md5 && !check.algorithm()) {
    return MakeError(ErrorCode::kInvalidRequest,
                     "Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object "
                     "requests with Object Lock parameters");
  }
  options.bypass_governance = BypassGovernance(ctx, ctx.route.key);
  auto acl = AclForNewObject(ctx, ctx.http, *bucket);
  if (auto* e = std::get_if<Error>(&acl)) return *e;
  options.owner = std::move(std::get<NewObjectAcl>(acl).owner);
  options.acl = std::move(std::get<NewObjectAcl>(acl).acl);
  auto sse = SseForWrite(ctx, ctx.http, *bucket);
  if (auto* e = std::get_if<Error>(&sse)) return *e;
  SseWrite& enc = std::get<SseWrite>(sse);
  options.sse = enc.sse;
  options.data_key = std::move(enc.data_key);

  auto writer = ctx.engine.NewWriter(ctx.route.bucket, ctx.route.key,
                                     std::move(std::get<object::ObjectHeaders>(headers)),
                                     std::move(options));
  if (!writer.ok()) return FromStatus(writer.status(), ErrorCode::kNoSuchBucket);
  if (auto e = StreamBodyInto(ctx, **writer, check, ctx.config.max_object_bytes)) return *e;
  if (want_md5 && *want_md5 != (*writer)->Md5()) return MakeError(ErrorCode::kBadDigest);
  if (check.algorithm()) {
    (*writer)->SetChecksum(std::string(ChecksumName(*check.algorithm())), check.value_base64(),
                           "FULL_OBJECT");
  }
  auto rec = (*writer)->Commit(WriteConditions(ctx.http));
  // NotFound says by its Detail whether the bucket (deleted meanwhile) or, for
  // If-Match, the key is missing.
  if (!rec.ok()) return WriteConditionError(rec.status());
  http::Headers h = {{"ETag", "\"" + rec->etag + "\""}};
  AddChecksumHeaders(*rec, &h);
  AddSseHeaders(rec->sse, enc.customer_key_md5, &h);
  if (NamesVersions(*bucket)) h.emplace_back("x-amz-version-id", rec->VersionId());
  if (auto exp = ExpirationHeader(ctx, ctx.route.key, *rec)) h.emplace_back("x-amz-expiration", *exp);
  return SendEmpty(ctx, 200, h);
}

}  // namespace strata::s3

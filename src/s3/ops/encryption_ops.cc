// Bucket default encryption: Put/Get/DeleteBucketEncryption. The default
// applies to writes that name no encryption (s3/ops/sse.cc).
#include "kms/key_service.h"
#include "s3/ops/object_write.h"
#include "s3/router.h"
#include "s3/xml.h"

namespace strata::s3 {

OpResult GetBucketEncryption(OpContext& ctx) {
  auto bucket = BucketOf(ctx);
  if (auto* e = std::get_if<Error>(&bucket)) return *e;
  const object::BucketRecord& b = std::get<object::BucketRecord>(bucket);
  if (b.default_sse == object::SseMode::kNone) {
    return MakeError(ErrorCode::kServerSideEncryptionConfigurationNotFoundError);
  }
  XmlWriter w;
  w.Open("ServerSideEncryptionConfiguration");
  w.Open("Rule");
  w.Open("ApplyServerSideEncryptionByDefault");
  w.Element("SSEAlgorithm", b.default_sse == object::SseMode::kS3 ? "AES256" : "aws:kms");
  if (b.default_sse == object::SseMode::kKms && !b.default_kms_key.empty()) {
    w.Element("KMSMasterKeyID", b.default_kms_key);
  }
  w.Close("ApplyServerSideEncryptionByDefault");
  w.Element("BucketKeyEnabled", b.default_bucket_key ? "true" : "false");
  w.Close("Rule");
  w.Close("ServerSideEncryptionConfiguration");
  return SendXml(ctx, w.Finish());
}

OpResult PutBucketEncryption(OpContext& ctx) {
  auto body = ReadSmallBody(ctx, 64 * 1024);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  if (auto e = CheckBodyIntegrity(ctx, std::get<std::string>(body), /*required=*/false)) return *e;
  auto conf = ParseEncryptionConfiguration(std::get<std::string>(body));
  if (!conf || !conf->has_default) return MakeError(ErrorCode::kMalformedXML);
  object::SseMode mode;
  if (conf->algorithm == "AES256") {
    mode = object::SseMode::kS3;
  } else if (conf->algorithm == "aws:kms") {
    mode = object::SseMode::kKms;
  } else {
    return MakeError(ErrorCode::kMalformedXML,
                     "The XML you provided was not well-formed or did not validate against our "
                     "published schema (SSEAlgorithm: AES256 or aws:kms)");
  }
  bool bucket_key = false;
  if (!conf->bucket_key_enabled.empty()) {
    if (conf->bucket_key_enabled != "true" && conf->bucket_key_enabled != "false") {
      return MakeError(ErrorCode::kMalformedXML);
    }
    bucket_key = conf->bucket_key_enabled == "true";
  }
  std::string key;
  if (conf->kms_key_id) {
    if (mode != object::SseMode::kKms) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "a KMSMasterKeyID is not applicable if the default sse algorithm is not "
                       "aws:kms");
    }
    key = *conf->kms_key_id;
    // A key that does not exist would make every default write fail: refused
    // now (the AWS-managed key is created on first use).
    if (!key.empty() && key != kms::kDefaultKmsAlias) {
      if (!ctx.config.kms) return MakeError(ErrorCode::kNotImplemented, "no key service");
      auto info = ctx.config.kms->Describe(key);
      if (!info.ok()) return FromStatus(info.status());
    }
  }
  if ((mode == object::SseMode::kKms || mode == object::SseMode::kS3) && !ctx.config.kms) {
    return MakeError(ErrorCode::kNotImplemented, "This server runs without a key service.");
  }
  Status st = ctx.engine.SetBucketEncryption(ctx.route.bucket, mode, key, bucket_key);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 200);
}

OpResult DeleteBucketEncryption(OpContext& ctx) {
  Status st = ctx.engine.SetBucketEncryption(ctx.route.bucket, object::SseMode::kNone, "", false);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchBucket);
  return SendEmpty(ctx, 204);
}

}  // namespace strata::s3

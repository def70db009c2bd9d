// Object tagging (Put/Get/DeleteObjectTagging) and GetObjectAttributes.
#include "common/hash.h"
#include "common/time_util.h"
#include "s3/access.h"
#include "s3/ops/object_write.h"
#include "s3/ops/versioning.h"
#include "s3/ops/sse.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {
// x-amz-version-id of the version a tagging call acted on.
http::Headers VersionHeader(OpContext& ctx, const object::ObjectRecord& rec) {
  http::Headers h;
  auto b = ctx.engine.GetBucket(ctx.route.bucket);
  if (b.ok() && NamesVersions(*b)) h.emplace_back("x-amz-version-id", rec.VersionId());
  return h;
}

OpResult SetObjectTags(OpContext& ctx, object::Tags tags, int status) {
  object::Version version;
  auto rec = RequestedVersion(ctx, &version);
  if (auto* e = std::get_if<Error>(&rec)) return *e;
  const object::ObjectRecord& target = std::get<object::ObjectRecord>(rec);
  Status st = ctx.engine.SetTags(ctx.route.bucket, ctx.route.key, std::move(tags), version);
  if (!st.ok()) return FromStatus(st, ErrorCode::kNoSuchKey);
  return SendEmpty(ctx, status, VersionHeader(ctx, target));
}
}  // namespace

OpResult PutObjectTagging(OpContext& ctx) {
  auto body = ReadSmallBody(ctx, 64 * 1024);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  auto tags = ParseTagging(std::get<std::string>(body));
  if (!tags) return MakeError(ErrorCode::kMalformedXML);
  if (auto e = ValidateTags(*tags)) return *e;
  // The new tags are what s3:RequestObjectTag/<key> and
  // s3:RequestObjectTagKeys test: authorized now that they are known.
  auth::MapConditionContext extra;
  std::vector<std::string> keys;
  for (const auto& [k, v] : *tags) {
    extra.Set("s3:RequestObjectTag/" + k, v);
    keys.push_back(k);
  }
  extra.Set("s3:RequestObjectTagKeys", std::move(keys));
  if (!Allows(ctx, RouteAction(ctx), ctx.route.key, &extra)) return AccessDeniedError();
  return SetObjectTags(ctx, std::move(*tags), 200);
}

OpResult GetObjectTagging(OpContext& ctx) {
  object::Version version;
  auto rec = RequestedVersion(ctx, &version);
  if (auto* e = std::get_if<Error>(&rec)) return *e;
  const object::ObjectRecord& r = std::get<object::ObjectRecord>(rec);
  return SendXml(ctx, RenderTagging(r.tags), 200, VersionHeader(ctx, r));
}

OpResult DeleteObjectTagging(OpContext& ctx) { return SetObjectTags(ctx, {}, 204); }

// Bucket tagging: up to 50 tags in the bucket record (and its marker on
// self-describing stores, so rebuild-index keeps them).
OpResult PutBucketTagging(OpContext& ctx) {
  auto body = ReadSmallBody(ctx, 64 * 1024);
  if (auto* e = std::get_if<Error>(&body)) return *e;
  const std::string& xml = std::get<std::string>(body);
  auto md5 = ContentMd5(ctx.http);
  if (auto* e = std::get_if<Error>(&md5)) return *e;
  if (const auto& want = std::get<std::optional<std::string>>(md5); want) {
    StreamHash h(StreamHash::Kind::kMd5);
    h.Update(xml.data(), xml.size());
    if (h.Final() != *want) return MakeError(ErrorCode::kBadDigest);
  }
  auto tags = ParseTagging(xml);
  if (!tags) return MakeError(ErrorCode::kMalformedXML);
  if (auto e = ValidateTags(*tags, 50)) return *e;
  Status st = ctx.engine.SetBucketTags(ctx.route.bucket, std::move(*tags));
  if (st.code() == Code::kNotFound) return MakeError(ErrorCode::kNoSuchBucket);
  if (!st.ok()) return FromStatus(st);
  return SendEmpty(ctx, 204);
}

OpResult GetBucketTagging(OpContext& ctx) {
  auto bucket = ctx.engine.GetBucket(ctx.route.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);
  if (bucket->tags.empty()) return MakeError(ErrorCode::kNoSuchTagSet);
  XmlWriter w;
  w.Open("Tagging");
  w.Open("TagSet");
  for (const auto& [k, v] : bucket->tags) {
    w.Open("Tag");
    w.Element("Key", k);
    w.Element("Value", v);
    w.Close("Tag");
  }
  w.Close("TagSet");
  w.Close("Tagging");
  return SendXml(ctx, w.Finish());
}

OpResult DeleteBucketTagging(OpContext& ctx) {
  Status st = ctx.engine.SetBucketTags(ctx.route.bucket, {});
  if (st.code() == Code::kNotFound) return MakeError(ErrorCode::kNoSuchBucket);
  if (!st.ok()) return FromStatus(st);
  return SendEmpty(ctx, 204);
}

OpResult GetObjectAttributes(OpContext& ctx) {
  const std::string* wanted = ctx.http.Header("x-amz-object-attributes");
  if (!wanted || wanted->empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "The x-amz-object-attributes header specifying the attributes to be "
                     "retrieved is either missing or empty");
  }
  auto has = [&](std::string_view name) {
    size_t pos = 0;
    while (pos <= wanted->size()) {
      size_t comma = wanted->find(',', pos);
      std::string item = wanted->substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
      if (b != std::string::npos && item.substr(b, e - b + 1) == name) return true;
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    return false;
  };
  for (size_t pos = 0; pos <= wanted->size();) {
    size_t comma = wanted->find(',', pos);
    std::string item = wanted->substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item != "ETag" && item != "Checksum" && item != "ObjectParts" && item != "StorageClass" &&
        item != "ObjectSize") {
      return MakeError(ErrorCode::kInvalidArgument, "Invalid attribute name specified: " + item);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  object::Version version;
  auto found = RequestedVersion(ctx, &version);
  if (auto* e = std::get_if<Error>(&found)) return *e;
  const object::ObjectRecord* rec = &std::get<object::ObjectRecord>(found);
  // An SSE-C version tells its attributes only to the holder of its key.
  if (auto e = RefuseSseHeaders(ctx.http)) return *e;
  auto data_key = SseForRead(ctx, rec->sse, /*copy_source=*/false);
  if (auto* e = std::get_if<Error>(&data_key)) return *e;
  if (rec->sse.mode == object::SseMode::kCustomer &&
      !object::CustomerKeyMatches(rec->sse, std::get<std::string>(data_key))) {
    return MakeError(ErrorCode::kAccessDenied);
  }
  XmlWriter w;
  w.Open("GetObjectAttributesResponse");
  if (has("ETag")) w.Element("ETag", rec->etag);
  if (has("Checksum") && !rec->checksum_value.empty()) {
    w.Open("Checksum");
    w.Element("Checksum" + rec->checksum_algorithm, rec->checksum_value);
    w.Element("ChecksumType", rec->checksum_type);
    w.Close("Checksum");
  }
  if (has("ObjectParts") && !rec->parts.empty()) {
    int max_parts = 1000;
    if (const std::string* m = ctx.http.Header("x-amz-max-parts")) max_parts = std::max(0, std::atoi(m->c_str()));
    long marker = 0;
    if (const std::string* m = ctx.http.Header("x-amz-part-number-marker")) marker = std::atol(m->c_str());
    w.Open("ObjectParts");
    w.Element("PartsCount", std::to_string(rec->parts.size()));
    w.Element("PartNumberMarker", std::to_string(marker));
    long last = marker;
    long end = std::min<long>(rec->parts.size(), marker + max_parts);
    for (long i = marker; i < end; ++i) last = i + 1;
    w.Element("NextPartNumberMarker", std::to_string(last));
    w.Element("MaxParts", std::to_string(max_parts));
    w.Element("IsTruncated", end < static_cast<long>(rec->parts.size()) ? "true" : "false");
    // AWS lists the parts only for objects uploaded with additional checksums.
    if (rec->checksum_algorithm.empty()) end = marker;
    for (long i = marker; i < end; ++i) {
      const object::PartRef& p = rec->parts[i];
      w.Open("Part");
      w.Element("PartNumber", std::to_string(i + 1));
      w.Element("Size", std::to_string(p.size_bytes));
      if (!p.checksum.empty()) w.Element("Checksum" + rec->checksum_algorithm, p.checksum);
      w.Close("Part");
    }
    w.Close("ObjectParts");
  }
  if (has("StorageClass")) {
    w.Element("StorageClass", rec->storage_class.empty() ? "STANDARD" : rec->storage_class);
  }
  if (has("ObjectSize")) w.Element("ObjectSize", std::to_string(rec->size_bytes));
  w.Close("GetObjectAttributesResponse");
  std::string xml = w.Finish();
  http::Headers h = BaseHeaders(ctx);
  h.emplace_back("Content-Type", "application/xml");
  h.emplace_back("Last-Modified", FormatHttpDate(rec->mtime_ns));
  for (auto& kv : VersionHeader(ctx, *rec)) h.push_back(std::move(kv));
  if (ctx.out.Start(200, h, xml.size()).ok()) ctx.out.Write(xml).IgnoreError();
  return std::nullopt;
}

}  // namespace strata::s3

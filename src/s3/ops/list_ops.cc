// ListObjectsV2, ListObjects (V1) and ListObjectVersions.
#include "common/encoding.h"
#include "common/time_util.h"
#include "s3/ops/acl_request.h"
#include "s3/ops/op_context.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

std::string Get(const Route& r, std::string_view name) {
  const std::string* v = r.Query(name);
  return v ? *v : std::string();
}

// max-keys: at most 1000 (AWS's cap); InvalidArgument if not a number.
std::optional<Error> ParseMaxKeys(const Route& r, int* max_keys) {
  const std::string* mk = r.Query("max-keys");
  if (!mk) return std::nullopt;
  if (mk->empty() || mk->size() > 9 || mk->find_first_not_of("0123456789") != std::string::npos) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "Provided max-keys not an integer or within integer range");
  }
  *max_keys = std::min(std::stoi(*mk), 1000);
  return std::nullopt;
}

// encoding-type: true for "url", false when absent, InvalidArgument otherwise.
std::variant<bool, Error> UrlEncoding(const Route& r) {
  std::string encoding = Get(r, "encoding-type");
  if (!encoding.empty() && encoding != "url") {
    return MakeError(ErrorCode::kInvalidArgument, "Invalid Encoding Method specified in Request");
  }
  return encoding == "url";
}

}  // namespace

OpResult ListObjects(OpContext& ctx, bool v2) {
  const Route& r = ctx.route;
  object::ListParams params;
  params.prefix = Get(r, "prefix");
  params.delimiter = Get(r, "delimiter");
  if (auto e = ParseMaxKeys(r, &params.max_keys)) return *e;
  auto encoding = UrlEncoding(r);
  if (auto* e = std::get_if<Error>(&encoding)) return *e;
  const bool url = std::get<bool>(encoding);
  auto enc = [url](const std::string& s) { return url ? UriEncode(s, false) : s; };
  std::string token = Get(r, "continuation-token");
  if (v2) {
    params.start_after = Get(r, "start-after");
    if (!token.empty()) {  // an empty token starts at the beginning (as AWS)
      auto decoded = Base64Decode(token);
      if (!decoded) {
        return MakeError(ErrorCode::kInvalidArgument, "The continuation token provided is incorrect");
      }
      params.start_after = *decoded;
    }
  } else {
    params.start_after = Get(r, "marker");
  }
  auto result = ctx.engine.ListObjects(r.bucket, params);
  if (!result.ok()) return FromStatus(result.status(), ErrorCode::kNoSuchBucket);

  bool fetch_owner = !v2 || Get(r, "fetch-owner") == "true";
  // Each object's owner (the bucket owner's under BucketOwnerEnforced, AWS's default).
  std::optional<object::BucketRecord> bucket;
  if (fetch_owner) {
    auto b = ctx.engine.GetBucket(r.bucket);
    if (!b.ok()) return FromStatus(b.status(), ErrorCode::kNoSuchBucket);
    bucket = std::move(*b);
  }
  XmlWriter w;
  w.Open("ListBucketResult");
  w.Element("Name", r.bucket);
  // V2 encodes Prefix with the keys; V1 returns it as sent (SDKs decode
  // Delimiter, Marker, NextMarker, keys and common prefixes there, not Prefix).
  w.Element("Prefix", v2 ? enc(params.prefix) : params.prefix);
  if (v2) {
    if (r.Has("continuation-token")) w.Element("ContinuationToken", token);
    if (r.Has("start-after")) w.Element("StartAfter", enc(Get(r, "start-after")));
    w.Element("KeyCount", std::to_string(result->objects.size() + result->common_prefixes.size()));
  } else {
    w.Element("Marker", enc(params.start_after));
  }
  w.Element("MaxKeys", std::to_string(params.max_keys));
  if (!params.delimiter.empty()) w.Element("Delimiter", enc(params.delimiter));
  if (url) w.Element("EncodingType", "url");
  w.Element("IsTruncated", result->is_truncated ? "true" : "false");
  if (result->is_truncated) {
    if (v2) w.Element("NextContinuationToken", Base64Encode(result->last_emitted));
    else if (!params.delimiter.empty()) w.Element("NextMarker", enc(result->last_emitted));
  }
  for (const auto& entry : result->objects) {
    w.Open("Contents");
    w.Element("Key", enc(entry.key));
    w.Element("LastModified", FormatIso8601(entry.record.mtime_ns));
    w.Element("ETag", "\"" + entry.record.etag + "\"");
    w.Element("Size", std::to_string(entry.record.size_bytes));
    if (fetch_owner) WriteOwner(ctx, w, "Owner", ObjectOwnerOf(ctx, *bucket, entry.record));
    w.Element("StorageClass",
              entry.record.storage_class.empty() ? "STANDARD" : entry.record.storage_class);
    w.Close("Contents");
  }
  for (const auto& prefix : result->common_prefixes) {
    w.Open("CommonPrefixes");
    w.Element("Prefix", enc(prefix));
    w.Close("CommonPrefixes");
  }
  w.Close("ListBucketResult");
  return SendXml(ctx, w.Finish());
}

// ---- ListObjectVersions ----------------------------------------------------------

OpResult ListObjectVersions(OpContext& ctx) {
  const Route& r = ctx.route;
  object::ListVersionsParams params;
  params.prefix = Get(r, "prefix");
  params.delimiter = Get(r, "delimiter");
  params.key_marker = Get(r, "key-marker");
  params.version_id_marker = Get(r, "version-id-marker");
  if (auto e = ParseMaxKeys(r, &params.max_keys)) return *e;
  if (r.Has("version-id-marker")) {
    if (params.key_marker.empty()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "A version-id marker cannot be specified without a key marker.");
    }
    if (!object::ParseVersionId(params.version_id_marker)) {
      return MakeError(ErrorCode::kInvalidArgument, "Invalid version id specified");
    }
  }
  auto encoding = UrlEncoding(r);
  if (auto* e = std::get_if<Error>(&encoding)) return *e;
  const bool url = std::get<bool>(encoding);
  auto enc = [url](const std::string& s) { return url ? UriEncode(s, false) : s; };
  auto result = ctx.engine.ListVersions(r.bucket, params);
  if (!result.ok()) return FromStatus(result.status(), ErrorCode::kNoSuchBucket);
  auto bucket = ctx.engine.GetBucket(r.bucket);
  if (!bucket.ok()) return FromStatus(bucket.status(), ErrorCode::kNoSuchBucket);
  XmlWriter w;
  w.Open("ListVersionsResult");
  w.Element("Name", r.bucket);
  w.Element("Prefix", enc(params.prefix));
  w.Element("KeyMarker", enc(params.key_marker));
  w.Element("VersionIdMarker", params.version_id_marker);
  if (result->is_truncated) {
    w.Element("NextKeyMarker", enc(result->next_key_marker));
    if (!result->next_version_id_marker.empty()) {
      w.Element("NextVersionIdMarker", result->next_version_id_marker);
    }
  }
  w.Element("MaxKeys", std::to_string(params.max_keys));
  if (!params.delimiter.empty()) w.Element("Delimiter", enc(params.delimiter));
  if (url) w.Element("EncodingType", "url");
  w.Element("IsTruncated", result->is_truncated ? "true" : "false");
  for (const object::VersionEntry& v : result->versions) {
    const object::ObjectRecord& rec = v.record;
    const char* element = rec.delete_marker ? "DeleteMarker" : "Version";
    w.Open(element);
    w.Element("Key", enc(v.key));
    w.Element("VersionId", rec.VersionId());
    w.Element("IsLatest", v.is_latest ? "true" : "false");
    w.Element("LastModified", FormatIso8601(rec.mtime_ns));
    if (!rec.delete_marker) {
      w.Element("ETag", "\"" + rec.etag + "\"");
      w.Element("Size", std::to_string(rec.size_bytes));
      w.Element("StorageClass", rec.storage_class.empty() ? "STANDARD" : rec.storage_class);
    }
    WriteOwner(ctx, w, "Owner", ObjectOwnerOf(ctx, *bucket, rec));
    w.Close(element);
  }
  for (const auto& prefix : result->common_prefixes) {
    w.Open("CommonPrefixes");
    w.Element("Prefix", enc(prefix));
    w.Close("CommonPrefixes");
  }
  w.Close("ListVersionsResult");
  return SendXml(ctx, w.Finish());
}

}  // namespace strata::s3

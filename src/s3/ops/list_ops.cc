// ListObjectsV2 and ListObjects (V1).
#include "common/encoding.h"
#include "common/time_util.h"
#include "s3/ops/op_context.h"
#include "s3/xml.h"

namespace strata::s3 {

namespace {

std::string Get(const Route& r, std::string_view name) {
  const std::string* v = r.Query(name);
  return v ? *v : std::string();
}

}  // namespace

OpResult ListObjects(OpContext& ctx, bool v2) {
  const Route& r = ctx.route;
  object::ListParams params;
  params.prefix = Get(r, "prefix");
  params.delimiter = Get(r, "delimiter");
  if (const std::string* mk = r.Query("max-keys")) {
    if (mk->empty() || mk->size() > 9 || mk->find_first_not_of("0123456789") != std::string::npos) {
      return MakeError(ErrorCode::kInvalidArgument, "Provided max-keys not an integer or within integer range");
    }
    params.max_keys = std::min(std::stoi(*mk), 1000);
  }
  std::string encoding = Get(r, "encoding-type");
  if (!encoding.empty() && encoding != "url") {
    return MakeError(ErrorCode::kInvalidArgument, "Invalid Encoding Method specified in Request");
  }
  bool url = encoding == "url";
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
    if (fetch_owner) {
      w.Open("Owner");
      w.Element("ID", ctx.access_key);
      w.Element("DisplayName", ctx.access_key);
      w.Close("Owner");
    }
    w.Element("StorageClass", "STANDARD");
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

}  // namespace strata::s3

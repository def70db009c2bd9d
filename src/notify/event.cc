#include "notify/event.h"

#include <nlohmann/json.hpp>

#include "common/encoding.h"
#include "common/time_util.h"
#include "object/record.h"

namespace strata::notify {

std::optional<std::string_view> EventOfPut(std::string_view op, const object::ObjectRecord& r) {
  if (r.delete_marker) {
    if (op == "DeleteObject" || op == "DeleteObjects") return "s3:ObjectRemoved:DeleteMarkerCreated";
    if (op == "LifecycleExpiration:DeleteMarkerCreated") {
      return "s3:LifecycleExpiration:DeleteMarkerCreated";
    }
    return std::nullopt;
  }
  if (op == "PutObject") return "s3:ObjectCreated:Put";
  if (op == "PostObject") return "s3:ObjectCreated:Post";
  if (op == "CopyObject") return "s3:ObjectCreated:Copy";
  if (op == "CompleteMultipartUpload") return "s3:ObjectCreated:CompleteMultipartUpload";
  if (op == "PutObjectTagging") return "s3:ObjectTagging:Put";
  if (op == "DeleteObjectTagging") return "s3:ObjectTagging:Delete";
  if (op == "PutObjectAcl") return "s3:ObjectAcl:Put";
  if (op == "RestoreObject") return "s3:ObjectRestore:Post";
  if (op == "RestoreCompleted") return "s3:ObjectRestore:Completed";
  if (op == "RestoreExpired") return "s3:ObjectRestore:Delete";
  if (op == "LifecycleTransition") return "s3:LifecycleTransition";
  return std::nullopt;
}

std::optional<std::string_view> EventOfDelete(std::string_view op) {
  if (op == "DeleteObject" || op == "DeleteObjects") return "s3:ObjectRemoved:Delete";
  if (op == "LifecycleExpiration:Delete") return "s3:LifecycleExpiration:Delete";
  return std::nullopt;
}

namespace {

// "10.0.0.1:5123" -> "10.0.0.1", "[::1]:5123" -> "::1": AWS names the address alone.
std::string AddressOnly(std::string_view source) {
  if (source.starts_with('[')) {
    size_t close = source.find(']');
    return std::string(close == std::string_view::npos ? source : source.substr(1, close - 1));
  }
  size_t colon = source.find(':');
  if (colon != std::string_view::npos && source.find(':', colon + 1) == std::string_view::npos) {
    return std::string(source.substr(0, colon));
  }
  return std::string(source);
}

}  // namespace

std::string RenderEvent(const Event& e, std::string_view configuration_id) {
  using nlohmann::json;
  // As S3 sends it: URL-encoded with '/' kept and spaces as '+'.
  const std::string encoded = UriEncode(e.key, /*encode_slash=*/false);
  std::string key;
  for (std::string_view enc = encoded; !enc.empty();) {
    if (enc.starts_with("%20")) {
      key.push_back('+');
      enc.remove_prefix(3);
    } else {
      key.push_back(enc.front());
      enc.remove_prefix(1);
    }
  }
  json object = {{"key", std::move(key)}, {"sequencer", e.sequencer}};
  if (e.has_size) {
    object["size"] = e.size;
    object["eTag"] = e.etag;
  }
  if (!e.version_id.empty()) object["versionId"] = e.version_id;
  json record = {
      {"eventVersion", "2.1"},
      {"eventSource", "aws:s3"},
      {"awsRegion", e.region},
      {"eventTime", FormatIso8601(e.time_ns)},
      {"eventName", e.name.starts_with("s3:") ? e.name.substr(3) : e.name},
      {"userIdentity", {{"principalId", e.identity}}},
      {"requestParameters", {{"sourceIPAddress", AddressOnly(e.source)}}},
      {"responseElements", {{"x-amz-request-id", e.request_id}, {"x-amz-id-2", e.request_id}}},
      {"s3",
       {{"s3SchemaVersion", "1.0"},
        {"configurationId", std::string(configuration_id)},
        {"bucket",
         {{"name", e.bucket},
          {"ownerIdentity", {{"principalId", e.bucket_owner}}},
          {"arn", "arn:aws:s3:::" + e.bucket}}},
        {"object", std::move(object)}}}};
  if (e.name == "s3:ObjectRestore:Completed") {
    record["glacierEventData"] = {
        {"restoreEventData",
         {{"lifecycleRestorationExpiryTime", FormatIso8601(e.restore_expiry_ns)},
          {"lifecycleRestoreStorageClass", e.storage_class.empty() ? "STANDARD" : e.storage_class}}}};
  }
  if (e.name == "s3:LifecycleTransition") {
    record["lifecycleEventData"] = {
        {"transitionEventData", {{"destinationStorageClass", e.storage_class}}}};
  }
  // Ids come from the client's XML and may hold bytes that are not UTF-8.
  return json{{"Records", json::array({std::move(record)})}}.dump(-1, ' ', false,
                                                                 json::error_handler_t::replace);
}

std::string RenderTestEvent(std::string_view bucket, int64_t time_ns,
                            std::string_view request_id) {
  nlohmann::json doc = {{"Service", "Amazon S3"},          {"Event", "s3:TestEvent"},
                        {"Time", FormatIso8601(time_ns)},   {"Bucket", std::string(bucket)},
                        {"RequestId", std::string(request_id)}, {"HostId", std::string(request_id)}};
  return doc.dump();
}

}  // namespace strata::notify

// AWS server access logging (PutBucketLogging): a bucket's logging settings
// (BucketLoggingStatus, parsed and rendered here), the log record in AWS's
// format, and the delivery of log objects into the target buckets.
//
// Delivery is best effort, as AWS's is: records wait in memory (bounded;
// more are dropped and counted) and every interval go out as one object per
// target, source bucket and flush: TargetPrefix + YYYY-mm-DD-HH-MM-SS-ID
// (SimplePrefix) or TargetPrefix + owner/region/bucket/YYYY/MM/DD/ +
// YYYY-mm-DD-HH-MM-SS-ID (PartitionedPrefix). A crash loses what was not
// delivered yet.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <variant>

#include "common/status.h"

namespace strata::object {
class ObjectEngine;
}

namespace strata::s3 {

struct LoggingTarget {
  std::string bucket;
  std::string prefix;
  bool partitioned = false;  // PartitionedPrefix (else SimplePrefix)
  bool event_time = false;   // PartitionedPrefix by EventTime (else DeliveryTime)
  bool operator==(const LoggingTarget&) const = default;
};

enum class LoggingProblem { kMalformedXml, kInvalidArgument };
struct LoggingError {
  LoggingProblem problem;
  std::string message;
};
// nullopt: logging off (an empty BucketLoggingStatus).
using ParsedLogging = std::variant<std::optional<LoggingTarget>, LoggingError>;
ParsedLogging ParseBucketLoggingStatus(std::string_view xml);
// The document GetBucketLogging returns and the bucket record keeps.
std::string RenderBucketLoggingStatus(const std::optional<LoggingTarget>& t);

struct AccessRecord {
  std::string bucket_owner, bucket;
  int64_t time_ns = 0;
  std::string remote_ip, requester, request_id, operation, key, request_uri;
  int http_status = 0;
  std::string error_code;
  uint64_t bytes_sent = 0;
  std::optional<uint64_t> object_size;
  int64_t total_time_ms = 0, turnaround_time_ms = 0;
  std::string referer, user_agent, version_id, host_id, signature_version, cipher_suite,
      authentication_type, host_header, tls_version;
};
// One line of AWS's server access log format (fields space-separated, "-"
// for none, the request URI, referer and user agent quoted), with '\n'.
std::string FormatAccessRecord(const AccessRecord& r);
// "REST.PUT.OBJECT", "REST.GET.BUCKET", "REST.GET.ACL", "REST.COPY.OBJECT",
// "REST.POST.MULTI_OBJECT_DELETE", ... for a request.
std::string AccessOperation(std::string_view method, bool has_key, std::string_view raw_query,
                            bool copy);

class AccessLogDelivery {
 public:
  AccessLogDelivery(object::ObjectEngine* engine, std::string region, int64_t interval_ns,
                    size_t max_buffered_bytes = 64 << 20);
  ~AccessLogDelivery();

  // Queues one record of `source_bucket` (owned by `owner`) for `target`.
  void Append(const LoggingTarget& target, const std::string& source_bucket,
              const std::string& owner, std::string line);
  // Delivers what is queued now. The first error, if any (those records are lost).
  Status Flush();
  void Start();
  void Stop();  // flushes once more
  uint64_t dropped() const { return dropped_.load(); }
  uint64_t delivered_objects() const { return objects_.load(); }

 private:
  struct Batch {
    std::string owner;
    std::string lines;
    int64_t first_ns = 0;
  };
  using Key = std::tuple<std::string, std::string, bool, bool, std::string>;  // target, source
  Status Deliver(const Key& key, const Batch& batch);

  object::ObjectEngine* engine_;
  std::string region_;
  int64_t interval_ns_;
  size_t max_buffered_;
  std::mutex mu_;
  std::map<Key, Batch> batches_;
  size_t buffered_ = 0;
  std::atomic<uint64_t> dropped_{0}, objects_{0};
  std::mutex flush_mu_;
  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace strata::s3

// What every S3 operation receives: the parsed request, its route, the
// (already authenticated, decoded) body, the response writer and the engine.
// Operations write the success response themselves and return an Error
// value otherwise; service.cc renders errors in one place.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "auth/identities.h"
#include "auth/sigv4.h"
#include "common/byte_source.h"
#include "http/request.h"
#include "object/engine.h"
#include "s3/admin_api.h"
#include "s3/errors.h"
#include "s3/router.h"

namespace strata::audit {
class AuditLog;
}
namespace strata::energy {
class Meter;
}
namespace strata::kms {
class KeyService;
}
namespace strata::tier {
class ClassMap;
class Restorer;
}

namespace strata::metrics {
class Registry;
}

namespace strata::s3 {

struct ServiceConfig {
  std::string region = "us-east-1";
  // Set: every request is counted there (strata_s3_* families; null: none).
  metrics::Registry* metrics = nullptr;
  // One JSON line per request on the log (common/log.h): who, what, result.
  bool access_log = false;
  // Set: the audit trail. Changes get their records through the store the
  // engine writes to; the service adds one for every request that changed
  // nothing but was denied or meant to change something.
  audit::AuditLog* audit = nullptr;
  // Set: each request's thread CPU time and bytes go to its bucket's and
  // identity's energy figures (energy/meter.h).
  energy::Meter* energy = nullptr;
  // Set: requests to buckets with PutBucketLogging on leave a record there
  // (s3/access_log.h); null: logging settings are kept but nothing is delivered.
  class AccessLogDelivery* access_logs = nullptr;
  std::string domain;
  bool sigv2 = true;  // accept AWS Signature Version 2 (header, query, POST forms)
  uint64_t max_object_bytes = 5ull << 30;  // single PUT limit, as AWS
  // Set by Service from its secret lookup: POST Object verifies its form
  // signature itself (the request has no Authorization header).
  auth::SecretLookup secrets;
  AdminApi* admin = nullptr;  // null: the admin API answers NotImplemented
  // Who may sign requests and their policies (required).
  auth::IdentityStore* identities = nullptr;
  // Set by Service: bucket policies and CORS rules, decoded (s3/bucket_configs.h).
  class BucketConfigs* bucket_configs = nullptr;
  // The key service of SSE-S3 and SSE-KMS (null: encrypted writes and reads
  // answer NotImplemented).
  kms::KeyService* kms = nullptr;
  // SSE-C keys accepted over plain HTTP (tests only; AWS requires HTTPS).
  bool sse_c_over_http = false;
  // Storage classes -> pools (tier/classes.h); null: one pool for all.
  const tier::ClassMap* classes = nullptr;
  // RestoreObject's worker (null: RestoreObject answers NotImplemented).
  tier::Restorer* restorer = nullptr;
  // The webhook targets of the config file ([notify.webhook.ID]) that
  // notification configurations may name (notify/config.h); none: every
  // QueueConfiguration is refused.
  std::vector<std::string> notify_targets;
  // The length of a lifecycle "day" (x-amz-expiration; tests shorten it).
  int64_t lifecycle_day_ns = 86400ll * 1'000'000'000;
  // Set: every GetObject answered 200/206 is reported with the bytes sent
  // (the tier advisor's access statistics, advisor/access_stats.h). Called
  // on the request's thread after the answer; must be cheap.
  std::function<void(std::string_view bucket, std::string_view key, uint64_t bytes)> on_read;
};

struct OpContext {
  const http::Request& http;
  const Route& route;
  ByteSource& body;
  http::ResponseWriter& out;
  object::ObjectEngine& engine;
  const ServiceConfig& config;
  std::string request_id;
  std::string access_key;  // "" for anonymous requests
  // Who signed the request (never null: the anonymous caller when unsigned)
  // and how (nullptr for POST forms, which PostObject verifies itself).
  std::shared_ptr<const auth::Caller> caller;
  const auth::AuthContext* auth = nullptr;
  // Trailing headers of an aws-chunked body (filled once the body is read).
  const std::vector<std::pair<std::string, std::string>>* trailers = nullptr;
};

using OpResult = std::optional<Error>;

// Headers every response carries (request id, date, server).
http::Headers BaseHeaders(const OpContext& ctx);
// Sends a 200 (or `status`) XML document; errors writing mean the client left.
OpResult SendXml(OpContext& ctx, const std::string& xml, int status = 200,
                 const http::Headers& extra = {});
// Sends an empty response with the given status and extra headers.
OpResult SendEmpty(OpContext& ctx, int status, http::Headers headers = {});
// Reads a small request body (XML) fully, refusing more than max_bytes.
std::variant<std::string, Error> ReadSmallBody(OpContext& ctx, size_t max_bytes);

// Owner / Initiator elements: <ID> the canonical id, <DisplayName> its
// identity's name ("root", the user name; the id itself when nobody has it).
class XmlWriter;
void WriteOwner(const OpContext& ctx, XmlWriter& w, std::string_view element,
                const std::string& canonical_id);
// A bucket's owner as a canonical id (records before canonical ids named
// the root's access key: those are root's).
std::string BucketOwnerId(const OpContext& ctx, const object::BucketRecord& bucket);
// The same from BucketRecord::owner as stored.
std::string BucketOwnerId(const OpContext& ctx, const std::string& stored_owner);

// The request's bucket record, or NoSuchBucket (the bucket configuration calls).
std::variant<object::BucketRecord, Error> BucketOf(OpContext& ctx);

// NoSuchBucket if the bucket is gone, else NoSuchKey.
Error NotFoundError(OpContext& ctx);

// The handler of every operation in the table (s3/router.h), one per row:
// OpResult ListBuckets(OpContext&), ..., OpResult Admin(OpContext&).
#define STRATA_S3_OP_HANDLER(name, action, source_action) OpResult name(OpContext& ctx);
STRATA_S3_OPERATIONS(STRATA_S3_OP_HANDLER)
#undef STRATA_S3_OP_HANDLER

// Runs the handler of ctx.route.op (s3/operations.cc).
OpResult Dispatch(OpContext& ctx);

// Implementations shared by several rows (the rows' handlers call them).
OpResult ListObjects(OpContext& ctx, bool v2);
OpResult GetObject(OpContext& ctx, bool head);
OpResult UploadPart(OpContext& ctx, bool copy);

}  // namespace strata::s3

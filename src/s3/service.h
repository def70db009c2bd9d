// The S3 front end: authenticates a request, routes it to its operation and
// renders every error as S3 XML. Plugs into http::Server as its handler.
#pragma once

#include <atomic>
#include <memory>

#include "audit/context.h"
#include "auth/sigv4.h"
#include "http/request.h"
#include "object/engine.h"
#include "s3/ops/op_context.h"

namespace strata::s3 {

class BucketConfigs;

class Service {
 public:
  // config.identities is required: it verifies signatures and names callers.
  Service(object::ObjectEngine* engine, ServiceConfig config);
  ~Service();

  void Handle(const http::Request& req, ByteSource& body, http::ResponseWriter& out);
  void HandleProtocolError(http::ProtocolError error, http::ResponseWriter& out);
  // The buckets' compiled policies (and CORS rules), shared with the KV
  // tier's namespace rights so both read one copy, compiled once.
  BucketConfigs& bucket_configs() { return *bucket_configs_; }

 private:
  struct Meters;
  // What the metrics and the access log say of a request, filled in as it
  // is routed and authenticated.
  struct Facts {
    audit::Actor actor;      // operation, identity, request id, bucket, key
    std::string error_code;  // the S3 error code answered, if any
  };
  void HandleRequest(const http::Request& req, ByteSource& body, http::ResponseWriter& out,
                     Facts* facts);
  void AuditUnchanged(const http::Request& req, const Facts& facts, int status);
  void LogAccess(const http::Request& req, const Facts& facts, int status, uint64_t bytes_out,
                 uint64_t bytes_in, double seconds);
  std::string NextRequestId();
  void SendError(const Error& error, const http::Request* req, std::string_view resource,
                 const std::string& request_id, http::ResponseWriter& out,
                 Facts* facts = nullptr);

  object::ObjectEngine* engine_;
  auth::Verifier verifier_;
  ServiceConfig config_;
  std::unique_ptr<BucketConfigs> bucket_configs_;
  std::string id_prefix_;
  std::atomic<uint64_t> next_id_{0};
  std::unique_ptr<Meters> meters_;  // with config.metrics
};

}  // namespace strata::s3

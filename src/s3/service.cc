#include "s3/service.h"

#include <chrono>
#include <cstdio>

#include "auth/aws_chunked.h"
#include "audit/log.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/time_util.h"
#include "energy/meter.h"
#include "s3/access.h"
#include "s3/access_log.h"
#include "s3/bucket_configs.h"
#include "s3/cors.h"
#include "s3/ops/object_write.h"
#include "s3/ops/sse.h"
#include "s3/post_policy.h"

namespace strata::s3 {

namespace {

// Verifies the body against the SHA-256 the client signed, at end of stream.
class Sha256CheckingSource : public ByteSource {
 public:
  Sha256CheckingSource(ByteSource* inner, std::string expected_hex)
      : inner_(inner), expected_hex_(std::move(expected_hex)) {}
  Result<size_t> Read(char* buf, size_t n) override {
    auto r = inner_->Read(buf, n);
    if (!r.ok()) return r;
    if (*r > 0) {
      hash_.Update(buf, *r);
    } else if (!checked_) {
      checked_ = true;
      if (HexEncode(hash_.Final()) != expected_hex_) {
        return Corruption("x-amz-content-sha256 does not match the body");
      }
    }
    return r;
  }

 private:
  ByteSource* inner_;
  std::string expected_hex_;
  StreamHash hash_{StreamHash::Kind::kSha256};
  bool checked_ = false;
};

// A response writer that adds headers to whatever the operation answers
// (errors included): the CORS headers of an allowed cross-origin request.
class HeaderAddingWriter : public http::ResponseWriter {
 public:
  HeaderAddingWriter(http::ResponseWriter& inner, http::Headers extra)
      : inner_(inner), extra_(std::move(extra)) {}
  Status Start(int status, const http::Headers& headers, uint64_t content_length,
               bool send_body) override {
    http::Headers h = headers;
    h.insert(h.end(), extra_.begin(), extra_.end());
    return inner_.Start(status, h, content_length, send_body);
  }
  Status Write(std::string_view data) override { return inner_.Write(data); }
  bool can_send_file() const override { return inner_.can_send_file(); }
  Status SendFile(int fd, uint64_t offset, uint64_t n) override {
    return inner_.SendFile(fd, offset, n);
  }
  bool started() const override { return inner_.started(); }
  void CloseAfterResponse() override { inner_.CloseAfterResponse(); }

 private:
  http::ResponseWriter& inner_;
  http::Headers extra_;
};

auth::VerifierOptions VerifierOptionsOf(const ServiceConfig& config) {
  auth::VerifierOptions options;
  options.domain = config.domain;
  options.sigv2 = config.sigv2;
  return options;
}

}  // namespace

auth::SecretLookup SecretsOf(auth::IdentityStore* identities) {
  return [identities](std::string_view access_key) { return identities->Secret(access_key); };
}

Service::Service(object::ObjectEngine* engine, ServiceConfig config)
    : engine_(engine),
      verifier_(SecretsOf(config.identities), VerifierOptionsOf(config)),
      config_(std::move(config)),
      bucket_configs_(std::make_unique<BucketConfigs>(engine)) {
  config_.secrets = SecretsOf(config_.identities);  // for POST Object's form signature
  config_.bucket_configs = bucket_configs_.get();
  id_prefix_ = HexEncode(RandomBytes(4));
  for (char& c : id_prefix_) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (config_.metrics) meters_ = std::make_unique<Meters>(*config_.metrics);
}

std::string Service::NextRequestId() {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%s%08llX", id_prefix_.c_str(),
                static_cast<unsigned long long>(next_id_.fetch_add(1)));
  return buf;
}

void Service::SendError(const Error& error, const http::Request* req, std::string_view resource,
                        const std::string& request_id, http::ResponseWriter& out, Facts* facts) {
  if (facts) facts->error_code = std::string(error.CodeString());
  if (out.started()) {  // too late for a status: cut the connection instead
    out.CloseAfterResponse();
    return;
  }
  http::Headers h = {{"x-amz-request-id", request_id},
                     {"x-amz-id-2", request_id},
                     {"Date", FormatHttpDate(UnixNowNs())},
                     {"Server", "strata"},
                     {"Content-Type", "application/xml"}};
  h.insert(h.end(), error.headers.begin(), error.headers.end());
  bool head = req && req->method == "HEAD";
  std::string xml = RenderErrorXml(error, resource, request_id);
  if (error.HttpStatus() >= 500) {
    STRATA_LOG("%d %s on %s %s", error.HttpStatus(), std::string(error.CodeString()).c_str(),
               req ? req->method.c_str() : "-", req ? req->target.c_str() : "-");
  }
  if (head) {
    out.Start(error.HttpStatus(), h, 0, false).IgnoreError();
    return;
  }
  if (out.Start(error.HttpStatus(), h, xml.size()).ok()) out.Write(xml).IgnoreError();
}

void Service::HandleProtocolError(http::ProtocolError error, http::ResponseWriter& out) {
  using PE = http::ProtocolError;
  Error e = MakeError(ErrorCode::kInvalidRequest, "Malformed HTTP request");
  switch (error) {
    case PE::kHeaderTooLarge: e = MakeError(ErrorCode::kRequestHeaderSectionTooLarge); break;
    case PE::kTimeout:
      e = MakeError(ErrorCode::kRequestTimeout,
                    "Your socket connection to the server was not read from or written to "
                    "within the timeout period.");
      break;
    case PE::kBadFraming:
      e = MakeError(ErrorCode::kInvalidRequest,
                    "Transfer-Encoding must end in chunked and cannot be combined with "
                    "Content-Length.");
      break;
    case PE::kUnsupportedTransferCoding:
      e = MakeError(ErrorCode::kNotImplemented,
                    "A header you provided implies functionality that is not implemented: "
                    "Transfer-Encoding other than chunked.");
      break;
    case PE::kOverloaded: e = MakeError(ErrorCode::kSlowDown); break;
    case PE::kMalformed:
    case PE::kUnsupportedMethod: break;
  }
  SendError(e, nullptr, "", NextRequestId(), out);
}

// What every request adds to the metrics: counted by operation and status,
// timed, its bytes in and out.
struct Service::Meters {
  explicit Meters(metrics::Registry& r)
      : requests(r.AddCounter("strata_s3_requests_total",
                              "S3 requests answered, by operation and HTTP status.",
                              {"operation", "code"})),
        duration(r.AddHistogram("strata_s3_request_duration_seconds",
                                "Time from the request head to the end of the response.",
                                {"operation"}, metrics::LatencyBuckets())),
        received(r.AddCounter("strata_s3_received_bytes_total",
                              "Request body bytes read (as sent, before aws-chunked decoding).",
                              {"operation"})),
        sent(r.AddCounter("strata_s3_sent_bytes_total", "Response body bytes written.",
                          {"operation"})),
        in_flight(r.AddGauge("strata_s3_requests_in_flight", "S3 requests being handled.")
                      .With({})) {}
  metrics::Family<metrics::Counter>& requests;
  metrics::Family<metrics::Histogram>& duration;
  metrics::Family<metrics::Counter>& received;
  metrics::Family<metrics::Counter>& sent;
  metrics::Gauge& in_flight;
};

namespace {

class CountingWriter : public http::ResponseWriter {
 public:
  explicit CountingWriter(http::ResponseWriter& inner) : inner_(inner) {}
  Status Start(int status, const http::Headers& headers, uint64_t content_length,
               bool send_body) override {
    status_ = status;
    return inner_.Start(status, headers, content_length, send_body);
  }
  Status Write(std::string_view data) override {
    bytes_ += data.size();
    return inner_.Write(data);
  }
  bool can_send_file() const override { return inner_.can_send_file(); }
  Status SendFile(int fd, uint64_t offset, uint64_t n) override {
    bytes_ += n;  // as Write: what the response tried to send
    return inner_.SendFile(fd, offset, n);
  }
  bool started() const override { return inner_.started(); }
  void CloseAfterResponse() override { inner_.CloseAfterResponse(); }
  int status() const { return status_; }
  uint64_t bytes() const { return bytes_; }

 private:
  http::ResponseWriter& inner_;
  int status_ = 0;  // 0: no response was started (the connection was cut)
  uint64_t bytes_ = 0;
};

class CountingSource : public ByteSource {
 public:
  explicit CountingSource(ByteSource& inner) : inner_(inner) {}
  Result<size_t> Read(char* buf, size_t n) override {
    auto r = inner_.Read(buf, n);
    if (r.ok()) bytes_ += *r;
    return r;
  }
  uint64_t bytes() const { return bytes_; }
  const uint64_t* counter() const { return &bytes_; }

 private:
  ByteSource& inner_;
  uint64_t bytes_ = 0;
};

}  // namespace

void Service::Handle(const http::Request& req, ByteSource& raw_body,
                     http::ResponseWriter& raw_out) {
  if (!meters_ && !config_.access_log && !config_.audit && !config_.energy &&
      !config_.access_logs && !config_.on_read) {
    return HandleRequest(req, raw_body, raw_out, nullptr);
  }
  const auto start = std::chrono::steady_clock::now();
  if (meters_) meters_->in_flight.Add(1);
  CountingSource body(raw_body);
  CountingWriter out(raw_out);
  Facts facts;
  audit::Actor& actor = facts.actor;
  actor.source = req.remote_addr;
  actor.bytes_in = body.counter();
  {
    // Every synced metadata batch of this request carries its audit record.
    std::optional<audit::Scope> scope;
    if (config_.audit) scope.emplace(&actor);
    HandleRequest(req, body, out, &facts);
  }
  if (config_.audit && actor.changes == 0) AuditUnchanged(req, facts, out.status());
  if (config_.energy) {
    config_.energy->Record({{energy::WorkloadKind::kBucket, actor.bucket},
                            {energy::WorkloadKind::kIdentity, actor.identity}},
                           energy::TakeThreadCpuSeconds(), body.bytes() + out.bytes());
  }
  if (config_.on_read && (out.status() == 200 || out.status() == 206) &&
      actor.operation == OpName(Op::kGetObject)) {
    config_.on_read(actor.bucket, actor.key, out.bytes());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (config_.access_logs && !actor.bucket.empty()) {
    LogAccess(req, facts, out.status(), out.bytes(), body.bytes(), seconds);
  }
  if (meters_) {
    meters_->in_flight.Add(-1);
    const std::string name(actor.operation);
    meters_->requests.With({name, std::to_string(out.status())}).Add();
    meters_->duration.With({name}).Observe(seconds);
    if (body.bytes() > 0) meters_->received.With({name}).Add(static_cast<double>(body.bytes()));
    if (out.bytes() > 0) meters_->sent.With({name}).Add(static_cast<double>(out.bytes()));
  }
  if (config_.access_log) {
    const std::string* agent = req.Header("user-agent");
    char ms[32];
    std::snprintf(ms, sizeof(ms), "%.3f", seconds * 1000);
    LogJson("\"type\":\"access\",\"request_id\":" + JsonString(actor.request_id) +
            ",\"remote\":" + JsonString(req.remote_addr) +
            ",\"identity\":" + JsonString(actor.identity) +
            ",\"operation\":" + JsonString(actor.operation) + ",\"method\":" + JsonString(req.method) +
            ",\"bucket\":" + JsonString(actor.bucket) + ",\"key\":" + JsonString(actor.key) +
            ",\"status\":" + std::to_string(out.status()) +
            ",\"bytes_in\":" + std::to_string(body.bytes()) +
            ",\"bytes_out\":" + std::to_string(out.bytes()) + ",\"duration_ms\":" + ms +
            ",\"tls\":" + (req.secure ? "true" : "false") +
            ",\"user_agent\":" + JsonString(agent ? *agent : ""));
  }
}

// One record of AWS's server access log for a request to a bucket that has
// logging on (s3/access_log.h).
void Service::LogAccess(const http::Request& req, const Facts& facts, int status,
                        uint64_t bytes_out, uint64_t bytes_in, double seconds) {
  const audit::Actor& actor = facts.actor;
  std::shared_ptr<const BucketConfig> config = bucket_configs_->Get(actor.bucket);
  if (!config || !config->logging) return;
  AccessRecord r;
  r.bucket_owner = config->owner;
  r.bucket = actor.bucket;
  r.time_ns = UnixNowNs();
  r.remote_ip = req.remote_addr;
  if (r.remote_ip.starts_with('[')) {
    r.remote_ip = r.remote_ip.substr(1, r.remote_ip.find(']') - 1);
  } else if (size_t colon = r.remote_ip.rfind(':'); colon != std::string::npos) {
    r.remote_ip.resize(colon);
  }
  r.requester = actor.identity;
  r.request_id = actor.request_id;
  r.host_id = actor.request_id;
  r.operation = AccessOperation(req.method, !actor.key.empty(), req.raw_query,
                                req.Header("x-amz-copy-source") != nullptr);
  r.key = actor.key;
  r.request_uri = req.method + " " + req.target + " HTTP/1.1";
  r.http_status = status;
  r.error_code = facts.error_code;
  r.bytes_sent = bytes_out;
  if (req.method == "PUT" && !actor.key.empty() && status == 200) r.object_size = bytes_in;
  r.total_time_ms = static_cast<int64_t>(seconds * 1000);
  r.turnaround_time_ms = r.total_time_ms;
  if (const std::string* h = req.Header("referer")) r.referer = *h;
  if (const std::string* h = req.Header("user-agent")) r.user_agent = *h;
  if (const std::string* h = req.Header("host")) r.host_header = *h;
  const std::string* auth = req.Header("authorization");
  if (auth && auth->starts_with("AWS4-")) {
    r.signature_version = "SigV4";
    r.authentication_type = "AuthHeader";
  } else if (auth && auth->starts_with("AWS ")) {
    r.signature_version = "SigV2";
    r.authentication_type = "AuthHeader";
  } else if (req.raw_query.find("X-Amz-Signature=") != std::string::npos) {
    r.signature_version = "SigV4";
    r.authentication_type = "QueryString";
  } else if (req.raw_query.find("Signature=") != std::string::npos) {
    r.signature_version = "SigV2";
    r.authentication_type = "QueryString";
  }
  if (req.secure) r.tls_version = "TLS";
  config_.access_logs->Append(*config->logging, actor.bucket, config->owner,
                              FormatAccessRecord(r));
}

// A request that wrote no change record: denied ones (any operation) and
// those meant to change something (PUT, POST, DELETE) get a record of their
// own with the answer's status and S3 error code.
void Service::AuditUnchanged(const http::Request& req, const Facts& facts, int status) {
  const bool denied = status == 401 || status == 403;
  const bool mutating = req.method != "GET" && req.method != "HEAD" && req.method != "OPTIONS";
  if (!denied && !mutating) return;
  // The S3 error code answered; else OK, or what the status says without one.
  std::string result = facts.error_code;
  if (result.empty()) {
    result = status == 0 ? "ConnectionClosed" : status < 300 ? "OK" : "HTTP" + std::to_string(status);
  }
  config_.audit->RecordRequest(facts.actor, denied ? audit::Kind::kDenied : audit::Kind::kRequest,
                               result, status);
}

void Service::HandleRequest(const http::Request& req, ByteSource& raw_body,
                            http::ResponseWriter& raw_out, Facts* facts) {
  std::string request_id = NextRequestId();
  if (facts) facts->actor.request_id = request_id;
  std::string resource = req.raw_path;
  auto routed = RouteRequest(req, RouterConfig{config_.domain});
  if (auto* e = std::get_if<Error>(&routed)) {
    return SendError(*e, &req, resource, request_id, raw_out, facts);
  }
  const Route& route = std::get<Route>(routed);
  if (facts) {
    facts->actor.operation = OpName(route.op);
    facts->actor.bucket = route.bucket;
    facts->actor.key = route.key;
  }

  // A cross-origin request a CORS rule of the bucket allows: every answer,
  // an error too, carries the rule's Access-Control-* headers.
  std::optional<HeaderAddingWriter> cors_out;
  const std::string* origin = req.Header("origin");
  if (origin && !route.bucket.empty() && route.op != Op::kPreflightCors) {
    auto bucket_config = bucket_configs_->Get(route.bucket);
    if (bucket_config && !bucket_config->cors.empty()) {
      if (const CorsRule* rule = MatchCors(bucket_config->cors, *origin, req.method)) {
        cors_out.emplace(raw_out, CorsHeaders(*rule, *origin, /*preflight=*/false));
      }
    }
  }
  http::ResponseWriter& out = cors_out ? static_cast<http::ResponseWriter&>(*cors_out) : raw_out;

  // A browser upload (POST Object) is signed in its form, not in headers or
  // the query: PostObject verifies it; the body is read as sent.
  const std::string* content_type = req.Header("content-type");
  const bool form_post =
      route.op == Op::kPostObject && content_type && IsMultipartFormData(*content_type);
  auth::AuthContext auth_ctx;
  std::shared_ptr<const auth::Caller> caller = config_.identities->Anonymous();
  bool signed_request = false;
  // A CORS preflight is never authenticated (browsers send it without
  // credentials), but it carries the query of the request it asks about: a
  // presigned PUT's X-Amz-Signature, made for PUT, not for OPTIONS. Verifying
  // it would refuse every presigned browser upload (the rules decide).
  const bool preflight = route.op == Op::kPreflightCors;
  if (!form_post && !preflight) {
    auth::RequestView view{req.method, req.raw_path, req.raw_query, &req.headers, &req.Query()};
    auto verified = verifier_.Verify(view, UnixNowNs() / 1000000000);
    if (auto* e = std::get_if<auth::AuthError>(&verified)) {
      // No credentials at all: an anonymous request, which only a bucket
      // policy can allow (s3/access.h decides). Any broken credential fails.
      if (e->kind != auth::AuthErrorKind::kMissing) {
        return SendError(FromAuthError(*e), &req, resource, request_id, out, facts);
      }
    } else {
      auth_ctx = std::move(std::get<auth::AuthContext>(verified));
      signed_request = true;
      if (facts) facts->actor.identity = auth_ctx.access_key;
      caller = config_.identities->Resolve(auth_ctx.access_key);
      if (!caller) {  // disabled between the secret lookup and here
        return SendError(MakeError(ErrorCode::kInvalidAccessKeyId), &req, resource, request_id,
                         out, facts);
      }
    }
  }

  // The body the operation reads: decoded and verified per the payload mode.
  ByteSource* body = &raw_body;
  std::unique_ptr<ByteSource> wrapper;
  switch (auth_ctx.payload_mode) {
    case auth::PayloadMode::kSignedPayload:
      wrapper = std::make_unique<Sha256CheckingSource>(body, auth_ctx.payload_sha256_hex);
      break;
    case auth::PayloadMode::kStreamingSigned:
    case auth::PayloadMode::kStreamingSignedTrailer:
    case auth::PayloadMode::kStreamingUnsignedTrailer: {
      const std::string* decoded = req.Header("x-amz-decoded-content-length");
      if (!decoded) {
        return SendError(MakeError(ErrorCode::kMissingContentLength,
                                   "x-amz-decoded-content-length is required for aws-chunked"),
                         &req, resource, request_id, out, facts);
      }
      uint64_t length = std::strtoull(decoded->c_str(), nullptr, 10);
      wrapper = std::make_unique<auth::AwsChunkedSource>(body, auth_ctx, length);
      break;
    }
    case auth::PayloadMode::kUnsignedPayload:
      break;
  }
  if (wrapper) body = wrapper.get();

  OpContext ctx{req, route, *body, out, *engine_, config_, request_id, auth_ctx.access_key};
  ctx.caller = std::move(caller);
  ctx.auth = signed_request ? &auth_ctx : nullptr;
  if (auto* chunked = dynamic_cast<auth::AwsChunkedSource*>(wrapper.get())) {
    ctx.trailers = &chunked->trailers();
  }
  OpResult result;
  try {
    result = AuthorizeRequest(ctx);
    if (!result && !HandlesEncryptionHeaders(route.op)) result = RefuseEncryptionHeaders(req.headers);
    if (!result) result = Dispatch(ctx);
  } catch (const std::exception& e) {
    STRATA_LOG("operation threw on %s %s: %s", req.method.c_str(), req.target.c_str(), e.what());
    result = MakeError(ErrorCode::kInternalError);
  }
  if (result) SendError(*result, &req, resource, request_id, out, facts);
}

Service::~Service() = default;

}  // namespace strata::s3

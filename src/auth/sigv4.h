// AWS Signature Version 4 for S3: verification of the Authorization header and
// of presigned query URLs, plus the streaming aws-chunked body decoder that
// verifies every chunk signature. Pure logic over a RequestView: no sockets.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "common/byte_source.h"
#include "common/status.h"

namespace strata::auth {

// What auth needs to know about an HTTP request.
struct RequestView {
  std::string_view method;     // "GET"
  std::string_view raw_path;   // as sent on the wire, still percent-encoded: "/bucket/a%20b"
  std::string_view raw_query;  // after '?', as sent, percent-encoded; "" if none
  // Header names lowercase; values as received (auth trims/collapses them itself).
  const std::vector<std::pair<std::string, std::string>>* headers;
};

// Looks up the secret key of an access key; nullopt if unknown.
using SecretLookup = std::function<std::optional<std::string>(std::string_view access_key)>;

enum class PayloadMode {
  kUnsignedPayload,           // x-amz-content-sha256: UNSIGNED-PAYLOAD (or presigned)
  kSignedPayload,             // x-amz-content-sha256: <hex sha256>, body verified by caller
  kStreamingSigned,           // STREAMING-AWS4-HMAC-SHA256-PAYLOAD
  kStreamingSignedTrailer,    // STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER
  kStreamingUnsignedTrailer,  // STREAMING-UNSIGNED-PAYLOAD-TRAILER
};

enum class AuthErrorKind {
  kMissing,                  // no credentials at all -> AccessDenied
  kMalformedHeader,          // AuthorizationHeaderMalformed
  kMalformedQuery,           // AuthorizationQueryParametersError
  kUnsupportedAlgorithm,     // e.g. AWS4-ECDSA or SigV2 -> InvalidRequest / NotImplemented
  kInvalidAccessKeyId,       // InvalidAccessKeyId
  kSignatureDoesNotMatch,    // SignatureDoesNotMatch
  kRequestTimeTooSkewed,     // RequestTimeTooSkewed (header auth, > 15 min)
  kExpired,                  // presigned URL expired -> AccessDenied "Request has expired"
  kMissingDate,              // no x-amz-date/date -> AccessDenied
  kInvalidContentSha256,     // x-amz-content-sha256 missing/invalid -> InvalidArgument
};

struct AuthError {
  AuthErrorKind kind;
  std::string message;
};

// Everything later stages need once the request is authenticated.
struct AuthContext {
  std::string access_key;
  PayloadMode payload_mode = PayloadMode::kUnsignedPayload;
  std::string payload_sha256_hex;  // for kSignedPayload
  bool presigned = false;
  // Streaming: the seed signature (from the Authorization header), the
  // derived signing key, the x-amz-date timestamp and the credential scope.
  std::string seed_signature_hex;
  std::string signing_key;  // 32 raw bytes
  std::string amz_date;     // 20130524T000000Z
  std::string scope;        // 20130524/us-east-1/s3/aws4_request
};

class Verifier {
 public:
  // `region` is what the server calls itself; signatures are accepted for any
  // region named in the credential scope (clients sign with their configured
  // region), but the service must be "s3".
  Verifier(SecretLookup secrets, int64_t max_skew_seconds = 15 * 60);

  // now_unix: current time in seconds. Returns the context or the reason.
  std::variant<AuthContext, AuthError> Verify(const RequestView& req, int64_t now_unix);

 private:
  std::string SigningKey(std::string_view secret, std::string_view date,
                         std::string_view region, std::string_view service);
  SecretLookup secrets_;
  int64_t max_skew_seconds_;
  std::mutex cache_mu_;
  std::unordered_map<std::string, std::string> key_cache_;  // secret|date|region|service -> key
};

// Decodes an aws-chunked body (STREAMING-AWS4-HMAC-SHA256-PAYLOAD and the two
// -TRAILER variants) from `raw`, verifying each chunk signature (signed modes)
// and, at the end, the trailer signature. Reading returns the decoded payload.
// Errors follow byte_source.h (kPermissionDenied for a bad chunk signature,
// kInvalidArgument for malformed framing, kOutOfRange when the decoded length
// differs from x-amz-decoded-content-length).
// Trailing headers (e.g. x-amz-checksum-crc32) are collected in trailers().
class AwsChunkedSource : public ByteSource {
 public:
  AwsChunkedSource(ByteSource* raw, const AuthContext& ctx, uint64_t decoded_length);
  Result<size_t> Read(char* buf, size_t n) override;
  const std::vector<std::pair<std::string, std::string>>& trailers() const { return trailers_; }

 private:
  struct State;
  ByteSource* raw_;
  AuthContext ctx_;
  uint64_t decoded_length_;
  uint64_t produced_ = 0;
  std::vector<std::pair<std::string, std::string>> trailers_;
  std::shared_ptr<State> state_;
};

// Builds the canonical request / string to sign (exposed for tests and for
// the benchmark's signing client).
std::string CanonicalUri(std::string_view raw_path);
std::string CanonicalQuery(std::string_view raw_query, bool drop_signature);
std::string DeriveSigningKey(std::string_view secret, std::string_view date,
                             std::string_view region, std::string_view service);

}  // namespace strata::auth

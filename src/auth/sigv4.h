// Request authentication for S3: the Verifier checks AWS Signature Version 4
// (Authorization header and presigned query URLs) and, unless switched off,
// Signature Version 2 (sigv2.h). Signed aws-chunked bodies are decoded by
// aws_chunked.h. Pure logic over a RequestView: no sockets.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "auth/credentials.h"
#include "common/query_string.h"
#include "common/status.h"

namespace strata::auth {

// What auth needs to know about an HTTP request.
struct RequestView {
  std::string_view method;     // "GET"
  std::string_view raw_path;   // as sent on the wire, still percent-encoded: "/bucket/a%20b"
  std::string_view raw_query;  // after '?', as sent, percent-encoded; "" if none
  // Header names lowercase; values as received (auth trims/collapses them itself).
  const std::vector<std::pair<std::string, std::string>>* headers;
  // raw_query parsed, when the caller has parsed it already (the service
  // parses each request's query once); nullptr: Verify parses raw_query.
  const QueryString* query = nullptr;
};

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
  kUnsupportedAlgorithm,     // e.g. AWS4-ECDSA, or SigV2 when it is off -> InvalidRequest
  kInvalidAccessKeyId,       // InvalidAccessKeyId
  kSignatureDoesNotMatch,    // SignatureDoesNotMatch
  kRequestTimeTooSkewed,     // RequestTimeTooSkewed (header auth, > 15 min)
  kExpired,                  // presigned URL expired (or X-Amz-Expires=0) -> AccessDenied
  kNotYetValid,              // presigned URL dated ahead -> AccessDenied "Request is not valid yet"
  kMissingDate,              // no x-amz-date/date -> AccessDenied
  kInvalidContentSha256,     // x-amz-content-sha256 missing/invalid -> InvalidArgument
  kHeadersNotSigned,         // x-amz-* headers outside the signature -> AccessDenied
};

struct AuthError {
  AuthErrorKind kind;
  std::string message;
  std::vector<std::string> headers_not_signed;  // kHeadersNotSigned: the names, sorted
};

enum class SignatureVersion { kV4, kV2 };

// Everything later stages need once the request is authenticated.
struct AuthContext {
  std::string access_key;
  SignatureVersion version = SignatureVersion::kV4;
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

struct VerifierOptions {
  int64_t max_skew_seconds = 15 * 60;  // header auth: allowed clock difference
  // Virtual-host style base domain (as --domain): SigV2 signs the bucket of a
  // "<bucket>.<domain>" Host as part of the resource. Empty: path style only.
  std::string domain;
  bool sigv2 = true;  // false: SigV2 requests fail with kUnsupportedAlgorithm
};

class Verifier {
 public:
  // SigV4 signatures are accepted for any region named in the credential
  // scope (clients sign with their configured region), but the service must
  // be "s3".
  explicit Verifier(SecretLookup secrets, VerifierOptions options = {});

  // now_unix: current time in seconds. Returns the context or the reason.
  std::variant<AuthContext, AuthError> Verify(const RequestView& req, int64_t now_unix);

 private:
  std::string SigningKey(std::string_view secret, std::string_view date,
                         std::string_view region, std::string_view service);
  SecretLookup secrets_;
  VerifierOptions options_;
  std::mutex cache_mu_;
  std::unordered_map<std::string, std::string> key_cache_;  // secret|date|region|service -> key
};

// The canonical forms of SigV4 (exposed for tests and signer.h). The query:
// parameters sorted by name, then value, each name and value percent-encoded
// once; with drop_signature, without X-Amz-Signature (presigned URLs).
std::string CanonicalUri(std::string_view raw_path);
std::string CanonicalQuery(const QueryString& query, bool drop_signature);
std::string CanonicalQuery(std::string_view raw_query, bool drop_signature);
std::string DeriveSigningKey(std::string_view secret, std::string_view date,
                             std::string_view region, std::string_view service);

}  // namespace strata::auth

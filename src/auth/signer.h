// Client-side SigV4 signing (the Authorization header) for strata's own
// clients: the admin CLI, the benchmark's load generator, tests. It builds
// the canonical request from the same pieces the Verifier checks
// (CanonicalUri, CanonicalQuery, canonical headers), so whatever it signs the
// Verifier accepts; sigv4_test.cc / signer_test.cc also hold it to AWS's
// published example.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::auth {

struct SigningCredentials {
  std::string access_key;
  std::string secret_key;
  std::string region = "us-east-1";
};

struct RequestToSign {
  std::string_view method;     // "GET"
  std::string_view raw_path;   // as it goes on the wire, percent-encoded: "/bucket/a%20b"
  std::string_view raw_query;  // as it goes on the wire, without '?'; "" if none
  // The headers to sign besides x-amz-date and x-amz-content-sha256 (which
  // Sign adds): at least Host. Names in any case; values as sent.
  std::vector<std::pair<std::string, std::string>> headers;
  // x-amz-content-sha256: the payload's hex SHA-256, or a payload mode such
  // as "UNSIGNED-PAYLOAD" or "STREAMING-AWS4-HMAC-SHA256-PAYLOAD".
  std::string_view payload_hash = "UNSIGNED-PAYLOAD";
};

struct SigningResult {
  // The headers to send besides the caller's own: x-amz-date,
  // x-amz-content-sha256 and Authorization, in that order.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string authorization;   // "AWS4-HMAC-SHA256 Credential=...,SignedHeaders=...,Signature=..."
  std::string amz_date;        // "20130524T000000Z"
  std::string scope;           // "20130524/us-east-1/s3/aws4_request"
  std::string signed_headers;  // "host;range;x-amz-content-sha256;x-amz-date"
  std::string signature;       // hex; the seed signature of an aws-chunked body
  std::string canonical_request;
  std::string string_to_sign;
};

// Signs requests with one set of credentials. Keeps the signing key of the
// last day it signed for; not thread-safe (one Signer per client thread).
class Signer {
 public:
  explicit Signer(SigningCredentials credentials);

  // Signs `req` as made at `unix_seconds` (the x-amz-date it carries).
  SigningResult Sign(const RequestToSign& req, int64_t unix_seconds);

  // A presigned URL's query (SigV4 query authentication, as AWS SDKs make
  // them): `req.raw_query` plus X-Amz-Algorithm, -Credential, -Date,
  // -Expires, -SignedHeaders (the headers of `req`, at least Host) and
  // -Signature; the payload is UNSIGNED-PAYLOAD. Append it to the path after '?'.
  std::string Presign(const RequestToSign& req, int64_t unix_seconds, int64_t expires_seconds);

  // The derived key of a day ("20130524"); 32 raw bytes.
  const std::string& SigningKey(std::string_view date);

 private:
  SigningCredentials credentials_;
  std::string key_date_;
  std::string signing_key_;
};

}  // namespace strata::auth

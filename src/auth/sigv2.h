// AWS Signature Version 2 for S3 ("Signing and authenticating REST requests"):
// the Authorization header "AWS <access key>:<signature>" and query string
// authentication (AWSAccessKeyId, Expires, Signature). Verifier::Verify
// dispatches here; the POST Object form signature reuses SignV2.
//
//   StringToSign = Method \n Content-MD5 \n Content-Type \n Date \n
//                  CanonicalizedAmzHeaders CanonicalizedResource
//   Signature    = Base64(HMAC-SHA1(secret, StringToSign))
//
// Date is empty when an x-amz-date header is present (it is then signed among
// the amz headers) and is the Expires value for query authentication. The
// payload is not signed: every x-amz-* header, though, is part of the string
// to sign by construction.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "auth/sigv4.h"

namespace strata::auth {

// Base64(HMAC-SHA1(secret, string_to_sign)).
std::string SignV2(std::string_view secret, std::string_view string_to_sign);

// Compares a SigV2 signature we computed with one a client sent, in time
// that does not depend on where they differ.
bool SignatureV2Equal(std::string_view expected_b64, std::string_view given_b64);

// True for an Authorization header value of the SigV2 scheme ("AWS ...").
bool IsSigV2Authorization(std::string_view authorization);

// The string to sign of a request (exposed for tests). `date` is the third
// positional line (Date, "" or Expires); `bucket` is the virtual-host bucket
// ("" for path style); `query` the request's parsed query. With `query_auth`,
// x-amz-* query parameters count as amz headers (presigners move headers there).
std::string StringToSignV2(const RequestView& req, std::string_view date, const QueryString& query,
                           std::string_view bucket, bool query_auth);

// Verifies a SigV2 request: header auth when it has an Authorization header,
// else query auth. `query` is the request's parsed query.
std::variant<AuthContext, AuthError> VerifySigV2(const RequestView& req, const QueryString& query,
                                                 const SecretLookup& secrets,
                                                 const VerifierOptions& options, int64_t now_unix);

}  // namespace strata::auth

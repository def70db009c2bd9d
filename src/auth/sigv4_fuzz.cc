// libFuzzer target: request authentication (auth::Verifier::Verify): SigV4
// Authorization headers and presigned queries, and SigV2 ("AWS key:sig"
// headers, AWSAccessKeyId/Signature/Expires queries; domain s3.test for its
// virtual-host resource). The input is text:
//   <control byte><METHOD>\n<raw path>\n<raw query>\n<name>:<value>\n...
// (header names are lowercased, as http::MakeRequest does). The secret of
// AKIAIOSFODNN7EXAMPLE is AWS's example secret; the server clock is
// 2013-05-24T00:00:00Z moved by the control byte, so seeds signed at that time
// (tests/fuzz/sigv4/, signed by botocore, V4 and V2) verify and the fuzzer
// starts from requests that pass. Also checks the canonical forms are
// idempotent.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "auth/sigv4.h"
#include "fuzz_util.h"

namespace {

using strata::auth::AuthContext;
using strata::auth::AuthError;

constexpr int64_t kNow = 1369353600;  // 20130524T000000Z

std::optional<std::string> Secret(std::string_view access_key) {
  if (access_key == "AKIAIOSFODNN7EXAMPLE") return "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  return std::nullopt;
}

bool IsLowerHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  using strata::fuzz::NextLine;
  std::string_view method = NextLine(&in), path = NextLine(&in), query = NextLine(&in);
  const std::vector<std::pair<std::string, std::string>> headers = strata::fuzz::HeaderLines(in);
  strata::auth::RequestView req{method, path, query, &headers};
  // 0x80 is the seeds' time; other values move the clock by up to +-64 min.
  const int64_t now = kNow + (static_cast<int64_t>(control) - 0x80) * 30;

  strata::auth::VerifierOptions options;
  options.domain = "s3.test";
  strata::auth::Verifier verifier(Secret, options);
  auto result = verifier.Verify(req, now);
  static const bool verbose = std::getenv("STRATA_FUZZ_VERBOSE") != nullptr;
  if (verbose) {  // for checking seeds: what the verifier says
    auto* e = std::get_if<AuthError>(&result);
    std::fprintf(stderr, "verify: %s\n", e ? e->message.c_str() : "OK");
  }
  if (auto* ctx = std::get_if<AuthContext>(&result)) {
    FUZZ_CHECK(ctx->access_key == "AKIAIOSFODNN7EXAMPLE");
    if (ctx->version == strata::auth::SignatureVersion::kV4) {
      FUZZ_CHECK(ctx->signing_key.size() == 32);
      FUZZ_CHECK(ctx->seed_signature_hex.size() == 64 && IsLowerHex(ctx->seed_signature_hex));
      FUZZ_CHECK(ctx->amz_date.size() == 16);
      FUZZ_CHECK(ctx->scope.size() > 16 && ctx->scope.ends_with("/s3/aws4_request"));
      FUZZ_CHECK(ctx->scope.substr(0, 8) == ctx->amz_date.substr(0, 8));
      if (ctx->payload_mode == strata::auth::PayloadMode::kSignedPayload) {
        FUZZ_CHECK(ctx->payload_sha256_hex.size() == 64);
      }
    }
  }
  // A second verification (signing key now cached) reaches the same verdict.
  auto again = verifier.Verify(req, now);
  FUZZ_CHECK(again.index() == result.index());
  if (auto* e = std::get_if<AuthError>(&result)) {
    FUZZ_CHECK(std::get<AuthError>(again).kind == e->kind);
  }

  // Canonical forms are fixed points: canonicalizing twice changes nothing.
  std::string uri = strata::auth::CanonicalUri(path);
  FUZZ_CHECK(strata::auth::CanonicalUri(uri) == uri);
  for (bool drop : {false, true}) {
    std::string q = strata::auth::CanonicalQuery(query, drop);
    FUZZ_CHECK(strata::auth::CanonicalQuery(q, drop) == q);
  }
  return 0;
}

// Test helpers shared by the auth/ unit tests: requests as plain values, the
// AWS documentation credentials, and assertions on Verify results.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "auth/sigv4.h"
#include "common/encoding.h"
#include "common/hash.h"

namespace strata::auth::testing_util {

using Headers = std::vector<std::pair<std::string, std::string>>;
using VerifyResult = std::variant<AuthContext, AuthError>;

// The example credentials and time of the AWS S3 SigV4 documentation.
constexpr char kAwsAccessKey[] = "AKIAIOSFODNN7EXAMPLE";
constexpr char kAwsSecret[] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr char kAwsDate[] = "20130524T000000Z";
constexpr int64_t kAwsTime = 1369353600;  // 2013-05-24T00:00:00Z
constexpr char kAwsScope[] = "20130524/us-east-1/s3/aws4_request";
constexpr char kEmptySha256[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

struct Request {
  std::string method;
  std::string path;
  std::string query;
  Headers headers;
  RequestView View() const { return RequestView{method, path, query, &headers}; }
};

inline void SetHeader(Request* r, const std::string& name, const std::string& value) {
  for (auto& [key, v] : r->headers) {
    if (key == name) {
      v = value;
      return;
    }
  }
  r->headers.emplace_back(name, value);
}

inline void RemoveHeader(Request* r, const std::string& name) {
  std::erase_if(r->headers, [&](const auto& h) { return h.first == name; });
}

inline SecretLookup Secrets(std::map<std::string, std::string> keys) {
  return [keys = std::move(keys)](std::string_view access_key) -> std::optional<std::string> {
    auto it = keys.find(std::string(access_key));
    if (it == keys.end()) return std::nullopt;
    return it->second;
  };
}

inline SecretLookup AwsSecrets() { return Secrets({{kAwsAccessKey, kAwsSecret}}); }

inline VerifyResult VerifyAt(const Request& r, int64_t now, SecretLookup secrets = AwsSecrets()) {
  Verifier verifier(std::move(secrets));
  return verifier.Verify(r.View(), now);
}

inline testing::AssertionResult IsOk(const VerifyResult& result) {
  if (const auto* e = std::get_if<AuthError>(&result)) {
    return testing::AssertionFailure()
           << "error kind " << static_cast<int>(e->kind) << ": " << e->message;
  }
  return testing::AssertionSuccess();
}

inline testing::AssertionResult FailsWith(const VerifyResult& result, AuthErrorKind kind) {
  const auto* e = std::get_if<AuthError>(&result);
  if (e == nullptr) return testing::AssertionFailure() << "verified, expected an error";
  if (e->kind != kind) {
    return testing::AssertionFailure() << "error kind " << static_cast<int>(e->kind) << " ("
                                       << e->message << "), expected " << static_cast<int>(kind);
  }
  return testing::AssertionSuccess();
}

inline std::string AwsAuthorization(std::string_view signed_headers, std::string_view signature,
                                    std::string_view separator = ",") {
  return "AWS4-HMAC-SHA256 Credential=" + std::string(kAwsAccessKey) + "/" + kAwsScope +
         std::string(separator) + "SignedHeaders=" + std::string(signed_headers) +
         std::string(separator) + "Signature=" + std::string(signature);
}

inline std::string Hex(const Sha256Digest& d) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

}  // namespace strata::auth::testing_util

// Hashes and MACs over OpenSSL: one-shot helpers and streaming MD5/SHA-256.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace strata {

using Sha256Digest = std::array<unsigned char, 32>;
using Md5Digest = std::array<unsigned char, 16>;
using Sha1Digest = std::array<unsigned char, 20>;

Sha256Digest Sha256(std::string_view data);
Sha256Digest Sha256(std::string_view a, std::string_view b);  // of a ‖ b, without joining them
Sha256Digest HmacSha256(std::string_view key, std::string_view data);
// HMAC-SHA1: only for AWS Signature Version 2.
Sha1Digest HmacSha1(std::string_view key, std::string_view data);
std::string Sha256Hex(std::string_view data);
// Cryptographically random bytes (OpenSSL RAND_bytes).
std::string RandomBytes(size_t n);

// Streaming hasher; Update may be called any number of times, then Final once.
class StreamHash {
 public:
  enum class Kind { kMd5, kSha256 };
  explicit StreamHash(Kind kind);
  ~StreamHash();
  StreamHash(const StreamHash&) = delete;
  StreamHash& operator=(const StreamHash&) = delete;
  void Update(const void* data, size_t n);
  // Returns the raw digest bytes (16 for MD5, 32 for SHA-256).
  std::string Final();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata

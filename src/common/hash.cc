#include "common/hash.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cassert>
#include <cstdlib>

#include "common/encoding.h"

namespace strata {

Sha256Digest Sha256(std::string_view data) {
  Sha256Digest d;
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d.data());
  return d;
}

namespace {
template <size_t N>
std::array<unsigned char, N> Hmac(const EVP_MD* md, std::string_view key, std::string_view data) {
  std::array<unsigned char, N> d;
  unsigned int len = 0;
  HMAC(md, key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), d.data(), &len);
  assert(len == N);
  return d;
}
}  // namespace

Sha256Digest HmacSha256(std::string_view key, std::string_view data) {
  return Hmac<32>(EVP_sha256(), key, data);
}

Sha1Digest HmacSha1(std::string_view key, std::string_view data) {
  return Hmac<20>(EVP_sha1(), key, data);
}

std::string Sha256Hex(std::string_view data) {
  Sha256Digest d = Sha256(data);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) abort();
  return out;
}

struct StreamHash::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

StreamHash::StreamHash(Kind kind) : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(impl_->ctx, kind == Kind::kMd5 ? EVP_md5() : EVP_sha256(), nullptr);
}

StreamHash::~StreamHash() { EVP_MD_CTX_free(impl_->ctx); }

void StreamHash::Update(const void* data, size_t n) { EVP_DigestUpdate(impl_->ctx, data, n); }

std::string StreamHash::Final() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(impl_->ctx, out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

}  // namespace strata

#include "common/hash.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cassert>
#include <cstdlib>
#include <cstring>

#include "common/encoding.h"

namespace strata {

namespace {

// OpenSSL 3 looks an algorithm up in its provider on every EVP_sha256() /
// HMAC() / SHA256() call: thousands of instructions and a lock, more than
// hashing a request's few hundred bytes. The digests are fetched once.
const EVP_MD* Fetch(const char* name) {
  EVP_MD* md = EVP_MD_fetch(nullptr, name, nullptr);
  if (!md) std::abort();  // a broken OpenSSL installation
  return md;             // kept for the life of the process
}
const EVP_MD* Sha256Md() {
  static const EVP_MD* md = Fetch("SHA2-256");
  return md;
}
const EVP_MD* Sha1Md() {
  static const EVP_MD* md = Fetch("SHA1");
  return md;
}
const EVP_MD* Md5Md() {
  static const EVP_MD* md = Fetch("MD5");
  return md;
}

// One digest context per thread, reused (no allocation per hash).
EVP_MD_CTX* ThreadContext() {
  struct Holder {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Holder() { EVP_MD_CTX_free(ctx); }
  };
  thread_local Holder holder;
  if (!holder.ctx) std::abort();
  return holder.ctx;
}

void Digest(const EVP_MD* md, const void* a, size_t an, const void* b, size_t bn,
            unsigned char* out) {
  EVP_MD_CTX* ctx = ThreadContext();
  unsigned int len = 0;
  if (EVP_DigestInit_ex(ctx, md, nullptr) != 1 || EVP_DigestUpdate(ctx, a, an) != 1 ||
      (bn && EVP_DigestUpdate(ctx, b, bn) != 1) || EVP_DigestFinal_ex(ctx, out, &len) != 1) {
    std::abort();
  }
}

// HMAC (RFC 2104) over a fetched digest of 64-byte blocks (MD5, SHA-1,
// SHA-256): the two keyed passes on the thread's digest context.
template <size_t N>
std::array<unsigned char, N> Hmac(const EVP_MD* md, std::string_view key, std::string_view data) {
  constexpr size_t kBlock = 64;
  unsigned char k[kBlock] = {};
  if (key.size() > kBlock) {
    Digest(md, key.data(), key.size(), nullptr, 0, k);
  } else {
    std::memcpy(k, key.data(), key.size());
  }
  unsigned char pad[kBlock];
  for (size_t i = 0; i < kBlock; ++i) pad[i] = k[i] ^ 0x36;
  unsigned char inner[N];
  Digest(md, pad, kBlock, data.data(), data.size(), inner);
  for (size_t i = 0; i < kBlock; ++i) pad[i] = k[i] ^ 0x5c;
  std::array<unsigned char, N> d;
  Digest(md, pad, kBlock, inner, N, d.data());
  OPENSSL_cleanse(k, sizeof k);
  OPENSSL_cleanse(pad, sizeof pad);
  return d;
}

}  // namespace

Sha256Digest Sha256(std::string_view data) {
  Sha256Digest d;
  Digest(Sha256Md(), data.data(), data.size(), nullptr, 0, d.data());
  return d;
}

Sha256Digest Sha256(std::string_view a, std::string_view b) {
  Sha256Digest d;
  Digest(Sha256Md(), a.data(), a.size(), b.data(), b.size(), d.data());
  return d;
}

Sha256Digest HmacSha256(std::string_view key, std::string_view data) {
  return Hmac<32>(Sha256Md(), key, data);
}

Sha1Digest HmacSha1(std::string_view key, std::string_view data) {
  return Hmac<20>(Sha1Md(), key, data);
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
  EVP_DigestInit_ex(impl_->ctx, kind == Kind::kMd5 ? Md5Md() : Sha256Md(), nullptr);
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

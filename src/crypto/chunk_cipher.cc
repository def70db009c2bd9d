#include "crypto/chunk_cipher.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <cstring>

#include "common/hash.h"
#include "crypto/evp_ciphers.h"

namespace strata::crypto {

namespace {

const unsigned char* U(const char* p) { return reinterpret_cast<const unsigned char*>(p); }
unsigned char* U(char* p) { return reinterpret_cast<unsigned char*>(p); }

void PutBigEndian64(uint64_t v, unsigned char* out) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<unsigned char>(v);
    v >>= 8;
  }
}

void Nonce(uint64_t index, unsigned char nonce[12]) {
  std::memset(nonce, 0, 4);
  PutBigEndian64(index, nonce + 4);
}

}  // namespace

uint64_t ChunkCount(uint64_t plain_bytes) { return (plain_bytes + kChunkBytes - 1) / kChunkBytes; }

uint64_t SealedSize(uint64_t plain_bytes) { return plain_bytes + ChunkCount(plain_bytes) * kTagBytes; }

std::string CustomerKeyDigest(std::string_view salt, std::string_view key) {
  std::string msg = "strata-sse-c-v1";
  msg.append(key);
  Sha256Digest d = HmacSha256(salt, msg);
  OPENSSL_cleanse(msg.data(), msg.size());
  return std::string(reinterpret_cast<const char*>(d.data()), d.size());
}

ChunkCipher::ChunkCipher(std::string_view data_key, std::string_view salt, std::string identity)
    : aad_(std::move(identity)) {
  if (data_key.size() != kDataKeyBytes || salt.size() != kSaltBytes) std::abort();
  // The file key: AES-256 under the data key as a PRF over two blocks made
  // of the salt and a counter (NIST SP 800-108 counter mode with a block
  // cipher). Cheaper than an HMAC by an order of magnitude, which matters on
  // every small GET.
  unsigned char in[32];
  for (int i = 0; i < 2; ++i) {
    std::memcpy(in + 16 * i, salt.data(), 16);
    in[16 * i] ^= static_cast<unsigned char>(i + 1);
  }
  EVP_CIPHER_CTX* ecb = EVP_CIPHER_CTX_new();
  int n = 0;
  const bool ok = ecb &&
                  EVP_EncryptInit_ex(ecb, detail::Aes256Ecb(), nullptr, U(data_key.data()), nullptr) == 1 &&
                  EVP_CIPHER_CTX_set_padding(ecb, 0) == 1 &&
                  EVP_EncryptUpdate(ecb, key_, &n, in, sizeof in) == 1 && n == 32;
  EVP_CIPHER_CTX_free(ecb);
  if (!ok) std::abort();  // out of memory or a broken OpenSSL
  identity_bytes_ = aad_.size();
  aad_.resize(identity_bytes_ + 9);
}

ChunkCipher::~ChunkCipher() {
  OPENSSL_cleanse(key_, sizeof key_);
  EVP_CIPHER_CTX_free(seal_);
  EVP_CIPHER_CTX_free(open_);
}

EVP_CIPHER_CTX* ChunkCipher::Context(bool seal) {
  EVP_CIPHER_CTX*& ctx = seal ? seal_ : open_;
  if (ctx) return ctx;
  ctx = EVP_CIPHER_CTX_new();
  const bool ok = ctx && (seal ? EVP_EncryptInit_ex(ctx, detail::Aes256Gcm(), nullptr, key_, nullptr)
                               : EVP_DecryptInit_ex(ctx, detail::Aes256Gcm(), nullptr, key_, nullptr)) == 1;
  if (!ok) std::abort();  // out of memory or a broken OpenSSL
  return ctx;
}

void ChunkCipher::Aad(uint64_t index, bool last) {
  auto* p = U(aad_.data()) + identity_bytes_;
  PutBigEndian64(index, p);
  p[8] = last ? 1 : 0;
}

void ChunkCipher::Seal(uint64_t index, bool last, std::string_view plain, char* out) {
  unsigned char nonce[12];
  Nonce(index, nonce);
  Aad(index, last);
  int n = 0, tail = 0;
  const int len = static_cast<int>(plain.size());
  EVP_CIPHER_CTX* ctx = Context(true);
  bool ok = plain.size() <= kChunkBytes &&
            EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, nonce) == 1 &&
            EVP_EncryptUpdate(ctx, nullptr, &n, U(aad_.data()), static_cast<int>(aad_.size())) == 1 &&
            EVP_EncryptUpdate(ctx, U(out), &n, U(plain.data()), len) == 1 &&
            EVP_EncryptFinal_ex(ctx, U(out) + n, &tail) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, kTagBytes, out + plain.size()) == 1;
  if (!ok) std::abort();  // only a caller's oversized chunk or a broken OpenSSL
}

bool ChunkCipher::Open(uint64_t index, bool last, std::string_view sealed, char* out) {
  if (sealed.size() < kTagBytes || sealed.size() > kSealedChunkBytes) return false;
  unsigned char nonce[12];
  Nonce(index, nonce);
  Aad(index, last);
  const size_t body = sealed.size() - kTagBytes;
  unsigned char tag[kTagBytes];
  std::memcpy(tag, sealed.data() + body, kTagBytes);
  int n = 0, tail = 0;
  EVP_CIPHER_CTX* ctx = Context(false);
  bool ok = EVP_DecryptInit_ex(ctx, nullptr, nullptr, nullptr, nonce) == 1 &&
            EVP_DecryptUpdate(ctx, nullptr, &n, U(aad_.data()), static_cast<int>(aad_.size())) == 1 &&
            EVP_DecryptUpdate(ctx, U(out), &n, U(sealed.data()), static_cast<int>(body)) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kTagBytes, tag) == 1 &&
            EVP_DecryptFinal_ex(ctx, U(out) + n, &tail) == 1;
  if (!ok) std::memset(out, 0, body);  // nothing unverified leaves
  return ok;
}

std::unique_ptr<ChunkCipher> ChunkCipher::Clone() const {
  std::unique_ptr<ChunkCipher> c(new ChunkCipher());
  std::memcpy(c->key_, key_, sizeof key_);
  c->aad_ = aad_;
  c->identity_bytes_ = identity_bytes_;
  return c;
}

std::string ChunkCipher::MaskedEtag(std::string_view md5) const {
  std::string msg = "etag";
  msg.append(md5);
  Sha256Digest d = HmacSha256(std::string_view(reinterpret_cast<const char*>(key_), sizeof key_), msg);
  return std::string(reinterpret_cast<const char*>(d.data()), 16);
}

}  // namespace strata::crypto

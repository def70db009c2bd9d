#include "crypto/chunk_cipher.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <cstring>

#include "common/hash.h"

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
  std::string msg = "strata-sse-file-v1";
  msg.append(salt);
  Sha256Digest k = HmacSha256(data_key, msg);
  std::memcpy(key_, k.data(), sizeof key_);
  OPENSSL_cleanse(k.data(), k.size());
  identity_bytes_ = aad_.size();
  aad_.resize(identity_bytes_ + 9);
  seal_ = EVP_CIPHER_CTX_new();
  open_ = EVP_CIPHER_CTX_new();
  if (!seal_ || !open_ ||
      EVP_EncryptInit_ex(seal_, EVP_aes_256_gcm(), nullptr, key_, nullptr) != 1 ||
      EVP_DecryptInit_ex(open_, EVP_aes_256_gcm(), nullptr, key_, nullptr) != 1) {
    std::abort();  // out of memory or a broken OpenSSL
  }
}

ChunkCipher::~ChunkCipher() {
  OPENSSL_cleanse(key_, sizeof key_);
  EVP_CIPHER_CTX_free(seal_);
  EVP_CIPHER_CTX_free(open_);
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
  bool ok = plain.size() <= kChunkBytes &&
            EVP_EncryptInit_ex(seal_, nullptr, nullptr, nullptr, nonce) == 1 &&
            EVP_EncryptUpdate(seal_, nullptr, &n, U(aad_.data()), static_cast<int>(aad_.size())) == 1 &&
            EVP_EncryptUpdate(seal_, U(out), &n, U(plain.data()), len) == 1 &&
            EVP_EncryptFinal_ex(seal_, U(out) + n, &tail) == 1 &&
            EVP_CIPHER_CTX_ctrl(seal_, EVP_CTRL_GCM_GET_TAG, kTagBytes, out + plain.size()) == 1;
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
  bool ok = EVP_DecryptInit_ex(open_, nullptr, nullptr, nullptr, nonce) == 1 &&
            EVP_DecryptUpdate(open_, nullptr, &n, U(aad_.data()), static_cast<int>(aad_.size())) == 1 &&
            EVP_DecryptUpdate(open_, U(out), &n, U(sealed.data()), static_cast<int>(body)) == 1 &&
            EVP_CIPHER_CTX_ctrl(open_, EVP_CTRL_GCM_SET_TAG, kTagBytes, tag) == 1 &&
            EVP_DecryptFinal_ex(open_, U(out) + n, &tail) == 1;
  if (!ok) std::memset(out, 0, body);  // nothing unverified leaves
  return ok;
}

std::string ChunkCipher::MaskedEtag(std::string_view md5) const {
  std::string msg = "etag";
  msg.append(md5);
  Sha256Digest d = HmacSha256(std::string_view(reinterpret_cast<const char*>(key_), sizeof key_), msg);
  return std::string(reinterpret_cast<const char*>(d.data()), 16);
}

}  // namespace strata::crypto

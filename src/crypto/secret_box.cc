#include "crypto/secret_box.h"

#include <openssl/evp.h>

#include <memory>

#include "common/hash.h"
#include "crypto/evp_ciphers.h"

namespace strata::crypto {

namespace {

constexpr char kVersion = 1;
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

const unsigned char* U(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

}  // namespace

std::string Seal(std::string_view key, std::string_view plaintext, std::string_view aad) {
  std::string nonce = RandomBytes(kNonceBytes);
  std::string out;
  out.push_back(kVersion);
  out += nonce;
  const size_t body_at = out.size();
  out.resize(body_at + plaintext.size() + kTagBytes);
  auto* body = reinterpret_cast<unsigned char*>(out.data() + body_at);
  CipherCtx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  int n = 0, tail = 0;
  bool ok = ctx && key.size() == kSecretBoxKeyBytes &&
            EVP_EncryptInit_ex(ctx.get(), detail::Aes256Gcm(), nullptr, U(key), U(nonce)) == 1 &&
            EVP_EncryptUpdate(ctx.get(), nullptr, &n, U(aad), static_cast<int>(aad.size())) == 1 &&
            EVP_EncryptUpdate(ctx.get(), body, &n, U(plaintext),
                              static_cast<int>(plaintext.size())) == 1 &&
            EVP_EncryptFinal_ex(ctx.get(), body + n, &tail) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes,
                                body + plaintext.size()) == 1;
  if (!ok) std::abort();  // only a wrong key length or a broken OpenSSL get here
  return out;
}

std::optional<std::string> Open(std::string_view key, std::string_view sealed,
                                std::string_view aad) {
  if (key.size() != kSecretBoxKeyBytes || sealed.size() < 1 + kNonceBytes + kTagBytes ||
      sealed[0] != kVersion) {
    return std::nullopt;
  }
  std::string_view nonce = sealed.substr(1, kNonceBytes);
  std::string_view body = sealed.substr(1 + kNonceBytes, sealed.size() - 1 - kNonceBytes - kTagBytes);
  std::string tag(sealed.substr(sealed.size() - kTagBytes));
  std::string plain(body.size(), '\0');
  CipherCtx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  int n = 0, tail = 0;
  bool ok = ctx &&
            EVP_DecryptInit_ex(ctx.get(), detail::Aes256Gcm(), nullptr, U(key), U(nonce)) == 1 &&
            EVP_DecryptUpdate(ctx.get(), nullptr, &n, U(aad), static_cast<int>(aad.size())) == 1 &&
            EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()), &n,
                              U(body), static_cast<int>(body.size())) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) == 1 &&
            EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(plain.data()) + n,
                                &tail) == 1;
  if (!ok) return std::nullopt;
  return plain;
}

}  // namespace strata::crypto

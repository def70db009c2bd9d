#include "crypto/evp_ciphers.h"

#include <openssl/evp.h>

#include <cstdlib>

namespace strata::crypto::detail {

namespace {

const EVP_CIPHER* Fetch(const char* name) {
  EVP_CIPHER* c = EVP_CIPHER_fetch(nullptr, name, nullptr);
  if (!c) std::abort();  // a broken OpenSSL installation
  return c;  // kept for the life of the process
}

}  // namespace

const EVP_CIPHER* Aes256Gcm() {
  static const EVP_CIPHER* c = Fetch("AES-256-GCM");
  return c;
}

const EVP_CIPHER* Aes256Ecb() {
  static const EVP_CIPHER* c = Fetch("AES-256-ECB");
  return c;
}

}  // namespace strata::crypto::detail

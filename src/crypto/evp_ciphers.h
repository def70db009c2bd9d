// The OpenSSL ciphers crypto/ uses, fetched once (crypto/ internal). In
// OpenSSL 3 passing EVP_aes_256_gcm() to an init fetches the implementation
// from the provider on every call (thousands of instructions, a lock); a
// fetched EVP_CIPHER is reused for the life of the process.
#pragma once

typedef struct evp_cipher_st EVP_CIPHER;

namespace strata::crypto::detail {

const EVP_CIPHER* Aes256Gcm();
const EVP_CIPHER* Aes256Ecb();

}  // namespace strata::crypto::detail

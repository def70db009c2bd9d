// Test helper: a self-signed EC P-256 certificate for localhost and
// 127.0.0.1, valid from an hour ago for a day, written as PEM files.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <string>

namespace strata::testing_tls {

struct CertFiles {
  std::string cert, key;
};

// Writes DIR/cert.pem and DIR/key.pem; empty paths on failure.
inline CertFiles WriteSelfSigned(const std::string& dir, const char* cn = "localhost",
                                 const char* san = "DNS:localhost,IP:127.0.0.1") {
  CertFiles out;
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* x = X509_new();
  bool ok = key && x;
  if (ok) {
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 24 * 3600);
    X509_set_pubkey(x, key);
    X509_NAME* name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(cn), -1, -1, 0);
    X509_set_issuer_name(x, name);
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, x, x, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, NID_subject_alt_name, san);
    ok = ext != nullptr && X509_add_ext(x, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    ok = ok && X509_sign(x, key, EVP_sha256()) > 0;
  }
  if (ok) {
    std::string cert = dir + "/cert.pem", keyfile = dir + "/key.pem";
    FILE* c = std::fopen(cert.c_str(), "w");
    FILE* k = std::fopen(keyfile.c_str(), "w");
    ok = c && k && PEM_write_X509(c, x) == 1 &&
         PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
    if (c) std::fclose(c);
    if (k) std::fclose(k);
    if (ok) out = {cert, keyfile};
  }
  X509_free(x);
  EVP_PKEY_free(key);
  return out;
}

}  // namespace strata::testing_tls

#include "http/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace strata::http {

namespace {

// TLS 1.2: ECDHE key exchange with AES-GCM or ChaCha20-Poly1305 only (TLS 1.3
// suites are all AEAD and forward secret; OpenSSL's defaults stand).
constexpr char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

}  // namespace

void SslFree::operator()(SSL* ssl) const { SSL_free(ssl); }

Result<SSL_CTX*> TlsContext::Build() const {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) return Status(Code::kInternal, "SSL_CTX_new: " + OpenSslError());
  auto fail = [ctx](const std::string& what) {
    SSL_CTX_free(ctx);
    return Status(Code::kInvalidArgument, what + ": " + OpenSslError());
  };
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_TICKET);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                            SSL_MODE_RELEASE_BUFFERS);
  if (SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1) return fail("cipher list");
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_path_.c_str()) != 1) {
    return fail("cannot load the certificate " + cert_path_);
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_path_.c_str(), SSL_FILETYPE_PEM) != 1) {
    return fail("cannot load the private key " + key_path_);
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return fail("the private key " + key_path_ + " does not match " + cert_path_);
  }
  return ctx;
}

Result<std::shared_ptr<TlsContext>> TlsContext::Load(std::string cert_path, std::string key_path) {
  std::shared_ptr<TlsContext> tls(new TlsContext(std::move(cert_path), std::move(key_path)));
  ASSIGN_OR_RETURN(tls->ctx_, tls->Build());
  return tls;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

Status TlsContext::Reload() {
  ASSIGN_OR_RETURN(SSL_CTX * fresh, Build());
  std::lock_guard<std::mutex> lock(mu_);
  SSL_CTX_free(ctx_);  // sessions made from it hold their own reference
  ctx_ = fresh;
  return Status::OK();
}

SSL* TlsContext::NewSession(int fd) {
  SSL* ssl;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ssl = SSL_new(ctx_);
  }
  if (!ssl) return nullptr;
  if (SSL_set_fd(ssl, fd) != 1) {
    SSL_free(ssl);
    return nullptr;
  }
  SSL_set_accept_state(ssl);
  return ssl;
}

}  // namespace strata::http

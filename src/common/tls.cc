#include "common/tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <openssl/ssl.h>

namespace strata {

namespace {

// TLS 1.2: ECDHE key exchange with AES-GCM or ChaCha20-Poly1305 only (TLS 1.3
// suites are all AEAD and forward secret; OpenSSL's defaults stand).
constexpr char kTls12Ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

}  // namespace

std::string OpenSslErrorText() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

void SslFree::operator()(SSL* ssl) const { SSL_free(ssl); }

Result<SSL_CTX*> TlsContext::Build() const {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) return Status(Code::kInternal, "SSL_CTX_new: " + OpenSslErrorText());
  auto fail = [ctx](const std::string& what) {
    SSL_CTX_free(ctx);
    return Status(Code::kInvalidArgument, what + ": " + OpenSslErrorText());
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

Result<std::shared_ptr<TlsClientContext>> TlsClientContext::Create(const std::string& ca_file,
                                                                   const std::string& cert_file,
                                                                   const std::string& key_file) {
  std::shared_ptr<TlsClientContext> c(new TlsClientContext());
  c->ctx_ = SSL_CTX_new(TLS_client_method());
  if (!c->ctx_) return Status(Code::kInternal, "SSL_CTX_new: " + OpenSslErrorText());
  SSL_CTX_set_min_proto_version(c->ctx_, TLS1_2_VERSION);
  SSL_CTX_set_options(c->ctx_, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_mode(c->ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_set_cipher_list(c->ctx_, kTls12Ciphers) != 1) {
    return Status(Code::kInternal, "cipher list: " + OpenSslErrorText());
  }
  int ok = ca_file.empty() ? SSL_CTX_set_default_verify_paths(c->ctx_)
                           : SSL_CTX_load_verify_locations(c->ctx_, ca_file.c_str(), nullptr);
  if (ok != 1) {
    return Status(Code::kInvalidArgument,
                  "cannot load the CA certificates " + (ca_file.empty() ? "(system)" : ca_file) +
                      ": " + OpenSslErrorText());
  }
  SSL_CTX_set_verify(c->ctx_, SSL_VERIFY_PEER, nullptr);
  if (cert_file.empty() != key_file.empty()) {
    return Status(Code::kInvalidArgument, "a client certificate needs both its file and its key");
  }
  if (!cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(c->ctx_, cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(c->ctx_, key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(c->ctx_) != 1) {
      return Status(Code::kInvalidArgument, "cannot load the client certificate " + cert_file +
                                                " and its key " + key_file + ": " +
                                                OpenSslErrorText());
    }
  }
  return c;
}

TlsClientContext::~TlsClientContext() { SSL_CTX_free(ctx_); }

Result<SSL*> TlsClientContext::NewSession(int fd, const std::string& server_name) const {
  SSL* ssl = SSL_new(ctx_);
  if (!ssl) return Status(Code::kInternal, "SSL_new: " + OpenSslErrorText());
  std::unique_ptr<SSL, SslFree> guard(ssl);
  if (SSL_set_fd(ssl, fd) != 1) return Status(Code::kInternal, "SSL_set_fd: " + OpenSslErrorText());
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  unsigned char ip[16];
  bool is_ip = inet_pton(AF_INET, server_name.c_str(), ip) == 1 ||
               inet_pton(AF_INET6, server_name.c_str(), ip) == 1;
  if (is_ip) {
    if (X509_VERIFY_PARAM_set1_ip_asc(param, server_name.c_str()) != 1) {
      return Status(Code::kInvalidArgument, "bad server address " + server_name);
    }
  } else {
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (X509_VERIFY_PARAM_set1_host(param, server_name.c_str(), server_name.size()) != 1 ||
        SSL_set_tlsext_host_name(ssl, server_name.c_str()) != 1) {
      return Status(Code::kInvalidArgument, "bad server name " + server_name);
    }
  }
  SSL_set_connect_state(ssl);
  return guard.release();
}

TlsIo::TlsIo(SSL* ssl, int fd) : ssl_(ssl), fd_(fd) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

TlsIo::~TlsIo() { SSL_free(ssl_); }

Result<TlsIo::Step> TlsIo::Finish(int ok, size_t n, const char* what) {
  Step step;
  if (ok == 1) {
    step.n = n;
    return step;
  }
  int err = SSL_get_error(ssl_, ok);
  switch (err) {
    case SSL_ERROR_WANT_READ:
      step.want = Want::kRead;
      return step;
    case SSL_ERROR_WANT_WRITE:
      step.want = Want::kWrite;
      return step;
    case SSL_ERROR_ZERO_RETURN:
      step.closed = true;
      return step;
    case SSL_ERROR_SYSCALL: {
      int e = errno;
      ERR_clear_error();
      if (e == 0 || e == ECONNRESET || e == EPIPE) {
        step.closed = true;
        return step;
      }
      return ErrnoStatus(e, std::string("TLS ") + what);
    }
    default: {
      unsigned long code = ERR_peek_error();
      if (ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
        ERR_clear_error();
        step.closed = true;
        return step;
      }
      return Status(Code::kAborted, std::string("TLS ") + what + ": " + OpenSslErrorText());
    }
  }
}

Result<TlsIo::Step> TlsIo::Handshake() {
  ERR_clear_error();
  errno = 0;
  return Finish(SSL_do_handshake(ssl_), 0, "handshake");
}

Result<TlsIo::Step> TlsIo::Read(char* buf, size_t n) {
  ERR_clear_error();
  errno = 0;
  size_t got = 0;
  int ok = SSL_read_ex(ssl_, buf, n, &got);
  return Finish(ok, got, "read");
}

Result<TlsIo::Step> TlsIo::Write(const char* buf, size_t n) {
  ERR_clear_error();
  errno = 0;
  size_t put = 0;
  int ok = SSL_write_ex(ssl_, buf, n, &put);
  return Finish(ok, put, "write");
}

size_t TlsIo::Pending() const { return static_cast<size_t>(SSL_pending(ssl_)); }

Result<bool> TlsIo::ReadReady() {
  if (Pending() > 0) return true;
  while (true) {
    ERR_clear_error();
    errno = 0;
    char byte;
    size_t got = 0;
    int ok = SSL_peek_ex(ssl_, &byte, 1, &got);
    auto step = Finish(ok, got, "read");
    if (!step.ok()) return true;  // the error is there for the Read
    if (step->n > 0 || step->closed) return true;
    if (step->want == Want::kRead) return false;  // the socket has no whole record
    // kWrite (a handshake reply the socket cannot take now): wait for room.
    Status room = Wait(fd_, Want::kWrite, 1000);
    if (!room.ok()) return true;  // the Read reports it
  }
}

void TlsIo::CloseNotify() {
  ERR_clear_error();
  if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
  ERR_clear_error();
}

Status TlsIo::Wait(int fd, Want want, int timeout_ms) {
  pollfd p{fd, static_cast<short>(want == Want::kWrite ? POLLOUT : POLLIN), 0};
  while (true) {
    int r = ::poll(&p, 1, timeout_ms);
    if (r > 0) return Status::OK();
    if (r == 0) {
      return Status(Code::kDeadlineExceeded,
                    std::string("TLS: peer not ") + (want == Want::kWrite ? "reading" : "sending") +
                        " for " + std::to_string(timeout_ms) + " ms");
    }
    if (errno != EINTR) return ErrnoStatus(errno, "poll");
  }
}

}  // namespace strata

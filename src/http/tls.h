// TLS for the HTTP listener: one server certificate and key (PEM), TLS 1.2
// and 1.3 only, forward-secret AEAD ciphers only, no renegotiation, no
// compression. Reload() swaps in the files' current contents (SIGHUP):
// connections made afterwards use the new certificate, open ones keep theirs.
//
// OpenSSL directly rather than Asio's ssl::stream: the server's streams are
// blocking reads and writes with poll timeouts on a worker
// (http/timed_stream.h), not Asio operations; an SSL object on the socket's
// descriptor fits that model as it is.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace strata::http {

class TlsContext {
 public:
  // Loads and checks the pair (the key must match the certificate).
  static Result<std::shared_ptr<TlsContext>> Load(std::string cert_path, std::string key_path);
  ~TlsContext();

  // Re-reads the files; on failure the current certificate stays in use.
  Status Reload();
  // A server-side session for a connected socket (accept state set), or
  // nullptr when OpenSSL cannot make one.
  SSL* NewSession(int fd);

  const std::string& cert_path() const { return cert_path_; }

 private:
  TlsContext(std::string cert_path, std::string key_path)
      : cert_path_(std::move(cert_path)), key_path_(std::move(key_path)) {}
  Result<SSL_CTX*> Build() const;

  std::string cert_path_, key_path_;
  std::mutex mu_;
  SSL_CTX* ctx_ = nullptr;  // guarded by mu_
};

// SSL_free, for unique_ptr.
struct SslFree {
  void operator()(SSL* ssl) const;
};

}  // namespace strata::http

// TLS for the listeners (S3 over HTTPS, the KV-cache protocol) and for the
// KV client: one server certificate and key (PEM), TLS 1.2 and 1.3 only,
// forward-secret AEAD ciphers only, no renegotiation, no compression.
// Reload() swaps in the files' current contents (SIGHUP): connections made
// afterwards use the new certificate, open ones keep theirs.
//
// OpenSSL directly rather than Asio's ssl::stream: the servers' streams are
// blocking reads and writes with poll timeouts on a worker
// (http/timed_stream.h, kvcache/tls_transport.cc), not Asio operations; an
// SSL object on the socket's descriptor fits that model as it is.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <string>

#include "common/status.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace strata {

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

// The client side: verifies the server's certificate chain against
// `ca_file` (PEM; "" = the system's trust store) and its name against
// `server_name` (DNS name or IP address; also sent as SNI), TLS 1.2+. With
// `cert_file` and `key_file` (PEM) it presents that certificate when the
// server asks for one (mutual TLS: the KMIP key server).
class TlsClientContext {
 public:
  static Result<std::shared_ptr<TlsClientContext>> Create(const std::string& ca_file,
                                                          const std::string& cert_file = "",
                                                          const std::string& key_file = "");
  ~TlsClientContext();
  // A client session on a connected socket (connect state set, name checks
  // armed), or an error.
  Result<SSL*> NewSession(int fd, const std::string& server_name) const;

 private:
  TlsClientContext() = default;
  SSL_CTX* ctx_ = nullptr;
};

// Non-blocking TLS I/O on a connected socket (made O_NONBLOCK here): each
// call is one attempt that moves bytes or says what the session waits for.
// The handshake runs inside the first Read/Write (or Handshake()). Not
// thread-safe: callers that read and write from two threads serialize the
// calls themselves and wait (Wait) outside their lock.
class TlsIo {
 public:
  enum class Want { kNothing, kRead, kWrite };
  struct Step {
    size_t n = 0;                 // bytes moved
    Want want = Want::kNothing;   // nothing moved: wait for this, then retry
    bool closed = false;          // the peer ended the stream (close_notify or EOF)
  };
  // Takes ownership of `ssl` (already bound to fd).
  TlsIo(SSL* ssl, int fd);
  ~TlsIo();
  TlsIo(const TlsIo&) = delete;
  TlsIo& operator=(const TlsIo&) = delete;

  Result<Step> Handshake();
  Result<Step> Read(char* buf, size_t n);
  // Stops short of n only when the socket is full (want kWrite).
  Result<Step> Write(const char* buf, size_t n);
  // Decrypted bytes a Read returns without touching the socket.
  size_t Pending() const;
  // Whether a Read would return without waiting: decrypted bytes, the end,
  // or an error are there. Consumes what the socket holds (records, the
  // handshake) without blocking.
  Result<bool> ReadReady();
  // Sends close_notify if it can without waiting.
  void CloseNotify();
  // Waits up to timeout_ms (< 0: forever) for the socket to be ready for
  // `want`; DeadlineExceeded after it.
  static Status Wait(int fd, Want want, int timeout_ms);
  int fd() const { return fd_; }

 private:
  Result<Step> Finish(int ok, size_t n, const char* what);
  SSL* ssl_;
  int fd_;
};

inline constexpr size_t kTlsRecordBytes = 16 * 1024;  // TLS's largest record payload

// Sends `ranges` in order through `write(std::string_view)` (returning a
// status with ok()), gathering runs of small ranges into one record's worth
// in `stage` (a frame head and its payload become one record, not two);
// ranges of a record or more go as they are. Returns the first failure.
template <class Write>
auto WriteGathered(std::span<const std::string_view> ranges, std::string& stage, Write&& write)
    -> decltype(write(std::string_view())) {
  auto flush = [&] {
    auto st = write(std::string_view(stage));
    stage.clear();
    if (stage.capacity() > kTlsRecordBytes) std::string().swap(stage);
    return st;
  };
  for (std::string_view r : ranges) {
    if (stage.size() + r.size() <= kTlsRecordBytes) {
      stage.append(r);
      continue;
    }
    if (!stage.empty()) {
      if (auto st = flush(); !st.ok()) return st;
    }
    if (r.size() < kTlsRecordBytes) {
      stage.assign(r);
    } else if (auto st = write(r); !st.ok()) {
      return st;
    }
  }
  return flush();
}

// The text of OpenSSL's oldest queued error (the queue is cleared).
std::string OpenSslErrorText();

// SSL_free, for unique_ptr.
struct SslFree {
  void operator()(SSL* ssl) const;
};

}  // namespace strata

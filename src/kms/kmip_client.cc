#include "kms/kmip_client.h"

#include <unistd.h>

#include "common/net.h"
#include "common/tls.h"

namespace strata::kms {

KmipClient::KmipClient(KmipOptions options) : options_(std::move(options)) {}

KmipClient::~KmipClient() {
  std::lock_guard lock(mu_);
  CloseLocked();
}

Result<std::unique_ptr<KmipClient>> KmipClient::Create(KmipOptions options) {
  if (options.host.empty()) return Status(Code::kInvalidArgument, "the KMIP endpoint has no host");
  std::unique_ptr<KmipClient> c(new KmipClient(std::move(options)));
  ASSIGN_OR_RETURN(c->tls_, TlsClientContext::Create(c->options_.ca_file, c->options_.cert_file,
                                                     c->options_.key_file));
  return c;
}

std::string KmipClient::Describe() const {
  return "kmip://" + options_.host + ":" + std::to_string(options_.port);
}

void KmipClient::CloseLocked() {
  io_.reset();  // frees the SSL session
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status KmipClient::ConnectLocked() {
  ASSIGN_OR_RETURN(fd_, Dial(options_.host, options_.port, options_.timeout_ms));
  auto ssl = tls_->NewSession(fd_, options_.host);
  if (!ssl.ok()) {
    CloseLocked();
    return ssl.status();
  }
  io_ = std::make_unique<TlsIo>(*ssl, fd_);
  while (true) {
    auto step = io_->Handshake();
    if (!step.ok()) {
      CloseLocked();
      return Status(Code::kUnavailable, "TLS with the KMIP server " + Describe() + " failed: " +
                                            step.status().message());
    }
    if (step->want == TlsIo::Want::kNothing) return Status::OK();
    if (Status st = TlsIo::Wait(fd_, step->want, options_.timeout_ms); !st.ok()) {
      CloseLocked();
      return Status(Code::kUnavailable, "the KMIP server " + Describe() + " did not finish the TLS handshake");
    }
  }
}

Status KmipClient::SendLocked(const std::string& bytes) {
  for (size_t sent = 0; sent < bytes.size();) {
    ASSIGN_OR_RETURN(auto step, io_->Write(bytes.data() + sent, bytes.size() - sent));
    sent += step.n;
    if (step.closed) return Status(Code::kUnavailable, "the KMIP server closed the connection");
    if (step.n == 0) RETURN_IF_ERROR(TlsIo::Wait(fd_, step.want, options_.timeout_ms));
  }
  return Status::OK();
}

Status KmipClient::ReceiveLocked(char* buf, size_t n) {
  for (size_t got = 0; got < n;) {
    ASSIGN_OR_RETURN(auto step, io_->Read(buf + got, n - got));
    got += step.n;
    if (step.n == 0) {
      if (step.closed) return Status(Code::kUnavailable, "the KMIP server closed the connection");
      RETURN_IF_ERROR(TlsIo::Wait(fd_, step.want, options_.timeout_ms));
    }
  }
  return Status::OK();
}

Result<kmip::Item> KmipClient::ExchangeLocked(const std::string& request) {
  if (!io_) RETURN_IF_ERROR(ConnectLocked());
  RETURN_IF_ERROR(SendLocked(request));
  std::string response(kmip::kHeaderBytes, '\0');
  RETURN_IF_ERROR(ReceiveLocked(response.data(), kmip::kHeaderBytes));
  ASSIGN_OR_RETURN(size_t total, kmip::MessageBytes(response));
  response.resize(total);
  RETURN_IF_ERROR(ReceiveLocked(response.data() + kmip::kHeaderBytes, total - kmip::kHeaderBytes));
  return kmip::Decode(response);
}

Result<kmip::Item> KmipClient::Call(kmip::Operation op, kmip::Item payload) {
  const std::string request = kmip::EncodeRequest(op, std::move(payload));
  Result<kmip::Item> message = Status(Code::kInternal, "no exchange");
  {
    std::lock_guard lock(mu_);
    for (int attempt = 0;; ++attempt) {
      const bool reused = io_ != nullptr;
      message = ExchangeLocked(request);
      if (message.ok()) break;
      // The connection is dropped; one that had been idle (the server may
      // have closed it meanwhile) gets the request once more on a new one.
      // A reply that does not parse is not retried.
      CloseLocked();
      const bool malformed = message.status().code() == Code::kInvalidArgument;
      if (malformed || !reused || attempt > 0) {
        return Status(Code::kUnavailable, "KMIP " + Describe() + ": " + message.status().message());
      }
    }
  }
  auto payload_of = kmip::ResponsePayload(*message, op);
  if (!payload_of.ok() && payload_of.status().code() == Code::kInvalidArgument) {
    return Status(Code::kUnavailable, "KMIP " + Describe() + ": " + payload_of.status().message());
  }
  return payload_of;
}

Result<std::string> KmipClient::CreateKey(std::string_view name) {
  ASSIGN_OR_RETURN(kmip::Item created, Call(kmip::Operation::kCreate, kmip::CreatePayload(name)));
  ASSIGN_OR_RETURN(std::string uid, kmip::UniqueIdentifierOf(created));
  RETURN_IF_ERROR(Call(kmip::Operation::kActivate, kmip::ActivatePayload(uid)).status());
  return uid;
}

Result<ExternalSealed> KmipClient::Encrypt(std::string_view uid, std::string_view plain,
                                           std::string_view iv, std::string_view aad) {
  ASSIGN_OR_RETURN(kmip::Item p, Call(kmip::Operation::kEncrypt, kmip::EncryptPayload(uid, plain, iv, aad)));
  ASSIGN_OR_RETURN(kmip::Sealed s, kmip::EncryptResultOf(p));
  if (!s.iv.empty() && s.iv != iv) {
    return Status(Code::kUnavailable, "the KMIP server " + Describe() + " used a nonce of its own");
  }
  return ExternalSealed{std::move(s.ciphertext), std::move(s.tag)};
}

Result<std::string> KmipClient::Decrypt(std::string_view uid, const ExternalSealed& sealed,
                                        std::string_view iv, std::string_view aad) {
  ASSIGN_OR_RETURN(kmip::Item p, Call(kmip::Operation::kDecrypt,
                                      kmip::DecryptPayload(uid, sealed.ciphertext, iv, aad, sealed.tag)));
  return kmip::DecryptResultOf(p);
}

}  // namespace strata::kms

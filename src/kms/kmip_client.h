// ExternalKeys over KMIP 1.4 (kms/kmip_protocol.h) to a key server such as
// PyKMIP, HashiCorp Vault's KMIP engine or a hardware appliance: TLS 1.2+
// with the server's certificate checked against `ca_file` and the endpoint's
// host, and strata's own client certificate presented (mutual TLS). One
// connection, kept open and used by one request at a time; a failed one is
// dropped and the request tried once more on a new connection. Every wait
// (connect, handshake, send, answer) gives up after timeout_ms.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "common/status.h"
#include "kms/external_keys.h"
#include "kms/kmip_protocol.h"

namespace strata {
class TlsClientContext;
class TlsIo;
}  // namespace strata

namespace strata::kms {

struct KmipOptions {
  std::string host;
  uint16_t port = 5696;
  std::string ca_file;    // PEM; "" = the system's trust store
  std::string cert_file;  // strata's client certificate (PEM)
  std::string key_file;   // and its key
  int timeout_ms = 10000;
};

class KmipClient final : public ExternalKeys {
 public:
  // Loads the TLS files (InvalidArgument naming the one that failed); does
  // not connect yet.
  static Result<std::unique_ptr<KmipClient>> Create(KmipOptions options);
  ~KmipClient() override;

  Result<std::string> CreateKey(std::string_view name) override;
  Result<ExternalSealed> Encrypt(std::string_view uid, std::string_view plain, std::string_view iv,
                                 std::string_view aad) override;
  Result<std::string> Decrypt(std::string_view uid, const ExternalSealed& sealed,
                              std::string_view iv, std::string_view aad) override;
  std::string Describe() const override;

 private:
  explicit KmipClient(KmipOptions options);
  // One request and its answer's payload.
  Result<kmip::Item> Call(kmip::Operation op, kmip::Item payload);
  // Sends `request` and reads the one message that answers it.
  Result<kmip::Item> ExchangeLocked(const std::string& request);
  Status ConnectLocked();
  Status SendLocked(const std::string& bytes);
  Status ReceiveLocked(char* buf, size_t n);
  void CloseLocked();

  const KmipOptions options_;
  std::shared_ptr<TlsClientContext> tls_;
  std::mutex mu_;
  std::unique_ptr<TlsIo> io_;  // guarded by mu_; null when not connected
  int fd_ = -1;                // guarded by mu_
};

}  // namespace strata::kms

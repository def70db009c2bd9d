// A key server outside strata that holds master keys and never hands them
// out: strata asks it to make a key, and to wrap (encrypt) and unwrap
// (decrypt) data keys under one. The KMIP client (kms/kmip_client.h) is the
// one implementation; the key service's tests use an in-memory one.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace strata::kms {

struct ExternalSealed {
  std::string ciphertext, tag;  // AES-256-GCM, 16-byte tag
};

class ExternalKeys {
 public:
  virtual ~ExternalKeys() = default;
  // A new AES-256 key, usable at once; its identifier at the server.
  virtual Result<std::string> CreateKey(std::string_view name) = 0;
  // AES-256-GCM under key `uid` with the caller's 12-byte nonce `iv` (never
  // reused: strata draws it at random per data key) and `aad`.
  virtual Result<ExternalSealed> Encrypt(std::string_view uid, std::string_view plain,
                                         std::string_view iv, std::string_view aad) = 0;
  // Errors (kmip_protocol.h): NotFound (kKmsKey) no such key; PreconditionFailed
  // (kKmsDisabled) the key is not usable (revoked, deactivated); PermissionDenied
  // (kKmsCiphertext) the blob does not open; Unavailable: the server cannot be
  // reached or failed.
  virtual Result<std::string> Decrypt(std::string_view uid, const ExternalSealed& sealed,
                                      std::string_view iv, std::string_view aad) = 0;
  // Where it is, for messages and the admin API ("kmip://host:port").
  virtual std::string Describe() const = 0;
};

}  // namespace strata::kms

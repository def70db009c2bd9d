// The KMIP 1.4 messages strata sends to an external key server, and how it
// reads the answers (docs/encryption.md "External key server (KMIP)"):
//
//   Create    a symmetric key: AES, 256 bits, usage Encrypt | Decrypt, a Name
//   Activate  that key (a new key is Pre-Active; Encrypt needs Active)
//   Encrypt   a data key: AES-GCM, 16-byte tag, our nonce, AAD
//   Decrypt   it again with the same nonce, AAD and tag
//
// Each request carries one batch item. Pure functions: no I/O (that is
// kms/kmip_client.h), so every parser here is fuzzed (kmip_fuzz.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "kms/kmip_ttlv.h"

namespace strata::kms::kmip {

enum class Operation : uint32_t {
  kCreate = 0x01,
  kActivate = 0x12,
  kEncrypt = 0x1F,
  kDecrypt = 0x20,
};

// A request message (protocol 1.4, one batch item), encoded.
std::string EncodeRequest(Operation op, Item payload);

// The payloads of the four requests.
Item CreatePayload(std::string_view name);
Item ActivatePayload(std::string_view uid);
Item EncryptPayload(std::string_view uid, std::string_view plain, std::string_view iv,
                    std::string_view aad);
Item DecryptPayload(std::string_view uid, std::string_view ciphertext, std::string_view iv,
                    std::string_view aad, std::string_view tag);

// The response payload of the one batch item of `response`, once its result
// status says success and it answers `op`. A failure the key server reports
// becomes a Status that says what it means for the object:
//   Item Not Found                                 NotFound (kKmsKey)
//   Permission Denied, Wrong Key Lifecycle State   PreconditionFailed (kKmsDisabled):
//                                                  the key is revoked, deactivated
//                                                  or not usable for this
//   Cryptographic Failure                          PermissionDenied (kKmsCiphertext)
//   anything else                                  Unavailable
// each with the server's reason and message; a response that does not parse
// as a KMIP response is InvalidArgument.
Result<Item> ResponsePayload(const Item& response, Operation op);

// What the payloads of successful responses hold (InvalidArgument if absent).
Result<std::string> UniqueIdentifierOf(const Item& payload);
struct Sealed {
  std::string ciphertext, iv, tag;
};
Result<Sealed> EncryptResultOf(const Item& payload);
Result<std::string> DecryptResultOf(const Item& payload);

}  // namespace strata::kms::kmip

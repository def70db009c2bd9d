// Secrets at rest: AES-256-GCM with a 32-byte master key (the IAM key kept in
// the data directory, mode 0600, or given by the operator). A sealed value is
// version byte 1 | 12-byte random nonce | ciphertext | 16-byte tag; the
// associated data binds it to where it is stored (e.g. the access key id), so
// a sealed secret copied onto another key's record does not open.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace strata::crypto {

inline constexpr size_t kSecretBoxKeyBytes = 32;

// `key` must be kSecretBoxKeyBytes long.
std::string Seal(std::string_view key, std::string_view plaintext, std::string_view aad);
// nullopt if the value was not sealed with this key and aad, or was altered.
std::optional<std::string> Open(std::string_view key, std::string_view sealed,
                                std::string_view aad);

}  // namespace strata::crypto

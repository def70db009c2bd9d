// The credentials type shared by everything that authenticates a caller: the
// S3 verifiers (sigv4.h, sigv2.h, post_policy_signature.h) and the KV
// listener's HMAC challenge (kvcache/server.h), which takes nothing else from
// auth/.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace strata::auth {

// Looks up the secret key of an access key; nullopt if unknown.
using SecretLookup = std::function<std::optional<std::string>(std::string_view access_key)>;

}  // namespace strata::auth

#include "server/console_wire.h"

#include <openssl/crypto.h>

#include <nlohmann/json.hpp>

#include "common/encoding.h"

namespace strata::server::console {

std::optional<SignIn> ParseSignIn(std::string_view body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto ak = j.find("access_key");
  auto sk = j.find("secret_key");
  if (ak == j.end() || sk == j.end() || !ak->is_string() || !sk->is_string()) return std::nullopt;
  return SignIn{ak->get<std::string>(), sk->get<std::string>()};
}

std::string SignInReply(std::string_view access_key, std::string_view identity,
                        std::string_view csrf) {
  nlohmann::json j = {{"access_key", access_key}, {"identity", identity}, {"csrf", csrf}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<std::string_view> CookieNamed(std::string_view header, std::string_view name) {
  std::string_view rest = header;
  while (!rest.empty()) {
    const size_t semi = rest.find(';');
    std::string_view part = TrimBlanks(rest.substr(0, semi));
    rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
    const size_t eq = part.find('=');
    if (eq != std::string_view::npos && TrimBlanks(part.substr(0, eq)) == name) {
      return TrimBlanks(part.substr(eq + 1));
    }
  }
  return std::nullopt;
}

bool TokensEqual(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace strata::server::console

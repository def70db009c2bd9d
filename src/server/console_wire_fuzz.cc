// libFuzzer target: what the web console reads before it authenticates
// (server/console_wire.h). The first byte picks what the rest is:
//   even  a sign-in body (ParseSignIn). What parses, re-sent as the console's
//         own page sends it, parses to the same keys; the reply built from
//         them is always JSON that carries them back.
//   odd   a Cookie header (CookieNamed). A value found lies inside the
//         header, holds no ';' and no blanks at its ends; and the same
//         header with "strata_console=<token>" put first yields the token.
// Seeds: tests/fuzz/console_wire/.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "server/console_wire.h"

using namespace strata::server::console;

namespace {

void CheckSignIn(std::string_view in) {
  auto s = ParseSignIn(in);
  if (!s) return;
  const std::string body =
      nlohmann::json({{"access_key", s->access_key}, {"secret_key", s->secret_key}}).dump();
  auto again = ParseSignIn(body);
  FUZZ_CHECK(again && again->access_key == s->access_key && again->secret_key == s->secret_key);
  const nlohmann::json reply = nlohmann::json::parse(SignInReply(s->access_key, s->secret_key, "00"));
  FUZZ_CHECK(reply.at("access_key").get<std::string>() == s->access_key);
  FUZZ_CHECK(TokensEqual(reply.at("identity").get<std::string>(), s->secret_key));
}

void CheckCookie(std::string_view in) {
  if (auto v = CookieNamed(in, kCookieName)) {
    FUZZ_CHECK(v->data() >= in.data() && v->data() + v->size() <= in.data() + in.size());
    FUZZ_CHECK(v->find(';') == std::string_view::npos);
    FUZZ_CHECK(v->empty() || (v->front() != ' ' && v->front() != '\t' && v->back() != ' ' &&
                              v->back() != '\t'));
  }
  const std::string token = "0123456789abcdef";
  const std::string first = std::string(kCookieName) + "=" + token + "; " + std::string(in);
  auto v = CookieNamed(first, kCookieName);
  FUZZ_CHECK(v && *v == token);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    CheckSignIn(in);
  } else {
    CheckCookie(in);
  }
  return 0;
}

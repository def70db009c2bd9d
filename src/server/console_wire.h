// What the web console (server/console.h, docs/console.md) reads from a
// request before anything is authenticated: the sign-in body and the session
// cookie. Pure functions, fuzzed (console_wire_fuzz.cc) and unit-tested apart
// from the server.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace strata::server::console {

// The session cookie's name.
inline constexpr std::string_view kCookieName = "strata_console";

// POST /_strata/console/api/login: {"access_key": "...", "secret_key": "..."}
// (other fields are ignored). nullopt when the body is not a JSON object with
// both as strings.
struct SignIn {
  std::string access_key, secret_key;
};
std::optional<SignIn> ParseSignIn(std::string_view body);
// The reply to a sign-in: who signed in and the session's CSRF token.
std::string SignInReply(std::string_view access_key, std::string_view identity,
                        std::string_view csrf);

// The value of the cookie `name` in one Cookie header ("a=1; b=2"), the
// first one when it is there more than once; nullopt when it is not there.
// Names match exactly (cookie names are case-sensitive); blanks around a
// pair are not part of it.
std::optional<std::string_view> CookieNamed(std::string_view header, std::string_view name);

// Whether `a` and `b` are equal, in time that depends on their length only
// (session ids and CSRF tokens).
bool TokensEqual(std::string_view a, std::string_view b);

}  // namespace strata::server::console

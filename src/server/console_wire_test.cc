#include "server/console_wire.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::server::console {
namespace {

TEST(ConsoleWire, SignInNeedsBothKeysAsStrings) {
  auto s = ParseSignIn(R"({"access_key":"AK","secret_key":"s\/k","remember":true})");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->access_key, "AK");
  EXPECT_EQ(s->secret_key, "s/k");
  for (const char* bad : {"", "null", "[]", "\"AK\"", R"({"access_key":"AK"})",
                          R"({"secret_key":"SK"})", R"({"access_key":1,"secret_key":"SK"})",
                          R"({"access_key":"AK","secret_key":null})", R"({"access_key":"AK",)",
                          "{\"access_key\":\"\xff\",\"secret_key\":\"x\"}"}) {
    EXPECT_FALSE(ParseSignIn(bad)) << bad;
  }
}

TEST(ConsoleWire, SignInReplyIsJsonEvenForBytesThatAreNotUtf8) {
  const std::string reply = SignInReply("AK", "al\xffice", "00ff");
  nlohmann::json j = nlohmann::json::parse(reply);
  EXPECT_EQ(j["access_key"], "AK");
  EXPECT_EQ(j["csrf"], "00ff");
  EXPECT_EQ(j["identity"], "al\xEF\xBF\xBDice");  // U+FFFD in place of the bad byte
}

TEST(ConsoleWire, CookieNamedFindsExactNamesOnly) {
  EXPECT_EQ(CookieNamed("a=1; strata_console=abc; b=2", kCookieName), "abc");
  EXPECT_EQ(CookieNamed("strata_console=abc", kCookieName), "abc");
  EXPECT_EQ(CookieNamed(" \tstrata_console = v ;", kCookieName), "v");
  EXPECT_EQ(CookieNamed("strata_console=first; strata_console=second", kCookieName), "first");
  EXPECT_EQ(CookieNamed("strata_console=", kCookieName), "");
  EXPECT_EQ(CookieNamed("strata_console=a=b", kCookieName), "a=b");
  EXPECT_FALSE(CookieNamed("", kCookieName));
  EXPECT_FALSE(CookieNamed(";;;", kCookieName));
  EXPECT_FALSE(CookieNamed("strata_console2=x; xstrata_console=y", kCookieName));
  EXPECT_FALSE(CookieNamed("Strata_Console=x", kCookieName));
  EXPECT_FALSE(CookieNamed("strata_console", kCookieName));
}

TEST(ConsoleWire, TokensEqual) {
  EXPECT_TRUE(TokensEqual("", ""));
  EXPECT_TRUE(TokensEqual("00ff", "00ff"));
  EXPECT_FALSE(TokensEqual("00ff", "00fe"));
  EXPECT_FALSE(TokensEqual("00ff", "00ff0"));
  EXPECT_FALSE(TokensEqual(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
}

}  // namespace
}  // namespace strata::server::console

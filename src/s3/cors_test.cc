#include "s3/cors.h"

#include <gtest/gtest.h>

#include "s3/xml.h"

namespace strata::s3 {
namespace {

std::vector<CorsRule> Rules(std::string_view xml) {
  auto r = ParseCorsConfiguration(xml);
  EXPECT_TRUE(r) << xml;
  return r ? *r : std::vector<CorsRule>{};
}

const char kConfig[] = R"(<CORSConfiguration>
  <CORSRule><ID>app</ID><AllowedOrigin>https://app.example.com</AllowedOrigin>
    <AllowedOrigin>https://*.example.org</AllowedOrigin>
    <AllowedMethod>GET</AllowedMethod><AllowedMethod>PUT</AllowedMethod>
    <AllowedHeader>Content-*</AllowedHeader><AllowedHeader>x-amz-date</AllowedHeader>
    <ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>300</MaxAgeSeconds></CORSRule>
  <CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>HEAD</AllowedMethod></CORSRule>
</CORSConfiguration>)";

TEST(CorsTest, MatchesOriginMethodAndHeaders) {
  auto rules = Rules(kConfig);
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_FALSE(ValidateCors(rules));
  EXPECT_EQ(MatchCors(rules, "https://app.example.com", "GET"), &rules[0]);
  EXPECT_EQ(MatchCors(rules, "https://a.b.example.org", "PUT"), &rules[0]);
  EXPECT_EQ(MatchCors(rules, "https://example.org", "PUT"), nullptr);  // "*." needs a label
  EXPECT_EQ(MatchCors(rules, "https://app.example.com", "DELETE"), nullptr);
  EXPECT_EQ(MatchCors(rules, "https://evil.com", "GET"), nullptr);
  EXPECT_EQ(MatchCors(rules, "https://evil.com", "HEAD"), &rules[1]);
  EXPECT_EQ(MatchCors(rules, "https://APP.example.com", "GET"), nullptr);  // origins are exact
  EXPECT_EQ(MatchCors(rules, "https://app.example.com", "get"), nullptr);  // methods too
  // Requested headers: every one allowed, case-insensitively.
  EXPECT_EQ(MatchCors(rules, "https://app.example.com", "PUT", {"content-type", "X-Amz-Date"}),
            &rules[0]);
  EXPECT_EQ(MatchCors(rules, "https://app.example.com", "PUT", {"content-type", "authorization"}),
            nullptr);
}

TEST(CorsTest, HeadersOfPreflightAndActualRequests) {
  auto rules = Rules(kConfig);
  auto find = [](const auto& h, std::string_view name) -> std::string {
    for (const auto& [k, v] : h) {
      if (k == name) return v;
    }
    return "<none>";
  };
  auto pre = CorsHeaders(rules[0], "https://app.example.com", true, {"content-type"});
  EXPECT_EQ(find(pre, "Access-Control-Allow-Origin"), "https://app.example.com");
  EXPECT_EQ(find(pre, "Access-Control-Allow-Methods"), "GET, PUT");
  EXPECT_EQ(find(pre, "Access-Control-Allow-Headers"), "content-type");
  EXPECT_EQ(find(pre, "Access-Control-Max-Age"), "300");
  EXPECT_EQ(find(pre, "Access-Control-Expose-Headers"), "ETag");
  EXPECT_EQ(find(pre, "Access-Control-Allow-Credentials"), "true");
  auto any = CorsHeaders(rules[1], "https://evil.com", false);
  EXPECT_EQ(find(any, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(find(any, "Access-Control-Allow-Credentials"), "<none>");
  EXPECT_EQ(find(any, "Access-Control-Allow-Headers"), "<none>");
}

TEST(CorsTest, ValidationAsS3) {
  auto bad_method = Rules(
      "<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin>"
      "<AllowedMethod>PATCH</AllowedMethod></CORSRule></CORSConfiguration>");
  ASSERT_TRUE(ValidateCors(bad_method));
  EXPECT_NE(ValidateCors(bad_method)->find("Unsupported method is PATCH"), std::string::npos);
  auto two_stars = Rules(
      "<CORSConfiguration><CORSRule><AllowedOrigin>https://*.*.com</AllowedOrigin>"
      "<AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>");
  EXPECT_TRUE(ValidateCors(two_stars));
  EXPECT_TRUE(ValidateCors(Rules("<CORSConfiguration></CORSConfiguration>")));
  EXPECT_TRUE(ValidateCors(Rules("<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod>"
                                 "</CORSRule></CORSConfiguration>")));
  std::string many = "<CORSConfiguration>";
  for (size_t i = 0; i <= kMaxCorsRules; ++i) {
    many += "<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>";
  }
  EXPECT_TRUE(ValidateCors(Rules(many + "</CORSConfiguration>")));
  EXPECT_FALSE(ParseCorsConfiguration("<CORSConfiguration><CORSRule><MaxAgeSeconds>x</MaxAgeSeconds>"
                                      "</CORSRule></CORSConfiguration>"));
  EXPECT_FALSE(ParseCorsConfiguration("<NotCors/>"));
  EXPECT_FALSE(ParseCorsConfiguration("<CORSConfiguration>"));
}

TEST(CorsTest, RenderedConfigurationParsesBackTheSame) {
  auto rules = Rules(kConfig);
  auto again = Rules(RenderCorsConfiguration(rules));
  ASSERT_EQ(again.size(), rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    EXPECT_EQ(again[i].id, rules[i].id);
    EXPECT_EQ(again[i].methods, rules[i].methods);
    EXPECT_EQ(again[i].origins, rules[i].origins);
    EXPECT_EQ(again[i].allowed_headers, rules[i].allowed_headers);
    EXPECT_EQ(again[i].expose_headers, rules[i].expose_headers);
    EXPECT_EQ(again[i].max_age_s, rules[i].max_age_s);
  }
}

TEST(CorsTest, SplitHeaderList) {
  EXPECT_EQ(SplitHeaderList(" a, b ,,c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(SplitHeaderList("").empty());
}

}  // namespace
}  // namespace strata::s3

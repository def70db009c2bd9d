#include "auth/authorizer.h"

#include <gtest/gtest.h>

namespace strata::auth {
namespace {

Policy Parse(std::string_view json, Policy::Kind kind) {
  auto p = Policy::Parse(json, kind);
  if (auto* e = std::get_if<PolicyError>(&p)) ADD_FAILURE() << e->message;
  return std::move(std::get<Policy>(p));
}

Caller Root() {
  Caller c;
  c.principal = {Principal::Kind::kRoot, "123456789012", "arn:aws:iam::123456789012:root",
                 std::string(64, 'a'), "", "123456789012"};
  return c;
}
Caller User(std::vector<std::shared_ptr<const Policy>> policies = {}) {
  Caller c;
  c.principal = {Principal::Kind::kUser, "123456789012", "arn:aws:iam::123456789012:user/alice",
                 std::string(64, 'b'), "alice", "AIDAEXAMPLE"};
  c.policies = std::move(policies);
  return c;
}
Caller Anonymous() { return Caller{}; }

std::shared_ptr<const Policy> Identity(std::string_view json) {
  return std::make_shared<const Policy>(Parse(json, Policy::Kind::kIdentity));
}

constexpr std::string_view kObject = "arn:aws:s3:::bkt/key";

AccessDecision Ask(const Caller& c, const Policy* bucket, std::string_view action = "s3:GetObject",
                   bool manages = false) {
  return Authorize(c, bucket, AccessQuery{action, kObject, nullptr, manages});
}

TEST(AuthorizerTest, RootNeedsNoPolicyButHonoursABucketDeny) {
  EXPECT_EQ(Ask(Root(), nullptr), AccessDecision::kAllow);
  Policy deny = Parse(R"({"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*",)"
                      R"("Resource":"arn:aws:s3:::bkt/*"}]})",
                      Policy::Kind::kResource);
  EXPECT_EQ(Ask(Root(), &deny), AccessDecision::kExplicitDeny);
  // ...except for the bucket policy calls: root cannot lock itself out.
  Policy deny_all = Parse(R"({"Statement":[{"Effect":"Deny","Principal":"*","Action":"*",)"
                          R"("Resource":"*"}]})",
                          Policy::Kind::kResource);
  EXPECT_EQ(Ask(Root(), &deny_all, "s3:PutBucketPolicy", true), AccessDecision::kAllow);
  EXPECT_EQ(Ask(User(), &deny_all, "s3:PutBucketPolicy", true), AccessDecision::kExplicitDeny);
}

TEST(AuthorizerTest, UsersNeedAnAllowFromEitherSide) {
  EXPECT_EQ(Ask(User(), nullptr), AccessDecision::kImplicitDeny);
  auto allow = Identity(R"({"Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]})");
  EXPECT_EQ(Ask(User({allow}), nullptr), AccessDecision::kAllow);
  EXPECT_EQ(Ask(User({allow}), nullptr, "s3:PutObject"), AccessDecision::kImplicitDeny);
  Policy bucket = Parse(R"({"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:user/alice"},)"
                        R"("Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/*"}]})",
                        Policy::Kind::kResource);
  EXPECT_EQ(Ask(User(), &bucket, "s3:PutObject"), AccessDecision::kAllow);
  EXPECT_EQ(Ask(User({allow}), &bucket, "s3:GetObject"), AccessDecision::kAllow);
  EXPECT_EQ(Ask(User(), &bucket, "s3:GetObject"), AccessDecision::kImplicitDeny);
}

TEST(AuthorizerTest, AnExplicitDenyAnywhereWins) {
  auto allow = Identity(R"({"Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]})");
  auto deny = Identity(R"({"Statement":[{"Effect":"Deny","Action":"s3:GetObject","Resource":"*"}]})");
  EXPECT_EQ(Ask(User({allow, deny}), nullptr), AccessDecision::kExplicitDeny);
  EXPECT_EQ(Ask(User({deny, allow}), nullptr), AccessDecision::kExplicitDeny);
  Policy bucket_deny = Parse(R"({"Statement":[{"Effect":"Deny","Principal":{"AWS":"*"},)"
                             R"("Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/key"}]})",
                             Policy::Kind::kResource);
  EXPECT_EQ(Ask(User({allow}), &bucket_deny), AccessDecision::kExplicitDeny);
  EXPECT_EQ(Ask(User({allow}), &bucket_deny, "s3:PutObject"), AccessDecision::kAllow);
}

TEST(AuthorizerTest, AnonymousOnlyThroughAPublicBucketPolicy) {
  EXPECT_EQ(Ask(Anonymous(), nullptr), AccessDecision::kImplicitDeny);
  Policy to_user = Parse(R"({"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:user/alice"},)"
                         R"("Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}]})",
                         Policy::Kind::kResource);
  EXPECT_EQ(Ask(Anonymous(), &to_user), AccessDecision::kImplicitDeny);
  Policy to_all = Parse(R"({"Statement":[{"Effect":"Allow","Principal":"*",)"
                        R"("Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}]})",
                        Policy::Kind::kResource);
  EXPECT_EQ(Ask(Anonymous(), &to_all), AccessDecision::kAllow);
  EXPECT_EQ(Ask(Anonymous(), &to_all, "s3:PutObject"), AccessDecision::kImplicitDeny);
}

}  // namespace
}  // namespace strata::auth

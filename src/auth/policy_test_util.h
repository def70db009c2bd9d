// Fixtures of the policy language's unit tests (policy_test.cc,
// policy_conditions_test.cc): principals, parsing, evaluation shortcuts.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "auth/policy.h"

namespace strata::auth {
namespace {

// ---- fixtures -------------------------------------------------------------------------

constexpr char kAccount[] = "111122223333";
constexpr char kOtherAccount[] = "444455556666";
constexpr char kAliceCanonical[] =
    "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be";
constexpr char kBobCanonical[] =
    "0b5b4a3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a";

inline Principal User(std::string name, std::string account = kAccount,
               std::string canonical = kAliceCanonical) {
  Principal p;
  p.kind = Principal::Kind::kUser;
  p.account = account;
  p.arn = "arn:aws:iam::" + account + ":user/" + name;
  p.canonical_id = std::move(canonical);
  p.username = name;
  p.user_id = "AIDA" + name;
  return p;
}

inline Principal Root(std::string account = kAccount) {
  Principal p;
  p.kind = Principal::Kind::kRoot;
  p.account = account;
  p.arn = "arn:aws:iam::" + account + ":root";
  p.canonical_id = kBobCanonical;
  p.user_id = account;
  return p;
}

const Principal kAnonymous;
const Principal kAlice = User("alice");
const Principal kBob = User("bob", kAccount, kBobCanonical);

inline Policy MustParse(std::string_view json, Policy::Kind kind = Policy::Kind::kResource) {
  auto parsed = Policy::Parse(json, kind);
  if (auto* e = std::get_if<PolicyError>(&parsed)) {
    ADD_FAILURE() << "parse failed: " << e->message << "\n" << json;
    return std::get<Policy>(Policy::Parse(
        R"({"Statement":{"Effect":"Deny","Action":"x:none","Resource":"arn:none"}})",
        Policy::Kind::kIdentity));
  }
  return std::move(std::get<Policy>(parsed));
}

// The error message, or "" if the document parses.
inline std::string ParseError(std::string_view json, Policy::Kind kind = Policy::Kind::kResource) {
  auto parsed = Policy::Parse(json, kind);
  auto* e = std::get_if<PolicyError>(&parsed);
  return e != nullptr ? e->message : "";
}

inline Decision Eval(const Policy& policy, const Principal& who, std::string_view action,
              std::string_view resource, const ConditionContext* conditions = nullptr) {
  return policy.Evaluate(EvalRequest{&who, action, resource, conditions});
}

using Keys = std::vector<std::pair<std::string, std::vector<std::string>>>;

inline MapConditionContext Context(const Keys& keys) {
  MapConditionContext ctx;
  for (const auto& [k, v] : keys) ctx.Set(k, v);
  return ctx;
}

// An identity policy allowing s3:GetObject on everything under `condition`.
inline std::string ConditionPolicy(std::string_view condition, std::string_view version = "2012-10-17") {
  return R"({"Version":")" + std::string(version) +
         R"(","Statement":{"Effect":"Allow","Action":"s3:GetObject","Resource":"*","Condition":)" +
         std::string(condition) + "}}";
}

// ---- conditions --------------------------------------------------------------------------

struct ConditionCase {
  const char* condition;  // the Condition element
  Keys request;           // the request's condition keys
  bool holds;
};

inline void CheckConditions(const std::vector<ConditionCase>& cases) {
  for (const ConditionCase& c : cases) {
    Policy p = MustParse(ConditionPolicy(c.condition), Policy::Kind::kIdentity);
    MapConditionContext ctx = Context(c.request);
    std::string request;
    for (const auto& [k, vs] : c.request) {
      request += k + "=[";
      for (const auto& v : vs) request += v + ",";
      request += "] ";
    }
    EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/k", &ctx),
              c.holds ? Decision::kAllow : Decision::kNotApplicable)
        << c.condition << " with " << request;
  }
}

}  // namespace
}  // namespace strata::auth

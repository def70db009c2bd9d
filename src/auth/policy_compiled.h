// The compiled form of a policy (auth/ only): what Policy::Parse makes
// (policy_compile.cc) and Policy::Evaluate walks (policy.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/policy.h"
#include "auth/policy_values.h"

namespace strata::auth::policy_internal {

// ---- the compiled form -----------------------------------------------------------

// A pattern of the policy: an action (lowercased), a principal ARN, a
// Resource or a String* / Arn* condition value. `parts` is empty when it has
// no policy variables (the common case: matched as `text` without any
// copying); otherwise it is expanded per request.
struct Pattern {
  enum class Part { kPattern, kVariable, kLiteral };
  std::string text;           // as written
  size_t literal_prefix = 0;  // LiteralPrefix(text)
  std::vector<std::pair<Part, std::string>> parts;
};

enum class Family {
  kString, kStringIgnoreCase, kStringLike, kArn, kNumeric, kDate, kBool, kBinary, kIp, kNull,
};
enum class Compare { kEq, kLt, kLe, kGt, kGe };
enum class Qualifier { kNone, kForAnyValue, kForAllValues };

struct OperatorInfo {
  std::string_view name;
  Family family;
  Compare compare;
  bool negated;
};

constexpr OperatorInfo kOperators[] = {
    {"StringEquals", Family::kString, Compare::kEq, false},
    {"StringNotEquals", Family::kString, Compare::kEq, true},
    {"StringEqualsIgnoreCase", Family::kStringIgnoreCase, Compare::kEq, false},
    {"StringNotEqualsIgnoreCase", Family::kStringIgnoreCase, Compare::kEq, true},
    {"StringLike", Family::kStringLike, Compare::kEq, false},
    {"StringNotLike", Family::kStringLike, Compare::kEq, true},
    {"NumericEquals", Family::kNumeric, Compare::kEq, false},
    {"NumericNotEquals", Family::kNumeric, Compare::kEq, true},
    {"NumericLessThan", Family::kNumeric, Compare::kLt, false},
    {"NumericLessThanEquals", Family::kNumeric, Compare::kLe, false},
    {"NumericGreaterThan", Family::kNumeric, Compare::kGt, false},
    {"NumericGreaterThanEquals", Family::kNumeric, Compare::kGe, false},
    {"DateEquals", Family::kDate, Compare::kEq, false},
    {"DateNotEquals", Family::kDate, Compare::kEq, true},
    {"DateLessThan", Family::kDate, Compare::kLt, false},
    {"DateLessThanEquals", Family::kDate, Compare::kLe, false},
    {"DateGreaterThan", Family::kDate, Compare::kGt, false},
    {"DateGreaterThanEquals", Family::kDate, Compare::kGe, false},
    {"Bool", Family::kBool, Compare::kEq, false},
    {"BinaryEquals", Family::kBinary, Compare::kEq, false},
    {"IpAddress", Family::kIp, Compare::kEq, false},
    {"NotIpAddress", Family::kIp, Compare::kEq, true},
    // AWS gives ArnEquals wildcards too: the two are the same operator.
    {"ArnEquals", Family::kArn, Compare::kEq, false},
    {"ArnLike", Family::kArn, Compare::kEq, false},
    {"ArnNotEquals", Family::kArn, Compare::kEq, true},
    {"ArnNotLike", Family::kArn, Compare::kEq, true},
    {"Null", Family::kNull, Compare::kEq, false},
};

struct Operator {
  Family family = Family::kString;
  Compare compare = Compare::kEq;
  bool negated = false;
  Qualifier qualifier = Qualifier::kNone;
  bool if_exists = false;
};

// One policy value of a condition, compiled for its operator's family.
struct Value {
  Pattern text;          // String*, Arn*
  double number = 0;     // Numeric*
  int64_t date = 0;      // Date*: epoch seconds
  bool boolean = false;  // Bool, Null
  std::string binary;    // BinaryEquals: the decoded bytes
  Cidr cidr;             // IpAddress, NotIpAddress
};

// Distinct condition keys of a policy whose request values one Evaluate
// looks up once (most policies test a handful; the rest are looked up each time).
constexpr size_t kCachedKeys = 32;
constexpr uint16_t kUncachedKey = UINT16_MAX;

struct Condition {
  Operator op;
  std::string key;  // lowercased
  std::vector<Value> values;
  uint16_t key_index = kUncachedKey;  // into EvalScratch's looked-up values
};

struct PrincipalSet {
  bool everyone = false;
  std::vector<Pattern> arns;  // account ids stored as their root ARN
  std::vector<std::string> canonical_ids;
};

// Distinct principal / action / resource blocks whose match one Evaluate
// decides once (statements often repeat them, differing in conditions).
constexpr size_t kCachedTargets = 32;

struct Statement {
  bool deny = false;
  bool has_principal = false;  // resource policies: Principal or NotPrincipal
  bool not_principal = false;
  PrincipalSet principals;
  bool not_action = false;
  std::vector<std::string> actions;   // as written
  std::vector<Pattern> action_lower;  // what is matched
  bool not_resource = false;
  std::vector<Pattern> resources;
  std::vector<Condition> conditions;
  // Statements with the same principal, action and resource elements share
  // it (into EvalScratch's decided targets).
  uint16_t target_index = kUncachedKey;
};

}  // namespace strata::auth::policy_internal

namespace strata::auth {

struct Policy::Compiled {
  std::vector<policy_internal::Statement> statements;
};

}  // namespace strata::auth

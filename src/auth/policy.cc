// Policy::Evaluate and the rest of Policy's interface over the compiled form
// (policy_compiled.h); the compiler is policy_compile.cc, the value parsers
// and matchers policy_values.cc.
#include "auth/policy.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "auth/policy_compiled.h"
#include "common/encoding.h"

namespace strata::auth {

namespace {

using namespace policy_internal;  // NOLINT: this file evaluates that form

// ---- evaluation ----------------------------------------------------------------------

const Principal& Caller(const EvalRequest& r) {
  static const Principal kAnonymous;
  return r.principal != nullptr ? *r.principal : kAnonymous;
}

const std::vector<std::string>* RequestValues(const EvalRequest& r, std::string_view key) {
  return r.conditions != nullptr ? r.conditions->Values(key) : nullptr;
}

// A policy variable's value: the key's single value in the request; the
// principal keys fall back to the caller. nullptr: unresolved.
const std::string* VariableValue(const EvalRequest& r, std::string_view key) {
  if (const auto* values = RequestValues(r, key)) {
    return values->size() == 1 ? &(*values)[0] : nullptr;
  }
  const Principal& p = Caller(r);
  const std::string* field = nullptr;
  if (key == "aws:username") field = &p.username;
  if (key == "aws:userid") field = &p.user_id;
  if (key == "aws:principalarn") field = &p.arn;
  return field != nullptr && !field->empty() ? field : nullptr;
}

// The text of a pattern with variables for this request, with a mask marking the bytes
// that are literal (variable values and ${*} ${?} ${$}). False: a variable is
// unresolved, and the pattern matches nothing.
bool Expand(const Pattern& t, const EvalRequest& r, std::string* pattern, std::string* literal) {
  for (const auto& [kind, text] : t.parts) {
    std::string_view piece = text;
    if (kind == Pattern::Part::kVariable) {
      const std::string* value = VariableValue(r, text);
      if (value == nullptr) return false;
      piece = *value;
    }
    pattern->append(piece);
    literal->append(piece.size(), kind == Pattern::Part::kPattern ? '\0' : '\1');
  }
  return true;
}

bool MatchText(Family how, std::string_view p, std::string_view literal, std::string_view text) {
  switch (how) {
    case Family::kString: return p == text;
    case Family::kStringIgnoreCase: return EqualsIgnoreCase(p, text);
    case Family::kArn: return ArnMatches(p, literal, text);
    default: return MatchWildcards(p, literal, text, false);
  }
}

bool MatchPattern(const Pattern& t, Family how, std::string_view text, const EvalRequest& r) {
  if (t.parts.empty()) {
    return how == Family::kStringLike ? MatchGlob(t.text, t.literal_prefix, text, false)
                                      : MatchText(how, t.text, {}, text);
  }
  std::string pattern, literal;
  return Expand(t, r, &pattern, &literal) && MatchText(how, pattern, literal, text);
}

template <typename T>
bool Compared(T a, T b, Compare c) {
  switch (c) {
    case Compare::kEq: return a == b;
    case Compare::kLt: return a < b;
    case Compare::kLe: return a <= b;
    case Compare::kGt: return a > b;
    case Compare::kGe: return a >= b;
  }
  return false;
}

// What one Evaluate has parsed of the request's values already: the address
// of aws:SourceIp is tested by many statements of a policy, parsed once.
struct EvalScratch {
  const std::string* ip_text = nullptr;  // the request value parsed below
  std::optional<IpAddress> ip;
  // The request's values of the policy's first kCachedKeys distinct keys.
  std::array<const std::vector<std::string>*, kCachedKeys> values{};
  uint32_t looked_up = 0;  // bit i: values[i] is set
  // Statement::target_index i: bit i of targets_known says it was decided,
  // bit i of targets_match how.
  uint32_t targets_known = 0, targets_match = 0;
};

// Whether one request value matches any of the policy values under the
// operator's positive form. nullopt: the value is malformed for the operator
// (not a number, date, address or ARN), which no operator accepts, negated or not.
std::optional<bool> MatchesAny(const Condition& c, const std::string& v, const EvalRequest& r,
                               EvalScratch* scratch) {
  const Family f = c.op.family;
  switch (f) {
    case Family::kNumeric: {
      auto n = ParseNumber(v);
      if (!n) return std::nullopt;
      for (const Value& p : c.values) {
        if (Compared(*n, p.number, c.op.compare)) return true;
      }
      return false;
    }
    case Family::kDate: {
      auto d = ParseDate(v);
      if (!d) return std::nullopt;
      for (const Value& p : c.values) {
        if (Compared(*d, p.date, c.op.compare)) return true;
      }
      return false;
    }
    case Family::kIp: {
      if (scratch->ip_text != &v) {
        scratch->ip = ParseIp(v);
        scratch->ip_text = &v;
      }
      const std::optional<IpAddress>& ip = scratch->ip;
      if (!ip) return std::nullopt;
      for (const Value& p : c.values) {
        if (CidrContains(p.cidr, *ip)) return true;
      }
      return false;
    }
    case Family::kBool:
      for (const Value& p : c.values) {
        if (EqualsIgnoreCase(v, p.boolean ? "true" : "false")) return true;
      }
      return false;
    case Family::kBinary:
      for (const Value& p : c.values) {
        if (v == p.binary) return true;
      }
      return false;
    default:
      if (f == Family::kArn && !LooksLikeArn(v)) return std::nullopt;
      for (const Value& p : c.values) {
        if (MatchPattern(p.text, f, v, r)) return true;
      }
      return false;
  }
}

bool ConditionHolds(const Condition& c, const EvalRequest& r, EvalScratch* scratch) {
  const std::vector<std::string>* values;
  if (c.key_index == kUncachedKey) {
    values = RequestValues(r, c.key);
  } else if (scratch->looked_up & (1u << c.key_index)) {
    values = scratch->values[c.key_index];
  } else {
    values = scratch->values[c.key_index] = RequestValues(r, c.key);
    scratch->looked_up |= 1u << c.key_index;
  }
  const bool absent = values == nullptr || values->empty();
  if (c.op.family == Family::kNull) {
    for (const Value& p : c.values) {
      if (p.boolean == absent) return true;
    }
    return false;
  }
  if (absent) {
    if (c.op.if_exists) return true;
    switch (c.op.qualifier) {
      case Qualifier::kForAllValues: return true;
      case Qualifier::kForAnyValue: return false;
      case Qualifier::kNone: return c.op.negated;
    }
  }
  // A request value "satisfies" the operator when it matches some policy
  // value (positive operators) or none (negated ones). Without a qualifier a
  // positive operator needs one satisfying value and a negated one needs all
  // of them (no request value matches any policy value).
  const bool need_all = c.op.qualifier == Qualifier::kForAllValues ||
                        (c.op.qualifier == Qualifier::kNone && c.op.negated);
  for (const std::string& v : *values) {
    auto any = MatchesAny(c, v, r, scratch);
    const bool satisfied = any.has_value() && *any != c.op.negated;
    if (need_all && !satisfied) return false;
    if (!need_all && satisfied) return true;
  }
  return need_all;
}

bool PrincipalMatches(const PrincipalSet& set, const Principal& p) {
  if (set.everyone) return true;
  if (p.kind == Principal::Kind::kAnonymous) return false;
  for (const Pattern& arn : set.arns) {
    if (MatchGlob(arn.text, arn.literal_prefix, p.arn, false)) return true;
  }
  for (const std::string& id : set.canonical_ids) {
    if (id == p.canonical_id) return true;
  }
  return false;
}

bool ActionMatches(const Statement& s, std::string_view action) {
  for (const Pattern& pattern : s.action_lower) {
    if (MatchGlob(pattern.text, pattern.literal_prefix, action, /*ignore_case=*/true)) {
      return !s.not_action;
    }
  }
  return s.not_action;
}

bool ResourceMatches(const Statement& s, const EvalRequest& r) {
  for (const Pattern& t : s.resources) {
    if (MatchPattern(t, Family::kStringLike, r.resource, r)) return !s.not_resource;
  }
  return s.not_resource;
}

bool TargetMatches(const Statement& s, const EvalRequest& r) {
  if (s.has_principal && PrincipalMatches(s.principals, Caller(r)) == s.not_principal) {
    return false;
  }
  return ActionMatches(s, r.action) && ResourceMatches(s, r);
}

bool StatementMatches(const Statement& s, const EvalRequest& r, EvalScratch* scratch) {
  bool target;
  if (s.target_index == kUncachedKey) {
    target = TargetMatches(s, r);
  } else if (scratch->targets_known & (1u << s.target_index)) {
    target = scratch->targets_match & (1u << s.target_index);
  } else {
    target = TargetMatches(s, r);
    scratch->targets_known |= 1u << s.target_index;
    if (target) scratch->targets_match |= 1u << s.target_index;
  }
  if (!target) return false;
  for (const Condition& c : s.conditions) {
    if (!ConditionHolds(c, r, scratch)) return false;
  }
  return true;
}

// ---- IsPublic ------------------------------------------------------------------------

constexpr std::string_view kPinningKeys[] = {
    "aws:sourceip",      "aws:sourcearn",        "aws:sourcevpc",
    "aws:sourcevpce",    "aws:sourceaccount",    "aws:principalaccount",
    "aws:userid",        "aws:principalarn",
    "s3:x-amz-server-side-encryption-aws-kms-key-id",
};

// A value that names one thing: no policy variable and, for the wildcard
// operators, no wildcard; a CIDR narrower than the whole address space.
bool IsFixedValue(const Condition& c, const Value& v) {
  switch (c.op.family) {
    case Family::kIp: return v.cidr.prefix > 0;
    case Family::kStringLike:
    case Family::kArn:
      return v.text.parts.empty() && v.text.text.find_first_of("*?") == std::string::npos;
    default: return v.text.parts.empty();
  }
}

// Whether the condition can only hold for requests carrying fixed values of
// one of the keys above: a positive string / ARN / IP operator that an absent
// key does not satisfy.
bool PinsToFixedValues(const Condition& c) {
  const Family f = c.op.family;
  if (f != Family::kString && f != Family::kStringIgnoreCase && f != Family::kStringLike &&
      f != Family::kArn && f != Family::kIp) {
    return false;
  }
  if (c.op.negated || c.op.if_exists || c.op.qualifier == Qualifier::kForAllValues) return false;
  bool pinning_key = false;
  for (std::string_view k : kPinningKeys) pinning_key |= c.key == k;
  if (!pinning_key) return false;
  for (const Value& v : c.values) {
    if (!IsFixedValue(c, v)) return false;
  }
  return true;
}

bool StatementIsPublic(const Statement& s) {
  if (s.deny || !s.has_principal || !(s.not_principal || s.principals.everyone)) return false;
  for (const Condition& c : s.conditions) {
    if (PinsToFixedValues(c)) return false;
  }
  return true;
}

}  // namespace

// ---- public API ----------------------------------------------------------------------------

void MapConditionContext::Set(std::string_view key, std::vector<std::string> values) {
  std::string lower = AsciiLower(key);
  for (auto& [k, v] : entries_) {
    if (k == lower) {
      v = std::move(values);
      return;
    }
  }
  entries_.emplace_back(std::move(lower), std::move(values));
}

const std::vector<std::string>* MapConditionContext::Values(std::string_view key_lower) const {
  for (const auto& [k, v] : entries_) {
    if (k == key_lower) return &v;
  }
  return nullptr;
}

Policy::Policy(std::unique_ptr<Compiled> compiled) : compiled_(std::move(compiled)) {}
Policy::Policy(Policy&&) noexcept = default;
Policy& Policy::operator=(Policy&&) noexcept = default;
Policy::~Policy() = default;


Decision Policy::Evaluate(const EvalRequest& request) const {
  bool allowed = false;
  EvalScratch scratch;
  for (const Statement& s : compiled_->statements) {
    if (allowed && !s.deny) continue;  // once allowed, only a deny can change the answer
    if (!StatementMatches(s, request, &scratch)) continue;
    if (s.deny) return Decision::kDeny;
    allowed = true;
  }
  return allowed ? Decision::kAllow : Decision::kNotApplicable;
}

std::vector<std::string> Policy::ResourcePatterns() const {
  std::vector<std::string> out;
  for (const Statement& s : compiled_->statements) {
    for (const Pattern& t : s.resources) out.push_back(t.text);
  }
  return out;
}

std::vector<std::string> Policy::ActionPatterns() const {
  std::vector<std::string> out;
  for (const Statement& s : compiled_->statements) {
    out.insert(out.end(), s.actions.begin(), s.actions.end());
  }
  return out;
}

bool Policy::IsPublic() const {
  for (const Statement& s : compiled_->statements) {
    if (StatementIsPublic(s)) return true;
  }
  return false;
}

size_t Policy::statement_count() const { return compiled_->statements.size(); }

bool WildcardMatch(std::string_view pattern, std::string_view text, bool ignore_case) {
  return MatchGlob(pattern, LiteralPrefix(pattern), text, ignore_case);
}

}  // namespace strata::auth

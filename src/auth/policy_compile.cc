// Policy::Parse: a policy document (JSON, nlohmann) compiled into the
// structures of policy_compiled.h, with every check AWS makes and a message
// naming what is wrong.
#include <algorithm>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "auth/policy.h"
#include "auth/policy_compiled.h"
#include "common/encoding.h"

namespace strata::auth {

namespace {

using namespace policy_internal;  // NOLINT: this file is the compiler of that form
using Json = nlohmann::json;

// ---- compilation ------------------------------------------------------------------------

int EvaluationCost(Family f) {
  switch (f) {
    case Family::kNull: return 0;
    case Family::kBool:
    case Family::kBinary:
    case Family::kString:
    case Family::kStringIgnoreCase: return 1;
    case Family::kStringLike:
    case Family::kArn: return 2;
    default: return 3;  // values parsed per request: numbers, dates, addresses
  }
}

std::optional<Operator> ParseOperator(std::string_view name) {
  Operator op;
  if (name.starts_with("ForAnyValue:")) {
    op.qualifier = Qualifier::kForAnyValue;
    name.remove_prefix(12);
  } else if (name.starts_with("ForAllValues:")) {
    op.qualifier = Qualifier::kForAllValues;
    name.remove_prefix(13);
  }
  if (name.ends_with("IfExists")) {
    op.if_exists = true;
    name.remove_suffix(8);
  }
  for (const OperatorInfo& info : kOperators) {
    if (info.name != name) continue;
    // Null asks about presence itself: neither IfExists nor a set qualifier means anything.
    if (info.family == Family::kNull && (op.if_exists || op.qualifier != Qualifier::kNone)) {
      return std::nullopt;
    }
    op.family = info.family;
    op.compare = info.compare;
    op.negated = info.negated;
    return op;
  }
  return std::nullopt;
}

bool IsConditionKey(std::string_view key) {
  for (std::string_view prefix : {"aws:", "s3:", "strata:"}) {
    if (StartsWithIgnoreCase(key, prefix) && key.size() > prefix.size()) return true;
  }
  return false;
}

// "s3:GetObject", "s3:Get*", "*": a service name, ':' and a non-empty name.
bool IsAction(std::string_view a) {
  if (a == "*") return true;
  const size_t colon = a.find(':');
  if (colon == kNpos || colon == 0 || colon + 1 == a.size()) return false;
  for (char c : a.substr(0, colon)) {
    const bool ok = IsDigit(c) || (LowerAscii(c) >= 'a' && LowerAscii(c) <= 'z') || c == '-';
    if (!ok) return false;
  }
  return true;
}

// `${key}` becomes a variable, `${*}` `${?}` `${$}` literal characters; a
// `${` without a closing brace, or `${}`, stays text.
Pattern CompilePattern(std::string_view text, bool variables) {
  Pattern t;
  t.text = std::string(text);
  t.literal_prefix = LiteralPrefix(text);
  if (!variables || text.find("${") == kNpos) return t;
  std::string pending;  // pattern text not yet added to t.parts
  auto flush = [&] {
    if (!pending.empty()) t.parts.emplace_back(Pattern::Part::kPattern, std::move(pending));
    pending.clear();
  };
  size_t i = 0;
  while (true) {
    const size_t open = text.find("${", i);
    const size_t close = open == kNpos ? kNpos : text.find('}', open + 2);
    if (close == kNpos) break;
    std::string_view inner = text.substr(open + 2, close - open - 2);
    if (inner.empty()) {
      pending.append(text.substr(i, close + 1 - i));
    } else {
      pending.append(text.substr(i, open - i));
      flush();
      if (inner == "*" || inner == "?" || inner == "$") {
        t.parts.emplace_back(Pattern::Part::kLiteral, std::string(inner));
      } else {
        t.parts.emplace_back(Pattern::Part::kVariable, AsciiLower(TrimBlanks(inner)));
      }
    }
    i = close + 1;
  }
  if (t.parts.empty()) return t;  // only `${}` or unclosed `${`: plain text after all
  pending.append(text.substr(i));
  flush();
  return t;
}

// Condition values are strings, numbers or booleans, compared as their text.
std::optional<std::string> ScalarText(const Json& v) {
  if (v.is_string()) return v.get_ref<const std::string&>();
  if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) return v.dump();
  return std::nullopt;
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

class Compiler {
 public:
  explicit Compiler(Policy::Kind kind) : kind_(kind) {}

  const std::string& error() const { return error_; }

  bool Document(const Json& doc, std::vector<Statement>* out) {
    if (!doc.is_object()) return Fail("Policy must be a JSON object");
    for (const auto& item : doc.items()) {
      const std::string& k = item.key();
      if (k != "Version" && k != "Id" && k != "Statement") return Fail("Unknown element: " + k);
    }
    if (auto it = doc.find("Version"); it != doc.end()) {
      if (!it->is_string() || (*it != "2012-10-17" && *it != "2008-10-17")) {
        return Fail("Policy has an invalid Version (2012-10-17 or 2008-10-17)");
      }
      // Policy variables exist only in the 2012 language; before, ${...} was plain text.
      variables_ = *it == "2012-10-17";
    }
    if (auto it = doc.find("Id"); it != doc.end() && !it->is_string()) {
      return Fail("Id must be a string");
    }
    auto it = doc.find("Statement");
    if (it == doc.end()) return Fail("Policy is missing the Statement element");
    if (it->is_object()) return StatementAt(*it, 1, out);
    if (!it->is_array() || it->empty()) {
      return Fail("Statement must be an object or a non-empty array");
    }
    for (size_t i = 0; i < it->size(); ++i) {
      if (!StatementAt((*it)[i], i + 1, out)) return false;
    }
    return true;
  }

 private:
  bool Fail(std::string message) {
    error_ = context_ + message;
    return false;
  }

  bool StatementAt(const Json& s, size_t number, std::vector<Statement>* out) {
    context_ = "Statement " + std::to_string(number);
    if (s.is_object()) {
      if (auto sid = s.find("Sid"); sid != s.end() && sid->is_string()) {
        context_ += " (Sid " + Quoted(sid->get_ref<const std::string&>()) + ")";
      }
    }
    context_ += ": ";
    if (!s.is_object()) return Fail("must be an object");
    Statement st;
    if (!CompileStatement(s, &st)) return false;
    out->push_back(std::move(st));
    context_.clear();
    return true;
  }

  bool CompileStatement(const Json& s, Statement* st) {
    static constexpr std::string_view kElements[] = {
        "Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction",
        "Resource", "NotResource", "Condition"};
    for (const auto& item : s.items()) {
      bool known = false;
      for (std::string_view e : kElements) known |= item.key() == e;
      if (!known) return Fail("Unknown element: " + item.key());
    }
    if (auto sid = s.find("Sid"); sid != s.end() && !sid->is_string()) {
      return Fail("Sid must be a string");
    }
    return Effect(s, st) && PrincipalElement(s, st) && ActionElement(s, st) &&
           ResourceElement(s, st) && ConditionElement(s, st);
  }

  // The element named `name` or its Not form; nullptr if neither (then
  // `*negated` is unspecified). Both present: an error.
  bool Either(const Json& s, const std::string& name, const Json** found, bool* negated) {
    auto plain = s.find(name), not_form = s.find("Not" + name);
    if (plain != s.end() && not_form != s.end()) {
      return Fail("has both " + name + " and Not" + name);
    }
    *negated = not_form != s.end();
    *found = plain != s.end() ? &*plain : not_form != s.end() ? &*not_form : nullptr;
    return true;
  }

  // A string or a non-empty array of strings.
  bool Strings(const Json& v, std::string_view element, std::vector<std::string>* out) {
    if (v.is_string()) {
      out->push_back(v.get<std::string>());
      return true;
    }
    if (!v.is_array() || v.empty()) {
      return Fail(std::string(element) + " must be a string or a non-empty array of strings");
    }
    for (const Json& e : v) {
      if (!e.is_string()) return Fail(std::string(element) + " must hold only strings");
      out->push_back(e.get<std::string>());
    }
    return true;
  }

  bool Effect(const Json& s, Statement* st) {
    auto it = s.find("Effect");
    if (it == s.end()) return Fail("missing Effect");
    if (*it != "Allow" && *it != "Deny") return Fail("Effect must be Allow or Deny");
    st->deny = *it == "Deny";
    return true;
  }

  bool PrincipalElement(const Json& s, Statement* st) {
    const Json* v = nullptr;
    if (!Either(s, "Principal", &v, &st->not_principal)) return false;
    if (kind_ == Policy::Kind::kIdentity) {
      return v == nullptr ||
             Fail("Principal and NotPrincipal are not allowed in an identity policy");
    }
    if (v == nullptr) return Fail("missing Principal");
    st->has_principal = true;
    const std::string element = st->not_principal ? "NotPrincipal" : "Principal";
    if (v->is_string()) {
      if (*v != "*") return Fail("Invalid principal in policy: " + v->get<std::string>());
      st->principals.everyone = true;
      return true;
    }
    if (!v->is_object() || v->empty()) return Fail(element + " must be \"*\" or an object");
    for (const auto& item : v->items()) {
      std::vector<std::string> ids;
      if (!Strings(item.value(), element + "." + item.key(), &ids)) return false;
      if (!PrincipalIds(item.key(), ids, &st->principals)) return false;
    }
    return true;
  }

  bool PrincipalIds(const std::string& type, const std::vector<std::string>& ids,
                    PrincipalSet* set) {
    if (type == "AWS") {
      for (const std::string& id : ids) {
        if (id == "*") {
          set->everyone = true;
        } else if (id.size() == 12 && AllDigits(id)) {
          set->arns.push_back(CompilePattern("arn:aws:iam::" + id + ":root", false));
        } else if (id.starts_with("arn:")) {
          set->arns.push_back(CompilePattern(id, false));
        } else {
          return Fail("Invalid principal in policy: " + id);
        }
      }
      return true;
    }
    if (type == "CanonicalUser") {
      set->canonical_ids.insert(set->canonical_ids.end(), ids.begin(), ids.end());
      return true;
    }
    // Service and federated principals are valid, but no strata caller is one.
    if (type == "Service" || type == "Federated") return true;
    return Fail("Invalid principal type in policy: " + type);
  }

  bool ActionElement(const Json& s, Statement* st) {
    const Json* v = nullptr;
    if (!Either(s, "Action", &v, &st->not_action)) return false;
    if (v == nullptr) return Fail("missing Action");
    if (!Strings(*v, st->not_action ? "NotAction" : "Action", &st->actions)) return false;
    for (const std::string& a : st->actions) {
      if (!IsAction(a)) return Fail("Policy has invalid action: " + a);
      st->action_lower.push_back(CompilePattern(AsciiLower(a), false));
    }
    return true;
  }

  bool ResourceElement(const Json& s, Statement* st) {
    const Json* v = nullptr;
    if (!Either(s, "Resource", &v, &st->not_resource)) return false;
    if (v == nullptr) return Fail("missing Resource");
    std::vector<std::string> patterns;
    if (!Strings(*v, st->not_resource ? "NotResource" : "Resource", &patterns)) return false;
    for (const std::string& p : patterns) {
      if (p != "*" && !p.starts_with("arn:")) return Fail("Policy has invalid resource: " + p);
      st->resources.push_back(CompilePattern(p, variables_));
    }
    return true;
  }

  bool ConditionElement(const Json& s, Statement* st) {
    auto it = s.find("Condition");
    if (it == s.end()) return true;
    if (!it->is_object()) return Fail("Condition must be an object");
    for (const auto& block : it->items()) {
      auto op = ParseOperator(block.key());
      if (!op) return Fail("Policy has an invalid condition operator: " + block.key());
      if (!block.value().is_object() || block.value().empty()) {
        return Fail("Condition " + block.key() + " must be an object of condition keys");
      }
      for (const auto& entry : block.value().items()) {
        Condition c;
        c.op = *op;
        if (!IsConditionKey(entry.key())) {
          return Fail("Policy has an invalid condition key: " + entry.key());
        }
        c.key = AsciiLower(entry.key());
        if (!ConditionValues(block.key(), entry.value(), &c)) return false;
        st->conditions.push_back(std::move(c));
      }
    }
    // All conditions must hold, in any order: the cheap ones first, so a
    // failing one spares parsing numbers, dates and addresses.
    std::stable_sort(st->conditions.begin(), st->conditions.end(),
                     [](const Condition& a, const Condition& b) {
                       return EvaluationCost(a.op.family) < EvaluationCost(b.op.family);
                     });
    return true;
  }

  bool ConditionValues(const std::string& op_name, const Json& v, Condition* c) {
    if (v.is_array() && v.empty()) return Fail("Condition " + op_name + " has no values");
    auto add = [&](const Json& e) {
      auto text = ScalarText(e);
      if (!text) {
        return Fail("Condition " + op_name + " values must be strings, numbers or booleans");
      }
      Value value;
      if (!CompileValue(*text, c->op.family, &value)) return false;
      c->values.push_back(std::move(value));
      return true;
    };
    if (!v.is_array()) return add(v);
    for (const Json& e : v) {
      if (!add(e)) return false;
    }
    return true;
  }

  bool CompileValue(const std::string& text, Family family, Value* value) {
    switch (family) {
      case Family::kNumeric: {
        auto n = ParseNumber(text);
        if (!n) return Fail("Invalid numeric value: " + text);
        value->number = *n;
        return true;
      }
      case Family::kDate: {
        auto d = ParseDate(text);
        if (!d) return Fail("Invalid date: " + text);
        value->date = *d;
        return true;
      }
      case Family::kIp: {
        auto cidr = ParseCidr(text);
        if (!cidr) return Fail("Invalid IP address: " + text);
        value->cidr = *cidr;
        return true;
      }
      case Family::kBool:
      case Family::kNull:
        if (!EqualsIgnoreCase(text, "true") && !EqualsIgnoreCase(text, "false")) {
          return Fail("Invalid boolean value: " + text);
        }
        value->boolean = EqualsIgnoreCase(text, "true");
        return true;
      case Family::kBinary: {
        auto bytes = Base64Decode(text);
        if (!bytes) return Fail("Invalid base64 binary value: " + text);
        value->binary = std::move(*bytes);
        return true;
      }
      default:
        value->text = CompilePattern(text, variables_);
        return true;
    }
  }

  Policy::Kind kind_;
  bool variables_ = false;
  std::string context_;  // "Statement 2 (Sid "x"): " while compiling a statement
  std::string error_;
};

}  // namespace

std::variant<Policy, PolicyError> Policy::Parse(std::string_view json, Kind kind) {
  try {
    Json doc;
    try {
      doc = Json::parse(json.begin(), json.end());
    } catch (const Json::parse_error& e) {
      return PolicyError{"Policy is not valid JSON (at byte " + std::to_string(e.byte) + ")"};
    } catch (const Json::exception&) {  // a number out of range
      return PolicyError{"Policy is not valid JSON"};
    }
    auto compiled = std::make_unique<Compiled>();
    Compiler compiler(kind);
    if (!compiler.Document(doc, &compiled->statements)) return PolicyError{compiler.error()};
    // Number the distinct condition keys, so one Evaluate asks for each once.
    std::vector<std::string> keys;
    for (Statement& s : compiled->statements) {
      for (Condition& c : s.conditions) {
        auto it = std::find(keys.begin(), keys.end(), c.key);
        size_t index = static_cast<size_t>(it - keys.begin());
        if (it == keys.end()) keys.push_back(c.key);
        if (index < kCachedKeys) c.key_index = static_cast<uint16_t>(index);
      }
    }
    // Number the distinct principal / action / resource blocks the same way.
    std::vector<std::string> targets;
    for (Statement& s : compiled->statements) {
      std::string sig;  // tag, length, text per element: unambiguous
      auto add = [&sig](char tag, std::string_view part) {
        sig += tag;
        sig += std::to_string(part.size());
        sig += ':';
        sig += part;
      };
      add('p', s.has_principal ? (s.not_principal ? "not" : "is") : "none");
      if (s.principals.everyone) add('e', "");
      for (const Pattern& a : s.principals.arns) add('a', a.text);
      for (const std::string& id : s.principals.canonical_ids) add('c', id);
      add('x', s.not_action ? "not" : "is");
      for (const Pattern& a : s.action_lower) add('y', a.text);
      add('r', s.not_resource ? "not" : "is");
      for (const Pattern& res : s.resources) add('z', res.text);
      auto it = std::find(targets.begin(), targets.end(), sig);
      size_t index = static_cast<size_t>(it - targets.begin());
      if (it == targets.end()) targets.push_back(std::move(sig));
      if (index < kCachedTargets) s.target_index = static_cast<uint16_t>(index);
    }
    return Policy(std::move(compiled));
  } catch (const std::exception& e) {
    // Nothing above should throw once the JSON is parsed; never let it escape.
    return PolicyError{std::string("Policy could not be read: ") + e.what()};
  }
}

}  // namespace strata::auth

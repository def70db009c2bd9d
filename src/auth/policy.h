// The AWS IAM policy language: a policy document (JSON) compiled once into a
// Policy, then evaluated per request without any parsing. Pure logic: who asks
// (Principal), for what (action, resource ARN) and the request's condition
// keys (ConditionContext) in; Allow / Deny / NotApplicable out. Combining the
// caller's identity policies with a bucket policy (explicit deny wins, root)
// is authorizer.h's job.
//
// Grammar (as AWS): {"Version", "Id", "Statement": statement | [statement...]};
// statement = {"Sid", "Effect": Allow|Deny, "Principal"|"NotPrincipal",
// "Action"|"NotAction", "Resource"|"NotResource", "Condition"}. A string or
// an array of strings wherever AWS allows either. Unknown elements, a
// missing Effect / Action / Resource, both X and NotX, a Principal in an
// identity policy or none in a resource policy: PolicyError.
//
// Matching:
//  - Action: case-insensitive, '*' any run of characters, '?' one; actions
//    must look like "service:Name" (or be "*").
//  - Resource: case-sensitive, same wildcards ('*' crosses '/' and ':');
//    policy variables ${aws:username}, ${aws:userid}, ${aws:PrincipalArn}
//    (any condition key with one value) and ${*} ${?} ${$} (literal * ? $)
//    are substituted at evaluation in Version 2012-10-17 documents only.
//  - Principal: "*" or {"AWS": "*"} is everyone, anonymous included; {"AWS":
//    ARN | account id | [..]} matches a principal whose arn equals the ARN
//    (wildcards allowed as in AWS's "arn:aws:iam::ACCOUNT:user/*"), the
//    account id or "arn:aws:iam::ACCOUNT:root" matches that account's root;
//    {"CanonicalUser": id | [..]} matches by canonical id. Anonymous matches
//    only "*".
//  - Condition: {operator: {key: value | [values]}}; every operator and every
//    key in the block must hold (AND), any of a key's values may match (OR).
//    Operators: String{Equals,NotEquals,EqualsIgnoreCase,NotEqualsIgnoreCase,
//    Like,NotLike}, Numeric{Equals,NotEquals,LessThan,LessThanEquals,
//    GreaterThan,GreaterThanEquals}, Date{same six}, Bool, BinaryEquals,
//    IpAddress, NotIpAddress (IPv4/IPv6 CIDR), Arn{Equals,Like,NotEquals,
//    NotLike}, Null; each (but Null) with the ...IfExists suffix (key absent:
//    true) and the ForAnyValue: / ForAllValues: prefixes (ForAllValues with
//    the key absent: true; ForAnyValue with it absent: false). A key absent
//    from the request makes a positive operator false and a negated one
//    (StringNotEquals, StringNotLike, NumericNotEquals, DateNotEquals,
//    NotIpAddress, ArnNotEquals, ArnNotLike) true. Values in a policy may be
//    strings, numbers or booleans (compared as their text). Dates: ISO 8601
//    ("2026-12-01", "2026-12-01T10:00:00Z", with fraction or offset) or epoch
//    seconds. Malformed values for Numeric/Date/Ip/Bool: PolicyError.
//  - Condition keys are case-insensitive. Accepted: every aws:* and s3:*
//    key (ones strata never sets are simply absent) and strata:*; any other
//    prefix is a PolicyError "invalid condition key".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace strata::auth {

// Who sends a request.
struct Principal {
  enum class Kind { kAnonymous, kRoot, kUser };
  Kind kind = Kind::kAnonymous;
  std::string account;       // the store's 12-digit account id ("" for anonymous)
  std::string arn;           // arn:aws:iam::<account>:root | arn:aws:iam::<account>:user/<name>
  std::string canonical_id;  // 64 lowercase hex digits
  std::string username;      // users only
  std::string user_id;       // users: "AIDA..." id; root: the account id
};

// The condition keys of one request. Keys are passed lowercased
// ("aws:sourceip", "s3:existingobjecttag/project"); nullptr: the key is not
// in the request. A key may have several values (s3:RequestObjectTagKeys).
class ConditionContext {
 public:
  virtual ~ConditionContext() = default;
  virtual const std::vector<std::string>* Values(std::string_view key_lower) const = 0;
};

// A ConditionContext over a small vector (keys stored lowercased).
class MapConditionContext : public ConditionContext {
 public:
  void Set(std::string_view key, std::vector<std::string> values);
  void Set(std::string_view key, std::string value) { Set(key, std::vector<std::string>{std::move(value)}); }
  const std::vector<std::string>* Values(std::string_view key_lower) const override;

 private:
  std::vector<std::pair<std::string, std::vector<std::string>>> entries_;
};

struct EvalRequest {
  const Principal* principal = nullptr;
  std::string_view action;    // "s3:GetObject"
  std::string_view resource;  // "arn:aws:s3:::bucket/key" or "arn:aws:s3:::bucket"
  const ConditionContext* conditions = nullptr;  // nullptr: every key absent
};

enum class Decision {
  kNotApplicable,  // no statement matched: an implicit deny unless another policy allows
  kAllow,
  kDeny,           // an explicit deny: nothing overrides it
};

struct PolicyError {
  std::string message;  // for MalformedPolicy: names the element and what is wrong
};

class Policy {
 public:
  enum class Kind {
    kIdentity,  // attached to a user or group: no Principal / NotPrincipal
    kResource,  // a bucket policy: Principal or NotPrincipal in every statement
  };

  // Compiles `json`. The text is not kept; the caller keeps the original
  // document if it must return it (GetBucketPolicy returns it as stored).
  static std::variant<Policy, PolicyError> Parse(std::string_view json, Kind kind);

  // Deny if any matching statement denies, else Allow if any allows, else
  // NotApplicable. A statement matches when its principal (resource policies),
  // action, resource and every condition match.
  Decision Evaluate(const EvalRequest& request) const;

  // Every Resource / NotResource pattern as written (for a bucket policy's
  // check that it names only its own bucket).
  std::vector<std::string> ResourcePatterns() const;
  // Every Action / NotAction pattern as written.
  std::vector<std::string> ActionPatterns() const;

  // GetBucketPolicyStatus / PublicAccessBlock: an Allow statement whose
  // principal is everyone ("*", {"AWS":"*"}, or a NotPrincipal) and whose
  // conditions do not pin it to fixed values of aws:SourceIp, aws:SourceArn,
  // aws:SourceVpc(e), aws:SourceAccount, aws:PrincipalAccount, aws:userid,
  // aws:PrincipalArn or s3:x-amz-server-side-encryption-aws-kms-key-id (AWS's
  // rule for "public").
  bool IsPublic() const;

  size_t statement_count() const;

  Policy(Policy&&) noexcept;
  Policy& operator=(Policy&&) noexcept;
  ~Policy();

 private:
  struct Compiled;
  explicit Policy(std::unique_ptr<Compiled> compiled);
  std::unique_ptr<Compiled> compiled_;
};

// Wildcard matching of the policy language ('*' any run, '?' one character).
bool WildcardMatch(std::string_view pattern, std::string_view text, bool ignore_case = false);

}  // namespace strata::auth

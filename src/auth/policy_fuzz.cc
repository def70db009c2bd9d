// libFuzzer target: the policy language (auth/policy.h). The input is
//   <control byte><policy document>
// control bit 0: the policy Kind (0 identity, 1 resource); bit 1: ignore_case
// for the wildcard checks. Parse must never crash or throw; a policy that
// parses is evaluated for a fixed set of requests (anonymous, a user, root;
// a few actions and resources; no condition keys, then a context with the
// keys the seeds use) and must give the same decision every time and after
// a second Parse. The same bytes, split at the first '\n' (else in the
// middle) into pattern and text, check WildcardMatch against a small dynamic
// programming reference. The same bytes as a stored ACL (auth/acl.h) must
// decode only to what re-encodes to them. Seeds: tests/fuzz/policy/.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "auth/acl.h"
#include "auth/policy.h"
#include "common/encoding.h"
#include "fuzz_util.h"

namespace {

using strata::auth::Decision;
using strata::auth::EvalRequest;
using strata::auth::MapConditionContext;
using strata::auth::Policy;
using strata::auth::PolicyError;
using strata::auth::Principal;

// ---- wildcards ---------------------------------------------------------------------

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Length of the (valid) UTF-8 character starting with `lead`.
size_t Utf8Length(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

// match[i][j]: pattern[i..] matches text[j..]; '*' any run of characters,
// '?' one character. Only for valid UTF-8, where the greedy matcher must agree.
bool ReferenceMatch(std::string_view p, std::string_view t, bool ignore_case) {
  const size_t m = p.size(), n = t.size();
  std::vector<std::vector<char>> match(m + 1, std::vector<char>(n + 1, 0));
  match[m][n] = 1;
  for (size_t i = m; i-- > 0;) {
    for (size_t j = n + 1; j-- > 0;) {
      const size_t step = j < n ? Utf8Length(static_cast<unsigned char>(t[j])) : 0;
      const bool more = j < n && j + step <= n;
      if (p[i] == '*') {
        match[i][j] = match[i + 1][j] || (more && match[i][j + step]);
      } else if (p[i] == '?') {
        match[i][j] = more && match[i + 1][j + step];
      } else {
        const bool same = j < n && (ignore_case ? Lower(p[i]) == Lower(t[j]) : p[i] == t[j]);
        match[i][j] = same && match[i + 1][j + 1];
      }
    }
  }
  return match[0][0] != 0;
}

void CheckWildcards(std::string_view in, bool ignore_case) {
  size_t split = in.find('\n');
  if (split == std::string_view::npos) split = in.size() / 2;
  const std::string_view pattern = in.substr(0, split);
  const std::string_view text = in.substr(std::min(split + 1, in.size()));
  using strata::auth::WildcardMatch;

  const bool matched = WildcardMatch(pattern, text, ignore_case);
  if (matched && !ignore_case) FUZZ_CHECK(WildcardMatch(pattern, text, true));
  FUZZ_CHECK(WildcardMatch("*", text));
  if (pattern.find_first_of("*?") == std::string_view::npos) {
    bool equal = pattern.size() == text.size();
    for (size_t i = 0; equal && i < pattern.size(); ++i) {
      equal = ignore_case ? Lower(pattern[i]) == Lower(text[i]) : pattern[i] == text[i];
    }
    FUZZ_CHECK(matched == equal);
  }
  if (strata::IsValidUtf8(pattern) && strata::IsValidUtf8(text)) {
    FUZZ_CHECK(WildcardMatch(text, text));  // a text, read as a pattern, matches itself
    if (pattern.size() <= 64 && text.size() <= 256) {
      FUZZ_CHECK(matched == ReferenceMatch(pattern, text, ignore_case));
    }
  }
}

// ---- policies ----------------------------------------------------------------------

Principal MakeUser() {
  Principal p;
  p.kind = Principal::Kind::kUser;
  p.account = "111122223333";
  p.arn = "arn:aws:iam::111122223333:user/alice";
  p.canonical_id = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be";
  p.username = "alice";
  p.user_id = "AIDAEXAMPLEALICE";
  return p;
}

Principal MakeRoot() {
  Principal p;
  p.kind = Principal::Kind::kRoot;
  p.account = "111122223333";
  p.arn = "arn:aws:iam::111122223333:root";
  p.canonical_id = "0b5b4a3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a";
  p.user_id = "111122223333";
  return p;
}

MapConditionContext MakeContext() {
  MapConditionContext ctx;
  ctx.Set("aws:SourceIp", "10.1.2.3");
  ctx.Set("aws:SecureTransport", "false");
  ctx.Set("aws:CurrentTime", "2026-12-01T10:00:00Z");
  ctx.Set("aws:EpochTime", "1796119200");
  ctx.Set("aws:SourceArn", "arn:aws:s3:::bucket");
  ctx.Set("aws:TagKeys", std::vector<std::string>{"team", "cost"});
  ctx.Set("s3:prefix", "home/alice/");
  ctx.Set("s3:max-keys", "100");
  ctx.Set("s3:x-amz-server-side-encryption", "AES256");
  ctx.Set("s3:ExistingObjectTag/environment", "production");
  ctx.Set("strata:empty", std::vector<std::string>{});
  return ctx;
}

// Every decision of `policy` over the fixed requests, in a fixed order.
std::vector<Decision> Decisions(const Policy& policy) {
  static const Principal anonymous, user = MakeUser(), root = MakeRoot();
  static const MapConditionContext context = MakeContext();
  static constexpr std::string_view kActions[] = {"s3:GetObject", "s3:ListBucket",
                                                  "iam:CreateUser"};
  static constexpr std::string_view kResources[] = {
      "arn:aws:s3:::bucket", "arn:aws:s3:::bucket/key", "arn:aws:s3:::bucket/home/alice/x"};
  std::vector<Decision> out;
  for (const Principal* who : {&anonymous, &user, &root}) {
    for (std::string_view action : kActions) {
      for (std::string_view resource : kResources) {
        for (const MapConditionContext* ctx : {static_cast<const MapConditionContext*>(nullptr),
                                               &context}) {
          const EvalRequest request{who, action, resource, ctx};
          const Decision d = policy.Evaluate(request);
          FUZZ_CHECK(policy.Evaluate(request) == d);
          if (who == &anonymous) {  // no principal is anonymous
            FUZZ_CHECK(policy.Evaluate(EvalRequest{nullptr, action, resource, ctx}) == d);
          }
          out.push_back(d);
        }
      }
    }
  }
  return out;
}

void CheckPolicy(std::string_view json, Policy::Kind kind) {
  auto parsed = Policy::Parse(json, kind);
  if (auto* error = std::get_if<PolicyError>(&parsed)) {
    FUZZ_CHECK(!error->message.empty());
    return;
  }
  const Policy& policy = std::get<Policy>(parsed);
  const size_t statements = policy.statement_count();
  FUZZ_CHECK(statements >= 1);
  // Every statement has at least one action and one resource pattern.
  FUZZ_CHECK(policy.ActionPatterns().size() >= statements);
  const std::vector<std::string> resources = policy.ResourcePatterns();
  FUZZ_CHECK(resources.size() >= statements);
  for (const std::string& r : resources) FUZZ_CHECK(r == "*" || r.starts_with("arn:"));
  const bool is_public = policy.IsPublic();
  if (kind == Policy::Kind::kIdentity) FUZZ_CHECK(!is_public);  // no Principal, never public

  const std::vector<Decision> decisions = Decisions(policy);
  // Parsing is deterministic: a second compile decides the same.
  auto again = Policy::Parse(json, kind);
  FUZZ_CHECK(std::holds_alternative<Policy>(again));
  const Policy& second = std::get<Policy>(again);
  FUZZ_CHECK(second.statement_count() == statements);
  FUZZ_CHECK(second.IsPublic() == is_public);
  FUZZ_CHECK(Decisions(second) == decisions);
}

}  // namespace

// ---- stored ACLs (auth/acl.h) -------------------------------------------------
// What decodes re-encodes to the same bytes, fails with a byte appended, and
// answers AclAllows for any caller without trouble.
void CheckAcl(std::string_view in) {
  auto acl = strata::auth::DecodeAcl(in);
  if (!acl) return;
  FUZZ_CHECK(strata::auth::EncodeAcl(*acl) == in);
  FUZZ_CHECK(!strata::auth::DecodeAcl(std::string(in) + '\0'));
  FUZZ_CHECK(acl->grants.size() <= strata::auth::kMaxAclGrants);
  Principal user;
  user.kind = Principal::Kind::kUser;
  user.canonical_id = acl->grants.empty() ? acl->owner : acl->grants[0].id;
  for (uint8_t p : {strata::auth::kAclRead, strata::auth::kAclWrite, strata::auth::kAclReadAcp,
                    strata::auth::kAclWriteAcp}) {
    (void)strata::auth::AclAllows(*acl, user, p, false);
    const bool anonymous = strata::auth::AclAllows(*acl, Principal{}, p, true);
    FUZZ_CHECK(!anonymous);  // with public grants ignored, nobody anonymous gets anything
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  CheckWildcards(in, (control & 2) != 0);
  CheckPolicy(in, (control & 1) != 0 ? Policy::Kind::kResource : Policy::Kind::kIdentity);
  CheckAcl(in);
  return 0;
}

// The policy language: parsing, statements, principals, wildcards, variables,
// AWS's example policies, IsPublic (conditions: policy_conditions_test.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "auth/policy.h"
#include "auth/policy_test_util.h"

namespace strata::auth {
namespace {

TEST(PolicyTest, ParseErrors) {
  constexpr auto kR = Policy::Kind::kResource;
  constexpr auto kI = Policy::Kind::kIdentity;
  // A statement for resource policies with one element replaced or added.
  auto stmt = [](std::string extra, std::string condition = "") {
    std::string s = R"({"Effect":"Allow","Principal":"*","Action":"s3:GetObject",)"
                    R"("Resource":"arn:aws:s3:::b/*")";
    if (!extra.empty()) s += "," + extra;
    if (!condition.empty()) s += R"(,"Condition":)" + condition;
    return R"({"Version":"2012-10-17","Statement":[)" + s + "}]}";
  };
  struct Case {
    std::string json;
    Policy::Kind kind;
    std::string expected;  // a substring of the message
  } cases[] = {
      {"", kR, "not valid JSON"},
      {"{", kR, "not valid JSON"},
      {R"({"Statement":[}])", kR, "not valid JSON"},
      {"[]", kR, "must be a JSON object"},
      {"null", kR, "must be a JSON object"},
      {R"("policy")", kR, "must be a JSON object"},
      {R"({"Version":"2012-10-17","Statements":[]})", kR, "Unknown element: Statements"},
      {R"({"Version":"2012-10-17"})", kR, "missing the Statement"},
      {R"({"Version":"2012-10-17","Statement":[]})", kR, "non-empty array"},
      {R"({"Version":"2012-10-17","Statement":"x"})", kR, "non-empty array"},
      {R"({"Version":"2020-01-01","Statement":[]})", kR, "invalid Version"},
      {R"({"Version":20121017,"Statement":[]})", kR, "invalid Version"},
      {R"({"Id":5,"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}})", kI,
       "Id must be a string"},
      {R"({"Statement":[1]})", kR, "Statement 1: must be an object"},
      {stmt(R"("Actions":"s3:*")"), kR, "Statement 1: Unknown element: Actions"},
      {R"({"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},)"
       R"({"Sid":"x","Action":"*","Resource":"*"}]})",
       kI, R"(Statement 2 (Sid "x"): missing Effect)"},
      {R"({"Statement":{"Sid":7,"Effect":"Allow","Action":"*","Resource":"*"}})", kI,
       "Sid must be a string"},
      {R"({"Statement":{"Effect":"allow","Action":"*","Resource":"*"}})", kI,
       "Effect must be Allow or Deny"},
      {R"({"Statement":{"Effect":"Allow","Resource":"*"}})", kI, "missing Action"},
      {R"({"Statement":{"Effect":"Allow","Action":"*"}})", kI, "missing Resource"},
      {R"({"Statement":{"Effect":"Allow","Action":"*","NotAction":"s3:x","Resource":"*"}})", kI,
       "both Action and NotAction"},
      {R"({"Statement":{"Effect":"Allow","Action":"*","Resource":"*","NotResource":"*"}})", kI,
       "both Resource and NotResource"},
      {stmt(R"("NotPrincipal":"*")"), kR, "both Principal and NotPrincipal"},
      {R"({"Statement":{"Effect":"Allow","Action":"GetObject","Resource":"*"}})", kI,
       "Policy has invalid action: GetObject"},
      {R"({"Statement":{"Effect":"Allow","Action":":GetObject","Resource":"*"}})", kI,
       "Policy has invalid action"},
      {R"({"Statement":{"Effect":"Allow","Action":"s3:","Resource":"*"}})", kI,
       "Policy has invalid action"},
      {R"({"Statement":{"Effect":"Allow","Action":"s*:Get","Resource":"*"}})", kI,
       "Policy has invalid action"},
      {R"({"Statement":{"Effect":"Allow","Action":5,"Resource":"*"}})", kI,
       "Action must be a string or a non-empty array"},
      {R"({"Statement":{"Effect":"Allow","Action":[],"Resource":"*"}})", kI,
       "Action must be a string or a non-empty array"},
      {R"({"Statement":{"Effect":"Allow","Action":["s3:x",1],"Resource":"*"}})", kI,
       "Action must hold only strings"},
      {R"({"Statement":{"Effect":"Allow","Action":"*","Resource":"b/*"}})", kI,
       "Policy has invalid resource"},
      {R"({"Statement":{"Effect":"Allow","Action":"*","Resource":["*",null]}})", kI,
       "Resource must hold only strings"},
      {stmt(""), kI, "not allowed in an identity policy"},
      {R"({"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}})", kR, "missing Principal"},
      {R"({"Statement":{"Effect":"Allow","Principal":"alice","Action":"*","Resource":"*"}})", kR,
       "Invalid principal in policy: alice"},
      {R"({"Statement":{"Effect":"Allow","Principal":{"AWS":"alice"},)"
       R"("Action":"*","Resource":"*"}})",
       kR, "Invalid principal in policy: alice"},
      {R"({"Statement":{"Effect":"Allow","Principal":{"Foo":"x"},"Action":"*","Resource":"*"}})",
       kR, "Invalid principal type in policy: Foo"},
      {R"({"Statement":{"Effect":"Allow","Principal":{},"Action":"*","Resource":"*"}})", kR,
       "Principal must be"},
      {R"({"Statement":{"Effect":"Allow","Principal":5,"Action":"*","Resource":"*"}})", kR,
       "Principal must be"},
      {stmt("", R"({"StringEqualz":{"s3:prefix":"a"}})"), kR,
       "Policy has an invalid condition operator: StringEqualz"},
      {stmt("", R"({"NullIfExists":{"s3:prefix":"true"}})"), kR, "invalid condition operator"},
      {stmt("", R"({"ForAnyValue:Null":{"s3:prefix":"true"}})"), kR, "invalid condition operator"},
      {stmt("", R"({"ForSomeValues:StringEquals":{"s3:prefix":"a"}})"), kR,
       "invalid condition operator"},
      {stmt("", R"({"stringequals":{"s3:prefix":"a"}})"), kR, "invalid condition operator"},
      {stmt("", R"({"StringEquals":{"foo:bar":"a"}})"), kR,
       "Policy has an invalid condition key: foo:bar"},
      {stmt("", R"({"StringEquals":{"aws:":"a"}})"), kR, "invalid condition key"},
      {stmt("", R"({"IpAddress":{"aws:SourceIp":"10.0.0.300/8"}})"), kR,
       "Invalid IP address: 10.0.0.300/8"},
      {stmt("", R"({"IpAddress":{"aws:SourceIp":"10.0.0.0/33"}})"), kR, "Invalid IP address"},
      {stmt("", R"({"IpAddress":{"aws:SourceIp":"10.0.0.0/"}})"), kR, "Invalid IP address"},
      {stmt("", R"({"IpAddress":{"aws:SourceIp":"2001:db8::/129"}})"), kR, "Invalid IP address"},
      {stmt("", R"({"NumericLessThan":{"s3:max-keys":"ten"}})"), kR, "Invalid numeric value: ten"},
      {stmt("", R"({"DateLessThan":{"aws:CurrentTime":"yesterday"}})"), kR,
       "Invalid date: yesterday"},
      {stmt("", R"({"DateLessThan":{"aws:CurrentTime":"2026-13-01"}})"), kR, "Invalid date"},
      {stmt("", R"({"Bool":{"aws:SecureTransport":"yes"}})"), kR, "Invalid boolean value: yes"},
      {stmt("", R"({"Null":{"aws:SecureTransport":"maybe"}})"), kR, "Invalid boolean value"},
      {stmt("", R"({"BinaryEquals":{"strata:blob":"!!"}})"), kR, "Invalid base64"},
      {stmt("", R"({"StringEquals":{"s3:prefix":{"a":1}}})"), kR,
       "values must be strings, numbers or booleans"},
      {stmt("", R"({"StringEquals":{"s3:prefix":[null]}})"), kR,
       "values must be strings, numbers or booleans"},
      {stmt("", R"({"StringEquals":{"s3:prefix":[]}})"), kR, "has no values"},
      {stmt("", R"({"StringEquals":{}})"), kR, "must be an object of condition keys"},
      {stmt("", R"({"StringEquals":"s3:prefix"})"), kR, "must be an object of condition keys"},
      {stmt("", R"(["StringEquals"])"), kR, "Condition must be an object"},
  };
  for (const Case& c : cases) {
    std::string message = ParseError(c.json, c.kind);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << "document: " << c.json << "\nexpected: " << c.expected << "\ngot: " << message;
  }
}

TEST(PolicyTest, HostileDocumentsAreErrorsNotCrashes) {
  const std::string deep_array = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(ParseError(deep_array), "");
  const std::string deep_object = R"({"Statement":)" + std::string(50000, '[') +
                                  std::string(50000, ']') + "}";
  EXPECT_NE(ParseError(deep_object), "");
  EXPECT_NE(ParseError(std::string("{\"Statement\":\"\xff\"}")), "");  // invalid UTF-8
  EXPECT_NE(ParseError(R"({"Statement":{"Effect":"Allow","Action":"*","Resource":"*",)"
                       R"("Condition":{"NumericLessThan":{"s3:max-keys":1e999}}}})",
                       Policy::Kind::kIdentity),
            "");
  EXPECT_NE(ParseError(std::string("{\"Statement\"\0:1}", 16)), "");
}

TEST(PolicyTest, AcceptedForms) {
  // A single statement object, no Version, Id, Sid, arrays everywhere.
  Policy p = MustParse(R"({"Id":"x","Statement":{"Sid":"s","Effect":"Allow","Principal":"*",
      "Action":["s3:GetObject","S3:PutObject"],
      "Resource":["arn:aws:s3:::b","arn:aws:s3:::b/*"]}})");
  EXPECT_EQ(p.statement_count(), 1u);
  EXPECT_EQ(p.ActionPatterns(), (std::vector<std::string>{"s3:GetObject", "S3:PutObject"}));
  EXPECT_EQ(p.ResourcePatterns(), (std::vector<std::string>{"arn:aws:s3:::b", "arn:aws:s3:::b/*"}));
  Policy q = MustParse(R"({"Version":"2008-10-17","Statement":[
      {"Effect":"Allow","Principal":{"AWS":["*"]},"Action":"*","Resource":"*"},
      {"Effect":"Deny","NotPrincipal":{"AWS":"111122223333"},"NotAction":"s3:Get*",
       "NotResource":"arn:aws:s3:::b/${x}"}]})");
  EXPECT_EQ(q.statement_count(), 2u);
  EXPECT_EQ(q.ActionPatterns(), (std::vector<std::string>{"*", "s3:Get*"}));
  EXPECT_EQ(q.ResourcePatterns(), (std::vector<std::string>{"*", "arn:aws:s3:::b/${x}"}));
  // Moving keeps the compiled policy.
  Policy moved = std::move(q);
  EXPECT_EQ(moved.statement_count(), 2u);
}

// ---- statements ---------------------------------------------------------------------------

TEST(PolicyTest, DenyOverridesAllowInOnePolicy) {
  for (bool deny_first : {false, true}) {
    std::string allow = R"({"Effect":"Allow","Action":"s3:*","Resource":"*"})";
    std::string deny = R"({"Effect":"Deny","Action":"s3:DeleteObject","Resource":"*"})";
    const std::string statements = deny_first ? deny + "," + allow : allow + "," + deny;
    Policy p = MustParse(R"({"Statement":[)" + statements + "]}", Policy::Kind::kIdentity);
    EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/k"), Decision::kAllow);
    EXPECT_EQ(Eval(p, kAlice, "s3:DeleteObject", "arn:aws:s3:::b/k"), Decision::kDeny);
    EXPECT_EQ(Eval(p, kAlice, "iam:CreateUser", "arn:aws:s3:::b/k"), Decision::kNotApplicable);
  }
}

TEST(PolicyTest, NotActionAndNotResource) {
  Policy p = MustParse(R"({"Statement":[
      {"Effect":"Allow","NotAction":"s3:DeleteObject","Resource":"arn:aws:s3:::b/*"},
      {"Effect":"Deny","Action":"s3:*","NotResource":["arn:aws:s3:::b/public/*","arn:aws:s3:::b"]}
    ]})",
                       Policy::Kind::kIdentity);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/public/x"), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:DeleteObject", "arn:aws:s3:::b/public/x"),
            Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/private/x"), Decision::kDeny);
  // NotResource excludes exactly its patterns: "arn:aws:s3:::b" itself is not denied.
  EXPECT_EQ(Eval(p, kAlice, "s3:ListBucket", "arn:aws:s3:::b"), Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kAlice, "sts:GetCallerIdentity", "arn:aws:s3:::b/private/x"),
            Decision::kAllow);
}

TEST(PolicyTest, NotPrincipal) {
  Policy p = MustParse(R"({"Statement":[
      {"Effect":"Deny","NotPrincipal":{"AWS":["arn:aws:iam::111122223333:user/alice",
                                              "arn:aws:iam::111122223333:root"]},
       "Action":"s3:*","Resource":"arn:aws:s3:::b/*"}]})");
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/k"), Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, Root(), "s3:GetObject", "arn:aws:s3:::b/k"), Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kBob, "s3:GetObject", "arn:aws:s3:::b/k"), Decision::kDeny);
  EXPECT_EQ(Eval(p, kAnonymous, "s3:GetObject", "arn:aws:s3:::b/k"), Decision::kDeny);
  // An EvalRequest without a principal is anonymous.
  EXPECT_EQ(p.Evaluate(EvalRequest{nullptr, "s3:GetObject", "arn:aws:s3:::b/k", nullptr}),
            Decision::kDeny);
  // A NotPrincipal listing "*" excludes everyone, anonymous included.
  Policy everyone = MustParse(
      R"({"Statement":{"Effect":"Deny","NotPrincipal":"*","Action":"*","Resource":"*"}})");
  EXPECT_EQ(Eval(everyone, kAnonymous, "s3:GetObject", "arn:aws:s3:::b/k"),
            Decision::kNotApplicable);
  EXPECT_EQ(Eval(everyone, kBob, "s3:GetObject", "arn:aws:s3:::b/k"), Decision::kNotApplicable);
}

TEST(PolicyTest, PrincipalForms) {
  const Principal root = Root(), other_root = Root(kOtherAccount);
  const Principal other_alice = User("alice", kOtherAccount);
  struct Case {
    const char* principal;
    const Principal* who;
    bool matches;
  } cases[] = {
      {R"("*")", &kAnonymous, true},
      {R"("*")", &kAlice, true},
      {R"("*")", &root, true},
      {R"({"AWS":"*"})", &kAnonymous, true},
      {R"({"AWS":"*"})", &kBob, true},
      {R"({"AWS":"arn:aws:iam::111122223333:user/alice"})", &kAlice, true},
      {R"({"AWS":"arn:aws:iam::111122223333:user/alice"})", &kBob, false},
      {R"({"AWS":"arn:aws:iam::111122223333:user/alice"})", &other_alice, false},
      {R"({"AWS":"arn:aws:iam::111122223333:user/alice"})", &root, false},
      {R"({"AWS":"arn:aws:iam::111122223333:user/alice"})", &kAnonymous, false},
      {R"({"AWS":"arn:aws:iam::111122223333:user/*"})", &kBob, true},
      {R"({"AWS":"arn:aws:iam::111122223333:user/*"})", &root, false},
      {R"({"AWS":"arn:aws:iam::111122223333:user/*"})", &other_alice, false},
      {R"({"AWS":"111122223333"})", &root, true},
      {R"({"AWS":"111122223333"})", &kAlice, false},
      {R"({"AWS":"111122223333"})", &other_root, false},
      {R"({"AWS":"111122223333"})", &kAnonymous, false},
      {R"({"AWS":"arn:aws:iam::111122223333:root"})", &root, true},
      {R"({"AWS":"arn:aws:iam::111122223333:root"})", &kAlice, false},
      {R"({"AWS":["arn:aws:iam::444455556666:root","arn:aws:iam::111122223333:user/bob"]})",
       &kBob, true},
      {R"({"AWS":["arn:aws:iam::444455556666:root","arn:aws:iam::111122223333:user/bob"]})",
       &other_root, true},
      {R"({"AWS":["arn:aws:iam::444455556666:root","arn:aws:iam::111122223333:user/bob"]})",
       &kAlice, false},
      {R"({"CanonicalUser":"79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"})",
       &kAlice, true},
      {R"({"CanonicalUser":"79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"})",
       &kBob, false},
      {R"({"CanonicalUser":"79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"})",
       &kAnonymous, false},
      {R"({"Service":"logging.s3.amazonaws.com"})", &kAlice, false},
      {R"({"Service":"logging.s3.amazonaws.com","AWS":"111122223333"})", &root, true},
  };
  for (const Case& c : cases) {
    Policy p = MustParse(std::string(R"({"Statement":{"Effect":"Allow","Principal":)") +
                         c.principal + R"(,"Action":"s3:GetObject","Resource":"*"}})");
    EXPECT_EQ(Eval(p, *c.who, "s3:GetObject", "arn:aws:s3:::b/k"),
              c.matches ? Decision::kAllow : Decision::kNotApplicable)
        << c.principal << " vs " << (c.who->arn.empty() ? "anonymous" : c.who->arn);
  }
}

TEST(PolicyTest, ActionsAreCaseInsensitiveResourcesAreNot) {
  Policy p = MustParse(R"({"Statement":{"Effect":"Allow","Action":["S3:getobject","s3:List*"],
                           "Resource":"arn:aws:s3:::Bucket/*"}})",
                       Policy::Kind::kIdentity);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::Bucket/k"), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "S3:GETOBJECT", "arn:aws:s3:::Bucket/k"), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:listbucketversions", "arn:aws:s3:::Bucket/k"), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::bucket/k"), Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kAlice, "s3:PutObject", "arn:aws:s3:::Bucket/k"), Decision::kNotApplicable);
}

TEST(PolicyTest, ActionWildcards) {
  struct Case {
    const char* pattern;
    const char* action;
    bool matches;
  } cases[] = {
      {"*", "s3:GetObject", true},          {"*", "iam:CreateUser", true},
      {"s3:*", "s3:GetObject", true},       {"s3:*", "iam:CreateUser", false},
      {"s3:Get*", "s3:GetObjectAcl", true}, {"s3:Get*", "s3:PutObject", false},
      {"s3:*Object", "s3:PutObject", true}, {"s3:*Object", "s3:PutObjectAcl", false},
      {"s3:?etObject", "s3:GetObject", true}, {"s3:?etObject", "s3:GGetObject", false},
  };
  for (const Case& c : cases) {
    Policy p = MustParse(std::string(R"({"Statement":{"Effect":"Allow","Action":")") + c.pattern +
                             R"(","Resource":"*"}})",
                         Policy::Kind::kIdentity);
    EXPECT_EQ(Eval(p, kAlice, c.action, "arn:aws:s3:::b"),
              c.matches ? Decision::kAllow : Decision::kNotApplicable)
        << c.pattern << " vs " << c.action;
  }
}

// ---- wildcards ---------------------------------------------------------------------------------

TEST(PolicyTest, WildcardMatch) {
  struct Case {
    const char* pattern;
    const char* text;
    bool ignore_case;
    bool matches;
  } cases[] = {
      {"", "", false, true},
      {"", "a", false, false},
      {"a", "", false, false},
      {"*", "", false, true},
      {"*", "anything/with:colons", false, true},
      {"**", "", false, true},
      {"a**b", "ab", false, true},
      {"a**b", "axyb", false, true},
      {"***a", "bba", false, true},
      {"a*b*c", "abc", false, true},
      {"a*b*c", "aXbYc", false, true},
      {"a*b*c", "acb", false, false},
      {"a*b*c", "abcabc", false, true},
      {"a*b*c", "abcb", false, false},
      {"a*b*c", "ab", false, false},
      {"*a", "aaaa", false, true},
      {"*ab", "aaab", false, true},
      {"*ab", "aaba", false, false},
      {"a*", "a", false, true},
      {"?", "", false, false},
      {"?", "a", false, true},
      {"?", "ab", false, false},
      {"a?", "a", false, false},
      {"a?c", "abc", false, true},
      {"*?", "", false, false},
      {"*?", "x", false, true},
      // '?' is one character, however many bytes it takes in UTF-8.
      {"?", "\xc3\xa9", false, true},              // é: 2 bytes
      {"??", "\xc3\xa9", false, false},
      {"?", "\xe2\x82\xac", false, true},          // €: 3 bytes
      {"?", "\xf0\x9f\x98\x80", false, true},      // 😀: 4 bytes
      {"a?c", "a\xe2\x82\xac" "c", false, true},
      {"a??c", "a\xe2\x82\xac" "c", false, false},
      {"*\xc3\xa9", "caf\xc3\xa9", false, true},
      // Literal case: ASCII folding only with ignore_case.
      {"ABC", "abc", false, false},
      {"ABC", "abc", true, true},
      {"*.TXT", "file.txt", true, true},
      {"*.TXT", "file.txt", false, false},
      {"\xc3\x89", "\xc3\xa9", true, false},  // É vs é: not ASCII
      // '*' crosses '/' and ':'.
      {"arn:aws:s3:::b/*", "arn:aws:s3:::b/x/y:z", false, true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(WildcardMatch(c.pattern, c.text, c.ignore_case), c.matches)
        << '"' << c.pattern << "\" vs \"" << c.text << '"' << (c.ignore_case ? " (icase)" : "");
  }
}

TEST(PolicyTest, WildcardMatchLongInputs) {
  // Patterns that make naive backtracking exponential.
  std::string pattern;
  for (int i = 0; i < 200; ++i) pattern += "*a";
  pattern += "*b";
  const std::string text(20000, 'a');
  EXPECT_FALSE(WildcardMatch(pattern, text));
  EXPECT_TRUE(WildcardMatch(pattern, text + "b"));
  EXPECT_TRUE(WildcardMatch(std::string(5000, '*'), text));
  EXPECT_FALSE(WildcardMatch(std::string(20001, '?'), text));
  EXPECT_TRUE(WildcardMatch(std::string(20000, '?'), text));
}

// ---- policy variables --------------------------------------------------------------------

std::string HomePolicy(std::string_view version_element) {
  return "{" + std::string(version_element) +
         R"("Statement":{"Effect":"Allow","Action":"s3:*",
            "Resource":"arn:aws:s3:::b/home/${aws:username}/*"}})";
}

TEST(PolicyTest, PolicyVariablesInResources) {
  Policy p = MustParse(HomePolicy(R"("Version":"2012-10-17",)"), Policy::Kind::kIdentity);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/home/alice/x"), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/home/bob/x"),
            Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kBob, "s3:GetObject", "arn:aws:s3:::b/home/bob/x"), Decision::kAllow);
  // No username (root, anonymous): the pattern matches nothing, not even "${aws:username}".
  EXPECT_EQ(Eval(p, Root(), "s3:GetObject", "arn:aws:s3:::b/home//x"), Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kAnonymous, "s3:GetObject", "arn:aws:s3:::b/home/${aws:username}/x"),
            Decision::kNotApplicable);
  // A value in the request's condition keys wins over the principal, and is
  // literal text: a '*' in it is no wildcard.
  MapConditionContext ctx = Context({{"aws:username", {"a*"}}});
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/home/a*/x", &ctx), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/home/alice/x", &ctx),
            Decision::kNotApplicable);
  // A key with several values does not resolve.
  MapConditionContext multi = Context({{"aws:username", {"alice", "bob"}}});
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/home/alice/x", &multi),
            Decision::kNotApplicable);

  // In the 2008 language (and with no Version) ${...} is plain text.
  for (const char* version : {R"("Version":"2008-10-17",)", ""}) {
    Policy old = MustParse(HomePolicy(version), Policy::Kind::kIdentity);
    EXPECT_EQ(Eval(old, kAlice, "s3:GetObject", "arn:aws:s3:::b/home/alice/x"),
              Decision::kNotApplicable)
        << version;
    EXPECT_EQ(Eval(old, kAlice, "s3:GetObject", "arn:aws:s3:::b/home/${aws:username}/x"),
              Decision::kAllow)
        << version;
  }
}

TEST(PolicyTest, PolicyVariablePrincipalKeys) {
  Policy p = MustParse(R"({"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"*",
      "Resource":["arn:aws:s3:::b/id/${aws:userid}","arn:aws:s3:::b/arn/${aws:PrincipalArn}",
                  "arn:aws:s3:::b/tag/${s3:ExistingObjectTag/Owner}"]}})",
                       Policy::Kind::kIdentity);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/id/AIDAalice"), Decision::kAllow);
  EXPECT_EQ(Eval(p, Root(), "s3:GetObject", "arn:aws:s3:::b/id/111122223333"), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject",
                 "arn:aws:s3:::b/arn/arn:aws:iam::111122223333:user/alice"),
            Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/tag/alice"), Decision::kNotApplicable);
  MapConditionContext ctx = Context({{"s3:existingobjecttag/owner", {"alice"}}});
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/tag/alice", &ctx), Decision::kAllow);
}

TEST(PolicyTest, LiteralCharacterVariables) {
  Policy p = MustParse(R"({"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"*",
      "Resource":["arn:aws:s3:::b/${*}","arn:aws:s3:::b/q${?}","arn:aws:s3:::b/cost${$}",
                  "arn:aws:s3:::b/empty${}","arn:aws:s3:::b/open${x"]}})",
                       Policy::Kind::kIdentity);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/*"), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/x"), Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/q?"), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/qx"), Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/cost$"), Decision::kAllow);
  // "${}" and an unclosed "${" are text.
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/empty${}"), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/open${x"), Decision::kAllow);
  // Without the 2012 Version, "${*}" is text whose '*' is a wildcard.
  Policy old = MustParse(R"({"Statement":{"Effect":"Allow","Action":"*",
      "Resource":"arn:aws:s3:::b/${*}"}})",
                         Policy::Kind::kIdentity);
  EXPECT_EQ(Eval(old, kAlice, "s3:GetObject", "arn:aws:s3:::b/${anything}"), Decision::kAllow);
  EXPECT_EQ(Eval(old, kAlice, "s3:GetObject", "arn:aws:s3:::b/*"), Decision::kNotApplicable);
}

TEST(PolicyTest, PolicyVariablesInConditions) {
  MapConditionContext mine = Context({{"s3:prefix", {"home/alice/"}}});
  MapConditionContext deeper = Context({{"s3:prefix", {"home/alice/docs/"}}});
  MapConditionContext theirs = Context({{"s3:prefix", {"home/bob/"}}});
  Policy eq = MustParse(
      ConditionPolicy(R"({"StringEquals":{"s3:prefix":"home/${aws:username}/"}})"),
      Policy::Kind::kIdentity);
  EXPECT_EQ(Eval(eq, kAlice, "s3:GetObject", "*", &mine), Decision::kAllow);
  EXPECT_EQ(Eval(eq, kAlice, "s3:GetObject", "*", &theirs), Decision::kNotApplicable);
  Policy like = MustParse(
      ConditionPolicy(R"({"StringLike":{"s3:prefix":"home/${aws:username}/*"}})"),
      Policy::Kind::kIdentity);
  EXPECT_EQ(Eval(like, kAlice, "s3:GetObject", "*", &deeper), Decision::kAllow);
  EXPECT_EQ(Eval(like, kBob, "s3:GetObject", "*", &deeper), Decision::kNotApplicable);
  Policy arn = MustParse(
      ConditionPolicy(R"({"ArnEquals":{"aws:SourceArn":"${aws:PrincipalArn}"}})"),
      Policy::Kind::kIdentity);
  MapConditionContext source = Context({{"aws:sourcearn", {kAlice.arn}}});
  EXPECT_EQ(Eval(arn, kAlice, "s3:GetObject", "*", &source), Decision::kAllow);
  EXPECT_EQ(Eval(arn, kBob, "s3:GetObject", "*", &source), Decision::kNotApplicable);
  // Version 2008: the value is the literal text.
  Policy old = MustParse(
      ConditionPolicy(R"({"StringEquals":{"s3:prefix":"home/${aws:username}/"}})", "2008-10-17"),
      Policy::Kind::kIdentity);
  MapConditionContext literal = Context({{"s3:prefix", {"home/${aws:username}/"}}});
  EXPECT_EQ(Eval(old, kAlice, "s3:GetObject", "*", &mine), Decision::kNotApplicable);
  EXPECT_EQ(Eval(old, kAlice, "s3:GetObject", "*", &literal), Decision::kAllow);
}

// ---- AWS's well-known bucket policies ------------------------------------------------------

TEST(PolicyTest, ExampleGrantReadOnAPrefix) {
  Policy p = MustParse(R"({"Version":"2012-10-17","Statement":[{"Sid":"ReadPublic",
      "Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:user/alice"},
      "Action":["s3:GetObject","s3:GetObjectVersion"],
      "Resource":"arn:aws:s3:::examplebucket/public/*"}]})");
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::examplebucket/public/a/b.txt"),
            Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::examplebucket/private/b.txt"),
            Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kAlice, "s3:PutObject", "arn:aws:s3:::examplebucket/public/b.txt"),
            Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kBob, "s3:GetObject", "arn:aws:s3:::examplebucket/public/b.txt"),
            Decision::kNotApplicable);
  EXPECT_FALSE(p.IsPublic());
}

TEST(PolicyTest, ExampleDenyInsecureTransport) {
  Policy p = MustParse(R"({"Version":"2012-10-17","Statement":[{"Sid":"TLSOnly","Effect":"Deny",
      "Principal":"*","Action":"s3:*",
      "Resource":["arn:aws:s3:::examplebucket","arn:aws:s3:::examplebucket/*"],
      "Condition":{"Bool":{"aws:SecureTransport":"false"}}}]})");
  MapConditionContext plain = Context({{"aws:SecureTransport", {"false"}}});
  MapConditionContext tls = Context({{"aws:SecureTransport", {"true"}}});
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::examplebucket/k", &plain),
            Decision::kDeny);
  EXPECT_EQ(Eval(p, kAnonymous, "s3:ListBucket", "arn:aws:s3:::examplebucket", &plain),
            Decision::kDeny);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::examplebucket/k", &tls),
            Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::otherbucket/k", &plain),
            Decision::kNotApplicable);
  EXPECT_FALSE(p.IsPublic());  // a Deny
}

TEST(PolicyTest, ExampleIpAllowListByDeny) {
  Policy p = MustParse(R"({"Version":"2012-10-17","Statement":[{"Sid":"IPAllowList",
      "Effect":"Deny","Principal":"*","Action":"s3:*",
      "Resource":["arn:aws:s3:::examplebucket","arn:aws:s3:::examplebucket/*"],
      "Condition":{"NotIpAddress":{"aws:SourceIp":
                      ["192.0.2.0/24","2001:DB8:1234:5678::/64"]}}}]})");
  auto from = [&](const char* ip) {
    MapConditionContext ctx = Context({{"aws:sourceip", {ip}}});
    return Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::examplebucket/k", &ctx);
  };
  EXPECT_EQ(from("203.0.113.9"), Decision::kDeny);
  EXPECT_EQ(from("192.0.2.77"), Decision::kNotApplicable);
  EXPECT_EQ(from("2001:db8:1234:5678::99"), Decision::kNotApplicable);
  EXPECT_EQ(from("2001:db8:1234:9999::99"), Decision::kDeny);
  // No source address at all: NotIpAddress holds, so the deny applies.
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::examplebucket/k"), Decision::kDeny);
}

TEST(PolicyTest, ExampleRequireServerSideEncryption) {
  Policy p = MustParse(R"({"Version":"2012-10-17","Statement":[
      {"Sid":"DenyWrongEncryption","Effect":"Deny","Principal":"*","Action":"s3:PutObject",
       "Resource":"arn:aws:s3:::examplebucket/*",
       "Condition":{"StringNotEquals":{"s3:x-amz-server-side-encryption":"AES256"}}},
      {"Sid":"DenyUnencrypted","Effect":"Deny","Principal":"*","Action":"s3:PutObject",
       "Resource":"arn:aws:s3:::examplebucket/*",
       "Condition":{"Null":{"s3:x-amz-server-side-encryption":"true"}}},
      {"Sid":"AllowAlice","Effect":"Allow","Principal":{"AWS":"111122223333"},
       "Action":"s3:PutObject","Resource":"arn:aws:s3:::examplebucket/*"}]})");
  const Principal root = Root();
  MapConditionContext aes = Context({{"s3:x-amz-server-side-encryption", {"AES256"}}});
  MapConditionContext kms = Context({{"s3:x-amz-server-side-encryption", {"aws:kms"}}});
  EXPECT_EQ(Eval(p, root, "s3:PutObject", "arn:aws:s3:::examplebucket/k", &aes), Decision::kAllow);
  EXPECT_EQ(Eval(p, root, "s3:PutObject", "arn:aws:s3:::examplebucket/k", &kms), Decision::kDeny);
  EXPECT_EQ(Eval(p, root, "s3:PutObject", "arn:aws:s3:::examplebucket/k"), Decision::kDeny);
  EXPECT_EQ(Eval(p, root, "s3:GetObject", "arn:aws:s3:::examplebucket/k"),
            Decision::kNotApplicable);
}

TEST(PolicyTest, ExampleTagBasedAccess) {
  Policy p = MustParse(R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow",
      "Action":"s3:GetObject","Resource":"arn:aws:s3:::examplebucket/*",
      "Condition":{"StringEquals":{"s3:ExistingObjectTag/environment":"production"}}}]})",
                       Policy::Kind::kIdentity);
  MapConditionContext prod = Context({{"s3:ExistingObjectTag/environment", {"production"}}});
  MapConditionContext dev = Context({{"s3:existingobjecttag/environment", {"dev"}}});
  MapConditionContext other_tag = Context({{"s3:existingobjecttag/team", {"production"}}});
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::examplebucket/k", &prod),
            Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::examplebucket/k", &dev),
            Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::examplebucket/k", &other_tag),
            Decision::kNotApplicable);
}

TEST(PolicyTest, ExampleListBucketRestrictedByPrefix) {
  Policy p = MustParse(R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow",
      "Action":"s3:ListBucket","Resource":"arn:aws:s3:::examplebucket",
      "Condition":{"StringLike":{"s3:prefix":["","home/","home/${aws:username}/*"]}}}]})",
                       Policy::Kind::kIdentity);
  auto list = [&](const Principal& who, const char* prefix) {
    MapConditionContext ctx = Context({{"s3:prefix", {prefix}}});
    return Eval(p, who, "s3:ListBucket", "arn:aws:s3:::examplebucket", &ctx);
  };
  EXPECT_EQ(list(kAlice, ""), Decision::kAllow);
  EXPECT_EQ(list(kAlice, "home/"), Decision::kAllow);
  EXPECT_EQ(list(kAlice, "home/alice/photos/"), Decision::kAllow);
  EXPECT_EQ(list(kAlice, "home/bob/"), Decision::kNotApplicable);
  EXPECT_EQ(list(kAlice, "home/alice"), Decision::kNotApplicable);
  EXPECT_EQ(list(kBob, "home/bob/x"), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:ListBucket", "arn:aws:s3:::examplebucket"),
            Decision::kNotApplicable);
  EXPECT_EQ(Eval(p, kAlice, "s3:ListBucket", "arn:aws:s3:::examplebucket/x"),
            Decision::kNotApplicable);
}

// ---- IsPublic --------------------------------------------------------------------------------

TEST(PolicyTest, IsPublic) {
  struct Case {
    const char* effect;
    const char* principal;  // the whole "Principal"/"NotPrincipal" member
    const char* condition;  // "" for none
    bool is_public;
  } cases[] = {
      {"Allow", R"("Principal":"*")", "", true},
      {"Allow", R"("Principal":{"AWS":"*"})", "", true},
      {"Allow", R"("Principal":{"AWS":["arn:aws:iam::111122223333:root","*"]})", "", true},
      {"Allow", R"("NotPrincipal":{"AWS":"111122223333"})", "", true},
      {"Allow", R"("Principal":{"AWS":"111122223333"})", "", false},
      {"Allow", R"("Principal":{"AWS":"arn:aws:iam::111122223333:user/*"})", "", false},
      {"Allow",
       R"("Principal":{"CanonicalUser":)"
       R"("79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be"})",
       "", false},
      {"Deny", R"("Principal":"*")", "", false},
      // Conditions that pin the caller to fixed values.
      {"Allow", R"("Principal":"*")", R"({"IpAddress":{"aws:SourceIp":"192.0.2.0/24"}})", false},
      {"Allow", R"("Principal":"*")", R"({"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}})", true},
      {"Allow", R"("Principal":"*")", R"({"IpAddress":{"aws:SourceIp":["192.0.2.0/24","::/0"]}})",
       true},
      {"Allow", R"("Principal":"*")", R"({"NotIpAddress":{"aws:SourceIp":"192.0.2.0/24"}})", true},
      {"Allow", R"("Principal":"*")", R"({"StringEquals":{"aws:SourceAccount":"111122223333"}})",
       false},
      {"Allow", R"("Principal":"*")", R"({"StringEquals":{"AWS:SourceVpce":"vpce-1a2b3c4d"}})",
       false},
      {"Allow", R"("Principal":"*")", R"({"StringEquals":{"aws:SourceVpc":"vpc-111bbb22"}})",
       false},
      {"Allow", R"("Principal":"*")", R"({"StringEquals":{"aws:PrincipalAccount":"111122223333"}})",
       false},
      {"Allow", R"("Principal":"*")",
       R"({"StringEquals":{"s3:x-amz-server-side-encryption-aws-kms-key-id":)"
       R"("arn:aws:kms:us-east-1:111122223333:key/k"}})",
       false},
      {"Allow", R"("Principal":"*")",
       R"({"ArnEquals":{"aws:PrincipalArn":"arn:aws:iam::111122223333:user/alice"}})", false},
      {"Allow", R"("Principal":"*")", R"({"StringEquals":{"aws:userid":"AIDAalice"}})", false},
      {"Allow", R"("Principal":"*")", R"({"ArnLike":{"aws:SourceArn":"arn:aws:s3:::b"}})", false},
      {"Allow", R"("Principal":"*")", R"({"ArnLike":{"aws:SourceArn":"arn:aws:s3:::*"}})", true},
      {"Allow", R"("Principal":"*")", R"({"StringLike":{"aws:userid":"AROA*:*"}})", true},
      {"Allow", R"("Principal":"*")", R"({"StringEquals":{"aws:userid":"${aws:username}"}})",
       true},
      {"Allow", R"("Principal":"*")",
       R"({"StringEqualsIfExists":{"aws:SourceAccount":"111122223333"}})", true},
      {"Allow", R"("Principal":"*")",
       R"({"StringNotEquals":{"aws:SourceAccount":"111122223333"}})", true},
      {"Allow", R"("Principal":"*")",
       R"({"ForAllValues:StringEquals":{"aws:SourceAccount":"111122223333"}})", true},
      {"Allow", R"("Principal":"*")",
       R"({"ForAnyValue:StringEquals":{"aws:SourceAccount":"111122223333"}})", false},
      // Conditions on other keys do not make a policy private.
      {"Allow", R"("Principal":"*")", R"({"Bool":{"aws:SecureTransport":"true"}})", true},
      {"Allow", R"("Principal":"*")", R"({"StringEquals":{"s3:prefix":"public/"}})", true},
      {"Allow", R"("Principal":"*")",
       R"({"Bool":{"aws:SecureTransport":"true"},"StringEquals":{"aws:SourceVpce":"vpce-1"}})",
       false},
  };
  for (const Case& c : cases) {
    std::string json = std::string(R"({"Version":"2012-10-17","Statement":{"Effect":")") +
                       c.effect + "\"," + c.principal +
                       R"(,"Action":"s3:GetObject","Resource":"arn:aws:s3:::b/*")";
    if (*c.condition) json += std::string(R"(,"Condition":)") + c.condition;
    json += "}}";
    Policy p = MustParse(json);
    EXPECT_EQ(p.IsPublic(), c.is_public) << json;
  }
  // One public statement is enough; identity policies are never public.
  Policy mixed = MustParse(R"({"Statement":[
      {"Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"*","Resource":"*"},
      {"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"*"}]})");
  EXPECT_TRUE(mixed.IsPublic());
  Policy identity = MustParse(R"({"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}})",
                              Policy::Kind::kIdentity);
  EXPECT_FALSE(identity.IsPublic());
}

// ---- MapConditionContext -----------------------------------------------------------------------

TEST(PolicyTest, MapConditionContext) {
  MapConditionContext ctx;
  EXPECT_EQ(ctx.Values("aws:sourceip"), nullptr);
  ctx.Set("AWS:SourceIp", "10.0.0.1");
  ctx.Set("s3:RequestObjectTagKeys", std::vector<std::string>{"a", "b"});
  ASSERT_NE(ctx.Values("aws:sourceip"), nullptr);
  EXPECT_EQ(*ctx.Values("aws:sourceip"), std::vector<std::string>{"10.0.0.1"});
  EXPECT_EQ(ctx.Values("s3:requestobjecttagkeys")->size(), 2u);
  ctx.Set("aws:sourceip", "10.0.0.2");  // replaces
  EXPECT_EQ(*ctx.Values("aws:sourceip"), std::vector<std::string>{"10.0.0.2"});
  EXPECT_EQ(ctx.Values("AWS:SourceIp"), nullptr);  // lookups take lowercased keys
}

}  // namespace
}  // namespace strata::auth

namespace strata::auth {
namespace {



// Statements that repeat one principal / action / resource block share its
// decision within an Evaluate; what differs (conditions, effect, a negated
// element, another resource, variables resolved per request) must still
// decide each statement on its own. More blocks than are cached: the same.
TEST(PolicyTest, RepeatedTargetsDecideEachStatement) {
  auto statement = [](const std::string& effect, const std::string& principal_key,
                      const std::string& resource, const std::string& condition) {
    return R"({"Effect":")" + effect + R"(",")" + principal_key + R"(":{"AWS":")" + kAlice.arn +
           R"("},"Action":"s3:GetObject",)"
           R"("Resource":")" + resource + R"(")" + (condition.empty() ? "" : "," + condition) + "}";
  };
  const std::string cond_other_ip = R"("Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}})";
  const std::string doc =
      R"({"Version":"2012-10-17","Statement":[)" +
      statement("Deny", "Principal", "arn:aws:s3:::b/*", cond_other_ip) + "," +
      statement("Allow", "Principal", "arn:aws:s3:::b/*", "") + "," +
      statement("Deny", "NotPrincipal", "arn:aws:s3:::b/*", "") + "," +
      statement("Deny", "Principal", "arn:aws:s3:::b/${aws:username}-secret", "") + "]}";
  Policy p = MustParse(doc);
  auto from = [](const char* ip) { return Context({{"aws:sourceip", {ip}}}); };
  auto near = from("127.0.0.1"), far = from("10.1.2.3");
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/k", &near), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/k", &far), Decision::kDeny);
  // NotPrincipal (same ARN): denies everyone else.
  EXPECT_EQ(Eval(p, kBob, "s3:GetObject", "arn:aws:s3:::b/k", &near), Decision::kDeny);
  // The variable resolves to the caller: alice's own secret is denied.
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/alice-secret", &near), Decision::kDeny);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/bob-secret", &near), Decision::kAllow);
  EXPECT_EQ(Eval(p, kAlice, "s3:PutObject", "arn:aws:s3:::b/k", &near), Decision::kNotApplicable);

  // 40 distinct resources (past the cached blocks), the allow last.
  std::string many = R"({"Version":"2012-10-17","Statement":[)";
  for (int i = 0; i < 40; ++i) {
    many += statement("Deny", "Principal", "arn:aws:s3:::b/d" + std::to_string(i) + "/*", "") + ",";
  }
  many += statement("Allow", "Principal", "arn:aws:s3:::b/*", "") + "]}";
  Policy q = MustParse(many);
  EXPECT_EQ(Eval(q, kAlice, "s3:GetObject", "arn:aws:s3:::b/d39/x", &near), Decision::kDeny);
  EXPECT_EQ(Eval(q, kAlice, "s3:GetObject", "arn:aws:s3:::b/d3/x", &near), Decision::kDeny);
  EXPECT_EQ(Eval(q, kAlice, "s3:GetObject", "arn:aws:s3:::b/other", &near), Decision::kAllow);
}

}  // namespace
}  // namespace strata::auth

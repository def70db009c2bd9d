// Condition operators, set qualifiers, IfExists: the policy language's Condition element.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "auth/policy.h"
#include "auth/policy_test_util.h"

namespace strata::auth {
namespace {

TEST(PolicyTest, StringOperators) {
  CheckConditions({
      {R"({"StringEquals":{"s3:prefix":"home/"}})", {{"s3:prefix", {"home/"}}}, true},
      {R"({"StringEquals":{"s3:prefix":"home/"}})", {{"s3:prefix", {"Home/"}}}, false},
      {R"({"StringEquals":{"s3:prefix":"home/"}})", {}, false},
      {R"({"StringEquals":{"s3:prefix":"home/*"}})", {{"s3:prefix", {"home/x"}}}, false},
      {R"({"StringEquals":{"s3:prefix":["a","b"]}})", {{"s3:prefix", {"b"}}}, true},
      // Condition keys are case-insensitive.
      {R"({"StringEquals":{"S3:Prefix":"a"}})", {{"s3:prefix", {"a"}}}, true},
      {R"({"StringEquals":{"s3:prefix":"a"}})", {{"S3:PREFIX", {"a"}}}, true},
      {R"({"StringNotEquals":{"s3:prefix":"a"}})", {{"s3:prefix", {"a"}}}, false},
      {R"({"StringNotEquals":{"s3:prefix":"a"}})", {{"s3:prefix", {"b"}}}, true},
      {R"({"StringNotEquals":{"s3:prefix":"a"}})", {}, true},
      {R"({"StringNotEquals":{"s3:prefix":["a","b"]}})", {{"s3:prefix", {"b"}}}, false},
      {R"({"StringNotEquals":{"s3:prefix":["a","b"]}})", {{"s3:prefix", {"c"}}}, true},
      {R"({"StringEqualsIgnoreCase":{"s3:prefix":"ABC"}})", {{"s3:prefix", {"abc"}}}, true},
      {R"({"StringEqualsIgnoreCase":{"s3:prefix":"ABC"}})", {{"s3:prefix", {"abd"}}}, false},
      {R"({"StringNotEqualsIgnoreCase":{"s3:prefix":"ABC"}})", {{"s3:prefix", {"abc"}}}, false},
      {R"({"StringNotEqualsIgnoreCase":{"s3:prefix":"ABC"}})", {{"s3:prefix", {"x"}}}, true},
      {R"({"StringNotEqualsIgnoreCase":{"s3:prefix":"ABC"}})", {}, true},
      {R"({"StringLike":{"s3:prefix":"home/*"}})", {{"s3:prefix", {"home/x/y"}}}, true},
      {R"({"StringLike":{"s3:prefix":"home/*"}})", {{"s3:prefix", {"Home/x"}}}, false},
      {R"({"StringLike":{"s3:prefix":"h?me/"}})", {{"s3:prefix", {"hame/"}}}, true},
      {R"({"StringLike":{"s3:prefix":"home/*"}})", {}, false},
      {R"({"StringNotLike":{"s3:prefix":"home/*"}})", {{"s3:prefix", {"home/x"}}}, false},
      {R"({"StringNotLike":{"s3:prefix":"home/*"}})", {{"s3:prefix", {"tmp/x"}}}, true},
      {R"({"StringNotLike":{"s3:prefix":"home/*"}})", {}, true},
      // Numbers and booleans in the policy compare as their text.
      {R"({"StringEquals":{"s3:max-keys":10}})", {{"s3:max-keys", {"10"}}}, true},
      {R"({"StringEquals":{"strata:flag":true}})", {{"strata:flag", {"true"}}}, true},
  });
}

TEST(PolicyTest, MultiValuedKeysWithoutQualifier) {
  CheckConditions({
      // Positive: any request value will do.
      {R"({"StringEquals":{"s3:requestobjecttagkeys":"a"}})",
       {{"s3:requestobjecttagkeys", {"b", "a"}}}, true},
      {R"({"StringEquals":{"s3:requestobjecttagkeys":"a"}})",
       {{"s3:requestobjecttagkeys", {"b", "c"}}}, false},
      // Negated: no request value may match any policy value.
      {R"({"StringNotEquals":{"s3:requestobjecttagkeys":"a"}})",
       {{"s3:requestobjecttagkeys", {"b", "a"}}}, false},
      {R"({"StringNotEquals":{"s3:requestobjecttagkeys":"a"}})",
       {{"s3:requestobjecttagkeys", {"b", "c"}}}, true},
      // A key present with no values is absent.
      {R"({"StringEquals":{"s3:requestobjecttagkeys":"a"}})", {{"s3:requestobjecttagkeys", {}}},
       false},
      {R"({"StringNotEquals":{"s3:requestobjecttagkeys":"a"}})",
       {{"s3:requestobjecttagkeys", {}}}, true},
  });
}

TEST(PolicyTest, SetQualifiers) {
  constexpr char kAny[] = R"({"ForAnyValue:StringEquals":{"aws:TagKeys":["a","b"]}})";
  constexpr char kAll[] = R"({"ForAllValues:StringEquals":{"aws:TagKeys":["a","b"]}})";
  CheckConditions({
      {kAny, {{"aws:tagkeys", {"c", "a"}}}, true},
      {kAny, {{"aws:tagkeys", {"c"}}}, false},
      {kAny, {}, false},
      {kAny, {{"aws:tagkeys", {}}}, false},
      {kAll, {{"aws:tagkeys", {"a", "b"}}}, true},
      {kAll, {{"aws:tagkeys", {"b"}}}, true},
      {kAll, {{"aws:tagkeys", {"a", "c"}}}, false},
      {kAll, {}, true},
      {kAll, {{"aws:tagkeys", {}}}, true},
      // Negated operators: "satisfies" means matches no policy value.
      {R"({"ForAnyValue:StringNotEquals":{"aws:TagKeys":"a"}})", {{"aws:tagkeys", {"a", "b"}}},
       true},
      {R"({"ForAnyValue:StringNotEquals":{"aws:TagKeys":"a"}})", {{"aws:tagkeys", {"a"}}}, false},
      {R"({"ForAnyValue:StringNotEquals":{"aws:TagKeys":"a"}})", {}, false},
      {R"({"ForAllValues:StringNotEquals":{"aws:TagKeys":"a"}})", {{"aws:tagkeys", {"b", "c"}}},
       true},
      {R"({"ForAllValues:StringNotEquals":{"aws:TagKeys":"a"}})", {{"aws:tagkeys", {"a", "b"}}},
       false},
      {R"({"ForAllValues:StringNotEquals":{"aws:TagKeys":"a"}})", {}, true},
      {R"({"ForAllValues:StringLike":{"aws:TagKeys":["team-*"]}})",
       {{"aws:tagkeys", {"team-a", "team-b"}}}, true},
      {R"({"ForAllValues:StringLike":{"aws:TagKeys":["team-*"]}})",
       {{"aws:tagkeys", {"team-a", "cost"}}}, false},
      {R"({"ForAnyValue:NumericGreaterThan":{"strata:sizes":"10"}})",
       {{"strata:sizes", {"5", "20"}}}, true},
      {R"({"ForAllValues:NumericGreaterThan":{"strata:sizes":"10"}})",
       {{"strata:sizes", {"5", "20"}}}, false},
  });
}

TEST(PolicyTest, IfExists) {
  CheckConditions({
      {R"({"StringEqualsIfExists":{"s3:x-amz-acl":"private"}})", {}, true},
      {R"({"StringEqualsIfExists":{"s3:x-amz-acl":"private"}})", {{"s3:x-amz-acl", {"private"}}},
       true},
      {R"({"StringEqualsIfExists":{"s3:x-amz-acl":"private"}})",
       {{"s3:x-amz-acl", {"public-read"}}}, false},
      {R"({"StringNotEqualsIfExists":{"s3:x-amz-acl":"public-read"}})",
       {{"s3:x-amz-acl", {"public-read"}}}, false},
      {R"({"NumericLessThanIfExists":{"s3:max-keys":"10"}})", {}, true},
      {R"({"NumericLessThanIfExists":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"50"}}}, false},
      {R"({"IpAddressIfExists":{"aws:SourceIp":"10.0.0.0/8"}})", {}, true},
      {R"({"BoolIfExists":{"aws:MultiFactorAuthPresent":"true"}})", {}, true},
      {R"({"BoolIfExists":{"aws:MultiFactorAuthPresent":"true"}})",
       {{"aws:multifactorauthpresent", {"false"}}}, false},
      // IfExists wins over ForAnyValue's "absent is false".
      {R"({"ForAnyValue:StringEqualsIfExists":{"aws:TagKeys":"a"}})", {}, true},
      {R"({"ForAnyValue:StringEqualsIfExists":{"aws:TagKeys":"a"}})", {{"aws:tagkeys", {"b"}}},
       false},
  });
}

TEST(PolicyTest, NumericOperators) {
  CheckConditions({
      {R"({"NumericEquals":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"10"}}}, true},
      {R"({"NumericEquals":{"s3:max-keys":10}})", {{"s3:max-keys", {"10.0"}}}, true},
      {R"({"NumericEquals":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"11"}}}, false},
      {R"({"NumericEquals":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"ten"}}}, false},
      {R"({"NumericEquals":{"s3:max-keys":"10"}})", {}, false},
      {R"({"NumericNotEquals":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"11"}}}, true},
      {R"({"NumericNotEquals":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"10"}}}, false},
      // Not a number: false for the negated operator too.
      {R"({"NumericNotEquals":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"ten"}}}, false},
      {R"({"NumericNotEquals":{"s3:max-keys":"10"}})", {}, true},
      {R"({"NumericLessThan":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"9.5"}}}, true},
      {R"({"NumericLessThan":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"10"}}}, false},
      {R"({"NumericLessThan":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"-3"}}}, true},
      {R"({"NumericLessThanEquals":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"10"}}}, true},
      {R"({"NumericLessThanEquals":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"11"}}}, false},
      {R"({"NumericGreaterThan":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"11"}}}, true},
      {R"({"NumericGreaterThan":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"10"}}}, false},
      {R"({"NumericGreaterThanEquals":{"s3:max-keys":"1e1"}})", {{"s3:max-keys", {"10"}}}, true},
      {R"({"NumericGreaterThanEquals":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"9"}}}, false},
      {R"({"NumericLessThan":{"s3:max-keys":"10"}})", {{"s3:max-keys", {"inf"}}}, false},
      {R"({"NumericLessThan":{"s3:max-keys":"10"}})", {{"s3:max-keys", {" 5"}}}, false},
  });
}

TEST(PolicyTest, DateOperators) {
  // 2026-12-01T10:00:00Z is 1796119200.
  constexpr char kAfterTen[] = R"({"DateGreaterThan":{"aws:CurrentTime":"2026-12-01T10:00:00Z"}})";
  CheckConditions({
      {kAfterTen, {{"aws:currenttime", {"2026-12-01T10:00:01Z"}}}, true},
      {kAfterTen, {{"aws:currenttime", {"2026-12-01T10:00:00Z"}}}, false},
      {kAfterTen, {{"aws:currenttime", {"2026-12-01T12:00:01+02:00"}}}, true},
      {kAfterTen, {{"aws:currenttime", {"2026-12-01T11:59:59+0200"}}}, false},
      {kAfterTen, {{"aws:currenttime", {"20261201T100001Z"}}}, true},
      {kAfterTen, {{"aws:currenttime", {"2026-12-02"}}}, true},
      {kAfterTen, {{"aws:currenttime", {"2026-12-01T10:00:00.999Z"}}}, false},
      {kAfterTen, {{"aws:currenttime", {"yesterday"}}}, false},
      {kAfterTen, {{"aws:currenttime", {"2026-02-30"}}}, false},
      {kAfterTen, {}, false},
      {R"({"DateGreaterThan":{"aws:EpochTime":"2026-12-01T10:00:00Z"}})",
       {{"aws:epochtime", {"1796119201"}}}, true},
      {R"({"DateGreaterThan":{"aws:EpochTime":1796119200}})", {{"aws:epochtime", {"1796119200"}}},
       false},
      {R"({"DateEquals":{"aws:CurrentTime":"2026-12-01"}})",
       {{"aws:currenttime", {"2026-12-01T00:00:00Z"}}}, true},
      {R"({"DateEquals":{"aws:CurrentTime":"2026-12-01T10:00Z"}})",
       {{"aws:currenttime", {"1796119200"}}}, true},
      {R"({"DateNotEquals":{"aws:CurrentTime":"2026-12-01"}})",
       {{"aws:currenttime", {"2026-12-01T00:00:01Z"}}}, true},
      {R"({"DateNotEquals":{"aws:CurrentTime":"2026-12-01"}})",
       {{"aws:currenttime", {"2026-12-01"}}}, false},
      {R"({"DateNotEquals":{"aws:CurrentTime":"2026-12-01"}})", {}, true},
      {R"({"DateLessThan":{"aws:CurrentTime":"2026-12-01"}})",
       {{"aws:currenttime", {"2026-11-30T23:59:59Z"}}}, true},
      {R"({"DateLessThan":{"aws:CurrentTime":"2026-12-01"}})",
       {{"aws:currenttime", {"2026-12-01T00:00:00Z"}}}, false},
      {R"({"DateLessThanEquals":{"aws:CurrentTime":"2026-12-01"}})",
       {{"aws:currenttime", {"2026-12-01T00:00:00Z"}}}, true},
      {R"({"DateGreaterThanEquals":{"aws:CurrentTime":"2026-12-01"}})",
       {{"aws:currenttime", {"2026-11-30T23:59:59Z"}}}, false},
  });
}

TEST(PolicyTest, BoolBinaryNull) {
  CheckConditions({
      {R"({"Bool":{"aws:SecureTransport":"false"}})", {{"aws:securetransport", {"false"}}}, true},
      {R"({"Bool":{"aws:SecureTransport":"false"}})", {{"aws:securetransport", {"FALSE"}}}, true},
      {R"({"Bool":{"aws:SecureTransport":"false"}})", {{"aws:securetransport", {"true"}}}, false},
      {R"({"Bool":{"aws:SecureTransport":false}})", {{"aws:securetransport", {"false"}}}, true},
      {R"({"Bool":{"aws:SecureTransport":"True"}})", {{"aws:securetransport", {"true"}}}, true},
      {R"({"Bool":{"aws:SecureTransport":"false"}})", {}, false},
      {R"({"BinaryEquals":{"strata:blob":"aGVsbG8="}})", {{"strata:blob", {"hello"}}}, true},
      {R"({"BinaryEquals":{"strata:blob":"aGVsbG8="}})", {{"strata:blob", {"aGVsbG8="}}}, false},
      {R"({"Null":{"aws:TokenIssueTime":"true"}})", {}, true},
      {R"({"Null":{"aws:TokenIssueTime":"true"}})", {{"aws:tokenissuetime", {"x"}}}, false},
      {R"({"Null":{"aws:TokenIssueTime":"false"}})", {{"aws:tokenissuetime", {"x"}}}, true},
      {R"({"Null":{"aws:TokenIssueTime":false}})", {}, false},
      {R"({"Null":{"aws:TokenIssueTime":"true"}})", {{"aws:tokenissuetime", {}}}, true},
  });
}

TEST(PolicyTest, IpAddressOperators) {
  CheckConditions({
      {R"({"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {{"aws:sourceip", {"10.1.2.3"}}}, true},
      {R"({"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {{"aws:sourceip", {"11.0.0.1"}}}, false},
      {R"({"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {{"aws:sourceip", {"2001:db8::1"}}},
       false},
      {R"({"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {{"aws:sourceip", {"not-an-ip"}}}, false},
      {R"({"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {}, false},
      // Host bits in the policy CIDR are ignored.
      {R"({"IpAddress":{"aws:SourceIp":"10.9.9.9/8"}})", {{"aws:sourceip", {"10.1.2.3"}}}, true},
      {R"({"IpAddress":{"aws:SourceIp":"0.0.0.0/0"}})", {{"aws:sourceip", {"203.0.113.7"}}}, true},
      {R"({"IpAddress":{"aws:SourceIp":"192.0.2.1/32"}})", {{"aws:sourceip", {"192.0.2.1"}}}, true},
      {R"({"IpAddress":{"aws:SourceIp":"192.0.2.1/32"}})", {{"aws:sourceip", {"192.0.2.2"}}},
       false},
      {R"({"IpAddress":{"aws:SourceIp":"192.0.2.1"}})", {{"aws:sourceip", {"192.0.2.1"}}}, true},
      {R"({"IpAddress":{"aws:SourceIp":"192.0.2.128/25"}})", {{"aws:sourceip", {"192.0.2.127"}}},
       false},
      {R"({"IpAddress":{"aws:SourceIp":"192.0.2.128/25"}})", {{"aws:sourceip", {"192.0.2.200"}}},
       true},
      {R"({"IpAddress":{"aws:SourceIp":"2001:DB8:1234:5678::/64"}})",
       {{"aws:sourceip", {"2001:db8:1234:5678:abcd::1"}}}, true},
      {R"({"IpAddress":{"aws:SourceIp":"2001:DB8:1234:5678::/64"}})",
       {{"aws:sourceip", {"2001:db8:1234:5679::1"}}}, false},
      {R"({"IpAddress":{"aws:SourceIp":"::/0"}})", {{"aws:sourceip", {"::1"}}}, true},
      {R"({"IpAddress":{"aws:SourceIp":"::/0"}})", {{"aws:sourceip", {"10.0.0.1"}}}, false},
      {R"({"IpAddress":{"aws:SourceIp":"2001:db8::1/128"}})", {{"aws:sourceip", {"2001:db8::1"}}},
       true},
      // IPv4-mapped IPv6 addresses are their IPv4 address, on either side.
      {R"({"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {{"aws:sourceip", {"::ffff:10.0.0.1"}}},
       true},
      {R"({"IpAddress":{"aws:SourceIp":"::ffff:10.0.0.0/104"}})",
       {{"aws:sourceip", {"10.200.0.1"}}}, true},
      {R"({"IpAddress":{"aws:SourceIp":["192.0.2.0/24","10.0.0.0/8"]}})",
       {{"aws:sourceip", {"10.0.0.1"}}}, true},
      {R"({"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {{"aws:sourceip", {"10.0.0.1"}}},
       false},
      {R"({"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {{"aws:sourceip", {"11.0.0.1"}}}, true},
      {R"({"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {{"aws:sourceip", {"bogus"}}}, false},
      {R"({"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}})", {}, true},
  });
}

TEST(PolicyTest, ArnOperators) {
  CheckConditions({
      {R"({"ArnLike":{"aws:SourceArn":"arn:aws:s3:::bucket/*"}})",
       {{"aws:sourcearn", {"arn:aws:s3:::bucket/a:b"}}}, true},
      {R"({"ArnLike":{"aws:SourceArn":"arn:aws:s3:::bucket/*"}})",
       {{"aws:sourcearn", {"arn:aws:s3:::other/a"}}}, false},
      {R"({"ArnEquals":{"aws:SourceArn":"arn:aws:iam::*:user/alice"}})",
       {{"aws:sourcearn", {"arn:aws:iam::111122223333:user/alice"}}}, true},
      {R"({"ArnEquals":{"aws:SourceArn":"arn:aws:iam::111122223333:user/alice"}})",
       {{"aws:sourcearn", {"arn:aws:iam::111122223333:user/bob"}}}, false},
      // Parts are matched separately: '*' does not eat the ':' between them.
      {R"({"ArnLike":{"aws:SourceArn":"arn:aws:*:bucket"}})",
       {{"aws:sourcearn", {"arn:aws:s3:::bucket"}}}, false},
      {R"({"StringLike":{"aws:SourceArn":"arn:aws:*:bucket"}})",
       {{"aws:sourcearn", {"arn:aws:s3:::bucket"}}}, true},
      {R"({"ArnLike":{"aws:SourceArn":"arn:aws:s3:::*"}})", {{"aws:sourcearn", {"not-an-arn"}}},
       false},
      {R"({"ArnNotLike":{"aws:SourceArn":"arn:aws:s3:::bucket/*"}})",
       {{"aws:sourcearn", {"arn:aws:s3:::other/x"}}}, true},
      {R"({"ArnNotLike":{"aws:SourceArn":"arn:aws:s3:::bucket/*"}})",
       {{"aws:sourcearn", {"arn:aws:s3:::bucket/x"}}}, false},
      {R"({"ArnNotEquals":{"aws:SourceArn":"arn:aws:s3:::bucket"}})", {}, true},
      {R"({"ArnNotEquals":{"aws:SourceArn":"arn:aws:s3:::bucket"}})",
       {{"aws:sourcearn", {"not-an-arn"}}}, false},
  });
}

TEST(PolicyTest, OperatorsAndKeysAreAnded) {
  CheckConditions({
      {R"({"StringEquals":{"s3:prefix":"a","s3:delimiter":"/"}})",
       {{"s3:prefix", {"a"}}, {"s3:delimiter", {"/"}}}, true},
      {R"({"StringEquals":{"s3:prefix":"a","s3:delimiter":"/"}})", {{"s3:prefix", {"a"}}}, false},
      {R"({"StringEquals":{"s3:prefix":"a"},"NumericLessThan":{"s3:max-keys":"10"}})",
       {{"s3:prefix", {"a"}}, {"s3:max-keys", {"5"}}}, true},
      {R"({"StringEquals":{"s3:prefix":"a"},"NumericLessThan":{"s3:max-keys":"10"}})",
       {{"s3:prefix", {"a"}}, {"s3:max-keys", {"50"}}}, false},
      {R"({})", {}, true},
  });
}

TEST(PolicyTest, NoConditionContextMeansEveryKeyAbsent) {
  Policy p = MustParse(ConditionPolicy(R"({"StringNotEquals":{"s3:prefix":"a"}})"),
                       Policy::Kind::kIdentity);
  EXPECT_EQ(Eval(p, kAlice, "s3:GetObject", "arn:aws:s3:::b/k"), Decision::kAllow);
  Policy q = MustParse(ConditionPolicy(R"({"StringEquals":{"s3:prefix":"a"}})"),
                       Policy::Kind::kIdentity);
  EXPECT_EQ(Eval(q, kAlice, "s3:GetObject", "arn:aws:s3:::b/k"), Decision::kNotApplicable);
}

// ---- parse errors ----------------------------------------------------------------------

}  // namespace
}  // namespace strata::auth

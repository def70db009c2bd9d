#include "s3/xml.h"

#include <gtest/gtest.h>

#include "s3/errors.h"

namespace strata::s3 {
namespace {

TEST(Xml, EscapesText) {
  XmlWriter w;
  w.Open("R");
  w.Element("Key", "a<b>&\"c'\r");
  w.Close("R");
  std::string xml = w.Finish();
  EXPECT_NE(xml.find("<Key>a&lt;b&gt;&amp;&quot;c&apos;&#13;</Key>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<R xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"), std::string::npos);
}

TEST(Xml, ParsesDelete) {
  auto d = ParseDeleteRequest(
      "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>"
      "<Object><Key>a&amp;b</Key></Object><Object><Key>c</Key><VersionId>x</VersionId></Object>"
      "</Delete>");
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->quiet);
  EXPECT_EQ(d->keys, (std::vector<std::string>{"a&b", "c"}));
  EXPECT_FALSE(ParseDeleteRequest("<Delete><Object><Key>a</Key></Object>"));  // truncated
  EXPECT_FALSE(ParseDeleteRequest("garbage"));
  EXPECT_FALSE(ParseDeleteRequest("<Delete></Delete>"));                     // no objects
  EXPECT_FALSE(ParseDeleteRequest("<Delete><Object></Object></Delete>"));    // no key
  EXPECT_FALSE(ParseDeleteRequest("<Other/>"));
}

// Fuzz findings (xml_fuzz.cc round trips): a key or tag made of blanks only
// came back empty (pugixml drops whitespace-only text by default), and a
// character reference to U+0000 cut the value short ("a&#0;b" read as "a").
TEST(Xml, BlankOnlyValuesSurviveAndNulReferencesAreRefused) {
  auto d = ParseDeleteRequest("<Delete>\n  <Object><Key> </Key></Object>\n  <Object><Key>\t</Key>"
                              "</Object>\n</Delete>");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->keys, (std::vector<std::string>{" ", "\t"}));
  auto tags = ParseTagging("<Tagging><TagSet>\n<Tag><Key>k</Key><Value>  </Value></Tag>\n"
                           "</TagSet></Tagging>");
  ASSERT_TRUE(tags);
  EXPECT_EQ(*tags, (std::vector<std::pair<std::string, std::string>>{{"k", "  "}}));
  EXPECT_FALSE(ParseDeleteRequest("<Delete><Object><Key>a&#0;b</Key></Object></Delete>"));
  EXPECT_FALSE(ParseDeleteRequest("<Delete><Object><Key>a&#x000;b</Key></Object></Delete>"));
  EXPECT_FALSE(ParseTagging("<Tagging><TagSet><Tag><Key>k</Key><Value>&#00;</Value></Tag>"
                            "</TagSet></Tagging>"));
  auto ok = ParseDeleteRequest("<Delete><Object><Key>&#10;&#x30;&amp;#0;</Key></Object></Delete>");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->keys, (std::vector<std::string>{"\n0&#0;"}));
}

TEST(Xml, ParsesCreateBucketConfiguration) {
  EXPECT_EQ(*ParseCreateBucketConfiguration(""), "");
  EXPECT_EQ(*ParseCreateBucketConfiguration(
                "<CreateBucketConfiguration><LocationConstraint>eu-west-1</LocationConstraint>"
                "</CreateBucketConfiguration>"),
            "eu-west-1");
  EXPECT_FALSE(ParseCreateBucketConfiguration("<CreateBucketConfiguration>"));
  EXPECT_FALSE(ParseCreateBucketConfiguration("not xml"));
}

TEST(Errors, RenderAndMap) {
  Error e = MakeError(ErrorCode::kNoSuchKey);
  EXPECT_EQ(e.HttpStatus(), 404);
  std::string xml = RenderErrorXml(e, "/b/k", "REQ1");
  EXPECT_NE(xml.find("<Error><Code>NoSuchKey</Code>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<RequestId>REQ1</RequestId>"), std::string::npos);
  EXPECT_EQ(FromStatus(NotFound("x"), ErrorCode::kNoSuchBucket).code, ErrorCode::kNoSuchBucket);
  EXPECT_EQ(FromStatus(ResourceExhausted("disk full")).HttpStatus(), 507);
  EXPECT_EQ(FromStatus(IOError("eio")).HttpStatus(), 500);
  EXPECT_EQ(FromBodyStatus(PermissionDenied("chunk")).code, ErrorCode::kSignatureDoesNotMatch);
  EXPECT_EQ(FromBodyStatus(Corruption("sha")).code, ErrorCode::kXAmzContentSHA256Mismatch);
  EXPECT_EQ(FromBodyStatus(OutOfRange("short")).code, ErrorCode::kIncompleteBody);
}

}  // namespace
}  // namespace strata::s3

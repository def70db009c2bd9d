// LifecycleConfiguration documents: parsing, validation with AWS's errors, rendering.
#include "tier/lifecycle.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tier/lifecycle_test_util.h"

namespace strata::tier {
namespace {

using namespace lifecycle_test;

// ---- Parsing ----------------------------------------------------------------

// What boto3 sends for put_bucket_lifecycle_configuration (botocore's REST-XML
// serializer: the namespace, no blanks, ISO 8601 dates ending in Z).
TEST(LifecycleParseTest, Boto3Document) {
  Configuration c = Parse(
      "<LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Rule><Expiration><Days>365</Days></Expiration><ID>logs</ID><Filter><Prefix>logs/</Prefix></"
      "Filter>"
      "<Status>Enabled</Status><Transition><Days>30</Days><StorageClass>STANDARD_IA</"
      "StorageClass></Transition>"
      "<Transition><Days>90</Days><StorageClass>GLACIER</StorageClass></Transition>"
      "<NoncurrentVersionTransition><NoncurrentDays>7</NoncurrentDays><StorageClass>GLACIER_IR</"
      "StorageClass>"
      "<NewerNoncurrentVersions>3</NewerNoncurrentVersions></NoncurrentVersionTransition>"
      "<NoncurrentVersionExpiration><NoncurrentDays>60</NoncurrentDays>"
      "<NewerNoncurrentVersions>5</NewerNoncurrentVersions></NoncurrentVersionExpiration>"
      "<AbortIncompleteMultipartUpload><DaysAfterInitiation>2</DaysAfterInitiation>"
      "</AbortIncompleteMultipartUpload></Rule>"
      "<Rule><Expiration><Date>2027-01-01T00:00:00Z</Date></Expiration><ID>tagged</ID><Filter><And>"
      "<Prefix>tmp/</Prefix><Tag><Key>class</Key><Value>scratch</Value></Tag><Tag><Key>team</Key>"
      "<Value>ml</Value></Tag><ObjectSizeGreaterThan>1024</ObjectSizeGreaterThan>"
      "<ObjectSizeLessThan>1048576</ObjectSizeLessThan></And></Filter><Status>Disabled</Status></"
      "Rule>"
      "<Rule><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>"
      "<ID>markers</ID><Filter></Filter><Status>Enabled</Status></Rule>"
      "</LifecycleConfiguration>");
  ASSERT_EQ(c.rules.size(), 3u);
  const Rule& a = c.rules[0];
  EXPECT_EQ(a.id, "logs");
  EXPECT_TRUE(a.enabled);
  EXPECT_EQ(a.filter_form, FilterForm::kFilter);
  EXPECT_EQ(a.filter, Pre("logs/"));
  EXPECT_EQ(a.expiration, InDays(365));
  EXPECT_FALSE(a.expired_object_delete_marker);
  EXPECT_EQ(a.transitions,
            (std::vector<TransitionAction>{{InDays(30), "STANDARD_IA"}, {InDays(90), "GLACIER"}}));
  EXPECT_EQ(a.noncurrent_transitions,
            (std::vector<NoncurrentTransitionAction>{{7, 3, "GLACIER_IR"}}));
  EXPECT_EQ(a.noncurrent_days, 60u);
  EXPECT_EQ(a.newer_noncurrent_versions, 5u);
  EXPECT_EQ(a.abort_upload_days, 2u);
  const Rule& b = c.rules[1];
  EXPECT_FALSE(b.enabled);
  EXPECT_EQ(b.filter_form, FilterForm::kAnd);
  EXPECT_EQ(b.filter, (Filter{"tmp/", {{"class", "scratch"}, {"team", "ml"}}, 1024, 1048576}));
  EXPECT_EQ(b.expiration, OnDate(1798761600));  // 2027-01-01
  const Rule& m = c.rules[2];
  EXPECT_EQ(m.filter_form, FilterForm::kEmptyFilter);
  EXPECT_EQ(m.filter, Filter{});
  EXPECT_EQ(m.expiration, std::nullopt);
  EXPECT_TRUE(m.expired_object_delete_marker);
}

// The AWS user guide's examples, as the aws cli sends a hand-written file:
// no namespace, pretty-printed, the legacy Prefix, <Filter/>.
TEST(LifecycleParseTest, AwsCliDocumentWithoutNamespace) {
  Configuration c = Parse(R"(<?xml version="1.0" encoding="UTF-8"?>
<LifecycleConfiguration>
  <Rule>
    <ID>Transition and Expiration Rule</ID>
    <Filter>
      <Prefix>tax/</Prefix>
    </Filter>
    <Status>Enabled</Status>
    <Transition>
      <Days>365</Days>
      <StorageClass>GLACIER</StorageClass>
    </Transition>
    <Expiration>
      <Days>3650</Days>
    </Expiration>
  </Rule>
  <Rule>
    <ID>legacy</ID>
    <Prefix>projectdocs/</Prefix>
    <Status>Enabled</Status>
    <Transition>
      <Date>2027-06-01T00:00:00.000Z</Date>
      <StorageClass>DEEP_ARCHIVE</StorageClass>
    </Transition>
  </Rule>
  <Rule>
    <Filter/>
    <Status>Enabled</Status>
    <AbortIncompleteMultipartUpload>
      <DaysAfterInitiation>7</DaysAfterInitiation>
    </AbortIncompleteMultipartUpload>
  </Rule>
  <Rule>
    <ID>size</ID>
    <Filter><ObjectSizeGreaterThan>131072</ObjectSizeGreaterThan></Filter>
    <Status>Enabled</Status>
    <Transition><Days>0</Days><StorageClass>GLACIER_IR</StorageClass></Transition>
  </Rule>
  <Rule>
    <ID>tag</ID>
    <Filter><Tag><Key>archive</Key><Value>yes</Value></Tag></Filter>
    <Status>Enabled</Status>
    <Expiration><Days>1</Days></Expiration>
  </Rule>
</LifecycleConfiguration>
)");
  ASSERT_EQ(c.rules.size(), 5u);
  EXPECT_EQ(c.rules[0].id, "Transition and Expiration Rule");
  EXPECT_EQ(c.rules[0].filter.prefix, "tax/");
  EXPECT_EQ(c.rules[1].filter_form, FilterForm::kLegacyPrefix);
  EXPECT_EQ(c.rules[1].filter.prefix, "projectdocs/");
  EXPECT_EQ(c.rules[1].transitions[0].when, OnDate(1811808000));  // 2027-06-01
  EXPECT_EQ(c.rules[2].id, "rule-3");                             // made up from its position
  EXPECT_EQ(c.rules[2].filter_form, FilterForm::kEmptyFilter);
  EXPECT_EQ(c.rules[2].abort_upload_days, 7u);
  EXPECT_EQ(c.rules[3].filter_form, FilterForm::kFilter);
  EXPECT_EQ(c.rules[3].filter, (Filter{"", {}, 131072, {}}));
  EXPECT_EQ(c.rules[3].transitions[0].when.days, 0u);  // Days 0: transition at once
  EXPECT_EQ(c.rules[4].filter, (Filter{"", {{"archive", "yes"}}, {}, {}}));
}

TEST(LifecycleParseTest, MadeUpIdsNeverCollide) {
  Configuration c = Parse(
      Doc("<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>"
          "<Rule><Filter/><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule>"
          "<Rule><ID>rule-2</ID><Filter/><Status>Enabled</Status><Expiration><Days>3</Days></"
          "Expiration></Rule>"
          "<Rule><ID>rule-2-1</ID><Filter/><Status>Enabled</Status><Expiration><Days>4</Days></"
          "Expiration></Rule>"
          "<Rule><ID></ID><Filter/><Status>Enabled</Status><Expiration><Days>5</Days></"
          "Expiration></Rule>"));
  ASSERT_EQ(c.rules.size(), 5u);
  EXPECT_EQ(c.rules[0].id, "rule-1");
  EXPECT_EQ(c.rules[1].id, "rule-2-2");  // "rule-2" and "rule-2-1" were given
  EXPECT_EQ(c.rules[2].id, "rule-2");
  EXPECT_EQ(c.rules[3].id, "rule-2-1");
  EXPECT_EQ(c.rules[4].id, "rule-5");  // an empty ID counts as none
  EXPECT_EQ(
      Parse(Doc(
          "<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>")),
      Parse(Doc("<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></"
                "Rule>")));
}

TEST(LifecycleParseTest, TextAndValueForms) {
  // Text is taken as it is: blanks (even alone), entities, CDATA.
  Configuration c = Parse(Doc(
      "<Rule><ID> a&amp;b </ID><Filter><Prefix> </Prefix></Filter><Status> Enabled </Status>"
      "<Expiration><Days> +7 </Days></Expiration></Rule>"
      "<Rule><ID><![CDATA[<x>]]></ID><Prefix>a&#13;b&lt;&#x41;</Prefix><Status>Enabled</Status>"
      "<Expiration><Date>2027-01-01T01:30:00+01:30</Date></Expiration></Rule>"
      "<Rule><ID>d</ID><Filter><Tag><Key>k</Key></Tag></Filter><Status>Enabled</Status>"
      "<Expiration><Date>2026-12-31T19:00:00.000000-05:00</Date></Expiration></Rule>"
      "<Rule><ID>e</ID><Filter/><Status>Enabled</Status>"
      "<Expiration><ExpiredObjectDeleteMarker>1</ExpiredObjectDeleteMarker></Expiration></Rule>"));
  ASSERT_EQ(c.rules.size(), 4u);
  EXPECT_EQ(c.rules[0].id, " a&b ");
  EXPECT_EQ(c.rules[0].filter.prefix, " ");
  EXPECT_EQ(c.rules[0].expiration, InDays(7));
  EXPECT_EQ(c.rules[1].id, "<x>");
  EXPECT_EQ(c.rules[1].filter.prefix, "a\rb<A");
  EXPECT_EQ(c.rules[1].expiration, OnDate(1798761600));  // midnight UTC, given in +01:30
  EXPECT_EQ(c.rules[2].filter.tags, (Tags{{"k", ""}}));  // a Tag without Value
  EXPECT_EQ(c.rules[2].expiration, OnDate(1798761600));
  EXPECT_TRUE(c.rules[3].expired_object_delete_marker);
}

TEST(LifecycleParseTest, KnownClassDecides) {
  std::string doc =
      Doc("<Rule><ID>a</ID><Filter/><Status>Enabled</Status>"
          "<Transition><Days>1</Days><StorageClass>COLD</StorageClass></Transition></Rule>");
  EXPECT_EQ(Refusal(doc)->message, "'StorageClass' is invalid");
  auto r = ParseLifecycle(doc, [](std::string_view c) { return c == "COLD"; });
  ASSERT_TRUE(std::holds_alternative<Configuration>(r));
  EXPECT_EQ(std::get<Configuration>(r).rules[0].transitions[0].storage_class, "COLD");
  // No predicate at all accepts no class (and does not throw).
  EXPECT_EQ(Refusal(doc, KnownClass())->problem, Problem::kInvalidArgument);
  // A predicate that throws is a refusal, not an exception.
  EXPECT_TRUE(Refusal(doc, [](std::string_view) -> bool { throw std::runtime_error("x"); }));
}

TEST(LifecycleParseTest, ThousandRulesAtMost) {
  std::string rules;
  for (int i = 0; i < 1000; ++i) {
    rules += "<Rule><ID>r" + std::to_string(i) +
             "</ID><Filter/><Status>Enabled</Status>"
             "<Expiration><Days>1</Days></Expiration></Rule>";
  }
  EXPECT_EQ(Parse(Doc(rules)).rules.size(), 1000u);
  rules += "<Rule><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>";
  EXPECT_EQ(Refusal(Doc(rules))->problem, Problem::kMalformedXml);
}

TEST(LifecycleParseTest, HostileInputsAreRefusedQuickly) {
  std::string deep = "<LifecycleConfiguration><Rule><Filter><And>";
  for (int i = 0; i < 200000; ++i) deep += "<x>";
  EXPECT_EQ(Refusal(deep)->problem, Problem::kMalformedXml);
  for (int i = 0; i < 200000; ++i) deep += "</x>";
  deep += "</And></Filter></Rule></LifecycleConfiguration>";
  EXPECT_EQ(Refusal(deep)->problem, Problem::kMalformedXml);
  // Many transitions in one rule: checked by sorting, not pair by pair.
  std::string many = "<Rule><ID>m</ID><Filter/><Status>Enabled</Status>";
  for (int i = 0; i < 20000; ++i) {
    many += "<Transition><Days>" + std::to_string(i) + "</Days><StorageClass>C" +
            std::to_string(i) + "</StorageClass></Transition>";
  }
  auto r = ParseLifecycle(Doc(many + "</Rule>"), [](std::string_view) { return true; });
  ASSERT_TRUE(std::holds_alternative<Configuration>(r));
  EXPECT_EQ(std::get<Configuration>(r).rules[0].transitions.size(), 20000u);
  EXPECT_TRUE(Refusal(std::string_view("<LifecycleConfiguration>\0</LifecycleConfiguration>", 50)));
  EXPECT_TRUE(Refusal(std::string(1 << 16, '<')));
}

struct RefusalCase {
  const char* name;
  std::string xml;
  Problem problem;
  const char* message = nullptr;  // when the exact wording matters
};


TEST(LifecycleParseTest, Refusals) {
  const Problem M = Problem::kMalformedXml, A = Problem::kInvalidArgument,
                Q = Problem::kInvalidRequest;
  const std::vector<RefusalCase> cases = {
      // Not XML, or not this document.
      {"empty body", "", M},
      {"not xml", "lifecycle please", M},
      {"unclosed", "<LifecycleConfiguration><Rule>", M},
      {"wrong root", "<Lifecycle><Rule/></Lifecycle>", M},
      {"wrong namespace",
       "<LifecycleConfiguration xmlns=\"urn:x\"><Rule><ID>r</ID><Filter/><Status>Enabled</Status>" +
           kOk + "</Rule></LifecycleConfiguration>",
       M},
      {"two roots", Act(kOk) + Act(kOk), M},
      {"no rules", Doc(""), M},
      {"text in root", Doc("hello"), M},
      {"unknown element in root", Doc("<Rules/>"), M},
      {"nul reference", Act("<Expiration><Days>1&#0;</Days></Expiration>"), M},
      {"nul reference in hex", WithFilter("<Prefix>a&#x000;</Prefix>", kOk), M},
      // Rule structure.
      {"unknown rule child", Act(kOk + "<Priority>1</Priority>"), M},
      {"text in rule", R("<ID>r</ID>x<Filter/><Status>Enabled</Status>" + kOk), M},
      {"element in a leaf", R("<ID>r<b/></ID><Filter/><Status>Enabled</Status>" + kOk), M},
      {"repeated ID", R("<ID>r</ID><ID>s</ID><Filter/><Status>Enabled</Status>" + kOk), M},
      {"repeated Status",
       R("<ID>r</ID><Filter/><Status>Enabled</Status><Status>Enabled</Status>" + kOk), M},
      {"repeated Expiration", Act(kOk + kOk), M},
      {"repeated Filter", R("<ID>r</ID><Filter/><Filter/><Status>Enabled</Status>" + kOk), M},
      {"no Status", R("<ID>r</ID><Filter/>" + kOk), M},
      {"bad Status", R("<ID>r</ID><Filter/><Status>enabled</Status>" + kOk), M},
      {"Prefix and Filter", R("<ID>r</ID><Prefix/><Filter/><Status>Enabled</Status>" + kOk), M},
      {"neither Prefix nor Filter", R("<ID>r</ID><Status>Enabled</Status>" + kOk), M},
      // Filters.
      {"two predicates", WithFilter("<Prefix>a</Prefix>" + kTag, kOk), M},
      {"two tags without And", WithFilter(kTag + "<Tag><Key>j</Key><Value>v</Value></Tag>", kOk),
       M},
      {"And beside a predicate", WithFilter("<And/><Prefix/>", kOk), M},
      {"unknown filter element", WithFilter("<Suffix>a</Suffix>", kOk), M},
      {"unknown And element", WithFilter("<And><Suffix>a</Suffix></And>", kOk), M},
      {"And in And", WithFilter("<And><And/></And>", kOk), M},
      {"two prefixes in And", WithFilter("<And><Prefix>a</Prefix><Prefix>b</Prefix></And>", kOk),
       M},
      {"two sizes in And",
       WithFilter("<And><ObjectSizeLessThan>5</ObjectSizeLessThan>"
                  "<ObjectSizeLessThan>6</ObjectSizeLessThan></And>",
                  kOk),
       M},
      {"tag without key", WithFilter("<Tag><Value>v</Value></Tag>", kOk), M},
      {"tag with two keys", WithFilter("<Tag><Key>a</Key><Key>b</Key></Tag>", kOk), M},
      {"unknown tag element", WithFilter("<Tag><Key>a</Key><Name>b</Name></Tag>", kOk), M},
      {"size not a number", WithFilter("<ObjectSizeGreaterThan>big</ObjectSizeGreaterThan>", kOk),
       M},
      {"size beyond a long",
       WithFilter("<ObjectSizeLessThan>9223372036854775808</ObjectSizeLessThan>", kOk), M},
      {"duplicate tag keys",
       WithFilter("<And>" + kTag + "<Tag><Key>k</Key><Value>w</Value></Tag></And>", kOk), A,
       "Duplicate Tag Keys are not allowed."},
      {"sizes crossed",
       WithFilter("<And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan>"
                  "<ObjectSizeLessThan>10</ObjectSizeLessThan></And>",
                  kOk),
       A},
      {"negative size", WithFilter("<ObjectSizeGreaterThan>-1</ObjectSizeGreaterThan>", kOk), A},
      // ID.
      {"ID too long in characters",
       R("<ID>" + std::string(255, 'x') + "\xc3\xa9</ID><Filter/><Status>Enabled</Status>" + kOk),
       A},
      {"ID too long",
       R("<ID>" + std::string(256, 'x') + "</ID><Filter/><Status>Enabled</Status>" + kOk), A,
       "ID length should not exceed allowed limit of 255"},
      {"duplicate ID",
       Doc("<Rule><ID>r</ID><Filter/><Status>Enabled</Status>" + kOk +
           "</Rule>"
           "<Rule><ID>r</ID><Filter/><Status>Disabled</Status>" +
           kOk + "</Rule>"),
       A, "Rule ID must be unique. Found same ID for more than one rule"},
      // Actions.
      {"no action", R("<ID>r</ID><Filter/><Status>Enabled</Status>"), Q,
       "At least one action needs to be specified in a rule"},
      {"only a false marker flag",
       Act("<Expiration><ExpiredObjectDeleteMarker>false</ExpiredObjectDeleteMarker>"
           "</Expiration>"),
       Q},
      {"empty Expiration", Act("<Expiration/>"), M},
      {"Expiration Days with Date",
       Act("<Expiration>" + Days(1) + Date("2027-01-01T00:00:00Z") + "</Expiration>"), M},
      {"marker flag with Days",
       Act("<Expiration>" + Days(1) +
           "<ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>"),
       M},
      {"marker flag with Date",
       Act("<Expiration>" + Date("2027-01-01T00:00:00Z") +
           "<ExpiredObjectDeleteMarker>false</ExpiredObjectDeleteMarker></Expiration>"),
       M},
      {"marker flag not a boolean",
       Act("<Expiration><ExpiredObjectDeleteMarker>yes</ExpiredObjectDeleteMarker>"
           "</Expiration>"),
       M},
      {"unknown Expiration element",
       Act("<Expiration>" + Days(1) + "<Hours>1</Hours></Expiration>"), M},
      {"Days zero", Act(Exp("0")), A, "'Days' for Expiration action must be a positive integer"},
      {"Days negative", Act(Exp("-3")), A,
       "'Days' for Expiration action must be a positive integer"},
      {"Days not a number", Act(Exp("ten")), M},
      {"Days a fraction", Act(Exp("1.5")), M},
      {"Days empty", Act(Exp("")), M},
      {"Days beyond an int", Act(Exp("2147483648")), M},
      {"Days with two signs", Act(Exp("+-1")), M},
      {"Date not at midnight", Act("<Expiration>" + Date("2027-01-01T00:00:01Z") + "</Expiration>"),
       A, "'Date' must be at midnight GMT"},
      {"Date with a fraction",
       Act("<Expiration>" + Date("2027-01-01T00:00:00.5Z") + "</Expiration>"), A},
      {"Date at midnight elsewhere",
       Act("<Expiration>" + Date("2027-01-01T00:00:00+02:00") + "</Expiration>"), A},
      {"Date without zone", Act("<Expiration>" + Date("2027-01-01T00:00:00") + "</Expiration>"), A},
      {"Date alone", Act("<Expiration>" + Date("2027-01-01") + "</Expiration>"), A},
      {"Date that does not exist",
       Act("<Expiration>" + Date("2027-02-29T00:00:00Z") + "</Expiration>"), A},
      {"Date garbage", Act("<Expiration>" + Date("tomorrow") + "</Expiration>"), A},
      {"Date in year 10000 UTC",
       Act("<Expiration>" + Date("9999-12-31T23:00:00-01:00") + "</Expiration>"), A},
      {"Date with a bad month",
       Act("<Expiration>" + Date("2027-13-01T00:00:00Z") + "</Expiration>"), A},
      {"Date with a bad hour", Act("<Expiration>" + Date("2027-01-01T24:00:00Z") + "</Expiration>"),
       A},
      {"Date with a bad offset",
       Act("<Expiration>" + Date("2027-01-01T00:00:00+24:00") + "</Expiration>"), A},
      {"Date with an empty fraction",
       Act("<Expiration>" + Date("2027-01-01T00:00:00.Z") + "</Expiration>"), A},
      {"Transition Days with Date", Act(Tr(Days(1) + Date("2027-01-01T00:00:00Z"), "GLACIER")), M},
      {"Transition without time", Act(Tr("", "GLACIER")), M},
      {"Transition without class", Act("<Transition>" + Days(1) + "</Transition>"), M},
      {"Transition unknown class", Act(Tr(Days(1), "TAPE")), A, "'StorageClass' is invalid"},
      {"Transition to STANDARD", Act(Tr(Days(1), "STANDARD")), A, "'StorageClass' is invalid"},
      {"Transition Days negative", Act(Tr(Days(-1), "GLACIER")), A},
      {"Transition unknown element",
       Act("<Transition>" + Days(1) +
           "<StorageClass>GLACIER</StorageClass>"
           "<Tier>x</Tier></Transition>"),
       M},
      {"STANDARD_IA before 30 days", Act(Tr(Days(29), "STANDARD_IA")), A,
       "'Days' in Transition action must be greater than or equal to 30 for storageClass "
       "'STANDARD_IA'"},
      {"ONEZONE_IA before 30 days", Act(Tr(Days(0), "ONEZONE_IA")), A,
       "'Days' in Transition action must be greater than or equal to 30 for storageClass "
       "'ONEZONE_IA'"},
      {"same class twice", Act(Tr(Days(10), "GLACIER") + Tr(Days(20), "GLACIER")), A},
      {"colder class earlier", Act(Tr(Days(60), "STANDARD_IA") + Tr(Days(30), "GLACIER")), A},
      {"colder class same day", Act(Tr(Days(30), "GLACIER") + Tr(Days(30), "DEEP_ARCHIVE")), A},
      {"colder class earlier by date",
       Act(Tr(Date("2027-02-01T00:00:00Z"), "GLACIER") +
           Tr(Date("2027-01-01T00:00:00Z"), "DEEP_ARCHIVE")),
       A},
      {"Expiration not after Transition", Act(Exp("30") + Tr(Days(30), "GLACIER")), A},
      {"Expiration date not after Transition",
       Act("<Expiration>" + Date("2027-01-01T00:00:00Z") + "</Expiration>" +
           Tr(Date("2027-01-01T00:00:00Z"), "GLACIER")),
       A},
      {"Days and Date mixed", Act(Exp("100") + Tr(Date("2027-01-01T00:00:00Z"), "GLACIER")), A},
      {"Days and Date mixed in transitions",
       Act(Tr(Days(1), "GLACIER_IR") + Tr(Date("2027-01-01T00:00:00Z"), "GLACIER")), A},
      {"marker flag with a tag filter",
       WithFilter(kTag,
                  "<Expiration><ExpiredObjectDeleteMarker>true"
                  "</ExpiredObjectDeleteMarker></Expiration>"),
       A},
      {"marker flag with an And tag",
       WithFilter("<And><Prefix>p</Prefix>" + kTag + "</And>",
                  "<Expiration><ExpiredObjectDeleteMarker>true"
                  "</ExpiredObjectDeleteMarker></Expiration>"),
       A},
      {"NoncurrentDays missing", Act(Nve("<NewerNoncurrentVersions>1</NewerNoncurrentVersions>")),
       M},
      {"NoncurrentDays zero", Act(Nve("<NoncurrentDays>0</NoncurrentDays>")), A},
      {"NoncurrentDays not a number", Act(Nve("<NoncurrentDays>x</NoncurrentDays>")), M},
      {"NewerNoncurrentVersions zero",
       Act(Nve("<NoncurrentDays>1</NoncurrentDays>"
               "<NewerNoncurrentVersions>0</NewerNoncurrentVersions>")),
       A},
      {"NewerNoncurrentVersions over 100",
       Act(Nve("<NoncurrentDays>1</NoncurrentDays>"
               "<NewerNoncurrentVersions>101</NewerNoncurrentVersions>")),
       A},
      {"repeated NoncurrentVersionExpiration",
       Act(Nve("<NoncurrentDays>1</NoncurrentDays>") + Nve("<NoncurrentDays>2</NoncurrentDays>")),
       M},
      {"noncurrent transition without class",
       Act("<NoncurrentVersionTransition><NoncurrentDays>1</NoncurrentDays>"
           "</NoncurrentVersionTransition>"),
       M},
      {"noncurrent transition without days",
       Act("<NoncurrentVersionTransition><StorageClass>GLACIER</StorageClass>"
           "</NoncurrentVersionTransition>"),
       M},
      {"noncurrent transition unknown class", Act(Nct(1, "TAPE")), A, "'StorageClass' is invalid"},
      {"noncurrent STANDARD_IA before 30 days", Act(Nct(29, "STANDARD_IA")), A},
      {"noncurrent same class twice", Act(Nct(1, "GLACIER") + Nct(2, "GLACIER")), A},
      {"noncurrent colder class earlier", Act(Nct(40, "STANDARD_IA") + Nct(35, "GLACIER")), A},
      {"noncurrent expiration not after transition",
       Act(Nct(10, "GLACIER") + Nve("<NoncurrentDays>10</NoncurrentDays>")), A},
      {"noncurrent newer versions zero",
       Act("<NoncurrentVersionTransition><NoncurrentDays>1</NoncurrentDays>"
           "<StorageClass>GLACIER</StorageClass><NewerNoncurrentVersions>0"
           "</NewerNoncurrentVersions></NoncurrentVersionTransition>"),
       A},
      {"abort days zero", Act(Abort("0")), A},
      {"abort days missing", Act("<AbortIncompleteMultipartUpload/>"), M},
      {"abort with a tag filter", WithFilter(kTag, Abort("1")), Q,
       "AbortIncompleteMultipartUpload cannot be specified with Tags."},
      {"abort with an And tag", WithFilter("<And><Prefix>p</Prefix>" + kTag + "</And>", Abort("1")),
       Q},
      {"abort with a size filter",
       WithFilter("<ObjectSizeLessThan>10</ObjectSizeLessThan>", Abort("1")), Q},
      {"abort with an And size",
       WithFilter("<And><Prefix>p</Prefix><ObjectSizeGreaterThan>1"
                  "</ObjectSizeGreaterThan></And>",
                  Abort("1")),
       Q},
  };
  for (const RefusalCase& c : cases) {
    std::optional<ParseError> e = Refusal(c.xml);
    if (!e) {
      ADD_FAILURE() << c.name << ": accepted " << c.xml;
      continue;
    }
    EXPECT_EQ(e->problem, c.problem) << c.name << ": " << e->message;
    if (c.message) {
      EXPECT_EQ(e->message, c.message) << c.name;
    }
    if (c.problem == Problem::kMalformedXml) {
      EXPECT_EQ(e->message,
                "The XML you provided was not well-formed or did not validate against our "
                "published schema")
          << c.name;
    }
  }
}

TEST(LifecycleParseTest, AcceptedNearMisses) {
  // The limits themselves, and orders AWS allows.
  for (const std::string& doc : {
           Act(Tr(Days(30), "STANDARD_IA") + Tr(Days(60), "GLACIER") + Exp("61")),
           Act(Tr(Days(90), "DEEP_ARCHIVE") + Tr(Days(0), "INTELLIGENT_TIERING") +
               Tr(Days(30), "ONEZONE_IA")),
           Act(Nct(30, "STANDARD_IA") + Nct(31, "GLACIER_IR") + Nct(0, "INTELLIGENT_TIERING") +
               Nve("<NoncurrentDays>32</NoncurrentDays>")),
           Act(Nct(30, "ONEZONE_IA") + Nct(31, "GLACIER") + Nct(1, "INTELLIGENT_TIERING")),
           Act(Nve("<NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>100</"
                   "NewerNoncurrentVersions>")),
           Act("<Expiration>" + Date("2027-03-01T00:00:00Z") + "</Expiration>" +
               Tr(Date("2027-01-01T00:00:00Z"), "GLACIER_IR") +
               Tr(Date("2027-02-01T00:00:00Z"), "GLACIER")),
           Act(Exp("2147483647")),
           Act("<Expiration>" + Date("2028-02-29T00:00:00Z") + "</Expiration>"),
           Act("<Expiration>" + Date("0000-01-01T00:00:00Z") + "</Expiration>"),
           Act("<Expiration>" + Date("9999-12-31T00:00:00.000Z") + "</Expiration>"),
           Act(Exp("0001")),
           R("<ID>" + std::string(255, 'x') + "</ID><Filter/><Status>Enabled</Status>" + kOk),
           R("<ID>" + std::string(254, 'x') + "\xe2\x82\xac</ID><Filter/><Status>Enabled</Status>" +
             kOk),
           WithFilter("<ObjectSizeGreaterThan>0</ObjectSizeGreaterThan>", kOk),
           WithFilter("<And><ObjectSizeGreaterThan>9</ObjectSizeGreaterThan>"
                      "<ObjectSizeLessThan>10</ObjectSizeLessThan></And>",
                      kOk),
           WithFilter("<And/>", kOk),
           WithFilter("<Prefix>p</Prefix>", Abort("1") +
                                                "<Expiration><ExpiredObjectDeleteMarker>true"
                                                "</ExpiredObjectDeleteMarker></Expiration>"),
           WithFilter("<And><Prefix>p</Prefix></And>", Abort("1")),
           WithFilter(kTag, Nve("<NoncurrentDays>1</NoncurrentDays>")),
           R("<Prefix></Prefix><Status>Disabled</Status>" + kOk),
       }) {
    EXPECT_FALSE(Refusal(doc)) << Refusal(doc)->message << ": " << doc;
  }
}

// ---- Rendering --------------------------------------------------------------

TEST(LifecycleRenderTest, Document) {
  Configuration c;
  Rule r;
  r.id = "a<&>";
  r.filter_form = FilterForm::kAnd;
  r.filter = {"p/", {{"k", "v\r"}}, 5, 10};
  r.expiration = InDays(40);
  r.transitions = {{InDays(31), "STANDARD_IA"}};
  r.noncurrent_transitions = {{30, 2, "GLACIER"}};
  r.noncurrent_days = 31;
  r.newer_noncurrent_versions = 4;
  c.rules.push_back(r);
  Rule m;
  m.id = "m";
  m.enabled = false;
  m.filter_form = FilterForm::kLegacyPrefix;
  m.expiration = OnDate(1798761600);
  m.abort_upload_days = 3;
  c.rules.push_back(m);
  EXPECT_EQ(
      RenderLifecycle(c),
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Rule><Expiration><Days>40</Days></Expiration><ID>a&lt;&amp;&gt;</ID>"
      "<Filter><And><Prefix>p/</Prefix><Tag><Key>k</Key><Value>v&#13;</Value></Tag>"
      "<ObjectSizeGreaterThan>5</ObjectSizeGreaterThan><ObjectSizeLessThan>10</"
      "ObjectSizeLessThan></And>"
      "</Filter><Status>Enabled</Status>"
      "<Transition><Days>31</Days><StorageClass>STANDARD_IA</StorageClass></Transition>"
      "<NoncurrentVersionTransition><NoncurrentDays>30</NoncurrentDays><StorageClass>GLACIER</"
      "StorageClass>"
      "<NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionTransition>"
      "<NoncurrentVersionExpiration><NoncurrentDays>31</NoncurrentDays>"
      "<NewerNoncurrentVersions>4</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>"
      "<Rule><Expiration><Date>2027-01-01T00:00:00.000Z</Date></Expiration><ID>m</ID><Prefix></"
      "Prefix>"
      "<Status>Disabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>3</"
      "DaysAfterInitiation>"
      "</AbortIncompleteMultipartUpload></Rule></LifecycleConfiguration>");
}


TEST(LifecycleRenderTest, RoundTrips) {
  std::vector<Configuration> configs;
  // Every filter form, with what it can hold.
  configs.push_back(
      {{Simple("legacy", FilterForm::kLegacyPrefix, Pre("logs/")),
        Simple("legacy-empty", FilterForm::kLegacyPrefix, {}),
        Simple("prefix", FilterForm::kFilter, Pre("a b/")),
        Simple("prefix-empty", FilterForm::kFilter, {}),
        Simple("tag", FilterForm::kFilter, Filter{"", {{"k", "v"}}, {}, {}}),
        Simple("tag-empty-value", FilterForm::kFilter, Filter{"", {{"k", ""}}, {}, {}}),
        Simple("gt", FilterForm::kFilter, Filter{"", {}, 0, {}}),
        Simple("lt", FilterForm::kFilter, Filter{"", {}, {}, 1ull << 62}),
        Simple("and", FilterForm::kAnd, {"p", {{"a", "1"}, {"b", "2"}}, 1, 2}),
        Simple("and-prefix", FilterForm::kAnd, Pre("p")), Simple("and-empty", FilterForm::kAnd, {}),
        Simple("and-tags", FilterForm::kAnd, Filter{"", {{"a", "1"}, {"b", "2"}}, {}, {}}),
        Simple("empty", FilterForm::kEmptyFilter, {})}});
  // Every action.
  {
    Rule r = Simple("all", FilterForm::kFilter, Pre("x"));
    r.expiration = InDays(400);
    r.transitions = {{InDays(0), "INTELLIGENT_TIERING"}, {InDays(30), "STANDARD_IA"},
                     {InDays(60), "ONEZONE_IA"},         {InDays(90), "GLACIER_IR"},
                     {InDays(180), "GLACIER"},           {InDays(365), "DEEP_ARCHIVE"}};
    r.noncurrent_days = 100;
    r.newer_noncurrent_versions = 100;
    r.noncurrent_transitions = {{1, std::nullopt, "GLACIER_IR"}, {30, 1, "GLACIER"}};
    r.abort_upload_days = 1;
    Rule d = Simple("dates", FilterForm::kEmptyFilter, {});
    d.enabled = false;
    d.expiration = OnDate(4102444800);                 // 2100-01-01
    d.transitions = {{OnDate(946684800), "GLACIER"}};  // 2000-01-01
    Rule m = Simple("marker", FilterForm::kFilter, Filter{"", {}, {}, 1});
    m.expiration.reset();
    m.expired_object_delete_marker = true;
    Rule nc = Simple("noncurrent", FilterForm::kFilter, Filter{"", {{"t", "u"}}, {}, {}});
    nc.expiration.reset();
    nc.noncurrent_days = 1;
    Rule old = Simple("old", FilterForm::kLegacyPrefix, {});
    old.expiration = OnDate(-86400 * 365);  // 1969-01-01
    Rule first = Simple("first", FilterForm::kLegacyPrefix, {});
    first.expiration = OnDate(-62167219200);  // 0000-01-01
    Rule last = Simple("last", FilterForm::kLegacyPrefix, {});
    last.expiration = OnDate(253402214400);  // 9999-12-31
    configs.push_back({{r, d, m, nc, old, first, last}});
  }
  // Text that needs escaping or is easily lost.
  configs.push_back(
      {{Simple(" <&\"'>\r\n\t ", FilterForm::kFilter, Pre(" ")),
        Simple("\xe2\x82\xac", FilterForm::kAnd, {"\r", {{"<", ">"}, {"&", "\""}}, {}, {}}),
        Simple("]]>", FilterForm::kLegacyPrefix, Pre("\n"))}});
  // As many rules as allowed.
  {
    Configuration big;
    for (int i = 0; i < 1000; ++i) {
      big.rules.push_back(
          Simple(std::to_string(i), FilterForm::kFilter, Pre(std::to_string(i) + "/")));
    }
    configs.push_back(std::move(big));
  }
  for (const Configuration& c : configs) {
    std::string doc = RenderLifecycle(c);
    EXPECT_EQ(Parse(doc), c) << doc;
  }
}

TEST(LifecycleRenderTest, ParsedDocumentsRoundTrip) {
  for (const std::string& doc : {
           Act(Tr(Days(30), "STANDARD_IA") + Tr(Days(60), "GLACIER") + Exp("61")),
           WithFilter("<And><Prefix>p</Prefix>" + kTag + "</And>",
                      Nve("<NoncurrentDays>1</NoncurrentDays>")),
           R("<Filter/><Status>Enabled</Status>" + Abort("3")),
           Doc("<Rule><Filter/><Status>Enabled</Status>" + kOk +
               "</Rule><Rule><ID>rule-1</ID><Filter/>"
               "<Status>Enabled</Status>" +
               kOk + "</Rule>"),
       }) {
    Configuration c = Parse(doc);
    EXPECT_EQ(Parse(RenderLifecycle(c)), c) << doc;
  }
}

// A hand-built rule whose form cannot hold its filter is rendered so that it
// still says what Matches does.
TEST(LifecycleRenderTest, FormThatCannotHoldTheFilter) {
  Rule r = Simple("r", FilterForm::kLegacyPrefix, {"p", {{"k", "v"}}, {}, {}});
  Configuration back = Parse(RenderLifecycle({{r}}));
  ASSERT_EQ(back.rules.size(), 1u);
  EXPECT_EQ(back.rules[0].filter, r.filter);
  EXPECT_EQ(back.rules[0].filter_form, FilterForm::kAnd);
  r.filter_form = FilterForm::kEmptyFilter;
  r.filter = Filter{"", {}, {}, 9};
  back = Parse(RenderLifecycle({{r}}));
  EXPECT_EQ(back.rules[0].filter, r.filter);
  EXPECT_EQ(back.rules[0].filter_form, FilterForm::kFilter);
}

}  // namespace
}  // namespace strata::tier

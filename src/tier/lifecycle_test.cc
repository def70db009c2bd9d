#include "tier/lifecycle.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::tier {
namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kDay = 86400 * kSecond;   // production's lifecycle day
constexpr int64_t kEpoch2024 = 1704067200;  // 2024-01-01T00:00:00Z, a midnight

// `day` days and `hour` hours after 2024-01-01T00:00:00Z, in nanoseconds.
constexpr int64_t At(int64_t day, int64_t hour = 0) {
  return (kEpoch2024 + day * 86400 + hour * 3600) * kSecond;
}

bool AwsClass(std::string_view c) {
  return c == "STANDARD_IA" || c == "ONEZONE_IA" || c == "INTELLIGENT_TIERING" ||
         c == "GLACIER_IR" || c == "GLACIER" || c == "DEEP_ARCHIVE";
}

When InDays(uint32_t days) {
  When w;
  w.days = days;
  return w;
}
When OnDate(int64_t date_s) {
  When w;
  w.date_s = date_s;
  return w;
}
Filter Pre(std::string prefix) { return Filter{std::move(prefix), {}, {}, {}}; }

std::string Doc(std::string_view rules) {
  return "<LifecycleConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" +
         std::string(rules) + "</LifecycleConfiguration>";
}

Configuration Parse(std::string_view xml) {
  auto r = ParseLifecycle(xml, AwsClass);
  if (const ParseError* e = std::get_if<ParseError>(&r)) {
    ADD_FAILURE() << "refused (" << static_cast<int>(e->problem) << ": " << e->message
                  << "): " << xml;
    return {};
  }
  return std::get<Configuration>(r);
}

std::optional<ParseError> Refusal(std::string_view xml, const KnownClass& known = AwsClass) {
  auto r = ParseLifecycle(xml, known);
  if (const ParseError* e = std::get_if<ParseError>(&r)) return *e;
  return std::nullopt;
}

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

std::string R(std::string_view body) { return Doc("<Rule>" + std::string(body) + "</Rule>"); }
// A rule with the id "r", an empty filter, Enabled and `actions`.
std::string Act(std::string_view actions) {
  return R("<ID>r</ID><Filter/><Status>Enabled</Status>" + std::string(actions));
}
std::string Exp(std::string_view days) {
  return "<Expiration><Days>" + std::string(days) + "</Days></Expiration>";
}
std::string Tr(std::string_view when, std::string_view c) {
  return "<Transition>" + std::string(when) + "<StorageClass>" + std::string(c) +
         "</StorageClass></Transition>";
}
std::string Days(int d) { return "<Days>" + std::to_string(d) + "</Days>"; }
std::string Date(std::string_view d) { return "<Date>" + std::string(d) + "</Date>"; }
std::string Nct(int d, std::string_view c) {
  return "<NoncurrentVersionTransition><NoncurrentDays>" + std::to_string(d) +
         "</NoncurrentDays><StorageClass>" + std::string(c) +
         "</StorageClass></NoncurrentVersionTransition>";
}
std::string Nve(std::string_view inner) {
  return "<NoncurrentVersionExpiration>" + std::string(inner) + "</NoncurrentVersionExpiration>";
}
std::string Abort(std::string_view d) {
  return "<AbortIncompleteMultipartUpload><DaysAfterInitiation>" + std::string(d) +
         "</DaysAfterInitiation></AbortIncompleteMultipartUpload>";
}
std::string WithFilter(std::string_view filter, std::string_view actions) {
  return R("<ID>r</ID><Filter>" + std::string(filter) + "</Filter><Status>Enabled</Status>" +
           std::string(actions));
}

const std::string kOk = Exp("1");
const std::string kTag = "<Tag><Key>k</Key><Value>v</Value></Tag>";

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

Rule Simple(std::string id, FilterForm form, Filter f) {
  Rule r;
  r.id = std::move(id);
  r.filter_form = form;
  r.filter = std::move(f);
  r.expiration = InDays(1);
  return r;
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

// ---- Evaluation -------------------------------------------------------------

TEST(LifecycleTest, ClassRank) {
  EXPECT_EQ(ClassRank(""), 0);
  EXPECT_EQ(ClassRank("STANDARD"), 0);
  EXPECT_EQ(ClassRank("EXPRESS_ONEZONE"), 0);
  EXPECT_EQ(ClassRank("REDUCED_REDUNDANCY"), 0);
  EXPECT_EQ(ClassRank("SOMETHING_ELSE"), 0);
  EXPECT_LT(ClassRank("STANDARD"), ClassRank("INTELLIGENT_TIERING"));
  EXPECT_LT(ClassRank("INTELLIGENT_TIERING"), ClassRank("STANDARD_IA"));
  EXPECT_LT(ClassRank("STANDARD_IA"), ClassRank("ONEZONE_IA"));
  EXPECT_LT(ClassRank("ONEZONE_IA"), ClassRank("GLACIER_IR"));
  EXPECT_LT(ClassRank("GLACIER_IR"), ClassRank("GLACIER"));
  EXPECT_LT(ClassRank("GLACIER"), ClassRank("DEEP_ARCHIVE"));
  EXPECT_EQ(ClassRank("glacier"), 0);  // names are exact
}

TEST(LifecycleTest, DueAfterDays) {
  const int64_t two_s = 2 * kSecond;
  EXPECT_EQ(DueAfterDays(3 * kSecond, 1, two_s), 6 * kSecond);  // 5 s, up to the next even second
  EXPECT_EQ(DueAfterDays(4 * kSecond, 1, two_s), 6 * kSecond);  // already on a boundary
  EXPECT_EQ(DueAfterDays(4 * kSecond + 1, 1, two_s), 8 * kSecond);
  EXPECT_EQ(DueAfterDays(1, 0, two_s), 2 * kSecond);  // Days 0: the next boundary
  EXPECT_EQ(DueAfterDays(0, 0, two_s), 0);
  EXPECT_EQ(DueAfterDays(-3 * kSecond, 1, two_s), 0);  // before the epoch: -1 s rounds up to 0
  EXPECT_EQ(DueAfterDays(-5 * kSecond, 1, two_s), -2 * kSecond);
  // AWS: created 2024-01-01 10:00 UTC, 1 day -> due 2024-01-03 00:00 UTC.
  EXPECT_EQ(DueAfterDays(At(0, 10), 1, kDay), At(2));
  EXPECT_EQ(DueAfterDays(At(0), 1, kDay), At(1));
  EXPECT_EQ(DueAfterDays(At(0, 23) + 59 * 60 * kSecond, 30, kDay), At(31));
  EXPECT_EQ(DueAfterDays(At(0, 1), 365, kDay), At(366));
  // Saturates instead of wrapping; a day of 0 ns counts as 1 ns.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(DueAfterDays(At(0), std::numeric_limits<uint32_t>::max(), kDay), kMax);
  EXPECT_EQ(DueAfterDays(kMax - 5, 1, kDay), kMax);
  EXPECT_EQ(DueAfterDays(5, 3, 0), 8);
  EXPECT_EQ(DueAfterDays(5, 3, -7), 8);
}

TEST(LifecycleTest, Matches) {
  Rule r;
  r.filter = {"logs/", {{"a", "1"}, {"b", ""}}, 10, 20};
  auto facts = [](std::string key, uint64_t size, Tags tags) {
    VersionFacts v;
    v.key = std::move(key);
    v.size_bytes = size;
    v.tags = std::move(tags);
    return v;
  };
  const Tags tags = {{"c", "3"}, {"b", ""}, {"a", "1"}};
  EXPECT_TRUE(Matches(r, facts("logs/x", 15, tags)));
  EXPECT_FALSE(Matches(r, facts("log/x", 15, tags)));
  EXPECT_FALSE(Matches(r, facts("logs/x", 10, tags)));  // exclusive
  EXPECT_FALSE(Matches(r, facts("logs/x", 20, tags)));  // exclusive
  EXPECT_TRUE(Matches(r, facts("logs/x", 11, tags)));
  EXPECT_TRUE(Matches(r, facts("logs/x", 19, tags)));
  EXPECT_FALSE(Matches(r, facts("logs/x", 15, {{"a", "1"}})));
  EXPECT_FALSE(Matches(r, facts("logs/x", 15, {{"a", "2"}, {"b", ""}})));
  EXPECT_FALSE(Matches(r, facts("logs/x", 15, {{"a", "1"}, {"b", "x"}})));
  EXPECT_TRUE(Matches(Rule{}, VersionFacts{}));  // no conditions: everything
}

// The rules of the table's cases, one configuration.
const char kRules[] = R"(<LifecycleConfiguration>
  <Rule><ID>exp-days</ID><Filter><Prefix>days/</Prefix></Filter><Status>Enabled</Status>
    <Expiration><Days>10</Days></Expiration></Rule>
  <Rule><ID>exp-date</ID><Prefix>date/</Prefix><Status>Enabled</Status>
    <Expiration><Date>2024-03-01T00:00:00Z</Date></Expiration></Rule>
  <Rule><ID>off</ID><Filter><Prefix>off/</Prefix></Filter><Status>Disabled</Status>
    <Expiration><Days>1</Days></Expiration>
    <Transition><Days>0</Days><StorageClass>GLACIER</StorageClass></Transition>
    <NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration>
  </Rule>
  <Rule><ID>markers</ID><Filter><Prefix>m/</Prefix></Filter><Status>Enabled</Status>
    <Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></Rule>
  <Rule><ID>m-days</ID><Filter><Prefix>md/</Prefix></Filter><Status>Enabled</Status>
    <Expiration><Days>1</Days></Expiration></Rule>
  <Rule><ID>tiers</ID><Filter><Prefix>tier/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Days>30</Days><StorageClass>STANDARD_IA</StorageClass></Transition>
    <Transition><Days>60</Days><StorageClass>GLACIER</StorageClass></Transition>
    <Transition><Days>180</Days><StorageClass>DEEP_ARCHIVE</StorageClass></Transition>
    <Expiration><Days>365</Days></Expiration></Rule>
  <Rule><ID>tier-date</ID><Filter><Prefix>tdate/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Date>2024-02-01T00:00:00.000Z</Date><StorageClass>GLACIER_IR</StorageClass>
    </Transition></Rule>
  <Rule><ID>both-move</ID><Filter><Prefix>both/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Days>5</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>
  <Rule><ID>both-expire</ID><Filter><Prefix>both/</Prefix></Filter><Status>Enabled</Status>
    <Expiration><Days>3</Days></Expiration></Rule>
  <Rule><ID>warm</ID><Filter><Prefix>cold/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Days>30</Days><StorageClass>STANDARD_IA</StorageClass></Transition></Rule>
  <Rule><ID>colder</ID><Filter><Prefix>cold/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Days>40</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>
  <Rule><ID>also-glacier</ID><Filter><Prefix>cold/</Prefix></Filter><Status>Enabled</Status>
    <Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition></Rule>
  <Rule><ID>nc</ID><Filter><Prefix>nc/</Prefix></Filter><Status>Enabled</Status>
    <NoncurrentVersionTransition><NoncurrentDays>5</NoncurrentDays>
      <StorageClass>GLACIER_IR</StorageClass></NoncurrentVersionTransition>
    <NoncurrentVersionTransition><NoncurrentDays>8</NoncurrentDays>
      <StorageClass>GLACIER</StorageClass>
      <NewerNoncurrentVersions>1</NewerNoncurrentVersions></NoncurrentVersionTransition>
    <NoncurrentVersionExpiration><NoncurrentDays>10</NoncurrentDays>
      <NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration></Rule>
  <Rule><ID>tagged</ID><Filter><Tag><Key>tier</Key><Value>cold</Value></Tag></Filter>
    <Status>Enabled</Status>
    <Transition><Days>1</Days><StorageClass>DEEP_ARCHIVE</StorageClass></Transition></Rule>
  <Rule><ID>and</ID><Filter><And><Prefix>and/</Prefix><Tag><Key>a</Key><Value>1</Value></Tag>
    <Tag><Key>b</Key><Value>2</Value></Tag><ObjectSizeGreaterThan>100</ObjectSizeGreaterThan>
    <ObjectSizeLessThan>1000</ObjectSizeLessThan></And></Filter><Status>Enabled</Status>
    <Expiration><Days>1</Days></Expiration></Rule>
  <Rule><ID>big</ID><Filter><ObjectSizeGreaterThan>1000000</ObjectSizeGreaterThan></Filter>
    <Status>Enabled</Status>
    <Transition><Days>0</Days><StorageClass>GLACIER_IR</StorageClass></Transition></Rule>
  <Rule><ID>small</ID><Filter><ObjectSizeLessThan>10</ObjectSizeLessThan></Filter>
    <Status>Enabled</Status>
    <Transition><Days>0</Days><StorageClass>INTELLIGENT_TIERING</StorageClass></Transition></Rule>
  <Rule><ID>all</ID><Filter/><Status>Enabled</Status>
    <NoncurrentVersionExpiration><NoncurrentDays>100</NoncurrentDays></NoncurrentVersionExpiration>
  </Rule>
</LifecycleConfiguration>)";

struct EvalCase {
  const char* name;
  VersionFacts v;
  int64_t now;
  Action want;
};

// A current version of `key` (size 500), created 2024-01-01 10:00 UTC.
VersionFacts Current(std::string key, bool versioned = false) {
  VersionFacts v;
  v.key = std::move(key);
  v.size_bytes = 500;
  v.mtime_ns = At(0, 10);
  v.is_latest = true;
  v.versioned_bucket = versioned;
  return v;
}
// A noncurrent version of `key` since 2024-01-01 10:00, `newer` noncurrent ones after it.
VersionFacts Noncurrent(std::string key, uint32_t newer = 0, bool marker = false) {
  VersionFacts v;
  v.key = std::move(key);
  v.size_bytes = marker ? 0 : 500;
  v.mtime_ns = At(-10);
  v.delete_marker = marker;
  v.noncurrent_since_ns = At(0, 10);
  v.newer_noncurrent = newer;
  v.versioned_bucket = true;
  return v;
}
VersionFacts Marker(std::string key, bool only) {
  VersionFacts v;
  v.key = std::move(key);
  v.mtime_ns = At(0, 10);
  v.is_latest = true;
  v.delete_marker = true;
  v.only_version = only;
  v.versioned_bucket = true;
  return v;
}
VersionFacts With(VersionFacts v, std::function<void(VersionFacts&)> f) {
  f(v);
  return v;
}

const Action kNothing{};
Action Del(std::string rule) { return {ActionKind::kDelete, "", std::move(rule)}; }
Action AddMarker(std::string rule) { return {ActionKind::kAddMarker, "", std::move(rule)}; }
Action Move(std::string c, std::string rule) {
  return {ActionKind::kTransition, std::move(c), std::move(rule)};
}

TEST(LifecycleTest, Evaluate) {
  Configuration c = Parse(kRules);
  const std::vector<EvalCase> cases = {
      // Expiration Days: due at the midnight after creation + 10 days.
      {"days: not yet", Current("days/a"), At(10, 23), kNothing},
      {"days: due, unversioned", Current("days/a"), At(11), Del("exp-days")},
      {"days: due, versioned", Current("days/a", true), At(11), AddMarker("exp-days")},
      {"days: other prefix", Current("day/a"), At(400), kNothing},
      // Expiration Date (legacy Prefix).
      {"date: before", Current("date/a"), At(59, 23), kNothing},
      {"date: on the day", Current("date/a"), At(60), Del("exp-date")},
      {"date: versioned", Current("date/a", true), At(61), AddMarker("exp-date")},
      {"date: created after the date",
       With(Current("date/a"), [](auto& v) { v.mtime_ns = At(100); }), At(101), Del("exp-date")},
      // A disabled rule does nothing.
      {"disabled: current", Current("off/a"), At(500), kNothing},
      {"disabled: noncurrent", Noncurrent("off/a"), At(50), kNothing},
      // Delete markers.
      {"marker: the only version", Marker("m/a", true), At(0, 11), Del("markers")},
      {"marker: other versions left", Marker("m/a", false), At(500), kNothing},
      {"marker: Expiration Days never removes one", Marker("md/a", true), At(500), kNothing},
      {"marker: no rule", Marker("x/a", true), At(500), kNothing},
      {"marker flag: a current version is untouched", Current("m/a", true), At(500), kNothing},
      {"marker noncurrent: NoncurrentVersionExpiration", Noncurrent("x/a", 0, true), At(101),
       Del("all")},
      {"marker noncurrent: not yet", Noncurrent("x/a", 0, true), At(100, 23), kNothing},
      // Transitions of current versions: the coldest due one.
      {"tiers: nothing yet", Current("tier/a"), At(30, 23), kNothing},
      {"tiers: STANDARD_IA", Current("tier/a"), At(31), Move("STANDARD_IA", "tiers")},
      {"tiers: GLACIER", Current("tier/a"), At(61), Move("GLACIER", "tiers")},
      {"tiers: DEEP_ARCHIVE", Current("tier/a"), At(181), Move("DEEP_ARCHIVE", "tiers")},
      {"tiers: expiration wins", Current("tier/a"), At(366), Del("tiers")},
      {"tiers: versioned, transition before a marker", Current("tier/a", true), At(366),
       Move("DEEP_ARCHIVE", "tiers")},
      {"tiers: already there",
       With(Current("tier/a"), [](auto& v) { v.storage_class = "DEEP_ARCHIVE"; }), At(200),
       kNothing},
      {"tiers: never warmer", With(Current("tier/a"), [](auto& v) { v.storage_class = "GLACIER"; }),
       At(100), kNothing},
      {"tiers: from GLACIER on",
       With(Current("tier/a"), [](auto& v) { v.storage_class = "GLACIER"; }), At(181),
       Move("DEEP_ARCHIVE", "tiers")},
      {"tiers: same class",
       With(Current("tier/a"), [](auto& v) { v.storage_class = "STANDARD_IA"; }), At(31), kNothing},
      {"tiers: STANDARD spelled out",
       With(Current("tier/a"), [](auto& v) { v.storage_class = "STANDARD"; }), At(31),
       Move("STANDARD_IA", "tiers")},
      {"tier date: before", Current("tdate/a"), At(30, 23), kNothing},
      {"tier date: on the day", Current("tdate/a"), At(31), Move("GLACIER_IR", "tier-date")},
      // Across rules: deletion > transition > marker; coldest; first on ties.
      {"both: only the expiration due yet", Current("both/a", true), At(4),
       AddMarker("both-expire")},
      {"both: unversioned deletion wins", Current("both/a"), At(6), Del("both-expire")},
      {"both: versioned transition wins", Current("both/a", true), At(6),
       Move("GLACIER", "both-move")},
      {"cold: only the 1-day rule due", Current("cold/a"), At(2), Move("GLACIER", "also-glacier")},
      {"cold: coldest of three, first on a tie", Current("cold/a"), At(41),
       Move("GLACIER", "colder")},
      {"cold: from STANDARD_IA",
       With(Current("cold/a"), [](auto& v) { v.storage_class = "STANDARD_IA"; }), At(31),
       Move("GLACIER", "also-glacier")},
      // Noncurrent versions.
      {"nc: not yet", Noncurrent("nc/a", 5), At(5, 23), kNothing},
      {"nc: GLACIER_IR", Noncurrent("nc/a", 0), At(6), Move("GLACIER_IR", "nc")},
      {"nc: GLACIER needs one newer", Noncurrent("nc/a", 0), At(9), Move("GLACIER_IR", "nc")},
      {"nc: GLACIER", Noncurrent("nc/a", 1), At(9), Move("GLACIER", "nc")},
      {"nc: two newest kept", Noncurrent("nc/a", 1), At(11), Move("GLACIER", "nc")},
      {"nc: expired", Noncurrent("nc/a", 2), At(11), Del("nc")},
      {"nc: expired, many newer", Noncurrent("nc/a", 50), At(11), Del("nc")},
      {"nc: expiration not yet", Noncurrent("nc/a", 2), At(10, 23), Move("GLACIER", "nc")},
      {"nc: marker is never moved", Noncurrent("nc/a", 2, true), At(10, 23), kNothing},
      {"nc: marker expires", Noncurrent("nc/a", 2, true), At(11), Del("nc")},
      {"nc: a current version ignores noncurrent rules", Current("nc/a", true), At(500), kNothing},
      {"nc: noncurrent ignores current rules", Noncurrent("days/a"), At(99), kNothing},
      {"nc: the catch-all", Noncurrent("days/a"), At(101), Del("all")},
      // Filters.
      {"tag: matches",
       With(Current("x"),
            [](auto& v) {
              v.tags = {{"tier", "cold"}};
            }),
       At(2), Move("DEEP_ARCHIVE", "tagged")},
      {"tag: other value",
       With(Current("x"),
            [](auto& v) {
              v.tags = {{"tier", "hot"}};
            }),
       At(2), kNothing},
      {"tag: absent", Current("x"), At(2), kNothing},
      {"and: all hold",
       With(Current("and/x"),
            [](auto& v) {
              v.tags = {{"b", "2"}, {"z", "0"}, {"a", "1"}};
            }),
       At(2), Del("and")},
      {"and: a tag missing",
       With(Current("and/x"),
            [](auto& v) {
              v.tags = {{"a", "1"}};
            }),
       At(2), kNothing},
      {"and: prefix",
       With(Current("an/x"),
            [](auto& v) {
              v.tags = {{"a", "1"}, {"b", "2"}};
            }),
       At(2), kNothing},
      {"and: too small",
       With(Current("and/x"),
            [](auto& v) {
              v.tags = {{"a", "1"}, {"b", "2"}};
              v.size_bytes = 100;
            }),
       At(2), kNothing},
      {"and: too big",
       With(Current("and/x"),
            [](auto& v) {
              v.tags = {{"a", "1"}, {"b", "2"}};
              v.size_bytes = 1000;
            }),
       At(2), kNothing},
      {"size: greater", With(Current("x"), [](auto& v) { v.size_bytes = 1000001; }), At(1),
       Move("GLACIER_IR", "big")},
      {"size: not greater", With(Current("x"), [](auto& v) { v.size_bytes = 1000000; }), At(1),
       kNothing},
      {"size: less", With(Current("x"), [](auto& v) { v.size_bytes = 9; }), At(1),
       Move("INTELLIGENT_TIERING", "small")},
      {"size: not less", With(Current("x"), [](auto& v) { v.size_bytes = 10; }), At(1), kNothing},
      {"size: Days 0 is the next midnight", With(Current("x"), [](auto& v) { v.size_bytes = 9; }),
       At(0, 23), kNothing},
  };
  for (const EvalCase& e : cases) {
    Action got = Evaluate(c, e.v, e.now, kDay);
    EXPECT_EQ(got, e.want) << e.name << ": got kind " << static_cast<int>(got.kind) << " "
                           << got.storage_class << " by " << got.rule_id;
  }
}

TEST(LifecycleTest, EvaluateWithShortDays) {
  // --lifecycle-day-seconds 2: a "day" of 2 s, due on even seconds.
  const int64_t day = 2 * kSecond;
  Configuration c = Parse(
      Doc("<Rule><ID>e</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"
          "<Transition><Days>0</Days><StorageClass>GLACIER</StorageClass></Transition>"
          "<NoncurrentVersionExpiration><NoncurrentDays>3</NoncurrentDays></"
          "NoncurrentVersionExpiration></Rule>"));
  VersionFacts v;
  v.key = "k";
  v.mtime_ns = 3 * kSecond;
  v.is_latest = true;
  EXPECT_EQ(Evaluate(c, v, 3 * kSecond, day), kNothing);
  EXPECT_EQ(Evaluate(c, v, 4 * kSecond, day), Move("GLACIER", "e"));  // Days 0: the next boundary
  EXPECT_EQ(Evaluate(c, v, 6 * kSecond - 1, day), Move("GLACIER", "e"));
  EXPECT_EQ(Evaluate(c, v, 6 * kSecond, day), Del("e"));  // 3 s + 2 s -> 6 s
  VersionFacts nc;
  nc.key = "k";
  nc.noncurrent_since_ns = 1 * kSecond;
  nc.versioned_bucket = true;
  EXPECT_EQ(Evaluate(c, nc, 7 * kSecond, day), kNothing);  // 1 s + 6 s -> 8 s
  EXPECT_EQ(Evaluate(c, nc, 8 * kSecond, day), Del("e"));
  EXPECT_EQ(Evaluate(Configuration{}, v, 1000 * kSecond, day), kNothing);
}

TEST(LifecycleTest, AbortDue) {
  Configuration c = Parse(
      Doc("<Rule><ID>off</ID><Prefix>up/</Prefix><Status>Disabled</Status>" + Abort("1") +
          "</Rule>"
          "<Rule><ID>legacy</ID><Prefix>up/</Prefix><Status>Enabled</Status>" +
          Abort("3") +
          "</Rule>"
          "<Rule><ID>filter</ID><Filter><Prefix>up/</Prefix></Filter><Status>Enabled</Status>" +
          Abort("2") +
          "</Rule>"
          "<Rule><ID>and</ID><Filter><And><Prefix>and/</Prefix></And></Filter><Status>Enabled</"
          "Status>" +
          Abort("1") +
          "</Rule>"
          "<Rule><ID>noabort</ID><Filter><Prefix>no/</Prefix></Filter><Status>Enabled</Status>" +
          kOk +
          "</Rule>"
          "<Rule><ID>every</ID><Filter/><Status>Enabled</Status>" +
          Abort("10") + "</Rule>"));
  EXPECT_EQ(AbortDue(c, "up/a", At(0, 10), At(2, 23), kDay), std::nullopt);  // "off" is disabled
  EXPECT_EQ(AbortDue(c, "up/a", At(0, 10), At(3), kDay), "filter");          // the first due
  EXPECT_EQ(AbortDue(c, "up/a", At(0, 10), At(4), kDay), "legacy");
  EXPECT_EQ(AbortDue(c, "and/a", At(0, 10), At(2), kDay), "and");
  EXPECT_EQ(AbortDue(c, "and/a", At(0, 10), At(1, 23), kDay), std::nullopt);
  EXPECT_EQ(AbortDue(c, "no/a", At(0, 10), At(10, 23), kDay), std::nullopt);
  EXPECT_EQ(AbortDue(c, "no/a", At(0, 10), At(11), kDay), "every");
  EXPECT_EQ(AbortDue(c, "up", At(0, 10), At(11), kDay), "every");
  // Tag and size filters never select an upload (a hand-built rule; parsing
  // refuses them with AbortIncompleteMultipartUpload).
  Configuration t;
  Rule r = Simple("t", FilterForm::kFilter, Filter{"", {{"k", "v"}}, {}, {}});
  r.abort_upload_days = 1;
  t.rules.push_back(r);
  r.id = "s";
  r.filter = Filter{"", {}, {}, 100};
  t.rules.push_back(r);
  EXPECT_EQ(AbortDue(t, "a", At(0), At(100), kDay), std::nullopt);
  r.id = "p";
  r.filter = {};
  t.rules.push_back(r);
  EXPECT_EQ(AbortDue(t, "a", At(0), At(100), kDay), "p");
  EXPECT_EQ(AbortDue(t, "a", 0, 2 * kSecond - 1, 2 * kSecond), std::nullopt);  // 1 day of 2 s
  EXPECT_EQ(AbortDue(t, "a", 0, 2 * kSecond, 2 * kSecond), "p");
}

TEST(LifecycleTest, ExpirationOf) {
  Configuration c = Parse(Doc(
      "<Rule><ID>long</ID><Filter><Prefix>a</Prefix></Filter><Status>Enabled</Status>" + Exp("30") +
      "</Rule>"
      "<Rule><ID>off</ID><Filter><Prefix>a</Prefix></Filter><Status>Disabled</Status>" +
      Exp("1") +
      "</Rule>"
      "<Rule><ID>short</ID><Filter><Prefix>ab</Prefix></Filter><Status>Enabled</Status>" +
      Exp("5") +
      "</Rule>"
      "<Rule><ID>same</ID><Filter><Prefix>ab</Prefix></Filter><Status>Enabled</Status>" +
      Exp("5") +
      "</Rule>"
      "<Rule><ID>date</ID><Filter><Prefix>abc</Prefix></Filter><Status>Enabled</Status>"
      "<Expiration><Date>2024-01-03T00:00:00Z</Date></Expiration></Rule>"
      "<Rule><ID>move</ID><Filter/><Status>Enabled</Status>" +
      Tr(Days(0), "GLACIER") +
      "</Rule>"
      "<Rule><ID>marker</ID><Filter/><Status>Enabled</Status>"
      "<Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration></"
      "Rule>"));
  auto info = ExpirationOf(c, Current("a/x"), kDay);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->expiry_ns, At(31));
  EXPECT_EQ(info->rule_id, "long");
  info = ExpirationOf(c, Current("abx"), kDay);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->expiry_ns, At(6));
  EXPECT_EQ(info->rule_id, "short");  // the earliest; the first of equals
  info = ExpirationOf(c, Current("abc"), kDay);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->expiry_ns, At(2));
  EXPECT_EQ(info->rule_id, "date");
  info = ExpirationOf(c, Current("abc"), 2 * kSecond);  // short days: Days 5 long past the Date
  ASSERT_TRUE(info);
  EXPECT_EQ(info->rule_id, "short");
  EXPECT_EQ(ExpirationOf(c, Current("zzz"), kDay),
            std::nullopt);  // only a transition and the marker flag
  EXPECT_EQ(ExpirationOf(c, Marker("a/x", true), kDay), std::nullopt);
  EXPECT_EQ(ExpirationOf(c, Noncurrent("a/x"), kDay), std::nullopt);
  EXPECT_EQ(ExpirationOf(c, With(Current("a/x", true), [](auto&) {}), kDay)->rule_id, "long");
}

// x-amz-transition-default-minimum-object-size: a small version is not
// transitioned by a rule without a size filter, and the expiration that the
// transition would have outranked still applies.
TEST(LifecycleMinimumSize, SmallVersionsSkipTransitionsNotExpiration) {
  Rule r;
  r.id = "r";
  r.transitions.push_back({When{1, std::nullopt}, "GLACIER_IR"});
  r.expiration = When{2, std::nullopt};
  Configuration c;
  c.rules = {r};
  VersionFacts v;
  v.key = "k";
  v.size_bytes = 1000;
  v.is_latest = true;
  v.versioned_bucket = true;
  v.min_transition_bytes = 128 << 10;
  const int64_t day = 1'000'000'000, later = 10 * day;
  EXPECT_EQ(Evaluate(c, v, later, day).kind, ActionKind::kAddMarker);
  v.size_bytes = 200 << 10;
  EXPECT_EQ(Evaluate(c, v, later, day).kind, ActionKind::kTransition);
  // A size filter overrides the default minimum.
  c.rules[0].filter_form = FilterForm::kFilter;
  c.rules[0].filter.size_greater_than = 10;
  v.size_bytes = 1000;
  EXPECT_EQ(Evaluate(c, v, later, day).kind, ActionKind::kTransition);
}

}  // namespace
}  // namespace strata::tier

#include "notify/config.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "notify/event.h"
#include "object/record.h"

namespace strata::notify {
namespace {

bool Known(std::string_view id) { return id == "hook" || id == "other"; }

std::string Doc(const std::string& body) {
  return "<NotificationConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" + body +
         "</NotificationConfiguration>";
}

std::string Queue(const std::string& events, const std::string& filter = "",
                  const std::string& id = "", const std::string& target = "hook") {
  return "<QueueConfiguration>" + (id.empty() ? "" : "<Id>" + id + "</Id>") + "<Queue>" +
         TargetArn(target) + "</Queue>" + events + filter + "</QueueConfiguration>";
}

std::string Ev(const std::string& e) { return "<Event>" + e + "</Event>"; }

std::string Filter(const std::string& prefix, const std::string& suffix) {
  std::string f = "<Filter><S3Key>";
  if (!prefix.empty()) f += "<FilterRule><Name>prefix</Name><Value>" + prefix + "</Value></FilterRule>";
  if (!suffix.empty()) f += "<FilterRule><Name>Suffix</Name><Value>" + suffix + "</Value></FilterRule>";
  return f + "</S3Key></Filter>";
}

Configuration Ok(const std::string& xml) {
  auto r = ParseConfiguration(xml, Known);
  if (auto* e = std::get_if<ParseError>(&r)) {
    ADD_FAILURE() << e->message;
    return {};
  }
  return std::get<Configuration>(r);
}

ParseError Bad(const std::string& xml) {
  auto r = ParseConfiguration(xml, Known);
  if (auto* e = std::get_if<ParseError>(&r)) return *e;
  ADD_FAILURE() << "accepted: " << xml;
  return {};
}

TEST(NotifyConfigTest, ParsesRendersAndMatches) {
  Configuration c = Ok(Doc(Queue(Ev("s3:ObjectCreated:*") + Ev("s3:ObjectRemoved:Delete"),
                                 Filter("images/", ".jpg"), "new-images") +
                           Queue(Ev("s3:ObjectCreated:Put"), Filter("logs/", ""), "", "other")));
  ASSERT_EQ(c.rules.size(), 2u);
  EXPECT_EQ(c.rules[0].id, "new-images");
  EXPECT_EQ(c.rules[0].target, "hook");
  EXPECT_EQ(c.rules[0].prefix, "images/");
  EXPECT_EQ(c.rules[0].suffix, ".jpg");  // "Suffix": names are case-insensitive
  EXPECT_EQ(c.rules[1].id, "notification-2");  // generated
  EXPECT_EQ(c.rules[1].target, "other");
  // The stored document reads back as the same configuration.
  const std::string rendered = RenderConfiguration(c);
  EXPECT_EQ(rendered.find("<?xml"), 0u);
  EXPECT_EQ(rendered.find("<?xml", 1), std::string::npos);  // one declaration
  EXPECT_NE(rendered.find("<Queue>arn:strata:sqs::hook:webhook</Queue>"), std::string::npos);
  EXPECT_EQ(Ok(rendered), c);

  auto names = [&](std::string_view event, std::string_view key) {
    std::vector<std::string> ids;
    for (const Rule* r : Matching(c, event, key)) ids.push_back(r->id);
    return ids;
  };
  EXPECT_EQ(names("s3:ObjectCreated:Copy", "images/a.jpg"), std::vector<std::string>{"new-images"});
  EXPECT_TRUE(names("s3:ObjectCreated:Copy", "images/a.png").empty());
  EXPECT_TRUE(names("s3:ObjectCreated:Copy", "x/images/a.jpg").empty());
  EXPECT_TRUE(names("s3:ObjectRemoved:DeleteMarkerCreated", "images/a.jpg").empty());
  EXPECT_EQ(names("s3:ObjectCreated:Put", "logs/1"), std::vector<std::string>{"notification-2"});
  EXPECT_TRUE(names("s3:ObjectCreated:Post", "logs/1").empty());

  // No configurations: the empty document (how a client removes them).
  EXPECT_TRUE(Ok(Doc("")).rules.empty());
  EXPECT_TRUE(Ok("<NotificationConfiguration/>").rules.empty());
}

TEST(NotifyConfigTest, RefusesWhatAwsRefuses) {
  // Targets: only declared webhooks, by their exact ARN.
  ParseError e = Bad(Doc(Queue(Ev("s3:ObjectCreated:*"), "", "", "nobody")));
  EXPECT_EQ(e.problem, Problem::kInvalidArgument);
  EXPECT_NE(e.message.find("Unable to validate the following destination configurations"),
            std::string::npos);
  e = Bad(Doc("<QueueConfiguration><Queue>arn:aws:sqs:us-east-1:123:q</Queue>" +
              Ev("s3:ObjectCreated:*") + "</QueueConfiguration>"));
  EXPECT_EQ(e.problem, Problem::kInvalidArgument);
  // Events: unknown ones refused; AWS types strata never emits accepted.
  e = Bad(Doc(Queue(Ev("s3:ObjectCreated:Typo"))));
  EXPECT_EQ(e.problem, Problem::kInvalidArgument);
  EXPECT_EQ(Ok(Doc(Queue(Ev("s3:Replication:*")))).rules.size(), 1u);
  // Overlaps: a common event type and filters that both can match.
  e = Bad(Doc(Queue(Ev("s3:ObjectCreated:*"), Filter("a/", "")) +
              Queue(Ev("s3:ObjectCreated:Put"), Filter("a/b", ""), "", "other")));
  EXPECT_EQ(e.problem, Problem::kInvalidArgument);
  EXPECT_NE(e.message.find("Configurations overlap"), std::string::npos);
  EXPECT_EQ(Bad(Doc(Queue(Ev("s3:ObjectCreated:Put")) + Queue(Ev("s3:ObjectCreated:Put"))))
                .problem,
            Problem::kInvalidArgument);
  // ...not when prefixes or suffixes keep them apart, or the events differ.
  EXPECT_EQ(Ok(Doc(Queue(Ev("s3:ObjectCreated:*"), Filter("a/", "")) +
                   Queue(Ev("s3:ObjectCreated:*"), Filter("b/", ""))))
                .rules.size(),
            2u);
  EXPECT_EQ(Ok(Doc(Queue(Ev("s3:ObjectCreated:*"), Filter("", ".jpg")) +
                   Queue(Ev("s3:ObjectCreated:*"), Filter("", ".png"))))
                .rules.size(),
            2u);
  EXPECT_EQ(Ok(Doc(Queue(Ev("s3:ObjectCreated:*")) + Queue(Ev("s3:ObjectRemoved:*")))).rules.size(),
            2u);
  // Filters: prefix / suffix once each.
  EXPECT_EQ(Bad(Doc(Queue(Ev("s3:ObjectCreated:*"),
                          "<Filter><S3Key><FilterRule><Name>prefix</Name><Value>a</Value>"
                          "</FilterRule><FilterRule><Name>prefix</Name><Value>b</Value>"
                          "</FilterRule></S3Key></Filter>")))
                .problem,
            Problem::kInvalidArgument);
  EXPECT_EQ(Bad(Doc(Queue(Ev("s3:ObjectCreated:*"),
                          "<Filter><S3Key><FilterRule><Name>middle</Name><Value>a</Value>"
                          "</FilterRule></S3Key></Filter>")))
                .problem,
            Problem::kInvalidArgument);
  EXPECT_EQ(Bad(Doc(Queue(Ev("s3:ObjectCreated:*"), Filter("a\x01", "")))).problem,
            Problem::kInvalidArgument);
  // Ids once each.
  EXPECT_EQ(Bad(Doc(Queue(Ev("s3:ObjectCreated:*"), "", "x") +
                    Queue(Ev("s3:ObjectRemoved:*"), "", "x")))
                .problem,
            Problem::kInvalidArgument);
  // The schema.
  for (const std::string& xml :
       {std::string("not xml"), std::string(""), Doc("<Bogus/>"),
        Doc("<QueueConfiguration>" + Ev("s3:ObjectCreated:*") + "</QueueConfiguration>"),
        Doc("<QueueConfiguration><Queue>" + TargetArn("hook") + "</Queue></QueueConfiguration>"),
        Doc(Queue(Ev("s3:ObjectCreated:*"), "<Filter><Bogus/></Filter>")),
        Doc(Queue(Ev("s3:ObjectCreated:*"), "<Unknown>1</Unknown>")),
        std::string("<Other/>")}) {
    EXPECT_EQ(Bad(xml).problem, Problem::kMalformedXml) << xml;
  }
  // Other destinations are not silently accepted.
  EXPECT_EQ(Bad(Doc("<TopicConfiguration><Topic>arn:aws:sns:us-east-1:1:t</Topic>" +
                    Ev("s3:ObjectCreated:*") + "</TopicConfiguration>"))
                .problem,
            Problem::kNotImplemented);
  EXPECT_EQ(Bad(Doc("<EventBridgeConfiguration/>")).problem, Problem::kNotImplemented);
}

TEST(NotifyConfigTest, TargetIdsAndArns) {
  EXPECT_EQ(TargetOfArn("arn:strata:sqs::hook-1_a:webhook"), "hook-1_a");
  EXPECT_EQ(TargetOfArn("arn:strata:sqs:::webhook"), "");
  EXPECT_EQ(TargetOfArn("arn:strata:sqs::a:b:webhook"), "");
  EXPECT_EQ(TargetOfArn("arn:minio:sqs::hook:webhook"), "");
  EXPECT_FALSE(ValidTargetId(std::string(65, 'a')));
  EXPECT_TRUE(ValidTargetId(std::string(64, 'a')));
}

TEST(NotifyEventTest, OperationsMapToAwsEventNames) {
  object::ObjectRecord r;
  EXPECT_EQ(EventOfPut("PutObject", r), "s3:ObjectCreated:Put");
  EXPECT_EQ(EventOfPut("CopyObject", r), "s3:ObjectCreated:Copy");
  EXPECT_EQ(EventOfPut("PostObject", r), "s3:ObjectCreated:Post");
  EXPECT_EQ(EventOfPut("CompleteMultipartUpload", r), "s3:ObjectCreated:CompleteMultipartUpload");
  EXPECT_EQ(EventOfPut("PutObjectTagging", r), "s3:ObjectTagging:Put");
  EXPECT_EQ(EventOfPut("LifecycleTransition", r), "s3:LifecycleTransition");
  EXPECT_EQ(EventOfPut("RestoreCompleted", r), "s3:ObjectRestore:Completed");
  EXPECT_FALSE(EventOfPut("PutObjectRetention", r));
  EXPECT_FALSE(EventOfPut("DeleteObject", r));  // a plain record put by a delete: no event
  r.delete_marker = true;
  EXPECT_EQ(EventOfPut("DeleteObjects", r), "s3:ObjectRemoved:DeleteMarkerCreated");
  EXPECT_EQ(EventOfPut("LifecycleExpiration:DeleteMarkerCreated", r),
            "s3:LifecycleExpiration:DeleteMarkerCreated");
  EXPECT_FALSE(EventOfPut("PutObject", r));
  EXPECT_EQ(EventOfDelete("DeleteObject"), "s3:ObjectRemoved:Delete");
  EXPECT_EQ(EventOfDelete("LifecycleExpiration:Delete"), "s3:LifecycleExpiration:Delete");
  EXPECT_FALSE(EventOfDelete("PutObject"));  // replacing the null version is no removal
}

TEST(NotifyEventTest, RendersTheAwsDocument) {
  Event e;
  e.name = "s3:ObjectCreated:Put";
  e.time_ns = 1'700'000'000'123'000'000;
  e.region = "eu-west-1";
  e.bucket = "photos";
  e.bucket_owner = "owner-id";
  e.key = "a b/c+d\xc3\xa9.jpg";
  e.has_size = true;
  e.size = 1234;
  e.etag = "0123abcd";
  e.version_id = "v1";
  e.sequencer = "000000000000002a";
  e.identity = "alice";
  e.source = "10.0.0.1:5123";
  e.request_id = "req-1";
  auto doc = nlohmann::json::parse(RenderEvent(e, "cfg\xff"));
  ASSERT_EQ(doc["Records"].size(), 1u);
  const auto& r = doc["Records"][0];
  EXPECT_EQ(r["eventVersion"], "2.1");
  EXPECT_EQ(r["eventSource"], "aws:s3");
  EXPECT_EQ(r["awsRegion"], "eu-west-1");
  EXPECT_EQ(r["eventTime"], "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(r["eventName"], "ObjectCreated:Put");
  EXPECT_EQ(r["userIdentity"]["principalId"], "alice");
  EXPECT_EQ(r["requestParameters"]["sourceIPAddress"], "10.0.0.1");  // without the port
  EXPECT_EQ(r["responseElements"]["x-amz-request-id"], "req-1");
  EXPECT_EQ(r["s3"]["s3SchemaVersion"], "1.0");
  EXPECT_EQ(r["s3"]["bucket"]["name"], "photos");
  EXPECT_EQ(r["s3"]["bucket"]["arn"], "arn:aws:s3:::photos");
  EXPECT_EQ(r["s3"]["bucket"]["ownerIdentity"]["principalId"], "owner-id");
  EXPECT_EQ(r["s3"]["object"]["key"], "a+b/c%2Bd%C3%A9.jpg");
  EXPECT_EQ(r["s3"]["object"]["size"], 1234);
  EXPECT_EQ(r["s3"]["object"]["eTag"], "0123abcd");
  EXPECT_EQ(r["s3"]["object"]["versionId"], "v1");
  EXPECT_EQ(r["s3"]["object"]["sequencer"], "000000000000002a");
  // A removal has no size or ETag; a not-UTF-8 Id does not break the document.
  e.name = "s3:ObjectRemoved:Delete";
  e.has_size = false;
  e.version_id.clear();
  doc = nlohmann::json::parse(RenderEvent(e, "cfg"));
  EXPECT_FALSE(doc["Records"][0]["s3"]["object"].contains("size"));
  EXPECT_FALSE(doc["Records"][0]["s3"]["object"].contains("eTag"));
  EXPECT_FALSE(doc["Records"][0]["s3"]["object"].contains("versionId"));
  EXPECT_EQ(doc["Records"][0]["s3"]["configurationId"], "cfg");
  e.source = "[::1]:80";
  doc = nlohmann::json::parse(RenderEvent(e, "cfg"));
  EXPECT_EQ(doc["Records"][0]["requestParameters"]["sourceIPAddress"], "::1");
}

}  // namespace
}  // namespace strata::notify

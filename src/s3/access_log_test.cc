// Server access logging (s3/access_log.h): the BucketLoggingStatus document
// as AWS's schema has it, the log record format, the operation names.
#include "s3/access_log.h"

#include <gtest/gtest.h>

namespace strata::s3 {
namespace {

std::optional<LoggingTarget> Ok(const std::string& xml) {
  ParsedLogging p = ParseBucketLoggingStatus(xml);
  if (auto* e = std::get_if<LoggingError>(&p)) {
    ADD_FAILURE() << e->message << "\n" << xml;
    return std::nullopt;
  }
  return std::get<std::optional<LoggingTarget>>(p);
}

LoggingProblem Bad(const std::string& xml) {
  ParsedLogging p = ParseBucketLoggingStatus(xml);
  if (auto* e = std::get_if<LoggingError>(&p)) return e->problem;
  ADD_FAILURE() << "accepted: " << xml;
  return LoggingProblem::kInvalidArgument;
}

std::string Enabled(const std::string& inner) {
  return "<BucketLoggingStatus xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LoggingEnabled>" +
         inner + "</LoggingEnabled></BucketLoggingStatus>";
}

TEST(AccessLogTest, BucketLoggingStatusAsAwsHasIt) {
  auto t = Ok(Enabled("<TargetBucket>logs</TargetBucket><TargetPrefix>web/</TargetPrefix>"));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->bucket, "logs");
  EXPECT_EQ(t->prefix, "web/");
  EXPECT_FALSE(t->partitioned);
  EXPECT_EQ(Ok(RenderBucketLoggingStatus(t)), t);
  t = Ok(Enabled("<TargetBucket>logs</TargetBucket><TargetPrefix></TargetPrefix>"
                 "<TargetObjectKeyFormat><PartitionedPrefix><PartitionDateSource>EventTime"
                 "</PartitionDateSource></PartitionedPrefix></TargetObjectKeyFormat>"));
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->partitioned);
  EXPECT_TRUE(t->event_time);
  EXPECT_EQ(Ok(RenderBucketLoggingStatus(t)), t);
  EXPECT_TRUE(Ok(Enabled("<TargetBucket>l</TargetBucket><TargetPrefix>p</TargetPrefix>"
                         "<TargetGrants/>")));  // no grants: fine
  // Off: the empty document.
  EXPECT_FALSE(Ok("<BucketLoggingStatus xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"/>"));
  EXPECT_FALSE(Ok(RenderBucketLoggingStatus(std::nullopt)));

  EXPECT_EQ(Bad("nope"), LoggingProblem::kMalformedXml);
  EXPECT_EQ(Bad("<Other/>"), LoggingProblem::kMalformedXml);
  EXPECT_EQ(Bad(Enabled("<TargetPrefix>p</TargetPrefix>")), LoggingProblem::kMalformedXml);
  EXPECT_EQ(Bad(Enabled("<TargetBucket>l</TargetBucket>")), LoggingProblem::kMalformedXml);
  EXPECT_EQ(Bad(Enabled("<TargetBucket>l</TargetBucket><TargetPrefix>p</TargetPrefix><X/>")),
            LoggingProblem::kMalformedXml);
  EXPECT_EQ(Bad(Enabled("<TargetBucket>l</TargetBucket><TargetPrefix>p</TargetPrefix>"
                        "<TargetGrants><Grant><Permission>READ</Permission></Grant></TargetGrants>")),
            LoggingProblem::kInvalidArgument);
  EXPECT_EQ(Bad(Enabled("<TargetBucket>l</TargetBucket><TargetPrefix>p</TargetPrefix>"
                        "<TargetObjectKeyFormat><PartitionedPrefix><PartitionDateSource>Noon"
                        "</PartitionDateSource></PartitionedPrefix></TargetObjectKeyFormat>")),
            LoggingProblem::kInvalidArgument);
}

TEST(AccessLogTest, RecordFormat) {
  AccessRecord r;
  r.bucket_owner = "79a59df9";
  r.bucket = "photos";
  r.time_ns = 1'549'411'238'000'000'000;  // 06/Feb/2019:00:00:38
  r.remote_ip = "192.0.2.3";
  r.requester = "alice";
  r.request_id = "3E57427F3EXAMPLE";
  r.operation = "REST.GET.OBJECT";
  r.key = "a b/c.jpg";
  r.request_uri = "GET /photos/a%20b/c.jpg HTTP/1.1";
  r.http_status = 200;
  r.bytes_sent = 2662992;
  r.object_size = 3462992;
  r.total_time_ms = 70;
  r.turnaround_time_ms = 10;
  r.user_agent = "curl/7.88 \"quoted\"";
  r.signature_version = "SigV4";
  r.authentication_type = "AuthHeader";
  r.host_header = "photos.s3.local";
  EXPECT_EQ(FormatAccessRecord(r),
            "79a59df9 photos [06/Feb/2019:00:00:38 +0000] 192.0.2.3 alice 3E57427F3EXAMPLE "
            "REST.GET.OBJECT a%20b/c.jpg \"GET /photos/a%20b/c.jpg HTTP/1.1\" 200 - 2662992 "
            "3462992 70 10 \"-\" \"curl/7.88 \\x22quoted\\x22\" - - SigV4 - AuthHeader "
            "photos.s3.local - - -\n");
  // Nothing in a field breaks the line or the fields.
  r.requester = "a b\nc";
  r.referer = "x\ny";
  const std::string line = FormatAccessRecord(r);
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_NE(line.find(" a_b_c "), std::string::npos);
}

TEST(AccessLogTest, OperationNames) {
  EXPECT_EQ(AccessOperation("GET", true, "", false), "REST.GET.OBJECT");
  EXPECT_EQ(AccessOperation("PUT", true, "", true), "REST.COPY.OBJECT");
  EXPECT_EQ(AccessOperation("GET", false, "list-type=2&prefix=a", false), "REST.GET.BUCKET");
  EXPECT_EQ(AccessOperation("PUT", false, "acl", false), "REST.PUT.ACL");
  EXPECT_EQ(AccessOperation("GET", true, "tagging", false), "REST.GET.TAGGING");
  EXPECT_EQ(AccessOperation("POST", false, "delete", false), "REST.POST.MULTI_OBJECT_DELETE");
  EXPECT_EQ(AccessOperation("POST", true, "uploads", false), "REST.POST.UPLOADS");
  EXPECT_EQ(AccessOperation("PUT", true, "partNumber=1&uploadId=x", false), "REST.PUT.PART");
  EXPECT_EQ(AccessOperation("POST", true, "uploadId=x", false), "REST.POST.UPLOAD");
  EXPECT_EQ(AccessOperation("GET", false, "logging", false), "REST.GET.LOGGING_STATUS");
}

}  // namespace
}  // namespace strata::s3

#include "remote/s3_replies.h"

#include <gtest/gtest.h>

#include "remote/s3_client.h"

namespace strata::remote {
namespace {

TEST(S3RepliesTest, ErrorDocument) {
  auto e = ParseError("<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code>"
                      "<Message>gone</Message></Error>");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, "NoSuchKey");
  EXPECT_EQ(e->message, "gone");
  EXPECT_FALSE(ParseError("<Error><Message>no code</Message></Error>"));
  EXPECT_FALSE(ParseError("<ListBucketResult/>"));
  EXPECT_FALSE(ParseError("not xml"));
  EXPECT_FALSE(ParseError(std::string("<Error><Code>A\0B</Code></Error>", 31)));
}

TEST(S3RepliesTest, InitiateResult) {
  EXPECT_EQ(ParseInitiate("<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
                          "<UploadId>u-1</UploadId></InitiateMultipartUploadResult>"),
            "u-1");
  EXPECT_FALSE(ParseInitiate("<InitiateMultipartUploadResult><UploadId/>"
                             "</InitiateMultipartUploadResult>"));
}

TEST(S3RepliesTest, ListV2PagesAndTokens) {
  auto p = ParseListV2(
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name>"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>t2</NextContinuationToken>"
      "<Contents><Key>p/a</Key><Size>5</Size></Contents>"
      "<Contents><Key>p/b</Key><Size>0</Size></Contents></ListBucketResult>");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->objects.size(), 2u);
  EXPECT_EQ(p->objects[0].key, "p/a");
  EXPECT_EQ(p->objects[0].size, 5u);
  EXPECT_EQ(p->next_token, "t2");
  auto last = ParseListV2("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>");
  ASSERT_TRUE(last);
  EXPECT_TRUE(last->next_token.empty());
  // Truncated without a token would loop forever: refused.
  EXPECT_FALSE(ParseListV2("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"));
  EXPECT_FALSE(ParseListV2("<ListBucketResult><Contents><Key>a</Key><Size>-1</Size></Contents>"
                           "</ListBucketResult>"));
  EXPECT_FALSE(ParseListV2("<ListBucketResult><IsTruncated>maybe</IsTruncated></ListBucketResult>"));
}

TEST(S3RepliesTest, ListUploads) {
  auto p = ParseListUploads(
      "<ListMultipartUploadsResult><IsTruncated>true</IsTruncated>"
      "<NextKeyMarker>p/b</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>"
      "<Upload><Key>p/a</Key><UploadId>u1</UploadId></Upload></ListMultipartUploadsResult>");
  ASSERT_TRUE(p);
  ASSERT_EQ(p->uploads.size(), 1u);
  EXPECT_EQ(p->uploads[0].upload_id, "u1");
  EXPECT_TRUE(p->truncated);
  EXPECT_EQ(p->next_key_marker, "p/b");
  EXPECT_FALSE(ParseListUploads("<ListMultipartUploadsResult><IsTruncated>true</IsTruncated>"
                                "</ListMultipartUploadsResult>"));
}

TEST(S3RepliesTest, CompleteBodyEscapesAndNumbers) {
  std::string body = CompleteBody({"\"e1\"", "\"e<2>\""});
  EXPECT_NE(body.find("<Part><PartNumber>1</PartNumber><ETag>\"e1\"</ETag></Part>"),
            std::string::npos);
  EXPECT_NE(body.find("<PartNumber>2</PartNumber><ETag>\"e&lt;2&gt;\"</ETag>"), std::string::npos);
}

TEST(S3RepliesTest, EndpointUrls) {
  Endpoint e;
  ASSERT_TRUE(ParseEndpointUrl("http://127.0.0.1:9100", &e));
  EXPECT_FALSE(e.https);
  EXPECT_EQ(e.host, "127.0.0.1");
  EXPECT_EQ(e.port, 9100);
  ASSERT_TRUE(ParseEndpointUrl("https://s3.example.com/", &e));
  EXPECT_TRUE(e.https);
  EXPECT_EQ(e.host, "s3.example.com");
  EXPECT_EQ(e.port, 443);
  ASSERT_TRUE(ParseEndpointUrl("http://[::1]:9000", &e));
  EXPECT_EQ(e.host, "::1");
  EXPECT_EQ(e.port, 9000);
  for (const char* bad : {"ftp://h", "http://", "http://h:0", "http://h:99999", "http://h/bucket",
                          "http://user@h", "h:9000", "http://h:", "http://[::1"}) {
    EXPECT_FALSE(ParseEndpointUrl(bad, &e)) << bad;
  }
}

}  // namespace
}  // namespace strata::remote

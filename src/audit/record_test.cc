#include "audit/record.h"

#include <gtest/gtest.h>

namespace strata::audit {
namespace {

Record Sample() {
  Record r;
  r.seq = 42;
  r.time_ns = 1'700'000'000'123'000'000;
  r.kind = Kind::kDenied;
  r.identity = "AKIDEXAMPLE";
  r.source = "10.0.0.7:51234";
  r.request_id = "ABCD00000001";
  r.operation = "PutObject";
  r.bucket = "b";
  r.key = std::string("k\0ey \"q\"", 8);
  r.version = "fffffffffffffffe";
  r.result = "AccessDenied";
  r.http_status = 403;
  r.bytes = 4096;
  r.part = 3;
  return r;
}

TEST(AuditRecordTest, RoundTrips) {
  const Record r = Sample();
  auto d = DecodeRecord(EncodeRecord(r));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->seq, r.seq);
  EXPECT_EQ(d->time_ns, r.time_ns);
  EXPECT_EQ(d->kind, r.kind);
  EXPECT_EQ(d->identity, r.identity);
  EXPECT_EQ(d->source, r.source);
  EXPECT_EQ(d->request_id, r.request_id);
  EXPECT_EQ(d->operation, r.operation);
  EXPECT_EQ(d->bucket, r.bucket);
  EXPECT_EQ(d->key, r.key);
  EXPECT_EQ(d->version, r.version);
  EXPECT_EQ(d->result, r.result);
  EXPECT_EQ(d->http_status, 403);
  EXPECT_EQ(d->bytes, 4096u);
  EXPECT_EQ(d->part, 3u);
}

TEST(AuditRecordTest, RejectsDamagedBytes) {
  const std::string good = EncodeRecord(Sample());
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_FALSE(DecodeRecord(good.substr(0, cut)).ok()) << "cut at " << cut;
  }
  EXPECT_FALSE(DecodeRecord(good + "x").ok());
  std::string bad_version = good;
  bad_version[0] = 9;
  EXPECT_FALSE(DecodeRecord(bad_version).ok());
  std::string bad_kind = good;
  bad_kind[17] = 7;
  EXPECT_FALSE(DecodeRecord(bad_kind).ok());
}

TEST(AuditRecordTest, JsonEscapesAndNamesTheKind) {
  const std::string j = RecordJson(Sample());
  EXPECT_NE(j.find("\"kind\":\"denied\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"http_status\":403"), std::string::npos) << j;
  EXPECT_NE(j.find("\\u0000ey \\\"q\\\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"time\":\"2023-11-14T22:13:20.123Z\""), std::string::npos) << j;
}

TEST(AuditRecordTest, KeysSortBySeqAndCarryIt) {
  EXPECT_LT(RecordKey(255), RecordKey(256));
  EXPECT_LT(BucketIndexKey("a", 9), BucketIndexKey("a", 10));
  EXPECT_LT(BucketIndexKey("a", UINT64_MAX), BucketIndexKey("a-", 0));  // '\0' ends the name
  EXPECT_TRUE(RecordKey(7).starts_with(RecordPrefix()));
  EXPECT_TRUE(IdentityIndexKey("u", 7).starts_with(IdentityIndexPrefix("u")));
  EXPECT_FALSE(IdentityIndexKey("uv", 7).starts_with(IdentityIndexPrefix("u")));
  uint64_t seq = 0;
  ASSERT_TRUE(SeqOfKey(IdentityIndexKey("someone", 123456789), &seq));
  EXPECT_EQ(seq, 123456789u);
  EXPECT_FALSE(SeqOfKey("Er", &seq));
}

}  // namespace
}  // namespace strata::audit

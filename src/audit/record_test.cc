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

TEST(AuditRecordTest, PostingListsRoundTripAndRefuseDamage) {
  const std::vector<uint64_t> seqs = {1, 2, 300, 70000, uint64_t{1} << 40};
  EXPECT_EQ(DecodePostings(EncodePostings(seqs)).value(), seqs);
  EXPECT_TRUE(DecodePostings(EncodePostings({})).value().empty());
  std::string enc = EncodePostings(seqs);
  EXPECT_FALSE(DecodePostings(enc.substr(0, enc.size() - 1)).ok());  // cut
  EXPECT_FALSE(DecodePostings(enc + "x").ok());                        // trailing
  EXPECT_FALSE(DecodePostings("\x05\x01").ok());                       // count past the bytes
  EXPECT_FALSE(DecodePostings("\x02\x01\x00").ok());                  // a repeated seq
  EXPECT_FALSE(DecodePostings("").ok());
  EXPECT_LT(BucketPostingsKey("a", 9), BucketPostingsKey("a", 10));
  EXPECT_FALSE(BucketPostingsKey("ab", 1).starts_with(BucketPostingsPrefix("a")));
  EXPECT_NE(BucketPostingsPrefix("a"), BucketIndexPrefix("a"));
  EXPECT_NE(HashBlockKey(1), HashKey(1));
}

TEST(AuditRecordTest, NamesArePeekedWithoutDecoding) {
  Record r;
  r.seq = 5;
  r.identity = "AKID";
  r.source = "10.0.0.1:5";
  r.request_id = "R";
  r.operation = "PutObject";
  r.bucket = "bkt";
  r.key = "k";
  r.result = "OK";
  const std::string enc = EncodeRecord(r);
  std::string_view identity, bucket;  // views into enc
  ASSERT_TRUE(PeekRecordNames(enc, &identity, &bucket));
  EXPECT_EQ(identity, "AKID");
  EXPECT_EQ(bucket, "bkt");
  for (size_t cut = 0; cut < 30; ++cut) {
    std::string_view i2, b2;
    EXPECT_FALSE(PeekRecordNames(std::string_view(enc).substr(0, cut), &i2, &b2)) << cut;
  }
}

}  // namespace
}  // namespace strata::audit

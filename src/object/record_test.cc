// Metadata record codecs (record.h) against docs/formats/metadata-records.md:
// round trips, and the rule that decoders reject trailing bytes (the
// object_record fuzz target checks it for every decoder; the bucket decoder
// used to accept them).
#include "object/record.h"

#include <gtest/gtest.h>

namespace strata::object {
namespace {

TEST(RecordTest, BucketRoundTripAndTrailingBytesAreRejected) {
  BucketRecord b{1369353600, "eu-west-1", "owner"};
  std::string enc = EncodeBucketRecord(b);
  auto back = DecodeBucketRecord(enc);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->created_ns, b.created_ns);
  EXPECT_EQ(back->region, b.region);
  EXPECT_EQ(back->owner, b.owner);
  EXPECT_FALSE(DecodeBucketRecord(enc + '\0'));
  EXPECT_FALSE(DecodeBucketRecord(enc.substr(0, enc.size() - 1)));
}

TEST(RecordTest, EveryDecoderRejectsTrailingBytes) {
  ObjectRecord o;
  o.size_bytes = 2;
  o.inline_data = "hi";
  o.tags = {{"k", "v"}};
  PartRecord p;
  p.etag = "e";
  UploadRecord u;
  u.owner = "me";
  EXPECT_TRUE(DecodeObjectRecord(EncodeObjectRecord(o)));
  EXPECT_FALSE(DecodeObjectRecord(EncodeObjectRecord(o) + 'x'));
  EXPECT_TRUE(DecodePartRecord(EncodePartRecord(p)));
  EXPECT_FALSE(DecodePartRecord(EncodePartRecord(p) + 'x'));
  EXPECT_TRUE(DecodeUploadRecord(EncodeUploadRecord(u)));
  EXPECT_FALSE(DecodeUploadRecord(EncodeUploadRecord(u) + 'x'));
}

}  // namespace
}  // namespace strata::object

#include "storage/shard_format.h"

#include <gtest/gtest.h>

namespace strata::storage {
namespace {

ShardHeader SampleHeader() {
  ShardHeader h;
  h.id = "0123456789abcdef0123456789abcdef";
  h.shard_index = 5;
  h.k = 4;
  h.m = 2;
  h.block_bytes = 1 << 20;
  h.data.bucket = "bucket";
  h.data.key = "some/key with spaces/\xc3\xa9";
  h.data.upload_id = "upload-1";
  h.data.part_number = 10000;
  h.data.version_stamp = 0x0123456789abcdefULL;
  return h;
}

TEST(ShardFormatTest, Crc32cKnownValue) {
  // The CRC-32C check value (RFC 3720 / iSCSI).
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
}

TEST(ShardFormatTest, FixedCodingIsLittleEndian) {
  std::string s;
  PutFixed32LE(&s, 0x01020304u);
  PutFixed64LE(&s, 0x0102030405060708ULL);
  EXPECT_EQ(s, std::string("\x04\x03\x02\x01\x08\x07\x06\x05\x04\x03\x02\x01", 12));
  EXPECT_EQ(DecodeFixed32LE(s.data()), 0x01020304u);
  EXPECT_EQ(DecodeFixed64LE(s.data() + 4), 0x0102030405060708ULL);
}

TEST(ShardFormatTest, HeaderRoundTrip) {
  ShardHeader h = SampleHeader();
  std::string enc = EncodeShardHeader(h);
  EXPECT_EQ(enc.substr(0, 8), "STRATASH");
  auto len = ShardHeaderLength(enc);
  ASSERT_TRUE(len.ok()) << len.status().ToString();
  EXPECT_EQ(*len, enc.size());
  auto dec = DecodeShardHeader(enc);
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  EXPECT_EQ(dec->id, h.id);
  EXPECT_EQ(dec->shard_index, 5u);
  EXPECT_EQ(dec->k, 4u);
  EXPECT_EQ(dec->m, 2u);
  EXPECT_EQ(dec->block_bytes, 1u << 20);
  EXPECT_EQ(dec->data.bucket, h.data.bucket);
  EXPECT_EQ(dec->data.key, h.data.key);
  EXPECT_EQ(dec->data.upload_id, h.data.upload_id);
  EXPECT_EQ(dec->data.part_number, 10000u);
  EXPECT_EQ(dec->data.version_stamp, h.data.version_stamp);
}

TEST(ShardFormatTest, HeaderEmptyFieldsRoundTrip) {
  ShardHeader h;
  h.id = "ab";
  h.k = 1;
  h.block_bytes = 16;
  auto dec = DecodeShardHeader(EncodeShardHeader(h));
  ASSERT_TRUE(dec.ok());
  EXPECT_EQ(dec->id, "ab");
  EXPECT_EQ(dec->data.bucket, "");
  EXPECT_EQ(dec->data.part_number, 0u);
}

TEST(ShardFormatTest, ShardIndexOutsideTheLayoutIsCorruption) {
  ShardHeader h = SampleHeader();
  h.shard_index = h.k + h.m;  // a well-formed, checksummed header of an impossible shard
  auto dec = DecodeShardHeader(EncodeShardHeader(h));
  EXPECT_EQ(dec.status().code(), Code::kCorruption);
  EXPECT_NE(dec.status().message().find("shard index 6 of a 4+2 layout"), std::string::npos)
      << dec.status().ToString();
  h.shard_index = h.k + h.m - 1;
  EXPECT_TRUE(DecodeShardHeader(EncodeShardHeader(h)).ok());
}

TEST(ShardFormatTest, EveryHeaderBitFlipIsDetected) {
  std::string enc = EncodeShardHeader(SampleHeader());
  for (size_t i = 0; i < enc.size(); ++i) {
    for (int bit : {0, 3, 7}) {
      std::string bad = enc;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      auto len = ShardHeaderLength(bad);
      if (!len.ok()) {
        EXPECT_EQ(len.status().code(), Code::kCorruption);
        continue;
      }
      if (*len != bad.size()) continue;  // a changed length is caught by the caller's read
      auto dec = DecodeShardHeader(bad);
      EXPECT_FALSE(dec.ok()) << "flip at byte " << i << " bit " << bit;
    }
  }
}

TEST(ShardFormatTest, TruncatedHeaderIsCorruption) {
  std::string enc = EncodeShardHeader(SampleHeader());
  for (size_t n = 0; n < enc.size(); ++n) {
    auto dec = DecodeShardHeader(enc.substr(0, n));
    ASSERT_FALSE(dec.ok());
    EXPECT_EQ(dec.status().code(), Code::kCorruption);
  }
}

TEST(ShardFormatTest, FooterRoundTrip) {
  for (std::string trailer : {std::string(), std::string("record bytes\0with nul", 21)}) {
    std::string enc = EncodeShardFooter(123456789012ULL, trailer);
    EXPECT_EQ(enc.size(), trailer.size() + kFooterFixed);
    EXPECT_EQ(enc.substr(enc.size() - 8), "STRATAFT");
    auto len = FooterTrailerLength(std::string_view(enc).substr(enc.size() - kFooterFixed));
    ASSERT_TRUE(len.ok());
    EXPECT_EQ(*len, trailer.size());
    auto dec = DecodeShardFooter(enc);
    ASSERT_TRUE(dec.ok()) << dec.status().ToString();
    EXPECT_EQ(dec->object_size, 123456789012ULL);
    EXPECT_EQ(dec->trailer, trailer);
  }
}

TEST(ShardFormatTest, EveryFooterByteFlipIsDetected) {
  std::string enc = EncodeShardFooter(77, "the record");
  for (size_t i = 0; i < enc.size(); ++i) {
    std::string bad = enc;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    EXPECT_FALSE(DecodeShardFooter(bad).ok()) << "flip at " << i;
  }
}

TEST(ShardFormatTest, LayoutGeometry) {
  StripeLayout l{0, 4, 1024};
  EXPECT_EQ(l.stripes(), 0u);
  EXPECT_EQ(l.ShardDataBytes(), 0u);

  l.size = 1;  // one byte: every shard carries one byte (+ its CRC)
  EXPECT_EQ(l.stripes(), 1u);
  EXPECT_EQ(l.BlockLen(0), 1u);
  EXPECT_EQ(l.ShardDataBytes(), 1u + 4);

  l.size = 4 * 1024;  // exactly one stripe
  EXPECT_EQ(l.stripes(), 1u);
  EXPECT_EQ(l.BlockLen(0), 1024u);
  EXPECT_EQ(l.ShardDataBytes(), 1024u + 4);

  l.size = 4 * 1024 + 1;  // a one-byte second stripe
  EXPECT_EQ(l.stripes(), 2u);
  EXPECT_EQ(l.StripeBytes(1), 1u);
  EXPECT_EQ(l.BlockLen(1), 1u);
  EXPECT_EQ(l.BlockOffset(1), 1028u);
  EXPECT_EQ(l.ShardDataBytes(), 1028u + 1 + 4);

  l.size = 5 * 4 * 1024 + 123;  // last stripe 123 bytes -> ceil(123/4) = 31 per shard
  EXPECT_EQ(l.stripes(), 6u);
  EXPECT_EQ(l.BlockLen(5), 31u);
  EXPECT_EQ(l.ShardDataBytes(), 5 * 1028u + 31 + 4);

  l.size = 4 * 1024 - 1;  // ceil((4096-1)/4) = 1024
  EXPECT_EQ(l.BlockLen(0), 1024u);
}

TEST(ShardFormatTest, EightMiBRangesAreWholeBlocks) {
  // 4+2 with 1 MiB blocks: 8 MiB-aligned ranges are exactly two stripes.
  StripeLayout l{64ull << 20, 4, 1 << 20};
  EXPECT_EQ((8ull << 20) % l.stripe_data_bytes(), 0u);
}

DriveFormat SampleFormat() {
  DriveFormat f;
  f.deployment_id = "0011223344556677";
  f.drive_id = "8899aabbccddeeff";
  f.position = 3;
  f.drives = 6;
  f.k = 4;
  f.m = 2;
  f.block_bytes = 1 << 20;
  return f;
}

TEST(ShardFormatTest, TombstoneRoundTripAndDamage) {
  Tombstone t{"0123456789abcdef0123456789abcdef", 0x0102030405060708ull};
  std::string enc = EncodeTombstone(t);
  EXPECT_EQ(enc.substr(0, 8), "STRATATB");
  auto dec = DecodeTombstone(enc);
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  EXPECT_EQ(dec->id, t.id);
  EXPECT_EQ(dec->removed_through, t.removed_through);
  for (size_t i = 0; i < enc.size(); ++i) {
    std::string bad = enc;
    bad[i] ^= 0x20;
    EXPECT_EQ(DecodeTombstone(bad).status().code(), Code::kCorruption) << i;
  }
  for (size_t n = 0; n < enc.size(); ++n) {
    EXPECT_EQ(DecodeTombstone(enc.substr(0, n)).status().code(), Code::kCorruption) << n;
  }
}

TEST(ShardFormatTest, DriveFormatRoundTrip) {
  DriveFormat f = SampleFormat();
  std::string text = EncodeDriveFormat(f);
  EXPECT_EQ(text.substr(0, text.find('\n')), kDriveFormatFirstLine);
  EXPECT_NE(text.find("\nposition=3\n"), std::string::npos);
  auto dec = DecodeDriveFormat(text);
  ASSERT_TRUE(dec.ok()) << dec.status().ToString();
  EXPECT_EQ(dec->deployment_id, f.deployment_id);
  EXPECT_EQ(dec->drive_id, f.drive_id);
  EXPECT_EQ(dec->pool, 0u);
  EXPECT_EQ(dec->set, 0u);
  EXPECT_EQ(dec->position, 3u);
  EXPECT_EQ(dec->drives, 6u);
  EXPECT_EQ(dec->k, 4u);
  EXPECT_EQ(dec->m, 2u);
  EXPECT_EQ(dec->block_bytes, 1u << 20);
}

TEST(ShardFormatTest, DriveFormatDamageIsDetected) {
  std::string text = EncodeDriveFormat(SampleFormat());
  for (size_t n = 0; n < text.size(); ++n) {  // torn
    EXPECT_FALSE(DecodeDriveFormat(text.substr(0, n)).ok()) << n;
  }
  for (size_t i = 0; i < text.size(); ++i) {  // bit flips
    std::string bad = text;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    EXPECT_FALSE(DecodeDriveFormat(bad).ok()) << i;
  }
  DriveFormat f = SampleFormat();
  f.position = 6;  // out of range
  EXPECT_FALSE(DecodeDriveFormat(EncodeDriveFormat(f)).ok());
  f = SampleFormat();
  f.m = 1;  // k + m != drives
  EXPECT_FALSE(DecodeDriveFormat(EncodeDriveFormat(f)).ok());
}

}  // namespace
}  // namespace strata::storage

#include "common/encoding.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace strata {
namespace {

TEST(HexTest, EncodesLowercaseAndDecodesEitherCase) {
  EXPECT_EQ(HexEncode(std::string_view("\x00\x01\xab\xff", 4)), "0001abff");
  EXPECT_EQ(HexEncode(""), "");
  EXPECT_EQ(HexDecode("0001abff"), std::string("\x00\x01\xab\xff", 4));
  EXPECT_EQ(HexDecode("ABFF"), std::string("\xab\xff"));
  EXPECT_EQ(HexDecode(""), std::string());
}

TEST(HexTest, RejectsOddLengthAndNonHex) {
  EXPECT_FALSE(HexDecode("abc").has_value());
  EXPECT_FALSE(HexDecode("zz").has_value());
  EXPECT_FALSE(HexDecode("0g").has_value());
}

TEST(Base64Test, Rfc4648Vectors) {
  // RFC 4648 section 10.
  const std::pair<std::string_view, std::string_view> kVectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : kVectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    EXPECT_EQ(Base64Decode(encoded), std::string(plain)) << encoded;
  }
}

TEST(Base64Test, RoundTripsBinary) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  EXPECT_EQ(Base64Decode(Base64Encode(bytes)), bytes);
}

TEST(Base64Test, RejectsUnpaddedAndForeignCharacters) {
  EXPECT_FALSE(Base64Decode("Zg").has_value());
  EXPECT_FALSE(Base64Decode("Zm9v!A==").has_value());
  EXPECT_FALSE(Base64Decode("Zm 9").has_value());
}

TEST(UriEncodeTest, FollowsAwsRules) {
  EXPECT_EQ(UriEncode("AZaz09-_.~", true), "AZaz09-_.~");
  EXPECT_EQ(UriEncode("a b+c*d%e", true), "a%20b%2Bc%2Ad%25e");
  EXPECT_EQ(UriEncode("dir/file name", false), "dir/file%20name");
  EXPECT_EQ(UriEncode("dir/file", true), "dir%2Ffile");
  EXPECT_EQ(UriEncode("\xc3\xa9", true), "%C3%A9");  // UTF-8 bytes, uppercase hex
}

TEST(UriDecodeTest, DecodesEscapesAndOptionallyPlus) {
  EXPECT_EQ(UriDecode("a%20b%2fc"), "a b/c");
  EXPECT_EQ(UriDecode("a+b"), "a+b");
  EXPECT_EQ(UriDecode("a+b", /*plus_as_space=*/true), "a b");
  EXPECT_EQ(UriDecode("%C3%A9"), "\xc3\xa9");
  EXPECT_EQ(UriDecode("%41"), "A");
}

TEST(UriDecodeTest, RejectsBadEscapes) {
  EXPECT_FALSE(UriDecode("%").has_value());
  EXPECT_FALSE(UriDecode("%4").has_value());
  EXPECT_FALSE(UriDecode("%zz").has_value());
  EXPECT_FALSE(UriDecode("ab%").has_value());
}

TEST(Utf8Test, AcceptsWellFormed) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xc3\xa9"));          // é
  EXPECT_TRUE(IsValidUtf8("\xe2\x82\xac"));      // €
  EXPECT_TRUE(IsValidUtf8("\xf0\x9f\x98\x80"));  // U+1F600
}

TEST(Utf8Test, RejectsMalformed) {
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xe0\x80\xaf"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\x80"));              // stray continuation
  EXPECT_FALSE(IsValidUtf8("\xc3\x28"));          // bad continuation
}

TEST(VarintTest, RoundTripsBoundaries) {
  const uint64_t kValues[] = {0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, UINT64_MAX};
  std::string buf;
  for (uint64_t v : kValues) PutVarint64(&buf, v);
  std::string_view in = buf;
  for (uint64_t v : kValues) {
    uint64_t got = 0;
    ASSERT_TRUE(GetVarint64(&in, &got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(in.empty());
}

TEST(VarintTest, EncodedSizes) {
  std::string buf;
  PutVarint64(&buf, 127);
  EXPECT_EQ(buf.size(), 1u);
  buf.clear();
  PutVarint64(&buf, 128);
  EXPECT_EQ(buf, std::string("\x80\x01", 2));
  buf.clear();
  PutVarint64(&buf, UINT64_MAX);
  EXPECT_EQ(buf.size(), 10u);
}

TEST(VarintTest, RejectsTruncated) {
  std::string buf;
  PutVarint64(&buf, 1u << 20);
  std::string_view in(buf.data(), buf.size() - 1);
  uint64_t v;
  EXPECT_FALSE(GetVarint64(&in, &v));
  std::string_view empty;
  EXPECT_FALSE(GetVarint64(&empty, &v));
}

TEST(VarintTest, RejectsOverlongAndOverflowingForms) {
  uint64_t v;
  // 17 written in two bytes (0x91 0x00): decodes to the same value as "\x11",
  // so a record holding it would not re-encode to its own bytes.
  std::string_view overlong("\x91\x00", 2);
  EXPECT_FALSE(GetVarint64(&overlong, &v));
  std::string_view zero_overlong("\x80\x00", 2);
  EXPECT_FALSE(GetVarint64(&zero_overlong, &v));
  // Ten bytes whose last carries more than the 64th bit.
  std::string_view overflow("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
  EXPECT_FALSE(GetVarint64(&overflow, &v));
  std::string_view max("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
  ASSERT_TRUE(GetVarint64(&max, &v));
  EXPECT_EQ(v, UINT64_MAX);
  std::string_view zero("\x00", 1);
  ASSERT_TRUE(GetVarint64(&zero, &v));
  EXPECT_EQ(v, 0u);
}

TEST(LengthPrefixedTest, RoundTripsAndRejectsShortInput) {
  std::string buf;
  PutLengthPrefixed(&buf, "hello");
  PutLengthPrefixed(&buf, "");
  std::string_view in = buf, out;
  ASSERT_TRUE(GetLengthPrefixed(&in, &out));
  EXPECT_EQ(out, "hello");
  ASSERT_TRUE(GetLengthPrefixed(&in, &out));
  EXPECT_EQ(out, "");
  EXPECT_TRUE(in.empty());

  std::string short_buf;
  PutVarint64(&short_buf, 10);
  short_buf += "abc";
  std::string_view short_in = short_buf;
  EXPECT_FALSE(GetLengthPrefixed(&short_in, &out));
}

TEST(Fixed64Test, BigEndianRoundTrip) {
  std::string buf;
  PutFixed64BE(&buf, 0x0102030405060708ull);
  EXPECT_EQ(buf, std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  EXPECT_EQ(DecodeFixed64BE(buf.data()), 0x0102030405060708ull);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

TEST(Rfc2047Test, DecodesUtf8WordsAndLeavesTheRest) {
  EXPECT_EQ(Rfc2047Decode("plain"), "plain");
  EXPECT_EQ(Rfc2047Decode("=?UTF-8?B?Y2Fmw6k=?="), "caf\xc3\xa9");
  EXPECT_EQ(Rfc2047Decode("=?utf-8?q?caf=C3=A9_au_lait?="), "caf\xc3\xa9 au lait");
  EXPECT_EQ(Rfc2047Decode("a =?UTF-8?B?w6k=?= =?UTF-8?B?w6k=?= b"), "a \xc3\xa9\xc3\xa9 b");
  EXPECT_EQ(Rfc2047Decode("=?ISO-2022-JP?B?abc?="), "=?ISO-2022-JP?B?abc?=");  // not ours
  EXPECT_EQ(Rfc2047Decode("=?UTF-8?B?not base64!?="), "=?UTF-8?B?not base64!?=");
  EXPECT_EQ(Rfc2047Decode("=?UTF-8?Q?bad=Z?="), "=?UTF-8?Q?bad=Z?=");
  EXPECT_EQ(Rfc2047Decode("=?UTF-8?Q?cut="), "=?UTF-8?Q?cut=");
}

TEST(Rfc2047Test, EncodesOnlyWhatIsNotPrintableAscii) {
  EXPECT_EQ(Rfc2047EncodeIfNeeded("max-age=60"), "max-age=60");
  std::string v = "caf\xc3\xa9 \xe6\x9d\xb1\xe4\xba\xac";
  EXPECT_EQ(Rfc2047EncodeIfNeeded(v), "=?UTF-8?B?" + Base64Encode(v) + "?=");
  EXPECT_EQ(Rfc2047Decode(Rfc2047EncodeIfNeeded(v)), v);
  EXPECT_EQ(Rfc2047Decode(Rfc2047EncodeIfNeeded("a\r\nb")), "a\r\nb");
}

}  // namespace
TEST(EncodingTest, AsciiLowerTouchesOnlyAsciiCapitals) {
  EXPECT_EQ(AsciiLower("X-Amz-Date@[`{"), "x-amz-date@[`{");
  EXPECT_EQ(AsciiLower("\xc3\x89T\xe9"), "\xc3\x89t\xe9");  // bytes past ASCII are left alone
  EXPECT_EQ(AsciiLower(""), "");
}

}  // namespace strata

#include "auth/aws_chunked.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "auth/auth_test_util.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/string_source.h"

namespace strata::auth {
namespace {

using namespace testing_util;  // NOLINT(build/namespaces)

// ---- aws-chunked -------------------------------------------------------------

// Reads until the end or an error; what was read so far lands in *out.
Status ReadAll(ByteSource* source, size_t read_size, std::string* out) {
  std::string buf(read_size, '\0');
  while (true) {
    Result<size_t> r = source->Read(buf.data(), buf.size());
    if (!r.ok()) return r.status();
    if (*r == 0) return Status::OK();
    out->append(buf.data(), *r);
  }
}

// Produces chunk and trailer signatures the way a client does.
struct ChunkSigner {
  std::string key = DeriveSigningKey(kAwsSecret, "20130524", "us-east-1", "s3");
  std::string previous;

  std::string Chunk(std::string_view data) {
    previous = Hex(HmacSha256(key, "AWS4-HMAC-SHA256-PAYLOAD\n" + std::string(kAwsDate) + "\n" +
                                       kAwsScope + "\n" + previous + "\n" + kEmptySha256 + "\n" +
                                       Sha256Hex(data)));
    return previous;
  }
  std::string Trailer(std::string_view canonical) {
    previous = Hex(HmacSha256(key, "AWS4-HMAC-SHA256-TRAILER\n" + std::string(kAwsDate) + "\n" +
                                       kAwsScope + "\n" + previous + "\n" + Sha256Hex(canonical)));
    return previous;
  }
};

std::string ChunkHeaderLine(size_t size, std::string_view signature) {
  char hex[32];
  std::snprintf(hex, sizeof(hex), "%zx", size);
  return std::string(hex) + ";chunk-signature=" + std::string(signature) + "\r\n";
}

// "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" body; with trailers, the -TRAILER form.
std::string EncodeSigned(const std::string& seed, const std::vector<std::string>& chunks,
                         const Headers* trailers = nullptr) {
  ChunkSigner signer{.previous = seed};
  std::string body;
  for (const std::string& chunk : chunks) {
    body += ChunkHeaderLine(chunk.size(), signer.Chunk(chunk)) + chunk + "\r\n";
  }
  body += ChunkHeaderLine(0, signer.Chunk(""));
  if (trailers == nullptr) return body + "\r\n";
  std::string canonical;
  for (const auto& [name, value] : *trailers) {
    body += name + ":" + value + "\r\n";
    canonical += name + ":" + value + "\n";
  }
  return body + "x-amz-trailer-signature:" + signer.Trailer(canonical) + "\r\n\r\n";
}

AuthContext StreamingContext(PayloadMode mode, std::string seed = std::string(64, 'a')) {
  AuthContext ctx;
  ctx.access_key = kAwsAccessKey;
  ctx.payload_mode = mode;
  ctx.seed_signature_hex = std::move(seed);
  ctx.signing_key = DeriveSigningKey(kAwsSecret, "20130524", "us-east-1", "s3");
  ctx.amz_date = kAwsDate;
  ctx.scope = kAwsScope;
  return ctx;
}

// "Signature Calculations for the Authorization Header: Transferring Payload
// in Multiple Chunks", Example: PUT Object (66560 bytes of 'a').
constexpr char kAwsSeedSignature[] =
    "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";

Request AwsChunkedPut() {
  return {"PUT",
          "/examplebucket/chunkObject.txt",
          "",
          {{"host", "s3.amazonaws.com"},
           {"x-amz-date", kAwsDate},
           {"x-amz-storage-class", "REDUCED_REDUNDANCY"},
           {"authorization", AwsAuthorization("content-encoding;content-length;host;"
                                              "x-amz-content-sha256;x-amz-date;"
                                              "x-amz-decoded-content-length;x-amz-storage-class",
                                              kAwsSeedSignature)},
           {"x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"},
           {"content-encoding", "aws-chunked"},
           {"x-amz-decoded-content-length", "66560"},
           {"content-length", "66824"}}};
}

std::string AwsChunkedBody() {
  return "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"
         "\r\n" +
         std::string(65536, 'a') +
         "\r\n400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"
         "\r\n" +
         std::string(1024, 'a') +
         "\r\n0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"
         "\r\n\r\n";
}

TEST(AwsChunkedTest, TestSignerReproducesAwsChunkSignatures) {
  EXPECT_EQ(EncodeSigned(kAwsSeedSignature, {std::string(65536, 'a'), std::string(1024, 'a')}),
            AwsChunkedBody());
}

TEST(AwsChunkedTest, AwsExampleEndToEnd) {
  VerifyResult result = VerifyAt(AwsChunkedPut(), kAwsTime);
  ASSERT_TRUE(IsOk(result));
  const AuthContext& ctx = std::get<AuthContext>(result);
  ASSERT_EQ(ctx.payload_mode, PayloadMode::kStreamingSigned);
  ASSERT_EQ(ctx.seed_signature_hex, kAwsSeedSignature);
  ASSERT_EQ(AwsChunkedBody().size(), 66824u);  // the example's Content-Length

  // Every combination of caller read size and raw fragmentation.
  for (size_t read_size : {1, 7, 4096, 65536, 1 << 20}) {
    for (size_t raw_max : {1, 3, 100, 70000}) {
      if (read_size == 1 && raw_max == 1) continue;  // slow and adds nothing
      StringSource raw(AwsChunkedBody(), raw_max);
      AwsChunkedSource source(&raw, ctx, 66560);
      std::string out;
      ASSERT_TRUE(ReadAll(&source, read_size, &out).ok()) << read_size << "/" << raw_max;
      EXPECT_EQ(out, std::string(66560, 'a'));
      EXPECT_TRUE(source.trailers().empty());
      char c;
      Result<size_t> again = source.Read(&c, 1);  // stays at the end
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(*again, 0u);
    }
  }
}

// Passes reads through to `inner`, recording each time how much buffer the
// decoder it feeds holds at that moment.
class WatchingSource : public ByteSource {
 public:
  explicit WatchingSource(ByteSource* inner) : inner_(inner) {}
  void Watch(const AwsChunkedSource* decoder) { decoder_ = decoder; }
  size_t max_capacity() const { return max_capacity_; }
  Result<size_t> Read(char* buf, size_t n) override {
    if (decoder_ != nullptr) max_capacity_ = std::max(max_capacity_, decoder_->buffer_capacity());
    return inner_->Read(buf, n);
  }

 private:
  ByteSource* inner_;
  const AwsChunkedSource* decoder_ = nullptr;
  size_t max_capacity_ = 0;
};

TEST(AwsChunkedTest, DeclaredChunkSizeIsNotAllocatedBeforeItsBytesArrive) {
  // A client declares the largest signed chunk (16 MiB), sends a little of
  // it, and stalls (the HTTP layer then reports a timeout): the decoder holds
  // about what arrived, not what was declared.
  constexpr size_t kDeclared = 16 << 20;
  const std::string seed(64, 'a');
  for (size_t sent : {size_t{16}, size_t{1} << 20}) {
    StringSource stalling(ChunkHeaderLine(kDeclared, std::string(64, 'b')) + std::string(sent, 'x'),
                          std::numeric_limits<size_t>::max(), DeadlineExceeded("client stalled"));
    WatchingSource raw(&stalling);
    AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingSigned, seed), kDeclared);
    raw.Watch(&source);
    std::string out;
    EXPECT_EQ(ReadAll(&source, 4096, &out).code(), Code::kDeadlineExceeded);
    EXPECT_TRUE(out.empty());  // nothing of an unverified chunk
    EXPECT_LE(raw.max_capacity(), 2 * sent + (256 << 10)) << sent;
    EXPECT_LE(source.buffer_capacity(), 2 * sent + (256 << 10)) << sent;
  }
}

TEST(AwsChunkedTest, BadChunkSignatureReleasesNoBytesOfThatChunk) {
  std::string body = AwsChunkedBody();
  body[body.find("0055627c") + 3] = '6';
  StringSource raw(body);
  AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingSigned, kAwsSeedSignature),
                          66560);
  std::string out;
  Status s = ReadAll(&source, 4096, &out);
  EXPECT_EQ(s.code(), Code::kPermissionDenied);
  EXPECT_EQ(out.size(), 65536u);  // only the first, verified chunk
  char c;
  EXPECT_EQ(source.Read(&c, 1).status().code(), Code::kPermissionDenied);  // sticky
}

TEST(AwsChunkedTest, TamperedDataOrWrongSeedFails) {
  std::string body = AwsChunkedBody();
  body[body.size() - 200] = 'b';  // inside the second chunk's data
  StringSource raw(body);
  AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingSigned, kAwsSeedSignature),
                          66560);
  std::string out;
  EXPECT_EQ(ReadAll(&source, 4096, &out).code(), Code::kPermissionDenied);

  StringSource raw2(AwsChunkedBody());
  AwsChunkedSource wrong_seed(&raw2, StreamingContext(PayloadMode::kStreamingSigned), 66560);
  out.clear();
  EXPECT_EQ(ReadAll(&wrong_seed, 4096, &out).code(), Code::kPermissionDenied);
  EXPECT_TRUE(out.empty());
}

TEST(AwsChunkedTest, TruncatedBodyIsOutOfRange) {
  const std::string body = AwsChunkedBody();
  for (size_t cut : {size_t{0}, size_t{10}, size_t{90}, size_t{40000}, size_t{65626},
                     body.size() - 30, body.size() - 2, body.size() - 1}) {
    StringSource raw(body.substr(0, cut));
    AwsChunkedSource source(
        &raw, StreamingContext(PayloadMode::kStreamingSigned, kAwsSeedSignature), 66560);
    std::string out;
    EXPECT_EQ(ReadAll(&source, 4096, &out).code(), Code::kOutOfRange) << cut;
  }
}

TEST(AwsChunkedTest, RawErrorsPassThrough) {
  const std::string body = AwsChunkedBody();
  StringSource raw(body.substr(0, 1000), 512, Aborted("peer reset"));
  AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingSigned, kAwsSeedSignature),
                          66560);
  std::string out;
  EXPECT_EQ(ReadAll(&source, 4096, &out).code(), Code::kAborted);
}

TEST(AwsChunkedTest, DecodedLengthMustMatch) {
  for (uint64_t declared : {66559u, 66561u, 0u, 1000000u}) {
    StringSource raw(AwsChunkedBody());
    AwsChunkedSource source(
        &raw, StreamingContext(PayloadMode::kStreamingSigned, kAwsSeedSignature), declared);
    std::string out;
    EXPECT_EQ(ReadAll(&source, 4096, &out).code(), Code::kOutOfRange) << declared;
    EXPECT_LE(out.size(), declared);
  }
}

TEST(AwsChunkedTest, MalformedFramingIsInvalidArgument) {
  const std::string seed(64, 'a');
  std::string sig(64, 'b');
  const std::string bad_bodies[] = {
      "zz;chunk-signature=" + sig + "\r\nab\r\n",   // size not hex
      ";chunk-signature=" + sig + "\r\n",           // no size
      "123456789;chunk-signature=" + sig + "\r\n",  // size too long
      "2\r\nab\r\n",                                // signed mode, no signature
      "2;chunk-signature=abc\r\nab\r\n",            // short signature
      "2;chunk-sig=" + sig + "\r\nab\r\n",          // wrong extension
      "2;chunk-signature=" + sig + "\nab\r\n",      // bare LF
      "1000001;chunk-signature=" + sig + "\r\n",    // > 16 MiB signed chunk
      std::string(5000, '1'),                       // endless header line
  };
  for (const std::string& body : bad_bodies) {
    StringSource raw(body);
    AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingSigned, seed), 1 << 30);
    std::string out;
    const Status st = ReadAll(&source, 4096, &out);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << body.substr(0, 40);
    EXPECT_EQ(st.detail(), Detail::kNone) << "framing, not the trailer: " << st.ToString();
  }
}

TEST(AwsChunkedTest, MissingCrlfAfterDataOrTrailingGarbage) {
  const std::string seed(64, 'a');
  std::string good = EncodeSigned(seed, {"hello"});
  std::string no_crlf = good;
  no_crlf.erase(no_crlf.find("hello") + 5, 2);
  std::string garbage = good.substr(0, good.size() - 2) + "x-amz-checksum-crc32:AAAAAA==\r\n\r\n";
  for (const std::string& body : {no_crlf, garbage}) {
    StringSource raw(body);
    AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingSigned, seed), 5);
    std::string out;
    EXPECT_EQ(ReadAll(&source, 4096, &out).code(), Code::kInvalidArgument);
  }
}

TEST(AwsChunkedTest, NonStreamingModeIsRejected) {
  StringSource raw("0\r\n\r\n");
  AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kSignedPayload), 0);
  char c;
  EXPECT_EQ(source.Read(&c, 1).status().code(), Code::kInvalidArgument);
}

TEST(AwsChunkedTest, EmptyBody) {
  const std::string seed(64, 'c');
  StringSource raw(EncodeSigned(seed, {}));
  AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingSigned, seed), 0);
  std::string out;
  EXPECT_TRUE(ReadAll(&source, 10, &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(AwsChunkedTest, SignedTrailers) {
  const std::string seed(64, 'd');
  const Headers trailers = {{"x-amz-checksum-crc32c", "sOO8/Q=="}};
  const std::string body = EncodeSigned(seed, {std::string(9000, 'x'), "tail"}, &trailers);
  for (size_t raw_max : {1, 5, 1 << 20}) {
    StringSource raw(body, raw_max);
    AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingSignedTrailer, seed),
                            9004);
    std::string out;
    ASSERT_TRUE(ReadAll(&source, 1000, &out).ok()) << raw_max;
    EXPECT_EQ(out, std::string(9000, 'x') + "tail");
    EXPECT_EQ(source.trailers(), trailers);
  }
}

TEST(AwsChunkedTest, SignedTrailerFailures) {
  const std::string seed(64, 'd');
  const Headers trailers = {{"x-amz-checksum-crc32c", "sOO8/Q=="}};
  const std::string body = EncodeSigned(seed, {"data"}, &trailers);

  std::string tampered = body;
  tampered.replace(tampered.find("sOO8"), 4, "sOO9");
  std::string unsigned_trailer = body;
  size_t sig_at = unsigned_trailer.find("x-amz-trailer-signature");
  unsigned_trailer.erase(sig_at, unsigned_trailer.find("\r\n", sig_at) + 2 - sig_at);
  std::string after_signature = body.substr(0, body.size() - 2) + "x-late:1\r\n\r\n";

  // A malformed trailer section says so by its Detail (s3 answers it with
  // MalformedTrailerError); a bad trailer signature is a signature failure.
  const std::tuple<std::string, Code, Detail> kCases[] = {
      {tampered, Code::kPermissionDenied, Detail::kNone},
      {unsigned_trailer, Code::kInvalidArgument, Detail::kTrailer},
      {after_signature, Code::kInvalidArgument, Detail::kTrailer}};
  for (const auto& [bad, code, detail] : kCases) {
    StringSource raw(bad);
    AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingSignedTrailer, seed), 4);
    std::string out;
    const Status st = ReadAll(&source, 1000, &out);
    EXPECT_EQ(st.code(), code) << st.ToString();
    EXPECT_EQ(st.detail(), detail) << st.ToString();
  }
}

TEST(AwsChunkedTest, CorruptedBodiesReleaseOnlyVerifiedBytes) {
  // One random byte changed per round: whatever happens, the bytes handed out
  // are a prefix of the true data, and success means all of it.
  const std::string seed(64, 'e');
  const std::string data = "0123456789abcdef";
  const Headers trailers = {{"x-amz-checksum-sha256", "abc="}};
  const std::string body = EncodeSigned(seed, {data.substr(0, 10), data.substr(10)}, &trailers);
  std::mt19937 rng(42);
  for (int round = 0; round < 3000; ++round) {
    std::string bad = body;
    bad[rng() % bad.size()] = static_cast<char>(rng());
    StringSource raw(bad, 1 + rng() % 7);
    AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingSignedTrailer, seed),
                            data.size());
    std::string out;
    Status s = ReadAll(&source, 1 + rng() % 5, &out);
    ASSERT_EQ(data.compare(0, out.size(), out), 0) << round;
    if (s.ok()) {
      ASSERT_EQ(out, data) << round;
    }
  }
}

TEST(AwsChunkedTest, UnsignedTrailerFromBotocore) {
  // botocore.httpchecksum.AwsChunkedWrapper(io.BytesIO(b"strata " * 3),
  //   checksum_cls=Crc32Checksum, checksum_name="x-amz-checksum-crc32", chunk_size=8).read()
  const std::string body =
      "8\r\nstrata s\r\n8\r\ntrata st\r\n5\r\nrata \r\n0\r\nx-amz-checksum-crc32:PiSHyA==\r\n\r\n";
  for (size_t raw_max : {1, 2, 1 << 20}) {
    for (size_t read_size : {1, 3, 64}) {
      StringSource raw(body, raw_max);
      AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingUnsignedTrailer), 21);
      std::string out;
      ASSERT_TRUE(ReadAll(&source, read_size, &out).ok());
      EXPECT_EQ(out, "strata strata strata ");
      EXPECT_EQ(source.trailers(), (Headers{{"x-amz-checksum-crc32", "PiSHyA=="}}));
    }
  }
}

TEST(AwsChunkedTest, UnsignedTrailerVariants) {
  const auto decode = [](const std::string& body, uint64_t length, std::string* out) {
    StringSource raw(body);
    AwsChunkedSource source(&raw, StreamingContext(PayloadMode::kStreamingUnsignedTrailer), length);
    return ReadAll(&source, 64, out);
  };
  std::string out;
  // Bare LF trailer lines and no trailers at all are both accepted.
  EXPECT_TRUE(decode("3\r\nabc\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\n\n", 3, &out).ok());
  EXPECT_TRUE(decode("3\r\nabc\r\n0\r\n\r\n", 3, &out).ok());
  EXPECT_EQ(decode("3\r\nabc\r\n0\r\n\r\n", 4, &out).code(), Code::kOutOfRange);
  EXPECT_EQ(decode("3\r\nabc\r\n0\r\n\r\n", 2, &out).code(), Code::kOutOfRange);
  EXPECT_EQ(decode("3\r\nab", 3, &out).code(), Code::kOutOfRange);
  EXPECT_EQ(decode("3\r\nabcX\r\n0\r\n\r\n", 3, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(decode("3\r\nabc\r\n0\r\nno-colon\r\n\r\n", 3, &out).code(), Code::kInvalidArgument);
  EXPECT_EQ(decode("3\r\nabc\r\n0\r\nx-amz-trailer-signature:" + std::string(64, 'a') + "\r\n\r\n",
                   3, &out)
                .code(),
            Code::kInvalidArgument);  // nothing to verify a signature against
}

}  // namespace
}  // namespace strata::auth

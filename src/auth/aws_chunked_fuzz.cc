// libFuzzer target: aws-chunked bodies (auth/aws_chunked.h) in the three
// streaming modes, with the fixed signing context of AWS's SigV4 streaming
// example (secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, 20130524,
// us-east-1). input[0]: bits 0-1 the mode (3: build mode), bits 2-4 the raw
// read piece limit, bits 5-7 the consumer's read size limit.
//   raw mode:   input = control, "<x-amz-decoded-content-length>\n", body.
//   build mode: input = control, sub-mode byte, then chunks as <len byte><len
//               bytes>; a zero length ends them and the rest is trailer lines
//               "name:value\n". The target frames and SIGNS the body itself, so
//               the verified paths are reached; it must decode to exactly the
//               chunks and trailers. Then one fuzz-chosen byte of the body is
//               changed: a signed body may then fail, but must never decode
//               successfully to other data (integrity of the signature chain).
// Seeds: tests/fuzz/aws_chunked/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/aws_chunked.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "fuzz_util.h"

namespace {

using strata::auth::AuthContext;
using strata::auth::AwsChunkedSource;
using strata::auth::PayloadMode;
using Trailers = std::vector<std::pair<std::string, std::string>>;

constexpr std::string_view kAmzDate = "20130524T000000Z";
constexpr std::string_view kScope = "20130524/us-east-1/s3/aws4_request";
constexpr std::string_view kSeedSignature =
    "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const std::string& SigningKey() {
  static const std::string key = strata::auth::DeriveSigningKey(
      "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "20130524", "us-east-1", "s3");
  return key;
}

AuthContext Context(PayloadMode mode) {
  AuthContext ctx;
  ctx.payload_mode = mode;
  ctx.seed_signature_hex = std::string(kSeedSignature);
  ctx.signing_key = SigningKey();
  ctx.amz_date = std::string(kAmzDate);
  ctx.scope = std::string(kScope);
  return ctx;
}

PayloadMode ModeOf(uint8_t m) {
  static constexpr PayloadMode kModes[] = {PayloadMode::kStreamingSigned,
                                           PayloadMode::kStreamingSignedTrailer,
                                           PayloadMode::kStreamingUnsignedTrailer};
  return kModes[m % 3];
}

struct Decoded {
  bool ok = false;
  std::string data;
  Trailers trailers;
};

Decoded Decode(std::string_view body, PayloadMode mode, uint64_t decoded_length, uint8_t control) {
  strata::fuzz::SplitSource raw(body, control, strata::fuzz::MaxPiece(control >> 2));
  AwsChunkedSource src(&raw, Context(mode), decoded_length);
  strata::fuzz::Rng reads(control);
  const size_t max_read = strata::fuzz::MaxPiece(control >> 5);
  Decoded out;
  std::string buf(64 << 10, '\0');
  while (true) {
    size_t want = std::min(buf.size(), reads.Size(max_read));
    auto n = src.Read(buf.data(), want);
    // Buffers grow with the bytes that arrived, never with declared sizes
    // (std::string may double its capacity; reads are 16 KiB).
    FUZZ_CHECK(src.buffer_capacity() <= 2 * raw.consumed() + 4 * 16384 + 64);
    if (!n.ok()) {
      // Errors are sticky: the next read says the same.
      auto again = src.Read(buf.data(), want);
      FUZZ_CHECK(!again.ok() && again.status().code() == n.status().code());
      return out;
    }
    FUZZ_CHECK(*n <= want);
    if (*n == 0) break;
    out.data.append(buf.data(), *n);
    FUZZ_CHECK(out.data.size() <= decoded_length);
  }
  out.ok = true;
  out.trailers = src.trailers();
  // The decoded body has exactly the declared length.
  FUZZ_CHECK(out.data.size() == decoded_length);
  return out;
}

std::string Sign(std::string_view string_to_sign) {
  auto mac = strata::HmacSha256(SigningKey(), string_to_sign);
  return strata::HexEncode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

std::string ChunkSignature(std::string* previous, std::string_view data) {
  std::string sts = "AWS4-HMAC-SHA256-PAYLOAD\n" + std::string(kAmzDate) + "\n" +
                    std::string(kScope) + "\n" + *previous + "\n" + std::string(kEmptySha256) +
                    "\n" + strata::Sha256Hex(data);
  *previous = Sign(sts);
  return *previous;
}

std::string Hex(size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), kDigits[n % 16]);
    n /= 16;
  } while (n > 0);
  return s;
}

// Frames (and, in signed modes, signs) chunks + trailers the way SDKs do.
std::string Build(PayloadMode mode, const std::vector<std::string_view>& chunks,
                  const Trailers& trailers) {
  const bool is_signed = mode != PayloadMode::kStreamingUnsignedTrailer;
  const bool has_trailers = mode != PayloadMode::kStreamingSigned;
  std::string previous(kSeedSignature);
  std::string body;
  auto header = [&](std::string_view data) {
    body += Hex(data.size());
    if (is_signed) body += ";chunk-signature=" + ChunkSignature(&previous, data);
    body += "\r\n";
  };
  for (std::string_view c : chunks) {
    header(c);
    body.append(c);
    body += "\r\n";
  }
  header("");
  if (has_trailers) {
    std::string canonical;
    for (const auto& [name, value] : trailers) {
      body += name + ":" + value + "\r\n";
      canonical += name + ":" + value + "\n";
    }
    if (is_signed) {
      std::string sts = "AWS4-HMAC-SHA256-TRAILER\n" + std::string(kAmzDate) + "\n" +
                        std::string(kScope) + "\n" + previous + "\n" + strata::Sha256Hex(canonical);
      body += "x-amz-trailer-signature:" + Sign(sts) + "\r\n";
    }
  }
  body += "\r\n";
  return body;
}

// Trailer lines from text: names reduced to [a-z0-9-], values to printable
// ASCII without surrounding blanks (what the decoder canonicalizes to).
Trailers ParseTrailerText(std::string_view text) {
  Trailers out;
  while (!text.empty() && out.size() < 16) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name, value;
    for (char c : line.substr(0, colon)) {
      if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') name.push_back(c);
    }
    for (char c : line.substr(colon + 1)) {
      if (c > ' ' && c < 0x7f) value.push_back(c);
    }
    if (name.empty() || name == "x-amz-trailer-signature") continue;
    out.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

void BuildMode(std::string_view in, uint8_t control) {
  if (in.empty()) return;
  const PayloadMode mode = ModeOf(static_cast<uint8_t>(in[0]));
  const uint8_t flip_seed = static_cast<uint8_t>(in[0]) >> 2;
  in.remove_prefix(1);
  std::vector<std::string_view> chunks;
  std::string expected;
  while (!in.empty()) {
    size_t len = static_cast<uint8_t>(in[0]);
    in.remove_prefix(1);
    if (len == 0) break;
    std::string_view c = in.substr(0, len);
    in.remove_prefix(c.size());
    if (c.empty()) break;  // a zero-size chunk is the final one
    chunks.push_back(c);
    expected.append(c);
  }
  Trailers trailers;
  if (mode != PayloadMode::kStreamingSigned) trailers = ParseTrailerText(in);
  std::string body = Build(mode, chunks, trailers);
  Decoded d = Decode(body, mode, expected.size(), control);
  FUZZ_CHECK(d.ok);
  FUZZ_CHECK(d.data == expected);
  FUZZ_CHECK(d.trailers == trailers);
  if (mode == PayloadMode::kStreamingUnsignedTrailer || body.empty()) return;
  // One changed byte: fail, or decode to the very same payload and trailers.
  strata::fuzz::Rng pick(flip_seed + body.size());
  size_t at = pick.Next() % body.size();
  char flipped = static_cast<char>(body[at] ^ (1 + pick.Next() % 255));
  body[at] = flipped;
  Decoded m = Decode(body, mode, expected.size(), control);
  if (m.ok) {
    FUZZ_CHECK(m.data == expected);
    FUZZ_CHECK(m.trailers == trailers);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t control = data[0];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((control & 3) == 3) {
    BuildMode(in, control);
    return 0;
  }
  size_t nl = in.find('\n');
  if (nl == std::string_view::npos || nl == 0 || nl > 19) return 0;
  uint64_t decoded_length = 0;
  for (char c : in.substr(0, nl)) {
    if (c < '0' || c > '9') return 0;
    decoded_length = decoded_length * 10 + static_cast<uint64_t>(c - '0');
  }
  Decode(in.substr(nl + 1), ModeOf(control & 3), decoded_length, control);
  return 0;
}

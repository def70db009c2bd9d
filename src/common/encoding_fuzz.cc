// libFuzzer target: the text and binary codings every parser builds on
// (common/encoding.h): hex, strict base64, URI percent-coding, UTF-8
// validation (against an independent table-driven reference: Unicode 15,
// table 3-7 "well-formed UTF-8 byte sequences"), varints and
// length-prefixed strings, RFC 2047 encoded-words (user metadata). input[0] % 6
// picks the coding.
// Seeds: tests/fuzz/encoding/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/encoding.h"
#include "fuzz_util.h"

namespace {

// Table 3-7: lead byte ranges and the allowed range of the second byte.
bool ReferenceUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    int n;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
    if (c <= 0x7F) { ++i; continue; }
    if (c >= 0xC2 && c <= 0xDF) n = 1;
    else if (c == 0xE0) { n = 2; lo = 0xA0; }
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) n = 2;
    else if (c == 0xED) { n = 2; hi = 0x9F; }
    else if (c == 0xF0) { n = 3; lo = 0x90; }
    else if (c >= 0xF1 && c <= 0xF3) n = 3;
    else if (c == 0xF4) { n = 3; hi = 0x8F; }
    else return false;
    if (i + n >= s.size()) return false;
    for (int k = 1; k <= n; ++k) {
      unsigned char cc = s[i + k];
      unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
      if (cc < l || cc > h) return false;
    }
    i += n + 1;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 6) {
    case 0: {
      std::string hex = strata::HexEncode(in);
      FUZZ_CHECK(strata::HexDecode(hex) == std::string(in));
      if (auto raw = strata::HexDecode(in)) {
        FUZZ_CHECK(raw->size() * 2 == in.size());
        FUZZ_CHECK(strata::AsciiLower(strata::HexEncode(*raw)) == strata::AsciiLower(in));
      }
      break;
    }
    case 1: {
      std::string b64 = strata::Base64Encode(in);
      FUZZ_CHECK(b64.size() % 4 == 0);
      FUZZ_CHECK(strata::Base64Decode(b64) == std::string(in));
      if (auto raw = strata::Base64Decode(in)) {
        FUZZ_CHECK(raw->size() <= in.size() * 3 / 4);
        // Non-canonical padding bits aside, decoding is stable.
        FUZZ_CHECK(strata::Base64Decode(strata::Base64Encode(*raw)) == *raw);
      }
      break;
    }
    case 2: {
      for (bool slash : {false, true}) {
        std::string enc = strata::UriEncode(in, slash);
        FUZZ_CHECK(strata::UriDecode(enc) == std::string(in));
        FUZZ_CHECK(strata::UriDecode(enc, true) == std::string(in));
      }
      if (auto dec = strata::UriDecode(in, true)) FUZZ_CHECK(dec->size() <= in.size());
      break;
    }
    case 3:
      FUZZ_CHECK(strata::IsValidUtf8(in) == ReferenceUtf8(in));
      break;
    case 5: {
      std::string decoded = strata::Rfc2047Decode(in);
      (void)strata::Rfc2047EncodeIfNeeded(decoded);
      // Whatever the encoder writes decodes back, unless the text was ASCII
      // that already looks like an encoded word (it is sent as it is).
      std::string enc = strata::Rfc2047EncodeIfNeeded(in);
      if (in.find("=?") == std::string_view::npos || enc != std::string(in)) {
        FUZZ_CHECK(strata::Rfc2047Decode(enc) == std::string(in));
      }
      break;
    }
    case 4: {
      std::string_view rest = in;
      uint64_t v;
      std::string_view s;
      while (!rest.empty()) {
        std::string_view before = rest;
        if (!strata::GetVarint64(&rest, &v)) break;
        std::string enc;
        strata::PutVarint64(&enc, v);
        std::string_view e = enc;
        uint64_t back;
        FUZZ_CHECK(strata::GetVarint64(&e, &back) && back == v && e.empty());
        FUZZ_CHECK(before.size() - rest.size() == enc.size());  // only the shortest form decodes
        std::string_view lp = before;
        if (strata::GetLengthPrefixed(&lp, &s)) FUZZ_CHECK(s.size() <= before.size());
      }
      break;
    }
  }
  return 0;
}

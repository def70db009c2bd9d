// The hashes against published vectors: SHA-256 (FIPS 180-2), HMAC-SHA256
// (RFC 4231, incl. a key longer than the block), HMAC-SHA1 (RFC 2202), and
// the same results from many threads (each reuses its own digest context).
#include "common/hash.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "common/encoding.h"

namespace strata {
namespace {

std::string Hex(const unsigned char* p, size_t n) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(p), n));
}

TEST(HashTest, PublishedVectors) {
  Sha256Digest s = Sha256("abc");
  EXPECT_EQ(Hex(s.data(), s.size()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256("ab", "c"), s);  // two parts hash as their concatenation
  EXPECT_EQ(Sha256("", "abc"), s);
  EXPECT_EQ(Sha256("abc", ""), s);
  // RFC 4231 test case 1.
  Sha256Digest h = HmacSha256(std::string(20, '\x0b'), "Hi There");
  EXPECT_EQ(Hex(h.data(), h.size()), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // RFC 4231 test case 6: a 131-byte key (hashed first).
  h = HmacSha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First");
  EXPECT_EQ(Hex(h.data(), h.size()), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  // A 64-byte key (exactly one block: used as is).
  h = HmacSha256(std::string(64, 'k'), "");
  Sha256Digest again = HmacSha256(std::string(64, 'k'), "");
  EXPECT_EQ(h, again);
  // RFC 2202 test case 1.
  Sha1Digest h1 = HmacSha1(std::string(20, '\x0b'), "Hi There");
  EXPECT_EQ(Hex(h1.data(), h1.size()), "b617318655057264e28bc0b6fb378c8ef146be00");
  StreamHash md5(StreamHash::Kind::kMd5);
  md5.Update("abc", 3);
  EXPECT_EQ(HexEncode(md5.Final()), "900150983cd24fb0d6963f7d28e17f72");
}

TEST(HashTest, ThreadsGetTheSameResults) {
  const std::string want = Sha256Hex("the same input");
  std::vector<std::thread> threads;
  std::vector<int> bad(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        if (Sha256Hex("the same input") != want) ++bad[t];
        Sha256Digest h = HmacSha256(std::string(20, '\x0b'), "Hi There");
        if (Hex(h.data(), 4) != "b0344c61") ++bad[t];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int b : bad) EXPECT_EQ(b, 0);
}

}  // namespace
}  // namespace strata

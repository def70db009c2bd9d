#include <gtest/gtest.h>

#include "common/hash.h"
#include "crypto/chunk_cipher.h"
#include "crypto/secret_box.h"

namespace strata::crypto {
namespace {

TEST(SecretBoxTest, SealOpenAndTamper) {
  std::string key = RandomBytes(kSecretBoxKeyBytes);
  std::string sealed = Seal(key, "the secret", "AKIAEXAMPLE");
  EXPECT_EQ(Open(key, sealed, "AKIAEXAMPLE"), "the secret");
  EXPECT_FALSE(Open(key, sealed, "AKIAOTHER"));  // bound to its access key
  EXPECT_FALSE(Open(RandomBytes(kSecretBoxKeyBytes), sealed, "AKIAEXAMPLE"));
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string bad = sealed;
    bad[i] ^= 1;
    EXPECT_FALSE(Open(key, bad, "AKIAEXAMPLE")) << i;
  }
  EXPECT_FALSE(Open(key, sealed.substr(0, 10), "AKIAEXAMPLE"));
  EXPECT_NE(Seal(key, "the secret", "AKIAEXAMPLE"), sealed);  // a fresh nonce each time
}

TEST(ChunkCipherTest, SizesOfEverySizeClass) {
  EXPECT_EQ(SealedSize(0), 0u);
  EXPECT_EQ(ChunkCount(0), 0u);
  EXPECT_EQ(SealedSize(1), 1u + kTagBytes);
  EXPECT_EQ(SealedSize(kChunkBytes), kChunkBytes + kTagBytes);
  EXPECT_EQ(SealedSize(kChunkBytes + 1), kChunkBytes + 1 + 2 * kTagBytes);
  EXPECT_EQ(ChunkCount(3 * kChunkBytes), 3u);
}

class ChunkCipherFixture : public ::testing::Test {
 protected:
  std::string key_ = RandomBytes(kDataKeyBytes);
  std::string salt_ = RandomBytes(kSaltBytes);
  std::string Sealed(ChunkCipher& c, uint64_t index, bool last, std::string_view plain) {
    std::string out(plain.size() + kTagBytes, '\0');
    c.Seal(index, last, plain, out.data());
    return out;
  }
};

TEST_F(ChunkCipherFixture, OpensWhatItSealedAndNothingElse) {
  ChunkCipher seal(key_, salt_, "bucket/key");
  const std::string plain = "the quick brown fox jumps over the lazy dog";
  const std::string sealed = Sealed(seal, 7, false, plain);
  EXPECT_EQ(sealed.find("quick"), std::string::npos);
  ChunkCipher open(key_, salt_, "bucket/key");
  std::string out(plain.size(), '\0');
  ASSERT_TRUE(open.Open(7, false, sealed, out.data()));
  EXPECT_EQ(out, plain);
  // Another place, another flag, another object, key or salt: refused.
  EXPECT_FALSE(open.Open(8, false, sealed, out.data()));
  EXPECT_EQ(out, std::string(plain.size(), '\0'));  // nothing unverified left in the buffer
  EXPECT_FALSE(open.Open(7, true, sealed, out.data()));
  ChunkCipher other_object(key_, salt_, "bucket/other");
  EXPECT_FALSE(other_object.Open(7, false, sealed, out.data()));
  ChunkCipher other_salt(key_, RandomBytes(kSaltBytes), "bucket/key");
  EXPECT_FALSE(other_salt.Open(7, false, sealed, out.data()));
  ChunkCipher other_key(RandomBytes(kDataKeyBytes), salt_, "bucket/key");
  EXPECT_FALSE(other_key.Open(7, false, sealed, out.data()));
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string bad = sealed;
    bad[i] ^= 0x40;
    EXPECT_FALSE(open.Open(7, false, bad, out.data())) << i;
  }
  EXPECT_FALSE(open.Open(7, false, sealed.substr(0, sealed.size() - 1), out.data()));
}

TEST_F(ChunkCipherFixture, FileKeysDifferPerSaltSoNoncesNeverRepeat) {
  ChunkCipher a(key_, salt_, "b/k");
  ChunkCipher b(key_, RandomBytes(kSaltBytes), "b/k");
  const std::string plain(1000, 'x');
  EXPECT_NE(Sealed(a, 0, true, plain), Sealed(b, 0, true, plain));
  EXPECT_NE(a.MaskedEtag(std::string(16, '\1')), b.MaskedEtag(std::string(16, '\1')));
  EXPECT_EQ(a.MaskedEtag(std::string(16, '\1')).size(), 16u);
}

TEST(CustomerKeyDigestTest, RecognisesTheKeyOnlyWithItsSalt) {
  const std::string key = RandomBytes(32), salt = RandomBytes(kSaltBytes);
  EXPECT_EQ(CustomerKeyDigest(salt, key), CustomerKeyDigest(salt, key));
  EXPECT_NE(CustomerKeyDigest(salt, key), CustomerKeyDigest(RandomBytes(kSaltBytes), key));
  EXPECT_NE(CustomerKeyDigest(salt, key), CustomerKeyDigest(salt, RandomBytes(32)));
  EXPECT_EQ(CustomerKeyDigest(salt, key).find(key), std::string::npos);
}

}  // namespace
}  // namespace strata::crypto

#include "kms/key_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common/hash.h"
#include "meta/kv_store.h"

namespace strata::kms {
namespace {

class KeyServiceTest : public ::testing::Test {
 protected:
  std::unique_ptr<KeyService> OpenService(std::string key = "") {
    auto s = KeyService::Open(kv_.get(), key.empty() ? operator_key_ : key, "us-east-1", "123456789012");
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  std::unique_ptr<meta::KvStore> kv_ = meta::NewMemStore();
  std::string operator_key_ = RandomBytes(kOperatorKeyBytes);
};

TEST_F(KeyServiceTest, WrapsAndUnwrapsBoundToKeyAndContext) {
  auto s = OpenService();
  auto key = s->CreateKey("alias/team-a", "training data");
  ASSERT_TRUE(key.ok()) << key.status().message();
  EXPECT_EQ(key->arn, "arn:aws:kms:us-east-1:123456789012:key/" + key->id);
  auto dk = s->GenerateDataKey("alias/team-a", "ctx-1");
  ASSERT_TRUE(dk.ok());
  EXPECT_EQ(dk->plaintext.size(), 32u);
  EXPECT_EQ(dk->key_arn, key->arn);
  EXPECT_EQ(dk->wrapped.find(dk->plaintext), std::string::npos);
  EXPECT_EQ(KeyService::KeyIdOf(dk->wrapped), key->id);
  auto back = s->Decrypt(dk->wrapped, "ctx-1");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, dk->plaintext);
  auto other_context = s->Decrypt(dk->wrapped, "ctx-2");
  ASSERT_FALSE(other_context.ok());
  EXPECT_EQ(other_context.status().detail(), Detail::kKmsCiphertext);
  std::string altered = dk->wrapped;
  altered.back() ^= 1;
  EXPECT_EQ(s->Decrypt(altered, "ctx-1").status().detail(), Detail::kKmsCiphertext);
  // Every way to name it.
  for (const std::string& ref : {key->id, key->arn, std::string("alias/team-a"),
                                 std::string("arn:aws:kms:us-east-1:123456789012:alias/team-a")}) {
    auto d = s->Describe(ref);
    ASSERT_TRUE(d.ok()) << ref;
    EXPECT_EQ(d->id, key->id);
  }
  EXPECT_EQ(s->GenerateDataKey("alias/nope", "").status().detail(), Detail::kKmsKey);
  EXPECT_EQ(s->CreateKey("alias/team-a", "").status().code(), Code::kAlreadyExists);
  EXPECT_EQ(s->CreateKey("alias/aws/mine", "").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(s->CreateKey("noalias", "").status().code(), Code::kInvalidArgument);
}

TEST_F(KeyServiceTest, RotationKeepsOldDataKeysReadableAndSurvivesReopen) {
  std::string wrapped_before, plain_before, wrapped_after;
  std::string id;
  {
    auto s = OpenService();
    auto key = s->CreateKey("", "");
    ASSERT_TRUE(key.ok());
    id = key->id;
    auto dk = s->GenerateDataKey(id, "c");
    ASSERT_TRUE(dk.ok());
    wrapped_before = dk->wrapped;
    plain_before = dk->plaintext;
    auto rotated = s->Rotate(id);
    ASSERT_TRUE(rotated.ok());
    EXPECT_EQ(rotated->materials, 2u);
    auto dk2 = s->GenerateDataKey(id, "c");
    ASSERT_TRUE(dk2.ok());
    wrapped_after = dk2->wrapped;
  }
  auto s = OpenService();  // everything came back from the metadata
  auto a = s->Decrypt(wrapped_before, "c");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, plain_before);
  EXPECT_TRUE(s->Decrypt(wrapped_after, "c").ok());
  EXPECT_EQ(s->Describe(id)->materials, 2u);
  // The key material is sealed at rest: another operator key does not open it.
  auto wrong = KeyService::Open(kv_.get(), RandomBytes(kOperatorKeyBytes), "us-east-1", "1");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Code::kCorruption);
}

TEST_F(KeyServiceTest, DisabledKeyRefusesUntilEnabled) {
  auto s = OpenService();
  auto key = s->CreateKey("alias/erase-me", "");
  ASSERT_TRUE(key.ok());
  auto dk = s->GenerateDataKey(key->id, "");
  ASSERT_TRUE(dk.ok());
  ASSERT_TRUE(s->Decrypt(dk->wrapped, "").ok());  // opened once: in the cache of data keys
  ASSERT_TRUE(s->SetEnabled(key->id, false).ok());
  EXPECT_EQ(s->Decrypt(dk->wrapped, "").status().detail(), Detail::kKmsDisabled);
  EXPECT_EQ(s->GenerateDataKey(key->id, "").status().detail(), Detail::kKmsDisabled);
  s.reset();
  s = OpenService();  // the state is durable
  EXPECT_EQ(s->Decrypt(dk->wrapped, "").status().detail(), Detail::kKmsDisabled);
  ASSERT_TRUE(s->SetEnabled("alias/erase-me", true).ok());
  EXPECT_TRUE(s->Decrypt(dk->wrapped, "").ok());
}

TEST_F(KeyServiceTest, ManagedKeysAreCreatedOnFirstUseAndSseS3CannotBeDisabled) {
  auto s = OpenService();
  EXPECT_TRUE(s->ListKeys().empty());
  auto s3 = s->GenerateDataKey(kSseS3Alias, "");
  ASSERT_TRUE(s3.ok());
  auto kms_default = s->GenerateDataKey("", "");
  ASSERT_TRUE(kms_default.ok());
  EXPECT_NE(s3->key_arn, kms_default->key_arn);
  EXPECT_EQ(s->ListKeys().size(), 2u);
  EXPECT_EQ(s->Describe(kDefaultKmsAlias)->arn, kms_default->key_arn);
  EXPECT_TRUE(s->Describe(kSseS3Alias)->managed);
  EXPECT_EQ(s->SetEnabled(kSseS3Alias, false).status().code(), Code::kPreconditionFailed);
  EXPECT_EQ(s->GenerateDataKey("", "")->key_arn, kms_default->key_arn);  // not a second one
}

// Requests wrap and unwrap while the operator rotates and disables: every
// unwrap either returns the key it wrapped or says the key is disabled.
TEST_F(KeyServiceTest, ConcurrentUseRotationAndDisabling) {
  auto s = OpenService();
  auto key = s->CreateKey("alias/busy", "");
  ASSERT_TRUE(key.ok());
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0}, opened{0};
  std::vector<std::thread> users;
  for (int t = 0; t < 4; ++t) {
    users.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        auto dk = s->GenerateDataKey(i % 2 ? key->id : std::string(kSseS3Alias), std::to_string(t));
        if (!dk.ok()) {
          if (dk.status().detail() != Detail::kKmsDisabled) ++wrong;
          continue;
        }
        for (int again = 0; again < 2; ++again) {  // the second from the cache
          auto back = s->Decrypt(dk->wrapped, std::to_string(t));
          if (back.ok()) {
            if (*back != dk->plaintext) ++wrong;
            ++opened;
          } else if (back.status().detail() != Detail::kKmsDisabled) {
            ++wrong;
          }
        }
      }
    });
  }
  std::thread op([&] {
    for (int i = 0; i < 20 && !stop; ++i) {
      EXPECT_TRUE(s->Rotate(key->id).ok());
      EXPECT_TRUE(s->SetEnabled(key->id, i % 2 == 0).ok());
      (void)s->ListKeys();
    }
  });
  for (auto& u : users) u.join();
  stop = true;
  op.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(opened.load(), 0);
}

}  // namespace
}  // namespace strata::kms

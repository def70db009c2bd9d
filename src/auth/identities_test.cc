#include "auth/identities.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "crypto/secret_box.h"
#include "common/hash.h"
#include "meta/keys.h"
#include "meta/mem_store.h"

namespace strata::auth {
namespace {

const RootKey kRoot{"ROOTKEY", "root-secret-0123456789"};

class IdentitiesTest : public ::testing::Test {
 protected:
  std::unique_ptr<IdentityStore> Open() {
    auto s = IdentityStore::Open(&flaky_, key_, kRoot);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }
  std::unique_ptr<meta::MemKvStore> mem_ = meta::NewMemKvStore();
  meta::FlakyKvStore flaky_{mem_.get()};
  std::string key_ = RandomBytes(crypto::kSecretBoxKeyBytes);
};

TEST_F(IdentitiesTest, RootAndAnonymous) {
  auto ids = Open();
  EXPECT_EQ(ids->Secret("ROOTKEY"), "root-secret-0123456789");
  auto root = ids->Resolve("ROOTKEY");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->principal.kind, Principal::Kind::kRoot);
  EXPECT_EQ(root->principal.arn, "arn:aws:iam::" + ids->account() + ":root");
  EXPECT_EQ(ids->account().size(), 12u);
  EXPECT_EQ(root->principal.canonical_id.size(), 64u);
  EXPECT_EQ(ids->DisplayName(root->principal.canonical_id), "root");
  EXPECT_EQ(ids->Anonymous()->principal.kind, Principal::Kind::kAnonymous);
  EXPECT_FALSE(ids->Resolve("nobody"));
  EXPECT_FALSE(ids->Secret("nobody"));
  // The account and root's canonical id are kept across reopenings.
  std::string account = ids->account(), canonical = root->principal.canonical_id;
  ids = Open();
  EXPECT_EQ(ids->account(), account);
  EXPECT_EQ(ids->root().canonical_id, canonical);
}

TEST_F(IdentitiesTest, UsersKeysAndPoliciesPersistSealed) {
  auto ids = Open();
  auto alice = ids->CreateUser("alice");
  ASSERT_TRUE(alice.ok());
  EXPECT_EQ(alice->arn, "arn:aws:iam::" + ids->account() + ":user/alice");
  EXPECT_EQ(alice->user_id.substr(0, 4), "AIDA");
  auto key = ids->CreateKey("alice");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->id.size(), 20u);
  EXPECT_EQ(key->secret.size(), 40u);
  EXPECT_EQ(ids->Secret(key->id), key->secret);
  auto policy = ids->PutPolicy(
      "read", R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]})");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  ASSERT_TRUE(ids->AttachPolicy("read", "user", "alice").ok());
  auto caller = ids->Resolve(key->id);
  ASSERT_TRUE(caller);
  EXPECT_EQ(caller->principal.username, "alice");
  EXPECT_EQ(caller->policies.size(), 1u);

  // The secret is stored sealed: not in any value in the clear.
  auto it = mem_->NewIterator();
  for (it->Seek(""); it->Valid(); it->Next()) {
    EXPECT_EQ(std::string(it->value()).find(key->secret), std::string::npos) << it->key();
  }
  // Everything comes back on reopening.
  ids = Open();
  EXPECT_EQ(ids->Secret(key->id), key->secret);
  caller = ids->Resolve(key->id);
  ASSERT_TRUE(caller);
  EXPECT_EQ(caller->policies.size(), 1u);
  EXPECT_EQ(ids->GetUser("alice")->canonical_id, alice->canonical_id);
  EXPECT_EQ(ids->DisplayName(alice->canonical_id), "alice");

  // Another master key cannot open the secrets: the store refuses to start.
  auto wrong = IdentityStore::Open(&flaky_, RandomBytes(crypto::kSecretBoxKeyBytes), kRoot);
  EXPECT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Code::kPermissionDenied);
}

TEST_F(IdentitiesTest, GroupsCarryTheirPolicies) {
  auto ids = Open();
  ASSERT_TRUE(ids->CreateUser("bob").ok());
  auto key = ids->CreateKey("bob");
  ASSERT_TRUE(ids->CreateGroup("readers").ok());
  const std::string doc =
      R"({"Statement":[{"Effect":"Allow","Action":"s3:ListBucket","Resource":"*"}]})";
  ASSERT_TRUE(ids->PutPolicy("list", doc).ok());
  ASSERT_TRUE(ids->AttachPolicy("list", "group", "readers").ok());
  EXPECT_TRUE(ids->Resolve(key->id)->policies.empty());
  ASSERT_TRUE(ids->AddUserToGroup("readers", "bob").ok());
  EXPECT_EQ(ids->Resolve(key->id)->policies.size(), 1u);
  // Attached to the user as well: still one policy, not two.
  ASSERT_TRUE(ids->AttachPolicy("list", "user", "bob").ok());
  EXPECT_EQ(ids->Resolve(key->id)->policies.size(), 1u);
  ASSERT_TRUE(ids->DetachPolicy("list", "user", "bob").ok());
  auto groups = ids->ListGroups();
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].members, std::vector<std::string>{"bob"});
  // A policy in use cannot be deleted; a deleted group lets its members go.
  EXPECT_EQ(ids->DeletePolicy("list").code(), Code::kPreconditionFailed);
  ASSERT_TRUE(ids->DeleteGroup("readers").ok());
  EXPECT_TRUE(ids->Resolve(key->id)->policies.empty());
  EXPECT_TRUE(ids->GetUser("bob")->groups.empty());
  EXPECT_TRUE(ids->DeletePolicy("list").ok());
}

TEST_F(IdentitiesTest, DisabledKeysAndUsersStopSigning) {
  auto ids = Open();
  ASSERT_TRUE(ids->CreateUser("carol").ok());
  auto k1 = ids->CreateKey("carol");
  auto k2 = ids->CreateKey("carol");
  ASSERT_TRUE(k1.ok() && k2.ok());
  EXPECT_EQ(ids->CreateKey("carol").status().code(), Code::kPreconditionFailed);  // two at most
  ASSERT_TRUE(ids->SetKeyActive(k1->id, false).ok());
  EXPECT_FALSE(ids->Secret(k1->id));
  EXPECT_FALSE(ids->Resolve(k1->id));
  EXPECT_TRUE(ids->Secret(k2->id));
  ASSERT_TRUE(ids->SetUserActive("carol", false).ok());
  EXPECT_FALSE(ids->Secret(k2->id));
  ASSERT_TRUE(ids->SetUserActive("carol", true).ok());
  EXPECT_TRUE(ids->Secret(k2->id));
  ASSERT_TRUE(ids->DeleteKey(k1->id).ok());
  EXPECT_EQ(ids->GetUser("carol")->keys.size(), 1u);
  ASSERT_TRUE(ids->DeleteUser("carol").ok());
  EXPECT_FALSE(ids->Secret(k2->id));
  EXPECT_EQ(ids->GetUser("carol").status().code(), Code::kNotFound);
  // Its keys went with it, in metadata too.
  ids = Open();
  EXPECT_FALSE(ids->Secret(k2->id));
  EXPECT_TRUE(ids->ListUsers().empty());
}

TEST_F(IdentitiesTest, BadInputIsRefusedWithTheReason) {
  auto ids = Open();
  for (const char* bad : {"", "has space", "a/b", "semi;colon", "\xc3\xa9t\xc3\xa9"}) {
    auto r = ids->CreateUser(bad);
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ids->CreateUser(std::string(65, 'a')).status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(ids->CreateUser(std::string(64, 'a')).ok());
  EXPECT_TRUE(ids->CreateUser("a+b=c,d.e@f_g-h").ok());
  EXPECT_EQ(ids->CreateUser("a+b=c,d.e@f_g-h").status().code(), Code::kAlreadyExists);
  auto bad_policy = ids->PutPolicy("p", R"({"Statement":[{"Effect":"Allow","Action":"s3:*"}]})");
  EXPECT_EQ(bad_policy.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad_policy.status().message().find("Resource"), std::string::npos)
      << bad_policy.status().message();
  // An identity policy names no Principal.
  EXPECT_EQ(ids->PutPolicy("p", R"({"Statement":[{"Effect":"Allow","Principal":"*",)"
                                R"("Action":"s3:*","Resource":"*"}]})")
                .status()
                .code(),
            Code::kInvalidArgument);
  EXPECT_EQ(ids->PutPolicy("p", std::string(kMaxIdentityPolicyBytes + 1, ' ')).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(ids->AttachPolicy("missing", "user", std::string(64, 'a')).code(), Code::kNotFound);
  EXPECT_EQ(ids->AttachPolicy("missing", "role", "x").code(), Code::kInvalidArgument);
}

TEST_F(IdentitiesTest, AFailedWriteChangesNothing) {
  auto ids = Open();
  ASSERT_TRUE(ids->CreateUser("dave").ok());
  auto key = ids->CreateKey("dave");
  flaky_.fail = true;
  EXPECT_EQ(ids->CreateUser("erin").status().code(), Code::kIOError);
  EXPECT_EQ(ids->SetKeyActive(key->id, false).code(), Code::kIOError);
  EXPECT_EQ(ids->DeleteUser("dave").code(), Code::kIOError);
  EXPECT_FALSE(ids->CreateKey("dave").ok());
  flaky_.fail = false;
  EXPECT_EQ(ids->GetUser("erin").status().code(), Code::kNotFound);
  EXPECT_EQ(ids->Secret(key->id), key->secret);  // still active
  EXPECT_EQ(ids->GetUser("dave")->keys.size(), 1u);
  ids = Open();
  EXPECT_EQ(ids->Secret(key->id), key->secret);
}

TEST_F(IdentitiesTest, AcknowledgedChangesSurvivePowerLoss) {
  auto ids = Open();
  ASSERT_TRUE(ids->CreateUser("frank").ok());
  auto key = ids->CreateKey("frank");
  ASSERT_TRUE(key.ok());
  ASSERT_TRUE(ids->SetKeyActive(key->id, false).ok());
  ids.reset();
  mem_->SimulateCrash();  // drops whatever was not synced
  ids = Open();
  EXPECT_TRUE(ids->GetUser("frank").ok());
  EXPECT_FALSE(ids->Secret(key->id));  // the disable was acknowledged: it holds
  ASSERT_EQ(ids->GetUser("frank")->keys.size(), 1u);
  EXPECT_FALSE(ids->GetUser("frank")->keys[0].active);
}

// The request path reads snapshots while the admin API changes identities:
// a reader sees a key either working with its secret or not at all.
TEST_F(IdentitiesTest, ConcurrentReadersAndChanges) {
  auto ids = Open();
  ASSERT_TRUE(ids->CreateUser("gina").ok());
  auto key = ids->CreateKey("gina");
  ASSERT_TRUE(key.ok());
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> seen{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        auto secret = ids->Secret(key->id);
        auto caller = ids->Resolve(key->id);
        if (secret) EXPECT_EQ(*secret, key->secret);
        if (caller) EXPECT_EQ(caller->principal.username, "gina");
        EXPECT_TRUE(ids->Resolve("ROOTKEY"));
        seen.fetch_add(1);
      }
    });
  }
  // The changes start once every reader is reading (else a fast writer can
  // finish before any reader ran: nothing would be tested concurrently).
  while (seen.load() < 4) std::this_thread::yield();
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(ids->SetKeyActive(key->id, i % 2 == 1).ok());
    ASSERT_TRUE(ids->CreateUser("tmp" + std::to_string(i)).ok());
    ASSERT_TRUE(ids->DeleteUser("tmp" + std::to_string(i)).ok());
  }
  stop = true;
  for (auto& r : readers) r.join();
  EXPECT_GT(seen.load(), 0u);
  EXPECT_TRUE(ids->Secret(key->id));  // the last change (i = 199) enabled it
}

}  // namespace
}  // namespace strata::auth

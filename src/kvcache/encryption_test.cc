// Encrypted KV namespaces: a namespace opts in through its bucket's default
// encryption (SSE-S3 or SSE-KMS); its blocks are then stored encrypted and
// read back through the key service, and a block whose key cannot be had
// gets DENIED / UNAVAILABLE in its own result instead of bytes.
#include <gtest/gtest.h>

#include "common/encoding.h"
#include "common/hash.h"
#include "kms/key_service.h"
#include "kvcache/server_test_util.h"

namespace strata::kvcache::kvtest {
namespace {

class KvEncryptionTest : public KvServerTest {
 protected:
  void SetUp() override {
    KvServerTest::SetUp();
    auto k = kms::KeyService::Open(kv_.get(), RandomBytes(kms::kOperatorKeyBytes), "us-east-1",
                                   "123456789012");
    ASSERT_TRUE(k.ok()) << k.status().ToString();
    kms_ = std::move(k).value();
    options_.kms = kms_.get();
    server_.reset();
    StartServer();
  }
  std::string Bucket(const proto::NamespaceDescriptor& d) {
    return proto::NamespaceBucket(proto::NamespaceDigest(d));
  }
  object::ObjectRecord Record(const proto::NamespaceDescriptor& d, const std::string& key) {
    auto digest = proto::NamespaceDigest(d);
    auto head = engine_->HeadObject(Bucket(d), proto::BlockObjectKey(digest, key));
    EXPECT_TRUE(head.ok()) << head.status().ToString();
    return head.ok() ? *head : object::ObjectRecord{};
  }
  // Every byte the in-memory file system holds under the data directory.
  std::string AllFileBytes() {
    std::string all;
    std::vector<std::string> dirs = {"/data"};
    while (!dirs.empty()) {
      std::string dir = dirs.back();
      dirs.pop_back();
      auto names = fs_->ListDir(dir);
      if (!names.ok()) continue;
      for (const std::string& n : *names) {
        const std::string path = dir + "/" + n;
        auto f = fs_->NewReadableFile(path);
        if (!f.ok()) {
          dirs.push_back(path);
          continue;
        }
        std::string buf(1 << 16, '\0');
        for (uint64_t off = 0;; ) {
          auto r = (*f)->ReadAt(off, buf.data(), buf.size());
          if (!r.ok() || *r == 0) break;
          all.append(buf.data(), *r);
          off += *r;
        }
      }
    }
    return all;
  }
  std::unique_ptr<kms::KeyService> kms_;
};

TEST_F(KvEncryptionTest, BlocksOfAnEncryptedNamespaceAreStoredEncrypted) {
  auto c = Authed();
  auto d = Descriptor(0);
  uint64_t ns = c->Open(d);
  ASSERT_NE(ns, 0u);
  // Written before the namespace opts in: stays as it was, and readable.
  const std::string before = Pattern(5000, 9);
  ASSERT_EQ(c->PutOne(ns, Key('p', 0), before), WireStatus::kOk);
  ASSERT_TRUE(engine_->SetBucketEncryption(Bucket(d), object::SseMode::kS3, "", false).ok());
  // Random bytes: a Pattern() is a shifted copy of another seed's.
  const std::string small = RandomBytes(1000), large = RandomBytes(300000);
  ASSERT_EQ(c->Put(ns, {{Key('e', 0), "", small}, {Key('e', 1), Key('e', 0), large}}),
            std::vector<WireStatus>(2, WireStatus::kOk));
  EXPECT_FALSE(Record(d, Key('p', 0)).sse.on());
  for (const std::string& k : {Key('e', 0), Key('e', 1)}) {
    object::ObjectRecord rec = Record(d, k);
    EXPECT_EQ(rec.sse.mode, object::SseMode::kS3) << HexEncode(k);
    EXPECT_FALSE(rec.sse.wrapped_key.empty());
  }
  // Neither block's bytes are anywhere in the store; the clear one's are.
  const std::string files = AllFileBytes();
  EXPECT_GT(files.size(), large.size());  // the sealed data file was read
  EXPECT_EQ(files.find(large.substr(100000, 64)), std::string::npos);
  auto it = kv_->NewIterator();
  for (it->Seek(""); it->Valid(); it->Next()) {
    EXPECT_EQ(std::string(it->value()).find(small.substr(100, 64)), std::string::npos);
  }
  // Whole blocks (with their CRC), ranges across the 64 KiB chunks, LOOKUP.
  EXPECT_EQ(c->GetAll(ns, Key('e', 0)), small);
  EXPECT_EQ(c->GetAll(ns, Key('e', 1)), large);
  EXPECT_EQ(c->GetAll(ns, Key('p', 0)), before);
  auto g = c->Get(ns, {{Key('e', 1), 65530, 70000}, {Key('e', 0), 10, 20}, {Key('e', 1), 0, 0}});
  ASSERT_EQ(g.results.size(), 3u);
  EXPECT_EQ(g.data[0], large.substr(65530, 70000));
  EXPECT_EQ(g.data[1], small.substr(10, 20));
  EXPECT_EQ(g.results[2].flags & proto::kGetCrcValid, proto::kGetCrcValid);
  EXPECT_EQ(g.results[2].crc32c, Crc32c(large.data(), large.size()));
  EXPECT_EQ(c->Lookup(ns, {Key('e', 0), Key('e', 1)}), 2u);
  // After a restart (the index rebuilt from the objects) as well.
  Restart();
  c = Authed();
  ns = c->Open(d);
  EXPECT_EQ(c->GetAll(ns, Key('e', 1)), large);
}

TEST_F(KvEncryptionTest, ADisabledKmsKeyDeniesItsBlocksOnly) {
  auto key = kms_->CreateKey("alias/kv-tenant", "");
  ASSERT_TRUE(key.ok());
  auto c = Authed();
  auto d = Descriptor(0);
  uint64_t ns = c->Open(d);
  ASSERT_TRUE(engine_->SetBucketEncryption(Bucket(d), object::SseMode::kKms, "alias/kv-tenant", false).ok());
  const std::string a = Pattern(200000, 3), b = Pattern(700, 4);
  ASSERT_EQ(c->Put(ns, {{Key('k', 0), "", a}, {Key('k', 1), Key('k', 0), b}}),
            std::vector<WireStatus>(2, WireStatus::kOk));
  object::ObjectRecord rec = Record(d, Key('k', 0));
  EXPECT_EQ(rec.sse.mode, object::SseMode::kKms);
  EXPECT_EQ(rec.sse.key_arn, key->arn);
  // The block's CRC-based ETag is kept (its CRC32C is stored in the clear, as
  // S3 keeps an encrypted object's additional checksums).
  EXPECT_EQ(rec.etag.substr(rec.etag.size() - 2), "-1");
  ASSERT_TRUE(kms_->SetEnabled(key->id, false).ok());
  // Both blocks denied in their results; the connection stays usable.
  auto g = c->Get(ns, {{Key('k', 0), 0, 0}, {Key('k', 1), 0, 0}, {Key('x', 0), 0, 0}});
  ASSERT_EQ(g.results.size(), 3u);
  EXPECT_EQ(g.results[0].status, WireStatus::kDenied);
  EXPECT_EQ(g.results[1].status, WireStatus::kDenied);
  EXPECT_EQ(g.results[2].status, WireStatus::kNotFound);
  EXPECT_EQ(c->PutOne(ns, Key('k', 2), b, Key('k', 1)), WireStatus::kDenied);
  EXPECT_EQ(c->Lookup(ns, {Key('k', 0), Key('k', 1)}), 2u);
  ASSERT_TRUE(kms_->SetEnabled(key->id, true).ok());
  EXPECT_EQ(c->GetAll(ns, Key('k', 0)), a);
  EXPECT_EQ(c->PutOne(ns, Key('k', 2), b, Key('k', 1)), WireStatus::kOk);
}

TEST_F(KvEncryptionTest, WithoutAKeyServiceAnEncryptedNamespaceRefusesWrites) {
  auto c = Authed();
  auto d = Descriptor(0);
  uint64_t ns = c->Open(d);
  ASSERT_TRUE(engine_->SetBucketEncryption(Bucket(d), object::SseMode::kS3, "", false).ok());
  ASSERT_EQ(c->PutOne(ns, Key('s', 0), Pattern(4000, 5)), WireStatus::kOk);
  options_.kms = nullptr;
  Restart();
  c = Authed();
  ns = c->Open(d);
  // Never stored in the clear, never served as ciphertext.
  EXPECT_EQ(c->PutOne(ns, Key('s', 1), Pattern(4000, 6)), WireStatus::kUnavailable);
  auto g = c->Get(ns, {{Key('s', 0), 0, 0}});
  ASSERT_EQ(g.results.size(), 1u);
  EXPECT_EQ(g.results[0].status, WireStatus::kUnavailable);
}

}  // namespace
}  // namespace strata::kvcache::kvtest

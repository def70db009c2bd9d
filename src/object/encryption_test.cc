// Server-side encryption in the object engine: sealed chunks for inline,
// single-file and multipart versions; range reads across chunk boundaries;
// no plaintext at rest; tampering, swapping and cutting detected; keys checked.
#include <gtest/gtest.h>

#include "common/encoding.h"
#include "common/hash.h"
#include "crypto/chunk_cipher.h"
#include "io/mem_fs.h"
#include "meta/keys.h"
#include "object/engine.h"
#include "object/plain_engine_test_util.h"
#include "storage/plain_store.h"

namespace strata::object {
namespace {

constexpr size_t kChunk = crypto::kChunkBytes;

// Text that cannot appear by chance in ciphertext, repeated with a counter.
std::string Marked(size_t n) {
  std::string s;
  for (size_t i = 0; s.size() < n; ++i) s += "PLAINTEXT-MARKER-" + std::to_string(i) + ";";
  s.resize(n);
  return s;
}

class EncryptionTest : public PlainEngineTest {
 protected:

  WriteOptions Sse(SseMode mode, const std::string& key) {
    WriteOptions o;
    o.sse.mode = mode;
    if (mode != SseMode::kCustomer) o.sse.wrapped_key = "wrapped-by-the-key-service";
    o.data_key = key;
    return o;
  }
  Result<ObjectRecord> Put(const std::string& k, const std::string& data, WriteOptions o,
                           size_t piece = 10000) {
    ASSIGN_OR_RETURN(auto w, engine_->NewWriter("b", k, {}, std::move(o)));
    for (size_t off = 0; off < data.size(); off += piece) {
      RETURN_IF_ERROR(w->Append(std::string_view(data).substr(off, piece)));
    }
    return w->Commit();
  }
  Result<std::string> Read(const std::string& k, const std::string& key, uint64_t off,
                           uint64_t len) {
    ASSIGN_OR_RETURN(auto r, engine_->OpenObject("b", k));
    if (!key.empty()) RETURN_IF_ERROR(r->Unlock(key));
    std::string out(len, '\0');
    for (uint64_t got = 0; got < len;) {
      ASSIGN_OR_RETURN(size_t n, r->ReadAt(off + got, out.data() + got, len - got));
      if (n == 0) return Corruption("short");
      got += n;
    }
    return out;
  }
  // Every byte at rest: data files and metadata values.
  std::string AllStoredBytes() {
    std::string all;
    for (int i = 0; i < 256; ++i) {
      char sub[4];
      snprintf(sub, sizeof(sub), "%02x", i);
      const std::string dir = std::string("/data/objects/") + sub;
      auto list = mem_->ListDir(dir);
      if (!list.ok()) continue;
      for (const std::string& name : *list) all += FileBytes(dir + "/" + name);
    }
    auto it = kv_->NewIterator();
    for (it->Seek(""); it->Valid(); it->Next()) all.append(it->value());
    return all;
  }

  const std::string key_ = RandomBytes(32);
};

TEST_F(EncryptionTest, EverySizeClassAndRangeAcrossChunkBoundaries) {
  for (size_t size : {size_t{1}, size_t{100}, kChunk - 1, kChunk, kChunk + 1, 2 * kChunk + 5,
                      size_t{300 * 1024}}) {
    SCOPED_TRACE(size);
    const std::string data = Marked(size);
    auto rec = Put("k", data, Sse(SseMode::kS3, key_));
    ASSERT_TRUE(rec.ok()) << rec.status().ToString();
    EXPECT_EQ(rec->size_bytes, size);
    EXPECT_EQ(rec->sse.mode, SseMode::kS3);
    EXPECT_EQ(rec->sse.salt.size(), crypto::kSaltBytes);
    StreamHash md5(StreamHash::Kind::kMd5);
    md5.Update(data.data(), data.size());
    EXPECT_EQ(rec->etag, HexEncode(md5.Final()));  // SSE-S3: the plaintext's MD5, as AWS
    auto whole = Read("k", key_, 0, size);
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    EXPECT_EQ(*whole, data);
    // Ranges starting and ending just before, on and after each boundary.
    for (uint64_t b = 0; b <= size; b += kChunk) {
      for (int64_t d : {-1, 0, 1}) {
        const int64_t from = static_cast<int64_t>(b) + d;
        if (from < 0 || from >= static_cast<int64_t>(size)) continue;
        for (uint64_t len : {uint64_t{1}, uint64_t{2}, uint64_t{kChunk}, uint64_t{kChunk + 2}}) {
          len = std::min<uint64_t>(len, size - from);
          auto part = Read("k", key_, from, len);
          ASSERT_TRUE(part.ok()) << from << "+" << len;
          EXPECT_EQ(*part, data.substr(from, len)) << from << "+" << len;
        }
      }
    }
  }
  EXPECT_EQ(AllStoredBytes().find("PLAINTEXT-MARKER"), std::string::npos);
}

TEST_F(EncryptionTest, NoPlaintextAtRestInAnyMode) {
  const std::string small = Marked(1000), large = Marked(700 * 1024);
  for (SseMode mode : {SseMode::kS3, SseMode::kKms, SseMode::kCustomer}) {
    ASSERT_TRUE(Put("small" + std::to_string(int(mode)), small, Sse(mode, key_)).ok());
    ASSERT_TRUE(Put("large" + std::to_string(int(mode)), large, Sse(mode, key_)).ok());
  }
  const std::string stored = AllStoredBytes();
  EXPECT_EQ(stored.find("PLAINTEXT-MARKER"), std::string::npos);
  EXPECT_EQ(stored.find(key_), std::string::npos);  // the SSE-C key is never stored
  // The same write unencrypted is found: the scan sees what is stored.
  ASSERT_TRUE(Put("clear", small, {}).ok());
  EXPECT_NE(AllStoredBytes().find("PLAINTEXT-MARKER"), std::string::npos);
}

TEST_F(EncryptionTest, KeysAreCheckedAndEtagsMaskedForKmsAndCustomer) {
  const std::string data = Marked(5000);
  auto c = Put("c", data, Sse(SseMode::kCustomer, key_));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->sse.key_digest, crypto::CustomerKeyDigest(c->sse.salt, key_));
  StreamHash md5(StreamHash::Kind::kMd5);
  md5.Update(data.data(), data.size());
  EXPECT_NE(c->etag, HexEncode(md5.Final()));
  EXPECT_EQ(c->etag.size(), 32u);
  auto k = Put("k", data, Sse(SseMode::kKms, key_));
  ASSERT_TRUE(k.ok());
  EXPECT_NE(k->etag, HexEncode(md5.Final()));
  EXPECT_NE(k->etag, c->etag);

  auto r = engine_->OpenObject("b", "c");
  ASSERT_TRUE(r.ok());
  char buf[16];
  auto locked = (*r)->ReadAt(0, buf, sizeof buf);
  ASSERT_FALSE(locked.ok());
  EXPECT_EQ(locked.status().detail(), Detail::kSseKey);
  Status wrong = (*r)->Unlock(RandomBytes(32));
  EXPECT_EQ(wrong.code(), Code::kPermissionDenied);
  EXPECT_EQ(wrong.detail(), Detail::kSseKey);
  EXPECT_EQ(*Read("c", key_, 10, 100), data.substr(10, 100));
  // A wrong data key for SSE-KMS (no digest to check) fails at the chunk.
  auto bad = Read("k", RandomBytes(32), 0, 10);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kCorruption);
  // An encrypted write without a key is refused.
  WriteOptions no_key = Sse(SseMode::kS3, "");
  EXPECT_EQ(engine_->NewWriter("b", "x", {}, no_key).status().code(), Code::kInvalidArgument);
}

TEST_F(EncryptionTest, AlteredOrCutDataIsNeverReturned) {
  const std::string data = Marked(3 * kChunk + 100);
  auto rec = Put("k", data, Sse(SseMode::kS3, key_));
  ASSERT_TRUE(rec.ok());
  ASSERT_FALSE(rec->is_inline);
  // Chunk 3 (of 4) lies in the data file's 64 KiB block 3 (its CRC32C
  // catches the flip first; the chunk's tag would too: see the swap test).
  const std::string path = DataPath(rec->file_id);
  FlipByte(path, 3 * crypto::kSealedChunkBytes + 20);
  EXPECT_TRUE(Read("k", key_, 0, kChunk).ok());  // chunk 0 untouched
  auto bad = Read("k", key_, 3 * kChunk, 10);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kCorruption);
  EXPECT_FALSE(Read("k", key_, 0, data.size()).ok());

  // The metadata cut at a chunk boundary: the new last chunk was not sealed as last.
  auto rec2 = Put("cut", data, Sse(SseMode::kS3, key_));
  ASSERT_TRUE(rec2.ok());
  auto raw = kv_->Get(meta::ObjectVersionKey("b", "cut", rec2->version_stamp));
  ASSERT_TRUE(raw.ok() && raw->has_value());
  auto decoded = DecodeObjectRecord(**raw);
  ASSERT_TRUE(decoded);
  decoded->size_bytes = 2 * kChunk;
  meta::WriteBatch batch;
  batch.Put(meta::ObjectVersionKey("b", "cut", rec2->version_stamp), EncodeObjectRecord(*decoded));
  ASSERT_TRUE(kv_->Write(batch, true).ok());
  auto r = engine_->OpenObject("b", "cut");
  // The stored size no longer matches: refused at open or at the last chunk.
  if (r.ok()) {
    ASSERT_TRUE((*r)->Unlock(key_).ok());
    std::string out(kChunk, '\0');
    EXPECT_FALSE((*r)->ReadAt(kChunk, out.data(), kChunk).ok());
  }
}

TEST_F(EncryptionTest, InlineChunksSwappedBetweenObjectsDoNotOpen) {
  const std::string a = Marked(100), b = std::string(100, 'z');
  auto ra = Put("a", a, Sse(SseMode::kCustomer, key_));
  auto rb = Put("b2", b, Sse(SseMode::kCustomer, key_));
  ASSERT_TRUE(ra.ok() && rb.ok());
  ASSERT_TRUE(ra->is_inline);
  // Give "b2" the sealed bytes and salt of "a" (same customer key): bound to
  // its object, they do not open there.
  auto raw = kv_->Get(meta::ObjectVersionKey("b", "b2", rb->version_stamp));
  auto rec = DecodeObjectRecord(**raw);
  auto raw_a = kv_->Get(meta::ObjectVersionKey("b", "a", ra->version_stamp));
  auto rec_a = DecodeObjectRecord(**raw_a);
  rec->inline_data = rec_a->inline_data;
  rec->sse = rec_a->sse;
  meta::WriteBatch batch;
  batch.Put(meta::ObjectVersionKey("b", "b2", rb->version_stamp), EncodeObjectRecord(*rec));
  ASSERT_TRUE(kv_->Write(batch, true).ok());
  auto swapped = Read("b2", key_, 0, 100);
  ASSERT_FALSE(swapped.ok());
  EXPECT_EQ(swapped.status().code(), Code::kCorruption);
  EXPECT_EQ(*Read("a", key_, 0, 100), a);
}

TEST_F(EncryptionTest, MultipartPartsEachHaveTheirOwnSaltAndNeedTheKey) {
  UploadRecord up;
  up.sse.mode = SseMode::kCustomer;
  EXPECT_EQ(engine_->CreateUpload("b", "mp", up).status().code(), Code::kInvalidArgument);
  auto id = engine_->CreateUpload("b", "mp", up, key_);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(engine_->NewPartWriter("b", "mp", *id, 1).status().detail(), Detail::kSseKey);
  EXPECT_EQ(engine_->NewPartWriter("b", "mp", *id, 1, RandomBytes(32)).status().code(),
            Code::kPermissionDenied);
  const std::string p1 = Marked(5 << 20), p2 = Marked(kChunk + 3);
  std::vector<CompletePart> parts;
  for (auto [n, data] : {std::pair<uint32_t, const std::string*>{1, &p1}, {2, &p2}}) {
    // Part 1 twice: a replaced part gets a fresh salt (no nonce reuse).
    for (int attempt = 0; attempt < (n == 1 ? 2 : 1); ++attempt) {
      auto w = engine_->NewPartWriter("b", "mp", *id, n, key_);
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      ASSERT_TRUE((*w)->Append(*data).ok());
      auto rec = (*w)->Commit();
      ASSERT_TRUE(rec.ok());
      if (attempt == 1) parts.pop_back();
      parts.push_back({n, rec->etag});
    }
  }
  CompleteProblem problem;
  auto done = engine_->CompleteUpload("b", "mp", *id, parts, &problem);
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  ASSERT_EQ(done->parts.size(), 2u);
  EXPECT_EQ(done->sse.mode, SseMode::kCustomer);
  EXPECT_NE(done->parts[0].salt, done->parts[1].salt);
  const std::string all = p1 + p2;
  auto whole = Read("mp", key_, 0, all.size());
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_TRUE(*whole == all);
  auto across = Read("mp", key_, p1.size() - 10, 12 + kChunk);  // over the part boundary
  ASSERT_TRUE(across.ok()) << across.status().ToString();
  EXPECT_EQ(*across, all.substr(p1.size() - 10, 12 + kChunk));
  EXPECT_EQ(AllStoredBytes().find("PLAINTEXT-MARKER"), std::string::npos);
}

}  // namespace
}  // namespace strata::object

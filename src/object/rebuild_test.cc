// rebuild-index reproduces the index: an index built through the engine on an
// erasure-coded pool (objects, overwrites, multipart uploads completed, in
// progress and aborted, tags changed after the write, deletes and a bucket
// delete while a drive was offline, then the drive back) is snapshotted,
// wiped, rebuilt from the drives alone and compared record by record, field
// by field. Not compared, as documented in rebuild.h: I and G records
// (bookkeeping of writes in flight; rebuild writes G records of its own).
#include "object/rebuild.h"

#include <gtest/gtest.h>

#include <map>

#include "common/encoding.h"
#include "common/hash.h"
#include "io/mem_fs.h"
#include "meta/keys.h"
#include "object/engine.h"
#include "object/pool_engine_test_util.h"
#include "storage/erasure_store.h"
#include "storage/plain_store.h"

namespace strata::object {
namespace {

std::string Body(size_t n, char seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(seed + (i * 131) % 251);
  return s;
}

using Snapshot = std::map<std::string, std::string>;

class RebuildTest : public PoolEngineTest {
 protected:
  void Put(const std::string& bucket, const std::string& key, const std::string& body,
           WriteOptions options = {}) {
    ObjectHeaders h;
    h.content_type = "text/plain";
    h.user_metadata = {{"color", key}};
    auto w = engine_->NewWriter(bucket, key, h, std::move(options));
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Append(body).ok());
    (*w)->SetChecksum("CRC32C", "AAAAAA==", "FULL_OBJECT");
    ASSERT_TRUE((*w)->Commit().ok());
  }
  std::string NewUpload(const std::string& key) {
    UploadRecord u;
    u.headers.content_type = "application/x-" + key;
    u.tags = {{"upload", key}};
    u.storage_class = "STANDARD_IA";
    u.owner = "me";
    auto id = engine_->CreateUpload("b", key, u);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : "";
  }
  // Every record but the bookkeeping of writes in flight (I, G).
  Snapshot Records(meta::KvStore* kv) {
    Snapshot out;
    auto it = kv->NewIterator();
    for (it->Seek(""); it->Valid(); it->Next()) {
      char kind = it->key()[0];
      if (kind == meta::kIntentPrefix || kind == meta::kGarbagePrefix) continue;
      out[std::string(it->key())] = std::string(it->value());
    }
    return out;
  }
};

std::string Printable(const std::string& key) {
  std::string out;
  for (unsigned char c : key) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

void ExpectSameHeaders(const ObjectHeaders& a, const ObjectHeaders& b, const std::string& where) {
  EXPECT_EQ(a.content_type, b.content_type) << where;
  EXPECT_EQ(a.content_encoding, b.content_encoding) << where;
  EXPECT_EQ(a.content_disposition, b.content_disposition) << where;
  EXPECT_EQ(a.content_language, b.content_language) << where;
  EXPECT_EQ(a.cache_control, b.cache_control) << where;
  EXPECT_EQ(a.expires, b.expires) << where;
  EXPECT_EQ(a.user_metadata, b.user_metadata) << where;
}

void ExpectSameObject(const ObjectRecord& a, const ObjectRecord& b, const std::string& where) {
  EXPECT_EQ(a.size_bytes, b.size_bytes) << where;
  EXPECT_EQ(a.etag, b.etag) << where;
  EXPECT_EQ(a.mtime_ns, b.mtime_ns) << where;
  EXPECT_EQ(a.version_stamp, b.version_stamp) << where;
  ExpectSameHeaders(a.headers, b.headers, where);
  EXPECT_EQ(a.is_inline, b.is_inline) << where;
  EXPECT_EQ(a.inline_data, b.inline_data) << where;
  EXPECT_EQ(a.file_id, b.file_id) << where;
  ASSERT_EQ(a.parts.size(), b.parts.size()) << where;
  for (size_t i = 0; i < a.parts.size(); ++i) {
    EXPECT_EQ(a.parts[i].file_id, b.parts[i].file_id) << where << " part " << i;
    EXPECT_EQ(a.parts[i].size_bytes, b.parts[i].size_bytes) << where << " part " << i;
    EXPECT_EQ(a.parts[i].etag, b.parts[i].etag) << where << " part " << i;
    EXPECT_EQ(a.parts[i].checksum, b.parts[i].checksum) << where << " part " << i;
  }
  EXPECT_EQ(a.checksum_algorithm, b.checksum_algorithm) << where;
  EXPECT_EQ(a.checksum_value, b.checksum_value) << where;
  EXPECT_EQ(a.checksum_type, b.checksum_type) << where;
  EXPECT_EQ(a.tags, b.tags) << where;
  EXPECT_EQ(a.storage_class, b.storage_class) << where;
}

// Field by field for each kind of record, then the bytes (which also cover
// what the decoders do not expose, e.g. flag bits).
void ExpectSameRecord(const std::string& key, const std::string& a, const std::string& b) {
  const std::string where = "record " + Printable(key);
  switch (key[0]) {
    case meta::kBucketPrefix: {
      auto x = DecodeBucketRecord(a), y = DecodeBucketRecord(b);
      ASSERT_TRUE(x && y) << where;
      EXPECT_EQ(x->created_ns, y->created_ns) << where;
      EXPECT_EQ(x->region, y->region) << where;
      EXPECT_EQ(x->owner, y->owner) << where;
      break;
    }
    case meta::kObjectPrefix: {
      auto x = DecodeObjectRecord(a), y = DecodeObjectRecord(b);
      ASSERT_TRUE(x && y) << where;
      ExpectSameObject(*x, *y, where);
      break;
    }
    case meta::kMultipartPrefix: {
      auto x = DecodeUploadRecord(a), y = DecodeUploadRecord(b);
      ASSERT_TRUE(x && y) << where;
      EXPECT_EQ(x->initiated_ns, y->initiated_ns) << where;
      ExpectSameHeaders(x->headers, y->headers, where);
      EXPECT_EQ(x->checksum_algorithm, y->checksum_algorithm) << where;
      EXPECT_EQ(x->checksum_type, y->checksum_type) << where;
      EXPECT_EQ(x->tags, y->tags) << where;
      EXPECT_EQ(x->storage_class, y->storage_class) << where;
      EXPECT_EQ(x->owner, y->owner) << where;
      break;
    }
    case meta::kPartPrefix: {
      auto x = DecodePartRecord(a), y = DecodePartRecord(b);
      ASSERT_TRUE(x && y) << where;
      EXPECT_EQ(x->size_bytes, y->size_bytes) << where;
      EXPECT_EQ(x->etag, y->etag) << where;
      EXPECT_EQ(x->mtime_ns, y->mtime_ns) << where;
      EXPECT_EQ(x->file_id, y->file_id) << where;
      EXPECT_EQ(x->checksum, y->checksum) << where;
      break;
    }
    default:
      break;
  }
  EXPECT_TRUE(a == b) << where << ": the encoded values differ";
}

// Every record of the lost index is in the rebuilt one, equal, and nothing else.
void ExpectSameSnapshot(const Snapshot& before, const Snapshot& after) {
  for (const auto& [key, value] : before) {
    auto it = after.find(key);
    if (it == after.end()) {
      ADD_FAILURE() << "lost by rebuild-index: record " << Printable(key);
      continue;
    }
    ExpectSameRecord(key, value, it->second);
  }
  for (const auto& [key, value] : after) {
    EXPECT_TRUE(before.count(key)) << "made up by rebuild-index: record " << Printable(key);
  }
}

TEST_F(RebuildTest, RebuiltIndexEqualsTheLostOneRecordByRecord) {
  Open();
  ASSERT_TRUE(engine_->CreateBucket("b", BucketRecord{11, "us-east-1", "me"}).ok());
  ASSERT_TRUE(engine_->CreateBucket("empty", BucketRecord{12, "eu-west-1", "you"}).ok());
  ASSERT_TRUE(engine_->SetBucketTags("empty", {{"team", "rag"}, {"tier", "hot"}}).ok());
  ASSERT_TRUE(engine_->CreateBucket("gone", BucketRecord{13, "us-east-1", "me"}).ok());
  WriteOptions tagged;
  tagged.tags = {{"at", "write"}};
  tagged.storage_class = "STANDARD_IA";
  Put("b", "zero", "");
  Put("b", "small", "hello", tagged);
  Put("b", "big", Body(3 * 2 * 4096 + 5, 'a'));
  for (char v : {'1', '2', '3'}) Put("b", "over", Body(5000, v));  // overwrites
  Put("b", "over-tagged", "v1");
  ASSERT_TRUE(engine_->SetTags("b", "over-tagged", {{"x", "y"}}).ok());
  Put("b", "over-tagged", "v2");  // the new version has the tags of its write
  // Tags replaced after the write, twice.
  ASSERT_TRUE(engine_->SetTags("b", "small", {{"t", "1"}}).ok());
  ASSERT_TRUE(engine_->SetTags("b", "small", {{"t", "2"}, {"u", "3"}}).ok());
  // A completed multipart object, then its tags changed.
  const std::vector<std::string> mp = {Body(5 << 20, 'm'), Body(1000, 'n')};
  std::string up = NewUpload("mp");
  for (size_t i = 0; i < mp.size(); ++i) PutPart("mp", up, i + 1, mp[i]);
  Complete("mp", up, mp);
  ASSERT_TRUE(engine_->SetTags("b", "mp", {{"multi", "part"}}).ok());
  // Uploads in progress (part 2 uploaded twice: the second replaces the first).
  const std::vector<std::string> ip = {Body(5 << 20, 'p'), Body(777, 'q')};
  std::string inprog = NewUpload("inprog");
  PutPart("inprog", inprog, 1, ip[0]);
  PutPart("inprog", inprog, 2, Body(10, 'z'));
  PutPart("inprog", inprog, 2, ip[1]);
  std::string inprog2 = NewUpload("inprog");  // a second upload of the same key, no parts
  std::string aborted = NewUpload("aborted");
  PutPart("aborted", aborted, 1, "x");
  ASSERT_TRUE(engine_->AbortUpload("b", "aborted", aborted).ok());
  // To be deleted while drive 3 is offline.
  Put("b", "del", Body(3000, 'd'));
  std::string delmp_up = NewUpload("delmp");
  PutPart("delmp", delmp_up, 1, "only part");
  Complete("delmp", delmp_up, {"only part"});
  ASSERT_TRUE(engine_->SetTags("b", "delmp", {{"gone", "soon"}}).ok());
  Put("b", "over-offline", "before");
  std::string abort_offline = NewUpload("abort-offline");
  PutPart("abort-offline", abort_offline, 1, "p1");

  Open(/*absent=*/true);  // drive 3 unmounted
  ASSERT_TRUE(engine_->DeleteObject("b", "del").ok());
  ASSERT_TRUE(engine_->DeleteObject("b", "delmp").ok());
  Put("b", "over-offline", "after");
  ASSERT_TRUE(engine_->AbortUpload("b", "abort-offline", abort_offline).ok());
  ASSERT_TRUE(engine_->SetBucketTags("empty", {{"team", "rag-offline"}}).ok());  // a newer marker
  ASSERT_TRUE(engine_->SetTags("b", "small", {{"t", "offline"}}).ok());
  ASSERT_TRUE(engine_->DeleteBucket("gone").ok());
  Open();  // drive 3 is back, with the shards of everything removed meanwhile

  const Snapshot before = Records(kv_.get());
  ASSERT_TRUE(before.count(meta::BucketKey("empty")));
  ASSERT_FALSE(before.count(meta::BucketKey("gone")));
  auto uploads = engine_->ListUploads("b", {});
  ASSERT_TRUE(uploads.ok());
  ASSERT_EQ(uploads->uploads.size(), 2u);  // inprog twice

  // The metadata is lost; rebuild it from the drives.
  engine_.reset();
  kv_ = meta::NewMemStore();
  auto report = RebuildIndex(*store_, *kv_, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->buckets, 2u);
  EXPECT_EQ(report->unreadable, 0u);
  EXPECT_EQ(report->uploads, 2u);  // new-api
  EXPECT_EQ(report->parts, 2u);    // new-api
  EXPECT_EQ(report->tag_sets, 2u);  // new-api: small, mp
  EXPECT_GE(report->removed, 5u);  // new-api: del, delmp (+ parts, tags), over-offline v1, ...
  const Snapshot after = Records(kv_.get());
  std::map<char, int> kinds;
  for (const auto& [key, value] : before) ++kinds[key[0]];
  std::string counts;
  for (auto [kind, n] : kinds) counts += std::string(1, kind) + "=" + std::to_string(n) + " ";
  std::printf("records compared: %zu (%s); ids scanned %llu, removed %llu, replaced %llu, "
              "orphan parts %llu\n",
              before.size(), counts.c_str(), (unsigned long long)report->ids_scanned,
              (unsigned long long)report->removed, (unsigned long long)report->replaced_versions,
              (unsigned long long)report->orphan_parts);

  ExpectSameSnapshot(before, after);

  // And it works: the engine opens on it, uploads in progress complete.
  Open();
  EXPECT_EQ(Get("b", "del").status().code(), Code::kNotFound);
  EXPECT_EQ(engine_->GetBucket("gone").status().code(), Code::kNotFound);
  EXPECT_EQ(*Get("b", "big"), Body(3 * 2 * 4096 + 5, 'a'));
  EXPECT_EQ(*Get("b", "over"), Body(5000, '3'));
  EXPECT_EQ(*Get("b", "over-offline"), "after");
  EXPECT_EQ(engine_->HeadObject("b", "small")->tags, (Tags{{"t", "offline"}}));
  auto parts = engine_->ListParts(inprog);
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[1].record.etag, Md5Hex(ip[1]));
  Complete("inprog", inprog, ip);
  EXPECT_EQ(*Get("b", "inprog"), ip[0] + ip[1]);
  EXPECT_TRUE(engine_->AbortUpload("b", "inprog", inprog2).ok());
  EXPECT_EQ(*Get("b", "mp"), mp[0] + mp[1]);
}

// Versions, delete markers, the null version of a suspended bucket, lock
// settings set at the write and changed after it (some while a drive was
// offline), and a version deleted by id: the rebuilt index equals the lost
// one record by record, and a COMPLIANCE-locked version is still locked.
TEST_F(RebuildTest, VersionsMarkersAndLocksComeBack) {
  Open();
  ASSERT_TRUE(engine_->CreateBucket("vb", BucketRecord{21, "us-east-1", "me"}).ok());
  ASSERT_TRUE(engine_->SetBucketVersioning("vb", Versioning::kEnabled).ok());
  ASSERT_TRUE(engine_->SetObjectLockConfiguration("vb", {LockMode::kGovernance, 1, 0}).ok());
  ASSERT_TRUE(engine_->CreateBucket("sb", BucketRecord{22, "us-east-1", "me"}).ok());
  Put("sb", "k", "null-before");  // unversioned: the null version
  ASSERT_TRUE(engine_->SetBucketVersioning("sb", Versioning::kEnabled).ok());
  Put("sb", "k", "v1");
  ASSERT_TRUE(engine_->SetBucketVersioning("sb", Versioning::kSuspended).ok());
  Put("sb", "k", "null-after");  // replaces the first null version
  ASSERT_TRUE(engine_->DeleteVersion("sb", "m", std::nullopt).ok());  // a null marker

  // Past the bucket default (1 day): moving GOVERNANCE to COMPLIANCE keeps or extends it.
  const int64_t later = engine_->NowNs() + 2 * 86400LL * 1'000'000'000;
  WriteOptions compliance;
  compliance.lock = ObjectLock{LockMode::kCompliance, later, LegalHold::kUnset};
  Put("vb", "c", "compliant", compliance);
  for (char v : {'1', '2', '3'}) Put("vb", "k", Body(4000, v));
  ASSERT_TRUE(engine_->DeleteVersion("vb", "k", std::nullopt).ok());  // a marker on top
  Put("vb", "h", "held");
  ASSERT_TRUE(engine_->SetLegalHold("vb", "h", std::nullopt, true).ok());
  auto versions = engine_->ListVersions("vb", {});
  ASSERT_TRUE(versions.ok());
  std::vector<VersionSelector> k_versions;
  for (const auto& v : versions->versions) {
    if (v.key == "k" && !v.record.delete_marker) k_versions.push_back({false, v.record.version_stamp});
  }
  ASSERT_EQ(k_versions.size(), 3u);
  // Extend the newest k; bypass-shorten and then delete the oldest (GOVERNANCE default).
  ASSERT_TRUE(engine_->SetRetention("vb", "k", k_versions[0], LockMode::kCompliance, later, false).ok());
  ASSERT_TRUE(engine_->DeleteVersion("vb", "k", k_versions[2], {true}).ok());

  Open(/*absent=*/true);  // drive 3 unmounted: lock changes and a delete go on without it
  ASSERT_TRUE(engine_->SetRetention("vb", "c", std::nullopt, LockMode::kCompliance, later + 1, false).ok());
  ASSERT_TRUE(engine_->SetLegalHold("vb", "h", std::nullopt, false).ok());
  ASSERT_TRUE(engine_->SetLegalHold("vb", "h", std::nullopt, true).ok());
  ASSERT_TRUE(engine_->DeleteVersion("vb", "k", k_versions[1], {true}).ok());
  Open();

  const Snapshot before = Records(kv_.get());
  engine_.reset();
  kv_ = meta::NewMemStore();
  auto report = RebuildIndex(*store_, *kv_, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->unreadable, 0u);
  EXPECT_EQ(report->delete_markers, 2u);  // vb/k, sb/m
  EXPECT_EQ(report->lock_settings, 3u);   // vb/k newest, vb/c, vb/h
  const Snapshot after = Records(kv_.get());
  ExpectSameSnapshot(before, after);

  Open();
  auto vb = engine_->GetBucket("vb");
  ASSERT_TRUE(vb.ok());
  EXPECT_TRUE(vb->object_lock);
  EXPECT_EQ(vb->versioning, Versioning::kEnabled);
  EXPECT_EQ(vb->default_retention, (DefaultRetention{LockMode::kGovernance, 1, 0}));
  EXPECT_EQ(engine_->GetBucket("sb")->versioning, Versioning::kSuspended);
  auto c = engine_->HeadVersion("vb", "c", std::nullopt);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->lock.retain_until_ns, later + 1);
  auto del = engine_->DeleteVersion("vb", "c", VersionSelector{false, c->version_stamp}, {true});
  EXPECT_EQ(del.status().detail(), Detail::kLocked);  // still undeletable, by anyone
  EXPECT_EQ(engine_->HeadVersion("vb", "h", std::nullopt)->lock.legal_hold, LegalHold::kOn);
  EXPECT_EQ(*Get("sb", "k"), "null-after");
  EXPECT_EQ(engine_->HeadVersion("vb", "k", k_versions[1]).status().detail(), Detail::kVersion);
}

// ACLs: the write's (in the data's trailer), bucket ACL and ownership (in the
// bucket marker), and one changed after the write, twice (its ACL record on
// the drives, newest generation wins) all come back.
TEST_F(RebuildTest, OwnersAndAclsComeBack) {
  Open();
  BucketRecord b{23, "us-east-1", "me"};
  ASSERT_TRUE(engine_->CreateBucket("ab", b).ok());
  ASSERT_TRUE(engine_->SetBucketOwnership("ab", Ownership::kObjectWriter).ok());
  ASSERT_TRUE(engine_->SetBucketAcl("ab", "bucket-acl").ok());
  WriteOptions by_writer;
  by_writer.owner = std::string(64, 'w');
  by_writer.acl = "acl-at-write";
  Put("ab", "written", Body(5000, 'w'), by_writer);
  Put("ab", "changed", Body(5000, 'c'), by_writer);
  ASSERT_TRUE(engine_->SetObjectAcl("ab", "changed", std::nullopt, by_writer.owner, "acl-1").ok());
  ASSERT_TRUE(engine_->SetObjectAcl("ab", "changed", std::nullopt, by_writer.owner, "acl-2").ok());
  EXPECT_EQ(engine_->SetObjectAcl("ab", "missing", std::nullopt, "", "x").code(), Code::kNotFound);

  const Snapshot before = Records(kv_.get());
  engine_.reset();
  kv_ = meta::NewMemStore();
  auto report = RebuildIndex(*store_, *kv_, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->acl_settings, 1u);
  ExpectSameSnapshot(before, Records(kv_.get()));
  Open();
  auto bucket = engine_->GetBucket("ab");
  ASSERT_TRUE(bucket.ok());
  EXPECT_EQ(bucket->ownership, Ownership::kObjectWriter);
  EXPECT_EQ(bucket->acl, "bucket-acl");
  auto written = engine_->HeadObject("ab", "written");
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->owner, by_writer.owner);
  EXPECT_EQ(written->acl, "acl-at-write");
  auto changed = engine_->HeadObject("ab", "changed");
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(changed->acl, "acl-2");
  EXPECT_TRUE(changed->acl_on_drives);
  // The ACL record goes with its version.
  ASSERT_TRUE(engine_->DeleteObject("ab", "changed").ok());
}

// Encrypted versions, multipart parts and uploads in progress come back with
// everything needed to read them (the wrapped key, salts, the SSE-C digest),
// and read back under their keys: the trailers carry the records.
TEST_F(RebuildTest, EncryptedVersionsComeBackReadable) {
  Open();
  ASSERT_TRUE(engine_->CreateBucket("enc", BucketRecord{24, "us-east-1", "me"}).ok());
  const std::string data_key(32, 'k'), customer_key(32, 'c');
  WriteOptions s3;
  s3.sse.mode = SseMode::kS3;
  s3.sse.wrapped_key = "wrapped";
  s3.data_key = data_key;
  Put("enc", "s3", Body(200000, 's'), s3);
  WriteOptions c;
  c.sse.mode = SseMode::kCustomer;
  c.data_key = customer_key;
  Put("enc", "c", Body(1000, 'c'), c);
  UploadRecord up;
  up.sse.mode = SseMode::kCustomer;
  auto upload = engine_->CreateUpload("enc", "mp", up, customer_key);
  ASSERT_TRUE(upload.ok());
  const std::string p1 = Body(5 << 20, '1'), p2 = Body(70000, '2');
  std::vector<CompletePart> parts;
  for (auto [n, body] : {std::pair<uint32_t, const std::string*>{1, &p1}, {2, &p2}}) {
    auto w = engine_->NewPartWriter("enc", "mp", *upload, n, customer_key);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Append(*body).ok());
    auto rec = (*w)->Commit();
    ASSERT_TRUE(rec.ok());
    parts.push_back({n, rec->etag});
  }
  CompleteProblem problem;
  ASSERT_TRUE(engine_->CompleteUpload("enc", "mp", *upload, parts, &problem).ok());
  auto pending = engine_->CreateUpload("enc", "pending", up, customer_key);
  ASSERT_TRUE(pending.ok());

  const Snapshot before = Records(kv_.get());
  engine_.reset();
  kv_ = meta::NewMemStore();
  auto report = RebuildIndex(*store_, *kv_, nullptr);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ExpectSameSnapshot(before, Records(kv_.get()));
  Open();
  auto read = [&](const std::string& key, const std::string& dk) { return Get("enc", key, dk); };

  auto got = read("s3", data_key);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == Body(200000, 's'));
  EXPECT_EQ(*read("c", customer_key), Body(1000, 'c'));
  EXPECT_EQ(read("c", data_key).status().detail(), Detail::kSseKey);
  auto mp = read("mp", customer_key);
  ASSERT_TRUE(mp.ok()) << mp.status().ToString();
  EXPECT_TRUE(*mp == p1 + p2);
  // The pending upload still knows its key: a part with another is refused.
  EXPECT_EQ(engine_->NewPartWriter("enc", "pending", *pending, 1, data_key).status().code(),
            Code::kPermissionDenied);
  EXPECT_TRUE(engine_->NewPartWriter("enc", "pending", *pending, 1, customer_key).ok());
}

// The plain store keeps no headers: rebuild-index says so, typed.
TEST(RebuildPlainTest, PlainStoreIsNotImplemented) {
  auto mem = io::NewMemFileSystem();
  auto kv = meta::NewMemStore();
  auto store = storage::OpenPlainDataStore(mem.get(), "/data");
  ASSERT_TRUE(store.ok());
  auto report = RebuildIndex(**store, *kv, nullptr);
  EXPECT_EQ(report.status().code(), Code::kNotImplemented) << report.status().ToString();
}

}  // namespace
}  // namespace strata::object

// Metadata record codecs (record.h) against docs/formats/metadata-records.md:
// round trips, and the rule that decoders reject trailing bytes (the
// object_record fuzz target checks it for every decoder; the bucket decoder
// used to accept them).
#include "object/record.h"

#include <gtest/gtest.h>

namespace strata::object {
namespace {

TEST(RecordTest, BucketRoundTripAndTrailingBytesAreRejected) {
  BucketRecord b{1369353600, "eu-west-1", "owner"};
  std::string enc = EncodeBucketRecord(b);
  auto back = DecodeBucketRecord(enc);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->created_ns, b.created_ns);
  EXPECT_EQ(back->region, b.region);
  EXPECT_EQ(back->owner, b.owner);
  EXPECT_FALSE(DecodeBucketRecord(enc + '\0'));
  EXPECT_FALSE(DecodeBucketRecord(enc.substr(0, enc.size() - 1)));
}

TEST(RecordTest, EncryptionFieldsRoundTrip) {
  ObjectRecord o;
  o.size_bytes = 70000;
  o.is_inline = false;
  o.file_id = std::string(32, 'f');
  o.sse.mode = SseMode::kKms;
  o.sse.wrapped_key = std::string("\x01wrapped\0key", 13);
  o.sse.key_arn = "arn:aws:kms:us-east-1:1:key/k";
  o.sse.context = R"({"aws:s3:arn":"arn:aws:s3:::b/k"})";
  o.sse.bucket_key = true;
  o.sse.salt = std::string(16, 's');
  auto back = DecodeObjectRecord(EncodeObjectRecord(o));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->sse, o.sse);
  // Multipart: one salt per part.
  o.parts = {{"p1", 5, "e1", "", std::string(16, '1')}, {"p2", 6, "e2", "", std::string(16, '2')}};
  back = DecodeObjectRecord(EncodeObjectRecord(o));
  ASSERT_TRUE(back);
  ASSERT_EQ(back->parts.size(), 2u);
  EXPECT_EQ(back->parts[1].salt, std::string(16, '2'));
  // Inline data of an encrypted version is its sealed form: plaintext size + 16 per chunk.
  ObjectRecord inl;
  inl.size_bytes = 10;
  inl.sse.mode = SseMode::kS3;
  inl.inline_data = std::string(26, 'x');
  EXPECT_TRUE(DecodeObjectRecord(EncodeObjectRecord(inl)));
  inl.inline_data = std::string(10, 'x');
  EXPECT_FALSE(DecodeObjectRecord(EncodeObjectRecord(inl)));
  // Unknown modes are refused.
  std::string enc = EncodeObjectRecord(ObjectRecord{});
  enc.back() = 4;
  EXPECT_FALSE(DecodeObjectRecord(enc));
  UploadRecord u;
  u.sse.mode = SseMode::kCustomer;
  u.sse.key_digest = std::string(32, 'd');
  u.sse.salt = std::string(16, 's');
  auto ub = DecodeUploadRecord(EncodeUploadRecord(u));
  ASSERT_TRUE(ub);
  EXPECT_EQ(ub->sse, u.sse);
  PartRecord p{1, "e", 2, "f", "", std::string(16, 'p')};
  auto pb = DecodePartRecord(EncodePartRecord(p));
  ASSERT_TRUE(pb);
  EXPECT_EQ(pb->salt, p.salt);
  BucketRecord b;
  b.default_sse = SseMode::kKms;
  b.default_kms_key = "alias/team";
  b.default_bucket_key = true;
  auto bb = DecodeBucketRecord(EncodeBucketRecord(b));
  ASSERT_TRUE(bb);
  EXPECT_EQ(bb->default_sse, SseMode::kKms);
  EXPECT_EQ(bb->default_kms_key, "alias/team");
  EXPECT_TRUE(bb->default_bucket_key);
  b.default_sse = SseMode::kCustomer;  // no bucket default
  EXPECT_FALSE(DecodeBucketRecord(EncodeBucketRecord(b)));
}

TEST(RecordTest, EveryDecoderRejectsTrailingBytes) {
  ObjectRecord o;
  o.size_bytes = 2;
  o.inline_data = "hi";
  o.tags = {{"k", "v"}};
  PartRecord p;
  p.etag = "e";
  UploadRecord u;
  u.owner = "me";
  EXPECT_TRUE(DecodeObjectRecord(EncodeObjectRecord(o)));
  EXPECT_FALSE(DecodeObjectRecord(EncodeObjectRecord(o) + 'x'));
  EXPECT_TRUE(DecodePartRecord(EncodePartRecord(p)));
  EXPECT_FALSE(DecodePartRecord(EncodePartRecord(p) + 'x'));
  EXPECT_TRUE(DecodeUploadRecord(EncodeUploadRecord(u)));
  EXPECT_FALSE(DecodeUploadRecord(EncodeUploadRecord(u) + 'x'));
}

// Format 4 (versioning and Object Lock) and bucket format 3 round trip;
// a format 3 record (written before versioning) reads as the null version.
TEST(RecordTest, VersionAndLockFieldsRoundTrip) {
  ObjectRecord o;
  o.is_inline = false;
  o.file_id = std::string(32, 'a');
  o.version_stamp = 0x1234567890abcdefull;
  o.versioned = true;
  o.lock = {LockMode::kCompliance, 1900000000000000000, LegalHold::kOn};
  o.lock_on_drives = true;
  auto back = DecodeObjectRecord(EncodeObjectRecord(o));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->versioned);
  EXPECT_FALSE(back->delete_marker);
  EXPECT_TRUE(back->lock_on_drives);
  EXPECT_EQ(back->lock, o.lock);
  EXPECT_EQ(back->VersionId(), VersionIdOf(o.version_stamp));
  ObjectRecord marker;
  marker.delete_marker = true;
  marker.versioned = true;
  back = DecodeObjectRecord(EncodeObjectRecord(marker));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->delete_marker);
  // A mode without a date (or a date without a mode) is not a valid lock.
  ObjectRecord bad = o;
  bad.lock.retain_until_ns = 0;
  EXPECT_FALSE(DecodeObjectRecord(EncodeObjectRecord(bad)));
  // Format 3: the record ends after the upload id and has no version flags.
  ObjectRecord old;
  old.size_bytes = 1;
  old.inline_data = "x";
  std::string enc = EncodeObjectRecord(old);
  // drop the pool and restore state (format 7, none: 6 bytes), the
  // encryption (format 6, none: 1 byte), owner and ACL (format 5, empty: 1
  // byte each), mode, until (varint 0), hold
  std::string v3 = enc.substr(0, enc.size() - 12);
  v3[0] = 3;
  back = DecodeObjectRecord(v3);
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->versioned);
  EXPECT_EQ(back->VersionId(), "null");

  BucketRecord b{5, "us-east-1", "me"};
  b.versioning = Versioning::kSuspended;
  b.object_lock = true;
  b.default_retention = {LockMode::kGovernance, 0, 7};
  auto bb = DecodeBucketRecord(EncodeBucketRecord(b));
  ASSERT_TRUE(bb);
  EXPECT_EQ(bb->versioning, Versioning::kSuspended);
  EXPECT_TRUE(bb->object_lock);
  EXPECT_EQ(bb->default_retention, b.default_retention);
  EXPECT_EQ(bb->policy, "");
  // Format 4: the bucket policy; a format-3 record (no policy) still decodes.
  b.policy = R"({"Version":"2012-10-17","Statement":[]})";
  std::string v4 = EncodeBucketRecord(b);
  bb = DecodeBucketRecord(v4);
  ASSERT_TRUE(bb);
  EXPECT_EQ(bb->policy, b.policy);
  b.cors = "<CORSConfiguration/>";
  v4 = EncodeBucketRecord(b);
  bb = DecodeBucketRecord(v4);
  ASSERT_TRUE(bb);
  EXPECT_EQ(bb->cors, b.cors);
  b.public_access_block = 0x85;
  v4 = EncodeBucketRecord(b);
  bb = DecodeBucketRecord(v4);
  ASSERT_TRUE(bb);
  EXPECT_EQ(bb->public_access_block, 0x85);
  // Format 5 appends the ownership byte and the ACL (1 byte when empty),
  // format 6 the default encryption (3 bytes when none), format 7 the
  // lifecycle configuration and its minimum (1 byte each when none), format 8
  // the notification and logging configurations (1 byte each when none).
  std::string bucket_v3 = v4.substr(0, v4.size() - 12 - b.policy.size() - b.cors.size());
  bucket_v3[0] = 3;
  bb = DecodeBucketRecord(bucket_v3);
  ASSERT_TRUE(bb);
  EXPECT_EQ(bb->policy, "");
  EXPECT_EQ(bb->default_retention, b.default_retention);

  // Format 5: ownership and the bucket ACL.
  b.ownership = Ownership::kObjectWriter;
  b.acl = std::string("\x01" "acl", 4);
  bb = DecodeBucketRecord(EncodeBucketRecord(b));
  ASSERT_TRUE(bb);
  EXPECT_EQ(bb->ownership, Ownership::kObjectWriter);
  EXPECT_EQ(bb->acl, b.acl);
  std::string bad_ownership = EncodeBucketRecord(b);
  // ownership | len | acl | the default encryption (3 bytes when none) | lifecycle (2)
  // | notification (1) | logging (1)
  bad_ownership[bad_ownership.size() - 5 - b.acl.size() - 4] = 7;
  EXPECT_FALSE(DecodeBucketRecord(bad_ownership));

  UploadRecord u;
  u.lock = ObjectLock{LockMode::kGovernance, 42, LegalHold::kOff};
  u.object_owner = std::string(64, 'e');
  u.acl = "grants";
  auto ub = DecodeUploadRecord(EncodeUploadRecord(u));
  ASSERT_TRUE(ub && ub->lock);
  EXPECT_EQ(*ub->lock, *u.lock);
  EXPECT_EQ(ub->object_owner, u.object_owner);
  EXPECT_EQ(ub->acl, u.acl);
  // Format 5 objects: owner, ACL and the flag of an ACL record on the drives.
  ObjectRecord owned = o;
  owned.owner = std::string(64, 'd');
  owned.acl = "acl bytes";
  owned.acl_on_drives = true;
  auto ob = DecodeObjectRecord(EncodeObjectRecord(owned));
  ASSERT_TRUE(ob);
  EXPECT_EQ(ob->owner, owned.owner);
  EXPECT_EQ(ob->acl, owned.acl);
  EXPECT_TRUE(ob->acl_on_drives);
  EXPECT_EQ(ob->DataFiles().back(), AclRecordId(owned.file_id));
  AclRecord ar{std::string(32, 'f'), 5, owned.owner, owned.acl};
  auto ab = DecodeAclRecord(EncodeAclRecord(ar));
  ASSERT_TRUE(ab);
  EXPECT_EQ(ab->owner, ar.owner);
  EXPECT_EQ(ab->acl, ar.acl);
  EXPECT_FALSE(DecodeAclRecord(EncodeAclRecord(ar) + 'x'));
  auto trailer = DecodeTrailer(EncodeTrailer(TrailerKind::kAcl, "p"));
  ASSERT_TRUE(trailer);
  EXPECT_EQ(trailer->first, TrailerKind::kAcl);
  LockRecord lr{std::string(32, 'b'), 9, {LockMode::kGovernance, 77, LegalHold::kOn}};
  auto lb = DecodeLockRecord(EncodeLockRecord(lr));
  ASSERT_TRUE(lb);
  EXPECT_EQ(lb->lock, lr.lock);
  EXPECT_FALSE(DecodeLockRecord(EncodeLockRecord(lr) + 'x'));
}

// Format 7 objects and buckets, format 5 uploads: the pool of the data and
// the lifecycle configuration; a format-6 record (no pool) reads as the
// first pool's.
TEST(RecordTest, PoolAndLifecycleRoundTrip) {
  ObjectRecord o;
  o.is_inline = false;
  o.file_id = std::string(32, 'a');
  o.size_bytes = 10;
  o.storage_class = "STANDARD_IA";
  o.pool = "warm";
  auto back = DecodeObjectRecord(EncodeObjectRecord(o));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->pool, "warm");
  EXPECT_EQ(back->storage_class, "STANDARD_IA");
  o.restore.ongoing = true;
  o.restore.days = 3;
  back = DecodeObjectRecord(EncodeObjectRecord(o));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->restore, o.restore);
  o.restore = {false, 3, 12345, "hot", {std::string(32, 'd')}};
  back = DecodeObjectRecord(EncodeObjectRecord(o));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->restore, o.restore);
  EXPECT_EQ(back->DataFiles().back(), std::string(32, 'd')) << "the copy is collected with it";
  // A copy is one file per data file; an ongoing restore has no copy yet.
  ObjectRecord bad = o;
  bad.restore.files.push_back(std::string(32, 'e'));
  EXPECT_FALSE(DecodeObjectRecord(EncodeObjectRecord(bad)));
  bad = o;
  bad.restore.ongoing = true;
  EXPECT_FALSE(DecodeObjectRecord(EncodeObjectRecord(bad)));
  bad = o;
  bad.is_inline = true;
  bad.file_id.clear();
  bad.inline_data = std::string(10, 'i');
  EXPECT_FALSE(DecodeObjectRecord(EncodeObjectRecord(bad))) << "inline data has no copy files";
  o.restore = {};
  o.pool.clear();
  std::string v6 = EncodeObjectRecord(o);
  v6.resize(v6.size() - 6);  // the empty pool and restore state
  v6[0] = 6;
  back = DecodeObjectRecord(v6);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->pool, "");
  std::string v7 = EncodeObjectRecord(o);
  EXPECT_FALSE(DecodeObjectRecord(v7 + 'x'));
  v7[0] = 8;
  EXPECT_FALSE(DecodeObjectRecord(v7));  // a format from the future

  UploadRecord u;
  u.pool = "cold";
  auto ub = DecodeUploadRecord(EncodeUploadRecord(u));
  ASSERT_TRUE(ub);
  EXPECT_EQ(ub->pool, "cold");

  BucketRecord b{5, "us-east-1", "me"};
  b.lifecycle = "<LifecycleConfiguration/>";
  b.lifecycle_min_transition_bytes = 128 << 10;
  b.default_sse = SseMode::kS3;
  auto bb = DecodeBucketRecord(EncodeBucketRecord(b));
  ASSERT_TRUE(bb);
  EXPECT_EQ(bb->lifecycle, b.lifecycle);
  EXPECT_EQ(bb->lifecycle_min_transition_bytes, 128u << 10);
  EXPECT_EQ(bb->default_sse, SseMode::kS3);
  b.lifecycle.clear();
  b.lifecycle_min_transition_bytes = 0;
  std::string b6 = EncodeBucketRecord(b);
  b6.resize(b6.size() - 4);
  b6[0] = 6;
  bb = DecodeBucketRecord(b6);
  ASSERT_TRUE(bb);
  EXPECT_EQ(bb->default_sse, SseMode::kS3);
  EXPECT_EQ(bb->lifecycle, "");

  // Format 8: the notification and logging configurations; a format-7 record
  // has neither.
  b.notification = "<NotificationConfiguration/>";
  b.logging = "<BucketLoggingStatus/>";
  std::string b8 = EncodeBucketRecord(b);
  bb = DecodeBucketRecord(b8);
  ASSERT_TRUE(bb);
  EXPECT_EQ(bb->notification, b.notification);
  EXPECT_EQ(bb->logging, b.logging);
  b.notification.clear();
  b.logging.clear();
  std::string b7 = EncodeBucketRecord(b);
  b7.resize(b7.size() - 2);
  b7[0] = 7;
  bb = DecodeBucketRecord(b7);
  ASSERT_TRUE(bb);
  EXPECT_EQ(bb->notification, "");
  b7[0] = 8;  // format 8 without its fields
  EXPECT_FALSE(DecodeBucketRecord(b7));
}

// Version ids sort as the versions do (newest first) and parse back.
TEST(RecordTest, VersionIdsSortNewestFirstAndParse) {
  const std::string older = VersionIdOf(1000), newer = VersionIdOf(2000);
  EXPECT_LT(newer, older);
  EXPECT_EQ(older.size(), 16u);
  auto v = ParseVersionId(older);
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->null);
  EXPECT_EQ(v->stamp, 1000u);
  EXPECT_TRUE(ParseVersionId("null")->null);
  for (const char* bad : {"", "NULL", "0123456789abcdeF", "0123456789abcde", "0123456789abcdef0",
                          "../../etc/passwd", "0123456789abcdeg"}) {
    EXPECT_FALSE(ParseVersionId(bad)) << bad;
  }
}

}  // namespace
}  // namespace strata::object

namespace strata::object {
namespace {

// The latest-version index keeps records without their inline data: they
// decode as listed records (size and the rest kept), never as records an
// object could be read from; a full record is no listed one.
TEST(RecordTest, ListedRecordsLeaveInlineDataOut) {
  ObjectRecord r;
  r.is_inline = true;
  r.inline_data = std::string(1000, 'x');
  r.size_bytes = 1000;
  r.etag = "abc";
  r.version_stamp = 7;
  r.storage_class = "GLACIER";
  const std::string listed = EncodeListedRecord(r);
  EXPECT_LT(listed.size(), EncodeObjectRecord(r).size() - 900);
  auto back = DecodeListedRecord(listed);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->size_bytes, 1000u);
  EXPECT_EQ(back->etag, "abc");
  EXPECT_EQ(back->storage_class, "GLACIER");
  EXPECT_TRUE(back->inline_data.empty());
  EXPECT_FALSE(DecodeObjectRecord(listed));
  EXPECT_FALSE(DecodeListedRecord(EncodeObjectRecord(r)));
  r.is_inline = false;
  r.inline_data.clear();
  r.file_id = std::string(32, 'a');
  EXPECT_TRUE(DecodeListedRecord(EncodeListedRecord(r)));
}

}  // namespace
}  // namespace strata::object

// The start-up orphan sweep (ObjectEngine::SweepUnreferencedData) on an
// erasure-coded pool: pieces a power loss left behind that no metadata record
// names (an object's data, a part of no upload, the marker of a bucket whose
// record never committed) are removed when the engine opens; every piece a
// record names (data, parts, manifests, tag records, bucket and upload
// markers) stays, and so does what the sweep cannot read.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "meta/kv_store.h"
#include "object/engine.h"
#include "object/pool_engine_test_util.h"
#include "object/record.h"

namespace strata::object {
namespace {

class OrphanSweepTest : public PoolEngineTest {
 protected:
  void SetUp() override { Open(); }

  void Put(const std::string& key, const std::string& body) {
    auto w = engine_->NewWriter("b", key, {});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Append(body).ok());
    ASSERT_TRUE((*w)->Commit().ok());
  }

  // Writes a piece straight to the pool, as a write that lost its metadata
  // to a power cut leaves it: synced shards, header and trailer.
  void Plant(const std::string& id, const storage::DataHeader& header, const std::string& body,
             const std::string& trailer) {
    auto w = store_->Create(id, header);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Append(body).ok());
    ASSERT_TRUE((*w)->Finish(trailer).ok());
  }
  void PlantObject(const std::string& id, const std::string& key, const std::string& body) {
    ObjectRecord rec;
    rec.size_bytes = body.size();
    rec.etag = Md5Hex(body);
    rec.version_stamp = 7;
    rec.is_inline = false;
    rec.file_id = id;
    Plant(id, {"b", key, "", 0, 7}, body,
          EncodeTrailer(TrailerKind::kObject, EncodeObjectRecord(rec)));
  }

  std::set<std::string> Ids() {
    auto ids = store_->ListIds();
    EXPECT_TRUE(ids.ok()) << ids.status().ToString();
    return ids.ok() ? std::set<std::string>(ids->begin(), ids->end()) : std::set<std::string>();
  }
  // How many drives hold a shard file of `id`.
  int ShardFiles(const std::string& id) {
    int n = 0;
    for (int i = 0; i < kDrives; ++i) {
      auto f = mem_->NewReadableFile("/pool/d" + std::to_string(i) + "/shards/" +
                                     id.substr(0, 2) + "/" + id);
      if (f.ok()) ++n;
    }
    return n;
  }

};

TEST_F(OrphanSweepTest, UnreferencedPiecesGoReferencedOnesStay) {
  ASSERT_TRUE(engine_->CreateBucket("b", BucketRecord{1, "us-east-1", "me"}).ok());
  const std::string body(10000, 'x');
  Put("kept", body);
  Put("tagged", body);
  ASSERT_TRUE(engine_->SetTags("b", "tagged", {{"color", "red"}}).ok());  // a tag record
  auto done = engine_->CreateUpload("b", "multi", {});
  ASSERT_TRUE(done.ok());
  PutPart("multi", *done, 1, body);
  Complete("multi", *done, {body});
  auto open = engine_->CreateUpload("b", "pending", {});  // an upload marker, a part
  ASSERT_TRUE(open.ok());
  PutPart("pending", *open, 1, body);
  const std::set<std::string> referenced = Ids();
  ASSERT_GE(referenced.size(), 8u);  // bucket marker, 2 objects, tags, part+manifest, marker+part

  const std::string object_orphan(32, 'a'), part_orphan(32, 'b'), unknown(32, 'c');
  PlantObject(object_orphan, "ghost", body);
  ObjectRecord part;
  part.size_bytes = body.size();
  part.etag = Md5Hex(body);
  part.is_inline = false;
  Plant(part_orphan, {"b", "pending", "0123456789abcdef0123456789abcdef", 1, 9}, body,
        EncodeTrailer(TrailerKind::kPart, EncodeObjectRecord(part)));
  const std::string marker_orphan = ObjectEngine::BucketMarkerId("never-created");
  Plant(marker_orphan, {"never-created", "", "", 0, 11}, "",
        EncodeTrailer(TrailerKind::kBucket, EncodeBucketRecord({2, "us-east-1", "me"})));
  Plant(unknown, {"b", "future", "", 0, 12}, "", "Z: a trailer kind of a later version");
  for (const std::string& id : {object_orphan, part_orphan, marker_orphan, unknown}) {
    ASSERT_EQ(ShardFiles(id), kDrives) << id;
  }

  Open();  // start-up: the sweep runs

  for (const std::string& id : {object_orphan, part_orphan, marker_orphan}) {
    EXPECT_EQ(ShardFiles(id), 0) << id << " was referenced by no record";
  }
  EXPECT_EQ(ShardFiles(unknown), kDrives) << "a piece the sweep cannot name is kept";
  std::set<std::string> want = referenced;
  want.insert(unknown);
  EXPECT_EQ(Ids(), want);
  for (const char* key : {"kept", "tagged", "multi"}) {
    auto got = Get("b", key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status().ToString();
    EXPECT_EQ(*got, body) << key;
  }
  auto tagged = engine_->HeadObject("b", "tagged");
  ASSERT_TRUE(tagged.ok());
  EXPECT_EQ(tagged->tags, (Tags{{"color", "red"}}));
  auto parts = engine_->ListParts(*open);
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ(ShardFiles(parts->front().record.file_id), kDrives);
}

TEST_F(OrphanSweepTest, LostMetadataDeletesNothing) {
  ASSERT_TRUE(engine_->CreateBucket("b", BucketRecord{1, "us-east-1", "me"}).ok());
  Put("k1", std::string(5000, 'y'));
  Put("k2", std::string(5000, 'z'));
  const std::set<std::string> before = Ids();
  ASSERT_EQ(before.size(), 3u);
  kv_ = meta::NewMemStore();  // the metadata is gone: a case for rebuild-index
  Open();
  EXPECT_EQ(Ids(), before);
}

}  // namespace
}  // namespace strata::object

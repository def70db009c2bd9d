// The latest-version index (object/latest_index.h): after every batch of
// random version puts, rewrites, deletes and delete markers — several keys
// and several ops on one key in a batch included — the 'T' entries are
// exactly the newest non-marker version of each key, without inline data;
// Open builds them for versions written before the index, and redoes a
// build cut short.
#include "object/latest_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "meta/keys.h"
#include "meta/mem_store.h"
#include "object/record.h"

namespace strata::object {
namespace {

ObjectRecord Version(uint64_t stamp, bool marker, const std::string& data) {
  ObjectRecord r;
  r.version_stamp = stamp;
  r.versioned = true;
  r.delete_marker = marker;
  if (!marker) {
    r.is_inline = true;
    r.inline_data = data;
    r.size_bytes = data.size();
    r.etag = "etag-" + data;
  }
  return r;
}

// bucket '\0' key -> stamp -> record: what the 'O' records hold.
using Model = std::map<std::string, std::map<uint64_t, ObjectRecord>>;

std::map<std::string, std::string> Entries(meta::KvStore* kv) {
  std::map<std::string, std::string> out;
  const std::string prefix(1, meta::kLatestPrefix);
  auto it = kv->NewIterator();
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    out[std::string(it->key())] = std::string(it->value());
  }
  EXPECT_TRUE(it->status().ok());
  return out;
}

void ExpectMatches(const Model& model, meta::KvStore* kv, const std::string& where) {
  std::map<std::string, std::string> want;
  for (const auto& [name, versions] : model) {
    if (versions.empty()) continue;
    const ObjectRecord& newest = versions.rbegin()->second;
    if (newest.delete_marker) continue;
    const size_t nul = name.find('\0');
    want[meta::LatestKey(name.substr(0, nul), name.substr(nul + 1))] = EncodeListedRecord(newest);
  }
  EXPECT_EQ(Entries(kv), want) << where;
}

TEST(LatestIndexTest, FollowsEveryBatchOfRandomVersionChanges) {
  auto kv = meta::NewMemStore();
  auto x = LatestIndex::Open(kv.get());
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  meta::KvStore* store = (*x)->store();
  Model model;
  std::mt19937_64 rng(20261206);
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"b1", "a"}, {"b1", "ab"}, {"b1", "b/c"}, {"b2", "a"}};
  uint64_t next_stamp = 1000;
  for (int round = 0; round < 2000; ++round) {
    meta::WriteBatch batch;
    Model after = model;
    const int ops = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < ops; ++i) {
      const auto& [bucket, key] = keys[rng() % keys.size()];
      auto& versions = after[bucket + '\0' + key];
      const int what = static_cast<int>(rng() % 10);
      if (what < 4 || versions.empty()) {
        // A new version; now and then older than the newest (a write that
        // started earlier and commits later).
        uint64_t stamp = ++next_stamp;
        if (what == 0 && next_stamp > 1010) stamp = next_stamp - 1 - rng() % 8;
        if (versions.count(stamp)) continue;
        ObjectRecord r = Version(stamp, rng() % 4 == 0, "d" + std::to_string(round));
        batch.Put(meta::ObjectVersionKey(bucket, key, stamp), EncodeObjectRecord(r));
        versions[stamp] = r;
      } else {
        auto v = versions.begin();
        std::advance(v, rng() % versions.size());
        if (what < 7) {  // remove one version (the newest as often as any)
          batch.Delete(meta::ObjectVersionKey(bucket, key, v->first));
          versions.erase(v);
        } else {  // rewrite one in place (tags, a transition, a retention)
          ObjectRecord r = v->second;
          r.storage_class = "GLACIER" + std::to_string(round);
          batch.Put(meta::ObjectVersionKey(bucket, key, v->first), EncodeObjectRecord(r));
          v->second = r;
        }
      }
    }
    batch.Put(meta::GarbageKey("f" + std::to_string(round)), "");  // not a version
    // Every other batch given up by its writer: the entries are added to it
    // in place (meta::ExtendedBatch), not to a copy.
    if (round % 2) {
      ASSERT_TRUE(store->Write(std::move(batch), /*sync=*/false).ok());
    } else {
      ASSERT_TRUE(store->Write(batch, /*sync=*/false).ok());
    }
    model = std::move(after);
    ExpectMatches(model, kv.get(), "after round " + std::to_string(round));
    if (HasFailure()) return;
  }
}

TEST(LatestIndexTest, LaterOpsOnOneVersionInABatchWin) {
  auto kv = meta::NewMemStore();
  auto x = LatestIndex::Open(kv.get());
  ASSERT_TRUE(x.ok());
  meta::WriteBatch b;
  b.Put(meta::ObjectVersionKey("b", "k", 5), EncodeObjectRecord(Version(5, false, "x")));
  b.Delete(meta::ObjectVersionKey("b", "k", 5));
  ASSERT_TRUE((*x)->store()->Write(b, false).ok());
  EXPECT_TRUE(Entries(kv.get()).empty());
  meta::WriteBatch c;
  c.Delete(meta::ObjectVersionKey("b", "k", 6));
  c.Put(meta::ObjectVersionKey("b", "k", 6), EncodeObjectRecord(Version(6, false, "y")));
  ASSERT_TRUE((*x)->store()->Write(c, false).ok());
  ExpectMatches({{std::string("b\0k", 3), {{6, Version(6, false, "y")}}}}, kv.get(), "put last");
}

TEST(LatestIndexTest, OpenBuildsEntriesForVersionsWrittenBeforeTheIndex) {
  auto kv = meta::NewMemStore();
  Model model;
  meta::WriteBatch b;
  for (int k = 0; k < 50; ++k) {
    const std::string key = "key" + std::to_string(k);
    for (uint64_t s = 1; s <= 3; ++s) {
      ObjectRecord r = Version(s, k % 5 == 0 && s == 3, "v" + std::to_string(s));
      b.Put(meta::ObjectVersionKey("old", key, s), EncodeObjectRecord(r));
      model[std::string("old") + '\0' + key][s] = r;
    }
  }
  // Entries of a build that was cut short: one stale, one for a key that is gone.
  b.Put(meta::LatestKey("old", "key1"), "stale");
  b.Put(meta::LatestKey("old", "gone"), "stale");
  ASSERT_TRUE(kv->Write(b, false).ok());

  auto x = LatestIndex::Open(kv.get());
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  EXPECT_EQ((*x)->built_entries(), 40u);  // 50 keys, 10 with a marker on top
  ExpectMatches(model, kv.get(), "after the build");
  auto ready = kv->Get(meta::LatestIndexReadyKey());
  ASSERT_TRUE(ready.ok() && ready->has_value());

  // Ready: a second open builds nothing and leaves the entries alone.
  auto again = LatestIndex::Open(kv.get());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->built_entries(), 0u);
  ExpectMatches(model, kv.get(), "after a second open");
}

TEST(LatestIndexTest, WritesWithoutVersionsPassThroughUnchanged) {
  auto kv = meta::NewMemStore();
  auto x = LatestIndex::Open(kv.get());
  ASSERT_TRUE(x.ok());
  meta::WriteBatch b;
  b.Put(meta::BucketKey("b"), "rec");
  b.Put(meta::IntentKey("abc"), "");
  ASSERT_TRUE((*x)->store()->Write(b, false).ok());
  EXPECT_TRUE(Entries(kv.get()).empty());
  auto got = kv->Get(meta::BucketKey("b"));
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, "rec");
}

}  // namespace
}  // namespace strata::object

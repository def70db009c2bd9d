// Versions in the engine (object/versions.cc, list.cc): null versions,
// delete markers, deletes by version, ListVersions paging, ListObjects
// skipping old versions and deleted keys, and Object Lock on every path that
// removes or replaces a version.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "io/mem_fs.h"
#include "meta/keys.h"
#include "object/engine.h"
#include "object/plain_engine_test_util.h"
#include "object/lock.h"
#include "storage/plain_store.h"

namespace strata::object {
namespace {

class VersionsTest : public PlainEngineTest {
 protected:

  ObjectRecord Put(const std::string& key, const std::string& data, WriteOptions o = {}) {
    auto w = engine_->NewWriter("b", key, {}, std::move(o));
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (!w.ok()) return {};
    EXPECT_TRUE((*w)->Append(data).ok());
    auto rec = (*w)->Commit();
    EXPECT_TRUE(rec.ok()) << rec.status().ToString();
    return rec.ok() ? *rec : ObjectRecord{};
  }
  Result<ObjectRecord> PutStatus(const std::string& key, const std::string& data,
                                 WriteOptions o = {}) {
    ASSIGN_OR_RETURN(auto w, engine_->NewWriter("b", key, {}, std::move(o)));
    RETURN_IF_ERROR(w->Append(data));
    return w->Commit();
  }
  std::string Read(const std::string& key, const Version& v) {
    auto r = engine_->OpenVersion("b", key, v);
    if (!r.ok()) return "<" + r.status().ToString() + ">";
    if ((*r)->record().delete_marker) return "<marker>";
    std::string out((*r)->record().size_bytes, '\0');
    auto n = (*r)->ReadAt(0, out.data(), out.size());
    EXPECT_TRUE(n.ok());
    return out;
  }
  static Version Id(const ObjectRecord& r) { return ParseVersionId(r.VersionId()); }
  std::vector<std::string> Versions(const std::string& key) {  // ids, newest first
    ListVersionsParams p;
    p.prefix = key;
    auto l = engine_->ListVersions("b", p);
    EXPECT_TRUE(l.ok());
    std::vector<std::string> out;
    for (const auto& v : l->versions) {
      if (v.key == key) out.push_back((v.record.delete_marker ? "M:" : "") + v.record.VersionId());
    }
    return out;
  }
  void Enable() { ASSERT_TRUE(engine_->SetBucketVersioning("b", Versioning::kEnabled).ok()); }
};

TEST_F(VersionsTest, NullVersionsReplaceEachOtherAndVersionsAccumulate) {
  ObjectRecord n1 = Put("k", "null-1");
  EXPECT_FALSE(n1.versioned);
  ObjectRecord n2 = Put("k", "null-2");  // unversioned: replaces
  EXPECT_EQ(Versions("k"), (std::vector<std::string>{"null"}));
  Enable();
  ObjectRecord v1 = Put("k", "v1");
  ObjectRecord v2 = Put("k", "v2");
  EXPECT_TRUE(v1.versioned);
  EXPECT_EQ(Versions("k"), (std::vector<std::string>{v2.VersionId(), v1.VersionId(), "null"}));
  EXPECT_EQ(Read("k", std::nullopt), "v2");
  EXPECT_EQ(Read("k", Id(v1)), "v1");
  EXPECT_EQ(Read("k", VersionSelector{true, 0}), "null-2");
  // Suspended: a PUT replaces the null version wherever it is; older versions stay.
  ASSERT_TRUE(engine_->SetBucketVersioning("b", Versioning::kSuspended).ok());
  ObjectRecord n3 = Put("k", "null-3");
  EXPECT_EQ(Versions("k"), (std::vector<std::string>{"null", v2.VersionId(), v1.VersionId()}));
  EXPECT_EQ(Read("k", std::nullopt), "null-3");
  Enable();
  ObjectRecord v3 = Put("k", "v3");
  EXPECT_EQ(Versions("k"),
            (std::vector<std::string>{v3.VersionId(), "null", v2.VersionId(), v1.VersionId()}));
  // An unknown version is NoSuchVersion; the null version has no other id.
  EXPECT_EQ(engine_->HeadVersion("b", "k", VersionSelector{false, 12345}).status().detail(),
            Detail::kVersion);
  EXPECT_EQ(engine_->HeadVersion("b", "k", VersionSelector{false, n3.version_stamp}).status().detail(),
            Detail::kVersion);
}

TEST_F(VersionsTest, DeleteMarkersHideAndDeletingThemUndeletes) {
  Enable();
  ObjectRecord v1 = Put("k", "v1");
  auto out = engine_->DeleteVersion("b", "k", std::nullopt);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->delete_marker);
  EXPECT_EQ(engine_->HeadObject("b", "k").status().code(), Code::kNotFound);
  auto latest = engine_->HeadVersion("b", "k", std::nullopt);
  ASSERT_TRUE(latest.ok());
  EXPECT_TRUE(latest->delete_marker);
  EXPECT_EQ(latest->VersionId(), out->version_id);
  EXPECT_EQ(Read("k", Id(v1)), "v1");  // still there
  auto listed = engine_->ListObjects("b", {});
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->objects.empty());
  // Deleting the marker brings v1 back.
  auto undo = engine_->DeleteVersion("b", "k", ParseVersionId(out->version_id));
  ASSERT_TRUE(undo.ok());
  EXPECT_TRUE(undo->delete_marker);
  EXPECT_EQ(Read("k", std::nullopt), "v1");
  // Deleting a version that does not exist is not an error.
  auto none = engine_->DeleteVersion("b", "k", VersionSelector{false, 777});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->delete_marker);
  // In a suspended bucket a DELETE replaces the null version by a null marker.
  ASSERT_TRUE(engine_->SetBucketVersioning("b", Versioning::kSuspended).ok());
  Put("k", "null");
  auto m = engine_->DeleteVersion("b", "k", std::nullopt);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->version_id, "null");
  EXPECT_EQ(Versions("k"), (std::vector<std::string>{"M:null", v1.VersionId()}));
}

TEST_F(VersionsTest, ListObjectsShowsLatestOnlyAndSkipsDeletedPrefixes) {
  Enable();
  for (int i = 0; i < 50; ++i) Put("dir/a", "v" + std::to_string(i));
  Put("dir/b", "b");
  Put("gone/x", "x");
  ASSERT_TRUE(engine_->DeleteVersion("b", "gone/x", std::nullopt).ok());
  Put("top", "t");
  ListParams p;
  auto all = engine_->ListObjects("b", p);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->objects.size(), 3u);
  EXPECT_EQ(all->objects[0].key, "dir/a");
  EXPECT_EQ(all->objects[0].record.size_bytes, 3u);  // "v49"
  EXPECT_EQ(all->objects[2].key, "top");
  p.delimiter = "/";
  auto grouped = engine_->ListObjects("b", p);
  ASSERT_TRUE(grouped.ok());
  EXPECT_EQ(grouped->common_prefixes, (std::vector<std::string>{"dir/"}));  // not "gone/"
  ASSERT_EQ(grouped->objects.size(), 1u);
  p.delimiter.clear();
  p.max_keys = 1;
  auto page = engine_->ListObjects("b", p);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->is_truncated);
  p.start_after = page->last_emitted;
  page = engine_->ListObjects("b", p);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, "dir/b");
}

// A bucket that names versions lists from its live-object entries: they
// follow every change of a key's latest version, and turning versioning on
// makes entries for the keys already there.
TEST_F(VersionsTest, ListObjectsFollowsTheLatestVersionOfVersionedBuckets) {
  Put("before", "x");  // written while never versioned
  Put("dir/a", "a");
  Enable();
  auto keys = [&] {
    std::vector<std::string> out;
    auto l = engine_->ListObjects("b", {});
    EXPECT_TRUE(l.ok());
    for (const auto& e : l->objects) out.push_back(e.key + "=" + std::to_string(e.record.size_bytes));
    return out;
  };
  EXPECT_EQ(keys(), (std::vector<std::string>{"before=1", "dir/a=1"}));
  ObjectRecord v1 = Put("k", "one");
  ObjectRecord v2 = Put("k", "second");
  EXPECT_EQ(keys(), (std::vector<std::string>{"before=1", "dir/a=1", "k=6"}));
  // Removing the latest by id: the older one is listed.
  ASSERT_TRUE(engine_->DeleteVersion("b", "k", Id(v2)).ok());
  EXPECT_EQ(keys(), (std::vector<std::string>{"before=1", "dir/a=1", "k=3"}));
  // A marker hides the key; removing the marker brings it back.
  auto m = engine_->DeleteVersion("b", "k", std::nullopt);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(keys(), (std::vector<std::string>{"before=1", "dir/a=1"}));
  ASSERT_TRUE(engine_->DeleteVersion("b", "k", ParseVersionId(m->version_id)).ok());
  EXPECT_EQ(keys(), (std::vector<std::string>{"before=1", "dir/a=1", "k=3"}));
  // The last version gone: nothing left to list.
  ASSERT_TRUE(engine_->DeleteVersion("b", "k", Id(v1)).ok());
  EXPECT_EQ(keys(), (std::vector<std::string>{"before=1", "dir/a=1"}));
  // The null version written before versioning is one too.
  ASSERT_TRUE(engine_->DeleteVersion("b", "before", VersionSelector{true, 0}).ok());
  EXPECT_EQ(keys(), (std::vector<std::string>{"dir/a=1"}));
  // Suspended: null writes and null markers keep the entries right.
  ASSERT_TRUE(engine_->SetBucketVersioning("b", Versioning::kSuspended).ok());
  Put("dir/a", "again");
  EXPECT_EQ(keys(), (std::vector<std::string>{"dir/a=5"}));
  ASSERT_TRUE(engine_->DeleteVersion("b", "dir/a", std::nullopt).ok());
  EXPECT_TRUE(keys().empty());
  ListParams p;
  p.delimiter = "/";
  auto l = engine_->ListObjects("b", p);
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->common_prefixes.empty());  // dir/ holds only history now
}

// Pages of every size over a mix of versions, markers and prefixes give the
// model's sequence exactly, with IsLatest right and no repeats.
TEST_F(VersionsTest, ListVersionsPagesMatchAModel) {
  Enable();
  std::vector<std::pair<std::string, std::string>> model;  // (key, "id[*]") in list order
  std::map<std::string, std::vector<std::string>> per_key;  // newest first
  const std::vector<std::string> keys = {"a", "a/b", "a/c", "ab", "b", "c/d/e"};
  for (int round = 0; round < 4; ++round) {
    for (const std::string& k : keys) {
      std::string id;
      if ((round + k.size()) % 3 == 2) {
        auto out = engine_->DeleteVersion("b", k, std::nullopt);
        ASSERT_TRUE(out.ok());
        id = "M:" + out->version_id;
      } else {
        id = Put(k, k + std::to_string(round)).VersionId();
      }
      per_key[k].insert(per_key[k].begin(), id);
    }
  }
  for (const auto& [k, ids] : per_key) {
    for (size_t i = 0; i < ids.size(); ++i) model.push_back({k, ids[i] + (i == 0 ? "*" : "")});
  }
  for (int max : {1, 2, 3, 5, 7, 100}) {
    ListVersionsParams p;
    p.max_keys = max;
    std::vector<std::pair<std::string, std::string>> seen;
    for (int pages = 0; pages < 100; ++pages) {
      auto l = engine_->ListVersions("b", p);
      ASSERT_TRUE(l.ok());
      EXPECT_LE(static_cast<int>(l->versions.size()), max);
      for (const auto& v : l->versions) {
        seen.push_back({v.key, (v.record.delete_marker ? "M:" : "") + v.record.VersionId() +
                                   (v.is_latest ? "*" : "")});
      }
      if (!l->is_truncated) break;
      p.key_marker = l->next_key_marker;
      p.version_id_marker = l->next_version_id_marker;
    }
    EXPECT_EQ(seen, model) << "max-keys " << max;
  }
  // key-marker alone skips every version of that key.
  ListVersionsParams p;
  p.key_marker = "a/c";
  auto l = engine_->ListVersions("b", p);
  ASSERT_TRUE(l.ok());
  ASSERT_FALSE(l->versions.empty());
  EXPECT_EQ(l->versions.front().key, "ab");
  // Delimiter: common prefixes counted once, after the marker.
  p = {};
  p.delimiter = "/";
  l = engine_->ListVersions("b", p);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->common_prefixes, (std::vector<std::string>{"a/", "c/"}));
}

TEST_F(VersionsTest, ObjectLockHoldsOnEveryRemovalPath) {
  Enable();
  ASSERT_TRUE(engine_->SetObjectLockConfiguration("b", {}).ok());
  // Suspending a bucket with Object Lock is refused.
  Status st = engine_->SetBucketVersioning("b", Versioning::kSuspended);
  EXPECT_EQ(st.detail(), Detail::kBucketState);
  const int64_t later = engine_->NowNs() + 3600LL * 1'000'000'000;
  WriteOptions compliance;
  compliance.lock = ObjectLock{LockMode::kCompliance, later, LegalHold::kUnset};
  ObjectRecord c = Put("c", "kept", compliance);
  WriteOptions governance;
  governance.lock = ObjectLock{LockMode::kGovernance, later, LegalHold::kUnset};
  ObjectRecord g = Put("g", "gov", governance);
  ObjectRecord h = Put("h", "held");
  ASSERT_TRUE(engine_->SetLegalHold("b", "h", Id(h), true).ok());

  // By version: refused (typed), except GOVERNANCE with the bypass.
  for (const ObjectRecord* r : {&c, &g, &h}) {
    auto out = engine_->DeleteVersion("b", r == &c ? "c" : r == &g ? "g" : "h", Id(*r));
    EXPECT_EQ(out.status().code(), Code::kPermissionDenied);
    EXPECT_EQ(out.status().detail(), Detail::kLocked);
  }
  EXPECT_FALSE(engine_->DeleteVersion("b", "c", Id(c), {true}).ok());
  EXPECT_FALSE(engine_->DeleteVersion("b", "h", Id(h), {true}).ok());
  // Without a version: a marker, allowed.
  ASSERT_TRUE(engine_->DeleteVersion("b", "c", std::nullopt).ok());
  EXPECT_EQ(Read("c", Id(c)), "kept");
  // Retention: COMPLIANCE only extends, by anyone.
  EXPECT_FALSE(engine_->SetRetention("b", "c", Id(c), LockMode::kCompliance, later - 1, true).ok());
  EXPECT_FALSE(engine_->SetRetention("b", "c", Id(c), LockMode::kNone, 0, true).ok());
  EXPECT_FALSE(engine_->SetRetention("b", "c", Id(c), LockMode::kGovernance, later, true).ok());
  EXPECT_TRUE(engine_->SetRetention("b", "c", Id(c), LockMode::kCompliance, later + 1, false).ok());
  EXPECT_EQ(engine_->HeadVersion("b", "c", Id(c))->lock.retain_until_ns, later + 1);
  // GOVERNANCE: shortened only with the bypass; then deletable with it.
  EXPECT_FALSE(engine_->SetRetention("b", "g", Id(g), LockMode::kNone, 0, false).ok());
  EXPECT_TRUE(engine_->DeleteVersion("b", "g", Id(g), {true}).ok());
  EXPECT_EQ(engine_->HeadVersion("b", "g", Id(g)).status().detail(), Detail::kVersion);
  // Legal hold off: deletable.
  ASSERT_TRUE(engine_->SetLegalHold("b", "h", Id(h), false).ok());
  EXPECT_TRUE(engine_->DeleteVersion("b", "h", Id(h)).ok());
  // The bucket still holds c: it cannot be deleted.
  EXPECT_FALSE(engine_->DeleteBucket("b").ok());
  // A lock on a bucket without Object Lock is refused, typed.
  ASSERT_TRUE(engine_->CreateBucket("plain", BucketRecord{2, "us-east-1", "me"}).ok());
  auto w = engine_->NewWriter("plain", "x", {}, compliance);
  EXPECT_EQ(w.status().detail(), Detail::kBucketState);
  EXPECT_EQ(engine_->SetLegalHold("plain", "x", std::nullopt, true).detail(), Detail::kBucketState);
}

// A null version under a legal hold (written before the bucket was suspended
// is impossible with Object Lock, but a hold on a null version of an
// Object Lock bucket is not) cannot be replaced by a suspended-era PUT:
// the replacement path asks object/lock.h too.
TEST_F(VersionsTest, ReplacingANullVersionAsksTheLockRules) {
  Put("k", "null");  // never versioned
  Enable();
  ASSERT_TRUE(engine_->SetObjectLockConfiguration("b", {}).ok());
  ASSERT_TRUE(engine_->SetLegalHold("b", "k", VersionSelector{true, 0}, true).ok());
  // Suspension is refused with Object Lock, so a direct null replacement can
  // only come from a delete of the null version: refused.
  auto out = engine_->DeleteVersion("b", "k", VersionSelector{true, 0});
  EXPECT_EQ(out.status().detail(), Detail::kLocked);
  EXPECT_EQ(Read("k", VersionSelector{true, 0}), "null");
}

// Concurrent PUTs, deletes (markers and by version) and listings of the
// same keys: every acknowledged version that was not deleted by id is
// listed exactly once, and each key's versions stay newest first.
TEST_F(VersionsTest, ConcurrentWritersDeletersAndListersAgree) {
  Enable();
  constexpr int kThreads = 4, kOps = 60;
  std::mutex mu;
  std::map<std::string, std::set<std::string>> live;  // key -> version ids acknowledged, not deleted
  std::vector<std::thread> threads;
  std::atomic<bool> listing_ok{true};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kOps; ++i) {
        const std::string key = "k" + std::to_string((t + i) % 3);
        if (i % 5 == 4) {
          auto out = engine_->DeleteVersion("b", key, std::nullopt);
          ASSERT_TRUE(out.ok());
          std::lock_guard<std::mutex> lock(mu);
          live[key].insert("M:" + out->version_id);
        } else if (i % 7 == 6) {
          std::string victim;
          {
            std::lock_guard<std::mutex> lock(mu);
            for (const std::string& id : live[key]) {
              if (!id.starts_with("M:")) victim = id;
            }
            if (!victim.empty()) live[key].erase(victim);
          }
          if (!victim.empty()) {
            ASSERT_TRUE(engine_->DeleteVersion("b", key, ParseVersionId(victim)).ok());
          }
        } else {
          auto w = engine_->NewWriter("b", key, {});
          ASSERT_TRUE(w.ok());
          ASSERT_TRUE((*w)->Append("t" + std::to_string(t) + "i" + std::to_string(i)).ok());
          auto rec = (*w)->Commit();
          ASSERT_TRUE(rec.ok());
          std::lock_guard<std::mutex> lock(mu);
          live[key].insert(rec->VersionId());
        }
        ListVersionsParams p;
        p.max_keys = 7;
        auto l = engine_->ListVersions("b", p);
        if (!l.ok()) listing_ok = false;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(listing_ok);
  for (const auto& [key, ids] : live) {
    std::vector<std::string> listed = Versions(key);
    EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), ids) << key;
    EXPECT_EQ(listed.size(), ids.size()) << key;
    EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end(), [](std::string a, std::string b) {
      if (a.starts_with("M:")) a = a.substr(2);
      if (b.starts_with("M:")) b = b.substr(2);
      return a < b;
    })) << key;
  }
}

TEST_F(VersionsTest, LockSettingsSurviveAReopen) {
  Enable();
  ASSERT_TRUE(engine_->SetObjectLockConfiguration("b", {LockMode::kGovernance, 1, 0}).ok());
  ObjectRecord v = Put("k", "data");
  EXPECT_EQ(v.lock.mode, LockMode::kGovernance);  // the bucket default
  auto b = engine_->GetBucket("b");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->object_lock);
  EXPECT_EQ(b->versioning, Versioning::kEnabled);
  auto e = ObjectEngine::Open(store_.get(), kv_.get());
  ASSERT_TRUE(e.ok());
  engine_ = std::move(e).value();
  auto back = engine_->HeadVersion("b", "k", Id(v));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->lock, v.lock);
}

}  // namespace
}  // namespace strata::object

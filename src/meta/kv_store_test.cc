#include "meta/kv_store.h"
#include "meta/mem_store.h"

#include "common/encoding.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <thread>

namespace strata::meta {
namespace {

using namespace std::string_literals;  // "a\0b"s keeps the embedded NUL

class KvStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "rocksdb") {
      char tmpl[] = "/tmp/strata_kv_test.XXXXXX";
      ASSERT_NE(::mkdtemp(tmpl), nullptr);
      dir_ = tmpl;
      Reopen();
    } else {
      store_ = NewMemStore();
    }
  }
  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void Reopen() {
    store_.reset();  // RocksDB holds a lock file: close before opening again
    auto store = OpenRocksDbStore(dir_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  void Put(std::string_view k, std::string_view v, bool sync = false) {
    WriteBatch b;
    b.Put(k, v);
    ASSERT_TRUE(store_->Write(b, sync).ok());
  }
  std::optional<std::string> Get(std::string_view k) {
    auto r = store_->Get(k);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : std::nullopt;
  }
  std::vector<std::string> ScanFrom(std::string_view start) {
    std::vector<std::string> keys;
    auto it = store_->NewIterator();
    for (it->Seek(start); it->Valid(); it->Next()) keys.emplace_back(it->key());
    EXPECT_TRUE(it->status().ok());
    return keys;
  }

  std::string dir_;
  std::unique_ptr<KvStore> store_;
};

TEST_P(KvStoreTest, GetPutDelete) {
  EXPECT_EQ(Get("k"), std::nullopt);
  Put("k", "v1");
  EXPECT_EQ(Get("k"), "v1");
  Put("k", "v2");
  EXPECT_EQ(Get("k"), "v2");
  WriteBatch del;
  del.Delete("k");
  del.Delete("never-there");  // deleting an absent key is not an error
  ASSERT_TRUE(store_->Write(del, true).ok());
  EXPECT_EQ(Get("k"), std::nullopt);
}

TEST_P(KvStoreTest, BatchAppliesAllOpsInOrder) {
  Put("c", "old");
  WriteBatch b;
  b.Put("a", "1");
  b.Put("b", "2");
  b.Delete("c");
  b.Put("d", "first");
  b.Delete("d");  // later op in the batch wins
  b.Put("e", "x");
  b.Put("e", "y");
  ASSERT_TRUE(store_->Write(b, true).ok());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), "2");
  EXPECT_EQ(Get("c"), std::nullopt);
  EXPECT_EQ(Get("d"), std::nullopt);
  EXPECT_EQ(Get("e"), "y");
}

TEST_P(KvStoreTest, IteratorOrderIsBytewiseUnsigned) {
  std::vector<std::string> keys = {"b",    "a",         "a\0"s, "a\0b"s, "ab",    "\x80",
                                   "\xff", "\xff\x00"s, "\x7f", "\0"s,   "a\x80", "A"};
  for (const auto& k : keys) Put(k, "v:" + k);
  std::vector<std::string> expected = keys;
  std::sort(expected.begin(), expected.end());  // std::string compares as unsigned bytes
  EXPECT_EQ(ScanFrom(""), expected);

  EXPECT_EQ(ScanFrom("a\0"s).front(), "a\0"s);
  EXPECT_EQ(ScanFrom("a\0\x01"s).front(), "a\0b"s);  // first key >= the seek target
  EXPECT_EQ(ScanFrom("\x80").front(), "\x80");       // high bytes sort after ASCII
  EXPECT_TRUE(ScanFrom("\xff\x01").empty());

  auto it = store_->NewIterator();
  it->Seek("a\0b"s);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), "v:a\0b"s);
}

TEST_P(KvStoreTest, IteratorSeesSnapshotAtCreation) {
  Put("a", "1");
  auto it = store_->NewIterator();
  Put("b", "2");
  WriteBatch del;
  del.Delete("a");
  ASSERT_TRUE(store_->Write(del, false).ok());
  it->Seek("");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "a");
  EXPECT_EQ(it->value(), "1");
  it->Next();
  EXPECT_FALSE(it->Valid());
}

TEST_P(KvStoreTest, ReopenKeepsData) {
  if (GetParam() != "rocksdb") GTEST_SKIP() << "memory does not persist";
  Put("synced", "1", /*sync=*/true);
  Put("unsynced", "2", /*sync=*/false);  // a clean close flushes it too
  Reopen();
  EXPECT_EQ(Get("synced"), "1");
  EXPECT_EQ(Get("unsynced"), "2");
}

TEST_P(KvStoreTest, ConcurrentSyncedWritersAllVisible) {
  constexpr int kThreads = 8, kWritesPerThread = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kWritesPerThread; ++i) {
        WriteBatch b;
        b.Put("t" + std::to_string(t) + "/" + std::to_string(i), "v");
        b.Put("last/" + std::to_string(t), std::to_string(i));
        EXPECT_TRUE(store_->Write(b, /*sync=*/true).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ScanFrom("t").size(), size_t{kThreads * kWritesPerThread});
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(Get("last/" + std::to_string(t)), std::to_string(kWritesPerThread - 1));
  }
  if (GetParam() == "rocksdb") {
    Reopen();
    EXPECT_EQ(ScanFrom("t").size(), size_t{kThreads * kWritesPerThread});
  }
}

// The latest-version entries ('T') live in a column family of their own in
// RocksDB; the store still reads as one ordered key space, one snapshot
// across both, batches atomic across both, kept by a reopen and a checkpoint.
TEST_P(KvStoreTest, LatestEntriesReadAsOneKeySpaceWithTheRest) {
  // Either family empty: a scan from anywhere finds the other's keys.
  Put("Tonly", "1");
  EXPECT_EQ(ScanFrom(""), std::vector<std::string>{"Tonly"});
  EXPECT_EQ(ScanFrom("A"), std::vector<std::string>{"Tonly"});
  EXPECT_TRUE(ScanFrom("U").empty());
  WriteBatch clear;
  clear.Delete("Tonly");
  clear.Put("Bonly", "1");
  ASSERT_TRUE(store_->Write(clear, /*sync=*/false).ok());
  EXPECT_EQ(ScanFrom("T"), std::vector<std::string>{});
  EXPECT_EQ(ScanFrom(""), std::vector<std::string>{"Bonly"});
  WriteBatch gone;
  gone.Delete("Bonly");
  ASSERT_TRUE(store_->Write(gone, /*sync=*/false).ok());

  WriteBatch w;
  // The empty key too: it sorts before everything, in the default family.
  const std::vector<std::string> keys = {"", "O1", "S1", "T", "Ta\0k"s, "Tb\0j"s, "Tb\0k"s, "U1", "\xff"};
  for (size_t i = keys.size(); i-- > 0;) w.Put(keys[i], "v" + std::to_string(i));
  ASSERT_TRUE(store_->Write(w, /*sync=*/true).ok());
  EXPECT_EQ(ScanFrom(""), keys);
  EXPECT_EQ(ScanFrom("T"), std::vector<std::string>(keys.begin() + 3, keys.end()));
  EXPECT_EQ(ScanFrom("Tb\0k"s), std::vector<std::string>(keys.begin() + 6, keys.end()));
  EXPECT_EQ(ScanFrom("Tz"), std::vector<std::string>(keys.begin() + 7, keys.end()));
  EXPECT_EQ(ScanFrom("S"), std::vector<std::string>(keys.begin() + 2, keys.end()));
  EXPECT_EQ(ScanFrom("U"), std::vector<std::string>(keys.begin() + 7, keys.end()));
  EXPECT_EQ(ScanFrom("\xfe"), std::vector<std::string>(keys.begin() + 8, keys.end()));
  EXPECT_EQ(Get("Tb\0j"s), "v5");

  auto before = store_->NewIterator();
  WriteBatch d;
  d.Delete("Ta\0k"s);
  d.Delete("S1");
  d.Put("Tc", "new");
  ASSERT_TRUE(store_->Write(d, /*sync=*/false).ok());
  std::vector<std::string> seen;
  for (before->Seek(""); before->Valid(); before->Next()) seen.emplace_back(before->key());
  EXPECT_EQ(seen, keys) << "an iterator reads both families as of its creation";
  before.reset();  // it holds the database open
  EXPECT_FALSE(Get("Ta\0k"s).has_value());
  EXPECT_EQ(Get("Tc"), "new");

  if (GetParam() != "rocksdb") return;
  Reopen();
  EXPECT_EQ(ScanFrom("T"), (std::vector<std::string>{"T", "Tb\0j"s, "Tb\0k"s, "Tc", "U1", "\xff"}));
  const std::string copy = dir_ + "-checkpoint";
  ASSERT_TRUE(store_->Checkpoint(copy).ok());
  {
    auto opened = OpenRocksDbStore(copy);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    auto got = (*opened)->Get("Tc");
    ASSERT_TRUE(got.ok() && got->has_value());
    EXPECT_EQ(**got, "new");
  }
  std::filesystem::remove_all(copy);
}

// The audit trail ('E') is a third family in RocksDB, so the key space is
// five runs: default, audit, default, latest, default. Every subset of a key
// set spread over all five, scanned from every key, from just after every
// key and from every first byte, reads as one ordered key space.
TEST_P(KvStoreTest, AuditEntriesReadAsOneKeySpaceWithTheRest) {
  const std::vector<std::string> all = {"",      "A1", "D\xff"s, "E",  "Ea",     "Er\0\0"s,
                                        "E\xff"s, "F",  "O1",      "Ta", "Tb\0k"s, "U",
                                        "\xff\xff"s};
  std::vector<std::string> targets = all;
  for (const std::string& k : all) targets.push_back(k + '\0');
  for (int b = 0; b < 256; ++b) targets.emplace_back(1, static_cast<char>(b));
  for (unsigned mask = 0; mask < (1u << all.size()); mask += 37) {  // 222 of the 8192 subsets
    std::vector<std::string> keys;
    WriteBatch w;
    for (size_t i = 0; i < all.size(); ++i) {
      if (mask & (1u << i)) {
        keys.push_back(all[i]);
        w.Put(all[i], "v");
      } else {
        w.Delete(all[i]);
      }
    }
    ASSERT_TRUE(store_->Write(w, /*sync=*/false).ok());
    for (const std::string& t : targets) {
      std::vector<std::string> want;
      for (const std::string& k : keys) {
        if (k >= t) want.push_back(k);
      }
      ASSERT_EQ(ScanFrom(t), want) << "mask " << mask << ", from " << ::testing::PrintToString(t);
    }
  }
  // One snapshot across the three families.
  WriteBatch w;
  w.Put("Er1", "a");
  w.Put("O1", "a");
  w.Put("Ta", "a");
  ASSERT_TRUE(store_->Write(w, /*sync=*/true).ok());
  auto before = store_->NewIterator();
  WriteBatch d;
  d.Delete("Er1");
  d.Put("Er2", "b");
  d.Delete("Ta");
  ASSERT_TRUE(store_->Write(d, /*sync=*/true).ok());
  std::vector<std::string> seen;
  for (before->Seek("E"); before->Valid(); before->Next()) seen.emplace_back(before->key());
  EXPECT_TRUE(std::find(seen.begin(), seen.end(), "Er1") != seen.end());
  EXPECT_TRUE(std::find(seen.begin(), seen.end(), "Ta") != seen.end());
  EXPECT_TRUE(std::find(seen.begin(), seen.end(), "Er2") == seen.end());
  before.reset();
  EXPECT_EQ(Get("Er2"), "b");
  EXPECT_FALSE(Get("Er1").has_value());
}

// A decorating store adds to the caller's batch when it was given up, and
// to a copy otherwise; either way what it forwards is the batch plus its keys.
TEST_P(KvStoreTest, ExtendedBatchAddsInPlaceOnlyWhenGivenUp) {
  WriteBatch given;
  given.Put("a", "1");
  ExtendedBatch in_place(given, &given);
  EXPECT_EQ(&in_place.get(), &given);
  in_place.get().Put("b", "2");
  ASSERT_TRUE(in_place.Forward(*store_, /*sync=*/true).ok());
  EXPECT_EQ(Get("b"), "2");

  WriteBatch kept;
  kept.Put("c", "3");
  ExtendedBatch copied(kept, nullptr);
  ASSERT_TRUE(copied.Forward(*store_, /*sync=*/true).ok());  // nothing added: no copy needed
  ExtendedBatch copied2(kept, nullptr);
  WriteBatch more;
  more.Put("d", "4");
  copied2.get().Append(std::move(more));
  EXPECT_TRUE(more.empty());
  ASSERT_TRUE(copied2.Forward(*store_, /*sync=*/true).ok());
  EXPECT_EQ(kept.ops().size(), 1u) << "the caller's batch is left as it was";
  EXPECT_EQ(Get("c"), "3");
  EXPECT_EQ(Get("d"), "4");
}

INSTANTIATE_TEST_SUITE_P(All, KvStoreTest, ::testing::Values("rocksdb", "mem"),
                         [](const auto& info) { return info.param; });

// A metadata store written before the "latest" and "audit" column families
// existed (one family only, as sessions before 21 wrote it; or default and
// "latest", as sessions 21 and 22 did) opens, keeps every key — the audit
// trail's and latest entries written into "default" included, more than one
// move batch of them — and takes new keys of each family.
TEST(RocksDbStoreTest, OpensAStoreWrittenBeforeItsFamilies) {
  for (bool with_latest : {false, true}) {
    SCOPED_TRACE(with_latest ? "default + latest" : "default only");
    char tmpl[] = "/tmp/strata_kv_upgrade.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    std::vector<std::string> audit_keys;
    for (int i = 0; i < 5000; ++i) {
      std::string k = "Er";
      PutFixed64BE(&k, i);
      audit_keys.push_back(k);
    }
    {
      rocksdb::Options options;
      options.create_if_missing = true;
      options.create_missing_column_families = true;
      std::vector<rocksdb::ColumnFamilyDescriptor> families = {
          {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()}};
      if (with_latest) families.emplace_back("latest", rocksdb::ColumnFamilyOptions());
      std::vector<rocksdb::ColumnFamilyHandle*> handles;
      rocksdb::DB* raw = nullptr;
      ASSERT_TRUE(rocksdb::DB::Open(options, dir, families, &handles, &raw).ok());
      std::unique_ptr<rocksdb::DB> db(raw);
      ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "Oold", "kept").ok());
      ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "Zlast", "kept").ok());
      for (const std::string& k : audit_keys) ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), k, k).ok());
      ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), handles.back(), "Tb\0old"s, "t").ok());
      for (auto* h : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    }
    for (int open = 0; open < 2; ++open) {
      auto store = OpenRocksDbStore(dir);
      ASSERT_TRUE(store.ok()) << store.status().ToString();
      std::vector<std::string> seen;
      auto it = (*store)->NewIterator();
      for (it->Seek(""); it->Valid(); it->Next()) seen.emplace_back(it->key());
      ASSERT_TRUE(it->status().ok());
      it.reset();
      std::vector<std::string> want = audit_keys;
      want.push_back("Oold");
      want.push_back("Tb\0old"s);
      if (open == 1) want.push_back("Tb\0k"s);
      want.push_back("Zlast");
      std::sort(want.begin(), want.end());
      EXPECT_EQ(seen, want);
      auto e = (*store)->Get(audit_keys[4999]);
      ASSERT_TRUE(e.ok() && e->has_value());
      EXPECT_EQ(**e, audit_keys[4999]);
      if (open == 0) {
        WriteBatch b;
        b.Put("Tb\0k"s, "latest");
        ASSERT_TRUE((*store)->Write(b, /*sync=*/true).ok());
      } else {
        auto t = (*store)->Get("Tb\0k"s);
        ASSERT_TRUE(t.ok() && t->has_value());
        EXPECT_EQ(**t, "latest");
      }
    }
    // The audit keys left "default": a plain RocksDB read of it no longer finds them.
    {
      rocksdb::DB* raw = nullptr;
      std::vector<rocksdb::ColumnFamilyDescriptor> families = {
          {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
          {"latest", rocksdb::ColumnFamilyOptions()},
          {"audit", rocksdb::ColumnFamilyOptions()}};
      std::vector<rocksdb::ColumnFamilyHandle*> handles;
      ASSERT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), dir, families, &handles, &raw).ok());
      std::unique_ptr<rocksdb::DB> db(raw);
      std::string v;
      EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), handles[0], audit_keys[0], &v).IsNotFound());
      EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), handles[2], audit_keys[0], &v).ok());
      EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), handles[0], "Oold", &v).ok());
      for (auto* h : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    }
    std::filesystem::remove_all(dir);
  }
}

TEST(RocksDbStoreTest, OpenFailureIsAnError) {
  auto store = OpenRocksDbStore("/proc/strata-cannot-create-here");
  EXPECT_FALSE(store.ok());
}

}  // namespace
}  // namespace strata::meta

namespace strata::meta {
namespace {

TEST(MemKvStoreTest, PowerLossDropsWritesNoSyncCovered) {
  auto kv = NewMemKvStore();
  WriteBatch a, b, c;
  a.Put("a", "1");
  b.Put("b", "2");
  c.Put("c", "3");
  ASSERT_TRUE(kv->Write(a, /*sync=*/false).ok());
  ASSERT_TRUE(kv->Write(b, /*sync=*/true).ok());  // makes a durable too
  ASSERT_TRUE(kv->Write(c, /*sync=*/false).ok());
  EXPECT_EQ(**kv->Get("c"), "3");  // visible before the crash
  kv->SimulateCrash();
  EXPECT_EQ(**kv->Get("a"), "1");
  EXPECT_EQ(**kv->Get("b"), "2");
  EXPECT_FALSE(kv->Get("c")->has_value());
  WriteBatch d;
  d.Delete("a");
  ASSERT_TRUE(kv->Write(d, /*sync=*/false).ok());
  kv->SimulateCrash();  // an unsynced delete is undone
  EXPECT_EQ(**kv->Get("a"), "1");
}

}  // namespace
}  // namespace strata::meta

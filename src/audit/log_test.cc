#include "audit/log.h"

#include <gtest/gtest.h>

#include <thread>

#include "audit/record.h"
#include "meta/keys.h"
#include "meta/mem_store.h"

namespace strata::audit {
namespace {

constexpr char kKey[] = "0123456789abcdef0123456789abcdef";

std::unique_ptr<AuditLog> OpenLog(meta::KvStore* kv, size_t queue_limit = 4) {
  LogOptions o;
  o.key = kKey;
  o.queue_limit = queue_limit;
  auto log = AuditLog::Open(kv, o);
  EXPECT_TRUE(log.ok()) << log.status().ToString();
  return log.ok() ? std::move(*log) : nullptr;
}

std::vector<Record> AllRecords(meta::KvStore& kv) {
  std::vector<Record> out;
  auto it = kv.NewIterator();
  for (it->Seek(RecordPrefix()); it->Valid() && it->key().starts_with(RecordPrefix()); it->Next()) {
    out.push_back(DecodeRecord(it->value()).value());
  }
  return out;
}

Status Change(AuditLog& log, Actor* a, const std::string& key, bool sync = true) {
  Scope scope(a);
  meta::WriteBatch b;
  b.Put(key, "value");
  return log.store()->Write(b, sync);
}

TEST(AuditLogTest, ARecordRidesInTheChangesOwnBatch) {
  auto kv = meta::NewMemStore();
  auto log = OpenLog(kv.get());
  uint64_t bytes = 1234;
  Actor a;
  a.operation = "PutObject";
  a.identity = "AKID";
  a.source = "127.0.0.1:4000";
  a.request_id = "REQ1";
  a.bucket = "bkt";
  a.key = "obj";
  a.bytes_in = &bytes;
  ASSERT_TRUE(Change(*log, &a, "Xone").ok());
  EXPECT_EQ(a.changes, 1u);
  auto records = AllRecords(*kv);
  ASSERT_EQ(records.size(), 1u);
  const Record& r = records[0];
  EXPECT_EQ(r.seq, 1u);
  EXPECT_EQ(r.kind, Kind::kChange);
  EXPECT_EQ(r.operation, "PutObject");
  EXPECT_EQ(r.identity, "AKID");
  EXPECT_EQ(r.source, "127.0.0.1:4000");
  EXPECT_EQ(r.request_id, "REQ1");
  EXPECT_EQ(r.bucket, "bkt");
  EXPECT_EQ(r.key, "obj");
  EXPECT_EQ(r.result, "OK");
  EXPECT_EQ(r.bytes, 1234u);
  // The change's batch carries the record alone; the sealer adds its hash
  // and posting-list entries.
  EXPECT_FALSE(kv->Get(HashBlockKey(1)).value().has_value());
  ASSERT_TRUE(log->Flush().ok());
  EXPECT_EQ(kv->Get(HashBlockKey(1)).value().value().size(), kHashBytes);
  auto bucket = kv->Get(BucketPostingsKey("bkt", 1)).value();
  ASSERT_TRUE(bucket.has_value());
  EXPECT_EQ(DecodePostings(*bucket).value(), std::vector<uint64_t>{1});
  auto identity = kv->Get(IdentityPostingsKey("AKID", 1)).value();
  ASSERT_TRUE(identity.has_value());
  EXPECT_EQ(DecodePostings(*identity).value(), std::vector<uint64_t>{1});
}

TEST(AuditLogTest, BatchesWithoutAnActorOrUnsyncedPassUntouched) {
  auto kv = meta::NewMemStore();
  auto log = OpenLog(kv.get());
  meta::WriteBatch b;
  b.Put("Xplain", "v");
  ASSERT_TRUE(log->store()->Write(b, true).ok());
  Actor a;
  ASSERT_TRUE(Change(*log, &a, "Xintent", /*sync=*/false).ok());
  EXPECT_TRUE(AllRecords(*kv).empty());
  EXPECT_EQ(kv->Get("Xplain").value().value(), "v");
  EXPECT_EQ(kv->Get("Xintent").value().value(), "value");
}

TEST(AuditLogTest, TheVersionKeyOfTheBatchNamesTheChange) {
  auto kv = meta::NewMemStore();
  auto log = OpenLog(kv.get());
  Actor a;
  a.operation = "DeleteObjects";
  a.bucket = "bkt";  // the request names no key; each deletion does
  Scope scope(&a);
  for (const char* key : {"one", "two"}) {
    meta::WriteBatch b;
    b.Delete(meta::ObjectVersionKey("bkt", key, 77));
    ASSERT_TRUE(log->store()->Write(b, true).ok());
  }
  auto records = AllRecords(*kv);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].key, "one");
  EXPECT_EQ(records[1].key, "two");
  EXPECT_EQ(records[0].version, meta::StampVersionId(77));
  EXPECT_EQ(records[0].part, 0u);
  EXPECT_EQ(records[1].part, 1u);
}

TEST(AuditLogTest, AFailedWriteLeavesNoRecordAndAGapInTheChain) {
  auto mem = meta::NewMemStore();
  meta::FlakyKvStore kv(mem.get());
  auto log = OpenLog(&kv);
  Actor a;
  a.operation = "PutObject";
  ASSERT_TRUE(Change(*log, &a, "Xa").ok());
  ASSERT_TRUE(log->Flush().ok());  // 1 chained
  kv.fail = true;
  EXPECT_FALSE(Change(*log, &a, "Xb").ok());
  kv.fail = false;
  ASSERT_TRUE(Change(*log, &a, "Xc").ok());
  // Before the sealer comes by, the hole at 2 is past the chain's head: not damage.
  VerifyReport early = log->Verify();
  EXPECT_TRUE(early.ok()) << early.detail;
  EXPECT_EQ(early.unsealed, 1u);
  EXPECT_FALSE(mem->Get("Xb").value().has_value());
  auto records = AllRecords(*mem);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].seq, 1u);
  EXPECT_EQ(records[1].seq, 3u);
  ASSERT_TRUE(log->Flush(true).ok());
  VerifyReport rep = log->Verify();
  EXPECT_TRUE(rep.ok()) << rep.detail;
  EXPECT_EQ(rep.records, 2u);
  EXPECT_EQ(rep.gaps, 1u);
  EXPECT_TRUE(mem->Get(GapKey(2)).value().has_value());
}

TEST(AuditLogTest, RequestRecordsAreQueuedAndBoundedAndWrittenByTheSealer) {
  auto kv = meta::NewMemStore();
  auto log = OpenLog(kv.get());  // queue_limit 4
  Actor a;
  a.operation = "PutObject";
  a.identity = "AKID";
  for (int i = 0; i < 6; ++i) log->RecordRequest(a, Kind::kDenied, "AccessDenied", 403);
  EXPECT_TRUE(AllRecords(*kv).empty());
  ASSERT_TRUE(log->Flush().ok());
  auto records = AllRecords(*kv);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].kind, Kind::kDenied);
  EXPECT_EQ(records[0].result, "AccessDenied");
  EXPECT_EQ(records[0].http_status, 403);
  EXPECT_EQ(log->stats().dropped, 2u);
  EXPECT_EQ(log->stats().sealed_seq, 4u);
  EXPECT_TRUE(log->Verify().ok());
}

TEST(AuditLogTest, ConcurrentWritersGetEveryRecordChainedInSeqOrder) {
  auto kv = meta::NewMemStore();
  auto log = OpenLog(kv.get(), /*queue_limit=*/100000);
  log->Start();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        Actor a;
        a.operation = "PutObject";
        a.identity = "writer" + std::to_string(t);
        ASSERT_TRUE(Change(*log, &a, "X" + std::to_string(t) + "-" + std::to_string(i)).ok());
        if (i % 50 == 0) log->RecordRequest(a, Kind::kDenied, "AccessDenied", 403);
      }
    });
  }
  for (auto& th : threads) th.join();
  log->Stop();
  auto records = AllRecords(*kv);
  ASSERT_EQ(records.size(), 8u * 204u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].seq, i + 1);
    if (i > 0) EXPECT_GE(records[i].time_ns, records[i - 1].time_ns);
  }
  VerifyReport rep = log->Verify();
  EXPECT_TRUE(rep.ok()) << rep.detail;
  EXPECT_EQ(rep.records, records.size());
  EXPECT_EQ(rep.unsealed, 0u);
  EXPECT_EQ(rep.latest.seq, records.size());  // Stop signs the head
}

TEST(AuditLogTest, AfterACrashTheTrailGoesOnAndTheUnsealedTailIsChained) {
  auto kv = meta::NewMemStore();
  {
    auto log = OpenLog(kv.get());
    Actor a;
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(Change(*log, &a, "X" + std::to_string(i)).ok());
    ASSERT_TRUE(log->Flush(true).ok());
    for (int i = 5; i < 8; ++i) ASSERT_TRUE(Change(*log, &a, "X" + std::to_string(i)).ok());
    log->RecordRequest(a, Kind::kDenied, "AccessDenied", 403);  // queued: lost with the process
    // No Stop, no Flush: the process dies here.
  }
  auto log = OpenLog(kv.get());
  VerifyReport before = log->Verify();
  EXPECT_TRUE(before.ok()) << before.detail;
  EXPECT_EQ(before.unsealed, 3u);
  Actor a;
  ASSERT_TRUE(Change(*log, &a, "Xafter").ok());
  auto records = AllRecords(*kv);
  ASSERT_EQ(records.size(), 9u);
  EXPECT_EQ(records.back().seq, 9u);  // the lost queued record's seq was never handed out
  EXPECT_GE(records.back().time_ns, records[7].time_ns);
  ASSERT_TRUE(log->Flush(true).ok());
  VerifyReport after = log->Verify();
  EXPECT_TRUE(after.ok()) << after.detail;
  EXPECT_EQ(after.records, 9u);
  EXPECT_EQ(after.gaps, 0u);
  EXPECT_EQ(after.head_seq, 9u);
}

TEST(AuditLogTest, ShortKeysAreRefused) {
  auto kv = meta::NewMemStore();
  LogOptions o;
  o.key = "short";
  EXPECT_FALSE(AuditLog::Open(kv.get(), o).ok());
}

}  // namespace
}  // namespace strata::audit

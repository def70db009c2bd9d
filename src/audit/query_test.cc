#include "audit/query.h"

#include <gtest/gtest.h>

#include <thread>

#include "audit/log.h"
#include "meta/mem_store.h"

namespace strata::audit {
namespace {

class AuditQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kv_ = meta::NewMemStore();
    LogOptions o;
    o.key = "0123456789abcdef0123456789abcdef";
    log_ = std::move(AuditLog::Open(kv_.get(), o).value());
  }
  void Change(std::string_view op, const std::string& who, const std::string& bucket,
              const std::string& key) {
    Actor a;
    a.operation = op;
    a.identity = who;
    a.bucket = bucket;
    a.key = key;
    Scope scope(&a);
    meta::WriteBatch b;
    b.Put("X" + std::to_string(++n_), "v");
    ASSERT_TRUE(log_->store()->Write(b, true).ok());
  }
  std::vector<uint64_t> Seqs(const QueryFilter& f) {
    auto page = Query(*kv_, f);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    std::vector<uint64_t> out;
    if (page.ok()) {
      for (const Record& r : page->records) out.push_back(r.seq);
    }
    return out;
  }
  std::unique_ptr<meta::KvStore> kv_;
  std::unique_ptr<AuditLog> log_;
  int n_ = 0;
};

TEST_F(AuditQueryTest, FiltersByBucketIdentityPrefixOperationAndResult) {
  Change("PutObject", "alice", "photos", "2024/a.jpg");  // 1
  Change("PutObject", "bob", "photos", "2025/b.jpg");    // 2
  Change("DeleteObject", "alice", "logs", "x");          // 3
  Change("PutObject", "alice", "photos", "2024/c.jpg");  // 4
  Actor denied;
  denied.operation = "GetObject";
  denied.identity = "mallory";
  denied.bucket = "photos";
  log_->RecordRequest(denied, Kind::kDenied, "AccessDenied", 403);  // 5
  ASSERT_TRUE(log_->Flush().ok());

  QueryFilter f;
  f.bucket = "photos";
  EXPECT_EQ(Seqs(f), (std::vector<uint64_t>{1, 2, 4, 5}));
  f.key_prefix = "2024/";
  EXPECT_EQ(Seqs(f), (std::vector<uint64_t>{1, 4}));
  QueryFilter g;
  g.identity = "alice";
  EXPECT_EQ(Seqs(g), (std::vector<uint64_t>{1, 3, 4}));
  g.operation = "DeleteObject";
  EXPECT_EQ(Seqs(g), (std::vector<uint64_t>{3}));
  QueryFilter h;
  h.result = "error";
  EXPECT_EQ(Seqs(h), (std::vector<uint64_t>{5}));
  h.result = "AccessDenied";
  h.kind = "denied";
  EXPECT_EQ(Seqs(h), (std::vector<uint64_t>{5}));
  QueryFilter none;
  none.bucket = "photo";  // a prefix of a bucket name is another bucket
  EXPECT_TRUE(Seqs(none).empty());
  QueryFilter all;
  EXPECT_EQ(Seqs(all).size(), 5u);
}

TEST_F(AuditQueryTest, TimeRangesAndPages) {
  for (int i = 0; i < 30; ++i) {
    Change("PutObject", "alice", "b", "k" + std::to_string(i));
    if (i == 9 || i == 19) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto times = Query(*kv_, QueryFilter{}).value().records;
  ASSERT_EQ(times.size(), 30u);
  QueryFilter f;
  f.from_ns = times[10].time_ns;  // after the first pause
  f.to_ns = times[19].time_ns;
  auto seqs = Seqs(f);
  ASSERT_FALSE(seqs.empty());
  EXPECT_EQ(seqs.front(), 11u);
  EXPECT_EQ(seqs.back(), 20u);
  f.bucket = "b";  // the same through the bucket index
  EXPECT_EQ(Seqs(f), seqs);
  // Pages of 7 over all 30.
  QueryFilter p;
  p.limit = 7;
  std::vector<uint64_t> paged;
  for (int guard = 0; guard < 10; ++guard) {
    auto page = Query(*kv_, p).value();
    for (const Record& r : page.records) paged.push_back(r.seq);
    if (page.next_after == 0) break;
    p.after_seq = page.next_after;
  }
  ASSERT_EQ(paged.size(), 30u);
  for (size_t i = 0; i < paged.size(); ++i) EXPECT_EQ(paged[i], i + 1);
}

// Queries by bucket or identity walk the posting lists the sealer wrote
// (one per name and pass) and then the records not chained yet, in seq
// order and without repeats, page by page.
TEST_F(AuditQueryTest, PostingListsThenTheUnsealedTail) {
  for (int i = 1; i <= 40; ++i) {
    Change("PutObject", i % 3 ? "alice" : "bob", i % 2 ? "odd" : "even", "k");
    if (i % 7 == 0 && i <= 35) ASSERT_TRUE(log_->Flush().ok());  // 35 chained, 5 not
  }
  EXPECT_EQ(log_->stats().sealed_seq, 35u);
  std::vector<uint64_t> odd, alice;
  for (uint64_t s = 1; s <= 40; ++s) {
    if (s % 2) odd.push_back(s);
    if (s % 3) alice.push_back(s);
  }
  for (size_t limit : {1, 3, 1000}) {
    SCOPED_TRACE(limit);
    for (int by = 0; by < 2; ++by) {
      QueryFilter p;
      p.limit = limit;
      if (by == 0) p.bucket = "odd";
      else p.identity = "alice";
      std::vector<uint64_t> paged;
      for (int guard = 0; guard < 100; ++guard) {
        auto page = Query(*kv_, p);
        ASSERT_TRUE(page.ok()) << page.status().ToString();
        for (const Record& r : page->records) paged.push_back(r.seq);
        if (page->next_after == 0) break;
        p.after_seq = page->next_after;
      }
      EXPECT_EQ(paged, by == 0 ? odd : alice);
    }
  }
  // The lists are there: one per pass for "odd".
  int lists = 0;
  auto it = kv_->NewIterator();
  const std::string prefix = BucketPostingsPrefix("odd");
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) ++lists;
  EXPECT_EQ(lists, 5);
  // A seal state that does not read: the query reads the records instead.
  meta::WriteBatch bad;
  bad.Put(SealStateKey(), "garbage");
  ASSERT_TRUE(kv_->Write(bad, true).ok());
  QueryFilter q;
  q.bucket = "odd";
  EXPECT_EQ(Seqs(q), odd);
}

TEST_F(AuditQueryTest, BadFiltersAreRefused) {
  QueryFilter f;
  f.kind = "everything";
  EXPECT_EQ(Query(*kv_, f).status().code(), Code::kInvalidArgument);
  QueryFilter g;
  g.from_ns = 10;
  g.to_ns = 5;
  EXPECT_EQ(Query(*kv_, g).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace strata::audit

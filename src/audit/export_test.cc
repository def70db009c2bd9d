#include "audit/export.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>

#include "audit/log.h"
#include "audit/record.h"
#include "meta/mem_store.h"

namespace strata::audit {
namespace {

constexpr char kKey[] = "0123456789abcdef0123456789abcdef";

class AuditExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kv_ = meta::NewMemStore();
    LogOptions o;
    o.key = kKey;
    log_ = std::move(AuditLog::Open(kv_.get(), o).value());
    log_->SetExporter(
        [this](uint64_t first, uint64_t last, const std::string& doc) {
          if (refuse_) return IOError("the audit bucket is away");
          docs_[{first, last}] = doc;
          return Status::OK();
        },
        /*min_records=*/1000, /*interval_ns=*/3'600'000'000'000);
  }
  void Changes(int n) {
    for (int i = 0; i < n; ++i) {
      Actor a;
      a.operation = "PutObject";
      a.bucket = "b";
      a.key = "k" + std::to_string(count_++);
      Scope scope(&a);
      meta::WriteBatch b;
      b.Put("X" + a.key, "v");
      ASSERT_TRUE(log_->store()->Write(b, true).ok());
    }
  }
  std::unique_ptr<meta::KvStore> kv_;
  std::unique_ptr<AuditLog> log_;
  std::map<std::pair<uint64_t, uint64_t>, std::string> docs_;
  bool refuse_ = false;
  int count_ = 0;
};

TEST_F(AuditExportTest, CheckpointsExportContiguousSegmentsThatVerify) {
  Changes(5);
  ASSERT_TRUE(log_->Flush().ok());  // a seal, no checkpoint due: nothing exported
  EXPECT_TRUE(docs_.empty());
  ASSERT_TRUE(log_->Flush(/*checkpoint=*/true).ok());
  Changes(3);
  refuse_ = true;  // an export that fails is tried again with the next checkpoint
  ASSERT_TRUE(log_->Flush(true).ok());
  EXPECT_EQ(log_->exported_seq(), 5u);
  refuse_ = false;
  ASSERT_TRUE(log_->Flush(true).ok());  // nothing new to sign: the failed export is retried
  EXPECT_EQ(log_->exported_seq(), 8u);
  Changes(2);
  ASSERT_TRUE(log_->Flush(true).ok());
  ASSERT_EQ(docs_.size(), 3u);
  EXPECT_TRUE(docs_.count({1, 5}));
  EXPECT_TRUE(docs_.count({6, 8}));
  EXPECT_TRUE(docs_.count({9, 10}));
  EXPECT_EQ(log_->exported_seq(), 10u);
  for (const auto& [range, doc] : docs_) {
    SegmentCheck c = CheckSegment(*kv_, kKey, doc);
    EXPECT_TRUE(c.ok()) << c.problem;
    EXPECT_EQ(c.first, range.first);
    EXPECT_EQ(c.last, range.second);
  }
  EXPECT_EQ(LoadExportedSeq(*kv_).value(), 10u);
  EXPECT_EQ(SegmentObjectName(6, 10), "segments/00000000000000000006-00000000000000000010.jsonl");
}

TEST_F(AuditExportTest, ADamagedOrReplacedSegmentIsNamed) {
  Changes(6);
  ASSERT_TRUE(log_->Flush(true).ok());
  const std::string doc = docs_.at({1, 6});
  auto lines = [&] {
    std::vector<std::string> out;
    size_t at = 0;
    while (at < doc.size()) {
      size_t nl = doc.find('\n', at);
      out.push_back(doc.substr(at, nl - at + 1));
      at = nl + 1;
    }
    return out;
  }();
  ASSERT_EQ(lines.size(), 8u);  // header, 6 records, checkpoint
  auto join = [](const std::vector<std::string>& ls) {
    std::string s;
    for (const auto& l : ls) s += l;
    return s;
  };
  // A record line removed.
  auto removed = lines;
  removed.erase(removed.begin() + 3);
  EXPECT_NE(CheckSegment(*kv_, kKey, join(removed)).problem.find("missing"), std::string::npos);
  // Two record lines swapped.
  auto swapped = lines;
  std::swap(swapped[2], swapped[3]);
  EXPECT_FALSE(CheckSegment(*kv_, kKey, join(swapped)).ok());
  // The checkpoint cut off.
  auto cut = lines;
  cut.pop_back();
  EXPECT_NE(CheckSegment(*kv_, kKey, join(cut)).problem.find("cut short"), std::string::npos);
  // Under another key.
  EXPECT_NE(CheckSegment(*kv_, "another key of sixteen+ bytes", doc).problem.find("MAC"),
            std::string::npos);
  // A record rewritten in the segment with its chain recomputed: the store disagrees.
  {
    auto empty = meta::NewMemStore();
    EXPECT_TRUE(CheckSegment(*empty, kKey, doc).ok());  // stands alone once the store forgot it
  }
  auto r = DecodeRecord(kv_->Get(RecordKey(2)).value().value()).value();
  r.identity = "someone else";
  meta::WriteBatch b;
  b.Put(RecordKey(2), EncodeRecord(r));
  ASSERT_TRUE(kv_->Write(b, true).ok());
  EXPECT_NE(CheckSegment(*kv_, kKey, doc).problem.find("differs from the trail"),
            std::string::npos);
  EXPECT_FALSE(CheckSegment(*kv_, kKey, "not json\n").ok());
  // Numbers that are not whole (or out of range) are refused, never cast
  // (the fuzzer found 1e64 cast to uint64_t: undefined behaviour).
  EXPECT_FALSE(CheckSegment(*kv_, kKey,
                            "{\"segment\":1,\"first\":1,\"last\":1e64,\"prev_hash\":\"00\"}\n")
                   .ok());
  EXPECT_FALSE(CheckSegment(*kv_, kKey, "{\"segment\":1.5}\n").ok());
  EXPECT_FALSE(CheckSegment(*kv_, kKey, "{\"segment\":-1}\n").ok());
  EXPECT_FALSE(CheckSegment(*kv_, kKey, "").ok());
}

// tests/fuzz/make_seeds.py writes a segment from docs/formats/audit-trail.md
// alone (Python's hashlib and hmac): the format as documented is the one read.
TEST(AuditSegmentFormatTest, TheDocumentedFormatWrittenIndependentlyVerifies) {
  std::ifstream f(std::string(STRATA_SOURCE_DIR) + "/tests/fuzz/audit_trail/segment",
                  std::ios::binary);
  ASSERT_TRUE(f) << "seed missing";
  std::string doc((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(doc.empty());
  doc.erase(0, 1);  // the fuzz target's control byte
  auto kv = meta::NewMemStore();
  SegmentCheck c = CheckSegment(*kv, kKey, doc);
  EXPECT_TRUE(c.ok()) << c.problem;
  EXPECT_EQ(c.first, 1u);
  EXPECT_EQ(c.last, 3u);
  std::ifstream r(std::string(STRATA_SOURCE_DIR) + "/tests/fuzz/audit_trail/record",
                  std::ios::binary);
  std::string rec((std::istreambuf_iterator<char>(r)), std::istreambuf_iterator<char>());
  auto d = DecodeRecord(std::string_view(rec).substr(1));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->seq, 1u);
  EXPECT_EQ(d->operation, "PutObject");
  EXPECT_EQ(d->bytes, 4096u);
}

}  // namespace
}  // namespace strata::audit

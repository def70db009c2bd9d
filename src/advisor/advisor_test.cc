// The advisor over a real engine with a hot and a warm pool (advisor/advisor.h):
// analysis finds a cold prefix, approval is checked against the policy,
// execution moves the data within the daily byte budget, keeps Object Lock,
// can be stopped, runs without approval when the policy says so, and all of
// it survives a restart. The advisor's clock is 40 "days" (of 1 s) ahead of
// the engine's, so what was just written looks long idle.
#include "advisor/advisor.h"

#include <gtest/gtest.h>

#include <atomic>

#include "common/time_util.h"
#include "io/mem_fs.h"
#include "meta/kv_store.h"
#include "object/engine.h"
#include "storage/plain_store.h"

namespace strata::advisor {
namespace {

constexpr int64_t kDay = 1'000'000'000;
constexpr uint64_t kSize = 300 << 10;  // past the inline limit: data files in the pool

class AdvisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto h = storage::OpenPlainDataStore(mem_.get(), "/hot");
    auto w = storage::OpenPlainDataStore(mem_.get(), "/warm");
    ASSERT_TRUE(h.ok() && w.ok());
    hot_ = std::move(h).value();
    warm_ = std::move(w).value();
    auto e = object::ObjectEngine::Open({{"hot", hot_.get()}, {"warm", warm_.get()}}, kv_.get());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(e).value();
    auto m = tier::ClassMap::Make({{"hot", tier::Media::kHot}, {"warm", tier::Media::kWarm}}, {});
    ASSERT_TRUE(m.ok());
    classes_ = std::move(m).value();
    ASSERT_TRUE(engine_->CreateBucket("b", object::BucketRecord{1, "us-east-1", "me"}).ok());
    offset_ = 40 * kDay;
    Reopen();
  }
  void Reopen() {
    advisor_.reset();
    AdvisorOptions o;
    o.stats.day_ns = kDay;
    o.thresholds.min_bytes = 1;  // one 300 KiB object is a prefix worth moving here
    o.now = [this] { return base_ns_ + offset_.load(); };
    o.kv_namespaces = [this] { return kv_facts_; };
    o.kv_expire = [this](const std::string& bucket, int64_t since) -> Result<KvExpired> {
      kv_expired_.emplace_back(bucket, since);
      return kv_expire_result_;
    };
    auto a = Advisor::Open(engine_.get(), kv_.get(), &classes_, o);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    advisor_ = std::move(a).value();
  }
  object::ObjectRecord Put(const std::string& key, const std::string& cls = "",
                           std::optional<object::ObjectLock> lock = std::nullopt) {
    object::WriteOptions o;
    o.pool = cls.empty() ? "hot" : "warm";
    o.storage_class = cls;
    o.lock = lock;
    auto w = engine_->NewWriter("b", key, {}, o);
    EXPECT_TRUE(w.ok());
    EXPECT_TRUE((*w)->Append(std::string(kSize, 'x')).ok());
    auto rec = (*w)->Commit();
    EXPECT_TRUE(rec.ok()) << rec.status().ToString();
    return rec.ok() ? *rec : object::ObjectRecord{};
  }
  std::string ClassOf(const std::string& key) {
    auto r = engine_->HeadObject("b", key);
    EXPECT_TRUE(r.ok());
    return r.ok() ? r->storage_class : "?";
  }
  std::string PoolOf(const std::string& key) {
    auto r = engine_->HeadObject("b", key);
    return r.ok() ? r->pool : "?";
  }
  Recommendation OnlyRecommendation() {
    auto s = advisor_->Analyze();
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    auto list = advisor_->List();
    EXPECT_EQ(list.size(), 1u);
    return list.empty() ? Recommendation{} : list[0];
  }
  void SetPolicy(const std::string& json) {
    auto p = ParsePolicy(json);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    ASSERT_TRUE(advisor_->SetPolicy(*p).ok());
  }
  // Steps the executor until it has nothing to do.
  void Drain() {
    for (int i = 0; i < 100; ++i) {
      auto w = advisor_->ExecuteStep();
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      if (!*w) return;
    }
    FAIL() << "the executor never settled";
  }

  std::unique_ptr<io::MemFileSystem> mem_ = io::NewMemFileSystem();
  std::unique_ptr<meta::KvStore> kv_ = meta::NewMemStore();
  std::unique_ptr<storage::DataStore> hot_, warm_;
  std::unique_ptr<object::ObjectEngine> engine_;
  tier::ClassMap classes_;
  // The advisor's clock: a fixed start plus what a test adds. A "day" here is
  // 1 s (kDay), so a clock that also followed real time would start a new day
  // whenever a step took a second (ASan shards on a busy machine did: a budget
  // reset early, 5 objects moved where 4 were due).
  const int64_t base_ns_ = UnixNowNs();
  std::atomic<int64_t> offset_{0};
  std::unique_ptr<Advisor> advisor_;
  // The KV-cache tier as the advisor sees it.
  std::vector<KvNamespaceFacts> kv_facts_;
  std::vector<std::pair<std::string, int64_t>> kv_expired_;
  Result<KvExpired> kv_expire_result_ = KvExpired{3, 3 << 20, 1};
};

TEST_F(AdvisorTest, ApprovedMoveRunsWithinTheDailyBudget) {
  for (int i = 0; i < 5; ++i) Put("ckpt/old/s" + std::to_string(i));
  Put("ckpt/new/x");  // another prefix, read "now": stays hot
  Put("ckpt/x");      // "ckpt/" (listed under ckpt/old/'s parent, never moved with it)
  Put("top");         // the bucket's top
  advisor_->RecordRead("b", "ckpt/new/x", 1);
  advisor_->RecordRead("b", "ckpt/x", 1);
  advisor_->RecordRead("b", "top", 1);
  Recommendation r = OnlyRecommendation();
  EXPECT_EQ(r.prefix, "ckpt/old/");
  EXPECT_EQ(r.state, "pending");
  EXPECT_EQ(r.objects_to_move, 5u);
  // Nothing moves before an approval.
  Drain();
  EXPECT_EQ(ClassOf("ckpt/old/s0"), "");
  SetPolicy(R"({"max_bytes_per_day": )" + std::to_string(2 * kSize + 10) +
            R"(, "max_objects_per_second": 0})");
  ASSERT_TRUE(advisor_->Approve(r.id, "root").ok());
  EXPECT_EQ(advisor_->Approve(r.id, "root").code(), Code::kPreconditionFailed);  // not pending now
  Drain();
  auto now = advisor_->Get(r.id);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->state, "waiting");
  EXPECT_EQ(now->moved_objects, 2u);
  EXPECT_EQ(now->moved_bytes, 2 * kSize);
  EXPECT_NE(now->waiting.find("daily byte budget"), std::string::npos) << now->waiting;
  EXPECT_EQ(advisor_->executor().bytes_today, 2 * kSize);
  EXPECT_EQ(ClassOf("ckpt/old/s0"), "STANDARD_IA");
  EXPECT_EQ(PoolOf("ckpt/old/s0"), "warm");
  EXPECT_EQ(ClassOf("ckpt/old/s2"), "");
  // A restart keeps the budget spent today.
  Reopen();
  Drain();
  EXPECT_EQ(advisor_->Get(r.id)->moved_objects, 2u);
  // The next day the budget is back.
  offset_ += kDay;
  Drain();
  EXPECT_EQ(advisor_->Get(r.id)->moved_objects, 4u);
  offset_ += kDay;
  Drain();
  now = advisor_->Get(r.id);
  EXPECT_EQ(now->state, "done");
  EXPECT_EQ(now->moved_objects, 5u);
  EXPECT_GT(now->finished_ns, 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ClassOf("ckpt/old/s" + std::to_string(i)), "STANDARD_IA");
  EXPECT_EQ(ClassOf("ckpt/new/x"), "");
  EXPECT_EQ(ClassOf("ckpt/x"), "");
  EXPECT_EQ(ClassOf("top"), "");
  // The data reads back from the warm pool unchanged.
  auto reader = engine_->OpenObject("b", "ckpt/old/s4");
  ASSERT_TRUE(reader.ok());
  std::string got(kSize, '\0');
  auto n = (*reader)->ReadAt(0, got.data(), kSize);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(got, std::string(kSize, 'x'));
  // Done: a re-analysis finds nothing more in hot.
  ASSERT_TRUE(advisor_->Analyze().ok());
  EXPECT_EQ(advisor_->Get(r.id)->state, "done");
  EXPECT_EQ(advisor_->List().size(), 1u);
}

TEST_F(AdvisorTest, ALockedObjectMovesAndKeepsItsLock) {
  ASSERT_TRUE(engine_->SetBucketVersioning("b", object::Versioning::kEnabled).ok());
  ASSERT_TRUE(engine_->SetObjectLockConfiguration("b", {}).ok());
  object::ObjectLock lock;
  lock.mode = object::LockMode::kCompliance;
  lock.retain_until_ns = UnixNowNs() + 3600 * kDay;
  lock.legal_hold = object::LegalHold::kOn;
  auto locked = Put("archive/2026/a", "", lock);
  Put("archive/2026/b");
  Recommendation r = OnlyRecommendation();
  SetPolicy(R"({"max_objects_per_second": 0})");
  ASSERT_TRUE(advisor_->Approve(r.id, "root").ok());
  Drain();
  EXPECT_EQ(advisor_->Get(r.id)->state, "done");
  auto head = engine_->HeadObject("b", "archive/2026/a");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->storage_class, "STANDARD_IA");
  EXPECT_EQ(head->version_stamp, locked.version_stamp);
  EXPECT_EQ(head->lock.mode, object::LockMode::kCompliance);
  EXPECT_EQ(head->lock.retain_until_ns, lock.retain_until_ns);
  EXPECT_EQ(head->lock.legal_hold, object::LegalHold::kOn);
  object::Version v = object::VersionSelector{false, locked.version_stamp};
  auto del = engine_->DeleteVersion("b", "archive/2026/a", v);
  EXPECT_EQ(del.status().code(), Code::kPermissionDenied);
}

TEST_F(AdvisorTest, ThePolicyBoundsApprovalAndExecution) {
  Put("logs/2026/a");
  Recommendation r = OnlyRecommendation();
  SetPolicy(R"({"moves": ["warm->hot"]})");
  Status st = advisor_->Approve(r.id, "root");
  EXPECT_EQ(st.code(), Code::kPreconditionFailed);
  EXPECT_NE(st.message().find("does not allow hot->warm"), std::string::npos) << st.ToString();
  SetPolicy(R"({"buckets": ["other-*"]})");
  EXPECT_EQ(advisor_->Approve(r.id, "root").code(), Code::kPreconditionFailed);
  SetPolicy(R"({"max_objects_per_second": 0})");
  ASSERT_TRUE(advisor_->Approve(r.id, "root").ok());
  // Stopped: nothing moves; the recommendation waits approved.
  SetPolicy(R"({"enabled": false})");
  Drain();
  EXPECT_EQ(ClassOf("logs/2026/a"), "");
  EXPECT_NE(advisor_->executor().waiting.find("stopped"), std::string::npos);
  // The policy narrowed after the approval: it waits, saying why.
  SetPolicy(R"({"prefixes": ["ckpt/"], "max_objects_per_second": 0})");
  Drain();
  EXPECT_EQ(ClassOf("logs/2026/a"), "");
  EXPECT_EQ(advisor_->Get(r.id)->state, "waiting");
  EXPECT_NE(advisor_->Get(r.id)->waiting.find("prefix logs/2026/"), std::string::npos);
  SetPolicy(R"({"max_objects_per_second": 0})");
  Drain();
  EXPECT_EQ(ClassOf("logs/2026/a"), "STANDARD_IA");
}

TEST_F(AdvisorTest, WithoutApprovalThePolicyDecides) {
  Put("a/b/c");
  Put("x/y/z");
  ASSERT_TRUE(advisor_->Analyze().ok());
  ASSERT_EQ(advisor_->List().size(), 2u);
  SetPolicy(R"({"require_approval": false, "prefixes": ["a/"], "max_objects_per_second": 0})");
  Drain();
  EXPECT_EQ(ClassOf("a/b/c"), "STANDARD_IA");
  EXPECT_EQ(ClassOf("x/y/z"), "");  // outside the policy: left for the operator
  for (const Recommendation& r : advisor_->List()) {
    if (r.prefix == "a/b/") {
      EXPECT_EQ(r.state, "done");
      EXPECT_EQ(r.decided_by, "policy");
    } else {
      EXPECT_EQ(r.state, "pending");
    }
  }
}

TEST_F(AdvisorTest, RejectedStaysRejectedAndStaleEvidenceExpires) {
  Put("p/q/1");
  Put("r/s/1");
  ASSERT_TRUE(advisor_->Analyze().ok());
  std::string pq, rs;
  for (const Recommendation& r : advisor_->List()) (r.prefix == "p/q/" ? pq : rs) = r.id;
  ASSERT_FALSE(pq.empty());
  ASSERT_FALSE(rs.empty());
  ASSERT_TRUE(advisor_->Reject(pq, "root", "we read it at quarter end").ok());
  EXPECT_EQ(advisor_->Reject(pq, "root", "").code(), Code::kPreconditionFailed);
  EXPECT_EQ(advisor_->Reject("nope", "root", "").code(), Code::kNotFound);
  // r/s/ is read again: its recommendation expires.
  advisor_->RecordRead("b", "r/s/1", kSize);
  ASSERT_TRUE(advisor_->Analyze().ok());
  EXPECT_EQ(advisor_->Get(pq)->state, "rejected");
  EXPECT_EQ(advisor_->Get(pq)->reason, "we read it at quarter end");
  EXPECT_EQ(advisor_->Get(rs)->state, "expired");
  // Restart: the decisions, the statistics and the policy are still there.
  SetPolicy(R"({"max_bytes_per_day": 42})");
  Reopen();
  EXPECT_EQ(advisor_->Get(pq)->state, "rejected");
  EXPECT_EQ(advisor_->Get(rs)->state, "expired");
  EXPECT_EQ(advisor_->policy().max_bytes_per_day, 42u);
  EXPECT_EQ(advisor_->stats().size(), 1u);
  // The stored statistics are what the new analysis sees: r/s/ stays expired.
  ASSERT_TRUE(advisor_->Analyze().ok());
  EXPECT_EQ(advisor_->Get(rs)->state, "expired");
}

// A KV namespace idle past kv_idle_days: an "expire" recommendation, allowed
// only by a policy naming kv->expire, carried out in one call with the time
// of the evidence (so the tier refuses if the namespace was used since); its
// bucket's objects are never tier-moved.
TEST_F(AdvisorTest, IdleKvNamespaceExpiresWithinThePolicy) {
  const int64_t now = base_ns_ + offset_.load();
  kv_facts_.push_back({"kv-00000000000000aa", 4, 4 << 20, now - 9 * kDay, 50, 30, 20, 0, ""});
  kv_facts_.push_back({"kv-00000000000000bb", 4, 4 << 20, now - 2 * kDay, 0, 0, 0, 0, ""});
  kv_facts_.push_back({"kv-00000000000000cc", 0, 0, now - 30 * kDay, 0, 0, 0, 0, ""});  // empty
  // The namespace's block objects look long idle to the inventory: no tier move for them.
  ASSERT_TRUE(engine_->CreateBucket("kv-00000000000000aa", object::BucketRecord{1, "us-east-1", "me"})
                  .ok());
  auto w = engine_->NewWriter("kv-00000000000000aa", "d/block", {}, {});
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append(std::string(kSize, 'k')).ok());
  ASSERT_TRUE((*w)->Commit().ok());
  Recommendation r = OnlyRecommendation();
  EXPECT_EQ(r.kind, "expire");
  EXPECT_EQ(r.bucket, "kv-00000000000000aa");
  EXPECT_EQ(r.from_media + "->" + r.to_media, "kv->expire");
  EXPECT_EQ(r.objects_to_move, 4u);
  EXPECT_EQ(r.bytes_to_move, 4u << 20);
  EXPECT_EQ(r.kv_hits, 30u);
  EXPECT_EQ(r.kv_misses, 20u);
  EXPECT_GE(r.idle_days, 9);
  EXPECT_EQ(r.last_read_ns, now - 9 * kDay);
  EXPECT_EQ(r.capacity_change.at("default"), -(4 << 20));
  EXPECT_GT(r.watts_before, 0);
  EXPECT_EQ(r.watts_after, 0);
  EXPECT_NE(r.summary.find("idle 9 days → expire"), std::string::npos) << r.summary;
  // The default policy allows hot->warm only.
  Status refused = advisor_->Approve(r.id, "root");
  EXPECT_EQ(refused.code(), Code::kPreconditionFailed);
  EXPECT_NE(refused.message().find("kv->expire"), std::string::npos) << refused.message();
  SetPolicy(R"({"moves": ["hot->warm", "kv->expire"], "max_bytes_per_day": 1})");
  ASSERT_TRUE(advisor_->Approve(r.id, "root").ok());
  Drain();  // the byte budget is for moves: expiring frees bytes and is not held back by it
  ASSERT_EQ(kv_expired_.size(), 1u);
  EXPECT_EQ(kv_expired_[0], (std::pair<std::string, int64_t>{r.bucket, now - 9 * kDay}));
  auto done = advisor_->Get(r.id);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->state, "done");
  EXPECT_EQ(done->moved_objects, 3u);
  EXPECT_EQ(done->locked, 1u);  // pinned blocks stay
  // Another namespace goes idle, then is used again before its expiry runs:
  // the tier refuses, the recommendation expires.
  kv_facts_[1].last_access_ns = now - 8 * kDay;
  ASSERT_TRUE(advisor_->Analyze().ok());
  std::string bb;
  for (const Recommendation& x : advisor_->List()) {
    if (x.bucket == "kv-00000000000000bb") bb = x.id;
  }
  ASSERT_FALSE(bb.empty());
  kv_expire_result_ = PreconditionFailed("KV namespace kv-00000000000000bb was accessed since");
  ASSERT_TRUE(advisor_->Approve(bb, "root").ok());
  Drain();
  EXPECT_EQ(advisor_->Get(bb)->state, "expired");
  EXPECT_NE(advisor_->Get(bb)->reason.find("accessed since"), std::string::npos);
  // A tier that fails otherwise: failed, with the reason, and it can be approved again.
  kv_expire_result_ = Unavailable("disk on fire");
  ASSERT_TRUE(advisor_->Analyze().ok());
  ASSERT_EQ(advisor_->Get(bb)->state, "pending");
  ASSERT_TRUE(advisor_->Approve(bb, "root").ok());
  Drain();
  EXPECT_EQ(advisor_->Get(bb)->state, "failed");
  EXPECT_NE(advisor_->Get(bb)->reason.find("disk on fire"), std::string::npos);
}

}  // namespace
}  // namespace strata::advisor

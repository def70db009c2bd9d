#include "notify/notifier.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "audit/context.h"
#include "http/server.h"
#include "meta/keys.h"
#include "meta/mem_store.h"
#include "object/record.h"

namespace strata::notify {
namespace {

// A webhook receiver on a loopback port: keeps every body and the
// Authorization header; answers `status` (500 makes the sender retry).
class Receiver {
 public:
  Receiver() {
    http::ServerOptions o;
    o.port = 0;
    o.worker_threads = 2;
    auto s = http::Server::Start(
        o,
        [this](const http::Request& req, ByteSource& body, http::ResponseWriter& out) {
          std::string data;
          char buf[4096];
          for (;;) {
            auto n = body.Read(buf, sizeof buf);
            if (!n.ok() || *n == 0) break;
            data.append(buf, *n);
          }
          const int code = status.load();
          {
            std::lock_guard lock(mu);
            ++requests;
            if (code / 100 == 2) {
              bodies.push_back(data);
              const std::string* a = req.Header("authorization");
              auth = a ? *a : "";
            }
          }
          out.Start(code, {}, 0).IgnoreError();
        },
        [](http::ProtocolError, http::ResponseWriter& out) { out.Start(400, {}, 0).IgnoreError(); });
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    server = std::move(s).value();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server->port()) + "/hook"; }
  std::vector<std::string> Bodies() {
    std::lock_guard lock(mu);
    return bodies;
  }
  // Waits (up to 10 s) until `n` events arrived.
  bool WaitFor(size_t n) {
    for (int i = 0; i < 1000; ++i) {
      if (Bodies().size() >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

  std::unique_ptr<http::Server> server;
  std::atomic<int> status{200};
  std::mutex mu;
  std::vector<std::string> bodies;
  std::string auth;
  int requests = 0;
};

constexpr char kConfig[] =
    "<NotificationConfiguration><QueueConfiguration><Id>c1</Id>"
    "<Queue>arn:strata:sqs::hook:webhook</Queue><Event>s3:ObjectCreated:*</Event>"
    "<Event>s3:ObjectRemoved:*</Event><Filter><S3Key><FilterRule><Name>prefix</Name>"
    "<Value>in/</Value></FilterRule></S3Key></Filter></QueueConfiguration>"
    "</NotificationConfiguration>";

class NotifierTest : public ::testing::Test {
 protected:
  void SetUp() override { inner_ = meta::NewMemStore(); }

  NotifierOptions Options(size_t limit = 100) {
    NotifierOptions o;
    o.region = "test-region";
    o.targets = {{"hook", receiver_.url(), "secret-token", limit}};
    o.retry_initial_ns = 10'000'000;
    o.retry_max_ns = 50'000'000;
    o.on_drop = [this](const std::string& target, const Event& e) {
      std::lock_guard lock(mu_);
      dropped_.push_back(target + " " + e.name + " " + e.key);
    };
    return o;
  }
  std::unique_ptr<Notifier> Open(meta::KvStore* inner, NotifierOptions o) {
    auto n = Notifier::Open(inner, std::move(o));
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    return n.ok() ? std::move(n).value() : nullptr;
  }
  // The bucket record with the configuration, written as the engine does.
  static void ConfigureBucket(meta::KvStore* store, const std::string& config = kConfig) {
    object::BucketRecord b;
    b.owner = "owner-1";
    b.notification = config;
    meta::WriteBatch w;
    w.Put(meta::BucketKey("b"), object::EncodeBucketRecord(b));
    ASSERT_TRUE(store->Write(w, true).ok());
  }
  // An object version written under an actor doing `op`.
  static Status Put(meta::KvStore* store, const std::string& op, const std::string& key,
                    uint64_t stamp, bool sync = true, bool with_actor = true) {
    object::ObjectRecord r;
    r.size_bytes = 5;
    r.inline_data = "hello";  // a valid record: inline data of its size
    r.etag = "abc";
    r.version_stamp = stamp;
    meta::WriteBatch w;
    w.Put(meta::ObjectVersionKey("b", key, stamp), object::EncodeObjectRecord(r));
    audit::Actor actor;
    actor.operation = op;
    actor.identity = "alice";
    actor.request_id = "r" + std::to_string(stamp);
    if (!with_actor) return store->Write(w, sync);
    audit::Scope scope(&actor);
    return store->Write(w, sync);
  }
  size_t Queued() {
    size_t n = 0;
    auto it = inner_->NewIterator();
    const std::string prefix = meta::NotifyQueuePrefix("hook");
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) ++n;
    return n;
  }

  std::unique_ptr<meta::KvStore> inner_;
  Receiver receiver_;
  std::mutex mu_;
  std::vector<std::string> dropped_;
};

TEST_F(NotifierTest, QueuesInTheChangesBatchAndDelivers) {
  auto n = Open(inner_.get(), Options());
  ASSERT_TRUE(n);
  ConfigureBucket(n->store());
  ASSERT_TRUE(Put(n->store(), "PutObject", "in/a b", 10).ok());
  EXPECT_EQ(Queued(), 1u);  // written with the object, before any sender runs
  // Not events: a key outside the filter, a write with no actor, an unsynced
  // write, an operation that is no event.
  ASSERT_TRUE(Put(n->store(), "PutObject", "out/x", 11).ok());
  ASSERT_TRUE(Put(n->store(), "PutObject", "in/y", 12, /*sync=*/true, /*with_actor=*/false).ok());
  ASSERT_TRUE(Put(n->store(), "PutObject", "in/z", 13, /*sync=*/false).ok());
  ASSERT_TRUE(Put(n->store(), "PutObjectRetention", "in/w", 14).ok());
  EXPECT_EQ(Queued(), 1u);
  // A removal under DeleteObject.
  {
    meta::WriteBatch w;
    w.Delete(meta::ObjectVersionKey("b", "in/a b", 10));
    audit::Actor actor;
    actor.operation = "DeleteObject";
    audit::Scope scope(&actor);
    ASSERT_TRUE(n->store()->Write(w, true).ok());
  }
  EXPECT_EQ(Queued(), 2u);
  EXPECT_EQ(n->stats()[0].queued, 2u);

  n->Start();
  ASSERT_TRUE(receiver_.WaitFor(2));
  auto bodies = receiver_.Bodies();
  auto first = nlohmann::json::parse(bodies[0])["Records"][0];
  EXPECT_EQ(first["eventName"], "ObjectCreated:Put");
  EXPECT_EQ(first["awsRegion"], "test-region");
  EXPECT_EQ(first["s3"]["configurationId"], "c1");
  EXPECT_EQ(first["s3"]["object"]["key"], "in/a+b");
  EXPECT_EQ(first["s3"]["object"]["size"], 5);
  EXPECT_EQ(first["s3"]["bucket"]["ownerIdentity"]["principalId"], "owner-1");
  EXPECT_EQ(first["userIdentity"]["principalId"], "alice");
  auto second = nlohmann::json::parse(bodies[1])["Records"][0];
  EXPECT_EQ(second["eventName"], "ObjectRemoved:Delete");
  EXPECT_LT(first["s3"]["object"]["sequencer"].get<std::string>(),
            second["s3"]["object"]["sequencer"].get<std::string>());
  {
    std::lock_guard lock(receiver_.mu);
    EXPECT_EQ(receiver_.auth, "Bearer secret-token");
  }
  for (int i = 0; i < 500 && Queued() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Queued(), 0u);  // delivered entries leave the queue
  EXPECT_EQ(n->stats()[0].delivered, 2u);
  EXPECT_EQ(n->stats()[0].queued, 0u);

  // Removing the configuration stops the events.
  ConfigureBucket(n->store(), "");
  ASSERT_TRUE(Put(n->store(), "PutObject", "in/after", 20).ok());
  EXPECT_EQ(Queued(), 0u);
}

TEST_F(NotifierTest, RetriesUntilTheReceiverTakesIt) {
  receiver_.status = 503;
  auto n = Open(inner_.get(), Options());
  ASSERT_TRUE(n);
  ConfigureBucket(n->store());
  n->Start();
  ASSERT_TRUE(Put(n->store(), "CopyObject", "in/a", 10).ok());
  for (int i = 0; i < 500 && n->stats()[0].failures < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(n->stats()[0].failures, 3u);
  EXPECT_EQ(Queued(), 1u);  // kept while the receiver refuses it
  receiver_.status = 200;
  ASSERT_TRUE(receiver_.WaitFor(1));
  EXPECT_EQ(nlohmann::json::parse(receiver_.Bodies()[0])["Records"][0]["eventName"],
            "ObjectCreated:Copy");
}

TEST_F(NotifierTest, QueueSurvivesARestart) {
  {
    auto n = Open(inner_.get(), Options());
    ASSERT_TRUE(n);
    ConfigureBucket(n->store());
    for (uint64_t i = 0; i < 5; ++i) {
      ASSERT_TRUE(Put(n->store(), "PutObject", "in/" + std::to_string(i), 10 + i).ok());
    }
  }  // never started: nothing was sent
  EXPECT_TRUE(receiver_.Bodies().empty());
  auto n = Open(inner_.get(), Options());
  ASSERT_TRUE(n);
  EXPECT_EQ(n->stats()[0].queued, 5u);
  // New events get seqs after the old ones.
  ASSERT_TRUE(Put(n->store(), "PutObject", "in/new", 99).ok());
  n->Start();
  ASSERT_TRUE(receiver_.WaitFor(6));
  auto bodies = receiver_.Bodies();
  EXPECT_EQ(nlohmann::json::parse(bodies[5])["Records"][0]["s3"]["object"]["key"], "in/new");
}

TEST_F(NotifierTest, AFullQueueDropsAndReports) {
  auto n = Open(inner_.get(), Options(/*limit=*/2));
  ASSERT_TRUE(n);
  ConfigureBucket(n->store());
  for (uint64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(Put(n->store(), "PutObject", "in/" + std::to_string(i), 10 + i).ok());
  }
  EXPECT_EQ(Queued(), 2u);
  EXPECT_EQ(n->stats()[0].dropped, 1u);
  std::lock_guard lock(mu_);
  EXPECT_EQ(dropped_, std::vector<std::string>{"hook s3:ObjectCreated:Put in/2"});
}

TEST_F(NotifierTest, AFailedWriteQueuesNothing) {
  meta::FlakyKvStore flaky(inner_.get());
  auto n = Open(&flaky, Options());
  ASSERT_TRUE(n);
  ConfigureBucket(n->store());
  flaky.fail = true;
  EXPECT_FALSE(Put(n->store(), "PutObject", "in/a", 10).ok());
  flaky.fail = false;
  EXPECT_EQ(Queued(), 0u);
  EXPECT_EQ(n->stats()[0].queued, 0u);
}

TEST_F(NotifierTest, ANewConfigurationSendsATestEvent) {
  auto n = Open(inner_.get(), Options());
  ASSERT_TRUE(n);
  {
    audit::Actor actor;
    actor.operation = "PutBucketNotificationConfiguration";
    actor.request_id = "req-cfg";
    audit::Scope scope(&actor);
    ConfigureBucket(n->store());
  }
  EXPECT_EQ(Queued(), 1u);  // in the batch of the configuration
  n->Start();
  ASSERT_TRUE(receiver_.WaitFor(1));
  auto doc = nlohmann::json::parse(receiver_.Bodies()[0]);
  EXPECT_EQ(doc["Service"], "Amazon S3");
  EXPECT_EQ(doc["Event"], "s3:TestEvent");
  EXPECT_EQ(doc["Bucket"], "b");
  EXPECT_EQ(doc["RequestId"], "req-cfg");
  EXPECT_FALSE(doc.contains("Records"));
}

TEST_F(NotifierTest, RefusesBadTargets) {
  NotifierOptions o;
  o.targets = {{"bad id", "http://127.0.0.1:1/"}};
  EXPECT_EQ(Notifier::Open(inner_.get(), o).status().code(), Code::kInvalidArgument);
  o.targets = {{"ok", "ftp://x/"}};
  EXPECT_EQ(Notifier::Open(inner_.get(), o).status().code(), Code::kInvalidArgument);
  o.targets = {{"ok", "http://a/"}, {"ok", "http://b/"}};
  EXPECT_EQ(Notifier::Open(inner_.get(), o).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace strata::notify

#include "notify/notifier.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <thread>

#include "audit/context.h"
#include "common/log.h"
#include "common/time_util.h"
#include "http/client.h"
#include "meta/keys.h"
#include "object/record.h"

namespace strata::notify {

namespace {

constexpr size_t kPage = 64;  // queue entries read per scan
constexpr auto kIdleWait = std::chrono::seconds(1);

std::string Hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// "Nq" target '\0' BE64(seq): the target and the seq; false if not that.
bool ParseQueueKey(std::string_view k, std::string* target, uint64_t* seq) {
  if (k.size() < 2 + 1 + 8 || k[0] != meta::kNotifyPrefix || k[1] != 'q') return false;
  std::string_view body = k.substr(2, k.size() - 2 - 8);
  if (body.empty() || body.back() != '\0') return false;
  body.remove_suffix(1);
  *target = std::string(body);
  *seq = DecodeFixed64BE(k.data() + k.size() - 8);
  return true;
}

}  // namespace

struct Notifier::Sender {
  Target target;
  std::string path;  // the request target of the URL
  std::unique_ptr<http::Client> client;
  std::atomic<uint64_t> queued{0}, delivered{0}, failures{0}, dropped{0};
  std::mutex mu;  // wake, stop
  std::condition_variable cv;
  bool wake = false;
  bool stop = false;
  std::thread thread;

  void Wake() {
    {
      std::lock_guard lock(mu);
      wake = true;
    }
    cv.notify_one();
  }
  // Waits up to `d` for a wake or a stop; false once stopping.
  template <typename D>
  bool Wait(D d) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, d, [&] { return wake || stop; });
    wake = false;
    return !stop;
  }
  bool stopping() {
    std::lock_guard lock(mu);
    return stop;
  }
};

class Notifier::Store : public meta::ExtendingStore {
 public:
  explicit Store(Notifier* n) : n_(n) {}
  Result<std::optional<std::string>> Get(std::string_view key) override {
    return n_->inner_->Get(key);
  }
  std::unique_ptr<meta::KvIterator> NewIterator() override { return n_->inner_->NewIterator(); }
  Status Checkpoint(const std::string& dir) override { return n_->inner_->Checkpoint(dir); }

 private:
  Status Apply(const meta::WriteBatch& batch, meta::WriteBatch* owned, bool sync) override;
  Notifier* n_;
};

Status Notifier::Store::Apply(const meta::WriteBatch& batch, meta::WriteBatch* owned, bool sync) {
  audit::Actor* actor = audit::CurrentActor();
  meta::WriteBatch events;  // appended to the batch once its ops are read
  std::vector<Sender*> reserved;  // one queue slot each
  std::vector<std::pair<Sender*, Event>> drops;
  auto enqueue = [&](Sender* s, uint64_t seq, std::string doc) {
    if (s->queued.fetch_add(1) >= s->target.queue_limit) {
      s->queued.fetch_sub(1);
      ++s->dropped;
      return false;
    }
    events.Put(meta::NotifyQueueKey(s->target.id, seq), doc);
    reserved.push_back(s);
    return true;
  };
  if (sync && actor && actor->operation == "PutBucketNotificationConfiguration") {
    // As S3 does, a test message to each destination the new configuration names.
    for (const meta::WriteBatch::Op& op : batch.ops()) {
      if (op.is_delete || op.key.empty() || op.key[0] != meta::kBucketPrefix) continue;
      auto rec = object::DecodeBucketRecord(op.value);
      if (!rec || rec->notification.empty()) continue;
      auto parsed = ParseConfiguration(rec->notification, [](std::string_view) { return true; });
      const auto* c = std::get_if<Configuration>(&parsed);
      if (!c) continue;
      std::vector<std::string> targets;
      for (const Rule& r : c->rules) {
        if (std::find(targets.begin(), targets.end(), r.target) == targets.end()) {
          targets.push_back(r.target);
        }
      }
      const std::string bucket = op.key.substr(1);
      for (const std::string& t : targets) {
        if (Sender* s = n_->SenderOf(t)) {
          enqueue(s, n_->next_seq_.fetch_add(1),
                  RenderTestEvent(bucket, UnixNowNs(), actor->request_id));
        }
      }
    }
  }
  if (sync && actor && n_->any_config_.load(std::memory_order_acquire)) {
    for (const meta::WriteBatch::Op& op : batch.ops()) {
      std::string bucket, key;
      uint64_t stamp = 0;
      if (!meta::ParseObjectVersionKey(op.key, &bucket, &key, &stamp)) continue;
      std::shared_ptr<const BucketConfig> config = n_->ConfigOf(bucket);
      if (!config) continue;
      std::optional<object::ObjectRecord> record;
      std::optional<std::string_view> name;
      if (!op.is_delete) {
        record = object::DecodeObjectRecord(op.value);
        if (!record) continue;
        name = EventOfPut(actor->operation, *record);
      } else {
        name = EventOfDelete(actor->operation);
      }
      if (!name) continue;
      std::vector<const Rule*> rules = Matching(config->config, *name, key);
      if (rules.empty()) continue;
      Event e;
      e.name = std::string(*name);
      e.time_ns = UnixNowNs();
      e.region = n_->options_.region;
      e.bucket = bucket;
      e.bucket_owner = config->owner;
      e.key = key;
      e.identity = actor->identity;
      e.source = actor->source;
      e.request_id = actor->request_id;
      if (op.is_delete) {
        // The version removed: its id if it was one of a versioned object.
        auto before = n_->inner_->Get(op.key);
        if (before.ok() && *before) {
          if (auto r = object::DecodeObjectRecord(**before); r && r->versioned) {
            e.version_id = r->VersionId();
          }
        }
      } else {
        if (!record->delete_marker) {
          e.has_size = true;
          e.size = record->size_bytes;
          e.etag = record->etag;
        }
        if (record->versioned) e.version_id = record->VersionId();
        e.storage_class = record->storage_class;
        e.restore_expiry_ns = record->restore.expiry_ns;
      }
      const uint64_t seq = n_->next_seq_.fetch_add(1);
      e.sequencer = Hex16(seq);
      for (const Rule* rule : rules) {
        Sender* s = n_->SenderOf(rule->target);
        if (!s) continue;  // a target the operator has since removed
        if (!enqueue(s, seq, RenderEvent(e, rule->id))) drops.emplace_back(s, e);
      }
    }
  }
  // Bucket records the batch writes: their notification configuration is
  // remembered once the write succeeds (the batch may be moved down by then).
  std::vector<std::pair<std::string, std::optional<std::string>>> bucket_records;
  for (const meta::WriteBatch::Op& op : batch.ops()) {
    if (!op.key.empty() && op.key[0] == meta::kBucketPrefix) {
      bucket_records.emplace_back(op.key.substr(1), op.is_delete ? std::nullopt
                                                                 : std::optional<std::string>(op.value));
    }
  }
  meta::ExtendedBatch out(batch, owned);
  if (!events.empty()) out.get().Append(std::move(events));
  Status st = out.Forward(*n_->inner_, sync);
  if (!st.ok()) {
    for (Sender* s : reserved) s->queued.fetch_sub(1);
    return st;
  }
  for (Sender* s : reserved) s->Wake();
  for (const auto& [bucket, value] : bucket_records) {
    n_->Remember(bucket, value ? std::optional<std::string_view>(*value) : std::nullopt);
  }
  if (n_->options_.on_drop) {
    for (const auto& [s, e] : drops) n_->options_.on_drop(s->target.id, e);
  }
  return st;
}

Notifier::Notifier(meta::KvStore* inner, NotifierOptions options)
    : inner_(inner), options_(std::move(options)), store_(std::make_unique<Store>(this)) {}

Notifier::~Notifier() { Stop(); }

meta::KvStore* Notifier::store() { return store_.get(); }

Result<std::unique_ptr<Notifier>> Notifier::Open(meta::KvStore* inner, NotifierOptions options) {
  std::unique_ptr<Notifier> n(new Notifier(inner, std::move(options)));
  for (const Target& t : n->options_.targets) {
    if (!ValidTargetId(t.id)) {
      return InvalidArgument("notify.webhook." + t.id + ": an id needs 1-64 of A-Z a-z 0-9 _ -");
    }
    if (n->SenderOf(t.id)) return InvalidArgument("notify.webhook." + t.id + ": declared twice");
    auto s = std::make_unique<Sender>();
    s->target = t;
    http::ClientEndpoint endpoint;
    endpoint.ca_file = t.ca_file;
    endpoint.timeout_ms = t.timeout_ms;
    if (!http::ParseHttpUrl(t.url, &endpoint, &s->path)) {
      return InvalidArgument("notify.webhook." + t.id +
                             ": endpoint needs http[s]://HOST[:PORT][/PATH], got '" + t.url + "'");
    }
    if (!http::HeaderSafe(t.auth_token)) {
      return InvalidArgument("notify.webhook." + t.id + ": auth_token holds a control character");
    }
    auto client = http::Client::Create(std::move(endpoint));
    if (!client.ok()) return client.status().WithContext("notify.webhook." + t.id);
    s->client = std::move(client).value();
    n->senders_.push_back(std::move(s));
  }
  // The queues as a crash or a stop left them: depths and the next seq.
  uint64_t max_seq = 0, orphaned = 0;
  {
    auto it = inner->NewIterator();
    const std::string prefix = std::string(1, meta::kNotifyPrefix) + "q";
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      std::string target;
      uint64_t seq = 0;
      if (!ParseQueueKey(it->key(), &target, &seq)) continue;
      max_seq = std::max(max_seq, seq);
      if (Sender* s = n->SenderOf(target)) {
        ++s->queued;
      } else {
        ++orphaned;
      }
    }
    RETURN_IF_ERROR(it->status());
  }
  n->next_seq_ = max_seq + 1;
  if (orphaned) {
    STRATA_LOG("notify: %llu queued events are for webhook targets no longer configured; "
               "they stay queued until such a target is declared again",
               static_cast<unsigned long long>(orphaned));
  }
  {
    auto it = inner->NewIterator();
    const std::string prefix(1, meta::kBucketPrefix);
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      n->Remember(it->key().substr(1), it->value());
    }
    RETURN_IF_ERROR(it->status());
  }
  return n;
}

void Notifier::Remember(std::string_view bucket, std::optional<std::string_view> value) {
  std::shared_ptr<const BucketConfig> config;
  if (value) {
    if (auto rec = object::DecodeBucketRecord(*value); rec && !rec->notification.empty()) {
      // Stored documents were checked when they were put; a target removed
      // from the config file since simply has no sender.
      auto parsed = ParseConfiguration(rec->notification, [](std::string_view) { return true; });
      if (auto* c = std::get_if<Configuration>(&parsed); c && !c->rules.empty()) {
        config = std::make_shared<const BucketConfig>(BucketConfig{std::move(*c), rec->owner});
      }
    }
  }
  std::lock_guard lock(config_mu_);
  if (config) {
    configs_[std::string(bucket)] = std::move(config);
  } else {
    configs_.erase(std::string(bucket));
  }
  any_config_.store(!configs_.empty(), std::memory_order_release);
}

std::shared_ptr<const Notifier::BucketConfig> Notifier::ConfigOf(const std::string& bucket) {
  std::lock_guard lock(config_mu_);
  auto it = configs_.find(bucket);
  return it == configs_.end() ? nullptr : it->second;
}

Notifier::Sender* Notifier::SenderOf(std::string_view id) const {
  for (const auto& s : senders_) {
    if (s->target.id == id) return s.get();
  }
  return nullptr;
}

bool Notifier::HasTarget(std::string_view id) const { return SenderOf(id) != nullptr; }

std::vector<std::string> Notifier::target_ids() const {
  std::vector<std::string> ids;
  for (const auto& s : senders_) ids.push_back(s->target.id);
  return ids;
}

std::vector<Notifier::TargetStats> Notifier::stats() const {
  std::vector<TargetStats> out;
  for (const auto& s : senders_) {
    out.push_back({s->target.id, s->queued.load(), s->delivered.load(), s->failures.load(),
                   s->dropped.load()});
  }
  return out;
}

void Notifier::Start() {
  for (auto& s : senders_) {
    if (s->thread.joinable()) continue;
    {
      std::lock_guard lock(s->mu);
      s->stop = false;
    }
    Sender* raw = s.get();
    s->thread = std::thread([this, raw] { Run(raw); });
  }
}

void Notifier::Stop() {
  for (auto& s : senders_) {
    {
      std::lock_guard lock(s->mu);
      s->stop = true;
    }
    s->cv.notify_all();
  }
  for (auto& s : senders_) {
    if (s->thread.joinable()) s->thread.join();
  }
}

namespace {

// One POST of one event; OK on a 2xx reply. A failure on a kept-alive
// connection the receiver closed while it idled is tried once more at once.
Status Deliver(http::Client& client, const Target& t, const std::string& path,
               const std::string& body) {
  http::ClientRequest req;
  req.method = "POST";
  req.target = path;
  req.headers = {{"Content-Type", "application/json"}, {"User-Agent", "strata-notify"}};
  if (!t.auth_token.empty()) req.headers.emplace_back("Authorization", "Bearer " + t.auth_token);
  req.body = body;
  req.reply_limit = 64 << 10;
  Result<http::ClientResponse> r = Unavailable("not tried");
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool retry = false;
    r = client.ExchangeOnce(req, &retry);
    if (r.ok() || !retry) break;
  }
  if (!r.ok()) return r.status();
  if (r->status < 200 || r->status > 299) {
    return Unavailable("the receiver answered HTTP " + std::to_string(r->status));
  }
  return Status::OK();
}

}  // namespace

void Notifier::Run(Sender* s) {
  const std::string prefix = meta::NotifyQueuePrefix(s->target.id);
  std::string cursor = prefix;
  int64_t backoff_ns = 0;
  uint64_t failures_in_row = 0;
  while (!s->stopping()) {
    std::vector<std::pair<std::string, std::string>> page;
    {
      auto it = inner_->NewIterator();
      for (it->Seek(cursor); it->Valid() && it->key().starts_with(prefix) && page.size() < kPage;
           it->Next()) {
        page.emplace_back(std::string(it->key()), std::string(it->value()));
      }
      if (Status st = it->status(); !st.ok()) {
        STRATA_LOG("notify: webhook %s: reading the queue: %s", s->target.id.c_str(),
                   st.ToString().c_str());
        if (!s->Wait(kIdleWait)) break;
        continue;
      }
    }
    if (page.empty()) {
      // Events committed behind the cursor (a lower seq committed later)
      // are found by one scan from the start before waiting.
      if (cursor != prefix) {
        cursor = prefix;
        continue;
      }
      if (!s->Wait(kIdleWait)) break;
      continue;
    }
    meta::WriteBatch done;
    for (const auto& [key, body] : page) {
      if (s->stopping()) break;
      Status st = Deliver(*s->client, s->target, s->path, body);
      if (!st.ok()) {
        ++s->failures;
        ++failures_in_row;
        backoff_ns = backoff_ns == 0 ? options_.retry_initial_ns
                                     : std::min(backoff_ns * 2, options_.retry_max_ns);
        if (failures_in_row == 1 || failures_in_row % 100 == 0) {
          STRATA_LOG("notify: webhook %s (%s): delivery failed (%llu in a row), retrying in "
                     "%lld ms: %s",
                     s->target.id.c_str(), s->target.url.c_str(),
                     static_cast<unsigned long long>(failures_in_row),
                     static_cast<long long>(backoff_ns / 1'000'000), st.ToString().c_str());
        }
        break;
      }
      if (failures_in_row) {
        STRATA_LOG("notify: webhook %s: delivering again after %llu failures",
                   s->target.id.c_str(), static_cast<unsigned long long>(failures_in_row));
      }
      failures_in_row = 0;
      backoff_ns = 0;
      done.Delete(key);
      cursor = key;
      cursor.push_back('\0');  // the next key after it
    }
    if (!done.empty()) {
      // Unsynced: a delete lost to a crash only means one more delivery.
      if (Status st = inner_->Write(done, /*sync=*/false); !st.ok()) {
        STRATA_LOG("notify: webhook %s: removing delivered events: %s", s->target.id.c_str(),
                   st.ToString().c_str());
      } else {
        const uint64_t n = done.ops().size();
        s->delivered += n;
        s->queued.fetch_sub(n);
      }
    }
    if (backoff_ns > 0 && failures_in_row > 0) {
      std::unique_lock lock(s->mu);
      s->cv.wait_for(lock, std::chrono::nanoseconds(backoff_ns), [&] { return s->stop; });
    }
  }
}

}  // namespace strata::notify

// In-memory KvStore twin for tests: an ordered map under one mutex, with the
// power-loss model of mem_store.h.
#include "meta/mem_store.h"

#include <map>
#include <mutex>
#include <vector>

namespace strata::meta {
namespace {

// std::string compares as unsigned bytes (char_traits<char>::compare uses
// memcmp semantics), the same order as RocksDB's default comparator.
using Map = std::map<std::string, std::string, std::less<>>;

// Iterates a private copy taken at creation: a true snapshot, at O(n) cost,
// which tests can afford.
class MemIterator : public KvIterator {
 public:
  explicit MemIterator(Map snapshot) : map_(std::move(snapshot)), it_(map_.end()) {}

  void Seek(std::string_view key) override { it_ = map_.lower_bound(key); }
  bool Valid() const override { return it_ != map_.end(); }
  void Next() override { ++it_; }
  std::string_view key() const override { return it_->first; }
  std::string_view value() const override { return it_->second; }
  Status status() const override { return Status::OK(); }

 private:
  Map map_;
  Map::const_iterator it_;
};

class MemStore : public MemKvStore {
 public:
  Status Checkpoint(const std::string&) override {
    return NotImplemented("the in-memory store has no checkpoints");
  }
  Result<std::optional<std::string>> Get(std::string_view key) override {
    std::lock_guard lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }

  Status Write(const WriteBatch& batch, bool sync) override {
    std::lock_guard lock(mu_);  // one lock for the whole batch: atomic to readers
    Apply(batch, &map_);
    unsynced_.push_back(batch);
    if (sync) {  // the WAL sync covers every earlier batch too
      for (const WriteBatch& b : unsynced_) Apply(b, &durable_);
      unsynced_.clear();
    }
    return Status::OK();
  }

  std::unique_ptr<KvIterator> NewIterator() override {
    std::lock_guard lock(mu_);
    return std::make_unique<MemIterator>(map_);
  }

  void SimulateCrash() override {
    std::lock_guard lock(mu_);
    map_ = durable_;
    unsynced_.clear();
  }

 private:
  static void Apply(const WriteBatch& batch, Map* map) {
    for (const WriteBatch::Op& op : batch.ops()) {
      if (op.is_delete) {
        map->erase(op.key);
      } else {
        map->insert_or_assign(op.key, op.value);
      }
    }
  }

  std::mutex mu_;
  Map map_;                          // what readers see
  Map durable_;                      // as of the last synced write
  std::vector<WriteBatch> unsynced_;  // applied to map_ but not yet durable
};

}  // namespace

std::unique_ptr<KvStore> NewMemStore() { return std::make_unique<MemStore>(); }
std::unique_ptr<MemKvStore> NewMemKvStore() { return std::make_unique<MemStore>(); }

}  // namespace strata::meta

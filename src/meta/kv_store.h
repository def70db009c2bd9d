// KvStore: the ordered key-value interface all metadata goes through.
// RocksDB is the embedded default (rocksdb_store); mem_store is the in-memory
// twin for tests. Every key prefix in use is named in meta/keys.h.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace strata::meta {

class WriteBatch {
 public:
  struct Op {
    bool is_delete;
    std::string key;
    std::string value;
  };
  void Put(std::string_view key, std::string_view value) {
    ops_.push_back({false, std::string(key), std::string(value)});
  }
  void Delete(std::string_view key) { ops_.push_back({true, std::string(key), {}}); }
  void Append(WriteBatch&& other) {
    ops_.reserve(ops_.size() + other.ops_.size());
    for (Op& op : other.ops_) ops_.push_back(std::move(op));
    other.ops_.clear();
  }
  const std::vector<Op>& ops() const { return ops_; }
  bool empty() const { return ops_.empty(); }

 private:
  std::vector<Op> ops_;
};

// Forward iterator over a consistent snapshot taken at creation.
class KvIterator {
 public:
  virtual ~KvIterator() = default;
  virtual void Seek(std::string_view key) = 0;  // first entry >= key
  virtual bool Valid() const = 0;
  virtual void Next() = 0;
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  virtual Status status() const = 0;
};

class KvStore {
 public:
  virtual ~KvStore() = default;
  // NotFound-free lookup: nullopt when absent.
  virtual Result<std::optional<std::string>> Get(std::string_view key) = 0;
  // Applies the batch atomically. With sync=true the write-ahead log is synced
  // before returning; concurrent synced writers share one sync (group commit).
  virtual Status Write(const WriteBatch& batch, bool sync) = 0;
  // The same, for a batch its caller gives up: a decorating store that adds
  // keys to batches (the latest-version index, usage, notifications, the
  // audit trail) adds them to this one instead of copying it — with a 4 KiB
  // object's inline data, each copy was ~2.5k instructions per PUT.
  virtual Status Write(WriteBatch&& batch, bool sync) {
    return Write(static_cast<const WriteBatch&>(batch), sync);
  }
  virtual std::unique_ptr<KvIterator> NewIterator() = 0;
  // Writes a consistent, openable copy of the store into `dir` (which must
  // not exist). NotImplemented where the store cannot.
  virtual Status Checkpoint(const std::string& dir) = 0;
};

// For a decorating store's Write: the batch to add to is the caller's when
// it was given up (`owned`), else a copy made on first need; Forward writes
// whichever it is to the next store, moving it down when it may.
class ExtendedBatch {
 public:
  ExtendedBatch(const WriteBatch& batch, WriteBatch* owned) : batch_(batch), owned_(owned) {}
  WriteBatch& get() {
    if (owned_ == nullptr) owned_ = &copy_.emplace(batch_);
    return *owned_;
  }
  Status Forward(KvStore& next, bool sync) {
    return owned_ ? next.Write(std::move(*owned_), sync) : next.Write(batch_, sync);
  }

 private:
  const WriteBatch& batch_;
  WriteBatch* owned_;
  std::optional<WriteBatch> copy_;
};

// A store that adds keys to the batches written through it (the
// latest-version index, usage, notifications, the audit trail): both Writes
// come to Apply, with `owned` the batch itself when its writer gave it up.
// Apply adds through an ExtendedBatch and hands it on with Forward.
class ExtendingStore : public KvStore {
 public:
  Status Write(const WriteBatch& batch, bool sync) final { return Apply(batch, nullptr, sync); }
  Status Write(WriteBatch&& batch, bool sync) final { return Apply(batch, &batch, sync); }

 protected:
  virtual Status Apply(const WriteBatch& batch, WriteBatch* owned, bool sync) = 0;
};

// Opens (creating if needed) a RocksDB store in `dir`.
Result<std::unique_ptr<KvStore>> OpenRocksDbStore(const std::string& dir);
std::unique_ptr<KvStore> NewMemStore();

}  // namespace strata::meta

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
  virtual std::unique_ptr<KvIterator> NewIterator() = 0;
  // Writes a consistent, openable copy of the store into `dir` (which must
  // not exist). NotImplemented where the store cannot.
  virtual Status Checkpoint(const std::string& dir) = 0;
};

// Opens (creating if needed) a RocksDB store in `dir`.
Result<std::unique_ptr<KvStore>> OpenRocksDbStore(const std::string& dir);
std::unique_ptr<KvStore> NewMemStore();

}  // namespace strata::meta

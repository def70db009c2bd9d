// The in-memory KvStore twin with a power-loss model, for tests.
//
// The model is RocksDB's with a write-ahead log on a volatile page cache:
// a batch written with sync=false is applied (readers see it at once) but is
// durable only once a later batch is written with sync=true, which makes
// every earlier batch durable too (the WAL is one sequential file).
// SimulateCrash() drops every batch not yet made durable, so a test sees
// exactly what a power cut would leave.
#pragma once

#include <memory>

#include "meta/kv_store.h"

namespace strata::meta {

class MemKvStore : public KvStore {
 public:
  // Drops the writes no synced write has made durable yet.
  virtual void SimulateCrash() = 0;
};

std::unique_ptr<MemKvStore> NewMemKvStore();

// A store whose writes fail while `fail` is set (a full disk, an I/O error):
// the batch is not applied. Everything else goes to `inner`.
class FlakyKvStore : public KvStore {
 public:
  explicit FlakyKvStore(KvStore* inner) : inner_(inner) {}
  Result<std::optional<std::string>> Get(std::string_view key) override { return inner_->Get(key); }
  Status Write(const WriteBatch& batch, bool sync) override {
    if (fail) return Status(Code::kIOError, "injected write failure");
    return inner_->Write(batch, sync);
  }
  std::unique_ptr<KvIterator> NewIterator() override { return inner_->NewIterator(); }
  Status Checkpoint(const std::string& dir) override { return inner_->Checkpoint(dir); }
  bool fail = false;

 private:
  KvStore* inner_;
};

}  // namespace strata::meta

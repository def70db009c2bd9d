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

}  // namespace strata::meta

// The latest-version index: for every key, a copy of its newest version's
// record ("T" bucket '\0' key; meta/keys.h), or no entry when the key has no
// versions or its newest is a delete marker. ListObjects reads these entries
// one after the other, so its page latency does not depend on how many old
// versions or markers lie under a prefix: in the 'O' records a key's old
// versions sit between it and the next key, and skipping them costs a Seek
// per key.
//
// A decorator of the metadata store (like object/usage.h): every batch that
// puts or removes 'O' records gets, in that very batch, the 'T' change each
// touched key needs, so the index never disagrees with what committed,
// across crashes. Writers to one key are serialized here (striped locks),
// whoever calls.
//
// Open makes the entries from the 'O' records when the store has versions
// but no finished index (an upgrade, a rebuilt index), then writes
// LatestIndexReadyKey; a build cut short is redone from the start.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>

#include "common/status.h"
#include "meta/kv_store.h"

namespace strata::object {

class LatestIndex {
 public:
  static Result<std::unique_ptr<LatestIndex>> Open(meta::KvStore* inner);
  ~LatestIndex();

  // The store every writer of object versions goes through.
  meta::KvStore* store();

  // How many 'T' entries Open made (0 when the index was ready).
  uint64_t built_entries() const { return built_; }

 private:
  class Store;
  explicit LatestIndex(meta::KvStore* inner);
  Status Build();

  meta::KvStore* inner_;
  std::unique_ptr<Store> store_;
  std::array<std::mutex, 1024> key_locks_;
  uint64_t built_ = 0;
};

}  // namespace strata::object

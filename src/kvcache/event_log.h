// The block events of one KV namespace (EVENTS, docs/formats/kv-protocol.md):
// "stored" and "removed" notifications that a KV-aware router polls with a
// cursor, in a bounded ring.
//
// Recording starts at the first Read (a subscriber exists): until then Add
// costs a branch and the ring holds no memory. Once on, the ring holds the
// newest `capacity` events (about 134 bytes each); a reader that falls behind
// is told how many it lost and carries on from the oldest held.
// Thread-safe (its own lock, never held while doing I/O).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

#include "kvcache/proto/frame.h"

namespace strata::kvcache {

class EventLog {
 public:
  // `since` beyond the log's end (a cursor from before a restart): `lost` is this.
  static constexpr uint64_t kLostUnknown = ~uint64_t{0};

  explicit EventLog(size_t capacity = 16384) : capacity_(capacity) {}

  void Add(proto::EventKind kind, std::string_view key, std::string_view parent = {});
  // Events from `since` on, at most `max_events`; turns recording on.
  proto::EventsResponse Read(uint64_t since, uint32_t max_events);
  uint64_t next() const;

 private:
  struct Slot {
    uint8_t kind = 0, key_len = 0, parent_len = 0;
    char key[proto::kMaxKeyBytes];
    char parent[proto::kMaxKeyBytes];
  };

  mutable std::mutex mu_;
  const size_t capacity_;
  bool on_ = false;
  std::vector<Slot> ring_;  // sized once recording starts
  uint64_t next_ = 0;       // sequence number of the next event
};

}  // namespace strata::kvcache

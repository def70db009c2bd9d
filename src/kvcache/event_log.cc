#include "kvcache/event_log.h"

#include <algorithm>

namespace strata::kvcache {

void EventLog::Add(proto::EventKind kind, std::string_view key, std::string_view parent) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!on_) return;
  Slot& s = ring_[next_ % capacity_];
  s.kind = static_cast<uint8_t>(kind);
  s.key_len = static_cast<uint8_t>(std::min(key.size(), proto::kMaxKeyBytes));
  key.copy(s.key, s.key_len);  // (memcpy from an empty view's null data would be UB)
  s.parent_len = static_cast<uint8_t>(std::min(parent.size(), proto::kMaxKeyBytes));
  parent.copy(s.parent, s.parent_len);
  ++next_;
}

proto::EventsResponse EventLog::Read(uint64_t since, uint32_t max_events) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!on_) {
    on_ = true;
    ring_.resize(capacity_);
  }
  proto::EventsResponse r;
  const uint64_t first = next_ > capacity_ ? next_ - capacity_ : 0;
  uint64_t at = since;
  if (since > next_) {
    r.lost = kLostUnknown;
    at = first;
  } else if (since < first) {
    r.lost = first - since;
    at = first;
  }
  const uint64_t end = std::min<uint64_t>(next_, at + std::min(max_events, proto::kMaxBatchItems));
  r.events.reserve(end - at);
  for (uint64_t q = at; q < end; ++q) {
    const Slot& s = ring_[q % capacity_];
    r.events.push_back({static_cast<proto::EventKind>(s.kind), std::string(s.key, s.key_len),
                        std::string(s.parent, s.parent_len)});
  }
  r.next = end;
  return r;
}

uint64_t EventLog::next() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_;
}

}  // namespace strata::kvcache

#include "kvcache/auth_throttle.h"

#include <algorithm>

namespace strata::kvcache {

bool AuthThrottle::Blocked(std::string_view address, uint64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_address_.find(address);
  return it != by_address_.end() && now_ns < it->second->blocked_until_ns;
}

void AuthThrottle::RecordFailure(std::string_view address, uint64_t now_ns) {
  constexpr uint64_t kMs = 1'000'000;
  std::lock_guard<std::mutex> lock(mu_);
  auto found = by_address_.find(address);
  if (found != by_address_.end()) {
    entries_.splice(entries_.begin(), entries_, found->second);
  } else {
    if (options_.max_addresses == 0) return;
    if (by_address_.size() >= options_.max_addresses) {
      by_address_.erase(entries_.back().address);
      entries_.pop_back();
    }
    entries_.push_front(Entry{.address = std::string(address)});
    by_address_.emplace(entries_.front().address, entries_.begin());
  }
  Entry& e = entries_.front();
  const uint64_t window_ns = uint64_t{options_.window_ms} * kMs;
  // Quiet for longer than the longest back-off plus a window: start over.
  if (e.backoffs > 0 &&
      now_ns - e.last_failure_ns > uint64_t{options_.backoff_max_ms} * kMs + window_ns) {
    e.backoffs = 0;
  }
  if (e.failures == 0 || now_ns - e.window_start_ns > window_ns) {
    e.window_start_ns = now_ns;
    e.failures = 0;
  }
  e.last_failure_ns = now_ns;
  if (++e.failures < options_.failures) return;
  uint64_t period_ms = uint64_t{options_.backoff_initial_ms} << std::min<uint32_t>(e.backoffs, 30);
  period_ms = std::min<uint64_t>(period_ms, options_.backoff_max_ms);
  e.blocked_until_ns = now_ns + period_ms * kMs;
  ++e.backoffs;
  e.failures = 0;
}

size_t AuthThrottle::addresses() {
  std::lock_guard<std::mutex> lock(mu_);
  return by_address_.size();
}

}  // namespace strata::kvcache

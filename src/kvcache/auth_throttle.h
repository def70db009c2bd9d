// Back-off for failed KV AUTHs, per source address: after `failures` failed
// AUTHs within `window_ms`, HELLO and AUTH from that address are refused at
// once (DENIED, connection closed) for a period that doubles with each
// further back-off, from backoff_initial_ms up to backoff_max_ms. Refusing
// costs no waiting: no worker thread sleeps on an attacker.
//
// The table is bounded (max_addresses); when full, the address whose last
// failure is the oldest is forgotten. An attacker with more addresses than
// that can flush it; the per-connection limit (ServerOptions) still holds.
#pragma once

#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace strata::kvcache {

struct AuthThrottleOptions {
  uint32_t failures = 10;  // within window_ms, before a back-off
  uint32_t window_ms = 60'000;
  uint32_t backoff_initial_ms = 1'000;
  uint32_t backoff_max_ms = 300'000;
  size_t max_addresses = 16384;
};

class AuthThrottle {
 public:
  explicit AuthThrottle(AuthThrottleOptions options) : options_(options) {}

  // True while `address` is backing off.
  bool Blocked(std::string_view address, uint64_t now_ns);
  // Counts one failed AUTH; may start a back-off.
  void RecordFailure(std::string_view address, uint64_t now_ns);
  size_t addresses();

 private:
  struct Entry {
    std::string address;
    uint64_t window_start_ns = 0;
    uint64_t last_failure_ns = 0;
    uint64_t blocked_until_ns = 0;
    uint32_t failures = 0;  // in the current window
    uint32_t backoffs = 0;  // so far, for the next period's length
  };

  AuthThrottleOptions options_;
  std::mutex mu_;
  std::list<Entry> entries_;  // most recent failure first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> by_address_;
};

}  // namespace strata::kvcache

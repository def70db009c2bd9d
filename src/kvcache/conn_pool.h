// The KV server's connections: idle ones are parked in one epoll set
// (EPOLLONESHOT); a fixed pool of worker threads waits on it, and the worker
// that a readable connection wakes serves it (a Session turn: the frames
// available) and parks it again — one thread wake-up per request, as with a
// thread per connection. A reaper thread closes parked connections whose
// deadline passed: the deadline to authenticate, the idle timeout of
// authenticated ones. Caps (in all, per source address) are checked here;
// the mid-frame stall timeout is the transport's I/O timeout.
// Internal to the server.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "kvcache/server.h"
#include "kvcache/session.h"
#include "kvcache/transport.h"

namespace strata::kvcache {

class ConnectionPool {
 public:
  explicit ConnectionPool(const ServerContext* ctx);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Starts the reaper and the workers (through ctx->options.thread_factory).
  // Fewer workers than asked when thread creation fails (logged); an error
  // when not even the reaper and one worker could start.
  Status Start();
  // Takes an accepted connection: parks it, or closes it at once when over a cap.
  void Add(std::unique_ptr<Connection> conn);
  // Closes every connection and joins the threads. Idempotent.
  void Stop();
  ServerStats stats() const;

 private:
  enum class State { kParked, kServing };
  struct Conn {
    uint64_t id = 0;
    std::unique_ptr<Connection> conn;
    std::unique_ptr<Session> session;
    std::string address;
    int fd = -1;
    int64_t auth_deadline_ns = 0;  // steady clock
    int64_t deadline_ns = 0;       // while parked; 0: none
    State state = State::kParked;
  };
  using ConnPtr = std::unique_ptr<Conn>;

  void ReapLoop();
  void WorkLoop();
  Result<Session::Turn> Serve(Conn* c);  // one turn, exceptions caught
  void AfterTurn(Conn* c, const Result<Session::Turn>& turn);
  // mu_ held. Parks c until readable or its deadline; false if it cannot be.
  bool ParkLocked(Conn* c, int64_t deadline_ns);
  // mu_ held. Unregisters c; the caller destroys it outside the lock.
  ConnPtr RemoveLocked(Conn* c);
  void LogClose(const Conn& c, const Status& why);  // rate-limited

  const ServerContext* ctx_;
  int epoll_fd_ = -1;
  int stop_fd_ = -1;  // eventfd, level-triggered in the set: readable once stopping
  std::thread reaper_;
  std::vector<std::thread> workers_;

  mutable std::mutex mu_;
  std::condition_variable reaper_cv_;  // a new earliest deadline, or Stop
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, ConnPtr> conns_;
  std::unordered_map<std::string, size_t> per_address_;
  std::set<std::pair<int64_t, uint64_t>> deadlines_;  // (deadline, id) of parked connections
  int64_t reaper_wakes_at_ns_ = 0;                    // 0: waiting without a deadline
  size_t parked_ = 0;
  uint64_t refused_ = 0, auth_timeouts_ = 0, idle_timeouts_ = 0;
  int64_t last_refusal_log_ns_ = 0;

  std::mutex log_mu_;
  int64_t log_second_ = 0;
  int log_lines_ = 0;
  uint64_t log_suppressed_ = 0;
};

}  // namespace strata::kvcache

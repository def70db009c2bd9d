// The KV server's connections: a poller thread parks idle connections in
// epoll; a fixed pool of worker threads serves readable ones (a Session turn:
// the frames available), then parks them again. Caps (global and per source
// address), the deadline to authenticate, the idle timeout of authenticated
// connections and the mid-frame stall timeout are enforced here.
// Internal to the server.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
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

  // Starts the poller and the workers (through ctx->options.thread_factory).
  // Fewer workers than asked when thread creation fails (logged); an error
  // when not even the poller and one worker could start.
  Status Start();
  // Takes an accepted connection: parks it, or closes it at once when over a cap.
  void Add(std::unique_ptr<Connection> conn);
  // Closes every connection and joins the threads. Idempotent.
  void Stop();
  ServerStats stats() const;

 private:
  enum class State { kParked, kQueued, kServing };
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

  void PollLoop();
  void WorkLoop();
  Result<Session::Turn> Serve(Conn* c);  // one turn, exceptions caught
  void AfterTurn(Conn* c, const Result<Session::Turn>& turn);
  // mu_ held. Parks c until readable or its deadline; false if it cannot be.
  bool ParkLocked(Conn* c, int64_t deadline_ns);
  // mu_ held. Unregisters c; the caller destroys it outside the lock.
  ConnPtr RemoveLocked(Conn* c);
  void WakePollerLocked(int64_t deadline_ns);
  void LogClose(const Conn& c, const Status& why);  // rate-limited

  const ServerContext* ctx_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: a new earlier deadline, or Stop
  std::thread poller_;
  std::vector<std::thread> workers_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, ConnPtr> conns_;
  std::unordered_map<std::string, size_t> per_address_;
  std::set<std::pair<int64_t, uint64_t>> deadlines_;  // (deadline, id) of parked connections
  std::deque<Conn*> queue_;                           // readable, waiting for a worker
  int64_t poller_wakes_at_ns_ = 0;                    // 0: waiting without a deadline
  size_t parked_ = 0;
  uint64_t refused_ = 0, auth_timeouts_ = 0, idle_timeouts_ = 0;
  int64_t last_refusal_log_ns_ = 0;

  std::mutex log_mu_;
  int64_t log_second_ = 0;
  int log_lines_ = 0;
  uint64_t log_suppressed_ = 0;
};

}  // namespace strata::kvcache

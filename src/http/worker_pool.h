// The HTTP server's threads (internal to src/http). One pool runs both kinds
// of work: leading an event loop (waiting on its epoll set and serving small
// requests there) and serving connections queued for a worker. The pool
// decides which thread does what and how many run; the server (PoolHost)
// does the work itself. The pool never looks inside a Loop or a Connection.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/thread_wait.h"

namespace strata::http {

struct Loop;        // an event loop (server.cc)
struct Connection;  // a client connection (server.cc)

// The work the pool's threads do, done by the server.
class PoolHost {
 public:
  // Leads `loop` while WorkerPool::Leads(loop) holds on this thread; returns
  // once it handed the loop on and finished the request that made it wait,
  // or when the server stops.
  virtual void Lead(Loop& loop) = 0;
  // Serves a connection taken from the queue (parks or re-queues it after).
  virtual void Serve(std::shared_ptr<Connection> conn) = 0;

 protected:
  ~PoolHost() = default;
};

class WorkerPool final : private ThreadWaitObserver {
 public:
  // worker_threads serve queued connections at once, up to
  // max_worker_threads while some of them wait (on a client that does not
  // read, a helper's next piece) or turned bulk; on top of those, a thread
  // leads each loop, and one per loop is held in reserve for hand-offs.
  WorkerPool(PoolHost& host, int worker_threads, int max_worker_threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts the base threads; each loop takes the next free one.
  void Start(const std::vector<Loop*>& loops);
  // Drops what is queued and joins every thread (a leader leaves its loop
  // once the server's stop signal reaches it). Idempotent.
  void Stop();

  // A connection for the next free worker (dropped once stopping).
  void Enqueue(std::shared_ptr<Connection> conn);

  // True while this thread leads `loop` (false once it handed it on).
  static bool Leads(const Loop& loop) { return tls_leading_ == &loop; }
  // True while this thread leads a loop.
  static bool Leading() { return tls_leading_ != nullptr; }
  // The request this thread serves turned bulk (ThreadWaitObserver::TurnsBulk).
  static bool TurnedBulk() { return tls_bulk_; }
  // The pool used its reserve of threads for hand-offs: a leader serving
  // inline could find no thread to take its loop on, so it serves nothing.
  bool AtReserve() const {
    return threads_now_.load(std::memory_order_relaxed) >= max_ + loop_count_;
  }

 private:
  // ThreadWaitObserver: a leader hands its loop on first, and is a worker
  // from then on.
  void WaitBegins() override;
  void WaitEnds() override;
  void TurnsBulk() override;

  void Work();
  void StartWorker();
  int RunningLocked() const;
  bool CanTakeLocked() const;
  bool WakeOrGrowLocked(int max_threads);
  void AddThreadsLocked(int n);
  int WakeLocked();
  bool WakeWorkerLocked();
  bool HandOverLocked();
  void StepAside(int WorkerPool::*count);

  PoolHost& host_;
  const int workers_wanted_;  // worker_threads
  int base_ = 0;              // worker_threads + one leader per loop
  int max_ = 0;               // max_worker_threads + one leader per loop
  int loop_count_ = 0;
  int base_nice_ = 0;         // the workers' priority (the starting thread's)

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Connection>> queue_;
  std::vector<Loop*> leaderless_;  // loops waiting for a leader
  std::unordered_map<std::thread::id, std::thread> threads_by_id_;
  std::vector<std::thread::id> finished_;  // ended, to be joined
  std::atomic<int> threads_now_{0};   // threads_, for a look without mu_
  // Under mu_: threads_ alive, idle_ of them waiting for work (signaled_ of
  // those woken and not yet up), starting_ not yet in Work
  // (starting_claimed_ of those meant for a wake that found no idle thread),
  // waiting_ in a ScopedWait, bulk_ turned bulk, leading_ leading a loop.
  int threads_ = 0;
  int idle_ = 0;
  int signaled_ = 0;
  int starting_ = 0;
  int starting_claimed_ = 0;
  int waiting_ = 0;
  int bulk_ = 0;
  int leading_ = 0;
  bool stopping_ = false;

  static thread_local bool tls_bulk_;      // this worker's request turned bulk
  static thread_local Loop* tls_leading_;  // the loop this thread leads
};

}  // namespace strata::http

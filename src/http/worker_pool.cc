#include "http/worker_pool.h"

#include <algorithm>
#include <chrono>
#include <system_error>

#include "common/log.h"
#include "common/thread_priority.h"

namespace strata::http {

namespace {
// A worker thread beyond the pool's base ends after this long without work.
constexpr auto kSpareWorkerIdle = std::chrono::seconds(10);
}  // namespace

thread_local bool WorkerPool::tls_bulk_ = false;
thread_local Loop* WorkerPool::tls_leading_ = nullptr;

WorkerPool::WorkerPool(PoolHost& host, int worker_threads, int max_worker_threads)
    : host_(host),
      workers_wanted_(std::max(worker_threads, 1)),
      max_(std::max(max_worker_threads, workers_wanted_)) {}

WorkerPool::~WorkerPool() { Stop(); }

void WorkerPool::Start(const std::vector<Loop*>& loops) {
  loop_count_ = static_cast<int>(loops.size());
  base_ = workers_wanted_ + loop_count_;
  max_ += loop_count_;
  base_nice_ = ThisThreadNice();
  {
    std::lock_guard lock(mu_);
    AddThreadsLocked(base_);
    starting_ = base_;
    leaderless_ = loops;
  }
  for (int i = 0; i < base_; ++i) StartWorker();
}

void WorkerPool::Stop() {
  std::unordered_map<std::thread::id, std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
    leaderless_.clear();
    threads.swap(threads_by_id_);  // no thread is added once stopping_ is set
  }
  cv_.notify_all();
  for (auto& [id, t] : threads) t.join();
}

void WorkerPool::Enqueue(std::shared_ptr<Connection> conn) {
  std::unique_lock lock(mu_);
  if (stopping_) return;
  queue_.push_back(std::move(conn));
  if (!WakeWorkerLocked()) return;
  lock.unlock();
  StartWorker();
}

// The others (not idle, waiting, bulk or leading) are running, and a
// connection is taken from the queue only while fewer than worker_threads
// run: a thread that waits is replaced by another (up to max_worker_threads
// plus the leaders), so the requests behind it are not held up by a reader
// that does not read. A loop without a leader takes the next free thread.
int WorkerPool::RunningLocked() const {
  return threads_ - (idle_ - signaled_) - (starting_ - starting_claimed_) - waiting_ - bulk_ -
         leading_;
}

bool WorkerPool::CanTakeLocked() const {
  // Called by an idle thread: it is not among the running.
  return !queue_.empty() && threads_ - idle_ - (starting_ - starting_claimed_) - waiting_ -
                                    bulk_ - leading_ <
                                workers_wanted_;
}

// Wakes an idle thread, or says a new one is wanted: threads_ counts it
// already, and the caller starts it with StartWorker once it has let go of
// mu_ (creating a thread takes the process's memory-map lock, which page
// faults elsewhere hold: not a wait for everyone queued behind mu_).
bool WorkerPool::WakeOrGrowLocked(int max_threads) {
  if (idle_ > signaled_) {
    ++signaled_;
    cv_.notify_one();
    return false;
  }
  // A thread on its way to Work takes what waits once there: at start-up,
  // each leader's wake for the next loop is met by the pool's threads still
  // starting, not by a spare thread beyond them.
  if (starting_ > starting_claimed_) {
    ++starting_claimed_;
    return false;
  }
  if (threads_ >= max_threads) return false;
  AddThreadsLocked(1);
  ++starting_;
  ++starting_claimed_;
  return true;
}

void WorkerPool::AddThreadsLocked(int n) {
  threads_ += n;
  threads_now_.store(threads_, std::memory_order_relaxed);
}

// Threads to start (after letting go of mu_) for what waits: a loop without
// a leader, queued connections.
int WorkerPool::WakeLocked() {
  int starts = 0;
  if (!stopping_ && !leaderless_.empty() && WakeOrGrowLocked(max_ + loop_count_)) ++starts;
  if (WakeWorkerLocked()) ++starts;
  return starts;
}

// Work is queued: a thread for it, if one may run.
bool WorkerPool::WakeWorkerLocked() {
  if (stopping_ || queue_.empty() || RunningLocked() >= workers_wanted_) return false;
  return WakeOrGrowLocked(max_);
}

// On a leader about to wait or turn bulk: its loop goes to another thread,
// past the pool's cap by up to one thread per loop (a loop without a leader
// accepts, sweeps and serves nothing). Once that reserve is used up the loops
// serve nothing themselves (AtReserve), so they keep their leaders.
bool WorkerPool::HandOverLocked() {
  Loop* loop = tls_leading_;
  tls_leading_ = nullptr;
  --leading_;
  if (stopping_) return false;
  leaderless_.push_back(loop);
  return WakeOrGrowLocked(max_ + loop_count_);
}

// Starts a worker threads_ already counts (not holding mu_), and joins those
// that ended.
void WorkerPool::StartWorker() {
  std::thread t;
  try {
    t = std::thread([this] {
      NameThisThread("http-worker");
      // A thread inherits its creator's priority: one started by a thread
      // lowered for bulk work (a retiring one) starts at the pool's own.
      if (ThisThreadNice() != base_nice_) SetThisThreadNice(base_nice_);
      SetThreadWaitObserver(this);
      Work();
    });
  } catch (const std::system_error& e) {  // out of threads (pids cgroup, RLIMIT_NPROC)
    STRATA_LOG("http: could not start a worker thread: %s", e.what());
    std::lock_guard lock(mu_);
    AddThreadsLocked(-1);
    --starting_;
    starting_claimed_ = std::min(starting_claimed_, starting_);
    return;
  }
  std::vector<std::thread> ended;
  std::unique_lock lock(mu_);
  if (stopping_) {  // Stop took the list already: this one is joined here
    lock.unlock();
    t.join();
    return;
  }
  const std::thread::id self = std::this_thread::get_id();
  for (auto id = finished_.begin(); id != finished_.end();) {
    auto it = *id == self ? threads_by_id_.end() : threads_by_id_.find(*id);
    if (it == threads_by_id_.end()) {  // this thread, or one not yet listed: later
      ++id;
      continue;
    }
    ended.push_back(std::move(it->second));
    threads_by_id_.erase(it);
    id = finished_.erase(id);
  }
  threads_by_id_.emplace(t.get_id(), std::move(t));
  lock.unlock();
  for (auto& e : ended) e.join();  // they have left mu_ for good
}

// This thread stops counting as running (it waits, or turned bulk: `count`
// says which): a leader hands its loop on, and another thread may take the
// next queued connection.
void WorkerPool::StepAside(int WorkerPool::*count) {
  std::unique_lock lock(mu_);
  int starts = tls_leading_ != nullptr && HandOverLocked() ? 1 : 0;
  ++(this->*count);
  if (WakeWorkerLocked()) ++starts;
  lock.unlock();
  while (starts-- > 0) StartWorker();
}

void WorkerPool::WaitBegins() { StepAside(&WorkerPool::waiting_); }

void WorkerPool::WaitEnds() {
  std::lock_guard lock(mu_);
  --waiting_;
}

// The worker's request is bulk bytes from now on, at a lowered priority: it
// no longer counts as running, and the thread ends with the request.
void WorkerPool::TurnsBulk() {
  tls_bulk_ = true;
  StepAside(&WorkerPool::bulk_);
}

void WorkerPool::Work() {
  std::unique_lock lock(mu_);
  --starting_;
  if (starting_claimed_ > 0) --starting_claimed_;  // like a signaled idle thread's wake
  while (true) {
    ++idle_;
    bool expired = false;
    while (!stopping_ && leaderless_.empty() && !CanTakeLocked()) {
      if (threads_ > base_) {
        expired = cv_.wait_for(lock, kSpareWorkerIdle) == std::cv_status::timeout;
      } else {
        cv_.wait(lock);
      }
      if (signaled_ > 0) --signaled_;
      if (expired && leaderless_.empty() && !CanTakeLocked() && threads_ > base_) break;
      expired = false;
    }
    --idle_;
    if (stopping_ || expired) {
      AddThreadsLocked(-1);
      finished_.push_back(std::this_thread::get_id());
      return;
    }
    if (!leaderless_.empty()) {
      Loop* loop = leaderless_.back();
      leaderless_.pop_back();
      ++leading_;
      int starts = WakeLocked();  // the wake may have been meant for other work
      lock.unlock();
      while (starts-- > 0) StartWorker();
      tls_leading_ = loop;
      host_.Lead(*loop);  // back when it handed the loop on and its request is done
      if (tls_leading_ == loop) {  // stopping: nobody takes it on
        tls_leading_ = nullptr;
        std::lock_guard relock(mu_);
        --leading_;
      }
    } else {
      std::shared_ptr<Connection> conn = std::move(queue_.front());
      queue_.pop_front();
      const bool start = WakeWorkerLocked();  // more queued: another thread, if one may run
      lock.unlock();
      if (start) StartWorker();
      host_.Serve(std::move(conn));
    }
    const bool was_bulk = tls_bulk_;  // the request turned bulk (TurnsBulk) and ended
    bool retire = false;
    if (was_bulk) {
      tls_bulk_ = false;
      retire = !EndThisThreadBulk();  // a priority it cannot raise back: this thread ends
    }
    lock.lock();
    if (was_bulk) --bulk_;
    if (retire) {
      AddThreadsLocked(-1);
      int replace = WakeLocked();
      lock.unlock();
      // Listed as ended only once done with StartWorker, so no thread ever
      // joins one that is itself joining.
      while (replace-- > 0) StartWorker();
      lock.lock();
      finished_.push_back(std::this_thread::get_id());
      return;
    }
  }
}

}  // namespace strata::http

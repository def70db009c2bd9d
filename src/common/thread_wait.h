// How a worker thread tells its pool what it is doing (http/server.cc):
// - A thread about to wait for something other than a core (its client
//   draining a send buffer, a body still arriving, a helper thread's next
//   piece) says so through a ScopedWait. The pool counts it as not running
//   meanwhile and lets another thread take queued work, the way a fork-join
//   pool treats a managed blocker.
// - A thread whose request has become bulk bytes (a large GET past its first
//   span) calls TurnThisThreadBulk: it lowers its own CPU priority
//   (common/thread_priority.h) for the rest of the request, so new requests
//   on busy cores go first, and stops counting as running. When the request
//   ends the pool calls EndThisThreadBulk and the priority goes back. The
//   priority is lowered only where the process may raise it again
//   (CAP_SYS_NICE, or RLIMIT_NICE: systemd's LimitNICE=); elsewhere only the
//   pool's count changes. (Should the restore fail, the thread ends and the
//   pool replaces it.)
// On threads with no observer (not a pool's) both do nothing.
#pragma once

namespace strata {

class ThreadWaitObserver {
 public:
  virtual void WaitBegins() = 0;
  virtual void WaitEnds() = 0;
  // The thread is to do bulk work until its request ends, then retire.
  virtual void TurnsBulk() = 0;

 protected:
  ~ThreadWaitObserver() = default;
};

// The calling thread's observer from now on (nullptr: none).
void SetThreadWaitObserver(ThreadWaitObserver* observer);

// See above. True if the thread turned bulk (it has an observer and had not
// already); false changes nothing.
bool TurnThisThreadBulk();
// For the pool, once the bulk request ended: true if the thread is back at
// its priority (it may serve on), false if it must end.
bool EndThisThreadBulk();

// For a scope in which a thread that turned bulk holds what other requests
// wait on (a metadata commit: RocksDB's group leader writes and syncs the log
// for the commits that joined it): the thread runs at the priority it had
// before it turned bulk, and steps back again after. Does nothing on a thread
// that is not bulk, or whose priority was not lowered.
class ScopedFullPriority {
 public:
  ScopedFullPriority();
  ~ScopedFullPriority();
  ScopedFullPriority(const ScopedFullPriority&) = delete;
  ScopedFullPriority& operator=(const ScopedFullPriority&) = delete;

 private:
  int lowered_ = 0;
  bool raised_ = false;
};

class ScopedWait {
 public:
  ScopedWait();
  ~ScopedWait();
  ScopedWait(const ScopedWait&) = delete;
  ScopedWait& operator=(const ScopedWait&) = delete;

 private:
  ThreadWaitObserver* observer_;
};

}  // namespace strata

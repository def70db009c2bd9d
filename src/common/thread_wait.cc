#include "common/thread_wait.h"

#include "common/thread_priority.h"

namespace strata {
namespace {
thread_local ThreadWaitObserver* tls_observer = nullptr;
thread_local bool tls_bulk = false;
thread_local int tls_nice_before = 0;
}  // namespace

void SetThreadWaitObserver(ThreadWaitObserver* observer) {
  tls_observer = observer;
  tls_bulk = false;
}

bool TurnThisThreadBulk() {
  if (!tls_observer || tls_bulk) return false;
  tls_bulk = true;
  tls_nice_before = ThisThreadNice();
  tls_observer->TurnsBulk();  // first: a thread it starts must not inherit the lowered priority
  // Lowered only where the priority can go back afterwards: a thread per bulk
  // request would otherwise end and be replaced, and creating and ending
  // threads contends for the process's memory-map lock (measured:
  // docs/performance.md). Elsewhere the pool still knows the request is bulk.
  if (CanRestoreNice()) LowerThisThreadPriority();
  return true;
}

bool EndThisThreadBulk() {
  tls_bulk = false;
  return ThisThreadNice() == tls_nice_before || SetThisThreadNice(tls_nice_before);
}

ScopedFullPriority::ScopedFullPriority() {
  if (!tls_bulk) return;
  const int now = ThisThreadNice();
  if (now == tls_nice_before || !SetThisThreadNice(tls_nice_before)) return;
  lowered_ = now;
  raised_ = true;
}

ScopedFullPriority::~ScopedFullPriority() {
  if (raised_) SetThisThreadNice(lowered_);  // lowering needs no privilege
}

// A bulk thread is no longer counted as running: its waits change nothing.
ScopedWait::ScopedWait() : observer_(tls_bulk ? nullptr : tls_observer) {
  if (observer_) observer_->WaitBegins();
}

ScopedWait::~ScopedWait() {
  if (observer_) observer_->WaitEnds();
}

}  // namespace strata

#include "common/thread_priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace strata {
namespace {
std::atomic<int> g_bulk_nice{kDefaultBulkNice};
}  // namespace

void SetBulkNice(int increment) { g_bulk_nice.store(increment < 0 ? 0 : increment); }
int BulkNice() { return g_bulk_nice.load(std::memory_order_relaxed); }

void LowerThisThreadPriority(int increment) {
  if (increment <= 0) return;
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);  // -1 is a valid nice value: check errno
  if (errno != 0) return;
  ::setpriority(PRIO_PROCESS, tid, now + increment > 19 ? 19 : now + increment);
}

}  // namespace strata

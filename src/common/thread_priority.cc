#include "common/thread_priority.h"

#include <pthread.h>
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

void NameThisThread(const char* name) {
  char cut[16] = {};
  for (int i = 0; i < 15 && name[i] != '\0'; ++i) cut[i] = name[i];
  ::pthread_setname_np(::pthread_self(), cut);  // ERANGE only past 15: cut above
}

}  // namespace strata

#include "common/thread_priority.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

namespace strata {
namespace {
std::atomic<int> g_bulk_nice{kDefaultBulkNice};

bool ReadThisThreadNice(int* nice) {
  errno = 0;
  *nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)));
  return errno == 0;  // -1 is a valid nice value: errno tells
}
}  // namespace

void SetBulkNice(int increment) { g_bulk_nice.store(increment < 0 ? 0 : increment); }
int BulkNice() { return g_bulk_nice.load(std::memory_order_relaxed); }

void LowerThisThreadPriority(int increment) {
  int now = 0;
  if (increment <= 0 || !ReadThisThreadNice(&now)) return;
  SetThisThreadNice(now + increment > 19 ? 19 : now + increment);
}

int ThisThreadNice() {
  int now = 0;
  return ReadThisThreadNice(&now) ? now : 0;
}

bool SetThisThreadNice(int nice) {
  return ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), nice) == 0;
}

bool CanRestoreNice() {
  static const bool can = [] {
    rlimit r{};  // nice may go down to 20 - rlim_cur (RLIM_INFINITY: any)
    if (::getrlimit(RLIMIT_NICE, &r) == 0 && (r.rlim_cur == RLIM_INFINITY || r.rlim_cur >= 20)) {
      return true;
    }
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("CapEff:", 0) != 0) continue;
      unsigned long long caps = std::strtoull(line.c_str() + 7, nullptr, 16);
      return ((caps >> 23) & 1) != 0;  // CAP_SYS_NICE
    }
    return false;
  }();
  return can;
}

void NameThisThread(const char* name) {
  char cut[16] = {};
  for (int i = 0; i < 15 && name[i] != '\0'; ++i) cut[i] = name[i];
  ::pthread_setname_np(::pthread_self(), cut);  // ERANGE only past 15: cut above
}

}  // namespace strata

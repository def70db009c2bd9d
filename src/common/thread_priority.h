// CPU priority of bulk work. Linux applies nice values per thread, so a helper
// that only moves bulk bytes (a large GET's read-ahead, a large PUT's MD5) can
// step back for the requests that wait on a core: with the cores busy, a small
// request's worker runs first; with them idle, the helper still gets every
// spare cycle (CFS weights, not a cap). docs/performance.md, "mixed".
#pragma once

namespace strata {

// The nice increment of bulk helper threads: CFS weight 1024 -> 110 at +10
// (`strata server --bulk-nice`; set once at start-up; 0: none).
inline constexpr int kDefaultBulkNice = 10;
void SetBulkNice(int increment);
int BulkNice();

// Adds `increment` (default: BulkNice()) to the calling thread's nice value
// (best effort: an error leaves the priority as it was). Only ever lowers the
// priority, so it needs no privilege; a thread cannot raise it back, so call
// it only on threads that end with their bulk work.
void LowerThisThreadPriority(int increment);
inline void LowerThisThreadPriority() { LowerThisThreadPriority(BulkNice()); }

// The calling thread's nice value (0 where it cannot be read).
int ThisThreadNice();
// Sets the calling thread's nice value. Raising the priority (a lower value)
// needs CAP_SYS_NICE or an RLIMIT_NICE that allows it: false where the
// process has neither, the priority then left as it was.
bool SetThisThreadNice(int nice);
// Whether this process may set a thread's nice value back to 0 after raising
// it: CAP_SYS_NICE, or an RLIMIT_NICE of 20 or more.
bool CanRestoreNice();

// Names the calling thread (`top -H`, `perf`, gdb, /proc/PID/task/TID/comm)
// after the work it does; Linux keeps the first 15 characters.
void NameThisThread(const char* name);

}  // namespace strata

// STRATA_CHECK: an invariant that holds in every build. `assert` is compiled
// out of the RelWithDebInfo/Release builds we test and ship, so a broken
// invariant there would run on with wrong state (for storage code: wrong
// bytes on disk). STRATA_CHECK prints where and why, then aborts.
//
// Use it for programmer errors only (a caller broke a documented contract,
// state that cannot happen). Anything that data from outside (disk, network,
// options) can cause is a Status (Corruption, InvalidArgument, Internal ...)
// returned to a caller that can recover.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace strata {

[[noreturn]] inline void CheckFailed(const char* file, int line, const char* condition,
                                     const std::string& detail) {
  std::fprintf(stderr, "%s:%d: STRATA_CHECK(%s) failed: %s\n", file, line, condition,
               detail.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace strata

// `detail` is anything a std::string can be built from; it is evaluated only
// when the check fails.
#define STRATA_CHECK(condition, detail)                                     \
  do {                                                                      \
    if (!(condition)) [[unlikely]] {                                        \
      ::strata::CheckFailed(__FILE__, __LINE__, #condition, (detail));      \
    }                                                                       \
  } while (0)

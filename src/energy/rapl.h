// Intel/AMD RAPL energy counters under /sys/class/powercap, read through the
// io seam (so tests give it a fake sysfs tree). The package domains
// ("intel-rapl:N", not their "intel-rapl:N:M" subzones, which the package
// already contains) are summed; each counter's wraparound at
// max_energy_range_uj is undone, so Joules() grows for as long as it is
// sampled at least once per wrap period (tens of minutes at full power).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "io/file_system.h"

namespace strata::energy {

class RaplReader {
 public:
  // Null when `root` holds no readable package domain (no RAPL, or its
  // counters are readable by root only, as many kernels make them).
  static std::unique_ptr<RaplReader> Open(io::FileSystem* fs, std::string root);

  // Joules counted by every package domain since Open (thread-safe). An
  // error if a counter can no longer be read.
  Result<double> Joules();
  // "intel-rapl:0 (package-0)", ...
  std::vector<std::string> Domains() const;

 private:
  struct Domain {
    std::string dir, name;
    uint64_t range_uj = 0;  // the counter wraps to 0 after this
    uint64_t last_uj = 0;
    uint64_t total_uj = 0;  // since Open, wraps undone
  };
  RaplReader(io::FileSystem* fs) : fs_(fs) {}
  io::FileSystem* fs_;
  std::mutex mu_;
  std::vector<Domain> domains_;
};

// The first line of a small text file (sysfs), without its newline.
Result<std::string> ReadSmallFile(io::FileSystem* fs, const std::string& path);

}  // namespace strata::energy

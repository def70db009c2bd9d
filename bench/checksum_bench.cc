// Micro-benchmark of the S3 additional checksums (common/checksum.h):
// single-threaded throughput over a 1 MiB buffer, one table row per algorithm.
//
//   checksum_bench [seconds_per_algorithm=0.5]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "common/checksum.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBufferSize = 1 << 20;  // 1 MiB

}  // namespace

int main(int argc, char** argv) {
  using strata::ChecksumAlgorithm;
  double seconds = argc > 1 ? std::atof(argv[1]) : 0.5;
  if (seconds <= 0) seconds = 0.5;

  std::string buf(kBufferSize, '\0');
  std::mt19937_64 rng(1);
  for (auto& c : buf) c = static_cast<char>(rng());

  const ChecksumAlgorithm kAlgs[] = {ChecksumAlgorithm::kCrc32, ChecksumAlgorithm::kCrc32c,
                                     ChecksumAlgorithm::kCrc64Nvme, ChecksumAlgorithm::kSha1,
                                     ChecksumAlgorithm::kSha256};
  std::printf("%-10s %10s %12s %10s\n", "algorithm", "buffers", "seconds", "GB/s");
  unsigned sink = 0;
  for (auto alg : kAlgs) {
    auto c = strata::Checksummer::Create(alg);
    // Warm up (page in the buffer, resolve ISA-L dispatch).
    c->Update(buf.data(), buf.size());
    sink += static_cast<unsigned char>(c->Final()[0]);

    uint64_t iters = 0;
    auto start = Clock::now();
    std::chrono::duration<double> elapsed{};
    do {
      for (int i = 0; i < 8; ++i) {
        c->Update(buf.data(), buf.size());
        sink += static_cast<unsigned char>(c->Final()[0]);
      }
      iters += 8;
      elapsed = Clock::now() - start;
    } while (elapsed.count() < seconds);
    double gbps = static_cast<double>(iters * kBufferSize) / elapsed.count() / 1e9;
    std::printf("%-10s %10llu %12.3f %10.2f\n", std::string(strata::ChecksumName(alg)).c_str(),
                static_cast<unsigned long long>(iters), elapsed.count(), gbps);
  }
  std::printf("(1 MiB buffers, one thread, GB = 1e9 bytes; sink %u)\n", sink & 1);
  return 0;
}

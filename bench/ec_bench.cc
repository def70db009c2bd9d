// Micro-benchmark of the erasure code (ec/erasure_code.h): single-threaded
// encode and decode throughput on 1 MiB blocks for a few k+m shapes.
// Throughput counts data bytes (k x block) per second; decode rebuilds m
// shards (the worst case: the first m data shards lost, so every rebuilt
// row needs the full inverse). Median of 5 runs, each about `seconds` long.
//
//   ec_bench [seconds_per_run=0.2]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "ec/erasure_code.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBlock = 1 << 20;  // 1 MiB per shard
constexpr int kRuns = 5;

// Runs `op` repeatedly for about `seconds`; returns data GB/s.
template <typename Op>
double Measure(double seconds, size_t data_bytes, Op op) {
  uint64_t iters = 0;
  auto start = Clock::now();
  std::chrono::duration<double> elapsed{};
  do {
    for (int i = 0; i < 4; ++i) op();
    iters += 4;
    elapsed = Clock::now() - start;
  } while (elapsed.count() < seconds);
  return static_cast<double>(iters * data_bytes) / elapsed.count() / 1e9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 0.2;
  if (seconds <= 0) seconds = 0.2;

  struct Shape {
    int k, m;
  };
  const Shape kShapes[] = {{4, 2}, {8, 4}, {12, 4}};
  std::printf("%-6s %14s %14s\n", "k+m", "encode GB/s", "decode GB/s");
  for (const Shape& sh : kShapes) {
    auto created = strata::ec::ErasureCode::Create(sh.k, sh.m);
    if (!created.ok()) {
      std::fprintf(stderr, "Create(%d,%d): %s\n", sh.k, sh.m,
                   created.status().ToString().c_str());
      return 1;
    }
    const auto& ec = *created;
    const int n = sh.k + sh.m;
    std::vector<std::vector<uint8_t>> bufs(n, std::vector<uint8_t>(kBlock));
    std::vector<uint8_t*> ptrs;
    for (auto& b : bufs) ptrs.push_back(b.data());
    std::mt19937_64 rng(sh.k);
    for (int i = 0; i < sh.k; ++i) {
      for (auto& c : bufs[i]) c = static_cast<uint8_t>(rng());
    }
    std::vector<uint8_t> original0 = bufs[0];
    const size_t data_bytes = static_cast<size_t>(sh.k) * kBlock;

    auto encode = [&] { ec->Encode(kBlock, ptrs.data(), ptrs.data() + sh.k); };
    std::vector<bool> present(n, true);
    for (int i = 0; i < sh.m; ++i) present[i] = false;  // lose the first m data shards
    bool ok = true;
    auto decode = [&] { ok &= ec->Reconstruct(kBlock, ptrs.data(), present).ok(); };

    encode();  // warm up: page in parity, resolve ISA-L dispatch
    decode();
    std::vector<double> enc, dec;
    for (int r = 0; r < kRuns; ++r) {
      enc.push_back(Measure(seconds, data_bytes, encode));
      dec.push_back(Measure(seconds, data_bytes, decode));
    }
    if (!ok || bufs[0] != original0) {
      std::fprintf(stderr, "%d+%d: decode did not rebuild the data\n", sh.k, sh.m);
      return 1;
    }
    char name[16];
    std::snprintf(name, sizeof name, "%d+%d", sh.k, sh.m);
    std::printf("%-6s %14.2f %14.2f\n", name, Median(enc), Median(dec));
  }
  std::printf("(1 MiB shards, one thread, GB/s of data = k x 1 MiB per op, GB = 1e9 bytes,"
              " median of %d; decode rebuilds m lost data shards)\n",
              kRuns);
  return 0;
}

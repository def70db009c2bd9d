#include "kv_index_cases.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kvcache/block_index.h"
#include "net.h"

namespace strata::bench {
namespace {

constexpr size_t kKeyBytes = 36;  // SHA-256 block hash + 4-byte KV-group index
constexpr int kProbe = 1000;

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Block i's key: deterministic, well spread (nothing stored besides the index).
std::string KeyOf(uint64_t i) {
  std::string k(kKeyBytes, '\0');
  for (size_t off = 0; off < kKeyBytes; off += 8) {
    uint64_t v = SplitMix(i * 8 + off);
    std::memcpy(k.data() + off, &v, std::min<size_t>(8, kKeyBytes - off));
  }
  return k;
}

uint64_t RssBytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * 4096;
}

// Median of `reps` timings of fn(), in microseconds.
template <typename Fn>
double MedianUs(int reps, Fn fn) {
  std::vector<double> t;
  t.reserve(reps);
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                    .count());
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

std::string Count(uint64_t n) {
  int e = 0;
  for (uint64_t v = n; v >= 10 && v % 10 == 0; v /= 10) ++e;
  return "1e" + std::to_string(e);
}

}  // namespace

void RunKvIndex(const CaseOptions& opt, uint64_t large_blocks, Report& report) {
  const uint64_t sizes[2] = {10'000, large_blocks};
  Row* each_rows[2];
  for (int s = 0; s < 2; ++s) {
    const uint64_t n = sizes[s];
    const std::string tag = Count(n);
    Row& bytes = report.Add("kv_index_bytes_" + tag, "KV index bytes/block, " + tag +
                                                         " blocks (index accounting / RSS)",
                            Unit::kOpsPerSecond);
    Row& prefix = report.Add("kv_index_lookup1000_" + tag,
                             "KV index LOOKUP 1000 keys, " + tag + " blocks", Unit::kMicroseconds);
    Row& each = report.Add("kv_index_each1000_" + tag,
                           "KV index LOOKUP_EACH 1000 keys, " + tag + " blocks",
                           Unit::kMicroseconds);
    each_rows[s] = &each;
    for (int run = 0; run < opt.runs; ++run) {
      const uint64_t rss0 = RssBytes();
      auto index = std::make_unique<kvcache::BlockIndex>(SplitMix(run));
      // Chains of 64 blocks, like prompts of 64 blocks.
      for (uint64_t i = 0; i < n; ++i) {
        std::string parent = i % 64 == 0 ? std::string() : KeyOf(i - 1);
        index->Insert(KeyOf(i), parent, 2 << 20, i + 1, static_cast<uint32_t>(i), false);
      }
      const double rss_per_block = static_cast<double>(RssBytes() - rss0) / n;
      const double own_per_block = static_cast<double>(index->memory_bytes()) / n;
      report.MeasureRun(bytes, run, opt.runs, [&](int) {
        RunFigure f;
        f.value = rss_per_block;
        f.p50_us = own_per_block;  // shown in the latency columns: accounting vs RSS
        return f;
      });
      // 1000 stored keys of one chain-aligned run (a prompt of 1000 blocks
      // somewhere in the index), probed many times.
      std::vector<std::string> keys;
      const uint64_t start = (SplitMix(run + 7) % (n / 1000)) * 1000;
      for (int k = 0; k < kProbe; ++k) keys.push_back(KeyOf(start + k));
      std::vector<std::string_view> views(keys.begin(), keys.end());
      size_t sink = 0;
      const int reps = n >= 1'000'000 ? 2000 : 5000;
      report.MeasureRun(prefix, run, opt.runs, [&](int) {
        RunFigure f;
        f.value = MedianUs(reps, [&] { sink += index->PrefixLength(views); });
        f.p50_us = f.value;
        return f;
      });
      report.MeasureRun(each, run, opt.runs, [&](int) {
        RunFigure f;
        std::vector<bool> present(kProbe);
        f.value = MedianUs(reps, [&] {
          for (int k = 0; k < kProbe; ++k) present[k] = index->Find(views[k]).has_value();
          sink += present[kProbe - 1];
        });
        if (!present[0] || !present[kProbe - 1]) throw BenchError("index lost a stored key");
        f.p50_us = f.value;
        return f;
      });
      if (sink == 42) std::fputc(' ', stderr);  // keep the loops
    }
  }
  Row& ratio = report.Add("kv_index_each_ratio",
                          "KV index LOOKUP_EACH 1000: " + Count(sizes[1]) + " / 1e4 blocks",
                          Unit::kOpsPerSecond);
  for (size_t r = 0; r < std::min(each_rows[0]->runs.size(), each_rows[1]->runs.size()); ++r) {
    ratio.runs.push_back(each_rows[1]->runs[r] / each_rows[0]->runs[r]);
  }
  report.AddNote("kv_index: bytes rows show RSS growth per block (figure) and the index's own "
                 "accounting (p50 column); LOOKUP_EACH ratio target <= 1.5");
}

}  // namespace strata::bench

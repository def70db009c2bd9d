// Helpers shared by the libFuzzer targets (the *_fuzz.cc files beside the
// code they fuzz; registered in tests/fuzz/CMakeLists.txt): an invariant
// check that crashes so libFuzzer records the input, a small deterministic
// PRNG for fuzz-chosen split points, and a ByteSource that hands out a
// buffer in pieces of those sizes (what a socket does to a request body).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/byte_source.h"

namespace strata::fuzz {

// A violated invariant: print where and abort (libFuzzer saves the input).
#define FUZZ_CHECK(cond)                                                      \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "FUZZ_CHECK failed: %s at %s:%d\n", #cond, __FILE__, \
                   __LINE__);                                                 \
      std::abort();                                                           \
    }                                                                         \
  } while (0)

// xorshift64*: piece sizes from a fuzz-chosen seed, so the fuzzer explores
// split points by mutating one byte.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    s_ ^= s_ >> 12;
    s_ ^= s_ << 25;
    s_ ^= s_ >> 27;
    return s_ * 0x2545F4914F6CDD1Dull;
  }
  // 1..max (max >= 1).
  size_t Size(size_t max) { return 1 + static_cast<size_t>(Next() % max); }

 private:
  uint64_t s_;
};

// Hands out `data` in pieces of at most Rng::Size(max_piece) bytes (never
// more than the caller asked for), then 0 forever.
class SplitSource : public ByteSource {
 public:
  SplitSource(std::string_view data, uint64_t seed, size_t max_piece)
      : data_(data), size_(data.size()), rng_(seed), max_piece_(std::max<size_t>(max_piece, 1)) {}
  Result<size_t> Read(char* buf, size_t n) override {
    size_t k = std::min({n, data_.size(), rng_.Size(max_piece_)});
    if (k > 0) std::memcpy(buf, data_.data(), k);
    data_.remove_prefix(k);
    return k;
  }
  bool exhausted() const { return data_.empty(); }
  size_t consumed() const { return size_ - data_.size(); }

 private:
  std::string_view data_;
  size_t size_;
  Rng rng_;
  size_t max_piece_;
};

// The text up to the next '\n' (consumed with it), or the rest.
inline std::string_view NextLine(std::string_view* in) {
  size_t nl = in->find('\n');
  std::string_view line = in->substr(0, nl);
  in->remove_prefix(nl == std::string_view::npos ? in->size() : nl + 1);
  return line;
}

// "name:value" lines up to the end; names lowercased (as http::MakeRequest
// does), lines without ':' skipped.
inline std::vector<std::pair<std::string, std::string>> HeaderLines(std::string_view in) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!in.empty()) {
    std::string_view line = NextLine(&in);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(line.substr(0, colon));
    for (char& c : name) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    out.emplace_back(std::move(name), std::string(line.substr(colon + 1)));
  }
  return out;
}

// Piece-size limits a control byte picks from: byte-at-a-time up to large.
inline size_t MaxPiece(uint8_t selector) {
  static constexpr size_t kLimits[] = {1, 2, 3, 7, 16, 64, 512, 1 << 20};
  return kLimits[selector % 8];
}

}  // namespace strata::fuzz

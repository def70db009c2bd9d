// Deterministic benchmark data: every object is a window of one endless byte
// stream that repeats with a period of 1 MiB + 4093 bytes. The odd period
// means that a server returning the right bytes from the wrong offset (a
// swapped or repeated 1 MiB block, a wrong range) fails verification, while
// the whole pattern still fits in cache so checking costs one memcmp.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace strata::bench {

class Pattern {
 public:
  static constexpr size_t kPeriod = (1 << 20) + 4093;
  static constexpr size_t kMaxSlice = 1 << 20;

  Pattern() : bytes_(kPeriod + kMaxSlice) {
    uint64_t x = 0x9E3779B97F4A7C15ull;  // xorshift64: fixed seed, so runs agree
    for (size_t i = 0; i < kPeriod; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      bytes_[i] = static_cast<char>(x >> 56);
    }
    // A copy of the start after the end, so any slice up to kMaxSlice is contiguous.
    std::memcpy(bytes_.data() + kPeriod, bytes_.data(), kMaxSlice);
  }

  // Bytes [offset, offset + n) of the stream; n <= kMaxSlice.
  std::string_view Slice(uint64_t offset, size_t n) const {
    return std::string_view(bytes_.data() + offset % kPeriod, n);
  }

  // True if data equals the stream at [offset, offset + n).
  bool Matches(uint64_t offset, const char* data, size_t n) const {
    while (n > 0) {
      size_t step = n < kMaxSlice ? n : kMaxSlice;
      if (std::memcmp(Slice(offset, step).data(), data, step) != 0) return false;
      offset += step;
      data += step;
      n -= step;
    }
    return true;
  }

 private:
  std::vector<char> bytes_;
};

// The one shared instance (built once, about 2 MiB).
inline const Pattern& SharedPattern() {
  static const Pattern pattern;
  return pattern;
}

}  // namespace strata::bench

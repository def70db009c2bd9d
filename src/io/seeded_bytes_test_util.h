// Tests: n deterministic pseudo-random bytes from a seed, so a test can write
// a file and compare every byte it reads back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace strata::io {

inline std::string SeededBytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (char& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

}  // namespace strata::io

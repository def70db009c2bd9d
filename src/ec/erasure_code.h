// Systematic Reed-Solomon erasure coding over byte buffers (ISA-L
// underneath): k data blocks + m parity blocks; any k of the k+m rebuild the
// rest. Pure: no I/O, no allocation on the Encode/Reconstruct path beyond
// what Create sets up. Thread-safe after Create (const methods).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"

namespace strata::ec {

class ErasureCode {
 public:
  // 1 <= k, 0 <= m, k + m <= 32. m == 0 is valid (no parity, nothing to rebuild).
  static Result<std::unique_ptr<ErasureCode>> Create(int k, int m);
  virtual ~ErasureCode() = default;

  virtual int k() const = 0;
  virtual int m() const = 0;

  // Computes the m parity blocks of `block_bytes` each from the k data blocks.
  virtual void Encode(size_t block_bytes, const uint8_t* const* data,
                      uint8_t* const* parity) const = 0;

  // shards: k+m pointers to blocks of `block_bytes` (data first, then
  // parity). present[i] tells which hold valid bytes; the others are
  // rewritten in place with the reconstructed contents, or, with `wanted`,
  // only those the caller needs (wanted[i]: the cost is one pass over the
  // k sources per rebuilt block). InvalidArgument if fewer than k are present.
  virtual Status Reconstruct(size_t block_bytes, uint8_t* const* shards,
                             const std::vector<bool>& present,
                             const std::vector<bool>* wanted = nullptr) const = 0;
};

}  // namespace strata::ec

#include "ec/erasure_code.h"

#include <isa-l/erasure_code.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

namespace strata::ec {
namespace {

constexpr int kMaxShards = 32;
// ec_encode_data takes an int length; longer blocks are processed in slices.
constexpr size_t kMaxSlice = size_t{1} << 30;
// Reconstruct rebuilds at most m rows from k sources, and k * m <= 16 * 16
// when k + m <= 32, so the decode tables fit in a fixed stack buffer.
constexpr int kMaxDecodeCoefs = (kMaxShards / 2) * (kMaxShards / 2);

// Runs ec_encode_data over `len` bytes, in int-sized slices.
void EncodeSlices(size_t len, int k, int rows, unsigned char* g_tbls, unsigned char** src,
                  unsigned char** dst) {
  std::array<unsigned char*, kMaxShards> s{};
  std::array<unsigned char*, kMaxShards> d{};
  for (size_t off = 0; off < len; off += kMaxSlice) {
    const size_t n = std::min(kMaxSlice, len - off);
    for (int i = 0; i < k; ++i) s[i] = src[i] + off;
    for (int i = 0; i < rows; ++i) d[i] = dst[i] + off;
    ec_encode_data(static_cast<int>(n), k, rows, g_tbls, s.data(), d.data());
  }
}

class IsalErasureCode final : public ErasureCode {
 public:
  IsalErasureCode(int k, int m) : k_(k), m_(m), matrix_((k + m) * k), parity_tbls_(32 * k * m) {
    // Rows 0..k-1 are the identity (systematic), rows k..k+m-1 a Cauchy
    // matrix: every k x k submatrix of the whole is invertible, so any k
    // shards rebuild the rest. This matrix defines the stored format.
    gf_gen_cauchy1_matrix(matrix_.data(), k + m, k);
    if (m > 0) ec_init_tables(k, m, matrix_.data() + k * k, parity_tbls_.data());
  }

  int k() const override { return k_; }
  int m() const override { return m_; }

  void Encode(size_t block_bytes, const uint8_t* const* data,
              uint8_t* const* parity) const override {
    if (m_ == 0 || block_bytes == 0) return;
    // ISA-L's API is not const-correct; it only reads the sources and tables.
    EncodeSlices(block_bytes, k_, m_, const_cast<unsigned char*>(parity_tbls_.data()),
                 const_cast<unsigned char**>(data), const_cast<unsigned char**>(parity));
  }

  Status Reconstruct(size_t block_bytes, uint8_t* const* shards, const std::vector<bool>& present,
                     const std::vector<bool>* wanted) const override {
    const int n = k_ + m_;
    if (static_cast<int>(present.size()) != n) {
      return InvalidArgument("erasure code: present has " + std::to_string(present.size()) +
                             " entries, want " + std::to_string(n));
    }
    if (wanted && static_cast<int>(wanted->size()) != n) {
      return InvalidArgument("erasure code: wanted has " + std::to_string(wanted->size()) +
                             " entries, want " + std::to_string(n));
    }
    std::array<int, kMaxShards> sources{};  // first k present shards
    std::array<int, kMaxShards> missing{};
    int num_sources = 0;
    int num_missing = 0;
    for (int i = 0; i < n; ++i) {
      if (!present[i]) {
        if (!wanted || (*wanted)[i]) missing[num_missing++] = i;
      } else if (num_sources < k_) {
        sources[num_sources++] = i;
      }
    }
    if (num_sources < k_) {
      return InvalidArgument("erasure code: " + std::to_string(num_sources) +
                             " shards present, need " + std::to_string(k_));
    }
    if (num_missing == 0 || block_bytes == 0) return Status::OK();

    // B = the encode rows of the k sources; D = B^-1 maps the sources back
    // to the data blocks.
    std::array<unsigned char, kMaxShards * kMaxShards> b{};
    std::array<unsigned char, kMaxShards * kMaxShards> inv{};
    for (int r = 0; r < k_; ++r) {
      std::memcpy(&b[r * k_], &matrix_[sources[r] * k_], k_);
    }
    if (gf_invert_matrix(b.data(), inv.data(), k_) != 0) {
      // Cannot happen with a Cauchy matrix; kept as a guard.
      return Internal("erasure code: singular decode matrix");
    }

    // One decode row per missing shard: data row i is row i of D, parity
    // row p is (encode row p) x D.
    std::array<unsigned char, kMaxDecodeCoefs> rows{};
    for (int t = 0; t < num_missing; ++t) {
      const int idx = missing[t];
      unsigned char* out = &rows[t * k_];
      if (idx < k_) {
        std::memcpy(out, &inv[idx * k_], k_);
      } else {
        const unsigned char* enc = &matrix_[idx * k_];
        for (int j = 0; j < k_; ++j) {
          unsigned char s = 0;
          for (int l = 0; l < k_; ++l) s ^= gf_mul(enc[l], inv[l * k_ + j]);
          out[j] = s;
        }
      }
    }
    std::array<unsigned char, 32 * kMaxDecodeCoefs> tbls;
    ec_init_tables(k_, num_missing, rows.data(), tbls.data());

    std::array<unsigned char*, kMaxShards> src{};
    std::array<unsigned char*, kMaxShards> dst{};
    for (int r = 0; r < k_; ++r) src[r] = shards[sources[r]];
    for (int t = 0; t < num_missing; ++t) dst[t] = shards[missing[t]];
    EncodeSlices(block_bytes, k_, num_missing, tbls.data(), src.data(), dst.data());
    return Status::OK();
  }

 private:
  const int k_;
  const int m_;
  std::vector<unsigned char> matrix_;       // (k+m) x k encode matrix, row-major
  std::vector<unsigned char> parity_tbls_;  // ec_init_tables of the m parity rows
};

}  // namespace

Result<std::unique_ptr<ErasureCode>> ErasureCode::Create(int k, int m) {
  if (k < 1 || m < 0 || k > kMaxShards || m > kMaxShards - k) {
    return InvalidArgument("erasure code: need 1 <= k, 0 <= m, k + m <= 32; got k=" +
                           std::to_string(k) + " m=" + std::to_string(m));
  }
  return std::unique_ptr<ErasureCode>(std::make_unique<IsalErasureCode>(k, m));
}

}  // namespace strata::ec

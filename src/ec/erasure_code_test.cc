#include "ec/erasure_code.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace strata::ec {
namespace {

// Independent GF(2^8) arithmetic (polynomial x^8+x^4+x^3+x^2+1, 0x11d, as in
// ISA-L) to pin the stored format: parity p_i = sum_j data_j / (i ^ j).
uint8_t GfMul(uint8_t a, uint8_t b) {
  unsigned r = 0, x = a;
  for (; b; b >>= 1) {
    if (b & 1) r ^= x;
    x <<= 1;
    if (x & 0x100) x ^= 0x11d;
  }
  return static_cast<uint8_t>(r);
}

uint8_t GfInv(uint8_t a) {
  for (unsigned b = 1; b < 256; ++b) {
    if (GfMul(a, static_cast<uint8_t>(b)) == 1) return static_cast<uint8_t>(b);
  }
  return 0;
}

// k+m shards of `block` bytes each. `skew` offsets every buffer by a byte so
// the codec sees unaligned pointers.
struct Stripe {
  Stripe(int k, int m, size_t block, size_t skew) : k(k), m(m), block(block) {
    storage.resize(k + m, std::vector<uint8_t>(block + skew + 1));
    for (auto& s : storage) ptrs.push_back(s.data() + skew);
  }
  const uint8_t* const* data() const { return ptrs.data(); }
  uint8_t* const* parity() const { return ptrs.data() + k; }
  std::vector<uint8_t> Shard(int i) const { return {ptrs[i], ptrs[i] + block}; }

  int k, m;
  size_t block;
  std::vector<std::vector<uint8_t>> storage;
  std::vector<uint8_t*> ptrs;
};

std::unique_ptr<ErasureCode> MustCreate(int k, int m) {
  auto ec = ErasureCode::Create(k, m);
  EXPECT_TRUE(ec.ok()) << ec.status().ToString();
  return std::move(ec).value();
}

void FillRandom(std::mt19937_64& rng, uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(rng());
}

// Encodes random data, then for every erasure pattern of up to m shards:
// garbage in the missing buffers, Reconstruct, compare all k+m shards.
void CheckAllPatterns(int k, int m, size_t block, size_t skew) {
  SCOPED_TRACE(testing::Message() << "k=" << k << " m=" << m << " block=" << block
                                  << " skew=" << skew);
  auto ec = MustCreate(k, m);
  ASSERT_EQ(ec->k(), k);
  ASSERT_EQ(ec->m(), m);
  const int n = k + m;
  std::mt19937_64 rng(k * 1000 + m * 10 + block);
  Stripe s(k, m, block, skew);
  for (int i = 0; i < k; ++i) FillRandom(rng, s.ptrs[i], block);
  for (int i = k; i < n; ++i) std::memset(s.ptrs[i], 0xa5, block);  // Encode must overwrite
  std::vector<std::vector<uint8_t>> data_before;
  for (int i = 0; i < k; ++i) data_before.push_back(s.Shard(i));
  ec->Encode(block, s.data(), s.parity());
  std::vector<std::vector<uint8_t>> want;
  for (int i = 0; i < n; ++i) want.push_back(s.Shard(i));
  for (int i = 0; i < k; ++i) ASSERT_EQ(want[i], data_before[i]) << "Encode touched data " << i;

  int patterns = 0;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (std::popcount(mask) > m) continue;
    ++patterns;
    std::vector<bool> present(n);
    for (int i = 0; i < n; ++i) {
      present[i] = !(mask & (1u << i));
      if (present[i]) continue;
      for (size_t b = 0; b < block; ++b) {  // garbage that differs from every right byte
        s.ptrs[i][b] = want[i][b] ^ static_cast<uint8_t>(1 + rng() % 255);
      }
    }
    Status st = ec->Reconstruct(block, s.ptrs.data(), present);
    ASSERT_TRUE(st.ok()) << "mask=" << mask << ": " << st.ToString();
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(s.Shard(i), want[i]) << "mask=" << mask << " shard " << i;
    }
  }
  // sum_{j<=m} C(n, j)
  int expected = 0;
  for (int j = 0, c = 1; j <= m; ++j) {
    expected += c;
    c = c * (n - j) / (j + 1);
  }
  EXPECT_EQ(patterns, expected);
}

struct KM {
  int k, m;
};
const KM kConfigs[] = {{1, 0}, {1, 1}, {2, 1}, {2, 2}, {3, 2},
                       {4, 2}, {6, 3}, {8, 4}, {12, 4}};

TEST(ErasureCodeTest, EveryErasurePatternRebuilds) {
  for (const KM& c : kConfigs) {
    for (size_t block : {size_t{1}, size_t{63}, size_t{4096}, size_t{4097}}) {
      CheckAllPatterns(c.k, c.m, block, /*skew=*/0);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(ErasureCodeTest, UnalignedBuffers) {
  for (const KM& c : {KM{4, 2}, KM{8, 4}}) {
    for (size_t block : {size_t{17}, size_t{1000}, size_t{4097}}) {
      CheckAllPatterns(c.k, c.m, block, /*skew=*/1);
      if (HasFatalFailure()) return;
    }
  }
}

// Wide codes up to the 32-shard limit: a random sample of worst-case
// (exactly m missing) patterns.
TEST(ErasureCodeTest, WideCodesSampledPatterns) {
  std::mt19937_64 rng(7);
  for (const KM& c : {KM{16, 16}, KM{31, 1}, KM{1, 31}, KM{20, 12}, KM{28, 4}}) {
    SCOPED_TRACE(testing::Message() << "k=" << c.k << " m=" << c.m);
    const int n = c.k + c.m;
    const size_t block = 333;
    auto ec = MustCreate(c.k, c.m);
    Stripe s(c.k, c.m, block, 0);
    for (int i = 0; i < c.k; ++i) FillRandom(rng, s.ptrs[i], block);
    ec->Encode(block, s.data(), s.parity());
    std::vector<std::vector<uint8_t>> want;
    for (int i = 0; i < n; ++i) want.push_back(s.Shard(i));
    std::vector<int> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    for (int trial = 0; trial < 200; ++trial) {
      std::shuffle(idx.begin(), idx.end(), rng);
      std::vector<bool> present(n, true);
      for (int t = 0; t < c.m; ++t) {
        present[idx[t]] = false;
        FillRandom(rng, s.ptrs[idx[t]], block);
      }
      ASSERT_TRUE(ec->Reconstruct(block, s.ptrs.data(), present).ok());
      for (int i = 0; i < n; ++i) ASSERT_EQ(s.Shard(i), want[i]) << "trial " << trial;
    }
  }
}

TEST(ErasureCodeTest, ParityMatchesCauchyReference) {
  for (const KM& c : {KM{1, 1}, KM{4, 2}, KM{12, 4}, KM{16, 16}}) {
    const size_t block = 100;
    auto ec = MustCreate(c.k, c.m);
    Stripe s(c.k, c.m, block, 0);
    std::mt19937_64 rng(c.k);
    for (int i = 0; i < c.k; ++i) FillRandom(rng, s.ptrs[i], block);
    ec->Encode(block, s.data(), s.parity());
    for (int p = 0; p < c.m; ++p) {
      const int row = c.k + p;
      for (size_t b = 0; b < block; ++b) {
        uint8_t want = 0;
        for (int j = 0; j < c.k; ++j) {
          want ^= GfMul(GfInv(static_cast<uint8_t>(row ^ j)), s.ptrs[j][b]);
        }
        ASSERT_EQ(s.ptrs[row][b], want) << "k=" << c.k << " m=" << c.m << " parity " << p
                                        << " byte " << b;
      }
    }
  }
}

TEST(ErasureCodeTest, TooManyMissingIsInvalidArgument) {
  for (const KM& c : kConfigs) {
    SCOPED_TRACE(testing::Message() << "k=" << c.k << " m=" << c.m);
    const int n = c.k + c.m;
    const size_t block = 64;
    auto ec = MustCreate(c.k, c.m);
    Stripe s(c.k, c.m, block, 0);
    std::mt19937_64 rng(3);
    for (int i = 0; i < n; ++i) FillRandom(rng, s.ptrs[i], block);
    std::vector<std::vector<uint8_t>> before;
    for (int i = 0; i < n; ++i) before.push_back(s.Shard(i));
    for (uint32_t mask = 1; mask < (1u << n); ++mask) {
      if (std::popcount(mask) <= c.m) continue;
      std::vector<bool> present(n);
      for (int i = 0; i < n; ++i) present[i] = !(mask & (1u << i));
      Status st = ec->Reconstruct(block, s.ptrs.data(), present);
      ASSERT_EQ(st.code(), Code::kInvalidArgument) << "mask=" << mask;
    }
    for (int i = 0; i < n; ++i) EXPECT_EQ(s.Shard(i), before[i]) << "shard " << i << " written";
  }
}

TEST(ErasureCodeTest, PresentSizeMismatchIsInvalidArgument) {
  auto ec = MustCreate(4, 2);
  Stripe s(4, 2, 16, 0);
  EXPECT_EQ(ec->Reconstruct(16, s.ptrs.data(), std::vector<bool>(5, true)).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(ec->Reconstruct(16, s.ptrs.data(), std::vector<bool>(7, true)).code(),
            Code::kInvalidArgument);
}

// With `wanted`, only the wanted missing shards are rebuilt (what a reader
// needs: the lost data blocks, not the parity); the other missing buffers
// are not written.
TEST(ErasureCodeTest, RebuildsOnlyTheWantedShards) {
  const int k = 4, m = 2, n = k + m;
  const size_t block = 4096 + 3;
  auto ec = MustCreate(k, m);
  std::mt19937_64 rng(42);
  Stripe s(k, m, block, 1);
  for (int i = 0; i < k; ++i) FillRandom(rng, s.ptrs[i], block);
  ec->Encode(block, s.data(), s.parity());
  std::vector<std::vector<uint8_t>> want;
  for (int i = 0; i < n; ++i) want.push_back(s.Shard(i));
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (std::popcount(mask) > m) continue;
    for (uint32_t wmask = 0; wmask < (1u << n); ++wmask) {
      if ((wmask & ~mask) != 0) continue;  // wanted among the missing only
      std::vector<bool> present(n), wanted(n);
      for (int i = 0; i < n; ++i) {
        present[i] = !(mask & (1u << i));
        wanted[i] = (wmask & (1u << i)) != 0;
        if (!present[i]) std::memset(s.ptrs[i], 0x5a, block);
      }
      ASSERT_TRUE(ec->Reconstruct(block, s.ptrs.data(), present, &wanted).ok());
      for (int i = 0; i < n; ++i) {
        if (present[i] || wanted[i]) {
          ASSERT_EQ(s.Shard(i), want[i]) << "mask=" << mask << " wanted=" << wmask << " shard " << i;
        } else {
          ASSERT_EQ(s.Shard(i), std::vector<uint8_t>(block, 0x5a))
              << "mask=" << mask << " wanted=" << wmask << ": unwanted shard " << i << " written";
        }
      }
      for (int i = 0; i < n; ++i) std::memcpy(s.ptrs[i], want[i].data(), block);
    }
  }
  const std::vector<bool> too_long(n + 1);
  EXPECT_EQ(ec->Reconstruct(block, s.ptrs.data(), std::vector<bool>(n, true), &too_long).code(),
            Code::kInvalidArgument);
}

TEST(ErasureCodeTest, NoParity) {
  auto ec = MustCreate(3, 0);
  Stripe s(3, 0, 8, 0);
  ec->Encode(8, s.data(), s.parity());  // nothing to do
  EXPECT_TRUE(ec->Reconstruct(8, s.ptrs.data(), {true, true, true}).ok());
  EXPECT_EQ(ec->Reconstruct(8, s.ptrs.data(), {true, false, true}).code(),
            Code::kInvalidArgument);
}

TEST(ErasureCodeTest, ZeroLengthBlocks) {
  auto ec = MustCreate(4, 2);
  Stripe s(4, 2, 0, 0);
  ec->Encode(0, s.data(), s.parity());
  EXPECT_TRUE(ec->Reconstruct(0, s.ptrs.data(), {false, true, true, true, true, false}).ok());
}

TEST(ErasureCodeTest, CreateValidatesShape) {
  EXPECT_EQ(ErasureCode::Create(0, 2).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ErasureCode::Create(-1, 2).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ErasureCode::Create(4, -1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ErasureCode::Create(30, 3).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ErasureCode::Create(33, 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ErasureCode::Create(1, 32).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ErasureCode::Create(2147483647, 1).status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(ErasureCode::Create(32, 0).ok());
  EXPECT_TRUE(ErasureCode::Create(1, 31).ok());
  EXPECT_TRUE(ErasureCode::Create(16, 16).ok());
}

}  // namespace
}  // namespace strata::ec

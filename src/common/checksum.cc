#include "common/checksum.h"

#include <isa-l.h>
#include <openssl/evp.h>

#include <bit>
#include <cstdlib>
#include <cstring>

#include "common/encoding.h"

// crc64_rocksoft_refl (CRC-64/NVME) appeared in ISA-L 2.31.
#if ISAL_MAJOR_VERSION > 2 || (ISAL_MAJOR_VERSION == 2 && ISAL_MINOR_VERSION >= 31)
#define STRATA_ISAL_HAS_CRC64_ROCKSOFT 1
#else
#define STRATA_ISAL_HAS_CRC64_ROCKSOFT 0
#endif

namespace strata {
namespace {

struct AlgorithmInfo {
  ChecksumAlgorithm alg;
  std::string_view name;
  std::string_view header;
  size_t size;
  bool crc;
};

constexpr AlgorithmInfo kAlgorithms[] = {
    {ChecksumAlgorithm::kCrc32, "CRC32", "x-amz-checksum-crc32", 4, true},
    {ChecksumAlgorithm::kCrc32c, "CRC32C", "x-amz-checksum-crc32c", 4, true},
    {ChecksumAlgorithm::kCrc64Nvme, "CRC64NVME", "x-amz-checksum-crc64nvme", 8, true},
    {ChecksumAlgorithm::kSha1, "SHA1", "x-amz-checksum-sha1", 20, false},
    {ChecksumAlgorithm::kSha256, "SHA256", "x-amz-checksum-sha256", 32, false},
};

const AlgorithmInfo& Info(ChecksumAlgorithm alg) {
  for (const auto& info : kAlgorithms) {
    if (info.alg == alg) return info;
  }
  abort();  // unreachable for valid enum values
}

// Reflected polynomials (bit i of the constant = coefficient of x^(W-1-i)).
constexpr uint32_t kCrc32Poly = 0xEDB88320u;    // CRC-32 (IEEE, zlib)
constexpr uint32_t kCrc32cPoly = 0x82F63B78u;   // CRC-32C (Castagnoli)
constexpr uint64_t kCrc64NvmePoly = 0x9A6C9329AC4BC9B5ull;  // CRC-64/NVME

// ---- CRC-64/NVME fallback: slicing-by-8 over a reflected register. ----

#if !STRATA_ISAL_HAS_CRC64_ROCKSOFT
struct Crc64Tables {
  uint64_t t[8][256];
};

constexpr Crc64Tables MakeCrc64Tables() {
  Crc64Tables tables{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kCrc64NvmePoly : c >> 1;
    tables.t[0][i] = c;
  }
  for (int s = 1; s < 8; ++s) {
    for (int i = 0; i < 256; ++i) {
      uint64_t prev = tables.t[s - 1][i];
      tables.t[s][i] = (prev >> 8) ^ tables.t[0][prev & 0xff];
    }
  }
  return tables;
}

constexpr Crc64Tables kCrc64Tables = MakeCrc64Tables();

// `reg` is the raw (non-inverted) register.
uint64_t Crc64NvmeUpdateRaw(uint64_t reg, const unsigned char* p, size_t n) {
  const auto& t = kCrc64Tables.t;
  if constexpr (std::endian::native == std::endian::little) {
    while (n >= 8) {
      uint64_t v;
      memcpy(&v, p, 8);
      reg ^= v;
      reg = t[7][reg & 0xff] ^ t[6][(reg >> 8) & 0xff] ^ t[5][(reg >> 16) & 0xff] ^
            t[4][(reg >> 24) & 0xff] ^ t[3][(reg >> 32) & 0xff] ^ t[2][(reg >> 40) & 0xff] ^
            t[1][(reg >> 48) & 0xff] ^ t[0][reg >> 56];
      p += 8;
      n -= 8;
    }
  }
  while (n--) reg = t[0][(reg ^ *p++) & 0xff] ^ (reg >> 8);
  return reg;
}
#endif

// ---- Streaming implementations. ----

template <typename T>
std::string BigEndianBytes(T v) {
  std::string out(sizeof(T), '\0');
  for (size_t i = 0; i < sizeof(T); ++i) {
    out[sizeof(T) - 1 - i] = static_cast<char>(v & 0xff);
    v = static_cast<T>(v >> 8);
  }
  return out;
}

template <typename T>
T FromBigEndianBytes(std::string_view b) {
  T v = 0;
  for (unsigned char c : b) v = static_cast<T>((v << 8) | c);
  return v;
}

class Crc32Checksummer final : public Checksummer {
 public:
  Crc32Checksummer() : Checksummer(ChecksumAlgorithm::kCrc32) {}
  void Update(const void* data, size_t n) override {
    // crc32_gzip_refl inverts on entry and exit, so the previous result is
    // the seed for the next piece and 0 starts a new CRC.
    crc_ = crc32_gzip_refl(crc_, static_cast<const unsigned char*>(data), n);
  }
  std::string Final() override {
    std::string out = BigEndianBytes<uint32_t>(crc_);
    crc_ = 0;
    return out;
  }

 private:
  uint32_t crc_ = 0;
};

// crc32_iscsi neither inverts the seed nor the result: keep the raw register
// (init 0xFFFFFFFF) and invert at the end. Its length is an int.
uint32_t Crc32cRegister(uint32_t reg, const void* data, size_t n) {
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  while (n > 0) {
    size_t chunk = n < (size_t{1} << 30) ? n : (size_t{1} << 30);
    reg = crc32_iscsi(p, static_cast<int>(chunk), reg);
    p += chunk;
    n -= chunk;
  }
  return reg;
}

class Crc32cChecksummer final : public Checksummer {
 public:
  Crc32cChecksummer() : Checksummer(ChecksumAlgorithm::kCrc32c) {}
  void Update(const void* data, size_t n) override { reg_ = Crc32cRegister(reg_, data, n); }
  std::string Final() override {
    std::string out = BigEndianBytes<uint32_t>(~reg_);
    reg_ = 0xFFFFFFFFu;
    return out;
  }

 private:
  uint32_t reg_ = 0xFFFFFFFFu;
};

class Crc64NvmeChecksummer final : public Checksummer {
 public:
  Crc64NvmeChecksummer() : Checksummer(ChecksumAlgorithm::kCrc64Nvme) {}
#if STRATA_ISAL_HAS_CRC64_ROCKSOFT
  // Like the other *_refl ISA-L CRCs: inverts on entry and exit.
  void Update(const void* data, size_t n) override {
    crc_ = crc64_rocksoft_refl(crc_, static_cast<const unsigned char*>(data), n);
  }
  std::string Final() override {
    std::string out = BigEndianBytes<uint64_t>(crc_);
    crc_ = 0;
    return out;
  }

 private:
  uint64_t crc_ = 0;
#else
  void Update(const void* data, size_t n) override {
    reg_ = Crc64NvmeUpdateRaw(reg_, static_cast<const unsigned char*>(data), n);
  }
  std::string Final() override {
    std::string out = BigEndianBytes<uint64_t>(~reg_);
    reg_ = ~uint64_t{0};
    return out;
  }

 private:
  uint64_t reg_ = ~uint64_t{0};
#endif
};

class ShaChecksummer final : public Checksummer {
 public:
  explicit ShaChecksummer(ChecksumAlgorithm alg)
      : Checksummer(alg),
        md_(alg == ChecksumAlgorithm::kSha1 ? EVP_sha1() : EVP_sha256()),
        ctx_(EVP_MD_CTX_new()) {
    if (ctx_ == nullptr || EVP_DigestInit_ex(ctx_, md_, nullptr) != 1) abort();
  }
  ~ShaChecksummer() override { EVP_MD_CTX_free(ctx_); }
  ShaChecksummer(const ShaChecksummer&) = delete;
  ShaChecksummer& operator=(const ShaChecksummer&) = delete;

  void Update(const void* data, size_t n) override {
    if (EVP_DigestUpdate(ctx_, data, n) != 1) abort();
  }
  std::string Final() override {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_DigestFinal_ex(ctx_, out, &len) != 1) abort();
    if (EVP_DigestInit_ex(ctx_, md_, nullptr) != 1) abort();
    return std::string(reinterpret_cast<char*>(out), len);
  }

 private:
  const EVP_MD* md_;
  EVP_MD_CTX* ctx_;
};

// ---- CRC combination (GF(2) polynomial arithmetic, reflected form). ----
//
// For a reflected CRC of width W the register holds a polynomial with x^0 in
// the top bit. With init == xorout (all ones for all three S3 CRCs):
//   crc(A||B) = crc(A) * x^(8*len(B)) mod P  xor  crc(B).

// a * b mod P (zlib's multmodp, generic width).
template <typename T>
T MultModP(T a, T b, T poly) {
  if (a == 0) return 0;
  T m = T{1} << (sizeof(T) * 8 - 1);
  T p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) ? static_cast<T>((b >> 1) ^ poly) : static_cast<T>(b >> 1);
  }
  return p;
}

// x^(8*n) mod P by square-and-multiply over the bits of n.
template <typename T>
T X8nModP(uint64_t n, T poly) {
  constexpr int kWidth = sizeof(T) * 8;
  T result = T{1} << (kWidth - 1);  // x^0
  T sq = T{1} << (kWidth - 1 - 8);  // x^8 = x^(2^3)
  while (n) {
    if (n & 1) result = MultModP<T>(sq, result, poly);
    n >>= 1;
    if (n) sq = MultModP<T>(sq, sq, poly);
  }
  return result;
}

template <typename T>
std::string CombineTyped(std::string_view a, std::string_view b, uint64_t length_b, T poly) {
  T crc_a = FromBigEndianBytes<T>(a);
  T crc_b = FromBigEndianBytes<T>(b);
  T combined = MultModP<T>(X8nModP<T>(length_b, poly), crc_a, poly) ^ crc_b;
  return BigEndianBytes<T>(combined);
}

}  // namespace

std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name) {
  for (const auto& info : kAlgorithms) {
    if (info.name.size() != name.size()) continue;
    bool match = true;
    for (size_t i = 0; i < name.size() && match; ++i) {
      char c = name[i];
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      match = c == info.name[i];
    }
    if (match) return info.alg;
  }
  return std::nullopt;
}

std::string_view ChecksumName(ChecksumAlgorithm alg) { return Info(alg).name; }
std::string_view ChecksumHeader(ChecksumAlgorithm alg) { return Info(alg).header; }
size_t ChecksumSize(ChecksumAlgorithm alg) { return Info(alg).size; }
bool IsCrc(ChecksumAlgorithm alg) { return Info(alg).crc; }

std::unique_ptr<Checksummer> Checksummer::Create(ChecksumAlgorithm alg) {
  switch (alg) {
    case ChecksumAlgorithm::kCrc32:
      return std::make_unique<Crc32Checksummer>();
    case ChecksumAlgorithm::kCrc32c:
      return std::make_unique<Crc32cChecksummer>();
    case ChecksumAlgorithm::kCrc64Nvme:
      return std::make_unique<Crc64NvmeChecksummer>();
    case ChecksumAlgorithm::kSha1:
    case ChecksumAlgorithm::kSha256:
      return std::make_unique<ShaChecksummer>(alg);
  }
  abort();
}

std::string ChecksumRaw(ChecksumAlgorithm alg, std::string_view data) {
  auto c = Checksummer::Create(alg);
  c->Update(data.data(), data.size());
  return c->Final();
}

std::string ChecksumBase64(ChecksumAlgorithm alg, std::string_view data) {
  return Base64Encode(ChecksumRaw(alg, data));
}

std::string CompositeChecksum(ChecksumAlgorithm alg,
                              const std::vector<std::string>& raw_part_checksums) {
  auto c = Checksummer::Create(alg);
  for (const auto& part : raw_part_checksums) c->Update(part.data(), part.size());
  return c->Final();
}

std::string CombineCrc(ChecksumAlgorithm alg, std::string_view raw_crc_a,
                       std::string_view raw_crc_b, uint64_t length_b) {
  if (!IsCrc(alg)) return {};
  size_t size = ChecksumSize(alg);
  if (raw_crc_a.size() != size || raw_crc_b.size() != size) return {};
  switch (alg) {
    case ChecksumAlgorithm::kCrc32:
      return CombineTyped<uint32_t>(raw_crc_a, raw_crc_b, length_b, kCrc32Poly);
    case ChecksumAlgorithm::kCrc32c:
      return CombineTyped<uint32_t>(raw_crc_a, raw_crc_b, length_b, kCrc32cPoly);
    case ChecksumAlgorithm::kCrc64Nvme:
      return CombineTyped<uint64_t>(raw_crc_a, raw_crc_b, length_b, kCrc64NvmePoly);
    default:
      return {};
  }
}

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n) {
  return ~Crc32cRegister(~crc, data, n);
}

}  // namespace strata

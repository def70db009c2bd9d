// S3 "additional checksums" (x-amz-checksum-*): CRC32, CRC32C, CRC64NVME,
// SHA1 and SHA256. Digests are handled as the raw big-endian bytes S3
// transmits; the header value is the base64 of those bytes.
//
// CRCs use ISA-L; CRC64NVME falls back to a portable slicing-by-8 table when
// the ISA-L in use predates crc64_rocksoft_refl (< 2.31, e.g. Debian 12).
// SHA-1/SHA-256 use OpenSSL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

enum class ChecksumAlgorithm { kCrc32, kCrc32c, kCrc64Nvme, kSha1, kSha256 };

// Case-insensitive: "CRC32", "crc32c", "CRC64NVME", "SHA1", "SHA256".
std::optional<ChecksumAlgorithm> ParseChecksumAlgorithm(std::string_view name);
// Upper-case S3 spelling, e.g. "CRC64NVME".
std::string_view ChecksumName(ChecksumAlgorithm alg);
// Request/response header, e.g. "x-amz-checksum-crc64nvme".
std::string_view ChecksumHeader(ChecksumAlgorithm alg);
// Raw digest size in bytes: 4, 4, 8, 20, 32.
size_t ChecksumSize(ChecksumAlgorithm alg);
bool IsCrc(ChecksumAlgorithm alg);

// Streaming checksum. Update any number of times, then Final; Final returns
// the raw big-endian digest (ChecksumSize bytes) and resets the object to its
// initial state, so it may be reused for a new input.
class Checksummer {
 public:
  static std::unique_ptr<Checksummer> Create(ChecksumAlgorithm alg);
  virtual ~Checksummer() = default;
  virtual void Update(const void* data, size_t n) = 0;
  virtual std::string Final() = 0;
  ChecksumAlgorithm algorithm() const { return alg_; }

 protected:
  explicit Checksummer(ChecksumAlgorithm alg) : alg_(alg) {}

 private:
  ChecksumAlgorithm alg_;
};

// CRC32C (Castagnoli, the x-amz-checksum-crc32c polynomial) as a number:
// Crc32cExtend(Crc32cExtend(0, a), b) == Crc32c(a || b).
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t n);
inline uint32_t Crc32c(const void* data, size_t n) { return Crc32cExtend(0, data, n); }

// One-shot raw digest and its base64 (the header value).
std::string ChecksumRaw(ChecksumAlgorithm alg, std::string_view data);
std::string ChecksumBase64(ChecksumAlgorithm alg, std::string_view data);

// Multipart COMPOSITE checksum: the checksum of the concatenation of the raw
// part checksums (raw digest returned; the caller appends "-<parts>" to its
// base64).
std::string CompositeChecksum(ChecksumAlgorithm alg,
                              const std::vector<std::string>& raw_part_checksums);

// FULL_OBJECT CRC combination: given the raw CRCs of A and B and B's length
// in bytes, returns the raw CRC of A||B (zlib crc32_combine method, in
// O(log length_b)). `alg` must be a CRC and both inputs ChecksumSize bytes;
// otherwise an empty string is returned.
std::string CombineCrc(ChecksumAlgorithm alg, std::string_view raw_crc_a,
                       std::string_view raw_crc_b, uint64_t length_b);

}  // namespace strata

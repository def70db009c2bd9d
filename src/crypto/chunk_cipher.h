// The encrypted form of object data (server-side encryption; the format is
// docs/formats/encryption.md): the plaintext is cut into chunks of
// kChunkBytes, each sealed on its own with AES-256-GCM, so that a range read
// opens only the chunks it touches and any changed, swapped, reordered or
// dropped chunk fails to open.
//
//   file key  = AES-256-ECB(data key, salt ^ 0x01..) | AES-256-ECB(data key, salt ^ 0x02..)
//               (two blocks of AES as a PRF under the data key, on the
//               random salt with a block counter in its first byte)
//   nonce     = 0x00000000 | chunk index (64-bit big endian)
//   AAD       = identity | chunk index (64-bit BE) | last-chunk flag (1 byte)
//   chunk     = ciphertext | 16-byte tag
//
// Every data file (an object version's, or one multipart part's) has its own
// random 16-byte salt, so its file key is its own even when the data key is
// reused (SSE-C: the customer's key; a multipart upload: one data key for all
// parts), and a nonce never repeats under one key. `identity` (bucket and key)
// binds the chunks to their object; the last-chunk flag makes a cut at a chunk
// boundary fail too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;

namespace strata::crypto {

inline constexpr size_t kDataKeyBytes = 32;
inline constexpr size_t kSaltBytes = 16;
inline constexpr size_t kChunkBytes = 64 * 1024;
inline constexpr size_t kTagBytes = 16;
inline constexpr size_t kSealedChunkBytes = kChunkBytes + kTagBytes;

// Stored bytes of `plain_bytes` of plaintext.
uint64_t SealedSize(uint64_t plain_bytes);
// How many chunks hold `plain_bytes` (0 for an empty object).
uint64_t ChunkCount(uint64_t plain_bytes);

// A salted digest that recognises a customer-provided key without storing
// it: HMAC-SHA256(salt, "strata-sse-c-v1" | key), 32 bytes.
std::string CustomerKeyDigest(std::string_view salt, std::string_view key);

// Seals and opens the chunks of one data file. Not thread-safe (one per
// writer or reader).
class ChunkCipher {
 public:
  // `data_key`: kDataKeyBytes; `salt`: kSaltBytes (the file's).
  ChunkCipher(std::string_view data_key, std::string_view salt, std::string identity);
  ~ChunkCipher();
  ChunkCipher(const ChunkCipher&) = delete;
  ChunkCipher& operator=(const ChunkCipher&) = delete;

  // Writes plain.size() + kTagBytes bytes to `out` (plain.size() <= kChunkBytes).
  void Seal(uint64_t index, bool last, std::string_view plain, char* out);
  // Writes sealed.size() - kTagBytes bytes to `out`; false if the chunk is not
  // the one sealed at `index` (with `last`) under this key and identity.
  bool Open(uint64_t index, bool last, std::string_view sealed, char* out);
  // An ETag that is not the plaintext's MD5 (SSE-C and SSE-KMS, as AWS):
  // HMAC-SHA256(file key, "etag" | md5) cut to 16 bytes.
  std::string MaskedEtag(std::string_view md5) const;
  // The same file key and identity with contexts of its own (for another thread).
  std::unique_ptr<ChunkCipher> Clone() const;

 private:
  ChunkCipher() = default;
  void Aad(uint64_t index, bool last);
  // The contexts are made on first use: a reader only opens, a writer only seals.
  EVP_CIPHER_CTX* Context(bool seal);
  unsigned char key_[32];
  std::string aad_;  // identity | index | last
  size_t identity_bytes_ = 0;
  EVP_CIPHER_CTX* seal_ = nullptr;
  EVP_CIPHER_CTX* open_ = nullptr;
};

}  // namespace strata::crypto

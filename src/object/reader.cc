// ObjectReader (object/engine.h): reads a version's bytes, opening the
// sealed chunks of an encrypted one (crypto/chunk_cipher.h).
#include <algorithm>
#include <cstring>
#include <string>

#include "crypto/chunk_cipher.h"
#include "object/engine.h"
#include "storage/data_store.h"

namespace strata::object {

ObjectReader::~ObjectReader() = default;

Status ObjectReader::Unlock(std::string_view data_key) {
  const Encryption& sse = record_.sse;
  if (!sse.on()) return Status::OK();
  if (data_key.size() != crypto::kDataKeyBytes) {
    return Status(Code::kPermissionDenied, "the data key is not 32 bytes", Detail::kSseKey);
  }
  if (sse.mode == SseMode::kCustomer &&
      crypto::CustomerKeyDigest(sse.salt, data_key) != sse.key_digest) {
    return Status(Code::kPermissionDenied, "not the key the object was stored with",
                  Detail::kSseKey);
  }
  ciphers_.clear();
  const std::string identity = SealIdentity(bucket_, key_);
  if (record_.parts.empty()) {
    ciphers_.push_back(std::make_unique<crypto::ChunkCipher>(data_key, sse.salt, identity));
  } else {
    for (const PartRef& p : record_.parts) {
      if (p.salt.size() != crypto::kSaltBytes) return Corruption("a part without its salt");
      ciphers_.push_back(std::make_unique<crypto::ChunkCipher>(data_key, p.salt, identity));
    }
  }
  return Status::OK();
}

namespace {
constexpr uint64_t kMaxSealedChunksPerRead = 16;  // 1 MiB of plaintext
}

Result<size_t> ObjectReader::ReadSealed(size_t i, uint64_t size, uint64_t offset, char* buf,
                                        size_t n) const {
  using crypto::kChunkBytes;
  using crypto::kTagBytes;
  if (ciphers_.size() <= i) {
    return Status(Code::kPreconditionFailed, "the object is encrypted: its key is needed",
                  Detail::kSseKey);
  }
  const uint64_t last_chunk = (size - 1) / kChunkBytes;
  const uint64_t first = offset / kChunkBytes;
  const uint64_t last = std::min((offset + n - 1) / kChunkBytes, first + kMaxSealedChunksPerRead - 1);
  const uint64_t plain_end = std::min(size, (last + 1) * kChunkBytes);
  const uint64_t sealed_at = first * crypto::kSealedChunkBytes;
  const size_t sealed_len = (plain_end - first * kChunkBytes) + (last - first + 1) * kTagBytes;
  const char* sealed_bytes;
  if (record_.is_inline) {
    if (sealed_at + sealed_len > record_.inline_data.size()) return Corruption("inline data short");
    sealed_bytes = record_.inline_data.data() + sealed_at;
  } else {
    if (sealed_capacity_ < sealed_len) {
      sealed_buf_.reset(new char[sealed_len]);
      sealed_capacity_ = sealed_len;
    }
    for (size_t got = 0; got < sealed_len;) {
      ASSIGN_OR_RETURN(size_t r, files_[i]->ReadAt(sealed_at + got, sealed_buf_.get() + got,
                                                   sealed_len - got));
      if (r == 0) return Corruption("encrypted data ended early");
      got += r;
    }
    sealed_bytes = sealed_buf_.get();
  }
  const uint64_t want_end = std::min<uint64_t>(offset + n, plain_end);
  size_t pos = 0;  // in sealed_buf_
  for (uint64_t c = first; c <= last; ++c) {
    const uint64_t chunk_at = c * kChunkBytes;
    const size_t chunk_len = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, size - chunk_at));
    std::string_view sealed(sealed_bytes + pos, chunk_len + kTagBytes);
    pos += chunk_len + kTagBytes;
    const uint64_t from = std::max(offset, chunk_at), to = std::min(want_end, chunk_at + chunk_len);
    char* dest = buf + (from - offset);
    const bool whole = from == chunk_at && to == chunk_at + chunk_len;
    if (!whole && !plain_buf_) plain_buf_.reset(new char[kChunkBytes]);
    if (!ciphers_[i]->Open(c, c == last_chunk, sealed, whole ? dest : plain_buf_.get())) {
      return Corruption("encrypted chunk " + std::to_string(c) + " of " + bucket_ + "/" + key_ +
                        " does not authenticate (altered, moved or cut)");
    }
    if (!whole) std::memcpy(dest, plain_buf_.get() + (from - chunk_at), to - from);
  }
  return static_cast<size_t>(want_end - offset);
}

Result<size_t> ObjectReader::ReadAt(uint64_t offset, char* buf, size_t n) const {
  if (offset >= record_.size_bytes) return size_t{0};
  n = std::min<uint64_t>(n, record_.size_bytes - offset);
  if (n == 0) return size_t{0};
  if (record_.sse.on()) {
    if (record_.parts.empty()) return ReadSealed(0, record_.size_bytes, offset, buf, n);
    size_t i = std::upper_bound(part_starts_.begin(), part_starts_.end(), offset) -
               part_starts_.begin() - 1;
    uint64_t in_part = offset - part_starts_[i];
    n = std::min<uint64_t>(n, record_.parts[i].size_bytes - in_part);
    return ReadSealed(i, record_.parts[i].size_bytes, in_part, buf, n);
  }
  if (record_.is_inline) {
    std::memcpy(buf, record_.inline_data.data() + offset, n);
    return n;
  }
  if (record_.parts.empty()) return files_[0]->ReadAt(offset, buf, n);
  // The part holding `offset`; reads stop at its end (callers loop).
  size_t i = std::upper_bound(part_starts_.begin(), part_starts_.end(), offset) -
             part_starts_.begin() - 1;
  uint64_t in_part = offset - part_starts_[i];
  n = std::min<uint64_t>(n, record_.parts[i].size_bytes - in_part);
  return files_[i]->ReadAt(in_part, buf, n);
}

Result<std::unique_ptr<ObjectReader>> ObjectReader::Fork() const {
  std::unique_ptr<ObjectReader> r(new ObjectReader());
  r->record_ = record_;
  r->bucket_ = bucket_;
  r->key_ = key_;
  r->part_starts_ = part_starts_;
  r->store_ = store_;
  r->file_ids_ = file_ids_;
  r->file_sizes_ = file_sizes_;
  for (size_t i = 0; i < file_ids_.size(); ++i) {
    ASSIGN_OR_RETURN(auto file, store_->Open(file_ids_[i], file_sizes_[i]));
    r->files_.push_back(std::move(file));
  }
  for (const auto& c : ciphers_) r->ciphers_.push_back(c->Clone());
  return r;
}

int ObjectReader::UnverifiedFd() const {
  if (record_.is_inline || record_.sse.on() || !record_.parts.empty() || files_.size() != 1) return -1;
  return files_[0]->UnverifiedFd();
}

Result<ObjectReader::FileSpan> ObjectReader::CheckedSpan(uint64_t offset, uint64_t n, char* scratch,
                                                        size_t scratch_bytes) const {
  if (record_.is_inline || record_.sse.on() || offset >= record_.size_bytes || n == 0) {
    return FileSpan{};
  }
  size_t i = 0;
  uint64_t in_part = offset, part_size = record_.size_bytes;
  if (!record_.parts.empty()) {
    i = std::upper_bound(part_starts_.begin(), part_starts_.end(), offset) - part_starts_.begin() - 1;
    in_part = offset - part_starts_[i];
    part_size = record_.parts[i].size_bytes;
  }
  if (i >= files_.size()) return FileSpan{};
  const int fd = files_[i]->UnverifiedFd();
  if (fd < 0) return FileSpan{};
  auto checked = files_[i]->Check(in_part, static_cast<size_t>(std::min(n, part_size - in_part)),
                                  scratch, scratch_bytes);
  if (!checked.ok()) {
    if (checked.status().code() == Code::kNotImplemented) return FileSpan{};
    return checked.status();
  }
  return FileSpan{fd, in_part, std::min<uint64_t>(*checked, part_size - in_part)};
}

}  // namespace strata::object

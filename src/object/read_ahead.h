// Reads a range of an object on a helper thread, pieces ahead of its
// consumer: the reading (for an encrypted version: the decryption, ~4 GB/s
// per core) overlaps the consumer's sending of the piece before. An
// encrypted version gets kDecryptHelpers helpers that take pieces in turn;
// the consumer still gets them in order. At most kPieces pieces (plus one
// per extra helper) are in flight; their buffers come from a pool kept
// across requests (PieceBuffer). A range of one piece or less is read on the
// consumer's thread: no helper is started for it. The reader must outlive
// the ReadAhead, and nothing else may read through it meanwhile
// (ObjectReader is not thread-safe).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "common/status.h"

namespace strata::object {

class ObjectReader;

// A ReadAhead::kPieceBytes buffer of the GET path (ReadAhead's pieces, and the
// first piece a GET reads before it answers), taken from a process-wide pool
// and given back when destroyed. Its bytes are not initialised. A fresh
// buffer costs its page faults on first write (~0.35 CPU-s per GB here) and,
// zeroed, a memset: per 2 MiB GET that was 3 MiB of both. At most
// kPooledBuffers idle buffers are kept (kPooledBuffers MiB).
class PieceBuffer {
 public:
  static constexpr size_t kPooledBuffers = 64;
  PieceBuffer() = default;  // holds none
  static PieceBuffer Take();  // one from the pool, or a new one
  ~PieceBuffer();
  PieceBuffer(PieceBuffer&& other) noexcept = default;
  PieceBuffer& operator=(PieceBuffer&& other) noexcept;
  char* data() const { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }
  // Idle buffers in the pool now (tests).
  static size_t Pooled();

 private:
  void GiveBack();
  std::unique_ptr<char[]> p_;
};

class ReadAhead {
 public:
  static constexpr size_t kPieceBytes = 1 << 20;
  static constexpr size_t kPieces = 3;
  // An encrypted version of more than two pieces is read by this many
  // helpers (each through its own ObjectReader::Fork), taking pieces in
  // turn: decryption (~4 GB/s per core) would otherwise bound the stream
  // below what the send side does.
  static constexpr size_t kDecryptHelpers = 2;

  // Reads [offset, end) of `reader`.
  ReadAhead(const ObjectReader& reader, uint64_t offset, uint64_t end);
  ~ReadAhead();  // stops the helpers and waits for them
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // The next piece, valid until the next call; empty once the range is done.
  // After a read error (or data that ended early) every call returns it.
  Result<std::string_view> Next();
  // How many helper threads read ahead (0: the range is read by Next).
  size_t helpers() const { return helpers_.size(); }

 private:
  struct Piece {
    PieceBuffer data;
    size_t size = 0;
  };
  void Run(const ObjectReader* reader);
  // Fills `piece` with piece `index` of the range through `reader`; the
  // status of the read.
  Status Fill(const ObjectReader& reader, uint64_t index, Piece& piece) const;
  uint64_t PieceCount() const { return (end_ - start_ + kPieceBytes - 1) / kPieceBytes; }

  const ObjectReader& reader_;
  std::unique_ptr<ObjectReader> fork_;  // the second helper's reader
  const uint64_t start_, end_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Piece> filled_;  // guarded by mu_: by piece index
  std::vector<Piece> free_;           // guarded by mu_
  uint64_t next_fill_ = 0;            // guarded by mu_: the next piece a helper takes
  uint64_t next_take_ = 0;            // the next piece Next returns (consumer only; read under mu_)
  uint64_t failed_at_ = UINT64_MAX;   // guarded by mu_: the first piece that failed
  Status status_;                     // guarded by mu_ (inline: Next only)
  size_t running_ = 0;                // guarded by mu_: helpers not finished
  bool stop_ = false;                 // guarded by mu_
  bool inline_ = false;               // one piece or less: read by Next, no helper
  Piece current_;                     // consumer only: the piece last returned
  std::vector<std::thread> helpers_;
};

}  // namespace strata::object

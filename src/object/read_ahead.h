// Reads a range of an object on a helper thread, one piece ahead of its
// consumer: the reading (for an encrypted version: the decryption, ~3 GB/s
// per core) overlaps the consumer's sending of the piece before. At most
// kPieces pieces are in flight; their buffers come from a pool kept across
// requests (PieceBuffer). A range of one piece or less is read on the
// consumer's thread: no helper is started for it. The reader must outlive
// the ReadAhead, and nothing else may read through it meanwhile
// (ObjectReader is not thread-safe).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
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

  // Reads [offset, end) of `reader`.
  ReadAhead(const ObjectReader& reader, uint64_t offset, uint64_t end);
  ~ReadAhead();  // stops the helper and waits for it
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // The next piece, valid until the next call; empty once the range is done.
  // After a read error (or data that ended early) every call returns it.
  Result<std::string_view> Next();

 private:
  struct Piece {
    PieceBuffer data;
    size_t size = 0;
  };
  void Run();
  // Fills `piece` from offset_ (at most kPieceBytes, up to end_) and advances
  // offset_; the status of the read.
  Status Fill(Piece& piece);

  const ObjectReader& reader_;
  const uint64_t end_;
  uint64_t offset_;  // helper thread only
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Piece> filled_;   // guarded by mu_
  std::vector<Piece> free_;    // guarded by mu_
  Piece current_;              // consumer only: the piece last returned
  Status status_;              // guarded by mu_
  bool done_ = false;          // guarded by mu_: the helper finished (or failed)
  bool stop_ = false;          // guarded by mu_
  bool inline_ = false;        // one piece or less: read by Next, no helper
  std::thread helper_;
};

}  // namespace strata::object

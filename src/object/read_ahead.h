// Reads a range of an object pieces ahead of its consumer, in steps on the
// shared bulk threads (common/bulk_executor.h): the reading (for an
// encrypted version: the decryption, ~4 GB/s per core) overlaps the
// consumer's sending of the piece before. An encrypted version is read by
// kDecryptHelpers lanes, each with its own reader, that take pieces in turn;
// the consumer still gets them in order. A lane's steps run one at a time; a
// step goes on to its next piece unless other bulk tasks wait, and then
// queues behind them. At most kPieces pieces (plus one per extra lane) are in
// flight; their buffers come from a pool kept across requests (PieceBuffer).
// A range of one piece or less (or any range where no bulk thread runs) is
// read on the consumer's thread. No thread is started per range. The reader
// must outlive the ReadAhead, and nothing else may read through it meanwhile
// (ObjectReader is not thread-safe).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

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
  ~ReadAhead();  // stops its steps: waits for a running one, a queued one does nothing
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // The next piece, valid until the next call; empty once the range is done.
  // After a read error (or data that ended early) every call returns it.
  Result<std::string_view> Next();
  // How many lanes read ahead (0: the range is read by Next).
  size_t helpers() const { return lanes_; }

 private:
  struct Piece {
    PieceBuffer data;
    size_t size = 0;
  };
  struct State;  // shared with the steps queued on the bulk threads
  // Both under the state's mutex.
  static void Schedule(const std::shared_ptr<State>& s, size_t lane);
  static void ScheduleIdleLanes(const std::shared_ptr<State>& s);
  static void Step(const std::shared_ptr<State>& s, size_t lane);
  // Fills `piece` with piece `index` of the range through `reader`; the
  // status of the read.
  static Status Fill(const State& s, const ObjectReader& reader, uint64_t index, Piece& piece);

  std::shared_ptr<State> state_;
  // The second lane's reader: kept here, not in the state, so that it goes
  // with the ReadAhead (a step still queued then touches no reader).
  std::unique_ptr<ObjectReader> fork_;
  size_t lanes_ = 0;
  bool inline_ = false;      // read by Next, no step
  uint64_t next_take_ = 0;   // the next piece Next returns (consumer only; read under the mutex)
  Status inline_status_;     // inline: the first error, returned from then on
  Piece current_;            // consumer only: the piece last returned
};

}  // namespace strata::object

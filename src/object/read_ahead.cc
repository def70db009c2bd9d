#include "object/read_ahead.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <vector>

#include "common/bulk_executor.h"
#include "common/thread_wait.h"
#include "object/engine.h"

namespace strata::object {

namespace {

std::mutex pool_mu;
std::vector<std::unique_ptr<char[]>>& IdleBuffers() {  // guarded by pool_mu
  static auto* pool = new std::vector<std::unique_ptr<char[]>>();  // never destroyed: no exit-order hazard
  return *pool;
}

}  // namespace

PieceBuffer PieceBuffer::Take() {
  PieceBuffer b;
  {
    std::lock_guard lock(pool_mu);
    if (!IdleBuffers().empty()) {
      b.p_ = std::move(IdleBuffers().back());
      IdleBuffers().pop_back();
      return b;
    }
  }
  b.p_ = std::make_unique_for_overwrite<char[]>(ReadAhead::kPieceBytes);
  return b;
}

PieceBuffer::~PieceBuffer() { GiveBack(); }

PieceBuffer& PieceBuffer::operator=(PieceBuffer&& other) noexcept {
  if (this != &other) {
    GiveBack();
    p_ = std::move(other.p_);
  }
  return *this;
}

void PieceBuffer::GiveBack() {
  if (!p_) return;
  std::lock_guard lock(pool_mu);
  if (IdleBuffers().size() < kPooledBuffers) IdleBuffers().push_back(std::move(p_));
  p_.reset();
}

size_t PieceBuffer::Pooled() {
  std::lock_guard lock(pool_mu);
  return IdleBuffers().size();
}

struct ReadAhead::State {
  State(const ObjectReader& reader, uint64_t s, uint64_t e) : start(s), end(e) {
    readers[0] = &reader;
  }
  uint64_t PieceCount() const { return (end - start + kPieceBytes - 1) / kPieceBytes; }
  bool AllFinished() const {
    for (size_t i = 0; i < lanes; ++i) {
      if (!finished[i]) return false;
    }
    return true;
  }

  const ObjectReader* readers[kDecryptHelpers] = {};  // valid until stop is set
  size_t lanes = 1;
  const uint64_t start, end;
  std::mutex mu;
  std::condition_variable cv;
  // The rest guarded by mu.
  std::map<uint64_t, Piece> filled;  // by piece index
  std::vector<Piece> free;
  uint64_t next_fill = 0;            // the next piece a lane takes
  uint64_t failed_at = UINT64_MAX;   // the first piece that failed
  Status status;
  bool scheduled[kDecryptHelpers] = {};  // a step of the lane is queued or running
  bool finished[kDecryptHelpers] = {};   // the lane is done: range taken, failed, or stopped
  size_t running = 0;                    // steps running (the destructor waits for them)
  bool stop = false;                     // the ReadAhead is gone or going
};

ReadAhead::ReadAhead(const ObjectReader& reader, uint64_t offset, uint64_t end)
    : state_(std::make_shared<State>(reader, offset, std::max(offset, end))) {
  State& s = *state_;
  // One piece: Next reads it (a step costs more than it would save). No bulk
  // thread (the process is out of threads): Next reads every piece.
  inline_ = s.end - s.start <= kPieceBytes || !BulkThreadsRunning();
  if (inline_) return;
  if (reader.record().sse.on() && s.PieceCount() > 2) {
    // A failed fork (the data went away) leaves one lane: its reads then
    // fail the same way, in order.
    if (auto fork = reader.Fork(); fork.ok()) {
      fork_ = std::move(fork).value();
      s.readers[1] = fork_.get();
      s.lanes = 2;
    }
  }
  lanes_ = s.lanes;
  const size_t pieces = static_cast<size_t>(std::min<uint64_t>(kPieces + s.lanes - 1, s.PieceCount()));
  std::lock_guard lock(s.mu);
  for (size_t i = 0; i < pieces; ++i) s.free.push_back(Piece{PieceBuffer::Take(), 0});
  for (size_t lane = 0; lane < s.lanes; ++lane) Schedule(state_, lane);
}

ReadAhead::~ReadAhead() {
  if (inline_) return;
  State& s = *state_;
  std::vector<Piece> free;
  std::map<uint64_t, Piece> filled;
  std::unique_lock lock(s.mu);
  s.stop = true;  // a step still queued does nothing (the state outlives it)
  s.cv.wait(lock, [&] { return s.running == 0; });
  // The buffers go back to the pool now, not whenever the last queued step
  // lets go of the state.
  free.swap(s.free);
  filled.swap(s.filled);
}

void ReadAhead::Schedule(const std::shared_ptr<State>& s, size_t lane) {
  s->scheduled[lane] = true;
  RunBulkTask([s, lane] { Step(s, lane); });
}

void ReadAhead::ScheduleIdleLanes(const std::shared_ptr<State>& s) {
  size_t buffers = s->free.size();  // a lane per free buffer at most
  for (size_t lane = 0; lane < s->lanes && buffers > 0; ++lane) {
    if (s->finished[lane] || s->scheduled[lane]) continue;
    Schedule(s, lane);
    --buffers;
  }
}

Status ReadAhead::Fill(const State& s, const ObjectReader& reader, uint64_t index, Piece& piece) {
  // A piece is filled completely (ReadAt stops at part ends: loop).
  const uint64_t at = s.start + index * kPieceBytes;
  const size_t want = static_cast<size_t>(std::min<uint64_t>(kPieceBytes, s.end - at));
  piece.size = 0;
  try {  // on a bulk thread an exception would end the process, or leave Next waiting
    while (piece.size < want) {
      auto n = reader.ReadAt(at + piece.size, piece.data.data() + piece.size, want - piece.size);
      if (!n.ok()) return n.status();
      if (*n == 0) return Corruption("object data ended early");
      piece.size += *n;
    }
  } catch (const std::exception& e) {
    return StatusFromException(e);
  }
  return Status::OK();
}

void ReadAhead::Step(const std::shared_ptr<State>& sp, size_t lane) {
  State& s = *sp;
  std::unique_lock lock(s.mu);
  if (s.stop) {
    s.scheduled[lane] = false;
    s.finished[lane] = true;
    return;
  }
  ++s.running;
  while (true) {
    if (s.stop || s.next_fill >= s.PieceCount() || s.failed_at != UINT64_MAX) {
      s.finished[lane] = true;
      break;
    }
    if (s.free.empty()) break;  // the consumer schedules the lane again when it frees one
    Piece piece = std::move(s.free.back());
    s.free.pop_back();
    const uint64_t index = s.next_fill++;
    lock.unlock();
    Status read = Fill(s, *s.readers[lane], index, piece);
    lock.lock();
    if (!read.ok()) {
      if (index < s.failed_at) {
        s.failed_at = index;
        s.status = read;
      }
      s.free.push_back(std::move(piece));
      s.finished[lane] = true;
      break;
    }
    s.filled.emplace(index, std::move(piece));
    s.cv.notify_all();
    const bool more = !s.stop && !s.free.empty() && s.next_fill < s.PieceCount() &&
                      s.failed_at == UINT64_MAX;
    if (more && BulkTasksQueued() > 0) {  // others wait: the next piece goes behind them
      --s.running;
      Schedule(sp, lane);
      s.cv.notify_all();
      return;
    }
  }
  s.scheduled[lane] = false;
  --s.running;
  s.cv.notify_all();
}

Result<std::string_view> ReadAhead::Next() {
  State& s = *state_;
  if (inline_) {  // read here, piece by piece (no step, no locking)
    if (!inline_status_.ok()) return inline_status_;
    if (next_take_ >= s.PieceCount()) return std::string_view();
    if (!current_.data) current_.data = PieceBuffer::Take();
    inline_status_ = Fill(s, *s.readers[0], next_take_, current_);
    if (!inline_status_.ok()) return inline_status_;
    ++next_take_;
    return std::string_view(current_.data.data(), current_.size);
  }
  std::unique_lock lock(s.mu);
  if (current_.data) {  // the piece returned last is consumed: its buffer goes back
    s.free.push_back(std::move(current_));
    current_ = Piece{};
  }
  if (next_take_ >= s.PieceCount()) return std::string_view();
  ScheduleIdleLanes(state_);
  // Pieces are taken in order, so the one waited for was taken by a lane
  // that holds a buffer for it (or failed at or before it), or a free buffer
  // waits for a lane scheduled above.
  auto ready = [&] {
    return s.filled.count(next_take_) || s.failed_at <= next_take_ || s.AllFinished();
  };
  if (!ready()) {
    lock.unlock();  // the pool may start a thread: not while a step waits to hand a piece over
    ScopedWait waiting;  // on the bulk threads: another worker may run
    lock.lock();
    s.cv.wait(lock, ready);
  }
  if (auto it = s.filled.find(next_take_); it != s.filled.end()) {
    current_ = std::move(it->second);
    s.filled.erase(it);
    ++next_take_;
    return std::string_view(current_.data.data(), current_.size);
  }
  if (!s.status.ok()) return s.status;
  return Status(Code::kInternal, "read-ahead stopped before the range was read");
}

}  // namespace strata::object

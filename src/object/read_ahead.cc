#include "object/read_ahead.h"

#include <algorithm>

#include "common/thread_priority.h"
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

ReadAhead::ReadAhead(const ObjectReader& reader, uint64_t offset, uint64_t end)
    : reader_(reader), start_(offset), end_(std::max(offset, end)) {
  inline_ = end_ - start_ <= kPieceBytes;
  if (inline_) return;  // Next reads it: a thread costs more than it would save
  std::vector<const ObjectReader*> readers = {&reader_};
  if (reader_.record().sse.on() && PieceCount() > 2) {
    // A failed fork (the data went away) leaves one helper: its reads then
    // fail the same way, in order.
    if (auto fork = reader_.Fork(); fork.ok()) {
      fork_ = std::move(fork).value();
      readers.push_back(fork_.get());
    }
  }
  const size_t pieces = static_cast<size_t>(
      std::min<uint64_t>(kPieces + readers.size() - 1, PieceCount()));
  for (size_t i = 0; i < pieces; ++i) free_.push_back(Piece{PieceBuffer::Take(), 0});
  running_ = readers.size();
  for (const ObjectReader* r : readers) helpers_.emplace_back([this, r] { Run(r); });
}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

Status ReadAhead::Fill(const ObjectReader& reader, uint64_t index, Piece& piece) const {
  // A piece is filled completely (ReadAt stops at part ends: loop).
  const uint64_t at = start_ + index * kPieceBytes;
  const size_t want = static_cast<size_t>(std::min<uint64_t>(kPieceBytes, end_ - at));
  piece.size = 0;
  while (piece.size < want) {
    auto n = reader.ReadAt(at + piece.size, piece.data.data() + piece.size, want - piece.size);
    if (!n.ok()) return n.status();
    if (*n == 0) return Corruption("object data ended early");
    piece.size += *n;
  }
  return Status::OK();
}

void ReadAhead::Run(const ObjectReader* reader) {
  NameThisThread("read-ahead");
  LowerThisThreadPriority();  // bulk bytes: small requests go first on busy cores
  while (true) {
    Piece piece;
    uint64_t index;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !free_.empty() || next_fill_ >= PieceCount(); });
      if (stop_ || next_fill_ >= PieceCount() || failed_at_ != UINT64_MAX) {
        --running_;
        cv_.notify_all();
        return;
      }
      piece = std::move(free_.back());
      free_.pop_back();
      index = next_fill_++;
    }
    Status failed = Fill(*reader, index, piece);
    std::lock_guard lock(mu_);
    if (!failed.ok()) {
      if (index < failed_at_) {
        failed_at_ = index;
        status_ = failed;
      }
      free_.push_back(std::move(piece));
      --running_;
      cv_.notify_all();
      return;
    }
    filled_.emplace(index, std::move(piece));
    cv_.notify_all();
  }
}

Result<std::string_view> ReadAhead::Next() {
  if (inline_) {  // one piece or less, read here (no helper, no locking)
    if (!status_.ok()) return status_;
    if (next_take_ > 0 || start_ >= end_) return std::string_view();
    if (!current_.data) current_.data = PieceBuffer::Take();
    status_ = Fill(reader_, 0, current_);
    if (!status_.ok()) return status_;
    next_take_ = 1;
    return std::string_view(current_.data.data(), current_.size);
  }
  std::unique_lock lock(mu_);
  if (current_.data) {
    // The piece returned last is consumed: its buffer goes back to the helpers.
    free_.push_back(std::move(current_));
    current_ = Piece{};
    cv_.notify_all();
  }
  if (next_take_ >= PieceCount()) return std::string_view();
  // Pieces are taken in order, so the one waited for was taken by a helper
  // that holds a buffer for it (or failed at or before it).
  auto ready = [&] {
    return filled_.count(next_take_) || failed_at_ <= next_take_ || running_ == 0;
  };
  if (!ready()) {
    lock.unlock();  // the pool may start a thread: not while a helper waits to hand a piece over
    ScopedWait waiting;  // on the helpers (bulk priority): another worker may run
    lock.lock();
    cv_.wait(lock, ready);
  }
  if (auto it = filled_.find(next_take_); it != filled_.end()) {
    current_ = std::move(it->second);
    filled_.erase(it);
    ++next_take_;
    return std::string_view(current_.data.data(), current_.size);
  }
  if (!status_.ok()) return status_;
  return Status(Code::kInternal, "read-ahead helpers stopped before the range was read");
}

}  // namespace strata::object

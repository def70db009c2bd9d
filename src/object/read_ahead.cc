#include "object/read_ahead.h"

#include <algorithm>

#include "common/thread_priority.h"
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
    : reader_(reader), end_(end), offset_(offset) {
  const uint64_t left = end > offset ? end - offset : 0;
  inline_ = left <= kPieceBytes;
  if (inline_) return;  // Next reads it: a thread costs more than it would save
  const size_t pieces =
      static_cast<size_t>(std::min<uint64_t>(kPieces, (left + kPieceBytes - 1) / kPieceBytes));
  for (size_t i = 0; i < pieces; ++i) free_.push_back(Piece{PieceBuffer::Take(), 0});
  helper_ = std::thread([this] { Run(); });
}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (helper_.joinable()) helper_.join();
}

Status ReadAhead::Fill(Piece& piece) {
  // A piece is filled completely (ReadAt stops at part ends: loop).
  const size_t want = static_cast<size_t>(std::min<uint64_t>(kPieceBytes, end_ - offset_));
  piece.size = 0;
  Status failed;
  while (piece.size < want) {
    auto n = reader_.ReadAt(offset_ + piece.size, piece.data.data() + piece.size, want - piece.size);
    if (!n.ok()) {
      failed = n.status();
      break;
    }
    if (*n == 0) {
      failed = Corruption("object data ended early");
      break;
    }
    piece.size += *n;
  }
  offset_ += piece.size;
  return failed;
}

void ReadAhead::Run() {
  LowerThisThreadPriority();  // bulk bytes: small requests go first on busy cores
  while (true) {
    Piece piece;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !free_.empty(); });
      if (stop_) return;
      piece = std::move(free_.back());
      free_.pop_back();
    }
    if (offset_ >= end_) {
      std::lock_guard lock(mu_);
      done_ = true;
      cv_.notify_all();
      return;
    }
    Status failed = Fill(piece);
    std::lock_guard lock(mu_);
    if (!failed.ok()) {
      status_ = failed;
      done_ = true;
      cv_.notify_all();
      return;
    }
    filled_.push_back(std::move(piece));
    cv_.notify_all();
  }
}

Result<std::string_view> ReadAhead::Next() {
  if (inline_) {  // one piece or less, read here (no helper, no locking)
    if (!status_.ok()) return status_;
    if (offset_ >= end_) return std::string_view();
    if (!current_.data) current_.data = PieceBuffer::Take();
    status_ = Fill(current_);
    if (!status_.ok()) return status_;
    return std::string_view(current_.data.data(), current_.size);
  }
  std::unique_lock lock(mu_);
  if (current_.data) {
    // The piece returned last is consumed: its buffer goes back to the helper.
    free_.push_back(std::move(current_));
    current_ = Piece{};
    cv_.notify_all();
  }
  cv_.wait(lock, [&] { return !filled_.empty() || done_; });
  if (!filled_.empty()) {
    current_ = std::move(filled_.front());
    filled_.pop_front();
    return std::string_view(current_.data.data(), current_.size);
  }
  if (!status_.ok()) {
    Status st = status_;
    return st;
  }
  return std::string_view();
}

}  // namespace strata::object

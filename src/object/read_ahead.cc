#include "object/read_ahead.h"

#include <algorithm>

#include "object/engine.h"

namespace strata::object {

ReadAhead::ReadAhead(const ObjectReader& reader, uint64_t offset, uint64_t end)
    : reader_(reader), end_(end), offset_(offset) {
  for (size_t i = 0; i < kPieces; ++i) free_.push_back({std::make_unique<char[]>(kPieceBytes), 0});
  helper_ = std::thread([this] { Run(); });
}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  helper_.join();
}

void ReadAhead::Run() {
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
    // A piece is filled completely (ReadAt stops at part ends: loop).
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kPieceBytes, end_ - offset_));
    piece.size = 0;
    Status failed;
    while (piece.size < want) {
      auto n = reader_.ReadAt(offset_ + piece.size, piece.data.get() + piece.size, want - piece.size);
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
    return std::string_view(current_.data.get(), current_.size);
  }
  if (!status_.ok()) {
    Status st = status_;
    return st;
  }
  return std::string_view();
}

}  // namespace strata::object

// Write-behind for a long sequential write: every kWindowBytes appended,
// start the kernel's write-back of that window and wait for the window two
// before it. A large object then reaches the disk while it is still being
// received, instead of all at the final fdatasync, and one stream holds at
// most ~3 windows of dirty page cache (bounded memory; small writes beside
// it are not throttled behind gigabytes of someone else's dirty pages).
//
// The file system calls go through `RangeFn` so the schedule and its error
// handling are tested without a disk (write_behind_test.cc); posix_fs.cc
// passes sync_file_range(2).
#pragma once

#include <cstdint>
#include <functional>

namespace strata::io {

class WriteBehind {
 public:
  static constexpr uint64_t kWindowBytes = 8ull << 20;
  // How many windows behind the one just started a wait goes.
  static constexpr uint64_t kLagWindows = 2;

  enum class Op {
    kStart,  // begin write-back of the range; never waits for it
    kWait,   // write the range if still dirty and wait until it is on the device
  };
  // Returns 0 or an errno.
  using RangeFn = std::function<int(Op, uint64_t offset, uint64_t length)>;

  explicit WriteBehind(RangeFn fn) : fn_(std::move(fn)) {}

  // After `n` more bytes were appended at the end of the file. Returns 0, or
  // the errno of a failed start or wait; that failure is sticky (error()):
  // a failed wait has consumed the error a later fdatasync would have
  // reported, and a file system may drop pages it failed to write back and
  // tell only the caller that started it.
  int Appended(uint64_t n) {
    if (error_ != 0) return error_;
    written_ += n;
    while (written_ - started_ >= kWindowBytes) {
      uint64_t offset = started_;
      started_ += kWindowBytes;
      if (int err = fn_(Op::kStart, offset, kWindowBytes); err != 0) return error_ = err;
      if (offset >= kLagWindows * kWindowBytes) {
        int err = fn_(Op::kWait, offset - kLagWindows * kWindowBytes, kWindowBytes);
        if (err != 0) return error_ = err;
      }
    }
    return 0;
  }

  int error() const { return error_; }

 private:
  RangeFn fn_;
  uint64_t written_ = 0;
  uint64_t started_ = 0;  // bytes [0, started_) have had write-back started
  int error_ = 0;
};

}  // namespace strata::io

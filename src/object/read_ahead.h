// Reads a range of an object on a helper thread, one piece ahead of its
// consumer: the reading (for an encrypted version: the decryption, ~3 GB/s
// per core) overlaps the consumer's sending of the piece before. At most
// kPieces pieces are in flight; their buffers are reused. The reader must
// outlive the ReadAhead, and nothing else may read through it meanwhile
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
    std::unique_ptr<char[]> data;
    size_t size = 0;
  };
  void Run();

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
  std::thread helper_;
};

}  // namespace strata::object

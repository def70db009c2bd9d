// The zero-copy twin of ReadAhead (object/read_ahead.h): checks the spans of
// a range of an object on a helper thread, spans ahead of a consumer that
// sends each span from its data file with sendfile (s3/ops/object_get.cc).
// Checking a span reads its blocks through the reader and verifies their
// checksums (ObjectReader::CheckedSpan); what the consumer gets is where the
// checked bytes lie. So reading (a cold disk) and checking overlap the send
// of the span before, and the helper runs at bulk priority
// (common/thread_priority.h) as ReadAhead's does: with the cores busy, small
// requests go first. At most kSpans spans are checked and not yet taken. A
// range of one span or less is checked on the consumer's thread. The reader
// must outlive the CheckAhead, and nothing else may read through it
// meanwhile (ObjectReader is not thread-safe).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "common/status.h"
#include "object/engine.h"
#include "object/read_ahead.h"

namespace strata::object {

class CheckAhead {
 public:
  static constexpr uint64_t kSpanBytes = ReadAhead::kPieceBytes;  // a span is read into a PieceBuffer
  static constexpr size_t kSpans = 3;

  // Checks [offset, end) of `reader`, whose bytes lie in data files
  // (CheckedSpan answered a span with fd >= 0 for it).
  CheckAhead(const ObjectReader& reader, uint64_t offset, uint64_t end);
  ~CheckAhead();  // stops the helper and waits for it
  CheckAhead(const CheckAhead&) = delete;
  CheckAhead& operator=(const CheckAhead&) = delete;

  // The next checked span, in order, its length clipped to the range; length
  // 0 once the range is done. After a failure (a block that fails its
  // checksum, bytes that are not in a file, data that ended early) every call
  // returns it. A span taken is the consumer's to send before the next call.
  Result<ObjectReader::FileSpan> Next();
  bool threaded() const { return helper_.joinable(); }

 private:
  // The span at next_ (consumer or helper: whoever checks).
  Result<ObjectReader::FileSpan> CheckNext();
  void Run();

  const ObjectReader& reader_;
  PieceBuffer scratch_;  // what the checker reads blocks into (pooled, 1 MiB)
  const uint64_t end_;
  uint64_t next_;  // where the next span to check starts (the checker's)
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ObjectReader::FileSpan> ready_;  // guarded by mu_
  Status status_;                             // guarded by mu_: the first failure
  bool done_ = false;                         // guarded by mu_: the helper finished
  bool stop_ = false;                         // guarded by mu_
  std::thread helper_;
};

}  // namespace strata::object

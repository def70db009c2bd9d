// The zero-copy twin of ReadAhead (object/read_ahead.h): checks the spans of
// a range of an object ahead of a consumer that sends each span from its
// data file with sendfile (s3/ops/object_get.cc). Checking a span reads its
// blocks through the reader and verifies their checksums
// (ObjectReader::CheckedSpan); what the consumer gets is where the checked
// bytes lie. So reading (a cold disk) and checking overlap the send of the
// span before. The checks run as steps on the process's bulk threads
// (common/bulk_executor.h, at the bulk priority: with the cores busy, small
// requests go first): one step checks one span, then queues the next behind
// every other reply's, so many replies at once share those threads span by
// span, and no thread is started per request (and each bulk thread reads
// into one buffer of its own, not one per reply). At most kSpans spans are
// checked and not yet taken. A range of one span or less is checked on the
// consumer's thread. The reader must outlive the CheckAhead, and nothing
// else may read through it meanwhile (ObjectReader is not thread-safe).
#pragma once

#include <cstdint>
#include <memory>

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
  ~CheckAhead();  // waits for a step that is checking; a queued one then does nothing
  CheckAhead(const CheckAhead&) = delete;
  CheckAhead& operator=(const CheckAhead&) = delete;

  // The next checked span, in order, its length clipped to the range; length
  // 0 once the range is done. After a failure (a block that fails its
  // checksum, bytes that are not in a file, data that ended early) every call
  // returns it. A span taken is the consumer's to send before the next call.
  Result<ObjectReader::FileSpan> Next();
  // Whether the spans are checked off the consumer's thread (more than one).
  bool threaded() const { return threaded_; }

 private:
  struct State;  // shared with queued steps, which may run after this is gone
  static void Step(const std::shared_ptr<State>& s);
  static void Schedule(const std::shared_ptr<State>& s);  // under s->mu

  std::shared_ptr<State> state_;
  bool threaded_ = false;
};

}  // namespace strata::object

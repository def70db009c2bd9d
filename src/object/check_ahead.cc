#include "object/check_ahead.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "common/bulk_executor.h"
#include "common/thread_wait.h"

namespace strata::object {

struct CheckAhead::State {
  State(const ObjectReader& r, uint64_t offset, uint64_t e)
      : reader(&r), end(std::max(offset, e)), next(offset) {}

  // The span at next (consumer or step: whoever checks; one at a time), its
  // blocks read into `scratch` (ReadAhead::kPieceBytes).
  // Checks the next span, reading into `scratch` (taken from the pool when
  // empty). An exception (an allocation failing) is the range's error: on a
  // bulk thread it would end the process, or leave Next waiting.
  Result<ObjectReader::FileSpan> CheckNext(PieceBuffer& scratch) {
    try {
      if (!scratch) scratch = PieceBuffer::Take();
      return CheckNextIn(scratch.data());
    } catch (const std::exception& e) {
      return StatusFromException(e);
    }
  }
  Result<ObjectReader::FileSpan> CheckNextIn(char* scratch) {
    ASSIGN_OR_RETURN(ObjectReader::FileSpan span,
                     reader->CheckedSpan(next, std::min(kSpanBytes, end - next), scratch,
                                         ReadAhead::kPieceBytes));
    if (span.fd < 0) return Internal("the object's bytes are not in a file to send from");
    if (span.length == 0) return Corruption("object data ended early");
    span.length = std::min(span.length, end - next);
    next += span.length;
    return span;
  }

  const ObjectReader* reader;  // not touched once stop is set
  PieceBuffer scratch;         // a consumer that checks on its own thread reads into this
  const uint64_t end;
  uint64_t next;  // where the next span to check starts (the checker's)
  std::mutex mu;
  std::condition_variable cv;
  std::deque<ObjectReader::FileSpan> ready;  // guarded by mu
  Status status;                             // guarded by mu: the first failure
  bool done = false;                         // guarded by mu: every span checked, or failed
  bool scheduled = false;                    // guarded by mu: a step queued or running
  bool running = false;                      // guarded by mu: a step is checking
  bool stop = false;                         // guarded by mu: the CheckAhead is gone or going
};

CheckAhead::CheckAhead(const ObjectReader& reader, uint64_t offset, uint64_t end)
    : state_(std::make_shared<State>(reader, offset, end)) {
  if (state_->end - state_->next <= kSpanBytes) return;  // Next checks it on the consumer's thread
  if (!BulkThreadsRunning()) return;  // out of threads: the consumer checks every span
  threaded_ = true;
  std::lock_guard lock(state_->mu);
  Schedule(state_);
}

CheckAhead::~CheckAhead() {
  std::unique_lock lock(state_->mu);
  state_->stop = true;
  state_->cv.wait(lock, [&] { return !state_->running; });
}

void CheckAhead::Schedule(const std::shared_ptr<State>& s) {
  s->scheduled = true;
  RunBulkTask([s] { Step(s); });
}

void CheckAhead::Step(const std::shared_ptr<State>& s) {
  {
    std::lock_guard lock(s->mu);
    if (s->stop) {
      s->scheduled = false;
      return;
    }
    s->running = true;
  }
  // Each bulk thread has one scratch buffer for every step it runs: no buffer
  // (and no page faults) per reply.
  static thread_local PieceBuffer scratch;
  while (true) {
    auto span = s->CheckNext(scratch);  // alone: no other step of s is queued
    std::lock_guard lock(s->mu);
    s->running = false;
    if (!span.ok()) {
      s->status = span.status();
      s->done = true;
    } else {
      s->ready.push_back(*span);
      if (s->next >= s->end) s->done = true;
    }
    s->cv.notify_all();
    if (s->done || s->stop || s->ready.size() >= kSpans) {
      s->scheduled = false;
      return;
    }
    if (BulkTasksQueued() > 0) {  // others wait: the next span goes behind them
      Schedule(s);
      return;
    }
    s->running = true;  // nobody waits: on with the next span here
  }
}

Result<ObjectReader::FileSpan> CheckAhead::Next() {
  State& s = *state_;
  if (!threaded_) {  // one span or less, checked here (no step, no locking)
    if (!s.status.ok()) return s.status;
    if (s.next >= s.end) return ObjectReader::FileSpan{};
    auto span = s.CheckNext(s.scratch);
    if (!span.ok()) s.status = span.status();
    return span;
  }
  std::unique_lock lock(s.mu);
  if (s.ready.empty() && !s.done) {
    lock.unlock();  // the pool may start a thread: not while the step waits to hand a span over
    ScopedWait waiting;  // on the bulk threads: another worker may run
    lock.lock();
    s.cv.wait(lock, [&] { return !s.ready.empty() || s.done; });
  }
  if (s.ready.empty()) {  // every span was taken, or the checking failed
    if (!s.status.ok()) return s.status;
    return ObjectReader::FileSpan{};
  }
  ObjectReader::FileSpan span = s.ready.front();
  s.ready.pop_front();
  if (!s.scheduled && !s.done) Schedule(state_);  // room again: check on
  return span;
}

}  // namespace strata::object

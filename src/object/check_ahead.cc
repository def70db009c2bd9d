#include "object/check_ahead.h"

#include <algorithm>

#include "common/thread_priority.h"
#include "common/thread_wait.h"

namespace strata::object {

CheckAhead::CheckAhead(const ObjectReader& reader, uint64_t offset, uint64_t end)
    : reader_(reader), scratch_(PieceBuffer::Take()), end_(std::max(offset, end)), next_(offset) {
  if (end_ - next_ <= kSpanBytes) return;  // Next checks it: a thread costs more than it saves
  helper_ = std::thread([this] { Run(); });
}

CheckAhead::~CheckAhead() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (helper_.joinable()) helper_.join();
}

Result<ObjectReader::FileSpan> CheckAhead::CheckNext() {
  ASSIGN_OR_RETURN(ObjectReader::FileSpan span,
                   reader_.CheckedSpan(next_, std::min(kSpanBytes, end_ - next_), scratch_.data(),
                                       ReadAhead::kPieceBytes));
  if (span.fd < 0) return Internal("the object's bytes are not in a file to send from");
  if (span.length == 0) return Corruption("object data ended early");
  span.length = std::min(span.length, end_ - next_);
  next_ += span.length;
  return span;
}

void CheckAhead::Run() {
  NameThisThread("check-ahead");
  LowerThisThreadPriority();  // bulk bytes: small requests go first on busy cores
  while (true) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || ready_.size() < kSpans; });
      if (stop_ || next_ >= end_) break;
    }
    auto span = CheckNext();
    std::lock_guard lock(mu_);
    if (!span.ok()) {
      status_ = span.status();
      break;
    }
    ready_.push_back(*span);
    cv_.notify_all();
  }
  std::lock_guard lock(mu_);
  done_ = true;
  cv_.notify_all();
}

Result<ObjectReader::FileSpan> CheckAhead::Next() {
  if (!helper_.joinable()) {  // one span or less, checked here (no helper, no locking)
    if (!status_.ok()) return status_;
    if (next_ >= end_) return ObjectReader::FileSpan{};
    auto span = CheckNext();
    if (!span.ok()) status_ = span.status();
    return span;
  }
  std::unique_lock lock(mu_);
  if (ready_.empty() && !done_) {
    ScopedWait waiting;  // on the helper (bulk priority): another worker may run
    cv_.wait(lock, [&] { return !ready_.empty() || done_; });
  }
  if (ready_.empty()) {  // the helper finished: the range is done, or it failed
    if (!status_.ok()) return status_;
    return ObjectReader::FileSpan{};
  }
  ObjectReader::FileSpan span = ready_.front();
  ready_.pop_front();
  cv_.notify_all();  // room for one more
  return span;
}

}  // namespace strata::object

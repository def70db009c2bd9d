#include "cuda/pinned_ring.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

namespace strata::cuda {

namespace {

// Makes `device` current for a scope and puts back the thread's previous one.
class DeviceScope {
 public:
  DeviceScope(Runtime& rt, int device) : rt_(rt) {
    if (rt_.GetDevice(&previous_) != cudaSuccess) previous_ = -1;
    status_ = rt_.Check(rt_.SetDevice(device), "cudaSetDevice");
  }
  ~DeviceScope() {
    if (previous_ >= 0) (void)rt_.SetDevice(previous_);
  }
  const Status& status() const { return status_; }

 private:
  Runtime& rt_;
  int previous_ = -1;
  Status status_;
};

constexpr unsigned kEventFlags = cudaEventDisableTiming | cudaEventBlockingSync;

}  // namespace

PinnedRing::PinnedRing(std::shared_ptr<Runtime> rt, const RingOptions& opts)
    : rt_(std::move(rt)), opts_(opts) {}

Result<std::unique_ptr<PinnedRing>> PinnedRing::Open(std::shared_ptr<Runtime> rt,
                                                     const RingOptions& opts) {
  if (opts.slot_bytes == 0 || opts.slots <= 0) {
    return InvalidArgument("pinned ring: slot_bytes and slots must be positive");
  }
  if (opts.device < 0) return InvalidArgument("pinned ring: negative device index");
  int count = 0;
  RETURN_IF_ERROR(rt->Check(rt->GetDeviceCount(&count), "cudaGetDeviceCount", Code::kUnavailable));
  if (opts.device >= count) {
    return Unavailable("CUDA device " + std::to_string(opts.device) + " does not exist (" +
                       std::to_string(count) + " device(s), runtime " + rt->path() + ")");
  }
  std::unique_ptr<PinnedRing> ring(new PinnedRing(std::move(rt), opts));
  Runtime& r = *ring->rt_;
  DeviceScope device(r, opts.device);
  RETURN_IF_ERROR(device.status());
  RETURN_IF_ERROR(r.Check(r.StreamCreateWithFlags(&ring->stream_, cudaStreamNonBlocking),
                          "cudaStreamCreateWithFlags"));
  RETURN_IF_ERROR(r.Check(r.EventCreateWithFlags(&ring->after_, kEventFlags),
                          "cudaEventCreateWithFlags"));
  ring->slots_.resize(static_cast<size_t>(opts.slots));
  for (Slot& s : ring->slots_) {
    RETURN_IF_ERROR(r.Check(r.EventCreateWithFlags(&s.done, kEventFlags),
                            "cudaEventCreateWithFlags"));
    RETURN_IF_ERROR(r.Check(r.HostAlloc(&s.host, opts.slot_bytes, cudaHostAllocDefault),
                            "cudaHostAlloc (pinned slot)", Code::kResourceExhausted));
  }
  return ring;
}

PinnedRing::~PinnedRing() {
  Runtime& r = *rt_;
  DeviceScope device(r, opts_.device);
  // Nothing may be freed under a copy still reading it. Errors here have nowhere to
  // go; a broken context frees what it can.
  if (stream_) (void)r.StreamSynchronize(stream_);
  for (Slot& s : slots_) {
    if (s.host) (void)r.FreeHost(s.host);
    if (s.done) (void)r.EventDestroy(s.done);
  }
  if (after_) (void)r.EventDestroy(after_);
  if (stream_) (void)r.StreamDestroy(stream_);
}

Status PinnedRing::Fail(Status s) {
  if (broken_.ok()) {
    broken_ = s;
    // Pieces queued before the error may still be running. Let them finish (or fail)
    // now, so that no copy writes into a caller's memory after an error was returned
    // and the caller freed it.
    (void)rt_->StreamSynchronize(stream_);
  }
  cv_.notify_all();
  return s;
}

Status PinnedRing::SyncSlot(std::unique_lock<std::mutex>& lock, Slot* slot, uint64_t ticket) {
  // The slot is marked busy by the caller: nobody refills or re-records it meanwhile.
  lock.unlock();
  Status st = rt_->Check(rt_->EventSynchronize(slot->done), "cudaEventSynchronize");
  lock.lock();
  if (!st.ok()) return Fail(st);
  completed_ = std::max(completed_, ticket);
  cv_.notify_all();
  return Status::OK();
}

Result<PinnedRing::Slot*> PinnedRing::Acquire(std::unique_lock<std::mutex>& lock) {
  for (;;) {
    if (!broken_.ok()) return broken_;
    // A slot whose piece is known complete (or never used) first; else the oldest one
    // in flight, waited for; else (all being filled by other callers) wait for one.
    Slot* pick = nullptr;
    Slot* oldest = nullptr;
    for (size_t i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[(next_ + i) % slots_.size()];
      if (s.busy) continue;
      if (s.ticket <= completed_) {
        pick = &s;
        break;
      }
      if (!oldest || s.ticket < oldest->ticket) oldest = &s;
    }
    if (pick) {
      pick->busy = true;
      next_ = static_cast<size_t>(pick - slots_.data() + 1) % slots_.size();
      return pick;
    }
    if (oldest) {
      oldest->busy = true;
      ++stats_.slot_waits;
      Status st = SyncSlot(lock, oldest, oldest->ticket);
      if (!st.ok()) {
        oldest->busy = false;
        return st;
      }
      next_ = static_cast<size_t>(oldest - slots_.data() + 1) % slots_.size();
      return oldest;
    }
    cv_.wait(lock);
  }
}

Result<uint64_t> PinnedRing::CopyToDevice(uintptr_t dst, const void* src, size_t n,
                                          std::optional<uintptr_t> after_stream) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!broken_.ok()) return broken_;
  if (n == 0) return uint64_t{0};
  Runtime& r = *rt_;
  // The device is per thread in the runtime API; callers come from any thread.
  DeviceScope device(r, opts_.device);
  if (!device.status().ok()) return Fail(device.status());
  if (after_stream) {
    auto* other = reinterpret_cast<cudaStream_t>(*after_stream);
    Status st = r.Check(r.EventRecord(after_, other), "cudaEventRecord (after_stream)");
    if (st.ok()) st = r.Check(r.StreamWaitEvent(stream_, after_, 0), "cudaStreamWaitEvent");
    if (!st.ok()) return Fail(st);
  }
  const auto* from = static_cast<const unsigned char*>(src);
  uint64_t last = 0;
  for (size_t off = 0; off < n; off += opts_.slot_bytes) {
    const size_t len = std::min(opts_.slot_bytes, n - off);
    ASSIGN_OR_RETURN(Slot * slot, Acquire(lock));
    lock.unlock();
    std::memcpy(slot->host, from + off, len);
    lock.lock();
    Status st = broken_;
    if (st.ok()) {
      st = r.Check(r.MemcpyAsync(reinterpret_cast<void*>(dst + off), slot->host, len,
                                 cudaMemcpyHostToDevice, stream_),
                   "cudaMemcpyAsync");
      if (st.ok()) st = r.Check(r.EventRecord(slot->done, stream_), "cudaEventRecord");
    }
    if (!st.ok()) {
      // The slot's event may now stand for nothing recorded: make it a slot whose last
      // piece is "complete" so nobody waits on it; the ring is broken anyway.
      slot->ticket = 0;
      slot->busy = false;
      return Fail(st);
    }
    slot->ticket = last = ++queued_;
    slot->busy = false;
    stats_.bytes += len;
    ++stats_.pieces;
    cv_.notify_all();
  }
  return last;
}

Status PinnedRing::Wait(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  if (ticket > queued_) return InvalidArgument("pinned ring: ticket " + std::to_string(ticket) +
                                               " was never handed out");
  for (;;) {
    if (!broken_.ok()) return broken_;
    if (ticket <= completed_) return Status::OK();
    // The oldest piece in flight at or after `ticket` whose slot nobody holds: once it
    // is done, so is `ticket` (stream order). If every such slot is held, its holder is
    // synchronising it; wait to hear.
    Slot* target = nullptr;
    for (Slot& s : slots_) {
      if (!s.busy && s.ticket >= ticket && s.ticket > completed_ &&
          (!target || s.ticket < target->ticket)) {
        target = &s;
      }
    }
    if (!target) {
      cv_.wait(lock);
      continue;
    }
    target->busy = true;
    const uint64_t t = target->ticket;
    Status st = SyncSlot(lock, target, t);
    target->busy = false;
    cv_.notify_all();
    if (!st.ok()) return st;
  }
}

Status PinnedRing::Synchronize() {
  uint64_t last;
  {
    std::lock_guard<std::mutex> lock(mu_);
    last = queued_;
  }
  return Wait(last);
}

RingStats PinnedRing::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace strata::cuda

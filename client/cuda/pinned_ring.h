// A ring of pinned (page-locked) host buffers that moves bytes from ordinary host
// memory into CUDA device memory with cudaMemcpyAsync: the loader's device="cuda"
// path (docs/model-loading.md, "Into GPU memory").
//
// A copy is cut into slot-sized pieces. Each piece is memcpy'd into a free slot,
// then queued on the ring's own non-blocking stream with cudaMemcpyAsync, and an
// event is recorded after it. A slot is refilled only after its event completes, so
// the host copy of one piece overlaps the DMA of the pieces before it, and the
// pinned memory in use is slots x slot_bytes whatever the checkpoint's size.
// (An asynchronous copy from pageable memory would be staged and synchronous
// inside the driver; that is what the ring avoids.)
//
// Thread-safe: several threads may copy at once; each fills its own slot without
// the lock, and the queueing onto the stream is serialised. Tickets are handed out
// in stream order, so a completed ticket means every smaller one is complete too.
// Every call leaves the calling thread's current CUDA device as it found it (the
// runtime API keeps one per thread; torch and vLLM rely on it). The events block
// (cudaEventBlockingSync): a thread waiting for a slot sleeps instead of spinning a
// core the network threads need.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "common/status.h"
#include "cuda/cuda_runtime.h"

namespace strata::cuda {

struct RingOptions {
  int device = 0;
  size_t slot_bytes = 8 << 20;
  int slots = 4;
};

struct RingStats {
  uint64_t bytes = 0;       // copied to the device
  uint64_t pieces = 0;      // cudaMemcpyAsync calls
  uint64_t slot_waits = 0;  // pieces that waited for a slot's earlier copy to finish
};

class PinnedRing {
 public:
  // Sets the device, creates the stream, the events and the pinned slots.
  // kUnavailable when the device does not exist (or no device/driver at all);
  // kInvalidArgument for a zero slot size or count.
  static Result<std::unique_ptr<PinnedRing>> Open(std::shared_ptr<Runtime> rt,
                                                  const RingOptions& opts);
  // Waits for every queued copy, then frees the slots, events and stream.
  ~PinnedRing();
  PinnedRing(const PinnedRing&) = delete;
  PinnedRing& operator=(const PinnedRing&) = delete;

  // Queues a copy of n bytes from host memory `src` to device address `dst`. When
  // `after_stream` is given (a cudaStream_t as an integer, e.g. torch's current
  // stream; 0 is the legacy default stream), the copy starts only after the work
  // queued on that stream so far: the destination may be memory that stream's
  // pending kernels still use. (The ring's own stream is non-blocking: without
  // after_stream it does not wait for the default stream either.) `src` may be
  // reused as soon as this returns. Returns the ticket of the copy's last piece (0
  // for n == 0). Blocks only while every slot's previous piece is still in flight.
  // After any CUDA error the ring is broken: every later call returns that error, and
  // nothing queued before it still runs once the error is returned.
  Result<uint64_t> CopyToDevice(uintptr_t dst, const void* src, size_t n,
                                std::optional<uintptr_t> after_stream = std::nullopt);
  // Returns once the copy with `ticket`, and every copy before it, has completed.
  Status Wait(uint64_t ticket);
  // Wait for everything queued so far.
  Status Synchronize();

  RingStats stats() const;
  const RingOptions& options() const { return opts_; }
  Runtime& runtime() const { return *rt_; }

 private:
  struct Slot {
    void* host = nullptr;
    cudaEvent_t done = nullptr;
    uint64_t ticket = 0;  // of the piece last queued from it; 0: never used
    bool busy = false;    // being filled or synchronised by one caller
  };
  PinnedRing(std::shared_ptr<Runtime> rt, const RingOptions& opts);
  Status Fail(Status s);  // records the first error, drains the stream; returns it
  // Takes a slot that may be refilled (its last piece done); blocks as needed.
  Result<Slot*> Acquire(std::unique_lock<std::mutex>& lock);
  Status SyncSlot(std::unique_lock<std::mutex>& lock, Slot* slot, uint64_t ticket);

  std::shared_ptr<Runtime> rt_;
  RingOptions opts_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t after_ = nullptr;  // recorded on an after_stream, waited on by stream_
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Slot> slots_;
  size_t next_ = 0;        // where Acquire looks first (round robin)
  uint64_t queued_ = 0;    // last ticket handed out
  uint64_t completed_ = 0; // every ticket <= this has completed
  Status broken_;
  RingStats stats_;
};

}  // namespace strata::cuda

// A stand-in for libcudart for the pinned ring's tests (no GPU here): the same C ABI,
// with "device memory" in host memory. Each stream (stream 0, the legacy default
// stream, too) is a thread that runs its queued operations in order, each copy after
// a configurable delay, so a ring that refilled a slot before its copy ran, or read a
// ticket as done too early, corrupts data the tests check. It also keeps count of what
// real CUDA would make slow or leak: asynchronous copies whose source is not pinned,
// and pinned blocks, streams and events still alive.
//
// Test control (looked up with dlsym on the loaded library):
//   fake_cudart_configure(devices, copy_delay_us, fail_copy_at, fail_async_at)
//     devices: what cudaGetDeviceCount reports (0: cudaErrorNoDevice); the current
//       device is per thread, as in the runtime;
//     fail_copy_at: the N-th cudaMemcpyAsync (1-based, counted from configure) returns
//       cudaErrorInvalidValue; fail_async_at: the N-th one fails on the "device" and the
//       next synchronisation on its stream reports cudaErrorLaunchFailure. 0: never.
//   fake_cudart_stats(FakeCudartStats*)
#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "cuda/cuda_api.h"
#include "cuda/testing/fake_cudart.h"

namespace {

constexpr int kInvalidValue = 1;
constexpr int kNoDevice = 100;
constexpr int kInvalidDevice = 101;
constexpr int kInvalidResourceHandle = 400;
constexpr int kLaunchFailure = 719;

struct Event {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;  // generation of the last record
  uint64_t reached = 0;   // generation the stream has run up to
  int error = 0;          // set when the stream failed before reaching it
};

struct Stream {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> ops;
  uint64_t queued = 0, done = 0;
  int error = 0;  // sticky asynchronous error
  bool stop = false;
  std::thread worker;
};

std::mutex g_mu;
int g_devices = 1;
thread_local int t_current_device = 0;  // per thread, as in the runtime API
int64_t g_delay_us = 0;
uint64_t g_fail_copy_at = 0, g_fail_async_at = 0, g_copy_calls = 0;
std::map<uintptr_t, size_t> g_pinned;  // start -> size
FakeCudartStats g_stats;

bool IsPinned(const void* p, size_t n) {
  auto a = reinterpret_cast<uintptr_t>(p);
  auto it = g_pinned.upper_bound(a);
  if (it == g_pinned.begin()) return false;
  --it;
  return a >= it->first && a + n <= it->first + it->second;
}

void Run(Stream* s);

// Stream 0, the legacy default stream: a stream like the others, made on first use
// and never destroyed (so not counted among the live streams).
Stream* DefaultStream() {
  static Stream* s = [] {
    auto* d = new Stream();
    d->worker = std::thread(Run, d);
    d->worker.detach();
    return d;
  }();
  return s;
}

Stream* StreamOf(cudaStream_t stream) {
  return stream ? reinterpret_cast<Stream*>(stream) : DefaultStream();
}

void Enqueue(Stream* s, std::function<void()> op) {
  std::lock_guard<std::mutex> lock(s->mu);
  s->ops.push_back(std::move(op));
  ++s->queued;
  s->cv.notify_all();
}

void Run(Stream* s) {
  std::unique_lock<std::mutex> lock(s->mu);
  for (;;) {
    s->cv.wait(lock, [&] { return s->stop || !s->ops.empty(); });
    if (s->ops.empty()) return;
    auto op = std::move(s->ops.front());
    s->ops.pop_front();
    lock.unlock();
    op();
    lock.lock();
    ++s->done;
    s->cv.notify_all();
  }
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void fake_cudart_configure(int devices,
                                                                  int64_t copy_delay_us,
                                                                  uint64_t fail_copy_at,
                                                                  uint64_t fail_async_at) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_devices = devices;
  g_delay_us = copy_delay_us;
  g_fail_copy_at = fail_copy_at;
  g_fail_async_at = fail_async_at;
  g_copy_calls = 0;
}

__attribute__((visibility("default"))) void fake_cudart_stats(FakeCudartStats* out) {
  std::lock_guard<std::mutex> lock(g_mu);
  *out = g_stats;
}

cudaError_t cudaGetDeviceCount(int* count) {
  std::lock_guard<std::mutex> lock(g_mu);
  *count = g_devices;
  return static_cast<cudaError_t>(g_devices == 0 ? kNoDevice : 0);
}

cudaError_t cudaSetDevice(int device) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_devices == 0) return static_cast<cudaError_t>(kNoDevice);
  if (device < 0 || device >= g_devices) return static_cast<cudaError_t>(kInvalidDevice);
  t_current_device = device;
  return static_cast<cudaError_t>(0);
}

cudaError_t cudaGetDevice(int* device) {
  *device = t_current_device;
  return static_cast<cudaError_t>(0);
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (static_cast<int>(error)) {
    case 0: return "no error";
    case kInvalidValue: return "invalid argument";
    case kNoDevice: return "no CUDA-capable device is detected";
    case kInvalidDevice: return "invalid device ordinal";
    case kInvalidResourceHandle: return "invalid resource handle";
    case kLaunchFailure: return "unspecified launch failure";
    default: return "unrecognized error code";
  }
}

cudaError_t cudaHostAlloc(void** host, size_t size, unsigned int flags) {
  void* p = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
  if (!p) return static_cast<cudaError_t>(2);  // cudaErrorMemoryAllocation
  std::lock_guard<std::mutex> lock(g_mu);
  g_pinned[reinterpret_cast<uintptr_t>(p)] = size;
  ++g_stats.pinned_live;
  *host = p;
  return static_cast<cudaError_t>(0);
}

cudaError_t cudaFreeHost(void* ptr) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_pinned.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_pinned.end()) return static_cast<cudaError_t>(kInvalidValue);
  g_pinned.erase(it);
  --g_stats.pinned_live;
  std::free(ptr);
  return static_cast<cudaError_t>(0);
}

cudaError_t cudaMalloc(void** dev, size_t size) {
  *dev = std::malloc(size ? size : 1);
  return static_cast<cudaError_t>(*dev ? 0 : 2);
}

cudaError_t cudaFree(void* dev) {
  std::free(dev);
  return static_cast<cudaError_t>(0);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
  std::memcpy(dst, src, count);
  return static_cast<cudaError_t>(0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  auto* s = new Stream();
  s->worker = std::thread(Run, s);
  {
    std::lock_guard<std::mutex> lock(g_mu);
    ++g_stats.streams_live;
  }
  *stream = reinterpret_cast<cudaStream_t>(s);
  return static_cast<cudaError_t>(0);
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  Stream* s = StreamOf(stream);
  std::unique_lock<std::mutex> lock(s->mu);
  const uint64_t want = s->queued;
  s->cv.wait(lock, [&] { return s->done >= want; });
  return static_cast<cudaError_t>(s->error);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  auto* s = reinterpret_cast<Stream*>(stream);
  if (!s) return static_cast<cudaError_t>(kInvalidResourceHandle);  // stream 0 is not destroyed
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->stop = true;
    s->cv.notify_all();
  }
  s->worker.join();
  delete s;
  std::lock_guard<std::mutex> lock(g_mu);
  --g_stats.streams_live;
  return static_cast<cudaError_t>(0);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream) {
  Stream* s = StreamOf(stream);
  bool fail_async = false;
  int64_t delay;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    ++g_copy_calls;
    if (g_fail_copy_at != 0 && g_copy_calls == g_fail_copy_at) {
      return static_cast<cudaError_t>(kInvalidValue);
    }
    fail_async = g_fail_async_at != 0 && g_copy_calls == g_fail_async_at;
    if (kind != cudaMemcpyHostToDevice) return static_cast<cudaError_t>(kInvalidValue);
    ++g_stats.async_copies;
    g_stats.async_bytes += count;
    if (!IsPinned(src, count)) ++g_stats.pageable_async_copies;
    delay = g_delay_us;
  }
  {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->error) return static_cast<cudaError_t>(s->error);
  }
  Enqueue(s, [=] {
    if (delay > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay));
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->error) return;
    if (fail_async) {
      s->error = kLaunchFailure;
      return;
    }
    std::memcpy(dst, src, count);
  });
  return static_cast<cudaError_t>(0);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  *event = reinterpret_cast<cudaEvent_t>(new Event());
  std::lock_guard<std::mutex> lock(g_mu);
  ++g_stats.events_live;
  return static_cast<cudaError_t>(0);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!event) return static_cast<cudaError_t>(kInvalidResourceHandle);
  delete reinterpret_cast<Event*>(event);
  std::lock_guard<std::mutex> lock(g_mu);
  --g_stats.events_live;
  return static_cast<cudaError_t>(0);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  auto* e = reinterpret_cast<Event*>(event);
  Stream* s = StreamOf(stream);
  if (!e) return static_cast<cudaError_t>(kInvalidResourceHandle);
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    gen = ++e->recorded;
  }
  Enqueue(s, [=] {
    int err;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      err = s->error;
    }
    std::lock_guard<std::mutex> lock(e->mu);
    e->reached = std::max(e->reached, gen);
    e->error = err;
    e->cv.notify_all();
  });
  return static_cast<cudaError_t>(0);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  auto* e = reinterpret_cast<Event*>(event);
  if (!e) return static_cast<cudaError_t>(kInvalidResourceHandle);
  std::unique_lock<std::mutex> lock(e->mu);
  const uint64_t want = e->recorded;
  e->cv.wait(lock, [&] { return e->reached >= want; });
  return static_cast<cudaError_t>(e->error);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  auto* e = reinterpret_cast<Event*>(event);
  Stream* s = StreamOf(stream);
  if (!e) return static_cast<cudaError_t>(kInvalidResourceHandle);
  uint64_t want;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    want = e->recorded;
  }
  Enqueue(s, [=] {
    std::unique_lock<std::mutex> lock(e->mu);
    e->cv.wait(lock, [&] { return e->reached >= want; });
  });
  return static_cast<cudaError_t>(0);
}

}  // extern "C"

// The test-control interface of the fake CUDA runtime (fake_cudart.cc).
#pragma once

#include <cstdint>

extern "C" {
struct FakeCudartStats {
  int64_t pinned_live = 0;   // cudaHostAlloc'd blocks not yet freed
  int64_t streams_live = 0;
  int64_t events_live = 0;
  uint64_t async_copies = 0;
  uint64_t async_bytes = 0;
  uint64_t pageable_async_copies = 0;  // cudaMemcpyAsync from memory not cudaHostAlloc'd
};
typedef void (*FakeCudartConfigureFn)(int devices, int64_t copy_delay_us, uint64_t fail_copy_at,
                                      uint64_t fail_async_at);
typedef void (*FakeCudartStatsFn)(FakeCudartStats* out);
}

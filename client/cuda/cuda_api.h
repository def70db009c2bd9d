// The CUDA runtime API, as far as the pinned-buffer ring uses it.
//
// With the CUDA toolkit present at configure time (STRATA_CUDA_HEADERS, set by
// client/cuda/CMakeLists.txt when it finds nvcc and cuda_runtime_api.h), these are
// the toolkit's own declarations, so the function types the ring looks up with
// dlsym are checked against the real ones by the compiler. Without it, the few
// declarations below stand in; they follow the CUDA runtime's C ABI, which has kept
// these functions' signatures and these constants' values from CUDA 10 to 13.
//
// Nothing here is ever linked against: the ring finds the runtime with dlopen at run
// time (cuda_runtime.cc), so one build serves machines with and without CUDA and
// shares the runtime a process (torch) has already loaded.
#pragma once

#include <cstddef>

#if defined(STRATA_CUDA_HEADERS)
#include <cuda_runtime_api.h>
#else
extern "C" {
typedef int cudaError_t;
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaHostAlloc(void** host, size_t size, unsigned int flags);
cudaError_t cudaFreeHost(void* ptr);
cudaError_t cudaMalloc(void** dev, size_t size);
cudaError_t cudaFree(void* dev);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
}
#define cudaSuccess 0
#define cudaHostAllocDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#endif

// The CUDA runtime, found at run time with dlopen: a table of the functions the
// pinned-buffer ring (pinned_ring.h) and its checks call.
//
// Where it is looked for, first match wins:
//   1. the path given (RingOptions::runtime, strata_cuda.Ring(runtime=...));
//   2. $STRATA_CUDART;
//   3. a libcudart this process has already loaded (torch's, say), by soname:
//      libcudart.so.13, .so.12, .so.11.0, libcudart.so;
//   4. the same names through the dynamic loader's search path;
//   5. /usr/local/cuda/lib64 and /usr/local/cuda/lib.
// Step 3 comes before 4 so that the ring and torch share one runtime and one
// context instead of loading a second copy.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "cuda/cuda_api.h"

namespace strata::cuda {

class Runtime {
 public:
  // `path` empty: the search above. Unavailable when no runtime loads, or when the
  // one that loads lacks a function; the message names each path tried.
  static Result<std::shared_ptr<Runtime>> Load(const std::string& path);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // The file the runtime was loaded from (as dlopen was given it).
  const std::string& path() const { return path_; }

  // OK for cudaSuccess; otherwise `code` (kUnavailable for "no device" and "no or
  // old driver", kInternal for the rest) with "<what>: <cudaGetErrorString> (<err>)".
  Status Check(cudaError_t err, const char* what, Code code = Code::kInternal) const;

  decltype(&::cudaGetDeviceCount) GetDeviceCount = nullptr;
  decltype(&::cudaSetDevice) SetDevice = nullptr;
  decltype(&::cudaGetDevice) GetDevice = nullptr;
  decltype(&::cudaGetErrorString) GetErrorString = nullptr;
  decltype(&::cudaHostAlloc) HostAlloc = nullptr;
  decltype(&::cudaFreeHost) FreeHost = nullptr;
  decltype(&::cudaMalloc) Malloc = nullptr;
  decltype(&::cudaFree) Free = nullptr;
  decltype(&::cudaMemcpy) Memcpy = nullptr;
  decltype(&::cudaMemcpyAsync) MemcpyAsync = nullptr;
  decltype(&::cudaStreamCreateWithFlags) StreamCreateWithFlags = nullptr;
  decltype(&::cudaStreamDestroy) StreamDestroy = nullptr;
  decltype(&::cudaStreamSynchronize) StreamSynchronize = nullptr;
  decltype(&::cudaStreamWaitEvent) StreamWaitEvent = nullptr;
  decltype(&::cudaEventCreateWithFlags) EventCreateWithFlags = nullptr;
  decltype(&::cudaEventDestroy) EventDestroy = nullptr;
  decltype(&::cudaEventRecord) EventRecord = nullptr;
  decltype(&::cudaEventSynchronize) EventSynchronize = nullptr;

 private:
  Runtime() = default;
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace strata::cuda

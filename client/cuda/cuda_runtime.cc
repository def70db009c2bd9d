#include "cuda/cuda_runtime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace strata::cuda {
namespace {

const char* const kSonames[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
                                "libcudart.so"};
const char* const kToolkitPaths[] = {"/usr/local/cuda/lib64/libcudart.so",
                                     "/usr/local/cuda/lib/libcudart.so"};

// cudaErrorInsufficientDriver (35), cudaErrorNoDevice (100), cudaErrorInvalidDevice (101):
// what a machine without a usable GPU answers.
bool NoDevice(cudaError_t err) {
  const int e = static_cast<int>(err);
  return e == 35 || e == 100 || e == 101;
}

template <typename F>
bool Bind(void* handle, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  if (!fn) missing += missing.empty() ? name : std::string(", ") + name;
  return fn != nullptr;
}

}  // namespace

Runtime::~Runtime() {
  if (handle_) dlclose(handle_);
}

Result<std::shared_ptr<Runtime>> Runtime::Load(const std::string& path) {
  std::vector<std::pair<std::string, int>> tries;  // (name, dlopen flags)
  const bool searching = path.empty() && !(std::getenv("STRATA_CUDART") && *std::getenv("STRATA_CUDART"));
  if (!path.empty()) {
    tries.emplace_back(path, RTLD_NOW | RTLD_LOCAL);
  } else if (const char* env = std::getenv("STRATA_CUDART"); env && *env) {
    tries.emplace_back(env, RTLD_NOW | RTLD_LOCAL);
  } else {
    for (const char* s : kSonames) tries.emplace_back(s, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    for (const char* s : kSonames) tries.emplace_back(s, RTLD_NOW | RTLD_LOCAL);
    for (const char* s : kToolkitPaths) tries.emplace_back(s, RTLD_NOW | RTLD_LOCAL);
  }
  std::string why;
  for (const auto& [name, flags] : tries) {
    void* h = dlopen(name.c_str(), flags);
    if (!h) {
      if (!(flags & RTLD_NOLOAD)) {
        const char* e = dlerror();
        why += "\n  " + (e ? std::string(e) : name + ": not loadable");
      }
      continue;
    }
    std::shared_ptr<Runtime> rt(new Runtime());
    rt->handle_ = h;
    rt->path_ = name;
    std::string missing;
    Bind(h, "cudaGetDeviceCount", rt->GetDeviceCount, missing);
    Bind(h, "cudaSetDevice", rt->SetDevice, missing);
    Bind(h, "cudaGetDevice", rt->GetDevice, missing);
    Bind(h, "cudaGetErrorString", rt->GetErrorString, missing);
    Bind(h, "cudaHostAlloc", rt->HostAlloc, missing);
    Bind(h, "cudaFreeHost", rt->FreeHost, missing);
    Bind(h, "cudaMalloc", rt->Malloc, missing);
    Bind(h, "cudaFree", rt->Free, missing);
    Bind(h, "cudaMemcpy", rt->Memcpy, missing);
    Bind(h, "cudaMemcpyAsync", rt->MemcpyAsync, missing);
    Bind(h, "cudaStreamCreateWithFlags", rt->StreamCreateWithFlags, missing);
    Bind(h, "cudaStreamDestroy", rt->StreamDestroy, missing);
    Bind(h, "cudaStreamSynchronize", rt->StreamSynchronize, missing);
    Bind(h, "cudaStreamWaitEvent", rt->StreamWaitEvent, missing);
    Bind(h, "cudaEventCreateWithFlags", rt->EventCreateWithFlags, missing);
    Bind(h, "cudaEventDestroy", rt->EventDestroy, missing);
    Bind(h, "cudaEventRecord", rt->EventRecord, missing);
    Bind(h, "cudaEventSynchronize", rt->EventSynchronize, missing);
    if (!missing.empty()) {
      // A file given by name that is not a CUDA runtime is an error of its own; in the
      // search, go on to the next candidate.
      why += "\n  " + name + ": not a CUDA runtime (no " + missing + ")";
      continue;  // rt's destructor closes the handle
    }
    if (searching) {
      // A runtime newer than the driver (libcudart.so.13 under a CUDA 12 driver) answers
      // every call with cudaErrorInsufficientDriver: try an older one.
      int count = 0;
      if (const cudaError_t e = rt->GetDeviceCount(&count); static_cast<int>(e) == 35) {
        why += "\n  " + name + ": " + rt->Check(e, "cudaGetDeviceCount").message();
        continue;
      }
    }
    return rt;
  }
  return Unavailable("no usable CUDA runtime (libcudart) was found; tried:" + why +
                     "\n  (set STRATA_CUDART to its path)");
}

Status Runtime::Check(cudaError_t err, const char* what, Code code) const {
  if (err == cudaSuccess) return Status::OK();
  const char* text = GetErrorString ? GetErrorString(err) : nullptr;
  std::string msg = std::string(what) + ": " + (text ? text : "CUDA error") + " (" +
                    std::to_string(static_cast<int>(err)) + ", runtime " + path_ + ")";
  return Status(NoDevice(err) ? Code::kUnavailable : code, msg);
}

}  // namespace strata::cuda

// Python binding of the pinned-buffer ring (client/cuda/pinned_ring.h): module
// `strata_cuda`, used by strata.loader for device="cuda".
//
//   ring = strata_cuda.Ring(device=0, slot_mib=8, slots=4, runtime="")
//   t = ring.copy(dst_ptr, host_buffer, after_stream=None)   # GIL released
//   ring.wait(t); ring.synchronize(); ring.stats(); ring.runtime_path
//
// dst_ptr is a device address (torch: tensor.data_ptr()); host_buffer any C-contiguous
// buffer-protocol object (mmap, bytearray, memoryview slice). after_stream, when not
// None, is a cudaStream_t as an int (torch: torch.cuda.current_stream().cuda_stream;
// 0 is the default stream) whose queued work the copy waits for. For checks
// and benchmarks without torch: device_alloc / device_free / read_back.
// Failures raise strata_cuda.Error (.code: "unavailable", "invalid_argument", ...);
// strata_cuda.Unavailable, a subclass, when there is no runtime, driver or device.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>

#include "cuda/pinned_ring.h"

namespace py = pybind11;
using strata::Code;
using strata::Status;
using strata::cuda::PinnedRing;
using strata::cuda::RingOptions;
using strata::cuda::Runtime;

namespace {

PyObject* g_error = nullptr;
PyObject* g_unavailable = nullptr;

const char* ErrorCodeName(Code c) {
  switch (c) {
    case Code::kUnavailable: return "unavailable";
    case Code::kInvalidArgument: return "invalid_argument";
    case Code::kResourceExhausted: return "resource_exhausted";
    default: return "internal";
  }
}

[[noreturn]] void Raise(const Status& s) {
  PyObject* type = s.code() == Code::kUnavailable ? g_unavailable : g_error;
  py::object exc = py::reinterpret_borrow<py::object>(type)(s.message());
  exc.attr("code") = ErrorCodeName(s.code());
  PyErr_SetObject(type, exc.ptr());
  throw py::error_already_set();
}

void Check(const Status& s) {
  if (!s.ok()) Raise(s);
}

// A contiguous byte view of a buffer-protocol object, held for one call.
struct Bytes {
  py::buffer_info info;
  const void* ptr;
  size_t len;
  explicit Bytes(const py::buffer& b, bool writable = false) : info(b.request(writable)) {
    ssize_t expect = info.itemsize;
    for (ssize_t i = info.ndim - 1; i >= 0; --i) {
      if (info.strides[i] != expect) throw py::value_error("buffer is not C-contiguous");
      expect *= info.shape[i];
    }
    ptr = info.ptr;
    len = static_cast<size_t>(info.size * info.itemsize);
  }
};

class PyRing {
 public:
  PyRing(int device, double slot_mib, int slots, const std::string& runtime) {
    auto rt = Runtime::Load(runtime);
    Check(rt.status());
    RingOptions o;
    o.device = device;
    if (!(slot_mib > 0) || slot_mib > 4096) throw py::value_error("slot_mib must be in (0, 4096]");
    o.slot_bytes = static_cast<size_t>(slot_mib * (1 << 20));
    if (o.slot_bytes == 0) o.slot_bytes = 1;
    o.slots = slots;
    auto ring = PinnedRing::Open(*rt, o);
    Check(ring.status());
    ring_ = std::move(*ring);
  }
  // A reference for one call: close() from another thread while this call runs with the
  // GIL released leaves the ring alive until the call is done.
  std::shared_ptr<PinnedRing> ring() const {
    if (!ring_) throw py::value_error("the ring is closed");
    return ring_;
  }
  std::shared_ptr<PinnedRing> ring_;
};

}  // namespace

PYBIND11_MODULE(strata_cuda, m) {
  m.doc() = "strata's pinned-buffer ring for host-to-GPU copies (client/cuda/pinned_ring.h)";
  g_error = PyErr_NewExceptionWithDoc("strata_cuda.Error", "A CUDA call of the ring failed; "
                                      ".code says how", PyExc_RuntimeError, nullptr);
  if (!g_error) throw py::error_already_set();
  g_unavailable = PyErr_NewExceptionWithDoc("strata_cuda.Unavailable",
                                            "No CUDA runtime, driver or device", g_error, nullptr);
  if (!g_unavailable) throw py::error_already_set();
  m.attr("Error") = py::reinterpret_borrow<py::object>(g_error);
  m.attr("Unavailable") = py::reinterpret_borrow<py::object>(g_unavailable);

  py::class_<PyRing>(m, "Ring")
      .def(py::init<int, double, int, const std::string&>(), py::arg("device") = 0,
           py::arg("slot_mib") = 8.0, py::arg("slots") = 4, py::arg("runtime") = "")
      .def(
          "copy",
          [](PyRing& self, uintptr_t dst, const py::buffer& src,
             std::optional<uintptr_t> after_stream) {
            std::shared_ptr<PinnedRing> rp = self.ring();
            PinnedRing& r = *rp;
            Bytes b(src);
            strata::Result<uint64_t> t = uint64_t{0};
            {
              py::gil_scoped_release unlocked;
              t = r.CopyToDevice(dst, b.ptr, b.len, after_stream);
            }
            Check(t.status());
            return *t;
          },
          py::arg("dst"), py::arg("src"), py::arg("after_stream") = py::none(),
          "Queue a copy of `src` to device address `dst`; returns its ticket. `src` may be "
          "reused once this returns.")
      .def(
          "wait",
          [](PyRing& self, uint64_t ticket) {
            std::shared_ptr<PinnedRing> rp = self.ring();
            PinnedRing& r = *rp;
            Status st;
            {
              py::gil_scoped_release unlocked;
              st = r.Wait(ticket);
            }
            Check(st);
          },
          py::arg("ticket"), "Return once that copy and every earlier one are done.")
      .def("synchronize",
           [](PyRing& self) {
             std::shared_ptr<PinnedRing> rp = self.ring();
            PinnedRing& r = *rp;
             Status st;
             {
               py::gil_scoped_release unlocked;
               st = r.Synchronize();
             }
             Check(st);
           })
      .def("stats",
           [](PyRing& self) {
             auto s = self.ring()->stats();
             py::dict d;
             d["bytes"] = s.bytes;
             d["pieces"] = s.pieces;
             d["slot_waits"] = s.slot_waits;
             return d;
           })
      .def_property_readonly("runtime_path",
                             [](PyRing& self) { return self.ring()->runtime().path(); })
      .def("close",
           [](PyRing& self) {
             std::shared_ptr<PinnedRing> last = std::move(self.ring_);
             py::gil_scoped_release unlocked;
             last.reset();  // waits for queued copies, unless a call still holds it
           })
      .def(
          "device_alloc",
          [](PyRing& self, size_t n) {
            auto rp = self.ring();
            Runtime& rt = rp->runtime();
            void* p = nullptr;
            Check(rt.Check(rt.Malloc(&p, n), "cudaMalloc", Code::kResourceExhausted));
            return reinterpret_cast<uintptr_t>(p);
          },
          py::arg("nbytes"), "cudaMalloc, for checks and benchmarks without torch")
      .def(
          "device_free",
          [](PyRing& self, uintptr_t p) {
            auto rp = self.ring();
            Runtime& rt = rp->runtime();
            Check(rt.Check(rt.Free(reinterpret_cast<void*>(p)), "cudaFree"));
          },
          py::arg("ptr"))
      .def(
          "read_back",
          [](PyRing& self, uintptr_t src, const py::buffer& dst) {
            std::shared_ptr<PinnedRing> rp = self.ring();
            PinnedRing& r = *rp;
            Bytes b(dst, /*writable=*/true);
            Status st;
            {
              py::gil_scoped_release unlocked;
              st = r.Synchronize();
              if (st.ok()) {
                st = r.runtime().Check(r.runtime().Memcpy(const_cast<void*>(b.ptr),
                                                          reinterpret_cast<void*>(src), b.len,
                                                          cudaMemcpyDeviceToHost),
                                       "cudaMemcpy (device to host)");
              }
            }
            Check(st);
          },
          py::arg("src"), py::arg("dst"),
          "Copy device memory at `src` back into `dst` (synchronously), for checks");
}

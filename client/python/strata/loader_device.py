"""Where a load's tensors go when they are not for the CPU (docs/model-loading.md, "Into GPU
memory").

Two ways, picked by `transfer`:
  "ring"  each group of tensors (~64 MiB, all its bytes in) is copied to the device by the
          C++ pinned-buffer ring (the `strata_cuda` module, client/cuda/pinned_ring.h):
          memcpy into a few pinned slots, cudaMemcpyAsync from them on the ring's own
          stream, one call per group, queued by the worker thread that received the group's
          last range while the other workers go on receiving. The group lands in one device
          buffer; its tensors are views of it. The host buffer is let go as soon as the
          group's tensors are handed out.
  "to"    each tensor is moved with torch's .to(device) (a pageable, synchronous copy per
          tensor), for devices the ring does not serve (not CUDA) or when it cannot open.
  "auto"  (the default) "ring" for a CUDA device when the ring opens, else "to" with a warning
          saying why.
The CUDA runtime is the one torch has loaded, or $STRATA_CUDART (client/cuda/cuda_runtime.h).
"""
import threading
import warnings

from strata.loader_sources import LoadError


class ToDevice:
    """Per tensor .to(device): what the loader always did."""

    name = "to"

    def __init__(self, torch, device):
        self.torch, self.device = torch, device

    def group_ready(self, group):
        pass

    def drain(self):
        pass

    def place(self, group, tensors):
        """`tensors`: (name, CPU tensor over the group's host buffer) in order."""
        return [(name, x.to(self.device)) for name, x in tensors]


class RingToDevice:
    """Group copies through the pinned ring. `device` is a torch device; a CPU device is only
    useful with a stand-in runtime whose "device memory" is host memory (the tests' fake)."""

    name = "ring"

    def __init__(self, torch, device, *, runtime="", slot_mib=8, slots=4):
        try:
            import strata_cuda
        except ImportError as e:
            raise LoadError(f"the pinned ring needs the strata_cuda module (build/client/python "
                            f"on PYTHONPATH): {e}") from None
        self.torch = torch
        self.device = torch.device(device)
        if self.device.type != "cuda" and not runtime:
            raise LoadError(f"the pinned ring copies to CUDA devices, not {self.device}")
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise LoadError(f"the pinned ring for {self.device} did not open: this torch sees "
                            "no CUDA device (torch.cuda.is_available() is False)")
        index = self.device.index
        if index is None:
            index = torch.cuda.current_device() if self.device.type == "cuda" else 0
        if self.device.type == "cuda":
            # Explicit: the worker threads that allocate have their own current device.
            self.device = torch.device("cuda", index)
            # The consumer's stream, taken on the consumer's thread: device buffers are
            # allocated for it and each copy waits for the work already queued on it.
            self._stream = torch.cuda.current_stream(self.device)
        else:
            self._stream = None
        try:
            self.ring = strata_cuda.Ring(device=index, slot_mib=slot_mib, slots=slots,
                                         runtime=runtime)
        except strata_cuda.Error as e:
            raise LoadError(f"the pinned ring for {self.device} did not open: {e}") from None
        self._error = strata_cuda.Error
        self._closed = False
        self._lock = threading.Lock()
        self._in_flight = {}  # id(group) -> its device buffer, until its copy was waited for

    def drain(self):
        """Waits for every queued copy; only then may the device buffers they write into go
        back to torch's allocator (a load that failed or was abandoned midway)."""
        if self._closed:
            return
        try:
            self.ring.synchronize()
        except self._error:
            pass  # broken: its stream was drained when it broke
        finally:
            with self._lock:
                self._in_flight.clear()

    def close(self):
        if self._closed:
            return
        self.drain()
        self._closed = True
        self.ring.close()

    def _empty(self, n):
        if self._stream is None:
            return self.torch.empty(n, dtype=self.torch.uint8, device=self.device)
        with self.torch.cuda.stream(self._stream):  # allocated for the consumer's stream
            return self.torch.empty(n, dtype=self.torch.uint8, device=self.device)

    def group_ready(self, group):
        """In the worker thread that received the group's last range: queue its copy."""
        n = group.end - group.start
        group.device_buffer = self._empty(n)
        if n == 0:
            group.ticket = 0
            return
        with self._lock:
            self._in_flight[id(group)] = group.device_buffer
        try:
            # The buffer comes from torch's caching allocator and may be memory that work
            # queued on the consumer's stream still reads: the copy starts after that work.
            group.ticket = self.ring.copy(
                group.device_buffer.data_ptr(), memoryview(group.buffer)[:n],
                None if self._stream is None else self._stream.cuda_stream)
        except self._error as e:
            raise LoadError(f"{group.shard.key}: copy to {self.device} failed: {e}") from None

    def place(self, group, specs):
        """`specs`: (tensor info, torch dtype) of the group's tensors, in order. Returns
        (name, device tensor) once the group's copy is done."""
        torch = self.torch
        try:
            self.ring.wait(group.ticket)
        except self._error as e:
            raise LoadError(f"{group.shard.key}: copy to {self.device} failed: {e}") from None
        with self._lock:
            self._in_flight.pop(id(group), None)
        buf = group.device_buffer
        base = group.shard.header.data_start - group.start
        out = []
        for t, dt in specs:
            lo, hi = base + t.begin, base + t.end
            if hi == lo:
                out.append((t.name, torch.empty(t.shape, dtype=dt, device=self.device)))
                continue
            piece = buf[lo:hi]
            if lo % torch.empty(0, dtype=dt).element_size():
                piece = piece.clone()  # a view of another dtype needs an aligned offset
            out.append((t.name, piece.view(dt).reshape(t.shape)))
        group.device_buffer = None
        return out


def open_transfer(torch, device, transfer):
    """The ToDevice / RingToDevice for a load to `device`, or None for the CPU. `transfer`
    may also be such an object (a test's ring over a stand-in runtime)."""
    if not isinstance(transfer, str):
        return transfer
    if transfer not in ("auto", "ring", "to"):
        raise ValueError(f"transfer must be 'auto', 'ring' or 'to', not {transfer!r}")
    dev = torch.device(device)
    if dev.type == "cpu" and transfer != "ring":
        return None
    if transfer == "to" or (transfer == "auto" and dev.type != "cuda"):
        return ToDevice(torch, dev)
    try:
        return RingToDevice(torch, dev)
    except LoadError as e:
        if transfer == "ring":
            raise
        warnings.warn(f"strata.loader: {e}; moving tensors with .to({dev}) instead",
                      RuntimeWarning, stacklevel=3)
        return ToDevice(torch, dev)

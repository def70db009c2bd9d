#!/usr/bin/python3
"""Host-to-GPU copies: the pinned-buffer ring against the machine's own limits, same run,
medians (issue 16; docs/model-loading.md, "Into GPU memory"). Needs a CUDA device; no torch.

    bench/cuda_ring_bench.py --build build [--size-mib 4096] [--runs 5] [--slot-mib 8 --slots 4]

The source is what the loader copies from: page-aligned anonymous mappings of 64 MiB (its
group buffers, pageable, already faulted in). Cases, interleaved:
  pinned limit    cudaMemcpy from one cudaHostAlloc'd buffer: what PCIe / the copy engine
                  give (the ring cannot beat it)
  pageable        cudaMemcpy of each 64 MiB group straight from the pageable mapping: what a
                  plain synchronous copy (torch's .to() of a CPU tensor) does
  ring            strata_cuda.Ring.copy of each group, one wait at the end; and from 4
                  threads at once, as the loader's workers call it
  host memcpy     memcpy of the groups into one pinned buffer (the ring's host-side step)
Every run's bytes on the device are read back in part and checked. With a stand-in runtime
($STRATA_CUDART pointing at libstrata_fake_cudart.so) it runs anywhere, figures meaningless.
"""
import argparse
import ctypes
import mmap
import os
import statistics
import sys
import time

GROUP = 64 << 20


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build", help="the build directory (client/python)")
    p.add_argument("--size-mib", type=int, default=4096)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--slot-mib", type=float, default=8)
    p.add_argument("--slots", type=int, default=4)
    p.add_argument("--device", type=int, default=0)
    a = p.parse_args()
    sys.path.insert(0, os.path.join(a.build, "client", "python"))
    import strata_cuda

    ring = strata_cuda.Ring(device=a.device, slot_mib=a.slot_mib, slots=a.slots)
    rt = ctypes.CDLL(ring.runtime_path)
    rt.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    rt.cudaHostAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_uint]
    rt.cudaFreeHost.argtypes = [ctypes.c_void_p]

    groups = max(1, (a.size_mib << 20) // GROUP)
    total = groups * GROUP
    bufs = []
    for g in range(groups):
        m = mmap.mmap(-1, GROUP, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if hasattr(mmap, "MADV_HUGEPAGE"):
            m.madvise(mmap.MADV_HUGEPAGE)
        pattern = bytes((g * 7 + i) & 0xFF for i in range(4096))
        for off in range(0, GROUP, 4096):
            m[off:off + 4096] = pattern
        bufs.append(m)
    addr = [ctypes.addressof(ctypes.c_char.from_buffer(m)) for m in bufs]
    dev = ring.device_alloc(total)
    pinned = ctypes.c_void_p()
    if rt.cudaHostAlloc(ctypes.byref(pinned), GROUP, 0) != 0:
        sys.exit("cudaHostAlloc failed")

    def check():
        back = bytearray(4096)
        for g in (0, groups // 2, groups - 1):
            ring.read_back(dev + g * GROUP + GROUP - 4096, back)
            if bytes(back) != bytes(bufs[g][GROUP - 4096:]):
                sys.exit(f"verification failed: group {g} differs on the device")

    def timed(fn):
        t0 = time.perf_counter()
        fn()
        return total / (time.perf_counter() - t0)

    def pinned_limit():
        for g in range(groups):
            if rt.cudaMemcpy(dev + g * GROUP, pinned.value, GROUP, 1) != 0:
                sys.exit("cudaMemcpy failed")

    def pageable():
        for g in range(groups):
            if rt.cudaMemcpy(dev + g * GROUP, addr[g], GROUP, 1) != 0:
                sys.exit("cudaMemcpy failed")

    def ringed():
        t = 0
        for g in range(groups):
            t = ring.copy(dev + g * GROUP, bufs[g])
        ring.wait(t)

    def ringed_threads(n=4):
        # As the loader calls it: each worker thread queues the groups it finished.
        import threading
        tickets = [0] * n

        def worker(i):
            for g in range(i, groups, n):
                tickets[i] = ring.copy(dev + g * GROUP, bufs[g])
        ts = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        ring.wait(max(tickets))

    def host_memcpy():
        for g in range(groups):
            ctypes.memmove(pinned.value, addr[g], GROUP)

    cases = {"pinned limit (cudaMemcpy from pinned)": pinned_limit,
             "pageable cudaMemcpy per 64 MiB group": pageable,
             f"ring ({a.slots} x {a.slot_mib:g} MiB slots)": ringed,
             "ring, 4 threads copying": ringed_threads,
             "host memcpy into pinned (1 core)": host_memcpy}
    figures = {n: [] for n in cases}
    print(f"{total / 1e9:.2f} GB in {groups} groups of 64 MiB; device {a.device}; runtime "
          f"{ring.runtime_path}; {a.runs} runs, interleaved", flush=True)
    for _ in range(a.runs):
        for n, fn in cases.items():
            figures[n].append(timed(fn))
            if n.startswith("ring") or n.startswith("pageable"):
                check()
    med = {n: statistics.median(v) for n, v in figures.items()}
    print(f"\n{'case':44} {'median GB/s':>12} {'runs GB/s':>30}")
    for n, v in figures.items():
        print(f"{n:44} {med[n] / 1e9:12.2f}   {' '.join(f'{x / 1e9:.2f}' for x in v):>28}")
    names = list(cases)
    print(f"\nring / pinned limit      {100 * med[names[2]] / med[names[0]]:6.1f} %")
    print(f"ring / pageable copies   {med[names[2]] / med[names[1]]:6.2f} x")
    print(f"ring 4 threads / limit   {100 * med[names[3]] / med[names[0]]:6.1f} %")
    print(f"ring stats: {ring.stats()}")
    rt.cudaFreeHost(pinned)
    ring.device_free(dev)
    ring.close()


if __name__ == "__main__":
    main()

"""strata as an LMCache remote backend (a RemoteConnector).

LMCache stores KV in chunks (e.g. 256 tokens) named by CacheEngineKey and
held in MemoryObj buffers allocated by its local CPU backend. Its remote
backend drives a connector from an asyncio event loop running in its own
thread; this class has that connector's methods:

  async exists(key) -> bool          exists_sync(key) -> bool
  async get(key) -> MemoryObj | None async put(key, memory_obj)
  async batched_get(keys) -> [MemoryObj | None]
  async batched_put(keys, memory_objs)
  async batched_async_contains(lookup_id, keys, pin=False) -> int   (prefix count)
  batched_contains(keys) -> int                                      (sync)
  async batched_get_non_blocking(lookup_id, keys) -> [MemoryObj]    (hit prefix)
  support_batched_get/put/async_contains/get_non_blocking() -> True
  async ping() -> int, async close()

Every batch is one strata round trip. I/O runs on a small thread pool, one
connection per thread, so the event loop never blocks (strata_kv releases
the GIL). get() allocates its MemoryObj from the local CPU backend (as LMCache
connectors do) and receives the chunk straight into it; put() sends straight
from the MemoryObj's memory. Without a local backend, get() returns a numpy
uint8 array.

One namespace has one block size, so only full chunks are stored: a put of a
MemoryObj whose size differs from block_bytes is skipped (LMCache's default
of not saving unfull chunks gives the same behaviour). Chunk keys map to
32-byte wire keys by SHA-256 of CacheEngineKey.to_string(); the parent of
each key in a batch is the previous key of that batch.
"""
import asyncio
import concurrent.futures
import logging

import numpy as np

import strata_kv

from .kvutil import PerThreadConnections, byte_view, wire_key

log = logging.getLogger("strata.lmcache")


def memory_bytes(memory_obj):
    """The writable bytes of an LMCache MemoryObj (or a plain buffer/tensor)."""
    arr = getattr(memory_obj, "byte_array", None)
    if arr is None:
        arr = getattr(memory_obj, "tensor", memory_obj)
    return byte_view(arr)


class StrataRemoteConnector:
    """LMCache RemoteConnector over one strata namespace.

    chunk_shape/chunk_dtype/fmt: what get() asks local_cpu_backend.allocate()
    for; namespace: open_namespace fields (block_bytes must equal the chunk's
    byte size); pin_ms: lease taken by batched_async_contains(pin=True) and
    released once the chunks are fetched.
    """

    def __init__(self, *, host, port, access_key, secret_key, namespace, loop=None,
                 local_cpu_backend=None, chunk_shape=None, chunk_dtype=None, fmt=None,
                 io_threads=2, pin_ms=30000, timeout_ms=60000):
        self.block_bytes = int(namespace["block_bytes"])
        self.loop = loop
        self.local_cpu_backend = local_cpu_backend
        self.chunk_shape = chunk_shape
        self.chunk_dtype = chunk_dtype
        self.fmt = fmt
        self.pin_ms = pin_ms
        self._conns = PerThreadConnections(host, port, access_key, secret_key, namespace,
                                           timeout_ms)
        self._pool = concurrent.futures.ThreadPoolExecutor(io_threads,
                                                           thread_name_prefix="strata-lmc")
        self._pinned = {}  # lookup_id -> wire keys pinned for it
        # Fail fast on bad credentials or descriptor.
        self._pool.submit(lambda: self._conns.get().ensure()).result()

    # ---- plumbing -----------------------------------------------------------
    async def _io(self, fn, *args):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, fn, *args)

    def _call(self, method, *args, **kwargs):
        return self._conns.get().call(method, *args, **kwargs)

    def _allocate(self):
        if self.local_cpu_backend is None:
            return np.empty(self.block_bytes, dtype=np.uint8)
        obj = self.local_cpu_backend.allocate(self.chunk_shape, self.chunk_dtype, self.fmt)
        if obj is not None and memory_bytes(obj).size != self.block_bytes:
            _release(obj)
            raise ValueError("allocated chunk size differs from the namespace's block_bytes")
        return obj

    def _get_sync(self, keys):
        """Fetches keys; returns a list aligned with keys (None = miss)."""
        if not keys:
            return []
        objs = []
        for _ in keys:
            obj = self._allocate()
            if obj is None:  # local backend full: fetch what fits
                break
            objs.append(obj)
        wire = [wire_key(k) for k in keys[:len(objs)]]
        try:
            st = self._call("get_into", wire, [memory_bytes(o) for o in objs])
        except BaseException:
            for o in objs:
                _release(o)
            raise
        out = []
        for o, s in zip(objs, st):
            if s == strata_kv.OK:
                out.append(o)
            else:
                _release(o)
                out.append(None)
        return out + [None] * (len(keys) - len(objs))

    def _put_sync(self, keys, memory_objs):
        wire, parents, bufs = [], [], []
        prev = b""
        for k, o in zip(keys, memory_objs):
            buf = memory_bytes(o)
            w = wire_key(k)
            if buf.size != self.block_bytes:
                log.debug("skipping a %d-byte chunk (namespace blocks are %d bytes)",
                          buf.size, self.block_bytes)
                prev = b""
                continue
            wire.append(w)
            parents.append(prev)
            bufs.append(buf)
            prev = w
        if not wire:
            return []
        return self._call("put", wire, parents, bufs)

    # ---- RemoteConnector ----------------------------------------------------
    async def exists(self, key):
        return await self._io(self.exists_sync, key)

    def exists_sync(self, key):
        return self._call("lookup", [wire_key(key)]) == 1

    async def get(self, key):
        return (await self._io(self._get_sync, [key]))[0]

    async def put(self, key, memory_obj):
        await self._io(self._put_sync, [key], [memory_obj])

    def support_batched_get(self):
        return True

    async def batched_get(self, keys):
        return await self._io(self._get_sync, list(keys))

    def support_batched_put(self):
        return True

    async def batched_put(self, keys, memory_objs):
        await self._io(self._put_sync, list(keys), list(memory_objs))

    def support_batched_async_contains(self):
        return True

    def batched_contains(self, keys):
        """Number of leading keys stored (one round trip, no side effects)."""
        keys = list(keys)
        return self._call("lookup", [wire_key(k) for k in keys]) if keys else 0

    async def batched_async_contains(self, lookup_id, keys, pin=False):
        def run():
            wire = [wire_key(k) for k in keys]
            if not wire:
                return 0
            hits = self._call("lookup", wire)
            if pin and hits:
                # Protect the hit prefix until batched_get_non_blocking fetches it.
                st = self._call("pin", wire[:hits], self.pin_ms)
                pinned = [w for w, s in zip(wire, st) if s == strata_kv.OK]
                self._pinned.setdefault(lookup_id, []).extend(pinned)
            return hits
        return await self._io(run)

    def support_batched_get_non_blocking(self):
        return True

    async def batched_get_non_blocking(self, lookup_id, keys, transfer_spec=None):
        """Fetches keys and returns the leading run that arrived (LMCache's
        contract); unpins what batched_async_contains pinned for lookup_id."""
        def run():
            try:
                got = self._get_sync(list(keys))
            finally:
                pinned = self._pinned.pop(lookup_id, None)
                if pinned:
                    try:
                        self._call("unpin", pinned)
                    except strata_kv.Error as e:
                        log.debug("unpin failed: %s", e)  # the lease expires anyway
            prefix = []
            for i, o in enumerate(got):
                if o is None:
                    for rest in got[i + 1:]:
                        if rest is not None:
                            _release(rest)
                    break
                prefix.append(o)
            return prefix
        return await self._io(run)

    async def ping(self):
        def run():
            try:
                client, _ = self._conns.get().ensure()
                client.ping()
                return 0
            except strata_kv.Error as e:
                return e.code
        return await self._io(run)

    async def list(self):
        # The KV protocol has no listing; blocks are listable through S3
        # (ListObjectsV2 on the namespace's bucket).
        return []

    async def close(self):
        self.close_sync()

    def close_sync(self):
        self._pool.shutdown(wait=True)
        self._conns.close_all()


def _release(obj):
    down = getattr(obj, "ref_count_down", None)
    if down is not None:
        down()

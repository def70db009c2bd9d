"""A fake of LMCache's side of a remote connector, faithful in the calls it
makes and how it makes them:

  - tokens are cut into chunks of chunk_size; each full chunk is named by a
    CacheEngineKey(fmt, model_name, world_size, worker_id, chunk_hash) whose
    chunk_hash chains over the prefix; an unfull last chunk is not saved;
  - KV lives in MemoryObj buffers (shape, dtype, ref count) allocated by a
    LocalCPUBackend with a fixed capacity; a connector's get() allocates its
    MemoryObj there;
  - the remote backend runs the connector's coroutines on its own asyncio
    event loop in a background thread (asyncio.run_coroutine_threadsafe);
  - store: one batched_put of all chunks (fire-and-forget, the MemoryObjs'
    ref counts held until the future completes), or put() per chunk when the
    connector lacks batched put;
  - retrieve: batched_async_contains(lookup_id, keys, pin=True) for the hit
    prefix, then batched_get_non_blocking(lookup_id, keys[:hits]); the
    returned MemoryObjs are copied into the "GPU" and released;
  - the non-batched path uses exists()/get().
"""
import asyncio
import hashlib
import threading
import uuid
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CacheEngineKey:
    fmt: str
    model_name: str
    world_size: int
    worker_id: int
    chunk_hash: int

    def to_string(self):
        return f"{self.fmt}@{self.model_name}@{self.world_size}@{self.worker_id}@{self.chunk_hash:x}"


class MemoryObj:
    """A chunk's KV in host memory; .tensor is a torch tensor when torch is
    installed (as in LMCache), else the numpy array; .byte_array its bytes."""

    def __init__(self, backend, shape, dtype, fmt):
        self.backend = backend
        self.array = np.zeros(shape, dtype=dtype)
        self.shape, self.dtype, self.fmt = tuple(shape), np.dtype(dtype), fmt
        self.ref_count = 1
        self._lock = threading.Lock()

    @property
    def tensor(self):
        try:
            import torch
            return torch.from_numpy(self.array)
        except ImportError:
            return self.array

    @property
    def byte_array(self):
        return memoryview(self.array.reshape(-1).view(np.uint8))

    def get_size(self):
        return self.array.nbytes

    def ref_count_up(self):
        with self._lock:
            self.ref_count += 1

    def ref_count_down(self):
        with self._lock:
            self.ref_count -= 1
            assert self.ref_count >= 0, "ref count below zero"
            freed = self.ref_count == 0
        if freed:
            self.backend._free(self)


class LocalCPUBackend:
    """Allocates MemoryObjs from a budget of `capacity` chunks."""

    def __init__(self, capacity):
        self.capacity = capacity
        self.live = set()
        self._lock = threading.Lock()

    def allocate(self, shape, dtype, fmt=None):
        with self._lock:
            if len(self.live) >= self.capacity:
                return None
            obj = MemoryObj(self, shape, dtype, fmt)
            self.live.add(obj)
            return obj

    def _free(self, obj):
        with self._lock:
            self.live.discard(obj)


def chunk_kv(key, shape, dtype):
    """What the model computes for the chunk named `key`."""
    rng = np.random.default_rng(key.chunk_hash & ((1 << 63) - 1))
    return rng.standard_normal(shape).astype(dtype)


class FakeLMCacheEngine:
    """Stores and retrieves token sequences through a remote connector built by
    make_connector(loop, local_cpu_backend)."""

    def __init__(self, make_connector, *, chunk_size=256, chunk_shape=(2, 4, 256, 8),
                 dtype=np.float16, model_name="fake-model", world_size=1, worker_id=0,
                 fmt="vllm", capacity=64):
        self.chunk_size, self.chunk_shape, self.dtype = chunk_size, tuple(chunk_shape), dtype
        self.model_name, self.world_size, self.worker_id, self.fmt = (model_name, world_size,
                                                                      worker_id, fmt)
        self.local = LocalCPUBackend(capacity)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.connector = make_connector(self.loop, self.local)
        self.put_futures = []

    def keys(self, tokens):
        """Keys of the full chunks of tokens (prefix-chained hashes)."""
        out, prev = [], b""
        for start in range(0, len(tokens) - self.chunk_size + 1, self.chunk_size):
            chunk = np.asarray(tokens[start:start + self.chunk_size], dtype=np.int64)
            prev = hashlib.sha256(prev + chunk.tobytes()).digest()
            out.append(CacheEngineKey(self.fmt, self.model_name, self.world_size,
                                      self.worker_id, int.from_bytes(prev[:16], "little")))
        return out

    def _run(self, coro, timeout=60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    # ---- store --------------------------------------------------------------
    def store(self, tokens, batched=True):
        """Computes and saves the full chunks of tokens; returns their keys."""
        keys = self.keys(tokens)
        objs = []
        for k in keys:
            obj = self.local.allocate(self.chunk_shape, self.dtype, self.fmt)
            assert obj is not None, "local CPU backend full"
            obj.array[...] = chunk_kv(k, self.chunk_shape, self.dtype)
            objs.append(obj)
        if batched and self.connector.support_batched_put():
            fut = asyncio.run_coroutine_threadsafe(self.connector.batched_put(keys, objs),
                                                   self.loop)
            fut.add_done_callback(lambda f, objs=objs: [o.ref_count_down() for o in objs])
            self.put_futures.append(fut)
        else:
            for k, o in zip(keys, objs):
                fut = asyncio.run_coroutine_threadsafe(self.connector.put(k, o), self.loop)
                fut.add_done_callback(lambda f, o=o: o.ref_count_down())
                self.put_futures.append(fut)
        return keys

    def store_unfull(self, key):
        """Saves a chunk shorter than chunk_size (LMCache's last partial chunk)."""
        shape = (self.chunk_shape[0], self.chunk_shape[1], self.chunk_shape[2] // 2,
                 self.chunk_shape[3])
        obj = self.local.allocate(shape, self.dtype, self.fmt)
        self._run(self.connector.put(key, obj))
        obj.ref_count_down()

    def wait_stores(self, timeout=60):
        for f in self.put_futures:
            f.result(timeout)
        self.put_futures = []

    # ---- retrieve -----------------------------------------------------------
    def retrieve(self, tokens):
        """Returns (hit_chunks, arrays loaded into the 'GPU', mismatched chunk indices)."""
        keys = self.keys(tokens)
        lookup_id = uuid.uuid4().hex
        hits = self._run(self.connector.batched_async_contains(lookup_id, keys, pin=True))
        objs = self._run(self.connector.batched_get_non_blocking(lookup_id, keys[:hits]))
        gpu, bad = [], []
        for i, o in enumerate(objs):
            arr = o.array.copy()
            if not np.array_equal(arr, chunk_kv(keys[i], self.chunk_shape, self.dtype)):
                bad.append(i)
            gpu.append(arr)
            o.ref_count_down()
        return hits, gpu, bad

    def retrieve_one_by_one(self, tokens):
        """The non-batched path: exists() then get() per chunk, stopping at a miss."""
        got = []
        for k in self.keys(tokens):
            if not self._run(self.connector.exists(k)):
                break
            o = self._run(self.connector.get(k))
            if o is None:
                break
            got.append(np.array_equal(o.array, chunk_kv(k, self.chunk_shape, self.dtype)))
            o.ref_count_down()
        return got

    def close(self):
        self._run(self.connector.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()

"""LMCache interface fixtures for the strata connector tests.

import_lmcache() imports the real `lmcache` when it is installed, else the
interface stubs in tests/kv/stubs (LMCache's module paths, class names,
abstract methods and signatures, pinned 0.5.6; see stubs/README.md).

RemoteBackendDriver replays what LMCache's RemoteBackend
(lmcache/v1/storage_backend/remote_backend.py) does with a connector, in its
order, on an asyncio loop in its own thread: serialize (the naive serde takes
a reference) -> batched_put (or put per key without batched put); contains ->
exists / exists_sync; batched_contains; batched_async_contains(lookup_id,
keys, pin) -> batched_get_non_blocking(lookup_id, keys) -> deserialize;
get_blocking / batched_get_blocking; remove -> remove_sync; close.

Engine builds the pieces an LMCache worker has: config, metadata, a bounded
local CPU backend (whose allocator counts live MemoryObjs, so leaked or
double-released references show), chunk keys chained over a token prefix
and deterministic chunk contents.
"""
import asyncio
import hashlib
import importlib
import os
import sys
import threading
import uuid

import numpy as np

STUBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stubs")


def import_lmcache():
    try:
        return importlib.import_module("lmcache")
    except ImportError:
        if STUBS not in sys.path:
            sys.path.insert(0, STUBS)
        return importlib.import_module("lmcache")


lmcache = import_lmcache()
USING_STUBS = bool(getattr(lmcache, "STRATA_STUB", False))

from lmcache.utils import CacheEngineKey  # noqa: E402
from lmcache.v1.config import LMCacheEngineConfig  # noqa: E402
from lmcache.v1.memory_management import MemoryFormat  # noqa: E402
from lmcache.v1.metadata import LMCacheMetadata  # noqa: E402
from lmcache.v1.storage_backend.connector import (ConnectorAdapter,  # noqa: E402,F401
                                                  ConnectorContext, CreateConnector)
from lmcache.v1.storage_backend.connector.base_connector import RemoteConnector  # noqa: E402,F401
from lmcache.v1.storage_backend.local_cpu_backend import LocalCPUBackend  # noqa: E402
from lmcache.v1.storage_backend.naive_serde import CreateSerde  # noqa: E402

try:
    import torch
    DTYPE = torch.float16
except ImportError:
    torch = None
    DTYPE = np.float16

PLUGIN_MODULE = "strata.lmcache_connector"
PLUGIN_CLASS = "StrataConnectorAdapter"


def plugin_extra(name, url, access_key, secret_key, **more):
    """extra_config entries registering strata as remote storage plugin `name`."""
    p = f"remote_storage_plugin.{name}."
    extra = {p + "module_path": PLUGIN_MODULE, p + "class_name": PLUGIN_CLASS, p + "url": url,
             p + "access_key": access_key, p + "secret_key": secret_key}
    extra.update({p + k: v for k, v in more.items()})
    return extra


def as_numpy(t):
    return t.numpy() if torch is not None and isinstance(t, torch.Tensor) else np.asarray(t)


class Engine:
    """One LMCache worker's side: config, metadata, local CPU backend,
    chunking and chunk contents. kv_shape = (layers, 2, chunk_size, heads,
    head_size)."""

    def __init__(self, *, model="lmc-test-model", chunk_size=16, layers=2, heads=2,
                 head_size=8, world_size=1, worker_id=0, capacity_chunks=64, extra=None,
                 plugins=None, remote_url=None, save_unfull_chunk=True, **config_kw):
        self.chunk_size = chunk_size
        self.config = LMCacheEngineConfig.from_defaults(
            chunk_size=chunk_size, remote_url=remote_url, remote_serde="naive",
            save_unfull_chunk=save_unfull_chunk, remote_storage_plugins=plugins,
            extra_config=dict(extra or {}), **config_kw)
        self.metadata = LMCacheMetadata(
            model_name=model, world_size=world_size, local_world_size=world_size,
            worker_id=worker_id, local_worker_id=worker_id, kv_dtype=DTYPE,
            kv_shape=(layers, 2, chunk_size, heads, head_size), chunk_size=chunk_size)
        self.full_shape = tuple(self.metadata.get_shapes()[0])
        self.full_bytes = int(np.prod(self.full_shape)) * 2
        from lmcache.v1.memory_management import MixedMemoryAllocator
        self.allocator = MixedMemoryAllocator(capacity_chunks * self.full_bytes)
        # The stub's backend takes the allocator by keyword; the real one's
        # signature has varied, so try it positionally after config/metadata.
        self.local = (LocalCPUBackend(self.config, self.metadata, memory_allocator=self.allocator)
                      if USING_STUBS else
                      LocalCPUBackend(self.config, self.metadata, self.allocator))

    def live(self):
        """MemoryObjs not yet freed (stubs only; -1 with the real LMCache)."""
        return len(self.allocator.live) if USING_STUBS else -1

    def keys(self, tokens, worker_id=None):
        """Chunk keys of tokens (chained over the prefix), the last one partial
        when save_unfull_chunk is on; (key, n_tokens) pairs."""
        out, prev = [], b""
        for start in range(0, len(tokens), self.chunk_size):
            chunk = np.asarray(tokens[start:start + self.chunk_size], dtype=np.int64)
            if len(chunk) < self.chunk_size and not self.config.save_unfull_chunk:
                break
            prev = hashlib.sha256(prev + chunk.tobytes()).digest()
            key = CacheEngineKey(self.metadata.model_name, self.metadata.world_size,
                                 self.metadata.worker_id if worker_id is None else worker_id,
                                 int.from_bytes(prev[:8], "little"), DTYPE)
            out.append((key, len(chunk)))
        return out

    def shape_for(self, n_tokens):
        s = list(self.full_shape)
        s[2] = n_tokens
        return tuple(s)

    def chunk_kv(self, key, n_tokens):
        rng = np.random.default_rng(key.chunk_hash)
        return rng.standard_normal(self.shape_for(n_tokens)).astype(np.float16)

    def compute(self, key, n_tokens):
        """A MemoryObj holding the chunk's KV (the caller's reference)."""
        obj = self.local.allocate([self.shape_for(n_tokens)], [DTYPE], MemoryFormat.KV_2LTD)
        assert obj is not None, "local CPU backend full"
        as_numpy(obj.tensor)[...] = self.chunk_kv(key, n_tokens)
        return obj

    def matches(self, obj, key, n_tokens):
        return (tuple(obj.meta.shape) == self.shape_for(n_tokens)
                and np.array_equal(as_numpy(obj.tensor), self.chunk_kv(key, n_tokens)))


class RemoteBackendDriver:
    """Drives a connector the way LMCache's RemoteBackend does."""

    def __init__(self, engine, url, plugin_name=None, connector=None):
        self.engine = engine
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.serializer, self.deserializer = CreateSerde(
            engine.config.remote_serde, engine.metadata, engine.config)
        try:
            self.connector = connector or CreateConnector(
                url, self.loop, engine.local, engine.config, engine.metadata,
                **({"plugin_name": plugin_name} if plugin_name else {}))
        except BaseException:
            self._stop_loop()
            raise
        self.put_futures = []

    def _run(self, coro, timeout=60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    # ---- puts (RemoteBackend.batched_submit_put_task / submit_put_task) ----
    def submit_put(self, keys, memory_objs, batched=True):
        if batched and self.connector.support_batched_put():
            ser = []
            for o in memory_objs:
                o.ref_count_up()
                ser.append(self.serializer.serialize(o))
                o.ref_count_down()
            self.put_futures.append(asyncio.run_coroutine_threadsafe(
                self.connector.batched_put(list(keys), ser), self.loop))
        else:
            for k, o in zip(keys, memory_objs):
                o.ref_count_up()
                s = self.serializer.serialize(o)
                o.ref_count_down()
                self.put_futures.append(asyncio.run_coroutine_threadsafe(
                    self.connector.put(k, s), self.loop))

    def store(self, tokens, batched=True):
        """Computes every chunk of tokens, submits the puts, drops the
        engine's own references (as the storage manager does once the local
        copy is evicted); returns the (key, n_tokens) pairs."""
        pairs = self.engine.keys(tokens)
        objs = [self.engine.compute(k, n) for k, n in pairs]
        self.submit_put([k for k, _ in pairs], objs, batched=batched)
        for o in objs:
            o.ref_count_down()
        return pairs

    def wait_puts(self, timeout=60):
        for f in self.put_futures:
            f.result(timeout)
        self.put_futures = []

    # ---- lookups and gets --------------------------------------------------
    def contains(self, key, use_exists_sync=False):
        if use_exists_sync:
            return self.connector.exists_sync(key)
        return self._run(self.connector.exists(key))

    def batched_contains(self, keys):
        return self.connector.batched_contains(list(keys))

    def lookup_and_retrieve(self, keys, pin=True):
        """The scheduler's async lookup, then the worker's non-blocking get of
        the hit prefix: (hits, deserialized MemoryObjs)."""
        lookup_id = uuid.uuid4().hex
        assert self.connector.support_batched_async_contains()
        hits = self._run(self.connector.batched_async_contains(lookup_id, list(keys), pin))
        assert self.connector.support_batched_get_non_blocking()
        objs = self._run(self.connector.batched_get_non_blocking(lookup_id, list(keys)[:hits]))
        return hits, [self.deserializer.deserialize(o) for o in objs]

    def get_blocking(self, key):
        o = self._run(self.connector.get(key))
        return None if o is None else self.deserializer.deserialize(o)

    def batched_get_blocking(self, keys):
        if self.connector.support_batched_get():
            objs = self._run(self.connector.batched_get(list(keys)))
        else:
            objs = [self._run(self.connector.get(k)) for k in keys]
        return [None if o is None else self.deserializer.deserialize(o) for o in objs]

    def remove(self, key):
        return self.connector.remove_sync(key)

    def close(self):
        try:
            self._run(self.connector.close())
        finally:
            self._stop_loop()

    def _stop_loop(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()

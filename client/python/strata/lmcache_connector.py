"""strata as an LMCache remote storage plugin (pinned: LMCache 0.5.6).

LMCache config (YAML or LMCACHE_* environment):

    chunk_size: 256
    remote_storage_plugins: ["strata"]
    extra_config:
      remote_storage_plugin.strata.module_path: strata.lmcache_connector
      remote_storage_plugin.strata.class_name: StrataConnectorAdapter
      remote_storage_plugin.strata.url: strata://kv-host:9400
      # optional: access_key, secret_key (else $STRATA_KV_ACCESS_KEY /
      # $STRATA_KV_SECRET_KEY), tenant_salt, weights_fingerprint,
      # quota_bytes, ttl_s, pin_ms, io_threads, timeout_ms, strict_manifest,
      # tls (true for a server started with --kv-tls), tls_ca_file (else
      # $STRATA_KV_TLS_CA_FILE, else the system's trust store), tls_server_name

or `remote_url: strata://kv-host:9400` with the same plugin entry (the plugin
registers the adapter; the URL then selects it). A plugin may have instances
(`strata.a`, `strata.b`): their settings live under their full name.

Interfaces matched (LMCache/LMCache, read at these commits; 0.5.6's tag could
not be resolved in the stored sources, these are the newest found):
  base_connector.py   01712fbd51d033060d6a8851c06de0ebf351f74e
  gcs_connector.py    f84633901dfcb55426662537fa60592e5a739269
  remote_backend.py   009eca101c71ae583489ed4bc616c589f2edcdf7
  RemoteConnector.__init__(config, metadata); async exists(key), get(key),
  put(key, memory_obj), list(), close(); exists_sync(key);
  batched_get(keys), batched_put(keys, memory_objs),
  batched_async_contains(lookup_id, keys, pin=False) -> int,
  batched_get_non_blocking(lookup_id, keys) -> leading hits,
  batched_contains(keys) -> int, remove_sync(key) -> bool, ping() -> int,
  each behind its support_*() flag; ConnectorAdapter(schema), can_parse(url),
  create_connector(ConnectorContext(url, loop, local_cpu_backend, config,
  metadata, plugin_name)). RemoteBackend serializes before put (the naive
  serde takes a reference), so put/batched_put release each MemoryObj once sent.

Mapping. A CacheEngineKey (model, world size, worker id, chunk hash, dtype,
request tags) becomes a 32-byte wire key: SHA-256 of its to_string(). All
ranks of one model share a namespace (the key names the worker): model_id =
model name, kv_dtype, kv_layout = "lmcache:<MemoryFormat>", tokens_per_block
= chunk_size, tp_size = world size, block_bytes = 0 (any length: partial last
chunks and serialized/compressed chunks are stored as they are). The manifest
is the LMCache configuration that decides whether two engines' chunks are
interchangeable (JSON, sorted keys); a mismatch is logged naming both, and
refused with strict_manifest. With a v2 server and save_chunk_meta on (the
default) each chunk's shape/dtype/format travels as the block's per-block
metadata (<= 1024 bytes) and is checked on get; otherwise the shape of a
short chunk is derived from its length (LMCache's own rule for
save_chunk_meta off: the token dimension shrinks).

Every call is one strata round trip, run on a small thread pool (one
connection per thread) so LMCache's event loop never blocks; strata_kv
releases the GIL. get() allocates from the local CPU backend and receives
straight into the MemoryObj; put() sends straight from it.
"""
import asyncio
import concurrent.futures
import hashlib
import json
import logging
import os
from urllib.parse import urlparse

import numpy as np

import strata_kv

from .kvutil import PerThreadConnections, byte_view, tls_options

log = logging.getLogger("strata.lmcache")

PINNED_LMCACHE_VERSION = "0.5.6"
PLUGIN_TYPE = "strata"
SCHEME = "strata://"
PLUGIN_SCHEME = "plugin://"
CHUNK_META_FORMAT = 1

try:
    from lmcache.v1.storage_backend.connector import ConnectorAdapter
    from lmcache.v1.storage_backend.connector.base_connector import RemoteConnector
    from lmcache.v1.memory_management import MemoryFormat
    HAVE_LMCACHE = True
except ImportError:  # the module imports without LMCache (docs, tooling)
    HAVE_LMCACHE = False
    MemoryFormat = None

    class RemoteConnector:  # the attributes LMCache's base sets
        def __init__(self, config, metadata):
            self.config, self.metadata = config, metadata
            self.save_chunk_meta = True
            self.meta_shapes = self.meta_dtypes = self.meta_fmt = None
            self.full_chunk_size_bytes = self.single_token_size = None

    class ConnectorAdapter:
        def __init__(self, schema=""):
            self.schema = schema


def _plugin_type(plugin_name):
    return plugin_name.split(".", 1)[0]


def plugin_settings(config, plugin_name):
    """extra_config["remote_storage_plugin.<plugin_name>.<k>"] as {k: value}."""
    extra = (getattr(config, "extra_config", None) if config is not None else None) or {}
    prefix = f"remote_storage_plugin.{plugin_name}."
    return {k[len(prefix):]: v for k, v in extra.items() if k.startswith(prefix)}


def _truthy(v):
    if isinstance(v, str):
        return v.strip().lower() not in ("", "0", "false", "no", "off")
    return bool(v)


def wire_key(key):
    """The 32-byte strata key of a CacheEngineKey (SHA-256 of to_string())."""
    return hashlib.sha256(key.to_string().encode()).digest()


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _itemsize(dtype):
    if hasattr(dtype, "itemsize") and not isinstance(dtype, type):
        return int(dtype.itemsize)
    try:
        import torch
        if isinstance(dtype, torch.dtype):
            return torch.tensor([], dtype=dtype).element_size()
    except ImportError:
        pass
    return np.dtype(dtype).itemsize


def _size_bytes(shapes, dtypes):
    return sum(int(np.prod(tuple(s))) * _itemsize(d) for s, d in zip(shapes, dtypes))


def _parse_dtype(name, like):
    """The dtype named `name`, of the same family (torch/numpy) as `like`."""
    if type(like).__module__.startswith("torch"):
        import torch
        dt = getattr(torch, name, None)
        if isinstance(dt, torch.dtype):
            return dt
        raise ValueError(f"unknown torch dtype {name!r}")
    return np.dtype(name)


def _fmt_name(fmt):
    return getattr(fmt, "name", str(fmt))


def _memory_bytes(memory_obj):
    return byte_view(memory_obj.byte_array)


def _release(obj):
    try:
        obj.ref_count_down()
    except Exception as e:  # never let a bookkeeping slip mask the I/O result
        log.warning("ref_count_down failed: %s", e)


def manifest_for(config, metadata, fmt, save_chunk_meta):
    """The LMCache settings that decide whether chunks are interchangeable."""
    try:
        import lmcache
        version = getattr(lmcache, "__version__", "unknown")
    except ImportError:
        version = "none"
    doc = {
        "connector": "strata.lmcache_connector",
        "chunk_meta_format": CHUNK_META_FORMAT,
        "lmcache_pinned": PINNED_LMCACHE_VERSION,
        "lmcache_version": version,
        "chunk_size": int(config.chunk_size),
        "kv_shape": [int(x) for x in metadata.kv_shape],
        "kv_dtype": dtype_name(metadata.kv_dtype),
        "use_mla": bool(getattr(metadata, "use_mla", False)),
        "fmt": _fmt_name(fmt),
        "remote_serde": getattr(config, "remote_serde", None),
        "use_layerwise": bool(getattr(config, "use_layerwise", False)),
        "save_chunk_meta": bool(save_chunk_meta),
        "pre_caching_hash_algorithm": getattr(config, "pre_caching_hash_algorithm", None),
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def namespace_for(config, metadata, fmt, settings):
    """open_namespace fields for one model's chunks (all ranks share it)."""
    return dict(
        model_id=str(metadata.model_name),
        weights_fingerprint=str(settings.get("weights_fingerprint", "")),
        kv_dtype=dtype_name(metadata.kv_dtype),
        kv_layout=f"lmcache:{_fmt_name(fmt)}",
        tokens_per_block=int(config.chunk_size),
        block_bytes=0,
        tp_size=int(metadata.world_size), tp_rank=0, pp_size=1, pp_rank=0,
        hash_algorithm="lmcache:" + str(getattr(config, "pre_caching_hash_algorithm",
                                                "builtin")),
        hash_seed=0,
        tenant_salt=str(settings.get("tenant_salt", "")),
        quota_bytes=int(settings.get("quota_bytes", 0)),
        ttl_s=int(settings.get("ttl_s", 0)),
    )


class StrataRemoteConnector(RemoteConnector):
    """LMCache RemoteConnector over one strata namespace.

    Built by StrataConnectorAdapter from LMCache's ConnectorContext; tests and
    tools may construct it directly. settings: the plugin's extra_config
    entries (see the module docstring)."""

    def __init__(self, config, metadata, *, host, port, access_key, secret_key, loop=None,
                 local_cpu_backend=None, settings=None):
        super().__init__(config, metadata)
        if config is None or metadata is None:
            raise ValueError("StrataRemoteConnector needs LMCache's config and metadata")
        settings = dict(settings or {})
        self.loop = loop
        self.local_cpu_backend = local_cpu_backend
        self.pin_ms = int(settings.get("pin_ms", 30000))
        # Chunk geometry (LMCache's base computes it; recomputed where it did not).
        self._shapes = list(self.meta_shapes or metadata.get_shapes())
        self._dtypes = list(self.meta_dtypes or metadata.get_dtypes())
        if self.meta_fmt is not None:
            self._fmt = self.meta_fmt
        elif MemoryFormat is not None:
            self._fmt = (MemoryFormat.KV_MLA_FMT if getattr(metadata, "use_mla", False)
                         else MemoryFormat.KV_2LTD)
        else:
            self._fmt = "KV_2LTD"
        self._full_bytes = self.full_chunk_size_bytes or _size_bytes(self._shapes, self._dtypes)
        self._token_bytes = self.single_token_size or self._full_bytes // int(config.chunk_size)
        # Per-block metadata needs a v2 server/client (strata_kv.MAX_META_BYTES).
        self._use_metas = bool(self.save_chunk_meta) and hasattr(strata_kv, "MAX_META_BYTES")
        self.namespace = namespace_for(config, metadata, self._fmt, settings)
        self.manifest = manifest_for(config, metadata, self._fmt, self.save_chunk_meta)
        fields = dict(self.namespace)
        if getattr(strata_kv, "PROTOCOL_VERSION", 1) >= 2:
            fields["manifest"] = self.manifest
        tls = tls_options(settings.get("tls", False), settings.get("tls_ca_file", ""),
                          settings.get("tls_server_name", ""))
        self._conns = PerThreadConnections(host, port, access_key, secret_key, fields,
                                           int(settings.get("timeout_ms", 60000)), tls)
        self._pool = concurrent.futures.ThreadPoolExecutor(
            int(settings.get("io_threads", 2)), thread_name_prefix="strata-lmc")
        self._pinned = {}  # lookup_id -> wire keys pinned for it
        self._strict_manifest = _truthy(settings.get("strict_manifest", False))
        self._closed = False
        try:  # fail fast on bad credentials, descriptor or manifest
            self._pool.submit(self._check_namespace).result()
        except BaseException:
            self.close_sync()
            raise

    # ---- construction from LMCache ------------------------------------------
    @classmethod
    def from_context(cls, context, plugin_name=PLUGIN_TYPE):
        settings = plugin_settings(context.config, plugin_name)
        url = context.url if context.url.startswith(SCHEME) else settings.get("url")
        url = url or os.environ.get("STRATA_KV_URL")
        if not url or not str(url).startswith(SCHEME):
            raise ValueError(f"strata plugin {plugin_name!r} needs remote_url or extra_config"
                             f" 'remote_storage_plugin.{plugin_name}.url' = strata://HOST:PORT")
        parsed = urlparse(str(url))
        if not parsed.hostname or not parsed.port:
            raise ValueError(f"invalid strata URL {url!r}: want strata://HOST:PORT")
        access = (settings.get("access_key") or parsed.username
                  or os.environ.get("STRATA_KV_ACCESS_KEY"))
        secret = (settings.get("secret_key") or parsed.password
                  or os.environ.get("STRATA_KV_SECRET_KEY"))
        if not access or not secret:
            raise ValueError(f"strata plugin {plugin_name!r}: no credentials (extra_config "
                             f"remote_storage_plugin.{plugin_name}.access_key/secret_key or "
                             "$STRATA_KV_ACCESS_KEY/$STRATA_KV_SECRET_KEY)")
        log.info("strata LMCache connector %s -> %s:%d", plugin_name, parsed.hostname,
                 parsed.port)
        return cls(context.config, context.metadata, host=parsed.hostname, port=parsed.port,
                   access_key=access, secret_key=secret, loop=context.loop,
                   local_cpu_backend=context.local_cpu_backend, settings=settings)

    def _check_namespace(self):
        client, ns = self._conns.get().ensure()
        if hasattr(client, "events"):
            # Subscribe: the server records the namespace's block events from
            # the first EVENTS request on (list() replays them).
            client.events(ns, 0, 1)
        if getattr(ns, "manifest_matches", True):
            return
        stored = bytes(getattr(ns, "manifest", b"")).decode(errors="replace")
        msg = (f"strata namespace {self.namespace['model_id']!r} was created by an LMCache "
               f"configured differently: stored manifest {stored}, this engine's "
               f"{self.manifest.decode()}")
        if self._strict_manifest:
            raise ValueError(msg)
        log.warning("%s", msg)

    # ---- plumbing -----------------------------------------------------------
    async def _io(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def _call(self, method, *args, **kwargs):
        return self._conns.get().call(method, *args, **kwargs)

    def _chunk_meta(self, memory_obj):
        meta = memory_obj.meta
        shapes = getattr(meta, "shapes", None) or [meta.shape]
        dtypes = getattr(meta, "dtypes", None) or [meta.dtype]
        doc = {"f": CHUNK_META_FORMAT, "s": [[int(x) for x in s] for s in shapes],
               "d": [dtype_name(d) for d in dtypes], "m": _fmt_name(meta.fmt)}
        raw = json.dumps(doc, separators=(",", ":")).encode()
        if len(raw) > strata_kv.MAX_META_BYTES:
            log.debug("chunk metadata of %d bytes does not fit; stored without", len(raw))
            return None
        return raw

    def _allocate(self, shapes, dtypes, fmt):
        return self.local_cpu_backend.allocate(shapes, dtypes, fmt)

    def _reshape(self, obj, shapes, nbytes):
        """Makes obj describe `shapes` (same dtypes/format, fewer tokens) in place."""
        like = type(obj.meta.shape)
        shapes = [like(s) if like is not tuple else tuple(s) for s in shapes]
        obj.raw_data = obj.raw_data[:nbytes]
        obj.meta.shape = shapes[0]
        if getattr(obj.meta, "shapes", None) is not None:
            obj.meta.shapes = shapes
        return obj

    def _token_shapes(self, nbytes):
        """Full-chunk shapes with the token dimension cut to nbytes' tokens, or None."""
        if nbytes <= 0 or nbytes % self._token_bytes or nbytes > self._full_bytes:
            return None
        tokens, dim = nbytes // self._token_bytes, self._token_dim(self._fmt)
        out = []
        for s in self._shapes:
            s = list(s)
            s[dim] = tokens
            out.append(s)
        return out if _size_bytes(out, self._dtypes) == nbytes else None

    @staticmethod
    def _token_dim(fmt):
        return {"KV_T2D": 0, "KV_2TD": 1}.get(_fmt_name(fmt), 2)

    def _finish(self, obj, nbytes, raw_meta):
        """The MemoryObj for a fetched chunk of nbytes (obj: a full-chunk
        allocation holding them), or None (obj released) when unusable."""
        if raw_meta:
            try:
                doc = json.loads(raw_meta)
                shapes = [list(s) for s in doc["s"]]
                dtypes = [_parse_dtype(d, self._dtypes[0]) for d in doc["d"]]
                fmt = MemoryFormat[doc["m"]] if MemoryFormat is not None else doc["m"]
            except (ValueError, KeyError, TypeError) as e:
                log.warning("unreadable chunk metadata (%s): treated as a miss", e)
                _release(obj)
                return None
            if _size_bytes(shapes, dtypes) != nbytes:
                log.warning("chunk of %d bytes, its metadata says %d: treated as a miss",
                            nbytes, _size_bytes(shapes, dtypes))
                _release(obj)
                return None
            if fmt == self._fmt and [dtype_name(d) for d in dtypes] == \
                    [dtype_name(d) for d in self._dtypes]:
                if nbytes == self._full_bytes and shapes == [list(s) for s in self._shapes]:
                    return obj
                if shapes == self._token_shapes(nbytes):
                    return self._reshape(obj, shapes, nbytes)
            # Another layout (e.g. a serialized chunk): its own allocation, one copy.
            other = self._allocate(shapes, dtypes, fmt)
            if other is not None:
                _memory_bytes(other)[:nbytes] = _memory_bytes(obj)[:nbytes]
            _release(obj)
            return other
        if nbytes == self._full_bytes:
            return obj
        shapes = self._token_shapes(nbytes)
        if shapes is None:
            log.warning("chunk of %d bytes is not a whole number of %d-byte tokens: a miss",
                        nbytes, self._token_bytes)
            _release(obj)
            return None
        return self._reshape(obj, shapes, nbytes)

    def _get_sync(self, keys):
        """Fetches keys; a list aligned with keys (None: a miss, or no room)."""
        if not keys:
            return []
        if self.local_cpu_backend is None:  # scheduler role: nothing to receive into
            return [None] * len(keys)
        objs = []
        for _ in keys:
            obj = self._allocate(self._shapes, self._dtypes, self._fmt)
            if obj is None:  # local CPU backend full: fetch what fits
                break
            objs.append(obj)
        if not objs:
            return [None] * len(keys)
        wire = [wire_key(k) for k in keys[:len(objs)]]
        try:
            bufs = [_memory_bytes(o) for o in objs]
            zeros = [0] * len(objs)  # each block whole, whatever its length
            if self._use_metas:
                st, lens, metas = self._call("get_into", wire, bufs, lengths=zeros,
                                             with_meta=True)
            else:
                st, lens = self._call("get_into", wire, bufs, lengths=zeros,
                                      with_lengths=True)
                metas = [b""] * len(objs)
        except BaseException:
            for o in objs:
                _release(o)
            raise
        out = []
        for o, s, n, m in zip(objs, st, lens, metas):
            if s == strata_kv.OK:
                out.append(self._finish(o, int(n), m))
            else:
                if s != strata_kv.NOT_FOUND:
                    log.debug("get: %s", strata_kv.status_name(s))
                _release(o)
                out.append(None)
        return out + [None] * (len(keys) - len(objs))

    def _put_sync(self, keys, memory_objs):
        """Stores chunks (each chained to the previous one of the batch) and
        releases the reference LMCache's serializer took for the put."""
        try:
            wire, parents, bufs, metas = [], [], [], []
            prev = b""
            for k, o in zip(keys, memory_objs):
                w = wire_key(k)
                wire.append(w)
                parents.append(prev)
                bufs.append(_memory_bytes(o))
                if self._use_metas:
                    metas.append(self._chunk_meta(o))
                prev = w
            if not wire:
                return []
            if self._use_metas:
                st = self._call("put", wire, parents, bufs, metas=metas)
            else:
                st = self._call("put", wire, parents, bufs)
            for s in st:
                if s not in (strata_kv.OK, strata_kv.EXISTS):
                    log.debug("put: %s", strata_kv.status_name(s))
            return st
        finally:
            for o in memory_objs:
                _release(o)

    def _lookup_prefix(self, keys):
        return self._call("lookup", [wire_key(k) for k in keys]) if keys else 0

    # ---- RemoteConnector ----------------------------------------------------
    async def exists(self, key):
        return await self._io(self.exists_sync, key)

    def exists_sync(self, key):
        if hasattr(strata_kv.Client, "lookup_each"):
            return bool(self._call("lookup_each", [wire_key(key)])[0])
        return self._call("lookup", [wire_key(key)]) == 1

    async def get(self, key):
        return (await self._io(self._get_sync, [key]))[0]

    async def put(self, key, memory_obj):
        await self._io(self._put_sync, [key], [memory_obj])

    async def list(self):
        """Hex wire keys of the namespace's stored chunks, from its event
        stream (v2 servers); strata cannot turn them back into
        CacheEngineKeys. The stream starts when the first subscriber (this
        connector's construction, or any EVENTS reader) appears after the
        server started: chunks stored before that are not listed (neither
        are the oldest once more than 16384 events were recorded). [] without
        the event stream."""
        if not hasattr(strata_kv.Client, "events"):
            return []

        def run():
            stored, since = {}, 0
            while True:
                since, _lost, evs = self._call("events", since)
                for kind, key, _parent in evs:
                    if kind == "stored":
                        stored[key] = True
                    else:
                        stored.pop(key, None)
                if not evs:
                    return [k.hex() for k in stored]
        return await self._io(run)

    async def close(self):
        self.close_sync()

    def close_sync(self):
        if self._closed:
            return
        self._closed = True
        self._pool.shutdown(wait=True)
        self._conns.close_all()

    def support_ping(self):
        return True

    async def ping(self):
        def run():
            try:
                client, _ = self._conns.get().ensure()
                client.ping()
                return 0
            except strata_kv.Error as e:
                return e.code
        return await self._io(run)

    def support_batched_get(self):
        return True

    async def batched_get(self, keys):
        return await self._io(self._get_sync, list(keys))

    def support_batched_put(self):
        return True

    async def batched_put(self, keys, memory_objs):
        await self._io(self._put_sync, list(keys), list(memory_objs))

    def support_batched_contains(self):
        return True

    def batched_contains(self, keys):
        """Number of leading keys stored (one round trip, no side effects)."""
        return self._lookup_prefix(list(keys))

    def support_batched_async_contains(self):
        return True

    async def batched_async_contains(self, lookup_id, keys, pin=False):
        """Leading hits; with pin, they are protected from eviction until
        batched_get_non_blocking(lookup_id) fetches them (or pin_ms passes)."""
        keys = list(keys)

        def run():
            hits = self._lookup_prefix(keys)
            if pin and hits:
                wire = [wire_key(k) for k in keys[:hits]]
                st = self._call("pin", wire, self.pin_ms)
                self._pinned.setdefault(lookup_id, []).extend(
                    w for w, s in zip(wire, st) if s == strata_kv.OK)
            return hits
        return await self._io(run)

    def support_batched_get_non_blocking(self):
        return True

    async def batched_get_non_blocking(self, lookup_id, keys):
        """The leading run of keys that arrived (LMCache's contract); unpins
        what batched_async_contains pinned for lookup_id."""
        keys = list(keys)

        def run():
            try:
                got = self._get_sync(keys)
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

    def remove_sync(self, key):
        """Removes the chunk (and, as strata's DELETE does, the chunks chained
        below it in the same put batch). True when it was stored."""
        return self._call("delete", [wire_key(key)]) == [strata_kv.OK]

    def __repr__(self):
        return f"<StrataRemoteConnector {self.namespace['model_id']!r}>"


class StrataConnectorAdapter(ConnectorAdapter):
    """LMCache ConnectorAdapter: strata://HOST:PORT URLs and plugin://strata[.name]."""

    def __init__(self):
        super().__init__(SCHEME)

    def can_parse(self, url):
        if url.startswith(SCHEME):
            return True
        return (url.startswith(PLUGIN_SCHEME)
                and _plugin_type(url[len(PLUGIN_SCHEME):]) == PLUGIN_TYPE)

    def create_connector(self, context):
        plugin_name = getattr(context, "plugin_name", None)
        if plugin_name is None and context.url.startswith(PLUGIN_SCHEME):
            plugin_name = context.url[len(PLUGIN_SCHEME):]
        return StrataRemoteConnector.from_context(context, plugin_name or PLUGIN_TYPE)

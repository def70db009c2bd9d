"""strata as a vLLM offloading secondary tier (vllm.v1.kv_offload.tiering).

vLLM's TieringOffloadingSpec keeps offloaded KV in a CPU "primary" tier (one
host buffer cut into chunk slots) and moves chunks between those slots and
its secondary tiers. StrataSecondaryTier is such a tier, loaded out of tree
by vLLM's SecondaryTierFactory from kv_connector_extra_config:

    {"spec_name": "TieringOffloadingSpec",
     "secondary_tiers": [{"type": "StrataSecondaryTier",
                          "module_path": "strata.vllm_tier",
                          "host": "10.0.0.5", "port": 7450}]}

(the factory imports module_path, takes the class named by "type", checks
it subclasses SecondaryTierManager and constructs it with keywords:
offloading_spec, primary_kv_view, tier_type and the rest of the dict).
For a server started with --kv-tls add "tls": true and, unless the system
trusts its certificate, "tls_ca_file": "/path/ca.pem" (or
$STRATA_KV_TLS_CA_FILE); "tls_server_name" overrides the name checked.
Pinned interface: strata.PINNED_VERSIONS["vllm"].

Namespace: derived from offloading_spec.config (model, KV dtype, KV groups,
tokens per hash and chunk, the worker's bytes per block, parallel sizes) and
the primary view's slot size. With the engine's canonical layout
parallelism-agnostic (config.parallel.is_parallelism_agnostic) engines of any
TP/PP share one namespace; `parallelism_agnostic=False` keeps them apart. The
configuration (JSON, sorted keys) is the namespace's manifest: stored with
the namespace by protocol v2 (a mismatch is logged, or refused with
refuse_manifest_mismatch=True); on v1 servers kept in a reserved block.

Lookups never block the scheduler thread: lookup() answers from verdicts
already fetched, else queues the key and answers RETRY; on_schedule_end()
hands the step's queued keys to a background thread as one batch: one
lookup_each round trip (protocol v2), or on v1 servers one LOOKUP per
request chain (leading-hit count, in token order). Transfers run on worker threads, each with its own connection,
straight from and into the primary view's slots (no staging copy). A store
counts EXISTS as success (put-if-absent: another engine stored the chunk
first); a load reports the keys that arrived (JobResult.successful_keys) so
the engine recomputes exactly the others, and their verdicts turn to MISS.
"""
import collections
import hashlib
import json
import logging
import os
import queue
import threading
import time
from dataclasses import dataclass

import strata_kv

from . import PINNED_VERSIONS
from .kvutil import NamespaceConnection, tls_options, wire_key

try:  # the real base classes (or the interface stubs of tests/kv/stubs)
    from vllm.v1.kv_offload.base import (Locality, LookupResult, Medium, OffloadingEvent,
                                         RequestOffloadingContext)
    from vllm.v1.kv_offload.tiering.base import JobResult, SecondaryTierManager
    HAVE_VLLM = True
except ImportError:  # vLLM not installed: the module still imports, for tools and docs
    import enum
    from abc import ABC

    HAVE_VLLM = False
    LookupResult = enum.Enum("LookupResult", "MISS HIT HIT_PENDING RETRY")
    Medium = enum.Enum("Medium", {"CPU": "CPU", "STORAGE": "STORAGE"})
    Locality = enum.Enum("Locality", {"LOCAL": "LOCAL", "REMOTE": "REMOTE"})

    @dataclass
    class RequestOffloadingContext:
        policy: str = "chunk_level"

    @dataclass
    class JobResult:
        job_id: int
        success: bool
        successful_keys: object = None
        transfer_time: float = None

    @dataclass
    class OffloadingEvent:
        keys: list
        medium: object
        removed: bool
        locality: object = None
        ownership: str = None
        removal_expected: bool = False

    class SecondaryTierManager(ABC):
        medium = None

        def __init__(self, offloading_spec, primary_kv_view, tier_type):
            self._offloading_spec = offloading_spec
            self._primary_kv_view = primary_kv_view
            self.tier_type = tier_type
            self.locality = None

# Protocol v2 (strata_kv.PROTOCOL_VERSION >= 2) stores a manifest with the
# namespace (open_namespace(manifest=...)); on v1 servers the adapter keeps it
# in a block under _MANIFEST_KEY, which no engine key maps to (those are the
# 36-byte OffloadKey, or its SHA-256 where keys are at most 32 bytes).
_NS_MANIFEST = getattr(strata_kv, "PROTOCOL_VERSION", 1) >= 2
_MANIFEST_KEY = hashlib.sha256(b"strata.vllm_tier/manifest/v1").digest()


def engine_manifest(config, block_bytes, parallelism_agnostic):
    """The engine configuration that decides what a stored chunk's bytes mean."""
    par = config.parallel
    m = {
        "format": "strata.vllm_tier/1",
        "vllm_interface": PINNED_VERSIONS["vllm"],
        "model": config.model.name,
        "kv_dtype": config.model.dtype,
        "groups": [{"tokens_per_block": g.tokens_per_block, "layers": list(g.layer_names)}
                   for g in config.groups],
        "tokens_per_hash": config.cache.tokens_per_hash,
        "blocks_per_chunk": config.cache.blocks_per_chunk,
        "worker_kv_bytes_per_block": config.worker_kv_bytes_per_block,
        "chunk_bytes": block_bytes,
        "replicated_layout": bool(getattr(config, "replicated_layout", False)),
        "parallelism_agnostic": parallelism_agnostic,
    }
    if not parallelism_agnostic:
        m["parallel"] = {"world_size": par.world_size, "tp_size": par.tp_size,
                         "pp_size": par.pp_size, "pcp_size": par.pcp_size,
                         "dcp_size": par.dcp_size}
    return m


def _canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def namespace_for(config, block_bytes, *, parallelism_agnostic=None, weights_fingerprint="",
                  tenant_salt="", hash_seed=0, model_id=None, **extra):
    """(open_namespace fields, manifest) for an engine configuration.

    parallelism_agnostic: None follows the engine (its canonical layout makes
    ranks interchangeable or not); True insists (ValueError if the engine's
    layout is not agnostic); False keeps each TP/PP shape apart.
    """
    engine_agnostic = bool(config.parallel.is_parallelism_agnostic)
    if parallelism_agnostic is None:
        parallelism_agnostic = engine_agnostic
    elif parallelism_agnostic and not engine_agnostic:
        raise ValueError("parallelism_agnostic=True, but the engine's KV layout depends on "
                         "its parallel configuration")
    manifest = engine_manifest(config, block_bytes, bool(parallelism_agnostic))
    # The layout field names everything about the bytes the other fields do not.
    layout = {k: v for k, v in manifest.items() if k not in ("model", "kv_dtype")}
    par = config.parallel
    fields = dict(
        model_id=model_id or config.model.name,
        weights_fingerprint=weights_fingerprint,
        kv_dtype=str(config.model.dtype),
        kv_layout="vllm-tiering:" + hashlib.sha256(_canonical(layout)).hexdigest()[:32],
        tokens_per_block=config.cache.tokens_per_hash * config.cache.blocks_per_chunk,
        block_bytes=block_bytes,
        # The scheduler's primary tier holds every worker's share of a chunk,
        # so the namespace names the parallel shape, never one rank.
        tp_size=1 if parallelism_agnostic else par.tp_size, tp_rank=0,
        pp_size=1 if parallelism_agnostic else par.pp_size, pp_rank=0,
        hash_algorithm="sha256", hash_seed=hash_seed, tenant_salt=tenant_salt)
    fields.update(extra)
    return fields, manifest


def _slot_bytes(view):
    """Bytes per slot of the primary view: its first stride (vLLM's view is
    (num_chunks, chunk_bytes)); a 1-D view is one slot."""
    if view.ndim >= 2:
        return view.strides[0]
    return view.nbytes


@dataclass
class _Job:
    job_id: int
    is_load: bool
    keys: list
    wire: list
    parents: list
    views: list
    t0: float


class _Verdict:
    __slots__ = ("result", "requests")

    def __init__(self):
        self.result = None      # None: not known yet (queued or in flight)
        self.requests = set()   # req_ids holding this verdict


class StrataSecondaryTier(SecondaryTierManager):
    """A vLLM secondary tier backed by one strata namespace (module docstring)."""

    medium = Medium.STORAGE

    def __init__(self, offloading_spec, primary_kv_view, tier_type, *, host="127.0.0.1",
                 port=7450, access_key=None, secret_key=None, weights_fingerprint="",
                 tenant_salt="", hash_seed=0, model_id=None, parallelism_agnostic=None,
                 quota_bytes=None, ttl_s=None, io_threads=2, timeout_ms=60000,
                 locality="REMOTE", refuse_manifest_mismatch=False, tls=False,
                 tls_ca_file="", tls_server_name=""):
        super().__init__(offloading_spec, primary_kv_view, tier_type)
        self.locality = Locality(locality) if locality else None
        view = memoryview(primary_kv_view)
        if view.readonly:
            raise ValueError("the primary KV view must be writable (loads land in it)")
        self._view = view.cast("B")  # flat bytes over the same memory
        self.block_bytes = _slot_bytes(view)
        if self.block_bytes <= 0 or self._view.nbytes % self.block_bytes:
            raise ValueError("primary KV view is not a whole number of slots")
        self.num_slots = self._view.nbytes // self.block_bytes
        self._config = offloading_spec.config
        extra = {k: v for k, v in (("quota_bytes", quota_bytes), ("ttl_s", ttl_s))
                 if v is not None}
        self.namespace, self.manifest = namespace_for(
            self._config, self.block_bytes, parallelism_agnostic=parallelism_agnostic,
            weights_fingerprint=weights_fingerprint, tenant_salt=tenant_salt,
            hash_seed=hash_seed, model_id=model_id, **extra)
        access_key = access_key or os.environ.get("STRATA_KV_ACCESS_KEY")
        secret_key = secret_key or os.environ.get("STRATA_KV_SECRET_KEY")
        if not access_key or not secret_key:
            raise ValueError("StrataSecondaryTier needs access_key/secret_key (tier config or "
                             "STRATA_KV_ACCESS_KEY / STRATA_KV_SECRET_KEY)")
        ns_fields = dict(self.namespace)
        if _NS_MANIFEST:  # stored with the namespace by its first opener
            ns_fields["manifest"] = _canonical(self.manifest)
        conn_args = (host, int(port), access_key, secret_key, ns_fields, int(timeout_ms),
                     tls_options(tls, tls_ca_file, tls_server_name))
        self._spans = [g.tokens_per_block * self._config.cache.blocks_per_chunk
                       for g in self._config.groups]

        # Scheduler-thread state: verdicts, this step's queued probes, per-request keys.
        self._verdicts = {}
        self._step_batch = []                       # [(key, wire, req_context)]
        self._req_keys = collections.defaultdict(set)
        self._req_positions = {}                    # req_id -> {(group, end_pos): wire}
        self._lookups_in_flight = 0
        self.lookup_round_trips = 0                 # one per batch sent (lookup_each) or chain

        self._lookup_conn = NamespaceConnection(*conn_args)
        self._lookup_conn.ensure()  # fail at construction on bad credentials / descriptor
        if _NS_MANIFEST:
            self._check_manifest(refuse_manifest_mismatch)
        else:
            self._write_manifest()
        # Block events of the namespace (protocol v2 EVENTS: stored by any
        # engine sharing it, removed by deletes or eviction), read on the
        # lookup thread; the server records them from the first reader on.
        self._events_q = queue.SimpleQueue()        # lookup thread -> take_events
        self._events_cursor = None
        if _NS_MANIFEST and hasattr(strata_kv.Client, "events"):
            try:
                self._events_cursor, _, _ = self._lookup_conn.call("events", 0, 1)
            except strata_kv.Error:
                self._events_cursor = None
        self._lookup_q = queue.SimpleQueue()        # scheduler -> lookup thread
        self._lookup_done = queue.SimpleQueue()     # lookup thread -> scheduler
        self._job_q = queue.SimpleQueue()
        self._lock = threading.Lock()               # guards _pending, _finished
        self._idle = threading.Condition(self._lock)
        self._pending = set()
        self._finished = []
        self._load_keys = {}                        # job_id -> keys (scheduler thread)
        self._closed = False
        self._threads = [threading.Thread(target=self._lookup_worker, daemon=True,
                                          name="strata-tier-lookup")]
        self._threads += [threading.Thread(target=self._io_worker, daemon=True,
                                           args=(NamespaceConnection(*conn_args),),
                                           name=f"strata-tier-io-{i}")
                          for i in range(max(1, int(io_threads)))]
        for t in self._threads:
            t.start()

    # ---- scheduler side: lookups ------------------------------------------------------
    def on_new_request(self, req_context):
        self._req_positions.setdefault(req_context.req_id, {})
        return RequestOffloadingContext()

    def lookup(self, key, req_context):
        self._apply_lookup_results()
        wire = self._remember(key, req_context)
        v = self._verdicts.get(wire)
        if v is None:
            v = self._verdicts[wire] = _Verdict()
            self._step_batch.append((key, wire, req_context))
        v.requests.add(req_context.req_id)
        self._req_keys[req_context.req_id].add(wire)
        if v.result is None:
            return LookupResult.RETRY
        return LookupResult.HIT if v.result else LookupResult.MISS

    def on_schedule_end(self, context):
        """End of a scheduler step: this step's probes go out as one batch."""
        self._apply_lookup_results()
        if self._step_batch:
            batch, self._step_batch = self._step_batch, []
            self._lookups_in_flight += 1
            self._lookup_q.put(batch)

    def on_request_finished(self, req_context):
        rid = req_context.req_id
        for wire in self._req_keys.pop(rid, ()):
            v = self._verdicts.get(wire)
            if v is not None:
                v.requests.discard(rid)
                if not v.requests and v.result is not None:
                    del self._verdicts[wire]
        self._req_positions.pop(rid, None)

    def has_pending_work(self):
        if self._step_batch or self._lookups_in_flight:
            return True
        with self._lock:
            return bool(self._pending)

    # ---- scheduler side: transfers ----------------------------------------------------
    def submit_store(self, job_metadata):
        job = self._job(job_metadata, is_load=False)
        ctx = job_metadata.req_context
        job.parents = [self._parent(k, ctx) for k in job.keys]
        # The server links a parent only if it is stored by then: send the
        # job's chunks in token order (a parent before its children).
        order = sorted(range(len(job.keys)), key=lambda i: self._position(job.keys[i], ctx) or 0)
        for name in ("keys", "wire", "parents", "views"):
            setattr(job, name, [getattr(job, name)[i] for i in order])
        self._enqueue(job)

    def submit_load(self, job_metadata):
        job = self._job(job_metadata, is_load=True)
        self._load_keys[job.job_id] = job.keys
        self._enqueue(job)

    def take_events(self):
        """The namespace's blocks stored and removed since the last call, as
        OffloadingEvents (medium STORAGE; keys are the engine's OffloadKeys),
        for KV-aware routing. Never blocks: the lookup thread reads strata's
        event stream (about every 50 ms while idle) and queues them here.
        Events of chunks other engines stored or the server evicted are
        included (the namespace is shared); a gap in the stream (more than the
        server keeps) is not reported as events."""
        out = []
        while True:
            try:
                out.append(self._events_q.get_nowait())
            except queue.Empty:
                return out

    def _poll_events(self):
        """Lookup thread: one EVENTS round trip; consecutive events of one
        kind become one OffloadingEvent."""
        if self._events_cursor is None:
            return
        try:
            self._events_cursor, _lost, evs = self._lookup_conn.call("events", self._events_cursor)
        except strata_kv.Error:
            return
        run_kind, run_keys = None, []
        for kind, key, _parent in evs:
            if key == _MANIFEST_KEY:
                continue
            if kind != run_kind and run_keys:
                self._events_q.put(OffloadingEvent(keys=run_keys, medium=self.medium,
                                                   removed=run_kind != "stored",
                                                   locality=self.locality))
                run_keys = []
            run_kind = kind
            run_keys.append(bytes(key))
        if run_keys:
            self._events_q.put(OffloadingEvent(keys=run_keys, medium=self.medium,
                                               removed=run_kind != "stored",
                                               locality=self.locality))

    def get_finished_jobs(self):
        with self._lock:
            done, self._finished = self._finished, []
        for r in done:
            keys = self._load_keys.pop(r.job_id, None)
            if keys is not None and not r.success:
                ok = set(r.successful_keys or ())
                self._mark_miss([k for k in keys if k not in ok])
        return done

    def drain_jobs(self):
        """Blocks until every submitted job has finished; the results stay
        queued for get_finished_jobs()."""
        with self._idle:
            while self._pending:
                self._idle.wait()

    def shutdown(self):
        if self._closed:
            return
        self._closed = True
        self._lookup_q.put(None)
        for _ in self._threads[1:]:
            self._job_q.put(None)
        for t in self._threads:
            t.join()
        self._lookup_conn.close()

    # ---- internals (scheduler thread) -------------------------------------------------
    @staticmethod
    def _position(key, req_context):
        """The key's end-token position in the request (None: not known)."""
        get = getattr(req_context, "get_offload_key_position", None)
        pos = get(key) if get is not None else None
        return None if pos is None else int(pos)

    def _remember(self, key, req_context):
        """Wire key of `key`, filed under its (group, end position) in the request."""
        wire = wire_key(key)
        pos = self._position(key, req_context)
        if pos is not None:
            self._req_positions.setdefault(req_context.req_id, {})[
                (self._group_of(key), int(pos))] = wire
        return wire

    @staticmethod
    def _group_of(key):
        key = bytes(key)
        return int.from_bytes(key[-4:], "big") if len(key) > 32 else 0

    def _parent(self, key, req_context):
        """The wire key of the chunk ending one chunk span before `key` in the
        same KV group of the request (b"" = chain root, or not known)."""
        self._remember(key, req_context)
        pos = self._position(key, req_context)
        if pos is None:
            return b""
        g = self._group_of(key)
        span = self._spans[g] if g < len(self._spans) else 0
        if span <= 0 or int(pos) <= span:
            return b""
        return self._req_positions.get(req_context.req_id, {}).get((g, pos - span), b"")

    def _job(self, tj, is_load):
        if self._closed:
            raise RuntimeError("tier is shut down")
        keys = list(tj.keys)
        slots = [int(s) for s in tj.chunk_ids]
        if len(slots) != len(keys):
            raise ValueError(f"job {tj.job_id}: {len(keys)} keys, {len(slots)} chunk_ids")
        for s in slots:
            if not 0 <= s < self.num_slots:
                raise IndexError(f"slot {s} outside the primary tier (0..{self.num_slots - 1})")
        bb = self.block_bytes
        views = [self._view[s * bb:(s + 1) * bb] for s in slots]
        for k in keys:
            self._remember(k, tj.req_context)
        return _Job(int(tj.job_id), is_load, keys, [wire_key(k) for k in keys], [], views,
                    time.perf_counter())

    def _enqueue(self, job):
        with self._lock:
            if job.job_id in self._pending:
                raise ValueError(f"job {job.job_id} is already pending")
            self._pending.add(job.job_id)
        self._job_q.put(job)

    def _apply_lookup_results(self):
        while True:
            try:
                results = self._lookup_done.get_nowait()
            except queue.Empty:
                return
            self._lookups_in_flight -= 1
            for wire, found in results:
                v = self._verdicts.get(wire)
                if v is not None and v.result is None:
                    v.result = found

    def _mark_miss(self, keys):
        for k in keys:
            v = self._verdicts.get(wire_key(k))
            if v is not None:
                v.result = False

    def _write_manifest(self):
        """v1 servers (no namespace manifest): the manifest is a block under
        _MANIFEST_KEY, put-if-absent (the first engine's stays)."""
        body = _canonical(self.manifest)
        if len(body) + 8 > self.block_bytes:
            return  # a chunk too small to hold it; the namespace fields still bind
        buf = bytearray(self.block_bytes)
        buf[:8] = len(body).to_bytes(8, "little")
        buf[8:8 + len(body)] = body
        self._lookup_conn.call("put", [_MANIFEST_KEY], None, [buf])

    def _check_manifest(self, refuse):
        """v2: the namespace's stored manifest against ours (warn or refuse)."""
        _, ns = self._lookup_conn.ensure()
        if getattr(ns, "manifest_matches", True):
            return
        msg = (f"strata namespace {ns.bucket}: stored manifest {bytes(ns.manifest)!r} differs "
               f"from this engine's {_canonical(self.manifest)!r}")
        if refuse:
            raise ValueError(msg)
        logging.getLogger(__name__).warning("%s", msg)

    def read_manifest(self):
        """The manifest stored with this tier's namespace (dict), or None."""
        if _NS_MANIFEST:
            _, ns = self._lookup_conn.ensure()
            return json.loads(bytes(ns.manifest)) if ns.manifest else None
        buf = bytearray(self.block_bytes)
        [st] = self._lookup_conn.call("get_into", [_MANIFEST_KEY], [buf])
        if st != strata_kv.OK:
            return None
        n = int.from_bytes(buf[:8], "little")
        return json.loads(bytes(buf[8:8 + n]))

    # ---- background threads -----------------------------------------------------------
    def _probe(self, batch):
        """[(wire, found)] for a step's probes (deduplicated)."""
        wires = list(dict.fromkeys(w for _, w, _ in batch))
        client, ns = self._lookup_conn.ensure()
        if hasattr(client, "lookup_each"):  # one round trip for the whole step
            self.lookup_round_trips += 1
            found = self._lookup_conn.call("lookup_each", wires)
            return [(w, f is True or (f is not False and f == strata_kv.OK))
                    for w, f in zip(wires, found)]
        # LOOKUP answers how many leading keys of a chain are stored: one call
        # per (request, group) chain, in token order; keys after the first
        # miss are misses for prefix reuse.
        chains = collections.defaultdict(list)
        for key, wire, ctx in batch:
            pos = self._position(key, ctx)
            chains[(ctx.req_id, self._group_of(key))].append((pos or 0, wire))
        out = {}
        for chain in chains.values():
            chain.sort(key=lambda pw: pw[0])
            ws = list(dict.fromkeys(w for _, w in chain))
            self.lookup_round_trips += 1
            hits = self._lookup_conn.call("lookup", ws)
            for i, w in enumerate(ws):
                out[w] = out.get(w, False) or i < hits
        return [(w, out.get(w, False)) for w in wires]

    def _lookup_worker(self):
        while True:
            try:
                batch = self._lookup_q.get(timeout=0.05)
            except queue.Empty:
                self._poll_events()
                continue
            if batch is None:
                return
            self._poll_events()
            try:
                results = self._probe(batch)
            except Exception:  # noqa: BLE001 - an unreachable store is a miss, not a crash
                results = [(w, False) for _, w, _ in batch]
            self._lookup_done.put(results)

    def _io_worker(self, conn):
        while True:
            job = self._job_q.get()
            if job is None:
                conn.close()
                return
            result = JobResult(job_id=job.job_id, success=False)
            try:
                if job.is_load:
                    st = conn.call("get_into", job.wire, job.views)
                    good = (strata_kv.OK,)
                else:
                    st = conn.call("put", job.wire, job.parents, job.views)
                    good = (strata_kv.OK, strata_kv.EXISTS)
                ok = [s in good for s in st]
                result.success = all(ok) and len(ok) == len(job.keys)
                if job.is_load and not result.success:
                    result.successful_keys = tuple(k for k, g in zip(job.keys, ok) if g)
            except Exception:  # noqa: BLE001 - reported through the job's result
                if job.is_load:
                    result.successful_keys = ()
            result.transfer_time = time.perf_counter() - job.t0
            with self._idle:
                self._pending.discard(job.job_id)
                self._finished.append(result)
                self._idle.notify_all()

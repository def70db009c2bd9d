"""strata as a vLLM offloading secondary tier (vllm.v1.kv_offload).

vLLM keeps offloaded blocks in a CPU "primary" tier: one host buffer cut into
fixed-size slots that the GPU copies into and out of. A secondary tier moves
blocks between those slots and slower storage, asynchronously. This class has
the shape of vLLM's interfaces for that, split as vLLM splits them:

  scheduler side (OffloadingManager.lookup):
    lookup(block_hashes) -> int    number of leading blocks stored; one round
                                   trip for any number of hashes, no side
                                   effects (no recency bump, no lease)
  worker side (OffloadingHandler / SecondaryTierManager):
    submit_store(job_id, block_hashes, slot_ids[, parent_hash])   -> True
    submit_load(job_id, block_hashes, slot_ids)                    -> True
        (or submit_store(job) / submit_load(job) with a TransferJob-like
        object: .job_id, .keys, .chunk_ids / .block_ids)
    transfer_async(job_id, (src_spec, dst_spec))  vLLM's OffloadingHandler form
    get_finished() -> [(job_id, success)]     vLLM's TransferResult pairs
    get_finished_jobs() -> [JobResult]        with per-block successful_keys
    has_pending_work(), wait(job_ids), drain_jobs(), shutdown()

submit_* only enqueue: background worker threads, each with its own
connection, send stores straight from the slots and receive loads straight
into them (no staging copies). A store counts EXISTS as success (put-if-absent:
another engine stored the same block first). A load fails as a whole if any
block is missing, and its JobResult names the blocks that did arrive, so the
engine can recompute just the rest (vLLM's per-block load errors).

Keys: vLLM's 32-byte block hashes are used as they are; other shapes go
through kvutil.wire_key. Parent links (used by the server to evict chain tails
first) come from the order of the hashes in a job and from the last lookup
that contained them.
"""
import collections
import queue
import threading
import time
from dataclasses import dataclass, field

import strata_kv

from .kvutil import NamespaceConnection, byte_view, wire_key


@dataclass
class JobResult:
    job_id: int
    success: bool
    successful_keys: list = field(default_factory=list)
    transfer_time: float = 0.0
    is_store: bool = False
    error: str = ""


class StrataLoadStoreSpec:
    """vLLM LoadStoreSpec naming blocks in strata (by block hash)."""

    def __init__(self, block_hashes):
        self.block_hashes = list(block_hashes)

    @staticmethod
    def medium():
        return StrataOffloadTier.medium


@dataclass
class _Job:
    job_id: int
    is_store: bool
    keys: list        # engine keys, for results
    wire: list        # wire keys
    parents: list     # wire parents (stores)
    slots: list


class StrataOffloadTier:
    """A vLLM secondary tier backed by one strata namespace.

    primary: the CPU primary tier's buffer (numpy array, memoryview, bytearray
    or CPU torch tensor), viewed as slots of `block_bytes` bytes; namespace:
    the strata namespace descriptor (dict of open_namespace fields, including
    block_bytes).
    """

    medium = "STRATA"

    def __init__(self, primary, *, host, port, access_key, secret_key, namespace,
                 num_workers=1, timeout_ms=60000, parent_memory=1 << 16):
        self.block_bytes = int(namespace["block_bytes"])
        self._slots = byte_view(primary)
        if self._slots.size % self.block_bytes:
            raise ValueError("primary buffer is not a whole number of blocks")
        self.num_slots = self._slots.size // self.block_bytes
        conn_args = (host, port, access_key, secret_key, namespace, timeout_ms)
        # The scheduler's connection (lookup) is separate from the workers'.
        self._lookup_conn = NamespaceConnection(*conn_args)
        self._lookup_conn.ensure()  # fail fast on bad credentials / descriptor
        self._lookup_lock = threading.Lock()
        self._parents = collections.OrderedDict()  # wire key -> wire parent
        self._parent_memory = parent_memory
        self._parents_lock = threading.Lock()
        self._queue = queue.Queue()
        self._done_lock = threading.Lock()
        self._done = []
        self._pending = set()
        self._cv = threading.Condition(self._done_lock)
        self._closed = False
        self._workers = [threading.Thread(target=self._run, args=(NamespaceConnection(*conn_args),),
                                          name=f"strata-tier-{i}", daemon=True)
                         for i in range(num_workers)]
        for w in self._workers:
            w.start()

    # ---- scheduler side -----------------------------------------------------
    def lookup(self, block_hashes):
        """Number of leading blocks of block_hashes stored in strata."""
        wire = [wire_key(h) for h in block_hashes]
        if not wire:
            return 0
        self._remember_chain(wire)
        with self._lookup_lock:
            return self._lookup_conn.call("lookup", wire)

    # ---- worker side --------------------------------------------------------
    def submit_store(self, job_or_id, block_hashes=None, slot_ids=None, parent_hash=None):
        """Queues a store of the blocks in slot_ids; returns at once (True)."""
        job_id, keys, slots = self._unpack(job_or_id, block_hashes, slot_ids)
        wire = [wire_key(k) for k in keys]
        first_parent = wire_key(parent_hash) if parent_hash is not None else None
        if first_parent is None and wire:
            with self._parents_lock:
                first_parent = self._parents.get(wire[0], b"")
        parents = ([first_parent] + wire[:-1]) if wire else []
        self._enqueue(_Job(job_id, True, list(keys), wire, parents, slots))
        return True

    def submit_load(self, job_or_id, block_hashes=None, slot_ids=None):
        """Queues a load of the blocks into slot_ids; returns at once (True)."""
        job_id, keys, slots = self._unpack(job_or_id, block_hashes, slot_ids)
        wire = [wire_key(k) for k in keys]
        self._enqueue(_Job(job_id, False, list(keys), wire, [], slots))
        return True

    def transfer_async(self, job_id, spec):
        """vLLM's OffloadingHandler entry: spec = (src, dst), one of them a
        StrataLoadStoreSpec and the other a CPU spec with .block_ids (slots)."""
        src, dst = spec
        if isinstance(dst, StrataLoadStoreSpec):
            return self.submit_store(job_id, dst.block_hashes, list(src.block_ids))
        if isinstance(src, StrataLoadStoreSpec):
            return self.submit_load(job_id, src.block_hashes, list(dst.block_ids))
        raise TypeError("transfer_async: neither side is a StrataLoadStoreSpec")

    def get_finished(self):
        """Jobs finished since the last call, as (job_id, success) pairs."""
        return [(r.job_id, r.success) for r in self.get_finished_jobs()]

    def get_finished_jobs(self):
        with self._done_lock:
            done, self._done = self._done, []
        return done

    def has_pending_work(self):
        with self._done_lock:
            return bool(self._pending)

    def wait(self, job_ids, timeout=None):
        """Blocks until none of job_ids is pending (their results stay queued
        for get_finished). Returns False on timeout."""
        job_ids = set(job_ids)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            while self._pending & job_ids:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cv.wait(left)
        return True

    def drain_jobs(self, timeout=None):
        with self._done_lock:
            pending = set(self._pending)
        return self.wait(pending, timeout)

    def shutdown(self):
        if self._closed:
            return
        self._closed = True
        for _ in self._workers:
            self._queue.put(None)
        for w in self._workers:
            w.join()
        self._lookup_conn.close()

    # ---- internals ----------------------------------------------------------
    @staticmethod
    def _unpack(job_or_id, block_hashes, slot_ids):
        if block_hashes is None:  # a TransferJob-like object
            job = job_or_id
            slots = getattr(job, "chunk_ids", None)
            if slots is None:
                slots = job.block_ids
            return int(job.job_id), list(job.keys), [int(s) for s in slots]
        if len(block_hashes) != len(slot_ids):
            raise ValueError("block_hashes and slot_ids differ in length")
        return int(job_or_id), list(block_hashes), [int(s) for s in slot_ids]

    def _enqueue(self, job):
        if self._closed:
            raise RuntimeError("tier is shut down")
        for s in job.slots:
            if not 0 <= s < self.num_slots:
                raise IndexError(f"slot {s} outside the primary tier (0..{self.num_slots - 1})")
        with self._done_lock:
            if job.job_id in self._pending:
                raise ValueError(f"job {job.job_id} is already pending")
            self._pending.add(job.job_id)
        self._queue.put(job)

    def _remember_chain(self, wire):
        with self._parents_lock:
            prev = b""
            for k in wire:
                self._parents[k] = prev
                self._parents.move_to_end(k)
                prev = k
            while len(self._parents) > self._parent_memory:
                self._parents.popitem(last=False)

    def _slot(self, i):
        return self._slots[i * self.block_bytes:(i + 1) * self.block_bytes]

    def _run(self, conn):
        while True:
            job = self._queue.get()
            if job is None:
                conn.close()
                return
            t0 = time.perf_counter()
            result = JobResult(job.job_id, False, is_store=job.is_store)
            try:
                views = [self._slot(s) for s in job.slots]
                if job.is_store:
                    st = conn.call("put", job.wire, job.parents, views)
                    good = (strata_kv.OK, strata_kv.EXISTS)
                else:
                    st = conn.call("get_into", job.wire, views)
                    good = (strata_kv.OK,)
                result.successful_keys = [k for k, s in zip(job.keys, st) if s in good]
                result.success = len(result.successful_keys) == len(job.keys)
                if not result.success:
                    bad = sorted({strata_kv.status_name(s) for s in st if s not in good})
                    result.error = ", ".join(bad)
            except Exception as e:  # noqa: BLE001 - reported through the job's result
                result.error = str(e)
            result.transfer_time = time.perf_counter() - t0
            with self._cv:
                self._pending.discard(job.job_id)
                self._done.append(result)
                self._cv.notify_all()

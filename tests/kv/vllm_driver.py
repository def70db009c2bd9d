"""vLLM's side of a secondary offloading tier, replayed against the real
interface (vLLM when importable, else the stubs in tests/kv/stubs, which
declare vLLM 0.33's names under its module paths).

The tier is built the way vLLM builds it: the extra config's
"secondary_tiers" entries go to SecondaryTierFactory.create_secondary_tier
with the primary tier's memoryview (num_slots x chunk_bytes) and the
OffloadingSpec. Then, per scheduler step, in vLLM's order:

  get_finished_jobs()          completions of earlier steps (loads, stores)
  on_new_request(ctx)          once, when a request is first seen
  lookup(key, ctx) per key     block by block over the prompt (every KV
                               group's key of a block); RETRY: the request
                               waits for the next step; MISS ends the prefix
  submit_load(TransferJob)     promotion of the hit prefix into primary slots
  submit_store(TransferJob)    cascade of newly computed chunks
  on_schedule_end(ctx)         end of the step
and at the end drain_jobs(), get_finished_jobs(), shutdown().

Block hashes chain over the prompt (hash(parent, tokens), one per full block);
the scheduler sets each key's end-token position in the ReqContext; the KV
bytes of a (block, group) are a deterministic function of its key, standing
for what prefill computes. The last prompt token is always computed.
"""
import hashlib
import itertools
import os
import pickle
import sys
import time
from dataclasses import dataclass, field

import numpy as np

STUBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stubs")
try:
    import vllm  # noqa: F401
    REAL_VLLM = not getattr(vllm, "STRATA_INTERFACE_STUB", False)
except ImportError:
    sys.path.insert(0, STUBS)
    REAL_VLLM = False

from vllm.v1.kv_offload.base import (LookupResult, OffloadingSpec, ReqContext,  # noqa: E402
                                     ScheduleEndContext, make_offload_key)
from vllm.v1.kv_offload.config import (OffloadingCacheConfig, OffloadingConfig,  # noqa: E402
                                       OffloadingGroupConfig, OffloadingModelConfig,
                                       OffloadingParallelConfig)
from vllm.v1.kv_offload.tiering.base import TransferJob  # noqa: E402
from vllm.v1.kv_offload.tiering.factory import SecondaryTierFactory  # noqa: E402

NONE_HASH = hashlib.sha256(b"vllm-driver-none-hash").digest()


def prompt_block_hashes(token_ids, block_size):
    hashes, parent = [], NONE_HASH
    for start in range(0, len(token_ids) - block_size + 1, block_size):
        parent = hashlib.sha256(pickle.dumps((parent, tuple(int(t) for t in
                                                            token_ids[start:start + block_size])))
                                ).digest()
        hashes.append(parent)
    return hashes


def block_kv(key, block_bytes):
    """What prefill computes for the chunk with this OffloadKey."""
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(key).digest()[:8], "little"))
    return rng.integers(0, 256, block_bytes, dtype=np.uint8)


def offloading_config(*, model="test-model", dtype="float16", tokens_per_block=16,
                      num_groups=1, worker_kv_bytes_per_block=4096, tp_size=1, pp_size=1,
                      agnostic=True, extra_config=None, engine_id="engine-0"):
    groups = tuple(OffloadingGroupConfig(tokens_per_block=tokens_per_block,
                                         layer_names=tuple(f"g{g}.layer{i}" for i in range(2)))
                   for g in range(num_groups))
    return OffloadingConfig(
        groups=groups, worker_kv_bytes_per_block=worker_kv_bytes_per_block,
        enable_kv_cache_events=False, extra_config=dict(extra_config or {}),
        engine_id=engine_id, model=OffloadingModelConfig(name=model, dtype=dtype),
        cache=OffloadingCacheConfig(tokens_per_hash=tokens_per_block, blocks_per_chunk=1),
        parallel=OffloadingParallelConfig(rank=0, world_size=tp_size * pp_size, tp_size=tp_size,
                                          pp_size=pp_size, pcp_size=1, dcp_size=1,
                                          data_parallel_index=0,
                                          is_parallelism_agnostic=agnostic))


class DriverSpec(OffloadingSpec):
    """An OffloadingSpec carrying the config, as TieringOffloadingSpec does
    (secondary_tier_configs from the extra config); no primary tier."""

    def __init__(self, config):
        super().__init__(config)
        self.secondary_tier_configs = list(self.extra_config.get("secondary_tiers", []))

    def get_manager(self):
        raise NotImplementedError

    def get_worker(self, kv_caches):
        raise NotImplementedError


def strata_tier_config(conn_kwargs, **kw):
    """One "secondary_tiers" entry, as a vLLM user writes it in
    kv_connector_extra_config."""
    return {"type": "StrataSecondaryTier", "module_path": "strata.vllm_tier",
            **conn_kwargs, **kw}


def build_tier(spec, primary_view, index=0):
    return SecondaryTierFactory.create_secondary_tier(spec.secondary_tier_configs[index],
                                                      primary_view, spec)


@dataclass
class Request:
    req_id: str
    token_ids: list
    hashes: list
    ctx: ReqContext
    keys: list = field(default_factory=list)   # per block: [key of group 0, group 1, ...]
    state: str = "NEW"   # NEW -> WAITING -> LOADING -> COMPUTED -> STORING -> FINISHED
    retries: int = 0
    hit_blocks: int = 0
    loaded_blocks: int = 0
    computed_blocks: int = 0
    failed_keys: list = field(default_factory=list)
    gpu: dict = field(default_factory=dict)   # block index -> [bytes per group]
    slots: list = field(default_factory=list)
    job_keys: list = field(default_factory=list)


class VllmEngine:
    """Drives the tier of `tier_config` like vLLM's scheduler does."""

    def __init__(self, tier_config, *, block_size=16, block_bytes=16 << 10, num_slots=64,
                 num_groups=1, model="test-model", **config_kw):
        self.block_size = block_size
        self.block_bytes = block_bytes
        self.num_groups = num_groups
        extra = {"spec_name": "TieringOffloadingSpec", "secondary_tiers": [tier_config]}
        self.spec = DriverSpec(offloading_config(model=model, tokens_per_block=block_size,
                                                 num_groups=num_groups, extra_config=extra,
                                                 **config_kw))
        self.primary = np.zeros((num_slots, block_bytes), dtype=np.uint8)
        self.tier = build_tier(self.spec, memoryview(self.primary))
        self.free_slots = list(range(num_slots))
        self.requests = {}
        self.jobs = {}
        self.job_ids = itertools.count(1)
        self.calls = []       # tier method names, in call order
        self.mismatches = []  # (req_id, block, group) whose loaded bytes were wrong
        self.steps = 0
        self._new_ids = []

    def _call(self, name, *args):
        self.calls.append(name)
        return getattr(self.tier, name)(*args)

    def add_request(self, req_id, token_ids):
        hashes = prompt_block_hashes(token_ids, self.block_size)
        req = Request(req_id, list(token_ids), hashes, ReqContext(req_id=req_id))
        for i, h in enumerate(hashes):
            ks = [make_offload_key(h, g) for g in range(self.num_groups)]
            for k in ks:
                req.ctx.set_offload_key_position(k, (i + 1) * self.block_size)
            req.keys.append(ks)
        self.requests[req_id] = req
        return req

    def run(self, timeout=60, step_sleep=0.001):
        deadline = time.monotonic() + timeout
        while any(r.state != "FINISHED" for r in self.requests.values()):
            if time.monotonic() > deadline:
                raise TimeoutError({r.req_id: r.state for r in self.requests.values()})
            self.step()
            time.sleep(step_sleep)

    def step(self):
        self.steps += 1
        self._poll()
        for req in list(self.requests.values()):
            if req.state == "NEW":
                self._call("on_new_request", req.ctx)
                self._new_ids.append(req.req_id)
                req.state = "WAITING"
            if req.state == "WAITING":
                self._schedule(req)
            if req.state == "COMPUTED":
                self._offload(req)
        self._call("on_schedule_end", ScheduleEndContext(tuple(self._new_ids), ()))
        self._new_ids = []

    def finish(self):
        """What vLLM does at reset/shutdown: drain, collect, shut down."""
        self._call("drain_jobs")
        self._poll()
        self._call("shutdown")

    # ---- scheduler --------------------------------------------------------------------
    def _schedule(self, req):
        # Every block up to the cap is asked each step (answered from the tier's
        # verdicts once known), so one step queues the whole prompt's probes.
        cap = (len(req.token_ids) - 1) // self.block_size  # the last token is computed
        verdicts = [[self._call("lookup", k, req.ctx) for k in ks] for ks in req.keys[:cap]]
        hits = 0
        for vs in verdicts:
            if LookupResult.RETRY in vs:
                req.retries += 1
                return  # not known yet: asked again next step
            if any(v is not LookupResult.HIT for v in vs):
                break
            hits += 1
        req.hit_blocks = hits
        if hits == 0:
            self._prefill(req, 0)
            return
        n = hits * self.num_groups
        if len(self.free_slots) < n:
            return
        req.slots = [self.free_slots.pop() for _ in range(n)]
        req.job_keys = [k for ks in req.keys[:hits] for k in ks]
        job_id = next(self.job_ids)
        self.jobs[job_id] = (req, "load")
        self._call("submit_load", TransferJob(job_id=job_id, keys=list(req.job_keys),
                                              chunk_ids=np.array(req.slots, dtype=np.int64),
                                              is_promotion=True, req_context=req.ctx))
        req.state = "LOADING"

    def _poll(self):
        for res in self._call("get_finished_jobs"):
            req, kind = self.jobs.pop(res.job_id)
            if kind == "load":
                self._load_done(req, res)
            else:
                self._free(req)
                self._call("on_request_finished", req.ctx)
                req.state = "FINISHED"

    def _load_done(self, req, res):
        ok = set(req.job_keys) if res.success else set(res.successful_keys or ())
        req.failed_keys = [k for k in req.job_keys if k not in ok]
        slot_of = dict(zip(req.job_keys, req.slots))
        loaded = 0
        for i, ks in enumerate(req.keys[:req.hit_blocks]):
            if not all(k in ok for k in ks):
                break  # a prefix: recompute from the first block that did not load
            data = [self.primary[slot_of[k]].copy() for k in ks]  # primary -> GPU
            for g, (k, d) in enumerate(zip(ks, data)):
                if not np.array_equal(d, block_kv(k, self.block_bytes)):
                    self.mismatches.append((req.req_id, i, g))
            req.gpu[i] = data
            loaded += 1
        req.loaded_blocks = loaded
        self._free(req)
        self._prefill(req, loaded)

    def _prefill(self, req, start):
        for i in range(start, len(req.keys)):
            req.gpu[i] = [block_kv(k, self.block_bytes) for k in req.keys[i]]
            req.computed_blocks += 1
        req.state = "COMPUTED"

    def _offload(self, req):
        todo = [(i, g) for i in range(req.loaded_blocks, len(req.keys))
                for g in range(self.num_groups)]
        if not todo:
            self._call("on_request_finished", req.ctx)
            req.state = "FINISHED"
            return
        if len(self.free_slots) < len(todo):
            return
        req.slots = [self.free_slots.pop() for _ in todo]
        for (i, g), slot in zip(todo, req.slots):
            self.primary[slot] = req.gpu[i][g]  # GPU -> primary
        job_id = next(self.job_ids)
        self.jobs[job_id] = (req, "store")
        self._call("submit_store", TransferJob(job_id=job_id,
                                               keys=[req.keys[i][g] for i, g in todo],
                                               chunk_ids=np.array(req.slots, dtype=np.int64),
                                               is_promotion=False, req_context=req.ctx))
        req.state = "STORING"

    def _free(self, req):
        self.free_slots.extend(req.slots)
        req.slots = []

"""A fake of vLLM's side of an offloading tier (vllm.v1.kv_offload), faithful
in the calls it makes and the order it makes them:

  - block hashes chain over the prompt, one per full block of block_size
    tokens: hash(parent_hash, token_ids), seeded by a fixed NONE_HASH;
  - the scheduler asks lookup(hashes) for the cached prefix and never loads
    the whole prompt (the last token is always computed);
  - the engine owns a CPU primary tier (one host array cut into block slots)
    that the tier is built over; it allocates slots, then the worker submits
    the load (submit_load) and polls get_finished() once per engine step,
    never waiting;
  - after a finished load the blocks are "copied to the GPU" (checked against
    what prefill would have computed); the rest is prefilled, and the newly
    computed full blocks are copied into slots and offloaded (submit_store,
    parent = the block before them); slots are freed when their job finishes;
  - a failed load is recomputed (vLLM's recovery), never used.

The KV bytes of a block are a deterministic function of its hash, standing
for what prefill computes from that prefix.
"""
import hashlib
import itertools
import pickle
import time
from dataclasses import dataclass, field

import numpy as np

NONE_HASH = hashlib.sha256(b"fake-vllm-none-hash").digest()


def hash_block_tokens(parent_hash, token_ids, extra_keys=None):
    return hashlib.sha256(pickle.dumps((parent_hash, tuple(token_ids), extra_keys))).digest()


def prompt_block_hashes(token_ids, block_size, extra_keys=None):
    hashes, parent = [], NONE_HASH
    for start in range(0, len(token_ids) - block_size + 1, block_size):
        parent = hash_block_tokens(parent, token_ids[start:start + block_size], extra_keys)
        hashes.append(parent)
    return hashes


def block_kv(block_hash, block_bytes):
    """What prefill computes for the block with this hash."""
    rng = np.random.default_rng(int.from_bytes(block_hash[:8], "little"))
    return rng.integers(0, 256, block_bytes, dtype=np.uint8)


@dataclass
class Request:
    req_id: str
    token_ids: list
    hashes: list
    state: str = "WAITING"  # WAITING -> LOADING -> COMPUTED -> STORING -> FINISHED
    hit_blocks: int = 0      # what lookup said
    loaded_blocks: int = 0   # what arrived and was used
    computed_blocks: int = 0
    load_failed: bool = False
    gpu: dict = field(default_factory=dict)  # block index -> KV bytes
    slots: list = field(default_factory=list)


class FakeVllmEngine:
    """Drives a secondary tier (make_tier(primary) -> tier) like vLLM does."""

    def __init__(self, make_tier, *, block_size=16, block_bytes=16 << 10, num_slots=64):
        self.block_size = block_size
        self.block_bytes = block_bytes
        self.primary = np.zeros((num_slots, block_bytes), dtype=np.uint8)
        self.tier = make_tier(self.primary)
        self.free_slots = list(range(num_slots))
        self.requests = {}
        self.jobs = {}  # job_id -> (request, "load" | "store")
        self.job_ids = itertools.count(1)
        self.mismatches = []  # (req_id, block index): loaded bytes that were wrong
        self.calls = []       # ("lookup" | "submit_load" | ..., job_id or hits, seconds)
        self.steps = 0

    # ---- the engine's API ---------------------------------------------------
    def add_request(self, req_id, token_ids):
        req = Request(req_id, list(token_ids),
                      prompt_block_hashes(token_ids, self.block_size))
        self.requests[req_id] = req
        return req

    def run(self, timeout=60, step_sleep=0.001):
        deadline = time.monotonic() + timeout
        while any(r.state != "FINISHED" for r in self.requests.values()):
            if time.monotonic() > deadline:
                states = {r.req_id: r.state for r in self.requests.values()}
                raise TimeoutError(f"requests not finished: {states}")
            self.step()
            time.sleep(step_sleep)

    def step(self):
        self.steps += 1
        self._poll_worker()
        for req in list(self.requests.values()):
            if req.state == "WAITING":
                self._schedule(req)
            if req.state == "COMPUTED":
                self._offload(req)

    def shutdown(self):
        self.tier.shutdown()

    # ---- scheduler ----------------------------------------------------------
    def _schedule(self, req):
        t0 = time.perf_counter()
        hits = self.tier.lookup(req.hashes)
        self.calls.append(("lookup", hits, time.perf_counter() - t0))
        # The last prompt token is always computed: cap the hit.
        cap = (len(req.token_ids) - 1) // self.block_size
        req.hit_blocks = min(hits, cap)
        if req.hit_blocks == 0:
            self._prefill(req)
            return
        if len(self.free_slots) < req.hit_blocks:
            return  # no room in the CPU tier this step; try again next step
        req.slots = [self.free_slots.pop() for _ in range(req.hit_blocks)]
        job_id = next(self.job_ids)
        self.jobs[job_id] = (req, "load")
        t0 = time.perf_counter()
        accepted = self.tier.submit_load(job_id, req.hashes[:req.hit_blocks], req.slots)
        self.calls.append(("submit_load", job_id, time.perf_counter() - t0))
        assert accepted
        req.state = "LOADING"

    # ---- worker -------------------------------------------------------------
    def _poll_worker(self):
        t0 = time.perf_counter()
        finished = self.tier.get_finished()
        self.calls.append(("get_finished", len(finished), time.perf_counter() - t0))
        for job_id, success in finished:
            req, kind = self.jobs.pop(job_id)
            if kind == "load":
                self._load_done(req, success)
            else:
                self._free(req)
                req.state = "FINISHED"

    def _load_done(self, req, success):
        if success:
            for i, slot in enumerate(req.slots):
                data = self.primary[slot].copy()  # CPU tier -> GPU
                if not np.array_equal(data, block_kv(req.hashes[i], self.block_bytes)):
                    self.mismatches.append((req.req_id, i))
                req.gpu[i] = data
            req.loaded_blocks = len(req.slots)
        else:
            req.load_failed = True
        self._free(req)
        self._prefill(req)

    def _prefill(self, req):
        for i in range(len(req.hashes)):
            if i not in req.gpu:
                req.gpu[i] = block_kv(req.hashes[i], self.block_bytes)
                req.computed_blocks += 1
        req.state = "COMPUTED"

    def _offload(self, req):
        first = req.loaded_blocks
        todo = req.hashes[first:]
        if not todo or len(self.free_slots) < len(todo):
            if not todo:
                req.state = "FINISHED"
            return
        req.slots = [self.free_slots.pop() for _ in todo]
        for j, slot in enumerate(req.slots):
            self.primary[slot] = req.gpu[first + j]  # GPU -> CPU tier
        job_id = next(self.job_ids)
        self.jobs[job_id] = (req, "store")
        parent = req.hashes[first - 1] if first else None
        t0 = time.perf_counter()
        accepted = self.tier.submit_store(job_id, todo, req.slots, parent_hash=parent)
        self.calls.append(("submit_store", job_id, time.perf_counter() - t0))
        assert accepted
        req.state = "STORING"

    def _free(self, req):
        self.free_slots.extend(req.slots)
        req.slots = []

"""strata.vllm_tier.StrataSecondaryTier as vLLM loads and drives it (through
SecondaryTierFactory, real vLLM or the interface stubs), against a real
strata server: interface conformance, RETRY before HIT, one lookup round trip
per step, bytes landing in the named slots, per-key load failures and
recompute, parent links from token positions, non-blocking calls, KV
groups, parallelism-agnostic namespaces, the manifest."""
import inspect
import os
import signal
import threading
import time
import unittest

import numpy as np

import strata_kv
import vllm_driver
from kvtest import KvTestCase
from vllm_driver import (DriverSpec, LookupResult, ReqContext, ScheduleEndContext, TransferJob,
                         VllmEngine, block_kv, build_tier, make_offload_key, offloading_config,
                         prompt_block_hashes, strata_tier_config)
from vllm.v1.kv_offload.base import Medium
from vllm.v1.kv_offload.tiering.base import SecondaryTierManager
from vllm.v1.kv_offload.tiering.factory import SecondaryTierFactory

from strata import PINNED_VERSIONS
from strata.vllm_tier import StrataSecondaryTier

BLOCK = 16 << 10
BS = 16  # tokens per block


def prompt(n_tokens, seed):
    return [int(t) for t in np.random.default_rng(seed).integers(0, 32000, n_tokens)]


def resolve(tier, key, ctx, timeout=10):
    """Asks until the verdict is known, ending a step after each RETRY.
    Returns (verdict, number of RETRYs)."""
    retries, deadline = 0, time.monotonic() + timeout
    while True:
        v = tier.lookup(key, ctx)
        if v is not LookupResult.RETRY:
            return v, retries
        retries += 1
        if time.monotonic() > deadline:
            raise TimeoutError("lookup never resolved")
        tier.on_schedule_end(ScheduleEndContext((), ()))
        time.sleep(0.005)


class InterfaceTest(unittest.TestCase):
    """Conformance with the pinned interface (no server needed)."""

    def test_is_a_secondary_tier_manager(self):
        self.assertTrue(issubclass(StrataSecondaryTier, SecondaryTierManager))
        self.assertEqual(StrataSecondaryTier.__abstractmethods__, frozenset())
        self.assertIs(StrataSecondaryTier.medium, Medium.STORAGE)
        self.assertEqual(PINNED_VERSIONS["vllm"], "0.33")
        cfg = strata_tier_config({})
        self.assertIs(SecondaryTierFactory.get_tier_class(cfg), StrataSecondaryTier)

    def test_signatures_match_the_base_class(self):
        base_abstract = SecondaryTierManager.__abstractmethods__
        self.assertTrue({"lookup", "submit_store", "submit_load", "get_finished_jobs",
                         "on_new_request", "drain_jobs"} <= set(base_abstract))
        hooks = {"on_schedule_end", "on_request_finished", "has_pending_work", "shutdown"}
        for name in sorted(set(base_abstract) | hooks):
            mine = inspect.signature(getattr(StrataSecondaryTier, name))
            theirs = inspect.signature(getattr(SecondaryTierManager, name))
            self.assertEqual(list(mine.parameters), list(theirs.parameters), name)
        # The factory's keywords come first in the constructor.
        params = list(inspect.signature(StrataSecondaryTier.__init__).parameters)
        self.assertEqual(params[:4], ["self", "offloading_spec", "primary_kv_view", "tier_type"])

    def test_transfer_job_and_result_fields(self):
        import dataclasses
        from vllm.v1.kv_offload.tiering.base import JobResult
        self.assertEqual([f.name for f in dataclasses.fields(TransferJob)],
                         ["job_id", "keys", "chunk_ids", "is_promotion", "req_context"])
        self.assertEqual([f.name for f in dataclasses.fields(JobResult)][:3],
                         ["job_id", "success", "successful_keys"])
        key = make_offload_key(bytes(32), 3)
        self.assertEqual(len(key), 36)
        self.assertEqual(key[-4:], b"\0\0\0\3")


class VllmTierTest(KvTestCase):

    def setUp(self):
        super().setUp()
        self.model = f"vllm-{self.id()}-{os.getpid()}"

    def tier_config(self, **kw):
        return strata_tier_config(self.server.conn_kwargs(), **kw)

    def engine(self, num_slots=64, tier_kw=None, **kw):
        eng = VllmEngine(self.tier_config(**(tier_kw or {})), block_size=BS, block_bytes=BLOCK,
                         num_slots=num_slots, model=kw.pop("model", self.model), **kw)
        self.addCleanup(lambda: eng.tier.shutdown())
        return eng

    def tier(self, num_slots=8, **kw):
        spec = DriverSpec(offloading_config(model=self.model, tokens_per_block=BS,
                                            extra_config={"secondary_tiers": [
                                                self.tier_config(**kw)]}))
        primary = np.zeros((num_slots, BLOCK), np.uint8)
        tier = build_tier(spec, memoryview(primary))
        self.addCleanup(tier.shutdown)
        return tier, primary

    def server_lookups(self, tier):
        with self.server.client() as c:
            return c.stats(c.open_namespace(**tier.namespace))["lookups"]

    def store_prompt(self, tokens, **kw):
        a = self.engine(**kw)
        a.add_request("seed", tokens)
        a.run()
        a.finish()
        return a

    # ---- construction -----------------------------------------------------------------
    def test_factory_builds_the_namespace_from_the_spec(self):
        tier, _ = self.tier()
        self.assertIsInstance(tier, SecondaryTierManager)
        self.assertEqual(tier.tier_type, "StrataSecondaryTier")
        self.assertEqual(tier.block_bytes, BLOCK)  # from the primary view's stride
        self.assertEqual(tier.num_slots, 8)
        ns = tier.namespace
        self.assertEqual((ns["model_id"], ns["kv_dtype"], ns["tokens_per_block"],
                          ns["block_bytes"], ns["tp_size"]), (self.model, "float16", BS, BLOCK, 1))
        self.assertTrue(ns["kv_layout"].startswith("vllm-tiering:"))
        self.assertEqual(tier.read_manifest(), tier.manifest)
        self.assertEqual(tier.manifest["model"], self.model)
        self.assertEqual(tier.manifest["vllm_interface"], "0.33")

    def test_wrong_credentials_fail_at_construction(self):
        with self.assertRaises(strata_kv.Error) as cm:
            self.tier(secret_key="wrong")
        self.assertEqual(cm.exception.code, strata_kv.AUTH_FAILED)

    # ---- lookups ------------------------------------------------------------------------
    def test_retry_before_hit_and_nothing_sent_before_step_end(self):
        tokens = prompt(4 * BS + 1, seed=11)
        self.store_prompt(tokens)
        tier, _ = self.tier()
        ctx = ReqContext(req_id="r")
        tier.on_new_request(ctx)
        key = make_offload_key(prompt_block_hashes(tokens, BS)[0], 0)
        before = self.server_lookups(tier)
        self.assertIs(tier.lookup(key, ctx), LookupResult.RETRY)
        time.sleep(0.2)
        self.assertIs(tier.lookup(key, ctx), LookupResult.RETRY)  # queued, not sent
        self.assertEqual(self.server_lookups(tier), before)
        self.assertTrue(tier.has_pending_work())
        verdict, retries = resolve(tier, key, ctx)
        self.assertIs(verdict, LookupResult.HIT)
        self.assertGreaterEqual(retries, 1)
        missing = make_offload_key(os.urandom(32), 0)
        self.assertEqual(resolve(tier, missing, ctx)[0], LookupResult.MISS)
        tier.on_request_finished(ctx)
        self.assertFalse(tier.has_pending_work())

    def test_one_lookup_round_trip_per_step(self):
        prompts = {f"r{i}": prompt((4 + i) * BS + 1, seed=200 + i) for i in range(5)}
        a = self.engine()
        for rid, t in prompts.items():
            a.add_request(rid, t)
        a.run()
        a.finish()
        b = self.engine()
        for rid, t in prompts.items():
            b.add_request(rid, t)
        before = self.server_lookups(b.tier)
        b.step()  # on_new_request + lookups (all RETRY) + on_schedule_end: one batch
        self.assertTrue(all(r.state == "WAITING" and r.retries == 1
                            for r in b.requests.values()))
        b.run()
        expected = 1 if hasattr(strata_kv.Client, "lookup_each") else len(prompts)
        self.assertEqual(b.tier.lookup_round_trips, expected)
        self.assertEqual(self.server_lookups(b.tier) - before, expected)
        for rid, r in b.requests.items():
            self.assertEqual(r.loaded_blocks, 4 + int(rid[1:]), rid)
        self.assertEqual(b.mismatches, [])
        b.finish()

    # ---- the engine's call sequence -----------------------------------------------------
    def test_cold_then_warm_in_another_engine(self):
        tokens = prompt(20 * BS + 5, seed=1)
        a = self.engine()
        ra = a.add_request("r1", tokens)
        a.run()
        self.assertEqual((ra.hit_blocks, ra.computed_blocks), (0, 20))
        a.finish()

        b = self.engine()
        rb = b.add_request("r1", tokens)
        b.run()
        self.assertEqual((rb.hit_blocks, rb.loaded_blocks, rb.computed_blocks), (20, 20, 0))
        self.assertEqual(b.mismatches, [])
        b.finish()
        calls = b.calls
        first = {name: calls.index(name) for name in set(calls)}
        self.assertLess(first["on_new_request"], first["lookup"])
        self.assertLess(first["lookup"], first["on_schedule_end"])
        self.assertLess(first["on_schedule_end"], first["submit_load"])
        self.assertLess(first["submit_load"], first["on_request_finished"])
        self.assertEqual(calls[-2:], ["get_finished_jobs", "shutdown"])
        self.assertEqual(calls.count("on_new_request"), 1)
        self.assertGreaterEqual(rb.retries, 1)

    def test_whole_prompt_hit_still_computes_last_token(self):
        tokens = prompt(8 * BS, seed=2)
        self.store_prompt(tokens)
        b = self.engine()
        r = b.add_request("r", tokens)
        b.run()
        self.assertEqual((r.hit_blocks, r.loaded_blocks, r.computed_blocks), (7, 7, 1))
        self.assertEqual(b.mismatches, [])

    def test_partial_hit_then_suffix_offloaded(self):
        shared = prompt(12 * BS, seed=3)
        self.store_prompt(shared + prompt(6 * BS, seed=4))
        b = self.engine()
        r = b.add_request("second", shared + prompt(9 * BS + 3, seed=5))
        b.run()
        self.assertEqual((r.hit_blocks, r.loaded_blocks, r.computed_blocks), (12, 12, 9))
        self.assertEqual(b.mismatches, [])
        b.finish()
        c = self.engine()
        r3 = c.add_request("third", shared + prompt(9 * BS + 3, seed=5))
        c.run()
        self.assertEqual(r3.loaded_blocks, 21)

    def test_two_kv_groups_use_36_byte_keys(self):
        tokens = prompt(6 * BS + 1, seed=12)
        self.store_prompt(tokens, num_groups=2)
        b = self.engine(num_groups=2)
        r = b.add_request("r", tokens)
        b.run()
        self.assertEqual(len(r.keys[0][1]), 36)
        self.assertEqual((r.loaded_blocks, r.computed_blocks), (6, 0))
        self.assertEqual(b.mismatches, [])
        # Group 1's chunk of block 0 differs from group 0's, and each landed.
        self.assertFalse(np.array_equal(r.gpu[0][0], r.gpu[0][1]))

    # ---- transfers ----------------------------------------------------------------------
    def test_bytes_land_in_the_named_slots(self):
        tier, primary = self.tier(num_slots=8)
        keys = [make_offload_key(os.urandom(32), 0) for _ in range(3)]
        ctx = ReqContext(req_id="w")
        for i, slot in enumerate((0, 1, 2)):
            primary[slot] = block_kv(keys[i], BLOCK)
        tier.submit_store(TransferJob(1, keys, np.array([0, 1, 2]), False, ctx))
        tier.drain_jobs()
        primary[:] = 0
        tier.submit_load(TransferJob(2, keys, np.array([6, 3, 5]), True, ctx))
        tier.drain_jobs()
        results = {r.job_id: r for r in tier.get_finished_jobs()}
        self.assertEqual(sorted(results), [1, 2])
        self.assertTrue(results[1].success and results[2].success)
        self.assertIsNone(results[2].successful_keys)
        for key, slot in zip(keys, (6, 3, 5)):
            np.testing.assert_array_equal(primary[slot], block_kv(key, BLOCK))
        for slot in (0, 1, 2, 4, 7):
            self.assertFalse(primary[slot].any(), slot)

    def test_take_events_reports_stores_and_removals(self):
        # OffloadingEvents of the namespace (strata's EVENTS stream), read off
        # the scheduler thread: a store shows as removed=False with the
        # engine's own keys, a delete behind its back as removed=True.
        tier, primary = self.tier(num_slots=4)
        keys = [make_offload_key(os.urandom(32), 0) for _ in range(2)]
        ctx = ReqContext(req_id="e")
        for i, k in enumerate(keys):
            primary[i] = block_kv(k, BLOCK)
        tier.submit_store(TransferJob(1, keys, np.array([0, 1]), False, ctx))
        tier.drain_jobs()
        tier.get_finished_jobs()

        def wait_for(removed, want):
            seen, deadline = [], time.time() + 10
            while time.time() < deadline:
                for ev in tier.take_events():
                    self.assertIs(ev.medium, Medium.STORAGE)
                    if ev.removed == removed:
                        seen += list(ev.keys)
                if set(want) <= set(seen):
                    return seen
                time.sleep(0.02)
            self.fail(f"no {'removal' if removed else 'store'} events for {want}: {seen}")

        wait_for(False, keys)
        with self.server.client() as c:
            self.assertEqual(c.delete(c.open_namespace(**tier.namespace), [tier_wire(keys[0])]),
                             [strata_kv.OK])
        wait_for(True, [keys[0]])
        self.assertEqual(tier.take_events(), [])  # drained; nothing new

    def test_missing_block_fails_exactly_that_key(self):
        tokens = prompt(5 * BS + 1, seed=7)
        self.store_prompt(tokens)
        tier, primary = self.tier(num_slots=8)
        ctx = ReqContext(req_id="r")
        tier.on_new_request(ctx)
        keys = [make_offload_key(h, 0) for h in prompt_block_hashes(tokens, BS)[:3]]
        gone = make_offload_key(os.urandom(32), 0)  # e.g. evicted since the lookup
        tier.submit_load(TransferJob(7, [keys[0], gone, keys[1]], np.array([0, 1, 2]), True,
                                     ctx))
        tier.drain_jobs()
        [res] = tier.get_finished_jobs()
        self.assertFalse(res.success)
        self.assertEqual(list(res.successful_keys), [keys[0], keys[1]])
        np.testing.assert_array_equal(primary[2], block_kv(keys[1], BLOCK))
        self.assertFalse(primary[1].any())

    def test_failed_load_turns_the_verdict_to_miss(self):
        tokens = prompt(3 * BS + 1, seed=8)
        self.store_prompt(tokens)
        tier, _ = self.tier()
        ctx = ReqContext(req_id="r")
        keys = [make_offload_key(h, 0) for h in prompt_block_hashes(tokens, BS)]
        for k in keys:
            self.assertIs(resolve(tier, k, ctx)[0], LookupResult.HIT)
        with self.server.client() as c:  # evicted behind the engine's back
            self.assertEqual(c.delete(c.open_namespace(**tier.namespace), [tier_wire(keys[2])]),
                             [strata_kv.OK])
        tier.submit_load(TransferJob(1, keys, np.array([0, 1, 2]), True, ctx))
        tier.drain_jobs()
        [res] = tier.get_finished_jobs()
        self.assertEqual(list(res.successful_keys), keys[:2])
        self.assertIs(tier.lookup(keys[2], ctx), LookupResult.MISS)  # no doomed retry
        self.assertIs(tier.lookup(keys[1], ctx), LookupResult.HIT)

    def test_engine_recomputes_after_eviction_between_lookup_and_load(self):
        tokens = prompt(5 * BS + 1, seed=10)
        self.store_prompt(tokens)
        b = self.engine()
        r = b.add_request("r", tokens)
        while r.state == "WAITING" or r.state == "NEW":
            b.step()
            time.sleep(0.002)
        with self.server.client() as c:  # after the lookups, before the load runs
            c.delete(c.open_namespace(**b.tier.namespace), [tier_wire(r.keys[2][0])])
        b.run()
        self.assertEqual(r.hit_blocks, 5)
        if r.failed_keys:  # the load ran after the delete (it usually does)
            self.assertEqual(r.failed_keys, [ks[0] for ks in r.keys[2:5]])
            self.assertEqual((r.loaded_blocks, r.computed_blocks), (2, 3))
        self.assertEqual(b.mismatches, [])

    def test_parents_come_from_token_positions(self):
        """Each chunk is linked to the one ending a chunk before it in the
        request (ReqContext positions), whatever the order of a job's keys or
        the split into jobs: deleting block 1 takes blocks 2..5 with it."""
        tier, primary = self.tier(num_slots=6)
        ctx = ReqContext(req_id="p")
        hashes = prompt_block_hashes(prompt(6 * BS, seed=9), BS)
        keys = [make_offload_key(h, 0) for h in hashes]
        for i, k in enumerate(keys):
            ctx.set_offload_key_position(k, (i + 1) * BS)
            primary[i] = block_kv(k, BLOCK)
        tier.on_new_request(ctx)
        tier.submit_store(TransferJob(1, keys[2::-1], np.array([2, 1, 0]), False, ctx))
        tier.drain_jobs()
        tier.submit_store(TransferJob(2, keys[:2:-1], np.array([5, 4, 3]), False, ctx))
        tier.drain_jobs()
        self.assertTrue(all(r.success for r in tier.get_finished_jobs()))
        with self.server.client() as c:
            ns = c.open_namespace(**tier.namespace)
            wires = [tier_wire(k) for k in keys]
            self.assertEqual(c.lookup(ns, wires), 6)
            c.delete(ns, [wires[1]])
            self.assertEqual(c.lookup(ns, wires), 1)
            for w in wires[2:]:  # the chain below block 1 went with it
                self.assertEqual(c.lookup(ns, [w]), 0)
        np.testing.assert_array_equal(primary[0], block_kv(keys[0], BLOCK))

    def test_calls_do_not_block_on_a_frozen_server(self):
        tokens = prompt(10 * BS + 1, seed=6)
        self.store_prompt(tokens)
        tier, primary = self.tier(num_slots=16)
        ctx = ReqContext(req_id="f")
        keys = [make_offload_key(h, 0) for h in prompt_block_hashes(tokens, BS)]
        os.kill(self.server.proc.pid, signal.SIGSTOP)
        try:
            t0 = time.perf_counter()
            tier.on_new_request(ctx)
            self.assertIs(tier.lookup(keys[0], ctx), LookupResult.RETRY)
            tier.on_schedule_end(ScheduleEndContext(("f",), ()))
            self.assertIs(tier.lookup(keys[0], ctx), LookupResult.RETRY)
            tier.submit_load(TransferJob(1, keys, np.arange(10), True, ctx))
            tier.submit_store(TransferJob(2, [make_offload_key(os.urandom(32), 0)],
                                          np.array([12]), False, ctx))
            self.assertEqual(list(tier.get_finished_jobs()), [])
            self.assertLess(time.perf_counter() - t0, 0.5)
            self.assertTrue(tier.has_pending_work())
        finally:
            os.kill(self.server.proc.pid, signal.SIGCONT)
        tier.drain_jobs()
        results = sorted((r.job_id, r.success) for r in tier.get_finished_jobs())
        self.assertEqual(results, [(1, True), (2, True)])
        self.assertIs(resolve(tier, keys[0], ctx)[0], LookupResult.HIT)
        for i, k in enumerate(keys):
            np.testing.assert_array_equal(primary[i], block_kv(k, BLOCK))

    def test_bad_slot_is_refused_at_submit(self):
        tier, _ = self.tier(num_slots=2)
        with self.assertRaises(IndexError):
            tier.submit_load(TransferJob(1, [make_offload_key(os.urandom(32), 0)],
                                         np.array([2]), True, ReqContext(req_id="x")))
        self.assertFalse(tier.has_pending_work())

    # ---- namespaces ---------------------------------------------------------------------
    def test_parallelism_agnostic_engines_share_a_namespace(self):
        tokens = prompt(4 * BS + 1, seed=13)
        self.store_prompt(tokens)  # tp 1, agnostic layout
        b = self.engine(tp_size=2)  # agnostic: same namespace
        rb = b.add_request("r", tokens)
        b.run()
        self.assertEqual(rb.loaded_blocks, 4)
        c = self.engine(tp_size=2, agnostic=False)  # rank-dependent layout: its own
        rc = c.add_request("r", tokens)
        c.run()
        self.assertEqual((rc.hit_blocks, rc.computed_blocks), (0, 4))
        self.assertEqual(c.tier.namespace["tp_size"], 2)
        d = self.engine(tp_size=2, agnostic=False, tier_kw={"parallelism_agnostic": False})
        self.assertEqual(d.tier.namespace, c.tier.namespace)
        with self.assertRaises(ValueError):
            self.engine(agnostic=False, tier_kw={"parallelism_agnostic": True})

    def test_concurrent_engines_store_the_same_prefix(self):
        tokens = prompt(16 * BS + 1, seed=14)
        engines = [self.engine() for _ in range(4)]
        reqs = [e.add_request("r", tokens) for e in engines]
        threads = [threading.Thread(target=e.run) for e in engines]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertTrue(all(r.state == "FINISHED" for r in reqs))
        b = self.engine()
        r = b.add_request("r", tokens)
        b.run()
        self.assertEqual(r.loaded_blocks, 16)
        self.assertEqual(b.mismatches, [])


def tier_wire(key):
    from strata.kvutil import wire_key
    return wire_key(key)


if __name__ == "__main__":
    print("vLLM:", "real" if vllm_driver.REAL_VLLM else "interface stubs")
    unittest.main()

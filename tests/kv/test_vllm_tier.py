"""strata.vllm_tier.StrataOffloadTier driven by the vLLM fake against a real
server: cold store, warm reload in another engine, partial hits, non-blocking
submits, failed loads, concurrent engines."""
import os
import signal
import threading
import time
import types
import unittest

import numpy as np

import strata_kv
from fake_vllm import FakeVllmEngine, block_kv, prompt_block_hashes
from kvtest import KvTestCase, descriptor
from strata.vllm_tier import StrataLoadStoreSpec, StrataOffloadTier

BLOCK = 16 << 10
BS = 16  # tokens per block


def prompt(n_tokens, seed):
    return list(np.random.default_rng(seed).integers(0, 32000, n_tokens))


class VllmTierTest(KvTestCase):

    def setUp(self):
        super().setUp()
        self.desc = descriptor(BLOCK, tokens_per_block=BS, model_id=f"vllm-{self.id()}")

    def engine(self, num_slots=64, **tier_kw):
        kw = dict(self.server.conn_kwargs(), namespace=self.desc, **tier_kw)
        eng = FakeVllmEngine(lambda primary: StrataOffloadTier(primary, **kw),
                             block_size=BS, block_bytes=BLOCK, num_slots=num_slots)
        self.addCleanup(eng.shutdown)
        return eng

    def test_cold_then_warm_in_another_engine(self):
        tokens = prompt(20 * BS + 5, seed=1)  # 20 full blocks + a partial one
        a = self.engine()
        ra = a.add_request("r1", tokens)
        a.run()
        self.assertEqual((ra.hit_blocks, ra.computed_blocks), (0, 20))

        b = self.engine()  # another vLLM instance, same model namespace
        rb = b.add_request("r1", tokens)
        b.run()
        self.assertEqual(rb.hit_blocks, 20)
        self.assertEqual(rb.loaded_blocks, 20)
        self.assertEqual(rb.computed_blocks, 0)
        self.assertEqual(b.mismatches, [])
        self.assertEqual([c[0] for c in b.calls if c[0] == "lookup"], ["lookup"])

    def test_whole_prompt_hit_still_computes_last_token(self):
        tokens = prompt(8 * BS, seed=2)  # exactly 8 blocks
        a = self.engine()
        a.add_request("r", tokens)
        a.run()
        b = self.engine()
        r = b.add_request("r", tokens)
        b.run()
        self.assertEqual((r.hit_blocks, r.computed_blocks), (7, 1))
        self.assertEqual(b.mismatches, [])

    def test_partial_hit_shared_prefix_different_suffix(self):
        shared = prompt(12 * BS, seed=3)
        a = self.engine()
        a.add_request("first", shared + prompt(6 * BS, seed=4))
        a.run()
        b = self.engine()
        r = b.add_request("second", shared + prompt(9 * BS + 3, seed=5))
        b.run()
        self.assertEqual(r.hit_blocks, 12)
        self.assertEqual(r.loaded_blocks, 12)
        self.assertEqual(r.computed_blocks, 9)
        self.assertEqual(b.mismatches, [])
        # The new suffix was offloaded: a third engine hits all 21 blocks.
        c = self.engine()
        r3 = c.add_request("third", shared + prompt(9 * BS + 3, seed=5))
        c.run()
        self.assertEqual(r3.hit_blocks, 21)

    def test_many_requests_interleaved(self):
        a = self.engine(num_slots=48)
        prompts = {f"r{i}": prompt((5 + i) * BS + 1, seed=100 + i) for i in range(6)}
        for rid, t in prompts.items():
            a.add_request(rid, t)
        a.run()
        b = self.engine(num_slots=48, num_workers=2)
        reqs = {rid: b.add_request(rid, t) for rid, t in prompts.items()}
        b.run()
        for i, (rid, r) in enumerate(sorted(reqs.items())):
            self.assertEqual(r.loaded_blocks, 5 + int(rid[1:]), rid)
        self.assertEqual(b.mismatches, [])

    def test_submits_do_not_block(self):
        """With the server frozen (SIGSTOP) submit_* and get_finished return at
        once; the jobs complete after it resumes."""
        tokens = prompt(10 * BS + 1, seed=6)
        a = self.engine()
        a.add_request("r", tokens)
        a.run()
        primary = np.zeros((16, BLOCK), np.uint8)
        tier = StrataOffloadTier(primary, **self.server.conn_kwargs(), namespace=self.desc)
        self.addCleanup(tier.shutdown)
        hashes = prompt_block_hashes(tokens, BS)
        os.kill(self.server.proc.pid, signal.SIGSTOP)
        try:
            t0 = time.perf_counter()
            self.assertTrue(tier.submit_load(1, hashes, list(range(10))))
            self.assertTrue(tier.submit_store(2, [os.urandom(32)], [12]))
            self.assertEqual(tier.get_finished(), [])
            elapsed = time.perf_counter() - t0
            self.assertLess(elapsed, 0.5)
            self.assertTrue(tier.has_pending_work())
            time.sleep(0.2)
            self.assertEqual(tier.get_finished(), [])
        finally:
            os.kill(self.server.proc.pid, signal.SIGCONT)
        self.assertTrue(tier.wait({1, 2}, timeout=30))
        self.assertEqual(sorted(tier.get_finished()), [(1, True), (2, True)])
        self.assertFalse(tier.has_pending_work())
        for i, h in enumerate(hashes):
            np.testing.assert_array_equal(primary[i], block_kv(h, BLOCK))

    def test_failed_load_reports_blocks_and_engine_recomputes(self):
        tokens = prompt(6 * BS + 1, seed=7)
        a = self.engine()
        a.add_request("r", tokens)
        a.run()
        hashes = prompt_block_hashes(tokens, BS)
        # A load naming a block that is not there (e.g. evicted after the
        # lookup): the job fails, and says which blocks did arrive.
        primary = np.zeros((8, BLOCK), np.uint8)
        tier = StrataOffloadTier(primary, **self.server.conn_kwargs(), namespace=self.desc)
        self.addCleanup(tier.shutdown)
        gone = os.urandom(32)
        tier.submit_load(7, [hashes[0], gone, hashes[1]], [0, 1, 2])
        tier.wait({7})
        [res] = tier.get_finished_jobs()
        self.assertFalse(res.success)
        self.assertEqual(res.successful_keys, [hashes[0], hashes[1]])
        self.assertIn("NOT_FOUND", res.error)
        np.testing.assert_array_equal(primary[2], block_kv(hashes[1], BLOCK))

        # Evict block 3 behind the engine's back: DELETE takes the chain below
        # it too, so the engine hits 3 blocks and recomputes the other 3.
        with self.server.client() as c:
            ns = c.open_namespace(**self.desc)
            self.assertEqual(c.delete(ns, [hashes[3]]), [strata_kv.OK])
        b = self.engine()
        r = b.add_request("r", tokens)
        b.run()
        self.assertEqual(r.hit_blocks, 3)
        self.assertEqual(r.computed_blocks, 3)
        self.assertEqual(b.mismatches, [])

    def test_load_failing_after_lookup_is_recomputed(self):
        """vLLM's recovery path: lookup hits, a block is evicted before the
        load runs, the load fails, the request is recomputed (never served
        partly loaded)."""
        tokens = prompt(5 * BS + 1, seed=10)
        a = self.engine()
        a.add_request("r", tokens)
        a.run()
        hashes = prompt_block_hashes(tokens, BS)
        server, desc = self.server, self.desc

        class EvictedAfterLookup(StrataOffloadTier):
            def lookup(self, block_hashes):
                hits = super().lookup(block_hashes)
                with server.client() as c:
                    c.delete(c.open_namespace(**desc), [hashes[2]])
                return hits

        kw = dict(self.server.conn_kwargs(), namespace=self.desc)
        b = FakeVllmEngine(lambda primary: EvictedAfterLookup(primary, **kw),
                           block_size=BS, block_bytes=BLOCK)
        self.addCleanup(b.shutdown)
        r = b.add_request("r", tokens)
        b.run()
        self.assertEqual(r.hit_blocks, 5)
        self.assertTrue(r.load_failed)
        self.assertEqual((r.loaded_blocks, r.computed_blocks), (0, 5))
        self.assertEqual(b.mismatches, [])
        # The recomputed blocks were offloaded again.
        self.assertEqual(b.tier.lookup(hashes), 5)

    def test_concurrent_engines_store_the_same_prefix(self):
        tokens = prompt(16 * BS + 1, seed=8)
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

    def test_transfer_async_and_transfer_job_forms(self):
        primary = np.zeros((4, BLOCK), np.uint8)
        tier = StrataOffloadTier(primary, **self.server.conn_kwargs(), namespace=self.desc)
        self.addCleanup(tier.shutdown)
        keys = [os.urandom(32) for _ in range(2)]
        primary[0] = 7
        primary[1] = 9

        class CpuSpec:
            def __init__(self, ids):
                self.block_ids = np.array(ids)

        self.assertTrue(tier.transfer_async(1, (CpuSpec([0, 1]), StrataLoadStoreSpec(keys))))
        tier.wait({1})

        # vLLM's SecondaryTierManager TransferJob shape.
        job = types.SimpleNamespace(job_id=2, keys=keys, chunk_ids=np.array([3, 2]),
                                    is_promotion=True)
        tier.submit_load(job)
        tier.wait({2})
        self.assertEqual(sorted(tier.get_finished()), [(1, True), (2, True)])
        self.assertTrue((primary[3] == 7).all() and (primary[2] == 9).all())

    def test_store_without_parent_uses_lookup_chain(self):
        tokens = prompt(4 * BS, seed=9)
        hashes = prompt_block_hashes(tokens, BS)
        primary = np.zeros((4, BLOCK), np.uint8)
        tier = StrataOffloadTier(primary, **self.server.conn_kwargs(), namespace=self.desc)
        self.addCleanup(tier.shutdown)
        self.assertEqual(tier.lookup(hashes), 0)
        tier.submit_store(1, hashes[2:], [2, 3])  # parent of hashes[2] comes from the lookup
        tier.submit_store(2, hashes[:2], [0, 1])
        tier.drain_jobs()
        self.assertEqual(sorted(tier.get_finished()), [(1, True), (2, True)])
        self.assertEqual(tier.lookup(hashes), 4)

    def test_bad_slot_is_refused_at_submit(self):
        primary = np.zeros((2, BLOCK), np.uint8)
        tier = StrataOffloadTier(primary, **self.server.conn_kwargs(), namespace=self.desc)
        self.addCleanup(tier.shutdown)
        with self.assertRaises(IndexError):
            tier.submit_load(1, [os.urandom(32)], [2])
        self.assertFalse(tier.has_pending_work())

    def test_wrong_credentials_fail_at_construction(self):
        kw = dict(self.server.conn_kwargs(), secret_key="wrong")
        with self.assertRaises(strata_kv.Error) as cm:
            StrataOffloadTier(np.zeros((1, BLOCK), np.uint8), **kw, namespace=self.desc)
        self.assertEqual(cm.exception.code, strata_kv.AUTH_FAILED)


if __name__ == "__main__":
    unittest.main()

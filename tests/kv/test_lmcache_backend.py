"""strata.lmcache_backend.StrataRemoteConnector driven by the LMCache fake
against a real server: batched and single-key paths, prefix counts, pins,
unfull chunks, a full local backend."""
import unittest

import numpy as np

import strata_kv
from fake_lmcache import CacheEngineKey, FakeLMCacheEngine
from kvtest import KvTestCase, descriptor
from strata.lmcache_backend import StrataRemoteConnector
from strata.kvutil import wire_key

SHAPE = (2, 4, 256, 8)  # (K/V, layers, tokens, hidden) of a 256-token chunk
DTYPE = np.float16
CHUNK_BYTES = int(np.prod(SHAPE)) * 2


def tokens(n, seed):
    return list(np.random.default_rng(seed).integers(0, 32000, n))


class LMCacheConnectorTest(KvTestCase):

    def setUp(self):
        super().setUp()
        self.desc = descriptor(CHUNK_BYTES, tokens_per_block=256, kv_layout="KV_2LTD",
                               model_id=f"lmc-{self.id()}")

    def engine(self, capacity=64, **conn_kw):
        def make(loop, local):
            return StrataRemoteConnector(**self.server.conn_kwargs(), namespace=self.desc,
                                         loop=loop, local_cpu_backend=local, chunk_shape=SHAPE,
                                         chunk_dtype=DTYPE, fmt="vllm", **conn_kw)
        eng = FakeLMCacheEngine(make, chunk_shape=SHAPE, dtype=DTYPE, capacity=capacity)
        self.addCleanup(eng.close)
        return eng

    def test_batched_store_and_retrieve_in_another_engine(self):
        t = tokens(10 * 256 + 17, seed=1)
        a = self.engine()
        keys = a.store(t)
        a.wait_stores()
        self.assertEqual(len(keys), 10)
        self.assertEqual(len(a.local.live), 0, "put must release every MemoryObj")

        b = self.engine()
        hits, gpu, bad = b.retrieve(t)
        self.assertEqual(hits, 10)
        self.assertEqual(len(gpu), 10)
        self.assertEqual(bad, [])
        self.assertEqual(len(b.local.live), 0)

    def test_prefix_count_stops_at_missing_chunk(self):
        t = tokens(6 * 256, seed=2)
        a = self.engine()
        keys = a.store(t)
        a.wait_stores()
        with self.server.client() as c:
            ns = c.open_namespace(**self.desc)
            self.assertEqual(c.delete(ns, [wire_key(keys[4])]), [strata_kv.OK])
        # DELETE takes the chain below keys[4] (keys[5]) with it.
        b = self.engine()
        hits, gpu, bad = b.retrieve(t)
        self.assertEqual((hits, len(gpu), bad), (4, 4, []))
        self.assertEqual(b.connector.batched_contains(keys), 4)
        self.assertEqual(b.connector.batched_contains(keys[5:]), 0)
        self.assertEqual(b.connector.batched_contains(keys[1:]), 3)

    def test_partial_hit_shared_prefix(self):
        shared = tokens(3 * 256, seed=3)
        a = self.engine()
        a.store(shared + tokens(2 * 256, seed=4))
        a.wait_stores()
        b = self.engine()
        hits, gpu, bad = b.retrieve(shared + tokens(4 * 256, seed=5))
        self.assertEqual((hits, bad), (3, []))

    def test_single_key_path(self):
        t = tokens(4 * 256, seed=6)
        a = self.engine()
        a.store(t, batched=False)
        a.wait_stores()
        b = self.engine()
        self.assertEqual(b.retrieve_one_by_one(t), [True] * 4)
        self.assertEqual(len(b.local.live), 0)
        missing = CacheEngineKey("vllm", "fake-model", 1, 0, 12345)
        self.assertFalse(b.connector.exists_sync(missing))
        self.assertIsNone(b._run(b.connector.get(missing)))
        self.assertEqual(len(b.local.live), 0, "a miss must release its allocation")

    def test_unfull_chunk_is_not_stored(self):
        a = self.engine()
        key = CacheEngineKey("vllm", "fake-model", 1, 0, 777)
        a.store_unfull(key)
        self.assertFalse(a.connector.exists_sync(key))

    def test_full_local_backend_returns_what_fits(self):
        t = tokens(6 * 256, seed=7)
        a = self.engine()
        keys = a.store(t)
        a.wait_stores()
        b = self.engine(capacity=2)
        got = b._run(b.connector.batched_get(keys))
        self.assertEqual([g is not None for g in got], [True, True] + [False] * 4)
        for g in got[:2]:
            g.ref_count_down()

    def test_pins_are_released_after_fetch(self):
        t = tokens(3 * 256, seed=8)
        a = self.engine()
        keys = a.store(t)
        a.wait_stores()
        b = self.engine()
        hits = b._run(b.connector.batched_async_contains("L1", keys, pin=True))
        self.assertEqual(hits, 3)
        self.assertEqual(len(b.connector._pinned["L1"]), 3)
        objs = b._run(b.connector.batched_get_non_blocking("L1", keys))
        self.assertNotIn("L1", b.connector._pinned)
        self.assertEqual(len(objs), 3)
        for o in objs:
            o.ref_count_down()

    def test_without_local_backend_get_returns_bytes(self):
        t = tokens(2 * 256, seed=9)
        a = self.engine()
        keys = a.store(t)
        a.wait_stores()
        conn = StrataRemoteConnector(**self.server.conn_kwargs(), namespace=self.desc)
        self.addCleanup(conn.close_sync)
        import asyncio
        arr = asyncio.run(conn.get(keys[0]))
        self.assertEqual(arr.dtype, np.uint8)
        self.assertEqual(arr.size, CHUNK_BYTES)
        from fake_lmcache import chunk_kv
        self.assertEqual(arr.tobytes(), chunk_kv(keys[0], SHAPE, DTYPE).tobytes())
        self.assertEqual(asyncio.run(conn.ping()), 0)


if __name__ == "__main__":
    unittest.main()

"""The strata_kv Python client against a real strata server: auth, namespaces,
put/lookup/get into caller buffers, ranges, put-if-absent, concurrent
writers, restart, S3 visibility, accounting."""
import threading
import unittest

import numpy as np

import strata_kv
from kvtest import (ACCESS_KEY, KvServer, KvTestCase, chain_keys, descriptor,
                    random_blocks)

BLOCK = 64 << 10


class KvClientTest(KvTestCase):

    def setUp(self):
        super().setUp()
        self.c = self.server.client()
        self.addCleanup(self.c.close)

    def open(self, **overrides):
        return self.c.open_namespace(**descriptor(BLOCK, **overrides))

    # ---- authentication -----------------------------------------------------
    def test_wrong_secret_is_refused(self):
        with self.assertRaises(strata_kv.Error) as cm:
            self.server.client(secret_key="not-the-secret")
        self.assertEqual(cm.exception.code, strata_kv.AUTH_FAILED, str(cm.exception))
        self.assertEqual(cm.exception.code_name, "AUTH_FAILED")

    def test_unknown_access_key_is_refused(self):
        with self.assertRaises(strata_kv.Error) as cm:
            self.server.client(access_key="nobody-here")
        self.assertEqual(cm.exception.code, strata_kv.AUTH_FAILED, str(cm.exception))

    def test_ping_and_context_manager(self):
        with self.server.client() as c:
            c.ping()
            self.assertTrue(c.connected)
        self.assertFalse(c.connected)
        with self.assertRaises(strata_kv.Error) as cm:
            c.ping()
        self.assertEqual(cm.exception.code, strata_kv.CLOSED)

    # ---- round trip ---------------------------------------------------------
    def test_put_lookup_get_round_trip_in_place(self):
        ns = self.open()
        keys = chain_keys(8)
        blocks = random_blocks(8, BLOCK, seed=1)
        parents = [None] + keys[:-1]
        self.assertEqual(self.c.lookup(ns, keys), 0)
        self.assertEqual(self.c.put(ns, keys, parents, blocks), [strata_kv.OK] * 8)
        self.assertEqual(self.c.lookup(ns, keys), 8)
        self.assertEqual(self.c.lookup(ns, keys + chain_keys(2)), 8)

        # One 2-D array; each row is a destination, filled in place.
        dst = np.zeros((8, BLOCK), dtype=np.uint8)
        ptr = dst.__array_interface__["data"][0]
        rows = [dst[i] for i in range(8)]
        self.assertEqual(self.c.get_into(ns, keys, rows), [strata_kv.OK] * 8)
        self.assertEqual(dst.__array_interface__["data"][0], ptr)
        for i in range(8):
            np.testing.assert_array_equal(dst[i], blocks[i])

    def test_lookup_stops_at_first_missing_key(self):
        ns = self.open()
        keys = chain_keys(6)
        blocks = random_blocks(6, BLOCK)
        stored = [0, 1, 2, 4, 5]  # 3 is missing
        self.c.put(ns, [keys[i] for i in stored], None, [blocks[i] for i in stored])
        self.assertEqual(self.c.lookup(ns, keys), 3)
        self.assertEqual(self.c.lookup(ns, keys[4:]), 2)
        self.assertEqual(self.c.lookup(ns, []), 0)

    def test_get_reports_per_key_status(self):
        ns = self.open()
        keys = chain_keys(3)
        blocks = random_blocks(3, BLOCK)
        self.c.put(ns, [keys[0], keys[2]], None, [blocks[0], blocks[2]])
        dst = [np.zeros(BLOCK, np.uint8) for _ in range(3)]
        st, n = self.c.get_into(ns, keys, dst, with_lengths=True)
        self.assertEqual(st, [strata_kv.OK, strata_kv.NOT_FOUND, strata_kv.OK])
        self.assertEqual(n, [BLOCK, 0, BLOCK])
        np.testing.assert_array_equal(dst[0], blocks[0])
        np.testing.assert_array_equal(dst[2], blocks[2])
        self.assertFalse(dst[1].any())

    def test_partial_ranges(self):
        ns = self.open()
        keys = chain_keys(2)
        blocks = random_blocks(2, BLOCK)
        self.c.put(ns, keys, None, blocks)
        # A layer-sized slice from the middle and the tail of a block.
        a = np.zeros(4096, np.uint8)
        b = np.zeros(1000, np.uint8)
        st = self.c.get_into(ns, keys, [a, b], offsets=[8192, BLOCK - 1000])
        self.assertEqual(st, [strata_kv.OK, strata_kv.OK])
        np.testing.assert_array_equal(a, blocks[0][8192:8192 + 4096])
        np.testing.assert_array_equal(b, blocks[1][BLOCK - 1000:])
        # Explicit lengths shorter than the buffer; 0 = to the end of the block.
        c = np.zeros(BLOCK, np.uint8)
        st, n = self.c.get_into(ns, [keys[0]], [c], offsets=[BLOCK - 300], lengths=[0],
                                with_lengths=True)
        self.assertEqual((st, n), ([strata_kv.OK], [300]))
        np.testing.assert_array_equal(c[:300], blocks[0][BLOCK - 300:])

    def test_reply_longer_than_buffer_is_skipped_not_overrun(self):
        ns = self.open()
        keys = chain_keys(2)
        blocks = random_blocks(2, BLOCK)
        self.c.put(ns, keys, None, blocks)
        guard = np.zeros(BLOCK, np.uint8)
        small = guard[:100]  # a whole block "to the end" does not fit
        full = np.zeros(BLOCK, np.uint8)
        st = self.c.get_into(ns, keys, [small, full], lengths=[0, 0])
        self.assertEqual(st, [strata_kv.BUFFER_TOO_SMALL, strata_kv.OK])
        self.assertFalse(guard.any())
        np.testing.assert_array_equal(full, blocks[1])
        self.c.ping()  # the connection is still in step

    def test_memoryview_and_bytearray_buffers(self):
        ns = self.open()
        key = chain_keys(1)
        src = bytearray(np.random.default_rng(3).integers(0, 256, BLOCK, np.uint8).tobytes())
        self.assertEqual(self.c.put(ns, key, None, [bytes(src)]), [strata_kv.OK])
        pool = bytearray(3 * BLOCK)
        view = memoryview(pool)[BLOCK:2 * BLOCK]
        self.assertEqual(self.c.get_into(ns, key, [view]), [strata_kv.OK])
        self.assertEqual(pool[BLOCK:2 * BLOCK], src)
        self.assertEqual(pool[:BLOCK], bytearray(BLOCK))

    def test_read_only_buffer_is_refused_for_get(self):
        ns = self.open()
        with self.assertRaises(BufferError):
            self.c.get_into(ns, chain_keys(1), [bytes(BLOCK)])

    def test_torch_tensors(self):
        try:
            import torch
        except ImportError:
            self.skipTest("python3-torch not installed")
        ns = self.open()
        keys = chain_keys(2)
        t = torch.randn(2, BLOCK // 2, dtype=torch.float16)  # fp16: no numpy needed
        self.assertEqual(self.c.put(ns, keys, None, [t[0], t[1]]), [strata_kv.OK] * 2)
        out = torch.zeros(2, BLOCK // 2, dtype=torch.float16)
        self.assertEqual(self.c.get_into(ns, keys, [out[0], out[1]]), [strata_kv.OK] * 2)
        self.assertTrue(torch.equal(out, t))
        bf = torch.zeros(BLOCK // 2, dtype=torch.bfloat16)  # no numpy equivalent
        self.assertEqual(self.c.get_into(ns, keys[:1], [bf]), [strata_kv.OK])
        self.assertTrue(torch.equal(bf.view(torch.float16), t[0]))

    # ---- put semantics ------------------------------------------------------
    def test_put_if_absent_returns_exists_and_keeps_first(self):
        ns = self.open()
        key = chain_keys(1)
        first, second = random_blocks(2, BLOCK)
        self.assertEqual(self.c.put(ns, key, None, [first]), [strata_kv.OK])
        self.assertEqual(self.c.put(ns, key, None, [second]), [strata_kv.EXISTS])
        out = np.zeros(BLOCK, np.uint8)
        self.c.get_into(ns, key, [out])
        np.testing.assert_array_equal(out, first)

    def test_wrong_block_size_is_too_large(self):
        ns = self.open()
        keys = chain_keys(2)
        st = self.c.put(ns, keys, None, [np.zeros(BLOCK - 1, np.uint8), np.zeros(BLOCK, np.uint8)])
        self.assertEqual(st, [strata_kv.TOO_LARGE, strata_kv.OK])
        self.assertEqual(self.c.lookup(ns, keys[:1]), 0)

    def test_short_keys_are_refused(self):
        ns = self.open()
        with self.assertRaises(strata_kv.Error) as cm:
            self.c.lookup(ns, [b"x" * 15])
        self.assertEqual(cm.exception.code, strata_kv.INVALID)
        with self.assertRaises(strata_kv.Error):
            self.c.put(ns, [b"y" * 65], None, [np.zeros(BLOCK, np.uint8)])
        self.c.ping()

    def test_concurrent_writers_of_one_key(self):
        ns_desc = descriptor(BLOCK)
        key = chain_keys(1)
        blocks = random_blocks(8, BLOCK)
        results = [None] * 8
        barrier = threading.Barrier(8)

        def writer(i):
            with self.server.client() as c:
                ns = c.open_namespace(**ns_desc)
                barrier.wait()
                results[i] = c.put(ns, key, None, [blocks[i]])[0]

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(results.count(strata_kv.OK), 1, results)
        self.assertEqual(results.count(strata_kv.EXISTS), 7, results)
        winner = results.index(strata_kv.OK)
        ns = self.c.open_namespace(**ns_desc)
        out = np.zeros(BLOCK, np.uint8)
        self.assertEqual(self.c.get_into(ns, key, [out]), [strata_kv.OK])
        np.testing.assert_array_equal(out, blocks[winner])

    def test_threads_sharing_one_client(self):
        ns = self.open()
        keys = chain_keys(32)
        blocks = random_blocks(32, BLOCK)
        errors = []

        def work(i):
            try:
                for _ in range(5):
                    k = keys[i * 4:(i + 1) * 4]
                    self.c.put(ns, k, None, blocks[i * 4:(i + 1) * 4])
                    out = [np.zeros(BLOCK, np.uint8) for _ in k]
                    assert self.c.get_into(ns, k, out) == [strata_kv.OK] * 4
                    for j, o in enumerate(out):
                        assert np.array_equal(o, blocks[i * 4 + j])
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(self.c.lookup(ns, keys), 32)

    # ---- namespaces ---------------------------------------------------------
    def test_namespace_mismatch_is_a_clean_miss(self):
        base = descriptor(BLOCK)
        ns = self.c.open_namespace(**base)
        keys = chain_keys(4)
        self.c.put(ns, keys, None, random_blocks(4, BLOCK))
        self.assertEqual(self.c.lookup(ns, keys), 4)
        for field, value in [("tenant_salt", "other-tenant"), ("tp_rank", 1),
                             ("weights_fingerprint", "sha256:" + "cd" * 32),
                             ("kv_dtype", "bfloat16"), ("hash_seed", 7),
                             ("tokens_per_block", 32), ("kv_layout", "HND")]:
            other = self.c.open_namespace(**dict(base, **{field: value}))
            self.assertNotEqual(other.digest, ns.digest, field)
            self.assertEqual(self.c.lookup(other, keys), 0, field)
            out = np.zeros(BLOCK, np.uint8)
            self.assertEqual(self.c.get_into(other, keys[:1], [out]), [strata_kv.NOT_FOUND], field)
        # quota and TTL are not identity: same namespace.
        same = self.c.open_namespace(**dict(base, quota_bytes=1 << 40, ttl_s=3600))
        self.assertEqual(same.digest, ns.digest)
        self.assertEqual(self.c.lookup(same, keys), 4)

    def test_unknown_descriptor_field_is_refused(self):
        with self.assertRaises(TypeError):
            self.c.open_namespace(**descriptor(BLOCK), tenant_sallt="x")

    def test_handle_from_another_connection_is_refused(self):
        ns = self.open()
        with self.server.client() as other:  # has opened no namespace
            with self.assertRaises(strata_kv.Error) as cm:
                other.lookup(ns.handle, chain_keys(1))
            self.assertIn(cm.exception.code, (strata_kv.NOT_FOUND, strata_kv.DENIED,
                                              strata_kv.INVALID), str(cm.exception))
            other.ping()

    # ---- delete, pin, stats -------------------------------------------------
    def test_delete_pin_unpin(self):
        ns = self.open()
        keys = chain_keys(4)
        self.c.put(ns, keys[:3], None, random_blocks(3, BLOCK))
        self.assertEqual(self.c.pin(ns, keys, 5000), [strata_kv.OK] * 3 + [strata_kv.NOT_FOUND])
        self.assertEqual(self.c.unpin(ns, keys[:3]), [strata_kv.OK] * 3)
        self.assertEqual(self.c.delete(ns, [keys[2], keys[3]]),
                         [strata_kv.OK, strata_kv.NOT_FOUND])
        self.assertEqual(self.c.lookup(ns, keys), 2)

    def test_stats_bytes_served_equals_bytes_requested(self):
        ns = self.open()
        keys = chain_keys(6)
        self.c.put(ns, keys, None, random_blocks(6, BLOCK))
        self.c.lookup(ns, keys)
        self.c.get_into(ns, keys, [np.zeros(BLOCK, np.uint8) for _ in keys])
        self.c.get_into(ns, keys[:2], [np.zeros(4096, np.uint8)] * 2, offsets=[0, 4096])
        s = self.c.stats(ns)
        self.assertEqual(s["blocks"], 6, s)
        self.assertEqual(s["bytes"], 6 * BLOCK, s)
        self.assertEqual(s["hits"], 8, s)
        self.assertEqual(s["bytes_requested"], 6 * BLOCK + 2 * 4096, s)
        self.assertEqual(s["bytes_served"], s["bytes_requested"], s)
        self.assertGreaterEqual(s["lookups"], 1, s)
        # A miss is counted and serves nothing.
        self.c.get_into(ns, chain_keys(1), [np.zeros(BLOCK, np.uint8)])
        s2 = self.c.stats(ns)
        self.assertEqual(s2["misses"], s["misses"] + 1, s2)
        self.assertEqual(s2["bytes_served"], s["bytes_served"], s2)

    def test_stats_count_probed_keys_and_the_servers_time(self):
        ns = self.open()
        keys = chain_keys(4)
        self.c.put(ns, keys, None, random_blocks(4, BLOCK))
        s = self.c.stats(ns)
        self.assertEqual((s["lookups"], s["lookup_keys"], s["lookup_ns"]), (0, 0, 0), s)
        self.assertEqual(self.c.lookup(ns, keys), 4)
        self.assertEqual(self.c.lookup_each(ns, keys + chain_keys(6)), [True] * 4 + [False] * 6)
        self.c.get_into(ns, keys[:1], [np.zeros(BLOCK, np.uint8)])  # not a probe
        s = self.c.stats(ns)
        self.assertEqual(s["lookups"], 2, s)
        self.assertEqual(s["lookup_keys"], 14, s)
        # The server's own time: more than nothing, less than the round trips took.
        self.assertGreater(s["lookup_ns"], 0, s)
        self.assertLess(s["lookup_ns"], 10**9, s)

    def test_large_batch(self):
        ns = self.open()
        n = 256
        keys = chain_keys(n)
        src = np.random.default_rng(5).integers(0, 256, (n, BLOCK), dtype=np.uint8)
        self.assertEqual(self.c.put(ns, keys, [None] + keys[:-1], list(src)), [strata_kv.OK] * n)
        self.assertEqual(self.c.lookup(ns, keys), n)
        dst = np.zeros_like(src)
        self.assertEqual(self.c.get_into(ns, keys, list(dst)), [strata_kv.OK] * n)
        np.testing.assert_array_equal(dst, src)


class KvObjectsTest(KvTestCase):
    """Blocks are ordinary objects: visible through S3, and durable."""

    def test_blocks_visible_and_identical_through_s3(self):
        c = self.server.client()
        self.addCleanup(c.close)
        ns = c.open_namespace(**descriptor(BLOCK))
        keys = chain_keys(5)
        blocks = random_blocks(5, BLOCK)
        c.put(ns, keys, [None] + keys[:-1], blocks)
        s3 = self.server.boto3_client()
        self.addCleanup(s3.close)
        for k, b in zip(keys, blocks):
            name = ns.object_key(k)
            self.assertEqual(name, ns.digest.hex() + "/" + k.hex())
            body = s3.get_object(Bucket=ns.bucket, Key=name)["Body"].read()
            self.assertEqual(body, b.tobytes())
        listed = s3.list_objects_v2(Bucket=ns.bucket, Prefix=ns.digest.hex() + "/")
        names = sorted(o["Key"] for o in listed.get("Contents", []))
        self.assertEqual(names, sorted(ns.object_key(k) for k in keys))
        self.assertTrue(all(o["Size"] == BLOCK for o in listed["Contents"]))

    def test_restart_keeps_blocks(self):
        server = KvServer().start()
        self.addCleanup(server.cleanup)
        desc = descriptor(BLOCK)
        keys = chain_keys(10)
        blocks = random_blocks(10, BLOCK)
        with server.client() as c:
            ns = c.open_namespace(**desc)
            self.assertEqual(c.put(ns, keys, [None] + keys[:-1], blocks), [strata_kv.OK] * 10)
        server.restart()
        with server.client() as c:
            ns = c.open_namespace(**desc)
            self.assertEqual(c.lookup(ns, keys), 10)
            out = [np.zeros(BLOCK, np.uint8) for _ in keys]
            self.assertEqual(c.get_into(ns, keys, out), [strata_kv.OK] * 10)
            for o, b in zip(out, blocks):
                np.testing.assert_array_equal(o, b)
            self.assertEqual(c.put(ns, keys[:1], None, blocks[:1]), [strata_kv.EXISTS])

    def test_old_connection_after_restart_reports_io_error(self):
        server = KvServer().start()
        self.addCleanup(server.cleanup)
        c = server.client(timeout_ms=5000)
        ns = c.open_namespace(**descriptor(BLOCK))
        server.kill()
        with self.assertRaises(strata_kv.Error) as cm:
            c.lookup(ns, chain_keys(1))
        self.assertIn(cm.exception.code, (strata_kv.IO_ERROR, strata_kv.CLOSED))
        self.assertFalse(c.connected)


if __name__ == "__main__":
    unittest.main()

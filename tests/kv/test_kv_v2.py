"""Protocol v2 through the Python client against a real server: 36..64-byte
keys, LOOKUP_EACH, per-block metadata, the CRC32C checked end to end (a bit
flipped on disk is a CORRUPT miss, never wrong bytes), the namespace manifest,
the EVENTS stream, and many asynchronous calls in flight on one connection."""
import glob
import hashlib
import os
import threading
import time

import numpy as np

import strata_kv
from kvtest import KvTestCase, descriptor, random_blocks

BLOCK = 256 << 10  # file-backed (over the 128 KiB inline limit): the sendfile path


def keys36(n, tag=b""):
    """vLLM-shaped keys: a SHA-256 block hash plus a 4-byte KV-group index."""
    out = []
    for i in range(n):
        h = hashlib.sha256(tag + os.urandom(8) + i.to_bytes(4, "little")).digest()
        out.append(h + (i % 3).to_bytes(4, "little"))
    return out


class KvV2Test(KvTestCase):
    def setUp(self):
        super().setUp()
        self.c = self.server.client()
        self.addCleanup(self.c.close)

    def open(self, block=BLOCK, **kw):
        return self.c.open_namespace(**descriptor(block, **kw))

    def test_module_speaks_v2(self):
        self.assertEqual(strata_kv.PROTOCOL_VERSION, 2)
        self.assertEqual(strata_kv.MAX_KEY_BYTES, 64)
        self.assertEqual(strata_kv.MAX_META_BYTES, 1024)

    def test_long_keys_and_lookup_each(self):
        ns = self.open()
        keys = keys36(6) + [b"k" * 64]
        blocks = random_blocks(len(keys), BLOCK)
        stored = [0, 2, 3, 6]
        st = self.c.put(ns, [keys[i] for i in stored], None, [blocks[i] for i in stored])
        self.assertEqual(st, [strata_kv.OK] * 4)
        self.assertEqual(self.c.lookup_each(ns, keys),
                         [True, False, True, True, False, False, True])
        self.assertEqual(self.c.lookup(ns, keys), 1)  # the prefix form stops at the hole
        out = np.zeros(BLOCK, np.uint8)
        self.assertEqual(self.c.get_into(ns, [keys[6]], [out]), [strata_kv.OK])
        self.assertTrue(np.array_equal(out, blocks[6]))
        with self.assertRaises(strata_kv.Error):
            self.c.lookup_each(ns, [b"x" * 65])

    def test_metadata_round_trip(self):
        ns = self.open(block=0)  # any length: partial chunks
        keys = keys36(3)
        blocks = [np.arange(n, dtype=np.uint8) for n in (100, BLOCK, 7)]
        metas = [b'{"shape":[100],"dtype":"uint8"}', None, bytes(range(256)) * 4]
        self.assertEqual(self.c.put(ns, keys, None, blocks, metas=metas), [strata_kv.OK] * 3)
        outs = [np.zeros(len(b), np.uint8) for b in blocks]
        st, lens, got = self.c.get_into(ns, keys, outs, with_meta=True)
        self.assertEqual(st, [strata_kv.OK] * 3)
        self.assertEqual(lens, [100, BLOCK, 7])
        self.assertEqual(got, [metas[0], b"", metas[2]])
        with self.assertRaises(strata_kv.Error):
            self.c.put(ns, keys36(1), None, [blocks[0]], metas=[b"x" * 1025])

    def test_bit_flipped_on_disk_is_a_corrupt_miss(self):
        ns = self.open()
        key = keys36(1)
        block = random_blocks(1, BLOCK)[0]
        self.assertEqual(self.c.put(ns, key, None, [block]), [strata_kv.OK])
        files = [f for f in glob.glob(os.path.join(self.server.data_dir, "objects", "*", "*"))
                 if os.path.getsize(f) > BLOCK]
        # Flip one byte of the block in the newest data file of this size.
        path = max(files, key=os.path.getmtime)
        with open(path, "r+b") as f:
            f.seek(BLOCK // 2)
            b = f.read(1)
            f.seek(BLOCK // 2)
            f.write(bytes([b[0] ^ 0x01]))
        # (the write went through the page cache, which sendfile reads)
        out = np.zeros(BLOCK, np.uint8)
        st = self.c.get_into(ns, key, [out])
        self.assertEqual(st, [strata_kv.CORRUPT])  # a miss: the engine recomputes
        self.assertEqual(strata_kv.status_name(st[0]), "CORRUPT")
        self.c.ping()  # the connection stays usable

    def test_manifest_is_kept_and_mismatch_is_seen(self):
        d = descriptor(BLOCK)
        m1 = b'{"block_size": 16, "engine": "vllm", "kv_groups": 1}'
        ns1 = self.c.open_namespace(**d, manifest=m1)
        self.assertTrue(ns1.manifest_matches)
        self.assertEqual(ns1.manifest, m1)
        other = self.server.client()
        try:
            ns2 = other.open_namespace(**d, manifest=b'{"block_size": 32, "engine": "vllm"}')
            self.assertFalse(ns2.manifest_matches)
            self.assertEqual(ns2.manifest, m1)
            self.assertEqual(ns2.handle, ns2.handle)
            ns3 = other.open_namespace(**d)
            self.assertTrue(ns3.manifest_matches)
            self.assertEqual(ns3.manifest, m1)
        finally:
            other.close()

    def test_events_stream(self):
        ns = self.open(block=64)
        nxt, lost, ev = self.c.events(ns)  # starts the recording
        self.assertEqual(ev, [])
        a, b = keys36(2)
        self.assertEqual(self.c.put(ns, [a, b], [None, a], [b"x" * 64, b"y" * 64]),
                         [strata_kv.OK] * 2)
        nxt, lost, ev = self.c.events(ns, nxt)
        self.assertEqual(lost, 0)
        self.assertEqual(ev, [("stored", a, None), ("stored", b, a)])
        self.c.delete(ns, [a])
        nxt, lost, ev = self.c.events(ns, nxt)
        self.assertEqual(sorted(e[1] for e in ev), sorted([a, b]))
        self.assertTrue(all(e[0] == "removed" for e in ev))
        self.assertEqual(self.c.events(ns, nxt)[2], [])

    def test_many_async_calls_in_flight_on_one_connection(self):
        ns = self.open()
        n = 48
        keys = keys36(n)
        blocks = random_blocks(n, BLOCK)
        puts = [self.c.submit_put(ns, [keys[i]], None, [blocks[i]]) for i in range(n)]
        self.assertEqual([f.result(timeout=60) for f in puts], [[strata_kv.OK]] * n)
        outs = [np.zeros(BLOCK, np.uint8) for _ in range(n)]
        futures = [self.c.submit_get_into(ns, [keys[i]], [outs[i]]) for i in range(n)]
        peak = self.c.in_flight
        probe = self.c.submit_lookup_each(ns, keys + keys36(1))
        for i, f in enumerate(futures):
            self.assertEqual(f.result(timeout=60), [strata_kv.OK])
            self.assertTrue(np.array_equal(outs[i], blocks[i]), i)
        self.assertEqual(probe.result(timeout=60), [True] * n + [False])
        self.assertTrue(all(f.done() for f in futures))
        self.assertGreater(peak, 1)  # pipelined: more than one request on the wire

    def test_other_threads_run_while_a_call_waits(self):
        ns = self.open()
        keys = keys36(8)
        blocks = random_blocks(8, BLOCK)
        self.c.put(ns, keys, None, blocks)
        ticks = []
        stop = threading.Event()

        def spin():
            while not stop.is_set():
                ticks.append(time.monotonic())
                time.sleep(0.001)

        t = threading.Thread(target=spin)
        t.start()
        try:
            outs = [np.zeros(BLOCK, np.uint8) for _ in keys]
            for _ in range(20):
                self.c.get_into(ns, keys, outs)
        finally:
            stop.set()
            t.join()
        self.assertGreater(len(ticks), 5)

    def test_close_fails_what_is_in_flight_cleanly(self):
        c = self.server.client()
        ns = c.open_namespace(**descriptor(BLOCK))
        c.close()
        with self.assertRaises(strata_kv.Error) as cm:
            c.lookup_each(ns, keys36(1))
        self.assertEqual(cm.exception.code_name, "CLOSED")

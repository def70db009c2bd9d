"""The C ABI (include/strata/strata_c.h) through ctypes on libstrata_kv.so,
against a real server: connect/auth, namespace, put/lookup/get into caller
memory, per-item statuses, stats, error codes and messages."""
import ctypes as C
import os
import unittest

from kvtest import ACCESS_KEY, SECRET_KEY, KvTestCase, chain_keys, descriptor

BLOCK = 16 << 10
OK, NOT_FOUND, EXISTS, INVALID, AUTH_FAILED = 0, 1, 2, 3, 4


class NsDesc(C.Structure):
    _fields_ = [("model_id", C.c_char_p), ("weights_fingerprint", C.c_char_p),
                ("kv_dtype", C.c_char_p), ("kv_layout", C.c_char_p),
                ("tokens_per_block", C.c_uint32), ("block_bytes", C.c_uint64),
                ("tp_size", C.c_uint16), ("tp_rank", C.c_uint16), ("pp_size", C.c_uint16),
                ("pp_rank", C.c_uint16), ("hash_algorithm", C.c_char_p),
                ("hash_seed", C.c_uint64), ("tenant_salt", C.c_char_p),
                ("quota_bytes", C.c_uint64), ("ttl_s", C.c_uint32)]


class Ns(C.Structure):
    _fields_ = [("handle", C.c_uint64), ("digest", C.c_uint8 * 32), ("bucket", C.c_char * 64)]


class GetItem(C.Structure):
    _fields_ = [("key", C.c_void_p), ("key_len", C.c_uint8), ("offset", C.c_uint64),
                ("length", C.c_uint64), ("dst", C.c_void_p), ("dst_capacity", C.c_uint64),
                ("status", C.c_int), ("bytes", C.c_uint64)]


class PutItem(C.Structure):
    _fields_ = [("key", C.c_void_p), ("key_len", C.c_uint8), ("parent", C.c_void_p),
                ("parent_len", C.c_uint8), ("src", C.c_void_p), ("length", C.c_uint64),
                ("status", C.c_int)]


class Stats(C.Structure):
    _fields_ = [(n, C.c_uint64) for n in ("blocks", "bytes", "hits", "misses", "bytes_served",
                                          "bytes_requested", "evictions", "lookups")]


def load_lib():
    path = os.environ.get("STRATA_KV_CLIB")
    if not path or not os.path.exists(path):
        return None
    lib = C.CDLL(path)
    lib.strata_kv_connect.argtypes = [C.c_char_p, C.c_uint16, C.c_char_p, C.c_char_p,
                                      C.c_uint32, C.POINTER(C.c_void_p)]
    lib.strata_kv_close.argtypes = [C.c_void_p]
    lib.strata_kv_close.restype = None
    lib.strata_kv_open_namespace.argtypes = [C.c_void_p, C.POINTER(NsDesc), C.POINTER(Ns)]
    lib.strata_kv_lookup.argtypes = [C.c_void_p, C.c_uint64, C.POINTER(C.c_void_p),
                                     C.POINTER(C.c_uint8), C.c_uint32, C.POINTER(C.c_uint32)]
    lib.strata_kv_get.argtypes = [C.c_void_p, C.c_uint64, C.POINTER(GetItem), C.c_uint32]
    lib.strata_kv_put.argtypes = [C.c_void_p, C.c_uint64, C.POINTER(PutItem), C.c_uint32]
    lib.strata_kv_delete.argtypes = [C.c_void_p, C.c_uint64, C.POINTER(C.c_void_p),
                                     C.POINTER(C.c_uint8), C.c_uint32, C.POINTER(C.c_int)]
    lib.strata_kv_stats_get.argtypes = [C.c_void_p, C.c_uint64, C.POINTER(Stats)]
    lib.strata_kv_code_name.restype = C.c_char_p
    lib.strata_kv_last_error.argtypes = [C.c_void_p]
    lib.strata_kv_last_error.restype = C.c_char_p
    lib.strata_kv_ping.argtypes = [C.c_void_p]
    return lib


class CAbiTest(KvTestCase):

    @classmethod
    def setUpClass(cls):
        cls.lib = load_lib()
        if cls.lib is None:
            raise unittest.SkipTest("STRATA_KV_CLIB (libstrata_kv.so) not given")
        super().setUpClass()

    def connect(self, secret=SECRET_KEY):
        h = C.c_void_p()
        rc = self.lib.strata_kv_connect(b"127.0.0.1", self.server.kv_port, ACCESS_KEY.encode(),
                                        secret.encode(), 10000, C.byref(h))
        if rc == OK:
            self.addCleanup(self.lib.strata_kv_close, h)
        return rc, h

    def open(self, h, d):
        keep = {k: v.encode() if isinstance(v, str) else v for k, v in d.items()}
        desc = NsDesc(**keep)
        ns = Ns()
        self.assertEqual(self.lib.strata_kv_open_namespace(h, C.byref(desc), C.byref(ns)), OK,
                         self.lib.strata_kv_last_error(None))
        return ns

    @staticmethod
    def key_arrays(keys):
        bufs = [C.create_string_buffer(k, len(k)) for k in keys]
        ptrs = (C.c_void_p * len(keys))(*[C.addressof(b) for b in bufs])
        lens = (C.c_uint8 * len(keys))(*[len(k) for k in keys])
        return bufs, ptrs, lens

    def test_wrong_secret(self):
        rc, h = self.connect("wrong")
        self.assertEqual(rc, AUTH_FAILED)
        self.assertEqual(self.lib.strata_kv_code_name(rc), b"AUTH_FAILED")
        self.assertIn(b"AUTH_FAILED", self.lib.strata_kv_last_error(None))
        self.assertFalse(h.value)

    def test_round_trip(self):
        rc, h = self.connect()
        self.assertEqual(rc, OK)
        self.assertEqual(self.lib.strata_kv_ping(h), OK)
        ns = self.open(h, descriptor(BLOCK))
        self.assertTrue(ns.bucket.startswith(b"kv-"))
        keys = chain_keys(3)
        bufs, ptrs, lens = self.key_arrays(keys)
        src = [C.create_string_buffer(os.urandom(BLOCK), BLOCK) for _ in keys]
        items = (PutItem * 3)()
        for i in range(3):
            items[i].key, items[i].key_len = ptrs[i], 32
            if i:
                items[i].parent, items[i].parent_len = ptrs[i - 1], 32
            items[i].src, items[i].length = C.addressof(src[i]), BLOCK
        self.assertEqual(self.lib.strata_kv_put(h, ns.handle, items, 3), OK)
        self.assertEqual([it.status for it in items], [OK] * 3)
        self.assertEqual(self.lib.strata_kv_put(h, ns.handle, items, 1), OK)
        self.assertEqual(items[0].status, EXISTS)

        hits = C.c_uint32()
        self.assertEqual(self.lib.strata_kv_lookup(h, ns.handle, ptrs, lens, 3, C.byref(hits)), OK)
        self.assertEqual(hits.value, 3)

        dst = C.create_string_buffer(3 * BLOCK)
        gets = (GetItem * 3)()
        for i in range(3):
            gets[i].key, gets[i].key_len = ptrs[i], 32
            gets[i].dst, gets[i].dst_capacity = C.addressof(dst) + i * BLOCK, BLOCK
        self.assertEqual(self.lib.strata_kv_get(h, ns.handle, gets, 3), OK)
        self.assertEqual([(g.status, g.bytes) for g in gets], [(OK, BLOCK)] * 3)
        self.assertEqual(dst.raw, b"".join(s.raw for s in src))

        st = (C.c_int * 3)()
        self.assertEqual(self.lib.strata_kv_delete(h, ns.handle, ptrs, lens, 1, st), OK)
        self.assertEqual(st[0], OK)
        self.assertEqual(self.lib.strata_kv_get(h, ns.handle, gets, 1), OK)
        self.assertEqual(gets[0].status, NOT_FOUND)

        stats = Stats()
        self.assertEqual(self.lib.strata_kv_stats_get(h, ns.handle, C.byref(stats)), OK)
        self.assertEqual(stats.bytes_served, stats.bytes_requested)
        self.assertEqual(stats.bytes_served, 3 * BLOCK)

    def test_bad_key_is_invalid(self):
        rc, h = self.connect()
        ns = self.open(h, descriptor(BLOCK))
        bufs, ptrs, lens = self.key_arrays([b"short-key"])
        hits = C.c_uint32()
        rc = self.lib.strata_kv_lookup(h, ns.handle, ptrs, lens, 1, C.byref(hits))
        self.assertEqual(rc, INVALID)
        self.assertIn(b"16..64", self.lib.strata_kv_last_error(None))
        self.assertEqual(self.lib.strata_kv_ping(h), OK)


if __name__ == "__main__":
    unittest.main()

"""Shared fixtures of the KV tests: a real strata server with its KV listener
on free loopback ports (tests/integration/harness.py Server), clients, and
namespace descriptors unique to each test.

Environment (tests/kv/run.sh sets it): STRATA_BIN, STRATA_KV_PYDIR (directory
of the strata_kv module), STRATA_KV_CLIB (libstrata_kv.so, for the C ABI
test); client/python and tests/integration on PYTHONPATH.
"""
import itertools
import os
import socket
import time
import unittest

import numpy as np

import harness
import strata_kv

ACCESS_KEY = harness.ACCESS_KEY
SECRET_KEY = harness.SECRET_KEY
_ns_counter = itertools.count()


def wait_for_port(port, proc_alive, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not proc_alive():
            raise RuntimeError("strata exited before its KV listener came up")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"KV listener on port {port} did not come up")


class KvServer(harness.Server):
    """harness.Server plus --kv-listen on its own free port."""

    def __init__(self, data_dir=None, extra_args=()):
        self.kv_port = harness.free_port()
        super().__init__(data_dir=data_dir,
                         extra_args=["--kv-listen", f"127.0.0.1:{self.kv_port}", *extra_args])

    def start(self, timeout=30):
        super().start(timeout)
        wait_for_port(self.kv_port, self.alive, timeout)
        return self

    def restart(self):
        self.stop()
        self.port = harness.free_port()  # the old ports may linger in TIME_WAIT
        self.kv_port = harness.free_port()
        self.extra_args[self.extra_args.index("--kv-listen") + 1] = f"127.0.0.1:{self.kv_port}"
        return self.start()

    def client(self, access_key=ACCESS_KEY, secret_key=SECRET_KEY, **kw):
        return strata_kv.Client("127.0.0.1", self.kv_port, access_key, secret_key, **kw)

    def conn_kwargs(self):
        return dict(host="127.0.0.1", port=self.kv_port, access_key=ACCESS_KEY,
                    secret_key=SECRET_KEY)


def descriptor(block_bytes=64 << 10, **overrides):
    """A namespace descriptor no other test uses (fresh model_id)."""
    d = dict(model_id=f"test-model-{os.getpid()}-{next(_ns_counter)}",
             weights_fingerprint="sha256:" + "ab" * 32, kv_dtype="float16",
             kv_layout="NHD", tokens_per_block=16, block_bytes=block_bytes, tp_size=1,
             tp_rank=0, pp_size=1, pp_rank=0, hash_algorithm="sha256", hash_seed=0,
             tenant_salt="")
    d.update(overrides)
    return d


def random_blocks(n, block_bytes, seed=None):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, block_bytes, dtype=np.uint8) for _ in range(n)]


def chain_keys(n, seed=b""):
    """n 32-byte keys chained like a prefix hash (each depends on the previous)."""
    import hashlib
    keys, prev = [], seed or os.urandom(16)
    for i in range(n):
        prev = hashlib.sha256(prev + i.to_bytes(4, "little")).digest()
        keys.append(prev)
    return keys


class KvTestCase(unittest.TestCase):
    """One server (with KV listener) per test class."""

    @classmethod
    def setUpClass(cls):
        cls.server = KvServer().start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def setUp(self):
        self.assertTrue(self.server.alive(), "server died: " + self.server.read_log())

"""The KV-cache tier's figures on the Prometheus endpoint (docs/metrics.md): per namespace
lookups, hits, misses, bytes served and requested, blocks and bytes held — the same numbers
the namespace's own STATS request gives, and promtool accepts the output."""
import re
import subprocess
import urllib.request

import numpy as np

import harness
import strata_kv
from kvtest import KvServer, chain_keys, descriptor, random_blocks
from test_metrics import sample  # the integration suite's exposition reader

BLOCK = 64 << 10




class KvMetricsTest(harness.unittest.TestCase):
    def test_namespace_counters_are_exported(self):
        mport = harness.free_port()
        server = KvServer(extra_args=["--metrics-listen", f"127.0.0.1:{mport}"]).start()
        self.addCleanup(server.cleanup)
        with server.client() as c:
            ns = c.open_namespace(**descriptor(BLOCK))
            keys = chain_keys(4)
            self.assertEqual(c.put(ns, keys, None, random_blocks(4, BLOCK, seed=3)),
                             [strata_kv.OK] * 4)
            self.assertEqual(c.lookup(ns, keys + chain_keys(1)), 4)
            rows = [np.zeros(BLOCK, dtype=np.uint8) for _ in range(6)]
            statuses = c.get_into(ns, keys + chain_keys(2), rows)
            self.assertEqual(statuses[:4], [strata_kv.OK] * 4)
            st = c.stats(ns)
        with urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=10) as r:
            text = r.read().decode()
        buckets = set(re.findall(r'strata_kv_blocks\{namespace="(kv-[0-9a-f]+)"\}', text))
        self.assertEqual(len(buckets), 1, text[-2000:])
        name = buckets.pop()
        self.assertEqual(sample(text, "strata_kv_blocks", namespace=name), 4)
        self.assertEqual(sample(text, "strata_kv_stored_bytes", namespace=name), 4 * BLOCK)
        self.assertEqual(sample(text, "strata_kv_hits_total", namespace=name), 4)
        self.assertEqual(sample(text, "strata_kv_misses_total", namespace=name), 2)
        self.assertEqual(sample(text, "strata_kv_served_bytes_total", namespace=name), 4 * BLOCK)
        self.assertGreaterEqual(sample(text, "strata_kv_lookups_total", namespace=name), 1)
        for field, metric in (("hits", "strata_kv_hits_total"), ("misses", "strata_kv_misses_total"),
                              ("bytes_served", "strata_kv_served_bytes_total"),
                              ("lookups", "strata_kv_lookups_total")):
            self.assertEqual(sample(text, metric, namespace=name), st[field], field)
        # Energy (docs/energy.md): the namespace's operations are a workload of their own,
        # at least the bytes they moved (4 blocks in, 4 out) at 3 nJ per byte.
        joules = sample(text, "strata_energy_workload_joules_total", kind="kv_namespace",
                        workload=name, source="modelled")
        self.assertIsNotNone(joules, text[-3000:])
        self.assertGreater(joules, 8 * BLOCK * 3e-9)
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual((r.returncode, r.stdout + r.stderr), (0, ""))


if __name__ == "__main__":
    harness.unittest.main()

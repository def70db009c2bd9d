"""The KV tier's evictions in the audit trail (issue 15, docs/audit.md): not one record per
block (an inference engine evicts thousands a second) but one KvEviction system record per
namespace, cause and summary interval, with the blocks and bytes it took; a client's DELETE is
no eviction; the last interval is reported when the server stops."""
import time

import harness
import strata_kv
from kvtest import KvServer, chain_keys, descriptor, random_blocks
from test_audit import query

BLOCK = 64 << 10


class KvEvictionAuditTest(harness.unittest.TestCase):
    def test_quota_evictions_are_summarised_per_namespace(self):
        server = KvServer(extra_args=["--kv-eviction-summary-s", "1"]).start()
        self.addCleanup(server.cleanup)
        with server.client() as c:
            ns = c.open_namespace(**descriptor(BLOCK, quota_bytes=4 * BLOCK))
            keys = chain_keys(10)
            # One at a time: each PUT past the quota evicts the oldest leaf (no chain
            # parents here, so every block is a leaf).
            for i, block in enumerate(random_blocks(10, BLOCK, seed=5)):
                self.assertEqual(c.put(ns, [keys[i]], None, [block]), [strata_kv.OK])
            self.assertEqual(c.stats(ns)["evictions"], 6)
            self.assertEqual(c.delete(ns, [keys[9]]), [strata_kv.OK])  # not an eviction
        deadline = time.time() + 30
        records = []
        while time.time() < deadline and sum(self.blocks(r) for r in records) < 6:
            time.sleep(0.3)
            records = query(server, operation="KvEviction")
        self.assertTrue(records, "no KvEviction record")
        for r in records:
            self.assertEqual(r["identity"], "strata:kvcache")
            self.assertEqual(r["kind"], "system")
            self.assertTrue(r["bucket"].startswith("kv-"), r)
            self.assertTrue(r["key"].startswith("quota blocks="), r)
            self.assertEqual(r["bytes"], self.blocks(r) * BLOCK, r)
        self.assertEqual(sum(self.blocks(r) for r in records), 6)
        self.assertEqual(len({r["bucket"] for r in records}), 1)

    def test_the_last_interval_is_recorded_at_shutdown(self):
        # An interval far longer than the test: only the stop reports it.
        server = KvServer(extra_args=["--kv-eviction-summary-s", "3600"]).start()
        self.addCleanup(server.cleanup)
        with server.client() as c:
            ns = c.open_namespace(**descriptor(BLOCK, quota_bytes=2 * BLOCK))
            keys = chain_keys(5)
            for i, block in enumerate(random_blocks(5, BLOCK, seed=6)):
                self.assertEqual(c.put(ns, [keys[i]], None, [block]), [strata_kv.OK])
        self.assertEqual(query(server, operation="KvEviction"), [])
        server.restart()  # SIGTERM: the kv tier stops before the audit trail
        records = query(server, operation="KvEviction")
        self.assertEqual(len(records), 1, records)
        self.assertEqual(records[0]["key"], "quota blocks=3")
        self.assertEqual(records[0]["bytes"], 3 * BLOCK)

    @staticmethod
    def blocks(record):
        return int(record["key"].split("blocks=")[1])


if __name__ == "__main__":
    harness.unittest.main()

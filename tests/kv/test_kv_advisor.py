"""The tier advisor and the KV-cache tier (issue 18, docs/advisor.md): a namespace nobody has
stored into or read from for --advisor-kv-idle-days gets an "idle → expire" recommendation with
its evidence (blocks, bytes, hits and misses, last access); the execution policy must name
kv->expire before it may be approved; carried out, every block but the pinned ones is gone for
the engines and for S3, and each removal is an audit record naming the recommendation. A
namespace used again before its expiry runs is left alone. The admin API's `requests` document
(the console's KV hit-rate chart) counts the KV reads."""
import json
import time

import numpy as np

import harness
import strata_kv
from kvtest import KvServer, chain_keys, descriptor, random_blocks

BLOCK = 64 << 10
DAY_S = 1  # a lifecycle (and advisor) day of one second
IDLE_DAYS = 3


class KvAdvisorTest(harness.unittest.TestCase):
    def setUp(self):
        self.server = KvServer(extra_args=[
            "--lifecycle-day-seconds", str(DAY_S), "--advisor-interval-s", "3600",
            "--advisor-kv-idle-days", str(IDLE_DAYS)]).start()
        self.addCleanup(self.server.cleanup)

    def admin(self, method, action, body=b"", **query):
        st, doc = harness.admin(self.server, method, action, body=body, **query)
        return st, doc

    def wait_state(self, rec_id, state, timeout=30):
        """The recommendation once the executor has brought it to `state`."""
        deadline = time.time() + timeout
        doc = {}
        while time.time() < deadline:
            st, doc = self.admin("GET", "advisor-show", id=rec_id)
            if doc.get("state") == state:
                return doc
            time.sleep(0.2)
        self.fail(f"recommendation {rec_id} is {doc.get('state')}, not {state}; log: {self.server.read_log()}")

    def recommendations(self, bucket):
        st, doc = self.admin("POST", "advisor-run")
        self.assertEqual(st, 200, doc)
        st, doc = self.admin("GET", "advisor-list")
        self.assertEqual(st, 200, doc)
        return [r for r in doc["recommendations"] if r["bucket"] == bucket]

    def test_idle_namespace_expires_within_the_policy(self):
        with self.server.client() as c:
            idle = c.open_namespace(**descriptor(BLOCK))
            busy = c.open_namespace(**descriptor(BLOCK))
            keys = chain_keys(6)
            blocks = random_blocks(6, BLOCK, seed=7)
            self.assertEqual(c.put(idle, keys, [None] + keys[:-1], blocks), [strata_kv.OK] * 6)
            self.assertEqual(c.put(busy, keys[:2], None, blocks[:2]), [strata_kv.OK] * 2)
            # Reads: 3 hits and 1 miss in the idle namespace.
            rows = [np.zeros(BLOCK, dtype=np.uint8) for _ in range(4)]
            st = c.get_into(idle, keys[:3] + chain_keys(1, seed=b"absent"), rows)
            self.assertEqual(st[:3], [strata_kv.OK] * 3)
            self.assertEqual(st[3], strata_kv.NOT_FOUND)
            np.testing.assert_array_equal(rows[0], blocks[0])
            # The last block of the chain is pinned: it (and its ancestors) stay.
            self.assertEqual(c.pin(idle, [keys[5]], ttl_ms=3_600_000), [strata_kv.OK])

            st, req = self.admin("GET", "requests")
            self.assertEqual(st, 200, req)
            mine = {n["bucket"]: n for n in req["kv"]["namespaces"]}
            self.assertEqual(mine[idle.bucket]["hits"], 3)
            self.assertEqual(mine[idle.bucket]["misses"], 1)
            self.assertEqual(mine[idle.bucket]["blocks"], 6)
            self.assertEqual(mine[idle.bucket]["bytes"], 6 * BLOCK)
            self.assertTrue(mine[idle.bucket]["last_access"].endswith("Z"), mine)
            self.assertGreaterEqual(req["kv"]["hits"], 3)

            # Not idle long enough yet: nothing to recommend.
            self.assertEqual(self.recommendations(idle.bucket), [])
            time.sleep(IDLE_DAYS * DAY_S + 0.5)
            # The busy namespace is used meanwhile (a lookup has no side effects; a GET does).
            self.assertEqual(c.get_into(busy, keys[:1], rows[:1]), [strata_kv.OK])
            recs = self.recommendations(idle.bucket)
            self.assertEqual(len(recs), 1, recs)
            rec = recs[0]
            self.assertEqual(self.recommendations(busy.bucket), [])
            self.assertEqual(rec["kind"], "expire")
            self.assertEqual(rec["state"], "pending")
            self.assertEqual(rec["objects_to_move"], 6)
            self.assertEqual(rec["bytes_to_move"], 6 * BLOCK)
            self.assertEqual((rec["kv_hits"], rec["kv_misses"]), (3, 1))
            self.assertGreaterEqual(rec["idle_days"], IDLE_DAYS)
            self.assertIn("→ expire", rec["summary"])
            # The default policy moves hot->warm only.
            st, doc = self.admin("POST", "advisor-approve", id=rec["id"])
            self.assertEqual(st, 409, doc)
            self.assertIn("kv->expire", doc["error"])
            policy = {"moves": ["hot->warm", "kv->expire"], "max_objects_per_second": 0}
            st, doc = self.admin("PUT", "advisor-policy", body=json.dumps(policy).encode())
            self.assertEqual(st, 200, doc)
            st, doc = self.admin("POST", "advisor-approve", id=rec["id"])
            self.assertEqual(st, 200, doc)

            shown = self.wait_state(rec["id"], "done")
            # b5 is pinned; its ancestors stay with it (a chain never loses its head).
            self.assertEqual(shown["moved_objects"], 0)
            self.assertEqual(shown["locked"], 6)
            # Unpin and try again: now the whole chain goes.
            self.assertEqual(c.unpin(idle, [keys[5]]), [strata_kv.OK])
            recs = self.recommendations(idle.bucket)
            self.assertEqual([r["state"] for r in recs], ["pending"])
            st, doc = self.admin("POST", "advisor-approve", id=rec["id"])
            self.assertEqual(st, 200, doc)
            shown = self.wait_state(rec["id"], "done")
            self.assertEqual(shown["moved_objects"], 6)
            self.assertEqual(shown["moved_bytes"], 6 * BLOCK)
            self.assertEqual(shown["locked"], 0)
            self.assertEqual(c.lookup_each(idle, keys), [False] * 6)
            self.assertEqual(c.lookup_each(busy, keys[:2]), [True, True])
            # Gone for S3 too, and in the audit trail with the recommendation named.
            s3 = self.server.boto3_client()
            self.assertEqual(s3.list_objects_v2(Bucket=idle.bucket, Prefix=idle.digest.hex() + "/")
                             .get("KeyCount"), 0)
            records = harness.audit_records(self.server, operation="AdvisorKvExpire")
            self.assertEqual(len(records), 6, records)
            for r in records:
                self.assertEqual(r["identity"], "strata:advisor")
                self.assertEqual(r["request_id"], "advisor:" + rec["id"])
                self.assertEqual(r["bucket"], idle.bucket)

    def test_a_namespace_used_again_is_not_expired(self):
        with self.server.client() as c:
            ns = c.open_namespace(**descriptor(BLOCK))
            keys = chain_keys(2)
            self.assertEqual(c.put(ns, keys, None, random_blocks(2, BLOCK, seed=3)),
                             [strata_kv.OK] * 2)
            time.sleep(IDLE_DAYS * DAY_S + 0.5)
            recs = self.recommendations(ns.bucket)
            self.assertEqual(len(recs), 1, recs)
            policy = {"moves": ["kv->expire"], "enabled": False}  # approved, but not run yet
            st, doc = self.admin("PUT", "advisor-policy", body=json.dumps(policy).encode())
            self.assertEqual(st, 200, doc)
            st, doc = self.admin("POST", "advisor-approve", id=recs[0]["id"])
            self.assertEqual(st, 200, doc)
            # An engine reads from it before the executor gets to it.
            row = np.zeros(BLOCK, dtype=np.uint8)
            self.assertEqual(c.get_into(ns, keys[:1], [row]), [strata_kv.OK])
            policy["enabled"] = True
            st, doc = self.admin("PUT", "advisor-policy", body=json.dumps(policy).encode())
            self.assertEqual(st, 200, doc)
            doc = self.wait_state(recs[0]["id"], "expired")
            self.assertIn("accessed since", doc["reason"])
            self.assertEqual(c.lookup_each(ns, keys), [True, True])
            self.assertEqual(harness.audit_records(self.server, operation="AdvisorKvExpire"), [])


if __name__ == "__main__":
    harness.unittest.main()

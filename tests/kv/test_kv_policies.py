"""KV-cache tier access by policy (issue 12): an identity opens a namespace
only if a policy allows strata:KvRead, strata:KvWrite or strata:KvAdmin on the
namespace's bucket, decided once per OPEN_NAMESPACE; the handle then carries
what was allowed (a reader cannot PUT, a writer cannot GET), and quota / TTL
need KvAdmin. Root may do everything."""
import json
import unittest

import numpy as np
import strata_kv

from harness import make_user, unique_name
from kvtest import KvTestCase, chain_keys, descriptor, random_blocks

BLOCK = 4096


def kv_policy(*actions, resource="arn:aws:s3:::kv-*", condition=None):
    statement = {"Effect": "Allow", "Action": list(actions), "Resource": resource}
    if condition:
        statement["Condition"] = condition
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


class KvPolicyTest(KvTestCase):
    def user(self, tag, *actions, **kw):
        policy = kv_policy(*actions, **kw) if actions else None
        u = make_user(self.server, f"{tag}-{unique_name('k')}"[:64], policy)
        c = self.server.client(access_key=u["ak"], secret_key=u["sk"])
        self.addCleanup(c.close)
        return c

    def test_no_policy_no_namespace(self):
        c = self.user("nokv")
        with self.assertRaises(strata_kv.Error) as cm:
            c.open_namespace(**descriptor(BLOCK))
        self.assertEqual(cm.exception.code, strata_kv.DENIED, str(cm.exception))
        c.ping()  # the connection stays usable

    def test_reader_writer_and_admin_rights(self):
        desc = descriptor(BLOCK)
        keys = chain_keys(3)
        blocks = random_blocks(3, BLOCK, seed=7)
        writer = self.user("writer", "strata:KvWrite")
        ns_w = writer.open_namespace(**desc)
        self.assertEqual(writer.put(ns_w, keys, None, blocks), [strata_kv.OK] * 3)
        with self.assertRaises(strata_kv.Error) as cm:  # a writer may not read
            writer.lookup(ns_w, keys)
        self.assertEqual(cm.exception.code, strata_kv.DENIED)

        reader = self.user("reader", "strata:KvRead")
        ns_r = reader.open_namespace(**desc)  # another identity's namespace: shared by policy
        self.assertEqual(ns_r.digest, ns_w.digest)
        self.assertEqual(reader.lookup(ns_r, keys), 3)
        out = [np.zeros(BLOCK, np.uint8) for _ in keys]
        self.assertEqual(reader.get_into(ns_r, keys, out), [strata_kv.OK] * 3)
        self.assertTrue(all((o == b).all() for o, b in zip(out, blocks)))
        with self.assertRaises(strata_kv.Error) as cm:
            reader.put(ns_r, chain_keys(1), None, random_blocks(1, BLOCK))
        self.assertEqual(cm.exception.code, strata_kv.DENIED)
        with self.assertRaises(strata_kv.Error) as cm:
            reader.delete(ns_r, keys[:1])
        self.assertEqual(cm.exception.code, strata_kv.DENIED)
        self.assertEqual(reader.lookup(ns_r, keys), 3)  # nothing deleted
        # Quota / TTL are the admin's.
        with self.assertRaises(strata_kv.Error) as cm:
            reader.open_namespace(**dict(desc, quota_bytes=1 << 30))
        self.assertEqual(cm.exception.code, strata_kv.DENIED)
        admin = self.user("kvadmin", "strata:KvAdmin", "strata:KvRead")
        ns_a = admin.open_namespace(**dict(desc, quota_bytes=1 << 30, ttl_s=3600))
        self.assertEqual(admin.lookup(ns_a, keys), 3)

    def test_source_ip_condition(self):
        desc = descriptor(BLOCK)
        near = self.user("near", "strata:KvRead",
                         condition={"IpAddress": {"aws:SourceIp": "127.0.0.0/8"}})
        near.open_namespace(**desc)
        far = self.user("far", "strata:KvRead",
                        condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}})
        with self.assertRaises(strata_kv.Error) as cm:
            far.open_namespace(**desc)
        self.assertEqual(cm.exception.code, strata_kv.DENIED)

    def test_policy_scoped_to_one_namespace_bucket(self):
        desc = descriptor(BLOCK)
        with self.server.client() as root:  # root: every right, no policy needed
            bucket = root.open_namespace(**desc).bucket
        scoped = self.user("scoped", "strata:KvRead", resource=f"arn:aws:s3:::{bucket}")
        scoped.open_namespace(**desc)
        with self.assertRaises(strata_kv.Error) as cm:
            scoped.open_namespace(**descriptor(BLOCK))
        self.assertEqual(cm.exception.code, strata_kv.DENIED)


if __name__ == "__main__":
    unittest.main()

"""The tier advisor (issue 18, docs/advisor.md) against a real server with a hot and a warm
pool, on a fast clock (one day = 2 s): GETs feed the access statistics, an analysis recommends
a checkpoint prefix that went cold (hot -> warm) and a RAG index that heated up (warm -> hot) but
not a one-off scan, approvals are checked against the execution policy, an approved move runs
within its daily byte budget with an audit record per object naming the recommendation, a
locked object keeps its lock, and `strata admin advisor` drives it all. Real boto3."""
import datetime
import os
import subprocess
import time
import unittest

import harness
from harness import Server, unique_name

DAY_S = 2
SIZE = 300 << 10  # past the inline limit: a data file in the pool

CONFIG = harness.TWO_POOLS


def cli(server, *args, check=True):
    env = dict(os.environ, STRATA_ROOT_USER=harness.ACCESS_KEY,
               STRATA_ROOT_PASSWORD=harness.SECRET_KEY)
    r = subprocess.run([server.bin, "admin", "advisor", *args, "--endpoint", server.endpoint],
                       capture_output=True, text=True, env=env, timeout=60)
    if check and r.returncode != 0:
        raise AssertionError(f"strata admin advisor {' '.join(args)}: {r.returncode}\n{r.stdout}{r.stderr}")
    return r


class AdvisorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.config = harness.write_config(CONFIG, prefix="strata-advisor-")
        cls.server = Server(extra_args=[
            "--config", cls.config, "--kv-listen", "off",
            "--lifecycle-day-seconds", str(DAY_S), "--lifecycle-interval-s", "3600",
            "--advisor-interval-s", "3600", "--advisor-cold-days", "1",
            "--advisor-hot-reads", "5", "--advisor-min-bytes", "1"]).start()
        cls.s3 = cls.server.boto3_client()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.server.cleanup()
        os.unlink(cls.config)

    def admin(self, method, action, body=b"", **q):
        return harness.admin(self.server, method, action, body=body, **q)

    def recommendations(self):
        st, doc = self.admin("GET", "advisor-list")
        self.assertEqual(st, 200, doc)
        return doc

    def find(self, bucket, prefix):
        for r in self.recommendations()["recommendations"]:
            if r["bucket"] == bucket and r["prefix"] == prefix:
                return r
        return None

    def wait_for(self, what, predicate, timeout=30):
        harness.wait_for(self, self.server, what, predicate, timeout)

    def test_advisor_end_to_end(self):
        s3 = self.s3
        ml, kb = unique_name("ml"), unique_name("kb")
        vault = unique_name("vault")
        for b in (ml, kb):
            s3.create_bucket(Bucket=b)
        s3.create_bucket(Bucket=vault, ObjectLockEnabledForBucket=True)
        bodies = {}
        for i in range(6):
            key = f"ckpt/2026-10/shard-{i}"
            bodies[key] = os.urandom(SIZE)
            s3.put_object(Bucket=ml, Key=key, Body=bodies[key])
        for i in range(4):
            s3.put_object(Bucket=kb, Key=f"rag/index/s{i}", Body=os.urandom(SIZE),
                          StorageClass="STANDARD_IA")
        for i in range(20):
            s3.put_object(Bucket=kb, Key=f"scan/once/{i}", Body=b"x" * 1000,
                          StorageClass="STANDARD_IA")
        until = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=3)
        locked_body = os.urandom(SIZE)
        put = s3.put_object(Bucket=vault, Key="arch/2026/a", Body=locked_body,
                            ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until)
        locked_version = put["VersionId"]

        # The RAG index is read on three days, ten times per shard a day; the scan reads its
        # objects once.
        for day in range(3):
            for _ in range(10):
                for i in range(4):
                    s3.get_object(Bucket=kb, Key=f"rag/index/s{i}")["Body"].read()
            if day == 0:
                for i in range(20):
                    s3.get_object(Bucket=kb, Key=f"scan/once/{i}")["Body"].read()
            if day < 2:
                time.sleep(DAY_S + 0.2)
        st, stats = self.admin("GET", "advisor-stats", bucket=kb)
        self.assertEqual(st, 200, stats)
        rag = [p for p in stats["prefixes"] if p["prefix"] == "rag/index/"]
        self.assertEqual(len(rag), 1, stats)
        self.assertEqual(rag[0]["total_reads"], 120)
        self.assertEqual(rag[0]["total_bytes"], 120 * SIZE)

        # Analysis (the ckpt and vault prefixes have been idle > 1 day by now).
        r = cli(self.server, "run")
        self.assertIn("recommendations", r.stdout)
        ckpt = self.find(ml, "ckpt/2026-10/")
        self.assertIsNotNone(ckpt, self.recommendations())
        self.assertEqual((ckpt["kind"], ckpt["from_media"], ckpt["to_media"], ckpt["to_class"]),
                         ("colder", "hot", "warm", "STANDARD_IA"))
        self.assertEqual(ckpt["state"], "pending")
        self.assertEqual(ckpt["objects_to_move"], 6)
        self.assertEqual(ckpt["bytes_to_move"], 6 * SIZE)
        self.assertIn("<Prefix>ckpt/2026-10/</Prefix>", ckpt["lifecycle_rule"])
        self.assertIn("→ warm (STANDARD_IA)", ckpt["summary"])
        hot = self.find(kb, "rag/index/")
        self.assertIsNotNone(hot, self.recommendations())
        self.assertEqual((hot["kind"], hot["from_media"], hot["to_media"], hot["to_class"]),
                         ("hotter", "warm", "hot", "STANDARD"))
        self.assertGreaterEqual(hot["active_days"], 3)
        self.assertIsNone(self.find(kb, "scan/once/"), "a one-off scan must not move data")
        listed = cli(self.server, "list").stdout
        self.assertIn(ckpt["id"], listed)
        self.assertIn("executor: enabled", listed)
        shown = cli(self.server, "show", ckpt["id"]).stdout
        self.assertIn("expected effect (modelled)", shown)
        self.assertIn("lifecycle rule:", shown)

        # The default policy allows only hot -> warm: approving warm -> hot is refused, saying why.
        r = cli(self.server, "approve", hot["id"], check=False)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("does not allow warm->hot", r.stderr)
        st, doc = self.admin("PUT", "advisor-policy", body=b'{"moves": ["hot->tape"]}')
        self.assertEqual(st, 400, doc)
        self.assertIn("tape", doc["error"])

        # A budget of three objects a day, approvals required.
        budget = 3 * SIZE + 100
        policy = ('{"require_approval": true, "moves": ["hot->warm", "warm->hot"], '
                  f'"max_bytes_per_day": {budget}, "max_objects_per_second": 0}}')
        path = os.path.join(self.server.data_dir, "..", unique_name("policy") + ".json")
        with open(path, "w") as f:
            f.write(policy)
        try:
            out = cli(self.server, "policy", path).stdout
        finally:
            os.unlink(path)
        self.assertIn('"max_bytes_per_day"', out)
        self.assertIn(str(budget), out)

        cli(self.server, "approve", ckpt["id"])
        self.wait_for("the checkpoint prefix moved to warm",
                      lambda: self.find(ml, "ckpt/2026-10/")["state"] == "done", timeout=12 * DAY_S)
        done = self.find(ml, "ckpt/2026-10/")
        self.assertEqual(done["moved_objects"], 6)
        self.assertEqual(done["moved_bytes"], 6 * SIZE)
        self.assertEqual(done["decided_by"], harness.ACCESS_KEY)
        for key, body in bodies.items():
            head = s3.head_object(Bucket=ml, Key=key)
            self.assertEqual(head.get("StorageClass"), "STANDARD_IA", key)
            self.assertEqual(s3.get_object(Bucket=ml, Key=key)["Body"].read(), body, key)
        # Each move is in the audit trail as the advisor's, naming the recommendation; never more
        # than the budget's three objects moved on one day.
        moves = harness.audit_records(self.server, identity="strata:advisor", bucket=ml,
                              operation="AdvisorTransition")
        self.assertEqual(sorted(m["key"] for m in moves), sorted(bodies), moves)
        for m in moves:
            self.assertEqual(m["request_id"], "advisor:" + ckpt["id"])
            self.assertEqual(m["kind"], "system")
            self.assertEqual(m["result"], "OK")
        # The fourth move waited for the day after the first one's (a record is written a few
        # ms after its move's budget check: 50 ms of slack for that).
        times = sorted(m["time_ns"] / 1e9 for m in moves)
        next_day = (int((times[0] - 0.05) // DAY_S) + 1) * DAY_S
        self.assertGreaterEqual(times[3], next_day - 0.001, times)
        # The approval itself is an audit record of root's admin request.
        approvals = harness.audit_records(self.server, identity=harness.ACCESS_KEY, operation="Admin")
        self.assertTrue(any("advisor-approve" in (a.get("key") or "") for a in approvals), approvals)

        # The locked object moves and keeps its lock.
        vault_rec = self.find(vault, "arch/2026/")
        self.assertIsNotNone(vault_rec, self.recommendations())
        st, doc = self.admin("POST", "advisor-approve", id=vault_rec["id"])
        self.assertEqual(st, 200, doc)
        self.wait_for("the locked object moved",
                      lambda: self.find(vault, "arch/2026/")["state"] == "done", timeout=12 * DAY_S)
        head = s3.head_object(Bucket=vault, Key="arch/2026/a")
        self.assertEqual(head.get("StorageClass"), "STANDARD_IA")
        self.assertEqual(head["VersionId"], locked_version)
        self.assertEqual(head["ObjectLockMode"], "COMPLIANCE")
        self.assertEqual(int(head["ObjectLockRetainUntilDate"].timestamp()), int(until.timestamp()))
        with self.assertRaises(s3.exceptions.ClientError) as e:
            s3.delete_object(Bucket=vault, Key="arch/2026/a", VersionId=locked_version)
        self.assertEqual(e.exception.response["Error"]["Code"], "AccessDenied")
        self.assertEqual(s3.get_object(Bucket=vault, Key="arch/2026/a")["Body"].read(), locked_body)

        # Warm -> hot, now allowed; then a rejection sticks.
        cli(self.server, "approve", hot["id"])
        self.wait_for("the RAG index moved to hot",
                      lambda: self.find(kb, "rag/index/")["state"] == "done", timeout=12 * DAY_S)
        self.assertEqual(s3.head_object(Bucket=kb, Key="rag/index/s0").get("StorageClass", "STANDARD"),
                         "STANDARD")
        st, doc = self.admin("POST", "advisor-reject", id=hot["id"])
        self.assertEqual(st, 409, doc)  # done: nothing to reject
        st, doc = self.admin("POST", "advisor-approve", id="0000000000000000")
        self.assertEqual(st, 404, doc)

    def test_stop_and_resume(self):
        b = unique_name("idle")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="old/logs/x", Body=os.urandom(SIZE))
        time.sleep(DAY_S + 0.5)
        self.assertEqual(self.admin("POST", "advisor-run")[0], 200)
        rec = self.find(b, "old/logs/")
        self.assertIsNotNone(rec, self.recommendations())
        self.assertIn("stopped", cli(self.server, "stop").stdout)
        try:
            st, doc = self.admin("POST", "advisor-approve", id=rec["id"])
            self.assertEqual(st, 200, doc)
            time.sleep(1.5)  # several executor ticks
            self.assertEqual(self.find(b, "old/logs/")["state"], "approved")
            self.assertNotIn("StorageClass", self.s3.head_object(Bucket=b, Key="old/logs/x"))
            self.assertIn("STOPPED", cli(self.server, "list").stdout)
        finally:
            cli(self.server, "resume")
        self.wait_for("the move after resume",
                      lambda: self.find(b, "old/logs/")["state"] == "done", timeout=10 * DAY_S)

    def test_statistics_survive_a_restart(self):
        b = unique_name("keep")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="p/q/r", Body=b"abc")
        for _ in range(7):
            self.s3.get_object(Bucket=b, Key="p/q/r")["Body"].read()
        self.server.stop()
        self.server.start()
        self.__class__.s3 = self.server.boto3_client()
        st, stats = self.admin("GET", "advisor-stats", bucket=b)
        self.assertEqual(st, 200, stats)
        self.assertEqual([(p["prefix"], p["total_reads"]) for p in stats["prefixes"]], [("p/q/", 7)])


class AdvisorOffTest(unittest.TestCase):
    def test_off_answers_409(self):
        server = Server(extra_args=["--kv-listen", "off", "--advisor", "off"]).start()
        try:
            st, doc = harness.admin(server, "GET", "advisor-list")
            self.assertEqual(st, 409, doc)
            self.assertIn("--advisor off", doc["error"])
        finally:
            server.stop()
            server.cleanup()


if __name__ == "__main__":
    unittest.main()

"""The audit trail (issue 15, docs/audit.md) seen from outside: real boto3 requests against a
real server; every change has a record carrying the request id the client saw, denied and
failed mutating requests have records of their own, reads have none, the server's own
lifecycle actions are recorded as the system's; `strata admin audit verify` walks the chain and
`strata admin audit query` filters it. A server killed with SIGKILL under a write load comes
back with a chain that verifies and a record for every change the clients were told was
done."""
import json
import os
import subprocess
import threading
import time
import unittest

import boto3
import botocore.exceptions
from botocore.config import Config

import harness
from harness import Server, unique_name


def request_id(resp):
    return resp["ResponseMetadata"]["RequestId"]


query = harness.audit_records


def cli(server, *args):
    env = dict(os.environ, STRATA_ROOT_USER=harness.ACCESS_KEY,
               STRATA_ROOT_PASSWORD=harness.SECRET_KEY)
    return subprocess.run([server.bin, "admin", "audit", *args, "--endpoint", server.endpoint],
                          capture_output=True, text=True, env=env, timeout=60)


class AuditTrailTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(extra_args=["--kv-listen", "off", "--lifecycle-day-seconds", "1",
                                        "--lifecycle-interval-s", "1"]).start()
        cls.s3 = cls.server.boto3_client()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.server.cleanup()

    def by_request(self, bucket):
        return {r["request_id"]: r for r in query(self.server, bucket=bucket)}

    def test_every_change_has_its_record_with_the_request_id_and_version(self):
        b = unique_name("audit")
        made = {request_id(self.s3.create_bucket(Bucket=b)): ("CreateBucket", "")}
        self.s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
        put = self.s3.put_object(Bucket=b, Key="dir/one", Body=b"x" * 5000)
        made[request_id(put)] = ("PutObject", "dir/one")
        copy = self.s3.copy_object(Bucket=b, Key="two", CopySource={"Bucket": b, "Key": "dir/one"})
        made[request_id(copy)] = ("CopyObject", "two")
        tag = self.s3.put_object_tagging(Bucket=b, Key="two",
                                         Tagging={"TagSet": [{"Key": "k", "Value": "v"}]})
        made[request_id(tag)] = ("PutObjectTagging", "two")
        mpu = self.s3.create_multipart_upload(Bucket=b, Key="big")
        part = self.s3.upload_part(Bucket=b, Key="big", UploadId=mpu["UploadId"], PartNumber=1,
                                   Body=b"p" * 1000)
        done = self.s3.complete_multipart_upload(
            Bucket=b, Key="big", UploadId=mpu["UploadId"],
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
        made[request_id(done)] = ("CompleteMultipartUpload", "big")
        dele = self.s3.delete_object(Bucket=b, Key="dir/one")  # a delete marker
        made[request_id(dele)] = ("DeleteObject", "dir/one")
        multi = self.s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "two"}, {"Key": "big"}]})
        got = self.by_request(b)
        for rid, (op, key) in made.items():
            self.assertIn(rid, got, f"no record for {op} {key}")
            rec = got[rid]
            self.assertEqual(rec["operation"], op)
            self.assertEqual(rec["key"], key)
            self.assertEqual(rec["identity"], harness.ACCESS_KEY)
            self.assertEqual(rec["result"], "OK")
            self.assertIn(rec["kind"], ("change",))
            self.assertTrue(rec["source"].startswith("127.0.0.1"), rec)
        self.assertEqual(got[request_id(put)]["version"], put["VersionId"])
        self.assertEqual(got[request_id(put)]["bytes"], 5000)
        self.assertEqual(got[request_id(dele)]["version"], dele["VersionId"])
        # DeleteObjects: one record per key it removed, each naming its key.
        per_key = [r for r in query(self.server, bucket=b)
                   if r["request_id"] == request_id(multi)]
        self.assertEqual(sorted(r["key"] for r in per_key), ["big", "two"])
        self.assertEqual(sorted(r["part"] for r in per_key), [0, 1])

    def test_reads_leave_no_record_and_failed_writes_leave_one(self):
        b = unique_name("audit")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="k", Body=b"data")
        reads = [request_id(self.s3.get_object(Bucket=b, Key="k")),
                 request_id(self.s3.head_object(Bucket=b, Key="k")),
                 request_id(self.s3.list_objects_v2(Bucket=b))]
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            self.s3.put_object(Bucket=b + "-absent", Key="k", Body=b"x")
        failed = request_id(e.exception.response)
        everything = {r["request_id"]: r for r in query(self.server)}
        for rid in reads:
            self.assertNotIn(rid, everything)
        self.assertIn(failed, everything)
        self.assertEqual(everything[failed]["kind"], "request")
        self.assertEqual(everything[failed]["result"], "NoSuchBucket")
        self.assertEqual(everything[failed]["http_status"], 404)

    def test_denied_requests_are_recorded(self):
        b = unique_name("audit")
        self.s3.create_bucket(Bucket=b)
        bad = self.server.boto3_client(secret_key="not-the-secret-key-at-all-000000000000")
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            bad.put_object(Bucket=b, Key="k", Body=b"x")
        forged = request_id(e.exception.response)
        anon = boto3.client("s3", endpoint_url=self.server.endpoint, region_name="us-east-1",
                            config=Config(signature_version=botocore.UNSIGNED))
        with self.assertRaises(botocore.exceptions.ClientError) as e:
            anon.get_object(Bucket=b, Key="k")
        anonymous = request_id(e.exception.response)
        denied = {r["request_id"]: r for r in query(self.server, kind="denied")}
        self.assertEqual(denied[forged]["result"], "SignatureDoesNotMatch")
        self.assertEqual(denied[forged]["http_status"], 403)
        self.assertEqual(denied[forged]["operation"], "PutObject")
        self.assertEqual(denied[anonymous]["result"], "AccessDenied")
        self.assertEqual(denied[anonymous]["identity"], "")
        self.assertEqual(denied[anonymous]["bucket"], b)
        # The same through the identity index: the anonymous caller is identity "".
        self.assertIn(anonymous, [r["request_id"] for r in query(self.server, identity="")])

    def test_admin_actions_and_other_identities(self):
        name = unique_name("auditor")
        user = harness.make_user(self.server, name, policy=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        admin_records = query(self.server, operation="Admin")
        self.assertTrue(all(r["identity"] == harness.ACCESS_KEY for r in admin_records))
        actions = [r["key"] for r in admin_records]
        self.assertIn("user-create", actions)
        self.assertIn("key-create", actions)
        self.assertIn("policy-attach", actions)
        s3u = self.server.boto3_client(access_key=user["ak"], secret_key=user["sk"])
        b = unique_name("audit")
        rid = request_id(s3u.create_bucket(Bucket=b))
        mine = query(self.server, identity=user["ak"])
        self.assertEqual([r["request_id"] for r in mine], [rid])
        self.assertEqual(mine[0]["operation"], "CreateBucket")

    def test_lifecycle_actions_are_the_systems(self):
        b = unique_name("audit")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="old/x", Body=b"x")
        self.s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
            {"ID": "expire", "Status": "Enabled", "Filter": {"Prefix": "old/"},
             "Expiration": {"Days": 1}}]})
        deadline = time.time() + 30
        system = []
        while time.time() < deadline and not system:
            time.sleep(0.5)
            system = query(self.server, bucket=b, kind="system")
        self.assertTrue(system, "no system record for the lifecycle expiration")
        self.assertEqual(system[0]["identity"], "strata:lifecycle")
        self.assertEqual(system[0]["operation"], "LifecycleExpiration:Delete")
        self.assertEqual(system[0]["key"], "old/x")

    def test_query_filters_time_prefix_and_result(self):
        b = unique_name("audit")
        self.s3.create_bucket(Bucket=b)
        for k in ("a/1", "a/2", "b/1"):
            self.s3.put_object(Bucket=b, Key=k, Body=b"x")
        self.assertEqual([r["key"] for r in query(self.server, bucket=b, prefix="a/")],
                         ["a/1", "a/2"])
        recs = query(self.server, bucket=b)
        t1 = recs[1]["time"]
        later = query(self.server, bucket=b, **{"from": t1})
        self.assertTrue(all(r["time"] >= t1 for r in later))
        self.assertIn("a/2", [r["key"] for r in later])
        self.assertEqual(query(self.server, bucket=b, result="error"), [])
        status, doc = harness.admin(self.server, "GET", "audit-query", kind="everything")
        self.assertEqual(status, 400, doc)
        status, doc = harness.admin(self.server, "GET", "audit-query", **{"from": "yesterday"})
        self.assertEqual(status, 400, doc)

    def test_cli_verify_checkpoint_and_query(self):
        b = unique_name("audit")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="k", Body=b"x")
        out = cli(self.server, "checkpoint")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("latest checkpoint: seq", out.stdout)
        out = cli(self.server, "verify")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("audit trail OK", out.stdout)
        status, doc = harness.admin(self.server, "GET", "audit-verify")
        self.assertEqual(status, 200)
        self.assertTrue(doc["ok"], doc)
        self.assertGreater(doc["records"], 0)
        self.assertGreaterEqual(doc["latest_checkpoint"]["seq"], 1)
        out = cli(self.server, "query", "--bucket", b, "--json")
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = [json.loads(line) for line in out.stdout.splitlines()]
        self.assertEqual([(r["operation"], r["key"]) for r in lines],
                         [("CreateBucket", ""), ("PutObject", "k")])
        out = cli(self.server, "query", "--bucket", b)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("PutObject", out.stdout)
        self.assertIn(f"{b}/k", out.stdout)


class AuditCrashTest(unittest.TestCase):
    def test_sigkill_under_load_keeps_a_verifying_chain_and_every_acknowledged_record(self):
        server = Server(extra_args=["--kv-listen", "off"]).start()
        try:
            s3 = server.boto3_client()
            b = unique_name("crash")
            s3.create_bucket(Bucket=b)
            acked, lock, stop = [], threading.Lock(), threading.Event()

            def writer(n):
                c = server.boto3_client()
                i = 0
                while not stop.is_set():
                    try:
                        r = c.put_object(Bucket=b, Key=f"w{n}/{i}", Body=b"v" * 4096)
                    except Exception:  # the server is gone
                        return
                    with lock:
                        acked.append(request_id(r))
                    i += 1

            threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
            for t in threads:
                t.start()
            time.sleep(3 * harness.SANITIZER_SLOWDOWN)
            server.kill()  # SIGKILL, mid-load
            stop.set()
            for t in threads:
                t.join()
            self.assertGreater(len(acked), 20)
            server.start()
            status, doc = harness.admin(server, "GET", "audit-verify")
            self.assertEqual(status, 200)
            self.assertTrue(doc["ok"], doc)
            have = {r["request_id"] for r in query(server, bucket=b)}
            missing = [rid for rid in acked if rid not in have]
            self.assertEqual(missing, [], f"{len(missing)} acknowledged PUTs have no record")
            # The trail goes on after the crash and chains what came before.
            s3.put_object(Bucket=b, Key="after", Body=b"x")
            status, doc = harness.admin(server, "POST", "audit-checkpoint")
            self.assertEqual(status, 200)
            status, doc = harness.admin(server, "GET", "audit-verify")
            self.assertTrue(doc["ok"], doc)
            self.assertEqual(doc["unsealed"], 0)
            self.assertGreaterEqual(doc["records"], len(acked))
        finally:
            server.stop()
            server.cleanup()


class AuditExportTest(unittest.TestCase):
    """--audit-bucket: sealed segments become objects in an Object-Lock bucket that any S3
    client reads, COMPLIANCE-retained, checked by verify; replacing one is caught."""

    def test_segments_are_locked_objects_that_verify_and_a_replaced_one_is_named(self):
        server = Server(extra_args=["--kv-listen", "off", "--audit-bucket", "trail"]).start()
        try:
            s3 = server.boto3_client()
            b = unique_name("exp")
            s3.create_bucket(Bucket=b)
            rids = [request_id(s3.put_object(Bucket=b, Key=f"k{i}", Body=b"x")) for i in range(3)]
            status, doc = harness.admin(server, "POST", "audit-checkpoint")
            self.assertEqual(status, 200, doc)
            keys = [o["Key"] for o in s3.list_objects_v2(Bucket="trail").get("Contents", [])]
            self.assertEqual(len(keys), 1, keys)
            lines = s3.get_object(Bucket="trail", Key=keys[0])["Body"].read().decode().splitlines()
            parsed = [json.loads(line) for line in lines]
            self.assertEqual(parsed[0]["segment"], 1)
            self.assertEqual(parsed[0]["first"], 1)
            self.assertIn("checkpoint", parsed[-1])
            exported = {p["record"]["request_id"] for p in parsed[1:-1] if "record" in p}
            for rid in rids:
                self.assertIn(rid, exported)
            ret = s3.get_object_retention(Bucket="trail", Key=keys[0])["Retention"]
            self.assertEqual(ret["Mode"], "COMPLIANCE")
            version = s3.head_object(Bucket="trail", Key=keys[0])["VersionId"]
            with self.assertRaises(botocore.exceptions.ClientError) as e:
                s3.delete_object(Bucket="trail", Key=keys[0], VersionId=version)
            self.assertEqual(e.exception.response["Error"]["Code"], "AccessDenied")
            # More records, a restart (the stop exports the rest): contiguous segments.
            s3.put_object(Bucket=b, Key="more", Body=b"y")
            server.stop()
            server.start()
            status, doc = harness.admin(server, "GET", "audit-verify")
            self.assertTrue(doc["ok"], doc)
            self.assertEqual(doc["segments"], 2)
            self.assertEqual(doc["export_bucket"], "trail")
            # A forged newer version of a sealed segment.
            forged = "\n".join(lines[:1] + lines[2:]) + "\n"
            s3.put_object(Bucket="trail", Key=keys[0], Body=forged.encode())
            status, doc = harness.admin(server, "GET", "audit-verify")
            self.assertFalse(doc["ok"], doc)
            self.assertIn(keys[0], doc["detail"])
            out = cli(server, "verify")
            self.assertEqual(out.returncode, 1, out.stdout)
            self.assertIn("DAMAGED", out.stdout)
        finally:
            server.stop()
            server.cleanup()


class AuditOffTest(unittest.TestCase):
    def test_audit_off_answers_the_admin_actions_with_a_clear_error(self):
        server = Server(extra_args=["--kv-listen", "off", "--audit", "off"]).start()
        try:
            status, doc = harness.admin(server, "GET", "audit-verify")
            self.assertEqual(status, 409)
            self.assertIn("--audit off", doc.get("error", ""))
        finally:
            server.stop()
            server.cleanup()


if __name__ == "__main__":
    unittest.main()

"""Tiers behind one namespace (issue 14, docs/tiers.md): storage classes put data in their
pool, lifecycle rules move and expire it on a fast clock (one lifecycle day = 2 s), the
configuration API answers as AWS does, Object Lock wins, and a server killed while
objects move loses and duplicates nothing. Real boto3 and aws cli against a real server
started with a four-pool TOML config."""
import hashlib
import json
import os
import subprocess
import time
import unittest

import harness
from harness import Server, ServerTestCase, unique_name  # noqa: F401

DAY_S = 2

CONFIG = """
[[pool]]
name = "gpu"
media = "gpu-direct"
path = "pools/gpu"
[[pool]]
name = "hot"
media = "hot"
path = "pools/hot"
[[pool]]
name = "warm"
media = "warm"
path = "pools/warm"
[[pool]]
name = "cold"
media = "cold"
path = "pools/cold"
"""


def write_config(text):
    return harness.write_config(text, prefix="strata-tiers-")


def tier_args(config):
    return ["--config", config, "--lifecycle-day-seconds", str(DAY_S),
            "--lifecycle-interval-s", "1", "--kv-listen", "off"]


def files_in(data_dir, pool):
    out = []
    for dirpath, _, names in os.walk(os.path.join(data_dir, "pools", pool)):
        out += [os.path.join(dirpath, n) for n in names if not n.endswith(".tmp")]
    return out


def md5(b):
    return hashlib.md5(b).hexdigest()


class TieredServerCase(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        cls.config = write_config(CONFIG)
        cls.server_kwargs = {"extra_args": tier_args(cls.config)}
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        os.unlink(cls.config)

    def wait_for(self, what, predicate, timeout=12 * DAY_S):
        harness.wait_for(self, self.server, what, predicate, timeout)

    def storage_class(self, bucket, key):
        return self.s3.head_object(Bucket=bucket, Key=key).get("StorageClass", "STANDARD")


class StorageClassTest(TieredServerCase):
    def test_each_class_writes_to_its_pool(self):
        b = self.make_bucket("sc")
        body = os.urandom(300 << 10)  # past the inline limit: a data file
        expect = {"STANDARD": "hot", "STANDARD_IA": "warm", "GLACIER_IR": "warm",
                  "EXPRESS_ONEZONE": "gpu", "DEEP_ARCHIVE": "cold"}
        before = {p: len(files_in(self.server.data_dir, p)) for p in ("gpu", "hot", "warm", "cold")}
        for cls, pool in expect.items():
            self.put(b, "k-" + cls, body, StorageClass=cls)
            after = len(files_in(self.server.data_dir, pool))
            self.assertEqual(after, before[pool] + 1, f"{cls} -> {pool}")
            before[pool] = after
            h = self.s3.head_object(Bucket=b, Key="k-" + cls)
            if cls == "STANDARD":
                self.assertNotIn("StorageClass", h)  # AWS omits it for STANDARD
            else:
                self.assertEqual(h["StorageClass"], cls)
            if pool == "cold":  # archived: read only after a restore (RestoreTest)
                self.assertS3Error(self.s3.get_object, "InvalidObjectState", 403, Bucket=b,
                                   Key="k-" + cls)
            else:
                self.assertEqual(md5(self.get_body(b, "k-" + cls)), md5(body))
        listed = {o["Key"]: o["StorageClass"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]}
        self.assertEqual(listed["k-STANDARD_IA"], "STANDARD_IA")
        self.assertEqual(listed["k-STANDARD"], "STANDARD")
        v1 = {o["Key"]: o["StorageClass"] for o in self.s3.list_objects(Bucket=b)["Contents"]}
        self.assertEqual(v1["k-DEEP_ARCHIVE"], "DEEP_ARCHIVE")

    def test_unknown_class_is_refused_raw(self):
        import harness
        b = self.make_bucket("scr")
        status, headers, body = harness.signed_request(
            self.server, "PUT", f"/{b}/k", body=b"x", headers={"x-amz-storage-class": "TAPE"})
        self.assertEqual(status, 400)
        self.assertIn(b"<Code>InvalidStorageClass</Code>", body)

    def test_multipart_parts_go_to_the_upload_class_pool(self):
        b = self.make_bucket("mp")
        up = self.s3.create_multipart_upload(Bucket=b, Key="big", StorageClass="STANDARD_IA")
        warm_before = len(files_in(self.server.data_dir, "warm"))
        part = os.urandom(5 << 20)
        etag = self.s3.upload_part(Bucket=b, Key="big", UploadId=up["UploadId"], PartNumber=1,
                                   Body=part)["ETag"]
        self.assertEqual(len(files_in(self.server.data_dir, "warm")), warm_before + 1)
        self.assertEqual(self.s3.list_parts(Bucket=b, Key="big", UploadId=up["UploadId"])
                         ["StorageClass"], "STANDARD_IA")
        self.s3.complete_multipart_upload(Bucket=b, Key="big", UploadId=up["UploadId"],
                                          MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
        self.assertEqual(self.storage_class(b, "big"), "STANDARD_IA")
        self.assertEqual(md5(self.get_body(b, "big")), md5(part))

    def test_copy_onto_itself_with_a_new_class_moves_the_data(self):
        b = self.make_bucket("cp")
        body = os.urandom(400 << 10)
        self.put(b, "k", body)
        hot = set(files_in(self.server.data_dir, "hot"))
        warm = set(files_in(self.server.data_dir, "warm"))
        self.s3.copy_object(Bucket=b, Key="k", CopySource={"Bucket": b, "Key": "k"},
                            StorageClass="STANDARD_IA")
        self.assertEqual(self.storage_class(b, "k"), "STANDARD_IA")
        self.assertEqual(len(set(files_in(self.server.data_dir, "warm")) - warm), 1)
        self.assertEqual(len(hot - set(files_in(self.server.data_dir, "hot"))), 1,
                         "the hot copy is gone")
        self.assertEqual(md5(self.get_body(b, "k")), md5(body))


class AdminTiersTest(TieredServerCase):
    def test_admin_tiers_reports_pools_and_classes(self):
        import harness
        b = self.make_bucket("adm")
        self.put(b, "h1", b"x" * 1000)
        self.put(b, "w1", b"y" * (300 << 10), StorageClass="STANDARD_IA")
        self.put(b, "w2", b"z" * 10, StorageClass="GLACIER_IR")
        status, doc = harness.admin(self.server, "GET", "tiers")
        self.assertEqual(status, 200, doc)
        pools = {p["name"]: p for p in doc["pools"]}
        self.assertEqual(set(pools), {"gpu", "hot", "warm", "cold"})
        self.assertTrue(pools["hot"]["primary"])
        self.assertEqual(doc["pools"][0]["name"], "hot")  # STANDARD's pool first
        self.assertEqual(pools["warm"]["media"], "warm")
        self.assertEqual(pools["warm"]["layout"], "1+0 (one directory)")
        self.assertGreater(pools["warm"]["capacity_bytes"], 0)
        self.assertGreaterEqual(pools["warm"]["by_class"]["STANDARD_IA"]["objects"], 1)
        self.assertGreaterEqual(pools["warm"]["by_class"]["GLACIER_IR"]["bytes"], 10)
        self.assertGreaterEqual(pools["hot"]["by_class"]["STANDARD"]["objects"], 1)
        self.assertEqual(doc["storage_classes"]["DEEP_ARCHIVE"], "cold")
        self.assertEqual(doc["storage_classes"]["EXPRESS_ONEZONE"], "gpu")
        env = dict(os.environ, STRATA_ROOT_USER=harness.ACCESS_KEY,
                   STRATA_ROOT_PASSWORD=harness.SECRET_KEY)
        out = subprocess.run([self.server.bin, "admin", "tiers", "--endpoint", self.server.endpoint],
                             capture_output=True, text=True, env=env, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("warm", out.stdout)
        self.assertIn("STANDARD_IA", out.stdout)
        self.assertIn("DEEP_ARCHIVE->cold", out.stdout)


class ExampleConfigTest(unittest.TestCase):
    def test_shipped_example_starts_four_tiers(self):
        import harness
        example = os.path.join(os.path.dirname(__file__), "../../docs/examples/tiers.toml")
        server = Server(extra_args=["--config", example, "--kv-listen", "off"]).start()
        try:
            status, doc = harness.admin(server, "GET", "tiers")
            self.assertEqual(status, 200, doc)
            self.assertEqual([p["media"] for p in doc["pools"]], ["hot", "gpu-direct", "warm", "cold"])
            for pool in ("gpu", "warm", "cold"):
                self.assertTrue(os.path.isdir(os.path.join(server.data_dir, "pools", pool)), pool)
            self.assertEqual(doc["pools"][0]["drives"], [server.data_dir + "/."])
        finally:
            server.cleanup()


class LifecycleConfigTest(TieredServerCase):
    RULES = [{"ID": "warm-then-expire", "Status": "Enabled", "Filter": {"Prefix": "logs/"},
              "Transitions": [{"Days": 30, "StorageClass": "STANDARD_IA"},
                              {"Days": 90, "StorageClass": "GLACIER"}],
              "Expiration": {"Days": 365}},
             {"ID": "tags", "Status": "Disabled",
              "Filter": {"And": {"Prefix": "t/", "Tags": [{"Key": "a", "Value": "1"}],
                                 "ObjectSizeGreaterThan": 1024}},
              "NoncurrentVersionExpiration": {"NoncurrentDays": 7, "NewerNoncurrentVersions": 2}},
             {"ID": "mpu", "Status": "Enabled", "Filter": {"Prefix": ""},
              "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 3}}]

    def test_put_get_delete(self):
        b = self.make_bucket("lc")
        self.assertS3Error(self.s3.get_bucket_lifecycle_configuration, "NoSuchLifecycleConfiguration",
                           404, Bucket=b)
        self.s3.put_bucket_lifecycle_configuration(Bucket=b,
                                                   LifecycleConfiguration={"Rules": self.RULES})
        got = self.s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"]
        self.assertEqual([r["ID"] for r in got], ["warm-then-expire", "tags", "mpu"])
        self.assertEqual(got[0]["Transitions"][1], {"Days": 90, "StorageClass": "GLACIER"})
        self.assertEqual(got[1]["Filter"]["And"]["ObjectSizeGreaterThan"], 1024)
        self.assertEqual(got[1]["NoncurrentVersionExpiration"],
                         {"NoncurrentDays": 7, "NewerNoncurrentVersions": 2})
        self.assertEqual(got[2]["AbortIncompleteMultipartUpload"], {"DaysAfterInitiation": 3})
        self.s3.delete_bucket_lifecycle(Bucket=b)
        self.assertS3Error(self.s3.get_bucket_lifecycle_configuration, "NoSuchLifecycleConfiguration",
                           404, Bucket=b)
        self.assertS3Error(self.s3.get_bucket_lifecycle_configuration, "NoSuchBucket", 404,
                           Bucket=unique_name("none"))

    def test_bad_configurations_get_the_aws_errors(self):
        b = self.make_bucket("lcbad")
        put = self.s3.put_bucket_lifecycle_configuration
        both = [{"ID": "x", "Status": "Enabled", "Filter": {"Prefix": ""},
                 "Expiration": {"Days": 3, "Date": "2030-01-01T00:00:00Z"}}]
        self.assertS3Error(put, "MalformedXML", 400, Bucket=b,
                           LifecycleConfiguration={"Rules": both})
        unknown = [{"ID": "x", "Status": "Enabled", "Filter": {"Prefix": ""},
                    "Transitions": [{"Days": 1, "StorageClass": "TAPE"}]}]
        self.assertS3Error(put, "InvalidArgument", 400, Bucket=b,
                           LifecycleConfiguration={"Rules": unknown})
        dup = [{"ID": "x", "Status": "Enabled", "Filter": {"Prefix": "a"}, "Expiration": {"Days": 1}},
               {"ID": "x", "Status": "Enabled", "Filter": {"Prefix": "b"}, "Expiration": {"Days": 1}}]
        self.assertS3Error(put, "InvalidArgument", 400, Bucket=b,
                           LifecycleConfiguration={"Rules": dup})
        zero = [{"ID": "x", "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 0}}]
        self.assertS3Error(put, "InvalidArgument", 400, Bucket=b,
                           LifecycleConfiguration={"Rules": zero})
        noaction = [{"ID": "x", "Status": "Enabled", "Filter": {"Prefix": ""}}]
        self.assertS3Error(put, "InvalidRequest", 400, Bucket=b,
                           LifecycleConfiguration={"Rules": noaction})
        ia_early = [{"ID": "x", "Status": "Enabled", "Filter": {"Prefix": ""},
                     "Transitions": [{"Days": 1, "StorageClass": "STANDARD_IA"}]}]
        self.assertS3Error(put, "InvalidArgument", 400, Bucket=b,
                           LifecycleConfiguration={"Rules": ia_early})
        # Raw bodies: not XML, and no Content-MD5 (AWS requires one).
        import harness
        import base64
        for doc in (b"not xml", b"<LifecycleConfiguration><Rule><Bogus/></Rule></LifecycleConfiguration>"):
            status, _, body = harness.signed_request(
                self.server, "PUT", f"/{b}", query="lifecycle", body=doc,
                headers={"Content-MD5": base64.b64encode(hashlib.md5(doc).digest()).decode()})
            self.assertEqual(status, 400, body)
            self.assertIn(b"<Code>MalformedXML</Code>", body)
        status, _, body = harness.signed_request(self.server, "PUT", f"/{b}", query="lifecycle",
                                                 body=b"<LifecycleConfiguration/>")
        self.assertEqual(status, 400, body)
        self.assertS3Error(self.s3.get_bucket_lifecycle_configuration, "NoSuchLifecycleConfiguration",
                           404, Bucket=b)

    def test_aws_cli_and_expiration_header(self):
        b = self.make_bucket("lccli")
        doc = {"Rules": [{"ID": "exp", "Status": "Enabled", "Filter": {"Prefix": "tmp/"},
                          "Expiration": {"Days": 5}}]}
        self.server.aws(self.home, "s3api", "put-bucket-lifecycle-configuration", "--bucket", b,
                        "--lifecycle-configuration", json.dumps(doc))
        out = self.server.aws(self.home, "s3api", "get-bucket-lifecycle-configuration",
                              "--bucket", b)
        self.assertEqual(json.loads(out.stdout)["Rules"][0]["ID"], "exp")
        r = self.put(b, "tmp/a", b"x")
        self.assertIn('rule-id="exp"', r["Expiration"])
        self.assertIn("expiry-date=", r["Expiration"])
        self.assertIn('rule-id="exp"', self.s3.head_object(Bucket=b, Key="tmp/a")["Expiration"])
        self.assertNotIn("Expiration", self.put(b, "keep", b"y"))
        self.assertNotIn("Expiration", self.s3.head_object(Bucket=b, Key="keep"))


class LifecycleActionsTest(TieredServerCase):
    def test_hot_warm_cold_then_expire(self):
        b = self.make_bucket("flow")
        bodies = {f"ckpt/{i}": os.urandom((200 + i) << 10) for i in range(4)}
        for k, v in bodies.items():
            self.put(b, k, v)
        self.put(b, "other", b"o" * (300 << 10))
        self.s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
            {"ID": "tiers", "Status": "Enabled", "Filter": {"Prefix": "ckpt/"},
             "Transitions": [{"Days": 1, "StorageClass": "GLACIER_IR"},
                             {"Days": 3, "StorageClass": "DEEP_ARCHIVE"}],
             "Expiration": {"Days": 6}}]})
        self.wait_for("warm", lambda: all(self.storage_class(b, k) in ("GLACIER_IR", "DEEP_ARCHIVE")
                                          for k in bodies))
        read_warm = 0
        for k, v in bodies.items():
            try:
                self.assertEqual(md5(self.get_body(b, k)), md5(v), k)
                read_warm += 1
            except self.s3.exceptions.InvalidObjectState:
                # A slow machine: it moved on to the cold tier meanwhile (read after restore).
                self.assertEqual(self.storage_class(b, k), "DEEP_ARCHIVE")
        self.assertGreater(read_warm, 0, "no object was read in the warm tier")
        self.wait_for("cold", lambda: all(self.storage_class(b, k) == "DEEP_ARCHIVE" for k in bodies))
        for k, v in bodies.items():
            h = self.s3.head_object(Bucket=b, Key=k)
            self.assertEqual(h["ETag"], '"' + md5(v) + '"')  # unchanged
            # In the cold tier: archived until restored, then the same bytes.
            self.assertS3Error(self.s3.get_object, "InvalidObjectState", 403, Bucket=b, Key=k)
            self.s3.restore_object(Bucket=b, Key=k, RestoreRequest={"Days": 1})
        self.assertGreaterEqual(len(files_in(self.server.data_dir, "cold")), 4)
        self.wait_for("restores", lambda: all(
            'ongoing-request="false"' in self.s3.head_object(Bucket=b, Key=k).get("Restore", "")
            for k in bodies))
        for k, v in bodies.items():
            self.assertEqual(md5(self.get_body(b, k)), md5(v), k)

        def expired():
            keys = [o["Key"] for o in self.s3.list_objects_v2(Bucket=b).get("Contents", [])]
            return keys == ["other"]
        self.wait_for("expiration", expired)
        self.assertEqual(self.storage_class(b, "other"), "STANDARD")

    def test_noncurrent_versions_markers_and_uploads(self):
        b = self.make_bucket("nc")
        self.s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
        self.put(b, "k", b"v1")
        self.put(b, "k", b"v2")
        self.put(b, "gone", b"g")
        self.s3.delete_object(Bucket=b, Key="gone")  # a marker over one version
        up = self.s3.create_multipart_upload(Bucket=b, Key="stale")["UploadId"]
        self.s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
            {"ID": "nc", "Status": "Enabled", "Filter": {"Prefix": ""},
             "NoncurrentVersionExpiration": {"NoncurrentDays": 1},
             "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}},
            {"ID": "markers", "Status": "Enabled", "Filter": {"Prefix": ""},
             "Expiration": {"ExpiredObjectDeleteMarker": True}}]})

        def versions(key):
            r = self.s3.list_object_versions(Bucket=b, Prefix=key)
            return len(r.get("Versions", [])) + len(r.get("DeleteMarkers", []))
        self.wait_for("noncurrent expiry", lambda: versions("k") == 1 and versions("gone") == 0)
        self.assertEqual(self.get_body(b, "k"), b"v2")
        self.wait_for("upload abort",
                      lambda: not self.s3.list_multipart_uploads(Bucket=b).get("Uploads"))
        self.assertS3Error(self.s3.list_parts, "NoSuchUpload", 404, Bucket=b, Key="stale",
                           UploadId=up)

    def test_locked_versions_survive_every_rule(self):
        b = self.bucket_name("lock")
        self.s3.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)
        self.s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled",
            "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 1}}})
        body = os.urandom(300 << 10)
        v1 = self.put(b, "k", body)["VersionId"]
        self.put(b, "k", b"second")
        self.s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
            {"ID": "all", "Status": "Enabled", "Filter": {"Prefix": ""},
             "NoncurrentVersionTransitions": [{"NoncurrentDays": 1, "StorageClass": "GLACIER_IR"}],
             "NoncurrentVersionExpiration": {"NoncurrentDays": 2},
             "Expiration": {"Days": 1}}]})
        time.sleep(4 * DAY_S)
        r = self.s3.list_object_versions(Bucket=b)
        ids = [v["VersionId"] for v in r.get("Versions", [])]
        self.assertIn(v1, ids, "a locked version is never deleted")
        got = self.s3.get_object(Bucket=b, Key="k", VersionId=v1)
        self.assertEqual(md5(got["Body"].read()), md5(body))
        self.assertEqual(got["ObjectLockMode"], "COMPLIANCE")
        # The transition (which keeps the lock) may have moved it; the lock is unchanged.
        self.assertIn(got.get("StorageClass", "STANDARD"), ("STANDARD", "GLACIER_IR"))


class RestoreTest(TieredServerCase):
    def test_cold_objects_need_a_restore(self):
        b = self.make_bucket("rst")
        body = os.urandom(350 << 10)
        self.put(b, "frozen", body, StorageClass="DEEP_ARCHIVE")
        self.put(b, "tiny", b"small", StorageClass="GLACIER")  # inline in the metadata
        self.put(b, "warm", b"w" * 1000, StorageClass="STANDARD_IA")
        h = self.s3.head_object(Bucket=b, Key="frozen")  # HEAD works, and says the class
        self.assertEqual(h["StorageClass"], "DEEP_ARCHIVE")
        self.assertNotIn("Restore", h)
        self.assertS3Error(self.s3.get_object, "InvalidObjectState", 403, Bucket=b, Key="frozen")
        self.assertS3Error(self.s3.get_object, "InvalidObjectState", 403, Bucket=b, Key="tiny")
        self.assertS3Error(self.s3.copy_object, "InvalidObjectState", 403, Bucket=b, Key="copy",
                           CopySource={"Bucket": b, "Key": "frozen"})
        # Only cold objects are restored.
        self.assertS3Error(self.s3.restore_object, "InvalidObjectState", 403, Bucket=b, Key="warm",
                           RestoreRequest={"Days": 1})
        self.assertS3Error(self.s3.restore_object, "NoSuchKey", 404, Bucket=b, Key="absent",
                           RestoreRequest={"Days": 1})
        r = self.s3.restore_object(Bucket=b, Key="frozen", RestoreRequest={
            "Days": 2, "GlacierJobParameters": {"Tier": "Standard"}})
        self.assertIn(r["ResponseMetadata"]["HTTPStatusCode"], (202,))
        self.s3.restore_object(Bucket=b, Key="tiny", RestoreRequest={"Days": 2})

        def restored(key):
            return 'ongoing-request="false"' in self.s3.head_object(Bucket=b, Key=key).get("Restore", "")
        self.wait_for("restore", lambda: restored("frozen") and restored("tiny"))
        self.assertIn("expiry-date=", self.s3.head_object(Bucket=b, Key="frozen")["Restore"])
        self.assertEqual(md5(self.get_body(b, "frozen")), md5(body))
        got = self.s3.get_object(Bucket=b, Key="frozen", Range="bytes=100-199")
        self.assertEqual(got["Body"].read(), body[100:200])
        self.assertEqual(got["StorageClass"], "DEEP_ARCHIVE")  # still the cold object
        self.assertEqual(self.get_body(b, "tiny"), b"small")
        # Restoring a restored object extends it: 200.
        again = self.s3.restore_object(Bucket=b, Key="frozen", RestoreRequest={"Days": 1})
        self.assertEqual(again["ResponseMetadata"]["HTTPStatusCode"], 200)
        # After its days the copy goes, and the object is archived again.
        self.wait_for("restore expiry", lambda: "Restore" not in
                      self.s3.head_object(Bucket=b, Key="frozen"))
        self.assertS3Error(self.s3.get_object, "InvalidObjectState", 403, Bucket=b, Key="frozen")

    def test_restore_in_progress_and_bad_requests(self):
        import harness
        b = self.make_bucket("rst2")
        self.put(b, "k", os.urandom(300 << 10), StorageClass="GLACIER")
        for doc, code in ((b"<RestoreRequest><Days>0</Days></RestoreRequest>", b"InvalidArgument"),
                          (b"<RestoreRequest><Days>x</Days></RestoreRequest>", b"InvalidArgument"),
                          (b"not xml", b"MalformedXML"),
                          (b"<RestoreRequest><Days>1</Days><GlacierJobParameters><Tier>Fast</Tier>"
                           b"</GlacierJobParameters></RestoreRequest>", b"MalformedXML")):
            r = harness.signed_request(self.server, "POST", f"/{b}/k", query="restore", body=doc)
            self.assertEqual(r.status, 400, r.body)
            self.assertIn(b"<Code>" + code + b"</Code>", r.body)
        # Two at once: the second sees the first in progress (409) unless it already finished.
        doc = b"<RestoreRequest><Days>1</Days></RestoreRequest>"
        first = harness.signed_request(self.server, "POST", f"/{b}/k", query="restore", body=doc)
        self.assertEqual(first.status, 202, first.body)
        second = harness.signed_request(self.server, "POST", f"/{b}/k", query="restore", body=doc)
        self.assertIn(second.status, (409, 200), second.body)
        if second.status == 409:
            self.assertIn(b"RestoreAlreadyInProgress", second.body)


class TransitionCrashTest(unittest.TestCase):
    def test_sigkill_while_objects_move(self):
        config = write_config(CONFIG)
        server = Server(extra_args=tier_args(config) + ["--lifecycle-rate", "20"])
        server.start()
        try:
            s3 = server.boto3_client()
            b = unique_name("crash")
            s3.create_bucket(Bucket=b)
            bodies = {f"o{i:03d}": os.urandom((150 + i) << 10) for i in range(60)}
            for k, v in bodies.items():
                s3.put_object(Bucket=b, Key=k, Body=v)
            s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
                {"ID": "warm", "Status": "Enabled", "Filter": {"Prefix": ""},
                 "Transitions": [{"Days": 1, "StorageClass": "GLACIER_IR"}]}]})

            def moved():
                return sum(1 for o in s3.list_objects_v2(Bucket=b)["Contents"]
                           if o["StorageClass"] == "GLACIER_IR")
            deadline = time.time() + 30
            while time.time() < deadline and moved() < 5:
                time.sleep(0.05)
            n = moved()
            self.assertGreater(n, 0)
            self.assertLess(n, len(bodies), "killed while objects were still moving")
            server.kill()
            server.start()
            s3 = server.boto3_client()
            deadline = time.time() + 60
            while time.time() < deadline and moved() < len(bodies):
                time.sleep(0.2)
            self.assertEqual(moved(), len(bodies))
            for k, v in bodies.items():
                self.assertEqual(md5(s3.get_object(Bucket=b, Key=k)["Body"].read()), md5(v), k)
            # Exactly one copy of each: no orphan left in hot, none doubled in warm.
            server.stop()
            server.start()  # the start-up sweep has run once more
            self.assertEqual(len(files_in(server.data_dir, "hot")), 0)
            self.assertEqual(len(files_in(server.data_dir, "warm")), len(bodies))
        finally:
            server.cleanup()
            os.unlink(config)


class ConfigErrorTest(unittest.TestCase):
    def start_fails(self, text, message):
        harness.assert_start_fails(self, text, message, returncode=2)

    def test_unknown_pool_and_overlapping_drives(self):
        self.start_fails(CONFIG + '[storage_classes]\nGLACIER = "tape"\n', "no pool of that name")
        self.start_fails(CONFIG + '[[pool]]\nname = "x"\nmedia = "warm"\npath = "pools/hot"\n',
                         "overlaps a drive of pool 'hot'")
        self.start_fails('[[pool]]\nname = "x"\nmedia = "hot"\npath = "p"\nspeed = 3\n',
                         "unknown key")


if __name__ == "__main__":
    unittest.main()

"""The cold tier as a bucket of another S3 endpoint (issue 14, docs/tiers.md): a second
strata server plays the remote archive. Objects of the cold classes are written there as
ordinary objects under the pool's prefix (the remote side lists them), lifecycle moves data
hot -> warm -> remote cold and expires it there, restores bring it back, and the remote
endpoint going away mid-transition loses nothing: the moves fail, the data stays where it
was and readable, and they are retried once the endpoint is back. Real boto3 against two
real servers; one lifecycle day = 2 s."""
import hashlib
import os
import time
import unittest

import harness
from harness import Server, unique_name

DAY_S = 2
ARCHIVE = "archive"
PREFIX = "site-a/"


def md5(b):
    return hashlib.md5(b).hexdigest()


def config_for(remote, part_size_mib=5):
    return f"""
[[pool]]
name = "hot"
media = "hot"
path = "."
[[pool]]
name = "warm"
media = "warm"
path = "pools/warm"
[[pool]]
name = "cold"
media = "cold"
[pool.remote]
endpoint = "{remote.endpoint}"
bucket = "{ARCHIVE}"
prefix = "{PREFIX}"
access_key = "{harness.ACCESS_KEY}"
secret_key = "{harness.SECRET_KEY}"
timeout_seconds = 5
part_size_mib = {part_size_mib}
"""


def write_config(text):
    return harness.write_config(text, prefix="strata-remote-")


def local_files(data_dir):
    out = []
    for dirpath, _, names in os.walk(os.path.join(data_dir, "objects")):
        out += [os.path.join(dirpath, n) for n in names if not n.endswith(".tmp")]
    for dirpath, _, names in os.walk(os.path.join(data_dir, "pools")):
        out += [os.path.join(dirpath, n) for n in names if not n.endswith(".tmp")]
    return out


class RemoteTierCase(unittest.TestCase):
    """A remote strata (the archive endpoint) and a tiered strata whose cold pool is a
    bucket there."""

    def start_pair(self, extra=()):
        self.remote = Server(extra_args=["--kv-listen", "off"]).start()
        self.addCleanup(self.remote.cleanup)
        self.rs3 = self.remote.boto3_client()
        self.rs3.create_bucket(Bucket=ARCHIVE)
        self.config = write_config(config_for(self.remote))
        self.addCleanup(os.unlink, self.config)
        self.server = Server(extra_args=["--config", self.config, "--lifecycle-day-seconds",
                                         str(DAY_S), "--lifecycle-interval-s", "1",
                                         "--kv-listen", "off", *extra]).start()
        self.addCleanup(self.server.cleanup)
        self.s3 = self.server.boto3_client()

    def wait_for(self, what, predicate, timeout=15 * DAY_S):
        harness.wait_for(self, self.server, what, predicate, timeout)

    def remote_objects(self):
        """key -> (size, metadata) of everything under the pool's prefix on the remote."""
        out = {}
        for page in self.rs3.get_paginator("list_objects_v2").paginate(Bucket=ARCHIVE,
                                                                       Prefix=PREFIX):
            for o in page.get("Contents", []):
                h = self.rs3.head_object(Bucket=ARCHIVE, Key=o["Key"])
                out[o["Key"]] = (o["Size"], h["Metadata"])
        return out

    def remote_data_of(self, key):
        """The data bytes the remote holds for a strata key (the object minus its footer)."""
        for rkey, (_, meta) in self.remote_objects().items():
            if meta.get("strata-key") == key:
                body = self.rs3.get_object(Bucket=ARCHIVE, Key=rkey)["Body"].read()
                if "strata-size" in meta:
                    return body[:int(meta["strata-size"])]
                return body
        return None

    def storage_class(self, bucket, key):
        return self.s3.head_object(Bucket=bucket, Key=key).get("StorageClass", "STANDARD")

    def restored(self, bucket, key):
        return 'ongoing-request="false"' in self.s3.head_object(Bucket=bucket, Key=key).get(
            "Restore", "")


class RemoteColdTierTest(RemoteTierCase):
    def test_cold_writes_land_remote_as_listable_objects_and_restore(self):
        self.start_pair()
        b = unique_name("rc")
        self.s3.create_bucket(Bucket=b)
        small = os.urandom(300 << 10)
        big = os.urandom((12 << 20) + 4321)  # past the 5 MiB part size: a remote multipart upload
        self.s3.put_object(Bucket=b, Key="logs/small", Body=small, StorageClass="DEEP_ARCHIVE")
        self.s3.put_object(Bucket=b, Key="ckpt/big", Body=big, StorageClass="GLACIER")
        self.assertEqual(local_files(self.server.data_dir), [])  # nothing kept locally
        remote = self.remote_objects()
        self.assertEqual(len(remote), 2, remote)
        by_key = {meta["strata-key"]: (k, size, meta) for k, (size, meta) in remote.items()}
        self.assertEqual(set(by_key), {"logs%2Fsmall", "ckpt%2Fbig"})
        # The data as the remote side holds it: the bytes, then strata's footer.
        self.assertEqual(md5(self.remote_data_of("logs%2Fsmall")), md5(small))
        self.assertEqual(md5(self.remote_data_of("ckpt%2Fbig")[:len(big)]), md5(big))
        self.assertEqual(self.rs3.list_multipart_uploads(Bucket=ARCHIVE).get("Uploads", []), [])

        # Archived: HEAD says the class, GET needs a restore.
        h = self.s3.head_object(Bucket=b, Key="ckpt/big")
        self.assertEqual(h["StorageClass"], "GLACIER")
        self.assertEqual(h["ContentLength"], len(big))
        with self.assertRaises(Exception) as e:
            self.s3.get_object(Bucket=b, Key="ckpt/big")
        self.assertIn("InvalidObjectState", str(e.exception))
        for k in ("ckpt/big", "logs/small"):
            self.s3.restore_object(Bucket=b, Key=k, RestoreRequest={"Days": 1})
        self.wait_for("restores", lambda: self.restored(b, "ckpt/big") and
                      self.restored(b, "logs/small"))
        self.assertEqual(md5(self.s3.get_object(Bucket=b, Key="ckpt/big")["Body"].read()), md5(big))
        got = self.s3.get_object(Bucket=b, Key="ckpt/big", Range="bytes=5242870-5242899")
        self.assertEqual(got["Body"].read(), big[5242870:5242900])
        self.assertEqual(self.s3.get_object(Bucket=b, Key="logs/small")["Body"].read(), small)

        # admin tiers names the remote bucket.
        status, doc = harness.admin(self.server, "GET", "tiers")
        self.assertEqual(status, 200, doc)
        cold = next(p for p in doc["pools"] if p["name"] == "cold")
        self.assertIn(f"remote bucket {self.remote.endpoint}/{ARCHIVE}/{PREFIX}", cold["layout"])
        self.assertEqual(cold["by_class"]["GLACIER"]["objects"], 1)

        # Deleting the objects removes them from the remote too.
        for k in ("ckpt/big", "logs/small"):
            self.s3.delete_object(Bucket=b, Key=k)
        self.wait_for("remote removal", lambda: self.remote_objects() == {})

    def test_lifecycle_hot_warm_remote_cold_then_expire(self):
        self.start_pair()
        b = unique_name("lc")
        self.s3.create_bucket(Bucket=b)
        bodies = {f"ckpt/{i}": os.urandom((200 + i) << 10) for i in range(4)}
        for k, v in bodies.items():
            self.s3.put_object(Bucket=b, Key=k, Body=v)
        self.s3.put_object(Bucket=b, Key="keep", Body=b"k" * (300 << 10))
        self.s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
            {"ID": "tiers", "Status": "Enabled", "Filter": {"Prefix": "ckpt/"},
             "Transitions": [{"Days": 1, "StorageClass": "GLACIER_IR"},
                             {"Days": 2, "StorageClass": "DEEP_ARCHIVE"}],
             "Expiration": {"Days": 5}}]})
        self.wait_for("warm", lambda: all(self.storage_class(b, k) in ("GLACIER_IR", "DEEP_ARCHIVE")
                                          for k in bodies))
        self.wait_for("remote cold", lambda: all(self.storage_class(b, k) == "DEEP_ARCHIVE"
                                                 for k in bodies))
        for k, v in bodies.items():
            h = self.s3.head_object(Bucket=b, Key=k)
            self.assertEqual(h["ETag"], '"' + md5(v) + '"')  # unchanged by the moves
            self.assertEqual(md5(self.remote_data_of(k.replace("/", "%2F"))), md5(v), k)
        # One local file left: "keep"'s (the moved ones are gone from hot and warm).
        self.wait_for("local copies gone", lambda: len(local_files(self.server.data_dir)) == 1)

        def expired():
            keys = [o["Key"] for o in self.s3.list_objects_v2(Bucket=b).get("Contents", [])]
            return keys == ["keep"]
        self.wait_for("expiration", expired)
        self.wait_for("remote copies removed", lambda: self.remote_objects() == {})


class RemoteAwayTest(RemoteTierCase):
    def test_endpoint_away_mid_transition_is_retried_and_nothing_is_lost(self):
        self.start_pair(extra=["--lifecycle-rate", "10"])
        b = unique_name("away")
        self.s3.create_bucket(Bucket=b)
        bodies = {f"o{i:02d}": os.urandom((150 + i) << 10) for i in range(30)}
        for k, v in bodies.items():
            self.s3.put_object(Bucket=b, Key=k, Body=v)
        self.s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
            {"ID": "archive", "Status": "Enabled", "Filter": {"Prefix": ""},
             "Transitions": [{"Days": 1, "StorageClass": "GLACIER"}]}]})

        def moved():
            return sum(1 for o in self.s3.list_objects_v2(Bucket=b)["Contents"]
                       if o["StorageClass"] == "GLACIER")
        deadline = time.time() + 30
        while time.time() < deadline and moved() < 3:
            time.sleep(0.05)
        n = moved()
        self.assertGreater(n, 0)
        self.assertLess(n, len(bodies), "the endpoint went away while objects were moving")
        self.remote.kill()
        # Moves fail while it is away; the objects stay in hot, every one readable.
        time.sleep(3 * DAY_S)
        stuck = moved()
        self.assertLess(stuck, len(bodies))
        for k, v in bodies.items():
            if self.storage_class(b, k) == "STANDARD":
                self.assertEqual(md5(self.s3.get_object(Bucket=b, Key=k)["Body"].read()), md5(v), k)
        self.assertIn(f"remote endpoint {self.remote.endpoint}/{ARCHIVE}", self.server.read_log())
        # Back: the rest is moved at a later pass.
        self.remote.start()
        self.wait_for("every object archived", lambda: moved() == len(bodies), timeout=60)
        for k, v in bodies.items():
            self.assertEqual(md5(self.remote_data_of(k)), md5(v), k)
        # Exactly one copy of each: none left locally, none doubled or half-written remotely.
        self.assertEqual(local_files(self.server.data_dir), [])
        self.assertEqual(len(self.remote_objects()), len(bodies))
        self.assertEqual(self.rs3.list_multipart_uploads(Bucket=ARCHIVE).get("Uploads", []), [])

    def test_server_starts_while_the_endpoint_is_away(self):
        self.start_pair()
        b = unique_name("start")
        self.s3.create_bucket(Bucket=b)
        body = os.urandom(400 << 10)
        self.s3.put_object(Bucket=b, Key="k", Body=body, StorageClass="GLACIER")
        self.s3.put_object(Bucket=b, Key="hot", Body=b"h" * 1000)
        self.remote.kill()
        self.server.stop()
        self.server.start()
        s3 = self.server.boto3_client()
        self.assertEqual(s3.get_object(Bucket=b, Key="hot")["Body"].read(), b"h" * 1000)
        self.assertIn("does not answer", self.server.read_log())
        # A write to the remote class fails as S3 clients expect (a 5xx they retry), not a hang.
        with self.assertRaises(Exception) as e:
            s3.put_object(Bucket=b, Key="k2", Body=b"x" * 1000, StorageClass="GLACIER")
        self.assertIn("503", str(e.exception) + repr(getattr(e.exception, "response", "")))
        self.remote.start()
        s3.restore_object(Bucket=b, Key="k", RestoreRequest={"Days": 1})
        self.s3 = s3
        self.wait_for("restore", lambda: self.restored(b, "k"))
        self.assertEqual(md5(s3.get_object(Bucket=b, Key="k")["Body"].read()), md5(body))


class RemoteConfigErrorTest(unittest.TestCase):
    def start_fails(self, text, message):
        harness.assert_start_fails(self, text, message, returncode=None)

    def test_bad_remote_pools_keep_the_server_from_starting(self):
        remote = ('[[pool]]\nname = "hot"\nmedia = "hot"\npath = "."\n'
                  '[[pool]]\nname = "cold"\nmedia = "cold"\n[pool.remote]\n'
                  'endpoint = "http://127.0.0.1:1"\nbucket = "a"\naccess_key = "A"\n'
                  'secret_key = "S"\n')
        # STANDARD's pool holds the bucket records: never remote.
        self.start_fails(remote + '[storage_classes]\nSTANDARD = "cold"\n', "cannot be a remote bucket")
        self.start_fails(remote.replace("http://127.0.0.1:1", "http://h/x"), "is not http(s)://")
        self.start_fails(remote.replace('secret_key = "S"\n', ""), "needs secret_key")


if __name__ == "__main__":
    unittest.main()

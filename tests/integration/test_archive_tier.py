"""The cold tier as a local archive pool (issue 14, docs/tiers.md): objects of the cold
classes packed into append-only segment files under POOL/segments, zstd-compressed where it
pays, archived until restored; lifecycle moves data into it; a server killed while objects
move into it loses and duplicates nothing; removed objects' space comes back with whole
segments. Real boto3 against a real server; one lifecycle day = 2 s."""
import hashlib
import os
import time
import unittest

import harness
from harness import Server, unique_name

DAY_S = 2

CONFIG = """
[[pool]]
name = "hot"
media = "hot"
path = "."
[[pool]]
name = "tape"
media = "cold"
path = "pools/tape"
[pool.archive]
segment_size_mib = 4
"""


def md5(b):
    return hashlib.md5(b).hexdigest()


def write_config(text):
    return harness.write_config(text, prefix="strata-archive-")


def segment_files(data_dir):
    d = os.path.join(data_dir, "pools", "tape", "segments")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def segment_bytes(data_dir):
    d = os.path.join(data_dir, "pools", "tape", "segments")
    return sum(os.path.getsize(os.path.join(d, n)) for n in segment_files(data_dir))


def hot_files(data_dir):
    out = []
    for dirpath, _, names in os.walk(os.path.join(data_dir, "objects")):
        out += [n for n in names if not n.endswith(".tmp")]
    return out


def text_body(n, seed):
    line = f"step {seed} loss 0.{seed:04d} lr 3e-4 tokens/s 91234 grad-norm 1.07\n".encode()
    return (line * (n // len(line) + 1))[:n]


class ArchiveTierTest(unittest.TestCase):
    def setUp(self):
        self.config = write_config(CONFIG)
        self.addCleanup(os.unlink, self.config)
        self.server = Server(extra_args=["--config", self.config, "--lifecycle-day-seconds",
                                         str(DAY_S), "--lifecycle-interval-s", "1",
                                         "--kv-listen", "off"]).start()
        self.addCleanup(self.server.cleanup)
        self.s3 = self.server.boto3_client()

    def wait_for(self, what, predicate, timeout=15 * DAY_S):
        harness.wait_for(self, self.server, what, predicate, timeout)

    def restored(self, b, k):
        return 'ongoing-request="false"' in self.s3.head_object(Bucket=b, Key=k).get("Restore", "")

    def test_archive_packs_compresses_and_restores(self):
        b = unique_name("arc")
        self.s3.create_bucket(Bucket=b)
        logs = {f"logs/{i}": text_body((300 + i) << 10, i) for i in range(6)}
        noise = os.urandom(3 << 20)
        for k, v in logs.items():
            self.s3.put_object(Bucket=b, Key=k, Body=v, StorageClass="GLACIER")
        self.s3.put_object(Bucket=b, Key="noise", Body=noise, StorageClass="DEEP_ARCHIVE")
        self.assertEqual(hot_files(self.server.data_dir), [])
        segs = segment_files(self.server.data_dir)
        self.assertGreaterEqual(len(segs), 1)
        self.assertLess(len(segs), 7, "seven objects packed into fewer segment files")
        raw = sum(len(v) for v in logs.values()) + len(noise)
        stored = segment_bytes(self.server.data_dir)
        # Text compresses; random bytes are kept as they are.
        self.assertLess(stored, len(noise) + raw // 10 + (1 << 20), (stored, raw))
        self.assertGreaterEqual(stored, len(noise))
        # The plaintext of a compressed object is not in the segments as it is.
        blob = b"".join(open(os.path.join(self.server.data_dir, "pools", "tape", "segments", n),
                             "rb").read() for n in segs)
        self.assertNotIn(logs["logs/0"][:4096], blob)

        self.assertEqual(self.s3.head_object(Bucket=b, Key="noise")["StorageClass"], "DEEP_ARCHIVE")
        with self.assertRaises(Exception) as e:
            self.s3.get_object(Bucket=b, Key="logs/1")
        self.assertIn("InvalidObjectState", str(e.exception))
        for k in list(logs) + ["noise"]:
            self.s3.restore_object(Bucket=b, Key=k, RestoreRequest={"Days": 1})
        self.wait_for("restores", lambda: all(self.restored(b, k) for k in list(logs) + ["noise"]))
        for k, v in logs.items():
            self.assertEqual(md5(self.s3.get_object(Bucket=b, Key=k)["Body"].read()), md5(v), k)
        self.assertEqual(md5(self.s3.get_object(Bucket=b, Key="noise")["Body"].read()), md5(noise))
        got = self.s3.get_object(Bucket=b, Key="noise", Range="bytes=1048570-1048589")
        self.assertEqual(got["Body"].read(), noise[1048570:1048590])

        status, doc = harness.admin(self.server, "GET", "tiers")
        self.assertEqual(status, 200, doc)
        tape = next(p for p in doc["pools"] if p["name"] == "tape")
        self.assertIn("archive segments (zstd)", tape["layout"])
        self.assertEqual(tape["by_class"]["GLACIER"]["objects"], len(logs))

        # Restart: the index comes back from the segments.
        self.server.stop()
        self.server.start()
        self.s3 = self.server.boto3_client()
        self.assertEqual(md5(self.s3.get_object(Bucket=b, Key="noise")["Body"].read()), md5(noise))

        # Delete everything: dead segments are removed (the open one stays until sealed).
        for k in list(logs) + ["noise"]:
            self.s3.delete_object(Bucket=b, Key=k)
        self.server.stop()
        self.server.start()  # every segment sealed at a restart: now all of them are dead
        self.assertLessEqual(len(segment_files(self.server.data_dir)), 1)
        self.assertLess(segment_bytes(self.server.data_dir), 4096)

    def test_lifecycle_into_the_archive_survives_sigkill(self):
        b = unique_name("arck")
        self.s3.create_bucket(Bucket=b)
        bodies = {f"o{i:03d}": text_body((150 + i) << 10, i) for i in range(40)}
        for k, v in bodies.items():
            self.s3.put_object(Bucket=b, Key=k, Body=v)
        self.s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
            {"ID": "archive", "Status": "Enabled", "Filter": {"Prefix": ""},
             "Transitions": [{"Days": 1, "StorageClass": "GLACIER"}]}]})
        self.server.stop()
        self.server.extra_args += ["--lifecycle-rate", "20"]
        self.server.start()
        s3 = self.server.boto3_client()

        def moved():
            return sum(1 for o in s3.list_objects_v2(Bucket=b)["Contents"]
                       if o["StorageClass"] == "GLACIER")
        deadline = time.time() + 30
        while time.time() < deadline and moved() < 4:
            time.sleep(0.05)
        n = moved()
        self.assertGreater(n, 0)
        self.assertLess(n, len(bodies), "killed while objects were still moving")
        self.server.kill()
        self.server.start()
        s3 = self.server.boto3_client()
        self.s3 = s3
        self.wait_for("every object archived", lambda: moved() == len(bodies), timeout=60)
        self.server.stop()
        self.server.start()  # the start-up sweep once more
        s3 = self.server.boto3_client()
        self.s3 = s3
        self.assertEqual(hot_files(self.server.data_dir), [])
        status, doc = harness.admin(self.server, "GET", "tiers")
        tape = next(p for p in doc["pools"] if p["name"] == "tape")
        self.assertEqual(tape["by_class"]["GLACIER"]["objects"], len(bodies))
        # Exactly one archived copy of each (copies whose switch the kill cut off were
        # swept), every one the same bytes.
        self.assertIn(f"archive segments (zstd): {len(bodies)} entries in", tape["layout"])
        for k in list(bodies)[:8]:
            s3.restore_object(Bucket=b, Key=k, RestoreRequest={"Days": 1})
        self.wait_for("restores", lambda: all(self.restored(b, k) for k in list(bodies)[:8]))
        for k in list(bodies)[:8]:
            self.assertEqual(md5(s3.get_object(Bucket=b, Key=k)["Body"].read()), md5(bodies[k]), k)


if __name__ == "__main__":
    unittest.main()

"""Crash safety: SIGKILL a real strata server while 16 threads write, restart
it on the same data directory, and check that

  * every acknowledged PUT reads back byte-identical (ETag = MD5, size right);
  * every attempted-but-unacknowledged PUT is either absent (404) or complete;
  * ListObjectsV2 shows exactly the keys that exist, each complete;
  * for keys overwritten concurrently, the surviving value is one of the
    versions written in full, and never one that an acknowledged later write
    had already replaced.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_crash.py -v
"""
import hashlib
import os
import random
import sys
import threading
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402

from harness import ACCESS_KEY, REGION, SECRET_KEY, Server, free_port, no_empty_expect  # noqa: E402

BUCKET = "crash"
SIZES = (0, 100, 4 * 1024, 200 * 1024, 2 * 1024 * 1024)
THREADS = 16
WRITE_SECONDS = 3.0


def body_for(name):
    """Deterministic body for `name`: size and bytes both derive from sha256(name)."""
    rnd = random.Random(hashlib.sha256(name.encode()).digest())
    return rnd.randbytes(rnd.choice(SIZES))


def client(server):
    # No retries at all: an acknowledgement means exactly one PUT succeeded.
    # no_empty_expect: 0-byte bodies are among the sizes (botocore#3755, see harness).
    return no_empty_expect(boto3.client(
        "s3", endpoint_url=server.endpoint, aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY, region_name=REGION,
        config=Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 1},
                      connect_timeout=10, read_timeout=120, max_pool_connections=4)))


def list_all(s3):
    out = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        for o in page.get("Contents", []):
            out[o["Key"]] = o
    return out


def get_or_none(s3, key):
    try:
        return s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    except ClientError as e:
        if e.response["ResponseMetadata"]["HTTPStatusCode"] == 404 and \
                e.response["Error"]["Code"] == "NoSuchKey":
            return None
        raise


class Writers:
    """Runs THREADS writer threads until the server is killed."""

    def __init__(self, server, next_write):
        # next_write(tid, n) -> (key, name); the body is body_for(name).
        self.server = server
        self.next_write = next_write
        self.killing = threading.Event()
        self.lock = threading.Lock()
        self.inflight = 0
        self.unexpected = []  # errors before the kill
        self.records = []     # dicts: key, name, start, end (None = unacknowledged)
        self.clients = [client(server) for _ in range(THREADS)]

    def _run(self, tid):
        s3 = self.clients[tid]
        n = 0
        while not self.killing.is_set():
            key, name = self.next_write(tid, n)
            n += 1
            body = body_for(name)
            rec = {"key": key, "name": name, "sha": hashlib.sha256(body).digest(),
                   "start": time.monotonic(), "end": None}
            with self.lock:
                self.records.append(rec)
                self.inflight += 1
            try:
                resp = s3.put_object(Bucket=BUCKET, Key=key, Body=body)
                ok = resp["ResponseMetadata"]["HTTPStatusCode"] == 200
                if ok and resp["ETag"] != '"%s"' % hashlib.md5(body).hexdigest():
                    with self.lock:
                        self.unexpected.append((key, "ETag %s for %s" % (resp["ETag"], name)))
                if ok:
                    rec["end"] = time.monotonic()
            except Exception as e:  # noqa: BLE001 - the kill makes every kind of error
                if not self.killing.is_set():
                    with self.lock:
                        self.unexpected.append((key, repr(e)))
                return
            finally:
                with self.lock:
                    self.inflight -= 1

    def run_then_kill(self, seconds):
        threads = [threading.Thread(target=self._run, args=(t,), daemon=True) for t in range(THREADS)]
        for t in threads:
            t.start()
        time.sleep(seconds)
        with self.lock:
            inflight = self.inflight
        self.killing.set()
        self.server.kill()
        for t in threads:
            t.join(timeout=180)
            assert not t.is_alive(), "writer thread hung after the kill"
        for c in self.clients:
            c.close()
        return inflight


class CrashTest(unittest.TestCase):
    def setUp(self):
        # boto3 clients of a killed server leave sockets for the GC to close.
        warnings.simplefilter("ignore", ResourceWarning)
        self.server = Server().start()
        self.addCleanup(self.server.cleanup)
        client(self.server).create_bucket(Bucket=BUCKET)

    def restart(self):
        self.assertFalse(self.server.alive())
        self.server.port = free_port()
        self.server.start()
        return client(self.server)

    def test_kill_during_distinct_key_writes(self):
        records = []
        for cycle in range(3):
            writers = Writers(self.server, lambda tid, n, c=cycle: (f"c{c}/t{tid:02d}/{n:05d}",) * 2)
            inflight = writers.run_then_kill(WRITE_SECONDS)
            self.assertEqual(writers.unexpected, [], "errors before the kill")
            self.assertGreater(inflight, 0, "no write was in flight at the kill")
            acked_now = [r for r in writers.records if r["end"] is not None]
            self.assertGreater(len(acked_now), 0, f"cycle {cycle}: nothing acknowledged")
            records += writers.records

            s3 = self.restart()
            self.verify_distinct(s3, records, cycle)
        # The server still takes writes after the last restart.
        s3.put_object(Bucket=BUCKET, Key="after", Body=b"after")
        self.assertEqual(s3.get_object(Bucket=BUCKET, Key="after")["Body"].read(), b"after")

    def verify_distinct(self, s3, records, cycle):
        listing = list_all(s3)
        attempted = {r["key"] for r in records}
        acked = {r["key"] for r in records if r["end"] is not None}
        present = set()
        for key in sorted(attempted):
            expected = body_for(key)
            got = get_or_none(s3, key)
            if key in acked:
                self.assertIsNotNone(got, f"cycle {cycle}: acknowledged {key} lost")
            if got is None:
                self.assertNotIn(key, listing, f"cycle {cycle}: {key} listed but GET 404")
                continue
            present.add(key)
            self.assertEqual(len(got), len(expected), f"cycle {cycle}: {key} has wrong length")
            self.assertTrue(got == expected, f"cycle {cycle}: {key} content corrupt")
            self.assertIn(key, listing, f"cycle {cycle}: {key} readable but not listed")
            self.assertEqual(listing[key]["Size"], len(expected), key)
            self.assertEqual(listing[key]["ETag"], '"%s"' % hashlib.md5(expected).hexdigest(), key)
        self.assertEqual(set(listing), present, f"cycle {cycle}: listing has keys never written")
        print(f"\n  cycle {cycle}: {len(attempted)} attempted, {len(acked)} acknowledged, "
              f"{len(present)} present", file=sys.stderr)

    def test_kill_during_overwrites_of_same_keys(self):
        keys = [f"hot/{i:02d}" for i in range(20)]
        records = []
        for cycle in range(2):
            def next_write(tid, n, c=cycle):
                key = random.Random(f"{c}/{tid}/{n}").choice(keys)
                return key, f"{key}@c{c}t{tid}n{n}"
            writers = Writers(self.server, next_write)
            inflight = writers.run_then_kill(WRITE_SECONDS)
            self.assertEqual(writers.unexpected, [], "errors before the kill")
            self.assertGreater(inflight, 0, "no write was in flight at the kill")
            self.assertGreater(sum(r["end"] is not None for r in writers.records), 0)
            records += writers.records

            s3 = self.restart()
            self.verify_versions(s3, keys, records, cycle)

    def verify_versions(self, s3, keys, records, cycle):
        listing = list_all(s3)
        self.assertLessEqual(set(listing), set(keys), "listing has keys never written")
        for key in keys:
            writes = [r for r in records if r["key"] == key]
            acked = [r for r in writes if r["end"] is not None]
            got = get_or_none(s3, key)
            if got is None:
                self.assertEqual(acked, [], f"cycle {cycle}: {key} lost although acknowledged")
                self.assertNotIn(key, listing, f"{key} listed but GET 404")
                continue
            digest = hashlib.sha256(got).digest()
            candidates = [r for r in writes if r["sha"] == digest]
            self.assertTrue(candidates, f"cycle {cycle}: {key} holds {len(got)} bytes that no "
                                        "write produced (partial or corrupt)")

            # The value must not be one that an acknowledged write had already
            # replaced: some candidate must not have ended before an acked
            # write (of another version) started.
            def not_superseded(c):
                if c["end"] is None:
                    return True
                return not any(w is not c and w["start"] > c["end"] for w in acked)
            self.assertTrue(any(not_superseded(c) for c in candidates),
                            f"cycle {cycle}: {key} rolled back to a superseded version "
                            f"{[c['name'] for c in candidates]}")
            self.assertIn(key, listing, f"{key} readable but not listed")
            self.assertEqual(listing[key]["Size"], len(got))
            self.assertEqual(listing[key]["ETag"], '"%s"' % hashlib.md5(got).hexdigest())
            head = s3.head_object(Bucket=BUCKET, Key=key)
            self.assertEqual(head["ContentLength"], len(got))
            self.assertEqual(head["ETag"], '"%s"' % hashlib.md5(got).hexdigest())


if __name__ == "__main__":
    unittest.main()

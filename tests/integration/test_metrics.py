"""Prometheus metrics and structured logs (issue 15, docs/metrics.md): `--metrics-listen`
serves the text exposition on its own listener, behind a bearer token when one is configured;
S3 requests are counted by operation and status, timed, and their bytes added up; Debian's
`promtool check metrics` accepts the output, and a real Prometheus server scrapes it. Server
log lines are JSON objects; `--access-log` adds one per request with the request id the
client saw."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

import harness
from harness import Server, free_port, unique_name

TOKEN = "metrics-token-0123456789abcdef"


def scrape(port, token=TOKEN, method="GET"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", method=method)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.headers.get("Content-Type"), r.read().decode()


def sample(text, name, **labels):
    """The value of the series `name{labels...}` (labels may be a subset), or None."""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            return float(m.group(4))
    return None


class MetricsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="strata-metrics-")
        cls.token_file = os.path.join(cls.tmp, "token")
        with open(cls.token_file, "w") as f:
            f.write(TOKEN + "\n")
        cls.mport = free_port()
        cls.server = Server(extra_args=["--metrics-listen", f"127.0.0.1:{cls.mport}",
                                        "--metrics-token-file", cls.token_file,
                                        "--kv-listen", "off"]).start()
        cls.s3 = cls.server.boto3_client()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_requests_are_counted_timed_and_sized(self):
        b = unique_name("m")
        self.s3.create_bucket(Bucket=b)
        body = os.urandom(123457)
        for i in range(3):
            self.s3.put_object(Bucket=b, Key=f"k{i}", Body=body)
        self.assertEqual(self.s3.get_object(Bucket=b, Key="k0")["Body"].read(), body)
        with self.assertRaises(Exception):
            self.s3.get_object(Bucket=b, Key="absent")
        status, ctype, text = scrape(self.mport)
        self.assertEqual(status, 200)
        self.assertEqual(ctype, "text/plain; version=0.0.4; charset=utf-8")
        self.assertGreaterEqual(sample(text, "strata_s3_requests_total", operation="PutObject",
                                       code="200"), 3)
        self.assertGreaterEqual(sample(text, "strata_s3_requests_total", operation="GetObject",
                                       code="404"), 1)
        self.assertGreaterEqual(sample(text, "strata_s3_requests_total", operation="CreateBucket",
                                       code="200"), 1)
        self.assertGreaterEqual(sample(text, "strata_s3_received_bytes_total",
                                       operation="PutObject"), 3 * len(body))
        self.assertGreaterEqual(sample(text, "strata_s3_sent_bytes_total", operation="GetObject"),
                                len(body))
        count = sample(text, "strata_s3_request_duration_seconds_count", operation="PutObject")
        self.assertGreaterEqual(count, 3)
        self.assertEqual(sample(text, "strata_s3_request_duration_seconds_bucket",
                                operation="PutObject", le="+Inf"), count)
        self.assertGreater(sample(text, "strata_s3_request_duration_seconds_sum",
                                  operation="PutObject"), 0)
        self.assertIsNotNone(sample(text, "strata_s3_requests_in_flight"))
        self.assertGreater(sample(text, "process_resident_memory_bytes"), 1 << 20)
        self.assertGreater(sample(text, "process_open_fds"), 3)
        self.assertGreater(sample(text, "strata_pool_capacity_bytes", pool=""), 0)
        self.assertIsNotNone(sample(text, "strata_lifecycle_versions_scanned_total"))
        # Counters only grow.
        _, _, later = scrape(self.mport)
        self.assertGreaterEqual(sample(later, "strata_s3_requests_total", operation="PutObject",
                                       code="200"),
                                sample(text, "strata_s3_requests_total", operation="PutObject",
                                       code="200"))

    def test_bucket_objects_and_bytes(self):
        b = unique_name("usage")
        self.s3.create_bucket(Bucket=b)

        def usage():
            text = scrape(self.mport)[2]
            return (sample(text, "strata_bucket_objects", bucket=b),
                    sample(text, "strata_bucket_bytes", bucket=b))
        self.assertEqual(usage(), (0, 0))
        self.s3.put_object(Bucket=b, Key="a", Body=b"x" * 1000)
        self.s3.put_object(Bucket=b, Key="b", Body=b"y" * 24)
        self.s3.put_object(Bucket=b, Key="a", Body=b"z" * 10)  # replaces a
        self.assertEqual(usage(), (2, 34))
        mpu = self.s3.create_multipart_upload(Bucket=b, Key="big")
        part = self.s3.upload_part(Bucket=b, Key="big", UploadId=mpu["UploadId"], PartNumber=1,
                                   Body=b"p" * (5 << 20))
        self.assertEqual(usage(), (2, 34))  # parts of an upload in progress are not objects yet
        self.s3.complete_multipart_upload(
            Bucket=b, Key="big", UploadId=mpu["UploadId"],
            MultipartUpload={"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]})
        self.assertEqual(usage(), (3, 34 + (5 << 20)))
        self.s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
        self.s3.delete_object(Bucket=b, Key="b")  # a delete marker: b's bytes are still held
        self.assertEqual(usage(), (3, 34 + (5 << 20)))
        self.s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "big", "VersionId": "null"},
                                                             {"Key": "a", "VersionId": "null"}]})
        self.assertEqual(usage(), (1, 24))
        # Gone with the bucket.
        self.s3.delete_object(Bucket=b, Key="b", VersionId="null")
        for v in self.s3.list_object_versions(Bucket=b).get("DeleteMarkers", []):
            self.s3.delete_object(Bucket=b, Key=v["Key"], VersionId=v["VersionId"])
        self.s3.delete_bucket(Bucket=b)
        self.assertEqual(usage(), (None, None))

    def test_token_path_and_method(self):
        for token in (None, "wrong"):
            with self.assertRaises(urllib.error.HTTPError) as e:
                scrape(self.mport, token=token)
            self.assertEqual(e.exception.code, 401)
            self.assertIn("Bearer", e.exception.headers.get("WWW-Authenticate", ""))
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"http://127.0.0.1:{self.mport}/other", timeout=10)
        self.assertEqual(e.exception.code, 404)
        req = urllib.request.Request(f"http://127.0.0.1:{self.mport}/metrics", method="POST",
                                     data=b"x", headers={"Authorization": "Bearer " + TOKEN})
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=10)
        self.assertEqual(e.exception.code, 405)
        # The S3 port does not serve metrics.
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"{self.server.endpoint}/metrics", timeout=10)
        self.assertNotEqual(e.exception.code, 200)

    def test_promtool_accepts_the_exposition(self):
        self.s3.list_buckets()
        _, _, text = scrape(self.mport)
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.strip() + r.stderr.strip(), "", "promtool found problems")

    def test_a_real_prometheus_scrapes_it(self):
        self.s3.list_buckets()
        prom_dir = tempfile.mkdtemp(prefix="strata-prom-")
        self.addCleanup(shutil.rmtree, prom_dir, True)
        config = os.path.join(prom_dir, "prometheus.yml")
        with open(config, "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
scrape_configs:
  - job_name: strata
    authorization:
      credentials_file: {self.token_file}
    static_configs:
      - targets: ["127.0.0.1:{self.mport}"]
""")
        web = free_port()
        log = open(os.path.join(prom_dir, "log"), "wb")
        self.addCleanup(log.close)
        prom = subprocess.Popen(["prometheus", f"--config.file={config}",
                                 f"--storage.tsdb.path={prom_dir}/data",
                                 f"--web.listen-address=127.0.0.1:{web}"],
                                stdout=log, stderr=subprocess.STDOUT)
        self.addCleanup(prom.wait)
        self.addCleanup(prom.terminate)

        def query(q):
            url = f"http://127.0.0.1:{web}/api/v1/query?" + urllib.parse.urlencode({"query": q})
            with urllib.request.urlopen(url, timeout=5) as r:
                return json.loads(r.read())["data"]["result"]
        import urllib.parse
        deadline = time.time() + 60
        up, listed = [], []
        while time.time() < deadline:
            try:
                up = query('up{job="strata"}')
                listed = query('strata_s3_requests_total{operation="ListBuckets"}')
                if up and up[0]["value"][1] == "1" and listed:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.5)
        with open(os.path.join(prom_dir, "log"), "rb") as f:
            prom_log = f.read()[-3000:].decode(errors="replace")
        self.assertTrue(up and up[0]["value"][1] == "1", f"up={up}; prometheus log: {prom_log}")
        self.assertTrue(listed, prom_log)
        self.assertGreaterEqual(float(listed[0]["value"][1]), 1)


class AccessLogTest(unittest.TestCase):
    def test_one_json_line_per_request_with_the_client_visible_request_id(self):
        server = Server(extra_args=["--access-log", "--kv-listen", "off"]).start()
        try:
            s3 = server.boto3_client()
            b = unique_name("al")
            s3.create_bucket(Bucket=b)
            put = s3.put_object(Bucket=b, Key="dir/a b.txt", Body=b"x" * 1234)
            rid = put["ResponseMetadata"]["HTTPHeaders"]["x-amz-request-id"]
            with self.assertRaises(Exception):
                s3.get_object(Bucket=b, Key="missing")
            server.stop()
            with open(server.log_path, "rb") as f:
                lines = f.read().decode().splitlines()
            records = []
            for line in lines:
                if line.startswith("{"):
                    records.append(json.loads(line))  # every log line parses
                else:  # the start-up banner on stdout, the only text
                    self.assertTrue(line.startswith(("strata S3 server", "  ")), line)
            access = [r for r in records if r.get("type") == "access"]
            by_id = {r["request_id"]: r for r in access}
            self.assertIn(rid, by_id)
            r = by_id[rid]
            self.assertEqual((r["operation"], r["method"], r["bucket"], r["key"], r["status"]),
                             ("PutObject", "PUT", b, "dir/a b.txt", 200))
            self.assertEqual(r["identity"], harness.ACCESS_KEY)
            self.assertGreaterEqual(r["bytes_in"], 1234)
            self.assertEqual(r["remote"].split(":")[0].strip("[]"), "127.0.0.1")
            self.assertGreaterEqual(r["duration_ms"], 0)
            self.assertIn("Boto3", r["user_agent"])
            missing = [a for a in access if a["key"] == "missing"]
            self.assertTrue(missing and missing[0]["status"] == 404, missing)
            events = [r for r in records if "msg" in r]
            self.assertTrue(all("time" in e and "source" in e for e in events))
        finally:
            server.cleanup()


class UsageAcrossRestartsTest(unittest.TestCase):
    """Per-bucket figures survive a clean stop and a SIGKILL (they are kept in the same
    metadata batches as the writes, docs/metrics.md)."""

    def test_usage_survives_stop_and_kill(self):
        mport = free_port()
        server = Server(extra_args=["--metrics-listen", f"127.0.0.1:{mport}",
                                    "--kv-listen", "off"]).start()
        self.addCleanup(server.cleanup)
        self.addCleanup(server.stop)
        s3 = server.boto3_client()
        b = unique_name("keep")
        s3.create_bucket(Bucket=b)

        def usage():
            text = scrape(mport, token=None)[2]
            return (sample(text, "strata_bucket_objects", bucket=b),
                    sample(text, "strata_bucket_bytes", bucket=b))
        for i in range(20):
            s3.put_object(Bucket=b, Key=f"k{i}", Body=b"d" * (100 + i))
        expected = (20, sum(100 + i for i in range(20)))
        self.assertEqual(usage(), expected)
        server.stop()
        server.start()
        self.assertEqual(usage(), expected)
        s3 = server.boto3_client()
        s3.delete_object(Bucket=b, Key="k0")
        s3.put_object(Bucket=b, Key="new", Body=b"n" * 7)
        server.kill()  # before any fold: the figures come back from the deltas
        server.start()
        self.assertEqual(usage(), (20, expected[1] - 100 + 7))


class DriveMetricsTest(unittest.TestCase):
    """The drives of an erasure-coded pool: strata_drive_state says which state each is in (1
    for that state, 0 for the others), strata_drives_online how many are up; a drive directory
    removed while the server runs reads "missing" at the next scrape."""

    def start_on_three_drives(self):
        """A 2+1 server on three fresh drives (removed when the test ends): the server,
        its metrics port, the drive directories."""
        tmp = tempfile.mkdtemp(prefix="strata-drive-metrics-")
        self.addCleanup(shutil.rmtree, tmp, True)
        drives = [os.path.join(tmp, f"d{i}") for i in range(3)]
        mport = free_port()
        server = Server(data_dir=os.path.join(tmp, "meta"),
                        extra_args=["--drives", ",".join(drives), "--ec", "2+1",
                                    "--scrub-interval-s", "0", "--kv-listen", "off",
                                    "--metrics-listen", f"127.0.0.1:{mport}"]).start()
        self.addCleanup(server.cleanup)
        return server, mport, drives

    def test_errors_count_on_their_drive(self):
        server, mport, drives = self.start_on_three_drives()
        s3 = server.boto3_client()
        b = unique_name("de")
        s3.create_bucket(Bucket=b)
        body = os.urandom(600000)
        s3.put_object(Bucket=b, Key="k", Body=body)

        def errors(drive, kind):
            return sample(scrape(mport, token=None)[2], "strata_drive_errors_total", drive=drive,
                          kind=kind)
        for d in drives:
            for kind in ("io", "corrupt", "missing", "write"):
                self.assertEqual(errors(d, kind), 0, (d, kind))
        # Bitrot in the middle of drive 1's shard of the object (its largest file; the
        # bucket marker has one too): the heal of the object meets it there.
        shards = [os.path.join(r, f) for r, _, fs in os.walk(os.path.join(drives[1], "shards"))
                  for f in fs]
        shard = max(shards, key=os.path.getsize)
        self.assertGreater(os.path.getsize(shard), 300000)
        with open(shard, "r+b") as f:
            f.seek(os.path.getsize(shard) // 2)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0x5a]))
        status, doc = harness.admin(server, "POST", "heal-object", bucket=b, key="k")
        self.assertEqual(status, 200, doc)
        self.assertGreaterEqual(errors(drives[1], "corrupt"), 1)
        self.assertEqual(errors(drives[0], "corrupt"), 0)
        self.assertEqual(errors(drives[2], "corrupt"), 0)
        self.assertEqual(s3.get_object(Bucket=b, Key="k")["Body"].read(), body)

    def test_a_removed_drive_reads_missing(self):
        server, mport, drives = self.start_on_three_drives()
        s3 = server.boto3_client()
        b = unique_name("dm")
        s3.create_bucket(Bucket=b)
        s3.put_object(Bucket=b, Key="k", Body=os.urandom(300000))
        _, _, text = scrape(mport, token=None)
        self.assertEqual(sample(text, "strata_drives", pool=""), 3)
        self.assertEqual(sample(text, "strata_drives_online", pool=""), 3)
        for pos, d in enumerate(drives):
            self.assertEqual(sample(text, "strata_drive_state", drive=d, state="online"), 1, d)
            self.assertEqual(sample(text, "strata_drive_state", drive=d, state="missing"), 0)
            self.assertEqual(sample(text, "strata_drive_state", drive=d,
                                    position=str(pos), state="faulty"), 0)
        shutil.rmtree(drives[1])
        _, _, text = scrape(mport, token=None)
        self.assertEqual(sample(text, "strata_drives_online", pool=""), 2)
        self.assertEqual(sample(text, "strata_drive_state", drive=drives[1], state="missing"), 1)
        self.assertEqual(sample(text, "strata_drive_state", drive=drives[1], state="online"), 0)
        self.assertEqual(sample(text, "strata_drive_state", drive=drives[0], state="online"), 1)
        # Still readable (2 of 3 shards), and the exposition is still valid.
        self.assertEqual(len(s3.get_object(Bucket=b, Key="k")["Body"].read()), 300000)
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()

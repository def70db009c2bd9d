"""Durability of an erasure-coded strata server (issue 4, "What proves it",
integration part): a real `strata server` on 6 drive directories (4+2).

DurabilityTest writes 1,000 objects of mixed sizes (0 B .. 64 MiB, mostly
small, with stripe/block boundaries; boto3 PUTs from 16 threads, multipart
uploads with 5 MiB parts, a few `aws s3 cp`), content derived from the key,
then, in order, on the same server:

  a. rm -rf 2 drive directories while running -> every object reads back
     identical; again after a restart with those drives missing / empty;
  b. flip bytes in 5 % of the shard files -> every GET is correct;
     `strata admin heal` rebuilds them (> 0, 0 unrecoverable, each file back
     byte for byte), a second heal rebuilds nothing;
  c. wipe a drive, heal -> the drive holds the same shard files as the
     others again; then rm -rf 2 other drives -> everything reads identical;
  d. stop, delete METADIR/meta, `strata admin rebuild-index`, start -> the
     same buckets (an empty one too), exactly the written keys, same bytes,
     ETags and sizes.

KillDuringWritesTest (e): kill -9 during 16 concurrent writers while one
drive directory is deleted midway -> every acknowledged object intact,
nothing partial.  TooFewDrivesTest (f): 3 of 6 drives deleted -> PUT is a
503 with an S3 error document, the server stays up, `strata admin drives`
exits 1 naming the bad drives.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_durability.py -v
STRATA_DURABILITY_SEED changes the random choices (drives, sizes, flipped
bytes); STRATA_KEEP_DIRS=1 keeps the drive/metadata directories.
"""
import concurrent.futures
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from botocore.exceptions import ClientError  # noqa: E402

import harness  # noqa: E402
from harness import (ACCESS_KEY, REGION, SECRET_KEY, Server, free_port,  # noqa: E402
                     no_empty_expect, parse_error, signed_request)

KiB = 1024
MiB = 1024 * KiB
PART = 5 * MiB
N_DRIVES, K, M = 6, 4, 2
STRIPE = K * MiB  # 1 MiB blocks per shard: a full stripe holds 4 MiB of object data
THREADS = 16
N_OBJECTS = 1000
SEED = int(os.environ.get("STRATA_DURABILITY_SEED", "20261130"))
KEEP = os.environ.get("STRATA_KEEP_DIRS") == "1"

HEAL_SUMMARY = re.compile(r"heal summary: (\d+) objects scanned, (\d+) shards rebuilt, "
                          r"(\d+) unrecoverable, (\d+) errors")
# Groups: pieces, buckets, object versions, delete markers, versions with
# lock settings changed after the write, replaced versions, orphan parts, unreadable.
REBUILD_DONE = re.compile(r"rebuild-index done: (\d+) pieces scanned, (\d+) buckets, (\d+) object "
                          r"versions restored \((\d+) delete markers, (\d+) with lock settings changed "
                          r"after the write\), (\d+) replaced versions and (\d+) orphan parts to "
                          r"collect, (\d+) unreadable")


# ---------------------------------------------------------------- helpers

def body_for(key, size):
    """Deterministic bytes for `key`."""
    return random.Random(hashlib.sha256(key.encode()).digest()).randbytes(size)


def md5_hex(b):
    return hashlib.md5(b).hexdigest()


def multipart_etag(parts):
    return '"%s-%d"' % (hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest(),
                        len(parts))


def marker_id(bucket):
    """Data id of a bucket's marker on the drives (ObjectEngine::BucketMarkerId)."""
    return hashlib.sha256(bucket.encode()).hexdigest()[:32]


def make_client(server, pool=THREADS * 2):
    return no_empty_expect(boto3.client(
        "s3", endpoint_url=server.endpoint, aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY, region_name=REGION,
        config=Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 1},
                      connect_timeout=10, read_timeout=120, max_pool_connections=pool)))


def admin(server, *args, timeout=600):
    """Runs `strata admin ARGS --endpoint URL` with the root credentials."""
    env = dict(os.environ, STRATA_ROOT_USER=ACCESS_KEY, STRATA_ROOT_PASSWORD=SECRET_KEY)
    return subprocess.run([server.bin, "admin", *args, "--endpoint", server.endpoint],
                          capture_output=True, text=True, env=env, timeout=timeout)


def shard_names(drive):
    """{file name} of the finished shard files on a drive (DRIVE/shards/xx/<id>)."""
    out = set()
    root = os.path.join(drive, "shards")
    if not os.path.isdir(root):
        return out
    for sub in os.listdir(root):
        d = os.path.join(root, sub)
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            if "." not in name:
                out.add(name)
    return out


def temp_files(drive):
    """Shard files still being written or rebuilt (*.part, *.heal)."""
    out = []
    for d, _, files in os.walk(os.path.join(drive, "shards")):
        out += [os.path.join(d, f) for f in files if f.endswith((".part", ".heal"))]
    return out


def shard_path(drive, name):
    return os.path.join(drive, "shards", name[:2], name)


def sha256_path(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def remove_drive(path):
    """rm -rf of a drive directory, atomic as seen by the server (which may be
    writing into it): rename it away, then delete it."""
    gone = path + ".removed"
    os.rename(path, gone)
    shutil.rmtree(gone)


def wipe_drive_contents(path):
    for name in os.listdir(path):
        p = os.path.join(path, name)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p)
        else:
            os.remove(p)
    assert os.listdir(path) == []


def drive_args(drives, scrub="0"):
    return ["--drives", ",".join(drives), "--ec", f"{K}+{M}", "--scrub-interval-s", scrub]


class Item:
    __slots__ = ("bucket", "key", "size", "md5", "etag", "kind", "parts")

    def __init__(self, bucket, key, size, kind):
        self.bucket, self.key, self.size, self.kind = bucket, key, size, kind
        self.md5 = self.etag = None
        self.parts = 0


# ---------------------------------------------------------------- (a)-(d)

class DurabilityTest(unittest.TestCase):
    """One server, one data set; the tests run in name order and each leaves
    (and first re-establishes) full redundancy on all six drives."""

    DATA = "durable-data"
    healthy = True  # full redundancy, checked (a fresh data set, or ensure_full_redundancy)
    CLI = "durable-cli"
    EMPTY = "durable-empty"

    @classmethod
    def setUpClass(cls):
        warnings.simplefilter("ignore", ResourceWarning)
        cls.rng = random.Random(SEED)
        cls.root = tempfile.mkdtemp(prefix="strata-dura-")
        cls.meta = os.path.join(cls.root, "meta")
        cls.drives = [os.path.join(cls.root, f"drive{i}") for i in range(N_DRIVES)]
        cls.server = Server(data_dir=cls.meta, extra_args=drive_args(cls.drives))
        cls.server.start()
        cls.home = tempfile.mkdtemp(prefix="strata-dura-home-")
        try:
            t0 = time.time()
            cls._write_data_set()
            cls.write_seconds = time.time() - t0
            sys.stderr.write(f"\n[durability seed {SEED}] wrote {len(cls.items)} objects, "
                             f"{sum(i.size for i in cls.items) / MiB:.0f} MiB in "
                             f"{cls.write_seconds:.1f}s\n")
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        shutil.rmtree(cls.home, ignore_errors=True)
        if KEEP:
            sys.stderr.write(f"[durability] kept {cls.root}\n")
        else:
            shutil.rmtree(cls.root, ignore_errors=True)

    # ---- the data set ------------------------------------------------------
    @classmethod
    def _plan(cls):
        rng = random.Random(SEED + 1)
        big = [16 * MiB, 24 * MiB + 3, 40 * MiB - 1, 64 * MiB]
        mid = [1 * MiB - 1, 1 * MiB, 1 * MiB + 1, 2 * MiB, 3 * MiB + 5, STRIPE - 1, STRIPE,
               STRIPE + 1, STRIPE + 4, 2 * STRIPE - 1, 2 * STRIPE]
        while len(mid) < 30:
            mid.append(rng.randint(1 * MiB, 8 * MiB))
        small = [0, 0, 1, 3, 4, 5, 15, 16, 17, 1000, 4095, 4096, 4097, 64 * KiB,
                 128 * KiB, 256 * KiB - 1, 256 * KiB, 256 * KiB - 4]
        mpu = [11 * MiB, 15 * MiB + 1, 3 * MiB + 7]  # parts 5+5+1, 5+5+5+1 B, one 3 MiB part
        cli = [0, 200 * KiB + 3, 2 * MiB + 1]
        n_small = N_OBJECTS - len(big) - len(mid) - len(mpu) - len(cli)
        while len(small) < n_small:
            r = rng.random()
            if r < 0.15:
                small.append(rng.randint(1, KiB))
            elif r < 0.5:
                small.append(rng.randint(KiB, 32 * KiB))
            else:
                small.append(rng.randint(32 * KiB, 256 * KiB))
        rng.shuffle(small)
        items = []
        for i, size in enumerate(big + mid + small):
            key = f"obj/{i:04d}-{size}"
            if i % 97 == 5:
                key = f"odd dir/ü-名前 {i:04d}+(x)&y=z"
            items.append(Item(cls.DATA, key, size, "put"))
        for i, size in enumerate(mpu):
            items.append(Item(cls.DATA, f"mpu/{i}-{size}", size, "mpu"))
        for i, size in enumerate(cli):
            items.append(Item(cls.CLI, f"cli/{i}-{size}", size, "cli"))
        assert len(items) == N_OBJECTS
        return items

    @classmethod
    def _write_data_set(cls):
        s3 = make_client(cls.server)
        for b in (cls.DATA, cls.CLI, cls.EMPTY):
            s3.create_bucket(Bucket=b)
        cls.items = cls._plan()
        errors = []

        def write(item):
            body = body_for(item.key, item.size)
            item.md5 = md5_hex(body)
            if item.kind == "put":
                item.etag = '"%s"' % item.md5
                got = s3.put_object(Bucket=item.bucket, Key=item.key, Body=body)["ETag"]
            else:  # multipart, 5 MiB parts
                parts = [body[o:o + PART] for o in range(0, item.size, PART)]
                item.parts = len(parts)
                item.etag = multipart_etag(parts)
                up = s3.create_multipart_upload(Bucket=item.bucket, Key=item.key)["UploadId"]
                done = []
                for n, p in enumerate(parts, 1):
                    r = s3.upload_part(Bucket=item.bucket, Key=item.key, UploadId=up,
                                       PartNumber=n, Body=p)
                    done.append({"PartNumber": n, "ETag": r["ETag"]})
                got = s3.complete_multipart_upload(
                    Bucket=item.bucket, Key=item.key, UploadId=up,
                    MultipartUpload={"Parts": done})["ETag"]
            if got != item.etag:
                errors.append(f"{item.key}: PUT ETag {got}, expected {item.etag}")

        jobs = sorted((i for i in cls.items if i.kind != "cli"), key=lambda i: -i.size)
        with concurrent.futures.ThreadPoolExecutor(THREADS) as ex:
            for f in [ex.submit(write, i) for i in jobs]:
                f.result()
        for item in (i for i in cls.items if i.kind == "cli"):
            body = body_for(item.key, item.size)
            item.md5 = md5_hex(body)
            item.etag = '"%s"' % item.md5
            path = os.path.join(cls.home, "upload")
            with open(path, "wb") as f:
                f.write(body)
            cls.server.aws(cls.home, "s3", "cp", path, f"s3://{item.bucket}/{item.key}")
            head = s3.head_object(Bucket=item.bucket, Key=item.key)
            if head["ETag"] != item.etag or head["ContentLength"] != item.size:
                errors.append(f"{item.key}: aws cp gave {head['ETag']}/{head['ContentLength']}")
        s3.close()
        if errors:
            raise AssertionError("writing the data set: " + "; ".join(errors[:20]))

    # ---- checks ------------------------------------------------------------
    def client(self):
        c = make_client(self.server)
        self.addCleanup(c.close)
        return c

    def verify_all(self, label):
        """Every object reads back byte-identical with its ETag and size."""
        s3 = self.client()

        def check(item):
            try:
                r = s3.get_object(Bucket=item.bucket, Key=item.key)
                h, n = hashlib.md5(), 0
                for chunk in r["Body"].iter_chunks(1 << 20):
                    h.update(chunk)
                    n += len(chunk)
                bad = []
                if n != item.size or r["ContentLength"] != item.size:
                    bad.append(f"size {n} (Content-Length {r['ContentLength']}), expected {item.size}")
                if h.hexdigest() != item.md5:
                    bad.append("bytes differ (md5 %s, expected %s)" % (h.hexdigest(), item.md5))
                if r["ETag"] != item.etag:
                    bad.append(f"ETag {r['ETag']}, expected {item.etag}")
                return f"{item.bucket}/{item.key}: " + ", ".join(bad) if bad else None
            except Exception as e:  # noqa: BLE001 - reported below with the key
                return f"{item.bucket}/{item.key} ({item.size} B): {type(e).__name__}: {e}"

        t0 = time.time()
        with concurrent.futures.ThreadPoolExecutor(THREADS) as ex:
            problems = [p for p in ex.map(check, self.items) if p]
        sys.stderr.write(f"[durability] {label}: verified {len(self.items)} objects in "
                         f"{time.time() - t0:.1f}s\n")
        self.assertEqual(problems[:25], [], f"{label}: {len(problems)} of {len(self.items)} "
                         f"objects wrong; server log tail:\n{self.server.read_log()}")
        self.assertTrue(self.server.alive(), self.server.read_log())

    def heal(self, *target):
        r = admin(self.server, "heal", *target)
        m = HEAL_SUMMARY.search(r.stdout)
        self.assertIsNotNone(m, f"no heal summary: rc={r.returncode} stdout={r.stdout!r} "
                             f"stderr={r.stderr[-300:]!r}")
        scanned, rebuilt, unrecoverable, errors = map(int, m.groups())
        return r.returncode, scanned, rebuilt, unrecoverable, errors, r

    def heal_status(self):
        r = signed_request(self.server, "GET", "/_strata/admin/heal-status")
        self.assertEqual(r.status, 200, r.body)
        return json.loads(r.body)

    def wait_heal_idle(self, timeout=180):
        """Until the background healer has healed everything reads queued."""
        deadline = time.time() + timeout
        while True:
            s = self.heal_status()
            if s["queued"] == s["healed_from_queue"]:
                return s
            self.assertLess(time.time(), deadline, f"background healer still busy: {s}")
            time.sleep(0.1)

    def marker_ids(self):
        return {marker_id(b) for b in (self.DATA, self.CLI, self.EMPTY)}

    def restart(self):
        self.server.stop()
        self.server.port = free_port()
        self.server.start()

    def ensure_full_redundancy(self, label):
        """All six drives present; `strata admin heal` -> every drive holds a
        shard of every object piece (bucket markers are checked in (c) only)."""
        missing = [d for d in self.drives if not os.path.isdir(d)]
        for d in missing:
            # A lost drive is replaced by an empty one (docs/formats/drive-format.md):
            # strata formats it at start and heal refills it. A drive directory
            # that is simply gone stays "missing" rather than being recreated.
            os.makedirs(d)
        if missing or not self.server.alive():
            self.restart()
        rc, scanned, rebuilt, unrec, errors, r = self.heal()
        self.assertEqual((rc, scanned, unrec, errors), (0, N_OBJECTS, 0, 0),
                         f"{label}: heal: {r.stdout} {r.stderr[-300:]}")
        self.wait_heal_idle()
        markers = self.marker_ids()
        sets = [shard_names(d) - markers for d in self.drives]
        union = set().union(*sets)
        for d, s in zip(self.drives, sets):
            self.assertEqual(sorted(union - s)[:10], [], f"{label}: {d} lacks shards after heal")
        for d in self.drives:
            self.assertEqual(temp_files(d), [], f"{label}: temp files left on {d}")
        type(self).healthy = True
        return union

    def start_from_full_redundancy(self, label):
        if not type(self).healthy:
            self.ensure_full_redundancy(label)
        type(self).healthy = False

    # ---- (a) ---------------------------------------------------------------
    def test_a_two_drives_deleted(self):
        rng = random.Random(SEED + 10)
        first = rng.randrange(K)  # at least one data drive: reads must reconstruct
        second = rng.choice([i for i in range(N_DRIVES) if i != first])
        lost = [self.drives[first], self.drives[second]]
        self.start_from_full_redundancy("(a) before")
        sys.stderr.write(f"[durability] (a) deleting drives {first} and {second}\n")
        for d in lost:
            remove_drive(d)
        self.verify_all("(a) 2 drives deleted while running")

        self.server.stop()
        # Whatever the background healer put back meanwhile goes again: one
        # drive is missing altogether, the other an empty directory.
        for d in lost:
            shutil.rmtree(d, ignore_errors=True)
        os.mkdir(lost[1])
        self.server.port = free_port()
        self.server.start()
        self.verify_all("(a) restarted with 2 drives missing/empty")
        # The multipart objects were among them; say so explicitly.
        mpu = [i for i in self.items if i.kind == "mpu"]
        self.assertEqual(len(mpu), 3)
        self.assertTrue(all(i.etag.endswith(f'-{i.parts}"') for i in mpu))
        self.ensure_full_redundancy("(a) afterwards")

    # ---- (b) ---------------------------------------------------------------
    def test_b_bitrot(self):
        self.start_from_full_redundancy("(b) before")
        rng = random.Random(SEED + 20)
        markers = self.marker_ids()
        files = sorted((pos, name) for pos, d in enumerate(self.drives)
                       for name in shard_names(d) - markers)
        # 5 % of the shard files, at most m of any one piece: more would be
        # a loss beyond what 4+2 promises to survive.
        want = max(1, round(len(files) * 0.05))
        chosen, per_id = [], {}
        for pos, name in rng.sample(files, len(files)):
            if len(chosen) == want:
                break
            if per_id.get(name, 0) < M:
                per_id[name] = per_id.get(name, 0) + 1
                chosen.append((pos, name))
        self.assertEqual(len(chosen), want)
        # Parity shards (positions >= K) are not read by a healthy GET: at
        # least one rotten parity shard of an otherwise healthy piece has to
        # be found by the heal itself.
        data_hit = {name for pos, name in chosen if pos < K}
        self.assertTrue(any(pos >= K and name not in data_hit for pos, name in chosen),
                        "seed gives no parity-only corruption; pick another seed")
        originals = {}
        for pos, name in chosen:
            path = shard_path(self.drives[pos], name)
            with open(path, "rb") as f:
                data = bytearray(f.read())
            originals[path] = hashlib.sha256(data).hexdigest()
            if len(data) > 8 * KiB:
                offsets = {rng.randrange(4 * KiB + 1, len(data)) for _ in range(rng.randint(1, 3))}
            else:
                offsets = {len(data) // 2}
            for off in offsets:
                data[off] ^= rng.randint(1, 255)
            with open(path, "r+b") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            self.assertNotEqual(sha256_path(path), originals[path])
        sys.stderr.write(f"[durability] (b) corrupted {len(chosen)} of {len(files)} shard files\n")
        before = self.heal_status()

        self.verify_all("(b) after flipping bytes in 5% of shard files")

        rc, scanned, rebuilt, unrec, errors, r = self.heal()
        self.assertEqual((rc, scanned, unrec, errors), (0, N_OBJECTS, 0, 0), r.stdout + r.stderr[-300:])
        self.assertGreater(rebuilt, 0, r.stdout)
        after = self.wait_heal_idle()
        background = after["shards_rebuilt"] - before["shards_rebuilt"]
        # The background healer's repairs are system records of the audit trail.
        st, doc = harness.admin(self.server, "GET", "audit-query", identity="strata:healer")
        self.assertEqual(st, 200, doc)
        repairs = doc["records"]
        self.assertEqual(bool(repairs), background > 0, repairs[:3])
        for rec in repairs:
            self.assertEqual((rec["kind"], rec["operation"], rec["result"]),
                             ("system", "HealRepair", "OK"), rec)
        # Every rotten shard rebuilt exactly once, by the GETs' background
        # heals or by `strata admin heal`, and nothing else.
        self.assertEqual(rebuilt + background, len(chosen),
                         f"admin heal rebuilt {rebuilt}, background {background}")
        restored = [p for p, sha in originals.items()
                    if not os.path.exists(p) or sha256_path(p) != sha]
        self.assertEqual(restored[:10], [], f"{len(restored)} shard files not restored byte for byte")

        rc, scanned, rebuilt, unrec, errors, r = self.heal()
        self.assertEqual((rc, scanned, rebuilt, unrec, errors), (0, N_OBJECTS, 0, 0, 0),
                         "second heal: " + r.stdout)
        type(self).healthy = True

    # ---- (c) ---------------------------------------------------------------
    def test_c_wiped_drive_refilled_then_two_others_lost(self):
        self.start_from_full_redundancy("(c) before")
        rng = random.Random(SEED + 30)
        wiped = rng.randrange(N_DRIVES)
        others = rng.sample([i for i in range(N_DRIVES) if i != wiped], 2)
        sys.stderr.write(f"[durability] (c) wiping drive {wiped}, then deleting {others}\n")
        markers = self.marker_ids()
        had = shard_names(self.drives[wiped])
        wipe_drive_contents(self.drives[wiped])

        rc, scanned, rebuilt, unrec, errors, r = self.heal()
        self.assertEqual((rc, scanned, unrec, errors), (0, N_OBJECTS, 0, 0), r.stdout + r.stderr[-300:])
        self.assertEqual(rebuilt, len(had), r.stdout)  # object shards and bucket markers
        self.wait_heal_idle()
        refilled = shard_names(self.drives[wiped])
        for i, d in enumerate(self.drives):
            if i == wiped:
                continue
            with self.subTest(f"wiped drive {wiped} vs drive {i}"):
                s = shard_names(d)
                self.assertEqual((len(refilled), sorted(s - refilled), sorted(refilled - s)),
                                 (len(s), [], []),
                                 f"drive {wiped} after wipe + heal vs {d} (bucket marker ids: "
                                 f"{sorted(markers)})")
        table = admin(self.server, "drives")
        counts = {}
        for line in table.stdout.splitlines():
            f = line.split()
            if len(f) >= 4 and f[0].isdigit():
                counts[int(f[0])] = int(f[2])
        with self.subTest("strata admin drives shard file counts"):
            self.assertEqual(len(counts), N_DRIVES, table.stdout)
            self.assertEqual(len(set(counts.values())), 1, table.stdout)

        for i in others:
            remove_drive(self.drives[i])
        self.verify_all(f"(c) drive {wiped} refilled, drives {others} deleted")
        self.ensure_full_redundancy("(c) afterwards")

    # ---- (d) ---------------------------------------------------------------
    def test_d_rebuild_index(self):
        self.start_from_full_redundancy("(d) before")
        self.server.stop()
        shutil.rmtree(os.path.join(self.meta, "meta"))
        env = dict(os.environ, STRATA_ROOT_USER=ACCESS_KEY, STRATA_ROOT_PASSWORD=SECRET_KEY)
        r = subprocess.run([self.server.bin, "admin", "rebuild-index", "--drives",
                            ",".join(self.drives), "--data", self.meta],
                           capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-3000:])
        m = REBUILD_DONE.search(r.stdout)
        self.assertIsNotNone(m, r.stdout)
        _, buckets, objects, markers, locks, replaced, orphans, unreadable = map(int, m.groups())
        with self.subTest("rebuild-index counts"):
            self.assertEqual((buckets, objects, markers, locks, replaced, orphans, unreadable),
                             (3, N_OBJECTS, 0, 0, 0, 0, 0), r.stdout)

        self.server.port = free_port()
        self.server.start()
        s3 = self.client()
        names = sorted(b["Name"] for b in s3.list_buckets()["Buckets"])
        self.assertEqual(names, sorted([self.DATA, self.CLI, self.EMPTY]))
        for bucket in (self.DATA, self.CLI, self.EMPTY):
            with self.subTest(f"listing of {bucket} after rebuild-index"):
                listed = {}
                for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
                    for o in page.get("Contents", []):
                        listed[o["Key"]] = (o["Size"], o["ETag"])
                expected = {i.key: (i.size, i.etag) for i in self.items if i.bucket == bucket}
                missing = sorted(set(expected) - set(listed))
                self.assertEqual([(k, expected[k][0]) for k in missing][:20], [],
                                 f"{bucket}: {len(missing)} of {len(expected)} keys (key, size) "
                                 f"missing after rebuild-index")
                self.assertEqual(sorted(set(listed) - set(expected))[:20], [], f"{bucket}: extra keys")
                self.assertEqual(listed, expected, f"{bucket}: size/ETag in listing")
        with self.subTest("GET of every object after rebuild-index"):
            self.verify_all("(d) after rebuild-index")
        with self.subTest("the rebuilt index is a working one"):
            s3.put_object(Bucket=self.EMPTY, Key="after-rebuild", Body=b"x" * 1000)
            self.assertEqual(s3.get_object(Bucket=self.EMPTY, Key="after-rebuild")["Body"].read(),
                             b"x" * 1000)
            s3.delete_object(Bucket=self.EMPTY, Key="after-rebuild")
            rc, scanned, rebuilt, unrec, errors, r = self.heal()
            self.assertEqual((rc, scanned, rebuilt, unrec, errors), (0, N_OBJECTS, 0, 0, 0), r.stdout)


# ---------------------------------------------------------------- (e)

E_SIZES = (0, 1, 3000, 64 * KiB, 300 * KiB, 1 * MiB + 1, STRIPE, STRIPE + 1, 6 * MiB)
E_BUCKET = "crashing"


class KillDuringWritesTest(unittest.TestCase):
    def setUp(self):
        warnings.simplefilter("ignore", ResourceWarning)
        self.root = tempfile.mkdtemp(prefix="strata-dura-e-")
        self.drives = [os.path.join(self.root, f"drive{i}") for i in range(N_DRIVES)]
        self.server = Server(data_dir=os.path.join(self.root, "meta"),
                             extra_args=drive_args(self.drives))
        self.server.start()
        self.addCleanup(self.cleanup)
        s3 = make_client(self.server)
        s3.create_bucket(Bucket=E_BUCKET)
        s3.close()

    def cleanup(self):
        self.server.stop()
        if not KEEP:
            shutil.rmtree(self.root, ignore_errors=True)

    def test_e_kill_during_writes_with_a_drive_failing(self):
        rng = random.Random(SEED + 40)
        failing = rng.randrange(N_DRIVES)
        lock = threading.Lock()
        killing = threading.Event()
        attempted, acked, unexpected = {}, set(), []
        clients = [make_client(self.server, pool=2) for _ in range(THREADS)]

        def writer(tid):
            s3 = clients[tid]
            n = 0
            while not killing.is_set():
                key = f"w{tid:02d}/{n:05d}"
                size = E_SIZES[(tid + n * 7) % len(E_SIZES)]
                n += 1
                body = body_for(key, size)
                with lock:
                    attempted[key] = (size, md5_hex(body))
                try:
                    r = s3.put_object(Bucket=E_BUCKET, Key=key, Body=body)
                    if r["ETag"] != '"%s"' % md5_hex(body):
                        unexpected.append(f"{key}: ETag {r['ETag']}")
                    with lock:
                        acked.add(key)
                except Exception as e:  # noqa: BLE001 - after the kill every error is expected
                    if not killing.is_set():
                        unexpected.append(f"{key}: {e!r}")
                        return

        threads = [threading.Thread(target=writer, args=(t,), daemon=True) for t in range(THREADS)]
        for t in threads:
            t.start()
        time.sleep(1.5)
        with lock:
            acked_before_failure = len(acked)
        remove_drive(self.drives[failing])  # the drive fails midway
        time.sleep(2.0)
        killing.set()
        self.server.kill()
        for t in threads:
            t.join(timeout=180)
            self.assertFalse(t.is_alive(), "writer hung after kill -9")
        for c in clients:
            c.close()
        sys.stderr.write(f"[durability] (e) drive {failing} deleted after {acked_before_failure} "
                         f"acks; {len(acked)} acknowledged of {len(attempted)} attempted\n")
        # PUTs between the drive loss and the kill succeed (5 of 6 drives is
        # a write quorum for 4+2) or fail cleanly; nothing else goes wrong.
        self.assertEqual(unexpected, [], self.server.read_log())
        self.assertGreater(acked_before_failure, 0)
        self.assertGreater(len(acked), acked_before_failure, "no write acknowledged after the drive loss")

        self.server.port = free_port()
        self.server.start()
        s3 = make_client(self.server)
        self.addCleanup(s3.close)
        for d in self.drives:
            self.assertEqual([p for p in temp_files(d) if p.endswith(".part")], [],
                             f"unfinished shard files on {d} after restart")

        def check(key):
            size, md5 = attempted[key]
            try:
                r = s3.get_object(Bucket=E_BUCKET, Key=key)
                body = r["Body"].read()
            except ClientError as e:
                if key not in acked and e.response["Error"]["Code"] == "NoSuchKey":
                    return key, None, None
                return key, f"GET: {e.response['Error']['Code']} (acknowledged: {key in acked})", None
            except Exception as e:  # noqa: BLE001
                return key, f"GET: {e!r}", None
            if len(body) != size or md5_hex(body) != md5 or r["ETag"] != '"%s"' % md5:
                return key, f"{len(body)} B md5 {md5_hex(body)} ETag {r['ETag']}, expected " \
                            f"{size} B md5 {md5}", None
            return key, None, True

        with concurrent.futures.ThreadPoolExecutor(THREADS) as ex:
            results = list(ex.map(check, sorted(attempted)))
        problems = [f"{k}: {p}" for k, p, _ in results if p]
        self.assertEqual(problems[:25], [], f"{len(problems)} bad objects after kill -9")
        present = {k for k, _, ok in results if ok}
        self.assertTrue(acked <= present)

        listed = {}
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=E_BUCKET):
            for o in page.get("Contents", []):
                listed[o["Key"]] = o["Size"]
        self.assertEqual(sorted(set(listed) ^ present)[:20], [], "listing differs from readable keys")
        self.assertEqual({k: s for k, s in listed.items()},
                         {k: attempted[k][0] for k in present}, "listed sizes")

        r = admin(self.server, "heal")
        m = HEAL_SUMMARY.search(r.stdout)
        self.assertIsNotNone(m, r.stdout + r.stderr[-300:])
        scanned, rebuilt, unrec, errors = map(int, m.groups())
        self.assertEqual((r.returncode, scanned, unrec, errors), (0, len(present), 0, 0), r.stdout)
        # After the heal (and the background one) no temp shard is left anywhere.
        deadline = time.time() + 60
        while True:
            st = json.loads(signed_request(self.server, "GET", "/_strata/admin/heal-status").body)
            if st["queued"] == st["healed_from_queue"] or time.time() > deadline:
                break
            time.sleep(0.1)
        for d in self.drives:
            self.assertEqual(temp_files(d), [], f"temp shard files left on {d}")


# ---------------------------------------------------------------- (f)

class TooFewDrivesTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="strata-dura-f-")
        self.drives = [os.path.join(self.root, f"drive{i}") for i in range(N_DRIVES)]
        self.server = Server(data_dir=os.path.join(self.root, "meta"),
                             extra_args=drive_args(self.drives))
        self.server.start()
        self.addCleanup(self.cleanup)

    def cleanup(self):
        self.server.stop()
        if not KEEP:
            shutil.rmtree(self.root, ignore_errors=True)

    def test_f_three_drives_deleted(self):
        s3 = make_client(self.server)
        self.addCleanup(s3.close)
        s3.create_bucket(Bucket="fewer")
        s3.put_object(Bucket="fewer", Key="before", Body=b"b" * 5000)
        gone = sorted(random.Random(SEED + 50).sample(range(N_DRIVES), 3))
        for i in gone:
            remove_drive(self.drives[i])

        with self.subTest("PUT with 3 of 6 drives gone"):
            r = signed_request(self.server, "PUT", "/fewer/small", body=b"s" * 1000)
            self.assertEqual(r.status, 503, (r.status, r.body[:500], self.server.read_log()))
            err = parse_error(r.body)
            self.assertIn(err["Code"], ("ServiceUnavailable", "SlowDown"), err)
            self.assertTrue(r.headers.get("content-type", "").startswith("application/xml"),
                            r.headers)
        with self.subTest("boto3 PUT of 6 MiB with 3 of 6 drives gone"):
            with self.assertRaises(ClientError) as cm:
                s3.put_object(Bucket="fewer", Key="large", Body=body_for("large", 6 * MiB))
            self.assertEqual(cm.exception.response["ResponseMetadata"]["HTTPStatusCode"], 503)
            self.assertIn(cm.exception.response["Error"]["Code"], ("ServiceUnavailable", "SlowDown"))

        with self.subTest("server alive, nothing half-written visible"):
            self.assertTrue(self.server.alive(), self.server.read_log())
            self.assertIn("fewer", [b["Name"] for b in s3.list_buckets()["Buckets"]])
            keys = [o["Key"] for o in s3.list_objects_v2(Bucket="fewer").get("Contents", [])]
            self.assertEqual(keys, ["before"])

        with self.subTest("strata admin drives names the bad drives"):
            out = admin(self.server, "drives")
            self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
            states = {}
            for line in out.stdout.splitlines():
                f = line.split()
                if len(f) >= 4 and f[0].isdigit():
                    states[f[3]] = f[1]
            for i, d in enumerate(self.drives):
                self.assertIn(d, states, out.stdout)
                if i in gone:
                    self.assertNotEqual(states[d], "online", f"drive {d} deleted:\n{out.stdout}")
                else:
                    self.assertEqual(states[d], "online", out.stdout)


if __name__ == "__main__":
    unittest.main()

"""Durability of versions, delete markers and Object Lock state (issue 11).

VersionedRebuildIndexTest: an erasure-coded server (6 drives, 4+2) holding
versioned, suspended, never-versioned and Object Lock buckets (multipart and
multi-stripe versions, deleted versions, removed markers, consecutive
markers, null versions replaced in a suspended bucket, COMPLIANCE and
GOVERNANCE retention, extended / shortened / removed retention, legal holds
on and off); stop, delete METADIR/meta, `strata admin rebuild-index`,
start: ListObjectVersions is the same entry for entry (version ids, order,
IsLatest, ETag, size, LastModified), every version has its bytes, headers,
retention and legal hold, nothing deleted came back, and a COMPLIANCE-locked
version is still undeletable.

LockKillTest: SIGKILL while retention is extended, legal holds set and
locked versions written: every acknowledged change is there afterwards.

VersionedDriveLossTest: 2 of 6 drives lost, every version (old ones too)
readable; heal rebuilds the old versions' shards; 2 other drives lost after
the heal and every version is still readable.

VersionedKillTest: SIGKILL during 16 threads of versioned PUTs, DELETEs
(markers) and DELETEs of specific versions on shared keys; after a restart
every acknowledged version is listed and readable with its bytes, every
acknowledged marker is listed, every acknowledged version deletion holds,
nothing listed was never written, and acknowledged order is kept (newest
first).

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_versioning_durability.py -v
"""
import concurrent.futures
import datetime
import hashlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import ACCESS_KEY, SECRET_KEY, Server, free_port  # noqa: E402
from test_durability import (HEAL_SUMMARY, KEEP, N_DRIVES, REBUILD_DONE, admin, drive_args,  # noqa: E402
                             make_client, marker_id, shard_names, temp_files)
from versioning_util import (FastClient, content_md5, etag_of, iso, list_versions_all, qs,  # noqa: E402
                             whole_seconds_from_now)

KiB, MiB = 1024, 1024 * 1024
PART = 5 * MiB
LOCK_HEADERS = ("x-amz-object-lock-mode", "x-amz-object-lock-retain-until-date", "x-amz-object-lock-legal-hold")


def body(name, size):
    return random.Random(hashlib.sha256(name.encode()).digest()).randbytes(size)



def run_then_kill(case, worker, n_threads, seconds, killing, unexpected, at_kill=None):
    """Runs worker(t) on n_threads threads for `seconds`, SIGKILLs the server
    (after `killing` is set, so workers tell expected failures apart), waits
    for every worker and checks none failed before the kill. Returns
    at_kill() taken just before the kill (None without it)."""
    threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(n_threads)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    observed = at_kill() if at_kill else None
    killing.set()
    case.server.kill()
    for t in threads:
        t.join(timeout=120)
        case.assertFalse(t.is_alive(), "worker hung after the kill")
    case.assertEqual(unexpected[:5], [], "errors before the kill")
    return observed

class VersionedRebuildIndexTest(unittest.TestCase):
    VB, SB, PB, LB = "vdur-versioned", "vdur-suspended", "vdur-plain", "vdur-locked"

    def setUp(self):
        warnings.simplefilter("ignore", ResourceWarning)
        self.root = tempfile.mkdtemp(prefix="strata-vdura-")
        self.meta = os.path.join(self.root, "meta")
        self.drives = [os.path.join(self.root, f"drive{i}") for i in range(N_DRIVES)]
        self.server = Server(data_dir=self.meta, extra_args=drive_args(self.drives)).start()
        self.addCleanup(self.cleanup)
        self.s3 = make_client(self.server)
        self.fc = FastClient(self.server.port)
        self.gone = []  # (bucket, key, version id) deleted before the rebuild

    def cleanup(self):
        self.fc.close()
        self.s3.close()
        self.server.stop()
        if not KEEP:
            shutil.rmtree(self.root, ignore_errors=True)

    # ---- writing the state ------------------------------------------------
    def put(self, bucket, key, data, **kw):
        return self.s3.put_object(Bucket=bucket, Key=key, Body=data, **kw).get("VersionId")

    def marker(self, bucket, key):
        r = self.s3.delete_object(Bucket=bucket, Key=key)
        assert r.get("DeleteMarker") is True, r
        return r["VersionId"]

    def delete_version(self, bucket, key, vid, **kw):
        self.s3.delete_object(Bucket=bucket, Key=key, VersionId=vid, **kw)
        self.gone.append((bucket, key, vid))

    def write_state(self):
        s3 = self.s3
        for b in (self.VB, self.SB, self.PB):
            s3.create_bucket(Bucket=b)
        s3.create_bucket(Bucket=self.LB, ObjectLockEnabledForBucket=True)
        for b in (self.VB, self.SB):
            s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
        VB, SB, PB, LB = self.VB, self.SB, self.PB, self.LB

        # A versioned bucket: every shape of history.
        parts = [body("mp1", PART), body("mp2", 1)]
        uid = s3.create_multipart_upload(Bucket=VB, Key="multi")["UploadId"]
        done = [{"PartNumber": n, "ETag": s3.upload_part(Bucket=VB, Key="multi", UploadId=uid, PartNumber=n,
                                                         Body=p)["ETag"]} for n, p in enumerate(parts, 1)]
        s3.complete_multipart_upload(Bucket=VB, Key="multi", UploadId=uid, MultipartUpload={"Parts": done})
        self.put(VB, "multi", body("m1", 100 * KiB), ContentType="application/x-old", Metadata={"gen": "1"})
        self.put(VB, "multi", b"")
        self.put(VB, "multi", b"latest of multi", Metadata={"gen": "3"})
        self.put(VB, "big-old", body("big-old", 6 * MiB + 3))  # more than one 4 MiB stripe
        self.put(VB, "big-old", b"small latest")
        self.put(VB, "deleted", b"deleted")
        self.marker(VB, "deleted")
        self.put(VB, "undeleted", b"undeleted")
        self.delete_version(VB, "undeleted", self.marker(VB, "undeleted"))
        p1 = self.put(VB, "pruned", b"p1")
        p2 = self.put(VB, "pruned", b"p2 (deleted)")
        self.put(VB, "pruned", b"p3")
        self.delete_version(VB, "pruned", p2)
        self.put(VB, "pruned-latest", b"older, now current")
        self.delete_version(VB, "pruned-latest", self.put(VB, "pruned-latest", b"newest, deleted"))
        self.put(VB, "two-markers", b"under two markers")
        self.marker(VB, "two-markers")
        self.marker(VB, "two-markers")
        self.marker(VB, "marker-only")
        self.put(VB, "dir/ü nicode & space", b"odd key")
        assert p1

        # A suspended bucket: the null version replaced, older ones kept.
        self.put(SB, "k", b"enabled era")
        self.put(SB, "sdel", b"sdel enabled era")
        s3.put_bucket_versioning(Bucket=SB, VersioningConfiguration={"Status": "Suspended"})
        self.put(SB, "k", b"null one (replaced)")
        self.put(SB, "k", b"null two")
        self.put(SB, "sdel", b"sdel null (replaced by the marker)")
        self.marker(SB, "sdel")
        self.put(SB, "only-null", b"only null")

        # A never-versioned bucket: overwrites and deletes are final.
        self.put(PB, "over", b"first, overwritten")
        self.put(PB, "over", b"second")
        self.put(PB, "gone", b"deleted for good")
        s3.delete_object(Bucket=PB, Key="gone")
        self.put(PB, "stay", b"stay")

        # An Object Lock bucket.
        day = 86400
        self.put(LB, "none", b"no retention")
        s3.put_object_lock_configuration(Bucket=LB, ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}})
        self.put(LB, "default", b"default retention")
        self.until_c = whole_seconds_from_now(day)
        self.put(LB, "c", b"compliance", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=self.until_c)
        self.put(LB, "c", b"newer, unlocked version over c", ObjectLockMode="GOVERNANCE",
                 ObjectLockRetainUntilDate=whole_seconds_from_now(60))
        v = self.put(LB, "c-ext", b"extended", ObjectLockMode="COMPLIANCE",
                     ObjectLockRetainUntilDate=whole_seconds_from_now(day))
        self.until_ext = whole_seconds_from_now(2 * day)
        s3.put_object_retention(Bucket=LB, Key="c-ext", VersionId=v,
                                Retention={"Mode": "COMPLIANCE", "RetainUntilDate": self.until_ext})
        self.put(LB, "g", b"governance", ObjectLockMode="GOVERNANCE",
                 ObjectLockRetainUntilDate=whole_seconds_from_now(day))
        v = self.put(LB, "g-removed", b"governance removed", ObjectLockMode="GOVERNANCE",
                     ObjectLockRetainUntilDate=whole_seconds_from_now(day))
        s3.put_object_retention(Bucket=LB, Key="g-removed", VersionId=v, Retention={},
                                BypassGovernanceRetention=True)
        v = self.put(LB, "g-shortened", b"governance shortened", ObjectLockMode="GOVERNANCE",
                     ObjectLockRetainUntilDate=whole_seconds_from_now(2 * day))
        s3.put_object_retention(Bucket=LB, Key="g-shortened", VersionId=v, BypassGovernanceRetention=True,
                                Retention={"Mode": "GOVERNANCE", "RetainUntilDate": whole_seconds_from_now(day)})
        self.put(LB, "lh", b"legal hold", ObjectLockLegalHoldStatus="ON")
        v = self.put(LB, "lh-off", b"legal hold released")
        s3.put_object_legal_hold(Bucket=LB, Key="lh-off", VersionId=v, LegalHold={"Status": "ON"})
        s3.put_object_legal_hold(Bucket=LB, Key="lh-off", VersionId=v, LegalHold={"Status": "OFF"})
        self.put(LB, "both", b"compliance and hold", ObjectLockMode="COMPLIANCE",
                 ObjectLockRetainUntilDate=whole_seconds_from_now(day), ObjectLockLegalHoldStatus="ON")
        self.put(LB, "c-marker", b"compliance under a marker", ObjectLockMode="COMPLIANCE",
                 ObjectLockRetainUntilDate=whole_seconds_from_now(day))
        self.marker(LB, "c-marker")

    # ---- reading it back ----------------------------------------------------
    def snapshot(self):
        fc = self.fc
        listing, details = {}, {}
        for b in (self.VB, self.SB, self.PB, self.LB):
            entries, _, _ = list_versions_all(fc, b)
            listing[b] = [tuple(e) for e in entries]
            for e in entries:
                if e.kind != "V":
                    continue
                r = fc.get(b, e.key, version_id=e.version_id)
                keep = {k: v for k, v in r.headers.items()
                        if k in ("etag", "content-length", "content-type", "x-amz-version-id") + LOCK_HEADERS
                        or k.startswith("x-amz-meta-")}
                details[(b, e.key, e.version_id)] = (r.status, keep, hashlib.md5(r.body).hexdigest())
        config = {}
        for b in (self.VB, self.SB, self.PB, self.LB):
            config[b] = self.s3.get_bucket_versioning(Bucket=b).get("Status")
        config["lock"] = self.s3.get_object_lock_configuration(Bucket=self.LB)["ObjectLockConfiguration"]
        return listing, details, config

    def rebuild(self):
        self.server.stop()
        shutil.rmtree(os.path.join(self.meta, "meta"))
        env = dict(os.environ, STRATA_ROOT_USER=ACCESS_KEY, STRATA_ROOT_PASSWORD=SECRET_KEY)
        r = subprocess.run([self.server.bin, "admin", "rebuild-index", "--drives", ",".join(self.drives),
                            "--data", self.meta], capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-3000:])
        m = REBUILD_DONE.search(r.stdout)
        self.assertIsNotNone(m, r.stdout)
        self.assertEqual(int(m.group(8)), 0, "unreadable pieces: " + r.stdout)
        self.server.port = free_port()
        self.server.start()
        self.fc.close()
        self.fc = FastClient(self.server.port)
        self.s3.close()
        self.s3 = make_client(self.server)
        return r

    def test_rebuild_index_keeps_versions_markers_and_locks(self):
        self.write_state()
        before_listing, before_details, before_config = self.snapshot()
        # The state is what it should be before anything is lost.
        self.assertEqual(len([e for e in before_listing[self.VB] if e[1] == "multi"]), 4)
        self.assertEqual([e[0] for e in before_listing[self.VB] if e[1] == "two-markers"], ["M", "M", "V"])
        self.assertEqual([e[2] for e in before_listing[self.SB] if e[1] == "k"][0], "null")
        self.assertEqual(before_details[(self.LB, "c", next(e[2] for e in before_listing[self.LB]
                                                              if e[1] == "c" and e[3] == "false"))][1]
                         ["x-amz-object-lock-mode"], "COMPLIANCE")
        r = self.rebuild()
        sys.stderr.write(f"\n[versioning durability] {r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ''}\n")
        after_listing, after_details, after_config = self.snapshot()

        for b in (self.VB, self.SB, self.PB, self.LB):
            with self.subTest("ListObjectVersions after rebuild-index", bucket=b):
                want, got = before_listing[b], after_listing[b]
                self.assertEqual([x for x in got if x not in want][:10], [], f"{b}: entries that came back "
                                 "or changed (kind, key, version, latest, etag, size, mtime)")
                self.assertEqual([x for x in want if x not in got][:10], [], f"{b}: entries lost")
                self.assertEqual(got, want, f"{b}: order")
        for bucket, key, vid in self.gone:
            with self.subTest("deleted versions stay deleted", key=key):
                self.assertNotIn(vid, [e[2] for e in after_listing[bucket]], f"{bucket}/{key}@{vid} resurrected")
                self.assertEqual(self.fc.get(bucket, key, version_id=vid).status, 404)
        special = {(self.LB, "g-removed"), (self.LB, "g-shortened")}
        with self.subTest("every version: bytes, headers, retention, legal hold"):
            diffs = [(k, before_details[k], after_details.get(k)) for k in before_details
                     if (k[0], k[1]) not in special and after_details.get(k) != before_details[k]]
            self.assertEqual(diffs[:5], [], f"{len(diffs)} versions differ after rebuild-index")
        for k in sorted(x for x in before_details if (x[0], x[1]) in special):
            with self.subTest("a governance retention changed with the bypass header keeps its change", key=k[1]):
                self.assertEqual(after_details.get(k), before_details[k])
        with self.subTest("bucket versioning and Object Lock configuration"):
            self.assertEqual(after_config, before_config)
            self.assertEqual(after_config[self.PB], None)

        LB = self.LB
        c_old = next(e[2] for e in after_listing[LB] if e[1] == "c" and e[3] == "false")
        with self.subTest("COMPLIANCE still undeletable"):
            for vid_key in ("c", "both", "c-marker"):
                vids = [e[2] for e in after_listing[LB] if e[1] == vid_key and e[0] == "V"]
                vid = c_old if vid_key == "c" else vids[0]
                for bypass in (False, True):
                    hdrs = {"x-amz-bypass-governance-retention": "true"} if bypass else None
                    r = self.fc.delete(LB, vid_key, version_id=vid, headers=hdrs)
                    self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), (vid_key, bypass, r))
            r = self.put_retention(LB, "c", c_old, "COMPLIANCE", whole_seconds_from_now(3600))
            self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
            # The extension survived: a date between the original and the extended one is a shortening.
            ext = next(e[2] for e in after_listing[LB] if e[1] == "c-ext")
            r = self.put_retention(LB, "c-ext", ext, "COMPLIANCE", self.until_ext - datetime.timedelta(hours=1))
            self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
        with self.subTest("GOVERNANCE and legal hold still hold"):
            g = next(e[2] for e in after_listing[LB] if e[1] == "g")
            r = self.fc.delete(LB, "g", version_id=g)
            self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
            lh = next(e[2] for e in after_listing[LB] if e[1] == "lh")
            r = self.fc.delete(LB, "lh", version_id=lh, headers={"x-amz-bypass-governance-retention": "true"})
            self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
            r = self.fc.put(LB, "new-after-rebuild", b"x", headers={"Content-MD5": content_md5(b"x")})
            self.assertEqual(r.status, 200, r)
            self.assertEqual(self.fc.head(LB, "new-after-rebuild").header("x-amz-object-lock-mode"), "GOVERNANCE",
                             "the default retention applies after the rebuild")
        with self.subTest("the rebuilt index takes new versions"):
            v = self.s3.put_object(Bucket=self.VB, Key="multi", Body=b"after")["VersionId"]
            entries, _, _ = list_versions_all(self.fc, self.VB, prefix="multi")
            self.assertEqual([(e.version_id, e.is_latest) for e in entries][:2],
                             [(v, "true"), (next(e[2] for e in before_listing[self.VB] if e[1] == "multi"), "false")])

    def put_retention(self, bucket, key, vid, mode, until):
        data = ('<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f'<Mode>{mode}</Mode><RetainUntilDate>{iso(until)}</RetainUntilDate></Retention>').encode()
        return self.fc.request("PUT", f"/{bucket}/{key}", query=qs("retention", versionId=vid), body=data,
                               headers={"Content-MD5": content_md5(data),
                                        "x-amz-bypass-governance-retention": "true"})


class VersionedDriveLossTest(unittest.TestCase):
    """Two of six drives lost: every version (not only the current ones)
    reads back; `strata admin heal` rebuilds the shards of old versions too."""

    def setUp(self):
        warnings.simplefilter("ignore", ResourceWarning)
        self.root = tempfile.mkdtemp(prefix="strata-vdura-h-")
        self.drives = [os.path.join(self.root, f"drive{i}") for i in range(N_DRIVES)]
        self.server = Server(data_dir=os.path.join(self.root, "meta"), extra_args=drive_args(self.drives)).start()
        self.addCleanup(self.cleanup)

    def cleanup(self):
        self.server.stop()
        if not KEEP:
            shutil.rmtree(self.root, ignore_errors=True)

    def verify(self, want, label):
        fc = FastClient(self.server.port)
        try:
            for (key, vid), data in want.items():
                r = fc.get("vheal", key, version_id=vid)
                self.assertEqual((r.status, hashlib.md5(r.body).hexdigest()), (200, hashlib.md5(data).hexdigest()),
                                 f"{label}: {key}@{vid}")
        finally:
            fc.close()

    def test_old_versions_survive_drive_loss_and_heal(self):
        s3 = make_client(self.server)
        self.addCleanup(s3.close)
        s3.create_bucket(Bucket="vheal")
        s3.put_bucket_versioning(Bucket="vheal", VersioningConfiguration={"Status": "Enabled"})
        want = {}
        for key, sizes in (("a", (5 * MiB + 7, 1000, 0)), ("b", (300 * KiB, 64 * KiB)), ("c", (3,))):
            for i, size in enumerate(sizes):
                data = body(f"{key}{i}", size)
                want[(key, s3.put_object(Bucket="vheal", Key=key, Body=data)["VersionId"])] = data
        s3.delete_object(Bucket="vheal", Key="c")  # its only version is now noncurrent
        markers = {marker_id("vheal")}
        full = [shard_names(d) - markers for d in self.drives]
        self.assertEqual(len({frozenset(x) for x in full}), 1, "every drive holds a shard of every piece")
        # Two drives are replaced by empty ones; no GET before the heal (a
        # degraded read would queue a background heal of what it read).
        self.server.stop()
        for d in (self.drives[1], self.drives[4]):
            shutil.rmtree(d)
            os.makedirs(d)
        self.server.port = free_port()
        self.server.start()
        r = admin(self.server, "heal")
        m = HEAL_SUMMARY.search(r.stdout)
        self.assertIsNotNone(m, r.stdout + r.stderr[-500:])
        scanned, rebuilt, unrecoverable, errors = map(int, m.groups())
        self.assertEqual((r.returncode, unrecoverable, errors), (0, 0, 0), r.stdout)
        deadline = time.time() + 60
        while any(temp_files(d) for d in self.drives) and time.time() < deadline:
            time.sleep(0.1)
        with self.subTest("heal rebuilds the shards of every version", heal=r.stdout.strip()):
            for d in (self.drives[1], self.drives[4]):
                self.assertEqual(sorted(full[0] - shard_names(d))[:10], [],
                                 f"{d}: shards not rebuilt by `strata admin heal` ({len(want)} versions, "
                                 f"{scanned} objects scanned)")
        # Every version survives losing two other drives now.
        self.server.stop()
        for d in (self.drives[0], self.drives[3]):
            shutil.rmtree(d)
        self.server.port = free_port()
        self.server.start()
        self.verify(want, "after heal, 2 other drives missing")


# ==========================================================================
K_BUCKET = "vcrash"
K_KEYS = [f"hot/{i:02d}" for i in range(12)]
K_SIZES = (0, 100, 4 * KiB, 200 * KiB)
K_THREADS = 16
K_SECONDS = 2.5


class VersionedKillTest(unittest.TestCase):
    def setUp(self):
        warnings.simplefilter("ignore", ResourceWarning)
        self.server = Server().start()
        self.addCleanup(self.server.cleanup)
        s3 = make_client(self.server)
        s3.create_bucket(Bucket=K_BUCKET)
        s3.put_bucket_versioning(Bucket=K_BUCKET, VersioningConfiguration={"Status": "Enabled"})
        s3.close()

    def run_then_kill(self, cycle):
        lock = threading.Lock()
        killing = threading.Event()
        records, unexpected = [], []
        inflight = [0]

        def worker(tid):
            c = FastClient(self.server.port, timeout=30, retry_stale=False)
            rng = random.Random(f"{cycle}/{tid}")
            mine = []  # acknowledged versions of this thread, not yet deleted
            n = 0
            try:
                while not killing.is_set():
                    key = rng.choice(K_KEYS)
                    x = rng.random()
                    rec = {"key": key, "start": time.monotonic(), "end": None, "vid": None}
                    if x < 0.1 and mine:
                        rec["kind"] = "delver"
                        rec["key"], rec["vid"] = mine.pop(rng.randrange(len(mine)))
                    elif x < 0.35:
                        rec["kind"] = "marker"
                    else:
                        rec["kind"] = "put"
                        name = f"c{cycle}t{tid}n{n}"
                        data = body(name, rng.choice(K_SIZES))
                        rec["etag"], rec["size"] = etag_of(data), len(data)
                        rec["sha"] = hashlib.sha256(data).digest()
                    n += 1
                    with lock:
                        records.append(rec)
                        inflight[0] += 1
                    try:
                        if rec["kind"] == "put":
                            r = c.put(K_BUCKET, rec["key"], data)
                            ok = (r.status == 200 and r.header("etag") == rec["etag"]
                                  and r.header("x-amz-version-id") not in (None, "null"))
                        elif rec["kind"] == "marker":
                            r = c.delete(K_BUCKET, rec["key"])
                            ok = (r.status == 204 and r.header("x-amz-delete-marker") == "true"
                                  and r.header("x-amz-version-id") not in (None, "null"))
                        else:
                            r = c.delete(K_BUCKET, rec["key"], version_id=rec["vid"])
                            ok = r.status == 204 and r.header("x-amz-version-id") == rec["vid"]
                        if not ok:
                            if not killing.is_set():
                                with lock:
                                    unexpected.append((rec, repr(r)))
                            return
                        if rec["kind"] != "delver":
                            rec["vid"] = r.header("x-amz-version-id")
                        rec["end"] = time.monotonic()
                        if rec["kind"] == "put":
                            mine.append((rec["key"], rec["vid"]))
                    except Exception as e:  # noqa: BLE001 - the kill makes every kind of error
                        if not killing.is_set():
                            with lock:
                                unexpected.append((rec, repr(e)))
                        return
                    finally:
                        with lock:
                            inflight[0] -= 1
            finally:
                c.close()

        def snapshot_inflight():
            with lock:
                return inflight[0]
        at_kill = run_then_kill(self, worker, K_THREADS, K_SECONDS, killing, unexpected,
                                at_kill=snapshot_inflight)
        self.assertGreater(at_kill, 0, "nothing in flight at the kill")
        return records

    def test_kill_during_versioned_puts_and_deletes(self):
        records = []
        for cycle in range(2):
            records += self.run_then_kill(cycle)
            self.server.port = free_port()
            self.server.start()
            self.verify(records, cycle)
        fc = FastClient(self.server.port)
        self.addCleanup(fc.close)
        r = fc.put(K_BUCKET, "after", b"after")
        self.assertEqual(r.status, 200)
        self.assertEqual(fc.get(K_BUCKET, "after", version_id=r.header("x-amz-version-id")).body, b"after")

    def verify(self, records, cycle):
        fc = FastClient(self.server.port)
        self.addCleanup(fc.close)
        entries, _, _ = list_versions_all(fc, K_BUCKET)
        label = f"cycle {cycle}"
        by_vid = {}
        for pos, e in enumerate(entries):
            self.assertNotIn(e.version_id, by_vid, f"{label}: version id listed twice: {e}")
            by_vid[e.version_id] = (pos, e)
        acked = [r for r in records if r["end"] is not None]
        puts = [r for r in acked if r["kind"] == "put"]
        markers = [r for r in acked if r["kind"] == "marker"]
        deleted_acked = {r["vid"] for r in acked if r["kind"] == "delver"}
        deleted_tried = {r["vid"] for r in records if r["kind"] == "delver"}
        n_acked = (len(puts), len(markers), len(deleted_acked))
        self.assertGreater(len(puts), 0)

        lost = []
        for r in puts:
            got = by_vid.get(r["vid"])
            if r["vid"] in deleted_acked:
                self.assertIsNone(got, f"{label}: acknowledged deletion of {r['key']}@{r['vid']} undone")
                continue
            if got is None:
                if r["vid"] not in deleted_tried:
                    lost.append((r["key"], r["vid"]))
                continue
            e = got[1]
            self.assertEqual((e.kind, e.key, e.etag, e.size), ("V", r["key"], r["etag"], r["size"]),
                             f"{label}: {r['key']}@{r['vid']}")
        self.assertEqual(lost[:10], [], f"{label}: {len(lost)} acknowledged versions lost")
        missing_markers = [(r["key"], r["vid"]) for r in markers
                           if r["vid"] not in by_vid or by_vid[r["vid"]][1].kind != "M"
                           or by_vid[r["vid"]][1].key != r["key"]]
        self.assertEqual(missing_markers[:10], [], f"{label}: acknowledged delete markers lost")

        # Nothing listed that was never written.
        known = {r["vid"] for r in acked if r["kind"] != "delver"}
        unacked_puts = {}
        unacked_markers = {}
        for r in records:
            if r["end"] is None and r["kind"] == "put":
                unacked_puts.setdefault(r["key"], set()).add((r["etag"], r["size"]))
            elif r["end"] is None and r["kind"] == "marker":
                unacked_markers[r["key"]] = unacked_markers.get(r["key"], 0) + 1
        extra_markers = {}
        for e in entries:
            self.assertIn(e.key, K_KEYS, f"{label}: a key never written: {e}")
            if e.version_id in known:
                continue
            if e.kind == "V":
                self.assertIn((e.etag, e.size), unacked_puts.get(e.key, set()),
                              f"{label}: a version no PUT wrote: {e}")
            else:
                extra_markers[e.key] = extra_markers.get(e.key, 0) + 1
        for key, n in extra_markers.items():
            self.assertLessEqual(n, unacked_markers.get(key, 0), f"{label}: {key} has markers no DELETE made")

        # Newest first: an op acknowledged before another started is listed after it.
        ops = [r for r in acked if r["kind"] != "delver" and r["vid"] in by_vid]
        by_key = {}
        for r in ops:
            by_key.setdefault(r["key"], []).append(r)
        wrong = []
        for key, rs in by_key.items():
            for a in rs:
                for b in rs:
                    if a["end"] < b["start"] and not by_vid[b["vid"]][0] < by_vid[a["vid"]][0]:
                        wrong.append((key, a["vid"], b["vid"]))
        self.assertEqual(wrong[:5], [], f"{label}: order of acknowledged versions")

        # IsLatest, GET of each key, ListObjectsV2.
        first = {}
        for e in entries:
            self.assertEqual(e.is_latest, "true" if e.key not in first else "false", f"{label}: {e}")
            first.setdefault(e.key, e)
        for key, e in first.items():
            r = fc.get(K_BUCKET, key)
            if e.kind == "M":
                self.assertEqual((r.status, r.header("x-amz-delete-marker")), (404, "true"), f"{label}: {key}")
            else:
                self.assertEqual((r.status, r.header("etag"), r.header("x-amz-version-id")),
                                 (200, e.etag, e.version_id), f"{label}: {key}")
        s3 = make_client(self.server)
        self.addCleanup(s3.close)
        listed = {o["Key"]: o["ETag"] for o in s3.list_objects_v2(Bucket=K_BUCKET).get("Contents", [])}
        self.assertEqual(listed, {k: e.etag for k, e in first.items() if e.kind == "V"}, label)

        # Every acknowledged, listed version reads back byte for byte.
        present = [r for r in puts if r["vid"] in by_vid]
        local, clients = threading.local(), []

        def read(r):
            if not hasattr(local, "c"):
                local.c = FastClient(self.server.port)
                clients.append(local.c)
            g = local.c.get(K_BUCKET, r["key"], version_id=r["vid"])
            if g.status != 200 or hashlib.sha256(g.body).digest() != r["sha"]:
                return f"{r['key']}@{r['vid']}: {g.status}, {len(g.body)} bytes, expected {r['size']}"
            return None

        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            bad = [x for x in ex.map(read, present) if x]
        for c in clients:
            c.close()
        self.assertEqual(bad[:10], [], f"{label}: {len(bad)} acknowledged versions unreadable")
        print(f"\n  {label}: {len(records)} operations, acknowledged {n_acked[0]} PUTs, {n_acked[1]} "
              f"markers, {n_acked[2]} version deletes; {len(entries)} listed", file=sys.stderr)



# ==========================================================================
L_BUCKET = "lkcrash"
L_THREADS = 8
L_PER_THREAD = 6


class LockKillTest(unittest.TestCase):
    """SIGKILL while 8 threads extend COMPLIANCE retention, set legal holds
    and write new locked versions: after a restart every acknowledged
    extension, legal hold and locked version is there (an unacknowledged one
    may or may not be), and nothing is deletable."""

    def setUp(self):
        warnings.simplefilter("ignore", ResourceWarning)
        self.server = Server().start()
        self.addCleanup(self.server.cleanup)
        s3 = make_client(self.server)
        s3.create_bucket(Bucket=L_BUCKET, ObjectLockEnabledForBucket=True)
        self.base = whole_seconds_from_now(3600)
        self.versions = {}  # vid -> dict(key, acked, tried (retain-until unix times), hold_acked, hold_tried)
        for t in range(L_THREADS):
            for i in range(L_PER_THREAD):
                key = f"t{t}/v{i}"
                vid = s3.put_object(Bucket=L_BUCKET, Key=key, Body=key.encode(), ObjectLockMode="COMPLIANCE",
                                    ObjectLockRetainUntilDate=self.base)["VersionId"]
                ts = self.base.timestamp()
                self.versions[vid] = {"key": key, "tid": t, "acked": ts, "tried": ts,
                                      "hold_acked": False, "hold_tried": False, "new": False}
        s3.close()

    @staticmethod
    def retention_body(mode, until):
        return ('<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f'<Mode>{mode}</Mode><RetainUntilDate>{iso(until)}</RetainUntilDate></Retention>').encode()

    def test_kill_during_lock_changes(self):
        lock = threading.Lock()
        killing = threading.Event()
        unexpected, new_versions = [], []
        counts = {"extend": 0, "hold": 0, "put": 0}

        def worker(tid):
            c = FastClient(self.server.port, timeout=30, retry_stale=False)
            rng = random.Random(f"lock/{tid}")
            mine = [v for v, info in self.versions.items() if info["tid"] == tid]
            n = 0
            try:
                while not killing.is_set():
                    n += 1
                    vid = rng.choice(mine)
                    info = self.versions[vid]
                    x = rng.random()
                    try:
                        if x < 0.7:
                            until = datetime.datetime.fromtimestamp(info["tried"] + 1, datetime.timezone.utc)
                            info["tried"] = until.timestamp()
                            data = self.retention_body("COMPLIANCE", until)
                            r = c.request("PUT", f"/{L_BUCKET}/{info['key']}",
                                          query=qs("retention", versionId=vid), body=data,
                                          headers={"Content-MD5": content_md5(data)})
                            ok = r.status == 200
                            if ok:
                                info["acked"] = until.timestamp()
                                counts["extend"] += 1
                        elif x < 0.8:
                            info["hold_tried"] = True
                            data = (b'<LegalHold xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                                    b'<Status>ON</Status></LegalHold>')
                            r = c.request("PUT", f"/{L_BUCKET}/{info['key']}",
                                          query=qs("legal-hold", versionId=vid), body=data,
                                          headers={"Content-MD5": content_md5(data)})
                            ok = r.status == 200
                            if ok:
                                info["hold_acked"] = True
                                counts["hold"] += 1
                        else:
                            key = f"t{tid}/new{n}"
                            data = key.encode()
                            until = whole_seconds_from_now(7200)
                            rec = {"key": key, "until": until.timestamp(), "vid": None}
                            with lock:
                                new_versions.append(rec)
                            r = c.put(L_BUCKET, key, data, headers={
                                "Content-MD5": content_md5(data), "x-amz-object-lock-mode": "COMPLIANCE",
                                "x-amz-object-lock-retain-until-date": iso(until),
                                "x-amz-object-lock-legal-hold": "ON"})
                            ok = r.status == 200 and r.header("x-amz-version-id")
                            if ok:
                                rec["vid"] = r.header("x-amz-version-id")
                                counts["put"] += 1
                        if not ok:
                            if not killing.is_set():
                                with lock:
                                    unexpected.append(repr(r))
                            return
                    except Exception as e:  # noqa: BLE001 - the kill makes every kind of error
                        if not killing.is_set():
                            with lock:
                                unexpected.append(repr(e))
                        return
            finally:
                c.close()

        run_then_kill(self, worker, L_THREADS, 2.0, killing, unexpected)
        self.assertGreater(counts["extend"], 0)
        self.server.port = free_port()
        self.server.start()
        s3 = make_client(self.server)
        self.addCleanup(s3.close)
        fc = FastClient(self.server.port)
        self.addCleanup(fc.close)
        bad = []
        for vid, info in self.versions.items():
            r = s3.get_object_retention(Bucket=L_BUCKET, Key=info["key"], VersionId=vid)["Retention"]
            got = r["RetainUntilDate"].timestamp()
            if r["Mode"] != "COMPLIANCE" or not info["acked"] <= got <= info["tried"]:
                bad.append((info["key"], r, info["acked"], info["tried"]))
            if info["hold_acked"]:
                h = s3.get_object_legal_hold(Bucket=L_BUCKET, Key=info["key"], VersionId=vid)["LegalHold"]["Status"]
                if h != "ON":
                    bad.append((info["key"], "legal hold", h))
        self.assertEqual(bad[:5], [], f"{len(bad)} acknowledged lock changes lost or wrong")
        for rec in new_versions:
            if rec["vid"] is None:
                continue
            h = fc.head(L_BUCKET, rec["key"], version_id=rec["vid"])
            self.assertEqual((h.status, h.header("x-amz-object-lock-mode"), h.header("x-amz-object-lock-legal-hold")),
                             (200, "COMPLIANCE", "ON"), rec)
        sample = list(self.versions.items())[::7] + [(r["vid"], r) for r in new_versions if r["vid"]][:5]
        for vid, info in sample:
            r = fc.delete(L_BUCKET, info["key"], version_id=vid, headers={"x-amz-bypass-governance-retention": "true"})
            self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), (info["key"], r))
        print(f"\n  acknowledged {counts['extend']} extensions, {counts['hold']} legal holds, "
              f"{counts['put']} locked PUTs before the kill", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()

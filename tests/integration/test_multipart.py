"""Multipart uploads against a real strata server: every operation through
boto3 and aws s3api, edge cases (part numbers 0 / 10001, missing parts, wrong
order, too-small parts, completing twice, aborting while a part is still
being sent, re-uploaded parts, parallel parts), ListMultipartUploads paging,
GET ?partNumber, conditional Complete, and real clients that upload in
parallel parts: aws s3 cp / sync, rclone, s3cmd, boto3's transfer manager.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_multipart.py -v
"""
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rawhttp  # noqa: E402
from harness import ServerTestCase, no_empty_expect, sha256_file, tree_digest, write_random_file  # noqa: E402
from s3util import (MiB, PART, data_files, stored_size, extra_headers, md5_hex, multipart_etag,  # noqa: E402
                    multipart_etag_of_file, payload, quoted, race, wait_for)

PART_NUMBER_MSG = "Part number must be an integer between 1 and 10000, inclusive"



class MultipartTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        no_empty_expect(cls.s3)
        cls.bucket = cls.make_bucket_cls("mp")

    @classmethod
    def make_bucket_cls(cls, tag):
        from harness import unique_name
        name = unique_name(tag)
        cls.s3.create_bucket(Bucket=name)
        return name

    def tearDown(self):
        self.assertServerHealthy()

    # ---- helpers -------------------------------------------------------
    def create(self, key, bucket=None, **kw):
        return self.s3.create_multipart_upload(Bucket=bucket or self.bucket, Key=key, **kw)["UploadId"]

    def part(self, key, upload_id, number, data, bucket=None):
        r = self.s3.upload_part(Bucket=bucket or self.bucket, Key=key, UploadId=upload_id,
                                PartNumber=number, Body=data)
        self.assertEqual(r["ETag"], quoted(md5_hex(data)))
        return r["ETag"]

    def complete(self, key, upload_id, parts, bucket=None):
        """parts: [(number, etag)]."""
        return self.s3.complete_multipart_upload(
            Bucket=bucket or self.bucket, Key=key, UploadId=upload_id,
            MultipartUpload={"Parts": [{"PartNumber": n, "ETag": e} for n, e in parts]})

    def assertAbsent(self, key, bucket=None):
        self.assertS3Error(self.s3.get_object, "NoSuchKey", 404, Bucket=bucket or self.bucket, Key=key)
        listed = self.s3.list_objects_v2(Bucket=bucket or self.bucket, Prefix=key).get("Contents", [])
        self.assertNotIn(key, [o["Key"] for o in listed])

    def assertNoUpload(self, key, upload_id, bucket=None):
        self.assertS3Error(self.s3.list_parts, "NoSuchUpload", 404, Bucket=bucket or self.bucket,
                           Key=key, UploadId=upload_id)
        uploads = self.s3.list_multipart_uploads(Bucket=bucket or self.bucket).get("Uploads", [])
        self.assertNotIn(upload_id, [u["UploadId"] for u in uploads])

    def upload_ids(self, bucket, **kw):
        r = self.s3.list_multipart_uploads(Bucket=bucket, **kw)
        return [(u["Key"], u["UploadId"]) for u in r.get("Uploads", [])]

    # ---- the basic life cycle ---------------------------------------------------
    def test_create_upload_list_complete_get(self):
        key = "dir/life cycle ü.bin"
        parts = [payload(PART, "p1"), payload(PART + 123, "p2"), payload(1000, "p3")]
        r = self.s3.create_multipart_upload(Bucket=self.bucket, Key=key, ContentType="application/x-test",
                                            Metadata={"color": "blue"}, CacheControl="max-age=60")
        self.assertEqual((r["Bucket"], r["Key"]), (self.bucket, key))
        uid = r["UploadId"]
        self.assertTrue(uid)
        # Listed while in progress; not an object yet.
        self.assertIn((key, uid), self.upload_ids(self.bucket, Prefix="dir/"))
        self.assertAbsent(key)
        etags = [self.part(key, uid, i + 1, d) for i, d in enumerate(parts)]
        lp = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid)
        self.assertEqual((lp["Bucket"], lp["Key"], lp["UploadId"]), (self.bucket, key, uid))
        self.assertFalse(lp["IsTruncated"])
        self.assertEqual(lp["StorageClass"], "STANDARD")
        self.assertEqual([(p["PartNumber"], p["ETag"], p["Size"]) for p in lp["Parts"]],
                         [(i + 1, etags[i], len(d)) for i, d in enumerate(parts)])
        before = data_files(self.server)
        c = self.complete(key, uid, [(i + 1, e) for i, e in enumerate(etags)])
        self.assertEqual((c["Bucket"], c["Key"]), (self.bucket, key))
        self.assertEqual(c["ETag"], multipart_etag(parts))
        # Completing copies nothing: the same data files (inode, size) before and after.
        self.assertEqual(data_files(self.server), before)
        h = self.s3.head_object(Bucket=self.bucket, Key=key)
        self.assertEqual(h["ContentLength"], sum(map(len, parts)))
        self.assertEqual(h["ETag"], multipart_etag(parts))
        self.assertEqual(h["ContentType"], "application/x-test")
        self.assertEqual(h["CacheControl"], "max-age=60")
        self.assertEqual(h["Metadata"], {"color": "blue"})
        self.assertEqual(self.get_body(self.bucket, key), b"".join(parts))
        # Ranged GET across a part boundary.
        g = self.s3.get_object(Bucket=self.bucket, Key=key, Range=f"bytes={PART - 10}-{PART + 9}")
        self.assertEqual(g["Body"].read(), (parts[0] + parts[1])[PART - 10:PART + 10])
        # The upload is gone.
        self.assertNoUpload(key, uid)
        listed = self.s3.list_objects_v2(Bucket=self.bucket, Prefix="dir/")["Contents"]
        self.assertEqual([(o["Key"], o["Size"], o["ETag"]) for o in listed],
                         [(key, sum(map(len, parts)), multipart_etag(parts))])

    def test_get_part_number(self):
        key = "partnumber.bin"
        parts = [payload(PART, "gp1"), payload(PART + 7, "gp2"), payload(333, "gp3")]
        uid = self.create(key)
        etags = [self.part(key, uid, i + 1, d) for i, d in enumerate(parts)]
        self.complete(key, uid, list(enumerate(etags, 1)))
        size = sum(map(len, parts))
        offset = 0
        for n, d in enumerate(parts, 1):
            g = self.s3.get_object(Bucket=self.bucket, Key=key, PartNumber=n)
            self.assertEqual(g["ResponseMetadata"]["HTTPStatusCode"], 206)
            self.assertEqual(g["PartsCount"], 3)
            self.assertEqual(g["ContentLength"], len(d))
            self.assertEqual(g["ContentRange"], f"bytes {offset}-{offset + len(d) - 1}/{size}")
            self.assertEqual(g["ETag"], multipart_etag(parts))
            self.assertEqual(g["Body"].read(), d)
            h = self.s3.head_object(Bucket=self.bucket, Key=key, PartNumber=n)
            self.assertEqual((h["ContentLength"], h["PartsCount"]), (len(d), 3))
            offset += len(d)
        self.assertS3Error(self.s3.get_object, "InvalidPartNumber", 416, Bucket=self.bucket, Key=key,
                           PartNumber=4)
        # partNumber together with Range is refused.
        self.assertS3Error(self.s3.get_object, "InvalidRequest", 400, Bucket=self.bucket, Key=key,
                           PartNumber=1, Range="bytes=0-1")

    # ---- part numbers ---------------------------------------------------------------
    def test_part_number_limits(self):
        key = "limits"
        uid = self.create(key)
        path = f"/{self.bucket}/{key}"
        for bad in ("0", "10001", "-1", "abc", "1.5", ""):
            with self.subTest(part_number=bad):
                r = rawhttp.request(self.server.port, "PUT", path, query=f"partNumber={bad}&uploadId={uid}",
                                    body=b"data")
                self.assertEqual(r.status, 400, r)
                self.assertEqual(r.error_code, "InvalidArgument", r)
                self.assertIn(PART_NUMBER_MSG.encode(), r.body)
        self.assertEqual(self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid).get("Parts", []), [])
        # Through boto3 as well.
        for bad in (0, 10001):
            self.assertS3Error(self.s3.upload_part, "InvalidArgument", 400, Bucket=self.bucket, Key=key,
                               UploadId=uid, PartNumber=bad, Body=b"x")
        # The bounds themselves are fine; 10000 parts is the limit, and parts
        # need not be contiguous.
        e1 = self.part(key, uid, 1, b"first")
        e10000 = self.part(key, uid, 10000, b"last")
        lp = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid)
        self.assertEqual([p["PartNumber"] for p in lp["Parts"]], [1, 10000])
        # Non-last part under 5 MiB: refused at completion.
        self.assertS3Error(self.complete, "EntityTooSmall", 400, key, uid, [(1, e1), (10000, e10000)])
        c = self.complete(key, uid, [(10000, e10000)])
        self.assertEqual(c["ETag"], multipart_etag([b"last"]))
        self.assertEqual(self.get_body(self.bucket, key), b"last")

    def test_upload_part_content_md5(self):
        import base64
        key = "content-md5"
        uid = self.create(key)
        data = b"part with a content-md5"
        good = base64.b64encode(hashlib.md5(data).digest()).decode()
        bad = base64.b64encode(hashlib.md5(data + b"x").digest()).decode()
        self.assertS3Error(self.s3.upload_part, "BadDigest", 400, Bucket=self.bucket, Key=key, UploadId=uid,
                           PartNumber=1, Body=data, ContentMD5=bad)
        self.assertEqual(self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid).get("Parts", []), [])
        self.assertS3Error(self.s3.upload_part, "InvalidDigest", 400, Bucket=self.bucket, Key=key, UploadId=uid,
                           PartNumber=1, Body=data, ContentMD5="not-an-md5")
        r = self.s3.upload_part(Bucket=self.bucket, Key=key, UploadId=uid, PartNumber=1, Body=data, ContentMD5=good)
        self.assertEqual(r["ETag"], quoted(md5_hex(data)))
        self.s3.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=uid)

    # ---- completion errors --------------------------------------------------------------
    def test_complete_errors_leave_nothing_visible(self):
        key = "complete-errors"
        p1, p2, p3 = payload(PART, "ce1"), payload(PART, "ce2"), payload(10, "ce3")
        small = b"tiny part"
        uid = self.create(key)
        e1, e2, e3 = self.part(key, uid, 1, p1), self.part(key, uid, 2, p2), self.part(key, uid, 3, p3)
        cases = [
            ("missing part 4", "InvalidPart", [(1, e1), (4, e3)]),
            ("wrong etag", "InvalidPart", [(1, e1), (2, e1)]),
            ("made-up etag", "InvalidPart", [(1, '"%s"' % ("0" * 32))]),
            ("descending", "InvalidPartOrder", [(2, e2), (1, e1)]),
        ]
        for name, code, parts in cases:
            with self.subTest(name):
                self.assertS3Error(self.complete, code, 400, key, uid, parts)
                self.assertAbsent(key)
        # An empty part list is malformed.
        r = rawhttp.request(self.server.port, "POST", f"/{self.bucket}/{key}", query=f"uploadId={uid}",
                            body=b"<CompleteMultipartUpload></CompleteMultipartUpload>")
        self.assertEqual((r.status, r.error_code), (400, "MalformedXML"), r)
        r = rawhttp.request(self.server.port, "POST", f"/{self.bucket}/{key}", query=f"uploadId={uid}",
                            body=b"<CompleteMultipartUpload><Part><PartNumber>1</Part>")
        self.assertEqual((r.status, r.error_code), (400, "MalformedXML"), r)
        # A small non-last part.
        self.part(key, uid, 2, small)
        e2_small = quoted(md5_hex(small))
        self.assertS3Error(self.complete, "EntityTooSmall", 400, key, uid, [(1, e1), (2, e2_small), (3, e3)])
        self.assertAbsent(key)
        # None of that consumed the upload; every part is still listed.
        lp = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid)
        self.assertEqual([(p["PartNumber"], p["ETag"]) for p in lp["Parts"]], [(1, e1), (2, e2_small), (3, e3)])
        # Completing with a subset of the parts (1 and 3) works; part 2 is not in the object.
        c = self.complete(key, uid, [(1, e1), (3, e3)])
        self.assertEqual(c["ETag"], multipart_etag([p1, p3]))
        self.assertEqual(self.get_body(self.bucket, key), p1 + p3)

    def test_complete_twice_and_use_after_complete(self):
        key = "twice"
        uid = self.create(key)
        e1 = self.part(key, uid, 1, b"only part")
        c = self.complete(key, uid, [(1, e1)])
        self.assertEqual(c["ETag"], multipart_etag([b"only part"]))
        # A retried Complete (the response was lost) gets the object, as from AWS.
        self.assertEqual(self.complete(key, uid, [(1, e1)])["ETag"], c["ETag"])
        self.assertS3Error(self.complete, "NoSuchUpload", 404, key, uid, [(1, e1), (2, e1)])
        self.assertS3Error(self.s3.upload_part, "NoSuchUpload", 404, Bucket=self.bucket, Key=key,
                           UploadId=uid, PartNumber=2, Body=b"late")
        self.assertS3Error(self.s3.abort_multipart_upload, "NoSuchUpload", 404, Bucket=self.bucket,
                           Key=key, UploadId=uid)
        self.assertNoUpload(key, uid)
        self.assertEqual(self.get_body(self.bucket, key), b"only part")

    def test_unknown_upload_and_bucket(self):
        key = "unknown"
        bogus = "0" * 32
        for name, fn, kw in (
                ("upload_part", self.s3.upload_part, dict(PartNumber=1, Body=b"x")),
                ("list_parts", self.s3.list_parts, {}),
                ("abort", self.s3.abort_multipart_upload, {}),
                ("complete", self.s3.complete_multipart_upload,
                 dict(MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": '"%s"' % md5_hex(b"x")}]})),
                ("upload_part_copy", self.s3.upload_part_copy,
                 dict(PartNumber=1, CopySource={"Bucket": self.bucket, "Key": "nothing"}))):
            for uid in (bogus, "not-an-upload-id"):
                with self.subTest(op=name, upload_id=uid):
                    self.assertS3Error(fn, "NoSuchUpload", 404, Bucket=self.bucket, Key=key, UploadId=uid, **kw)
        # An upload id is bound to its key.
        uid = self.create("bound-key")
        self.assertS3Error(self.s3.list_parts, "NoSuchUpload", 404, Bucket=self.bucket, Key="other-key",
                           UploadId=uid)
        self.assertS3Error(self.s3.upload_part, "NoSuchUpload", 404, Bucket=self.bucket, Key="other-key",
                           UploadId=uid, PartNumber=1, Body=b"x")
        self.s3.abort_multipart_upload(Bucket=self.bucket, Key="bound-key", UploadId=uid)
        missing = self.bucket_name("nobucket")
        self.assertS3Error(self.s3.create_multipart_upload, "NoSuchBucket", 404, Bucket=missing, Key="k")
        self.assertS3Error(self.s3.list_multipart_uploads, "NoSuchBucket", 404, Bucket=missing)
        self.assertS3Error(self.s3.upload_part, "NoSuchBucket", 404, Bucket=missing, Key="k",
                           UploadId=bogus, PartNumber=1, Body=b"x")
        self.assertS3Error(self.s3.list_parts, "NoSuchBucket", 404, Bucket=missing, Key="k", UploadId=bogus)

    # ---- abort -------------------------------------------------------------------------
    def test_abort(self):
        key = "abort-me"
        before = data_files(self.server)
        uid = self.create(key)
        self.part(key, uid, 1, payload(PART, "ab1"))
        self.part(key, uid, 2, payload(300 * 1024, "ab2"))
        self.assertEqual(len(data_files(self.server) - before), 2)
        r = self.s3.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=uid)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 204)
        self.assertNoUpload(key, uid)
        self.assertAbsent(key)
        self.assertS3Error(self.s3.abort_multipart_upload, "NoSuchUpload", 404, Bucket=self.bucket, Key=key,
                           UploadId=uid)
        # The part files are removed.
        self.assertEqual(wait_for(lambda: data_files(self.server) == before), True)
        # An existing object under the same key is not touched by an abort.
        self.put(self.bucket, key, b"existing object")
        uid = self.create(key)
        self.part(key, uid, 1, b"part")
        self.s3.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=uid)
        self.assertEqual(self.get_body(self.bucket, key), b"existing object")

    def test_abort_while_part_upload_in_flight(self):
        key = "abort-in-flight"
        before = data_files(self.server)
        uid = self.create(key)
        data = payload(8 * MiB, "inflight")
        req = rawhttp.sign(self.server.port, "PUT", f"/{self.bucket}/{key}",
                           query=f"partNumber=1&uploadId={uid}", body=data,
                           payload_hash=rawhttp.UNSIGNED_PAYLOAD)
        raw = req.to_bytes()
        half = len(raw) - 4 * MiB
        with rawhttp.Conn(self.server.port, timeout=30) as conn:
            conn.send(raw[:half])
            # The part is being written: its data file exists.
            self.assertTrue(wait_for(lambda: len(data_files(self.server) - before) == 1),
                            "no data file for the in-flight part")
            r = self.s3.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=uid)
            self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 204)
            self.assertNoUpload(key, uid)
            conn.send(raw[half:])
            resp = conn.read_response("PUT")
        # The part lost the race with the abort.
        self.assertEqual((resp.status, resp.error_code), (404, "NoSuchUpload"), resp)
        self.assertNoUpload(key, uid)
        self.assertAbsent(key)
        self.assertS3Error(self.complete, "NoSuchUpload", 404, key, uid, [(1, quoted(md5_hex(data)))])
        # Nothing of it stays on disk.
        self.assertTrue(wait_for(lambda: data_files(self.server) == before),
                        f"leftover data files: {data_files(self.server) - before}")

    # ---- parts: parallel, replaced ---------------------------------------------------------
    def test_parallel_parts_from_8_threads(self):
        key = "parallel.bin"
        count = 16
        parts = [payload(PART, f"par{i}") for i in range(count - 1)] + [payload(MiB + 3, "parlast")]
        uid = self.create(key)
        etags = [None] * count
        errors = []
        barrier = threading.Barrier(8)

        def worker(w):
            client = self.server.boto3_client()
            try:
                barrier.wait(timeout=30)
                for i in range(w, count, 8):
                    r = client.upload_part(Bucket=self.bucket, Key=key, UploadId=uid, PartNumber=i + 1,
                                           Body=parts[i])
                    etags[i] = r["ETag"]
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
            finally:
                client.close()

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(errors, [])
        self.assertEqual(etags, [quoted(md5_hex(p)) for p in parts])
        lp = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid)
        self.assertEqual([(p["PartNumber"], p["ETag"], p["Size"]) for p in lp["Parts"]],
                         [(i + 1, etags[i], len(parts[i])) for i in range(count)])
        c = self.complete(key, uid, [(i + 1, e) for i, e in enumerate(etags)])
        self.assertEqual(c["ETag"], multipart_etag(parts))
        g = self.s3.get_object(Bucket=self.bucket, Key=key)
        self.assertEqual(g["ContentLength"], sum(map(len, parts)))
        self.assertEqual(hashlib.sha256(g["Body"].read()).hexdigest(),
                         hashlib.sha256(b"".join(parts)).hexdigest())

    def test_reuploaded_part_replaces_earlier(self):
        key = "replace-part"
        first, second = payload(PART, "first"), payload(PART + 1, "second")
        last = b"end"
        before = data_files(self.server)
        uid = self.create(key)
        e_first = self.part(key, uid, 1, first)
        e_second = self.part(key, uid, 1, second)
        e_last = self.part(key, uid, 2, last)
        lp = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid)
        self.assertEqual([(p["PartNumber"], p["ETag"], p["Size"]) for p in lp["Parts"]],
                         [(1, e_second, len(second)), (2, e_last, len(last))])
        # The replaced part's file is gone: one data file per current part.
        self.assertTrue(wait_for(lambda: sorted(s for _, s in data_files(self.server) - before)
                                 == [stored_size(len(last)), stored_size(len(second))]),
                        data_files(self.server) - before)
        self.assertS3Error(self.complete, "InvalidPart", 400, key, uid, [(1, e_first), (2, e_last)])
        c = self.complete(key, uid, [(1, e_second), (2, e_last)])
        self.assertEqual(c["ETag"], multipart_etag([second, last]))
        self.assertEqual(self.get_body(self.bucket, key), second + last)

    def test_list_parts_paging(self):
        key = "list-parts"
        uid = self.create(key)
        etags = {n: self.part(key, uid, n, f"part {n}".encode()) for n in (1, 2, 3, 5, 8)}
        lp = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid, MaxParts=2)
        self.assertTrue(lp["IsTruncated"])
        self.assertEqual(lp["MaxParts"], 2)
        self.assertEqual(lp["NextPartNumberMarker"], 2)
        self.assertEqual([p["PartNumber"] for p in lp["Parts"]], [1, 2])
        lp = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid, MaxParts=2, PartNumberMarker=2)
        self.assertEqual(lp["PartNumberMarker"], 2)
        self.assertTrue(lp["IsTruncated"])
        self.assertEqual(lp["NextPartNumberMarker"], 5)
        self.assertEqual([p["PartNumber"] for p in lp["Parts"]], [3, 5])
        lp = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid, MaxParts=2, PartNumberMarker=5)
        self.assertFalse(lp["IsTruncated"])
        self.assertEqual([(p["PartNumber"], p["ETag"]) for p in lp["Parts"]], [(8, etags[8])])
        pages = list(self.s3.get_paginator("list_parts").paginate(
            Bucket=self.bucket, Key=key, UploadId=uid, PaginationConfig={"PageSize": 2}))
        self.assertEqual([[p["PartNumber"] for p in pg["Parts"]] for pg in pages], [[1, 2], [3, 5], [8]])
        self.s3.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=uid)

    # ---- ListMultipartUploads -----------------------------------------------------------------
    def test_list_multipart_uploads_paging(self):
        b = self.make_bucket("lmu")
        created = []
        for key in ("a/1", "a/1", "a/1", "a/2", "b/x", "c", "d/e/f"):
            created.append((key, self.create(key, bucket=b)))
            time.sleep(0.002)
        # Sorted by key, then (same key) in the order the uploads were created.
        expected = sorted(created, key=lambda kv: (kv[0], created.index(kv)))
        r = self.s3.list_multipart_uploads(Bucket=b)
        self.assertEqual([(u["Key"], u["UploadId"]) for u in r["Uploads"]], expected)
        self.assertFalse(r["IsTruncated"])
        for u in r["Uploads"]:
            self.assertEqual(u["StorageClass"], "STANDARD")
            self.assertTrue(u["Initiator"]["ID"])
            self.assertTrue(u["Owner"]["ID"])
            self.assertLess(abs(u["Initiated"].timestamp() - time.time()), 120)
        # prefix
        self.assertEqual(self.upload_ids(b, Prefix="a/"), [kv for kv in expected if kv[0].startswith("a/")])
        self.assertEqual(self.upload_ids(b, Prefix="zzz"), [])
        # delimiter
        r = self.s3.list_multipart_uploads(Bucket=b, Delimiter="/")
        self.assertEqual([(u["Key"], u["UploadId"]) for u in r["Uploads"]], [kv for kv in expected if kv[0] == "c"])
        self.assertEqual([p["Prefix"] for p in r["CommonPrefixes"]], ["a/", "b/", "d/"])
        self.assertEqual(r["Delimiter"], "/")
        r = self.s3.list_multipart_uploads(Bucket=b, Prefix="d/", Delimiter="/")
        self.assertEqual(r.get("Uploads", []), [])
        self.assertEqual([p["Prefix"] for p in r["CommonPrefixes"]], ["d/e/"])
        # key-marker alone: uploads of later keys only.
        self.assertEqual(self.upload_ids(b, KeyMarker="a/1"), [kv for kv in expected if kv[0] > "a/1"])
        # key-marker + upload-id-marker: the rest of that key's uploads, then later keys.
        first_a1 = expected[0][1]
        self.assertEqual(self.upload_ids(b, KeyMarker="a/1", UploadIdMarker=first_a1), expected[1:])
        # max-uploads paging by hand: NextKeyMarker / NextUploadIdMarker.
        got, pages = [], 0
        kw = {}
        while True:
            r = self.s3.list_multipart_uploads(Bucket=b, MaxUploads=2, **kw)
            pages += 1
            self.assertEqual(r["MaxUploads"], 2)
            page = [(u["Key"], u["UploadId"]) for u in r.get("Uploads", [])]
            got += page
            if not r["IsTruncated"]:
                break
            self.assertEqual(len(page), 2)
            self.assertEqual((r["NextKeyMarker"], r["NextUploadIdMarker"]), page[-1])
            kw = {"KeyMarker": r["NextKeyMarker"], "UploadIdMarker": r["NextUploadIdMarker"]}
            self.assertLess(pages, 10)
        self.assertEqual(got, expected)
        self.assertEqual(pages, 4)
        # boto3's paginator agrees.
        pages = list(self.s3.get_paginator("list_multipart_uploads").paginate(
            Bucket=b, PaginationConfig={"PageSize": 3}))
        self.assertEqual([(u["Key"], u["UploadId"]) for pg in pages for u in pg.get("Uploads", [])], expected)
        # Completed and aborted uploads leave the listing.
        k, uid = expected[-1]
        e = self.part(k, uid, 1, b"x", bucket=b)
        self.complete(k, uid, [(1, e)], bucket=b)
        k2, uid2 = expected[0]
        self.s3.abort_multipart_upload(Bucket=b, Key=k2, UploadId=uid2)
        self.assertEqual(self.upload_ids(b), expected[1:-1])
        # A bucket with unfinished uploads is not empty... but the uploads go
        # with it only once it is deleted; here just abort the rest.
        for k, uid in expected[1:-1]:
            self.s3.abort_multipart_upload(Bucket=b, Key=k, UploadId=uid)
        self.assertEqual(self.upload_ids(b), [])

    # ---- UploadPartCopy ---------------------------------------------------------------------
    def test_upload_part_copy(self):
        src_bucket = self.make_bucket("upcsrc")
        big = payload(11 * MiB + 5, "upc-big")
        small = payload(1000, "upc-small")
        self.put(src_bucket, "big src", big)
        self.put(src_bucket, "small", small)
        key = "assembled"
        uid = self.create(key)
        r1 = self.s3.upload_part_copy(Bucket=self.bucket, Key=key, UploadId=uid, PartNumber=1,
                                      CopySource={"Bucket": src_bucket, "Key": "big src"},
                                      CopySourceRange=f"bytes=0-{PART - 1}")
        r2 = self.s3.upload_part_copy(Bucket=self.bucket, Key=key, UploadId=uid, PartNumber=2,
                                      CopySource={"Bucket": src_bucket, "Key": "big src"},
                                      CopySourceRange=f"bytes={PART}-{len(big) - 1}")
        # Whole source, no range (the last part: it may be small).
        r4 = self.s3.upload_part_copy(Bucket=self.bucket, Key=key, UploadId=uid, PartNumber=4,
                                      CopySource=f"{src_bucket}/small")
        for r, piece in zip((r1, r2, r4), (big[:PART], big[PART:], small)):
            self.assertEqual(r["CopyPartResult"]["ETag"], quoted(md5_hex(piece)))
            self.assertIn("LastModified", r["CopyPartResult"])
        # Copied parts mix with uploaded ones.
        uploaded = payload(PART, "upc-uploaded")
        e3 = self.part(key, uid, 3, uploaded)
        lp = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid)
        self.assertEqual([(p["PartNumber"], p["Size"]) for p in lp["Parts"]],
                         [(1, PART), (2, len(big) - PART), (3, PART), (4, 1000)])
        # Errors.
        cases = [
            ("range past the end", "InvalidRange", (400, 416),
             dict(CopySource=f"{src_bucket}/small", CopySourceRange="bytes=0-1000")),
            ("range reversed", "InvalidArgument", (400,),
             dict(CopySource=f"{src_bucket}/small", CopySourceRange="bytes=10-5")),
            ("range garbage", "InvalidArgument", (400,),
             dict(CopySource=f"{src_bucket}/small", CopySourceRange="bytes=abc")),
            ("missing source key", "NoSuchKey", (404,), dict(CopySource=f"{src_bucket}/nope")),
            ("missing source bucket", "NoSuchBucket", (404,), dict(CopySource=f"{self.bucket_name('x')}/k")),
            ("source if-match fails", "PreconditionFailed", (412,),
             dict(CopySource=f"{src_bucket}/small", CopySourceIfMatch='"%s"' % ("f" * 32))),
            ("source if-none-match fails", "PreconditionFailed", (412,),
             dict(CopySource=f"{src_bucket}/small", CopySourceIfNoneMatch=quoted(md5_hex(small)))),
        ]
        for name, code, statuses, kw in cases:
            with self.subTest(name):
                from botocore.exceptions import ClientError
                with self.assertRaises(ClientError) as cm:
                    self.s3.upload_part_copy(Bucket=self.bucket, Key=key, UploadId=uid, PartNumber=9, **kw)
                resp = cm.exception.response
                self.assertEqual(resp["Error"]["Code"], code, resp)
                self.assertIn(resp["ResponseMetadata"]["HTTPStatusCode"], statuses, resp)
        for bad in (0, 10001):
            self.assertS3Error(self.s3.upload_part_copy, "InvalidArgument", 400, Bucket=self.bucket, Key=key,
                               UploadId=uid, PartNumber=bad, CopySource=f"{src_bucket}/small")
        lp = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid)
        self.assertEqual([p["PartNumber"] for p in lp["Parts"]], [1, 2, 3, 4])
        c = self.complete(key, uid, [(1, r1["CopyPartResult"]["ETag"]), (2, r2["CopyPartResult"]["ETag"]),
                                     (3, e3), (4, r4["CopyPartResult"]["ETag"])])
        self.assertEqual(c["ETag"], multipart_etag([big[:PART], big[PART:], uploaded, small]))
        self.assertEqual(self.get_body(self.bucket, key), big + uploaded + small)

    # ---- conditional complete ------------------------------------------------------------------
    def test_conditional_complete(self):
        key = "cond-complete"
        self.put(self.bucket, key, b"already here")
        old_etag = quoted(md5_hex(b"already here"))
        uid = self.create(key)
        e = self.part(key, uid, 1, b"new content")
        with extra_headers(self.s3, "CompleteMultipartUpload", {"If-None-Match": "*"}):
            self.assertS3Error(self.complete, "PreconditionFailed", 412, key, uid, [(1, e)])
        self.assertEqual(self.get_body(self.bucket, key), b"already here")
        with extra_headers(self.s3, "CompleteMultipartUpload", {"If-Match": quoted("0" * 32)}):
            self.assertS3Error(self.complete, "PreconditionFailed", 412, key, uid, [(1, e)])
        self.assertEqual(self.get_body(self.bucket, key), b"already here")
        # The failed attempts left the upload in place.
        self.assertEqual(len(self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid)["Parts"]), 1)
        with extra_headers(self.s3, "CompleteMultipartUpload", {"If-Match": old_etag}):
            c = self.complete(key, uid, [(1, e)])
        self.assertEqual(c["ETag"], multipart_etag([b"new content"]))
        self.assertEqual(self.get_body(self.bucket, key), b"new content")
        # If-None-Match: * on a new key succeeds; If-Match on a missing key is 404 NoSuchKey.
        uid = self.create("cond-new")
        e = self.part("cond-new", uid, 1, b"fresh")
        with extra_headers(self.s3, "CompleteMultipartUpload", {"If-Match": quoted(md5_hex(b"fresh"))}):
            self.assertS3Error(self.complete, "NoSuchKey", 404, "cond-new", uid, [(1, e)])
        with extra_headers(self.s3, "CompleteMultipartUpload", {"If-None-Match": "*"}):
            self.complete("cond-new", uid, [(1, e)])
        self.assertEqual(self.get_body(self.bucket, "cond-new"), b"fresh")

    def test_conditional_complete_race(self):
        """Two uploads of the same new key completed at once with
        If-None-Match: *: exactly one wins, each time."""
        for rnd in range(5):
            key = f"complete-race-{rnd}"
            reqs = []
            for w in range(2):
                uid = self.create(key)
                e = self.part(key, uid, 1, f"writer {w}".encode())
                body = (f"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{e}</ETag></Part>"
                        "</CompleteMultipartUpload>").encode()
                reqs.append(rawhttp.sign(self.server.port, "POST", f"/{self.bucket}/{key}",
                                         query=f"uploadId={uid}", headers={"If-None-Match": "*"}, body=body))
            results = race(self.server.port, reqs)
            statuses = sorted(r.status for r in results)
            self.assertEqual(statuses, [200, 412], results)
            winner = [i for i, r in enumerate(results) if r.status == 200][0]
            self.assertEqual(results[1 - winner].error_code, "PreconditionFailed")
            self.assertEqual(self.get_body(self.bucket, key), f"writer {winner}".encode())

    # ---- s3api -------------------------------------------------------------------------------
    def aws(self, *args):
        p = self.server.aws(self.home, *args, check=False)
        self.assertEqual(p.returncode, 0, f"aws {args}: {p.stdout}\n{p.stderr}")
        return json.loads(p.stdout) if p.stdout.strip() else {}

    def test_aws_s3api_multipart(self):
        b = self.bucket
        key = "s3api/obj.bin"
        work = tempfile.mkdtemp(dir=self.home)
        self.addCleanup(shutil.rmtree, work, True)
        p1 = os.path.join(work, "p1")
        d1 = payload(PART, "api1")
        with open(p1, "wb") as f:
            f.write(d1)
        uid = self.aws("s3api", "create-multipart-upload", "--bucket", b, "--key", key,
                       "--content-type", "text/x-api")["UploadId"]
        lu = self.aws("s3api", "list-multipart-uploads", "--bucket", b, "--prefix", "s3api/")
        self.assertEqual([(u["Key"], u["UploadId"]) for u in lu["Uploads"]], [(key, uid)])
        e1 = self.aws("s3api", "upload-part", "--bucket", b, "--key", key, "--upload-id", uid,
                      "--part-number", "1", "--body", p1)["ETag"]
        self.assertEqual(e1, quoted(md5_hex(d1)))
        self.put(b, "s3api/src", b"copied into part 2")
        e2 = self.aws("s3api", "upload-part-copy", "--bucket", b, "--key", key, "--upload-id", uid,
                      "--part-number", "2", "--copy-source", f"{b}/s3api/src",
                      "--copy-source-range", "bytes=0-5")["CopyPartResult"]["ETag"]
        self.assertEqual(e2, quoted(md5_hex(b"copied")))
        lp = self.aws("s3api", "list-parts", "--bucket", b, "--key", key, "--upload-id", uid)
        self.assertEqual([(p["PartNumber"], p["Size"], p["ETag"]) for p in lp["Parts"]],
                         [(1, PART, e1), (2, 6, e2)])
        parts = json.dumps({"Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
        c = self.aws("s3api", "complete-multipart-upload", "--bucket", b, "--key", key, "--upload-id", uid,
                     "--multipart-upload", parts)
        self.assertEqual((c["Bucket"], c["Key"], c["ETag"]), (b, key, multipart_etag([d1, b"copied"])))
        h = self.s3.head_object(Bucket=b, Key=key)
        self.assertEqual((h["ContentLength"], h["ContentType"]), (PART + 6, "text/x-api"))
        self.assertEqual(self.get_body(b, key), d1 + b"copied")
        # abort
        uid = self.create("s3api/aborted")
        self.aws("s3api", "abort-multipart-upload", "--bucket", b, "--key", "s3api/aborted", "--upload-id", uid)
        self.assertNoUpload("s3api/aborted", uid)


class MultipartClientsTest(ServerTestCase):
    """aws cli, rclone, s3cmd and boto3's transfer manager uploading and
    downloading in parallel parts."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for k, v in (("default.s3.multipart_threshold", "8MB"), ("default.s3.multipart_chunksize", "8MB"),
                     ("default.s3.max_concurrent_requests", "8")):
            cls.server.aws(cls.home, "configure", "set", k, v)

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="strata-mpc-", dir=self.home)
        self.addCleanup(shutil.rmtree, self.work, True)

    def tearDown(self):
        self.assertServerHealthy()

    def path(self, *p):
        return os.path.join(self.work, *p)

    def run_ok(self, p, what):
        self.assertEqual(p.returncode, 0, f"{what}: {p.stdout}\n{p.stderr}")
        return p

    def no_uploads_left(self, bucket):
        self.assertEqual(self.s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []), [])

    def test_aws_s3_cp_200mib_multipart(self):
        b = self.make_bucket("awsmp")
        src = self.path("big.bin")
        digest = write_random_file(src, 200 * MiB)
        self.run_ok(self.server.aws(self.home, "s3", "cp", "--no-progress", src, f"s3://{b}/big.bin",
                                    check=False), "aws s3 cp up")
        h = self.s3.head_object(Bucket=b, Key="big.bin")
        self.assertEqual(h["ContentLength"], 200 * MiB)
        # 8 MiB parts: 25 of them.
        self.assertEqual(h["ETag"], multipart_etag_of_file(src, 8 * MiB))
        self.no_uploads_left(b)
        dst = self.path("big.down")
        self.run_ok(self.server.aws(self.home, "s3", "cp", "--no-progress", f"s3://{b}/big.bin", dst,
                                    check=False), "aws s3 cp down")
        self.assertEqual(os.path.getsize(dst), 200 * MiB)
        self.assertEqual(sha256_file(dst), digest)

    def test_aws_s3_sync_multipart(self):
        b = self.make_bucket("awssync")
        src = self.path("src")
        os.makedirs(os.path.join(src, "sub"))
        sizes = {"a.bin": 20 * MiB + 1, "sub/b.bin": 9 * MiB, "sub/c.txt": 1000, "d.bin": 8 * MiB}
        old = time.time() - 3600
        for rel, size in sizes.items():
            write_random_file(os.path.join(src, rel), size)
            os.utime(os.path.join(src, rel), (old, old))
        self.run_ok(self.server.aws(self.home, "s3", "sync", "--no-progress", src, f"s3://{b}/m", check=False),
                    "sync up")
        for rel in sizes:
            h = self.s3.head_object(Bucket=b, Key=f"m/{rel}")
            self.assertEqual(h["ContentLength"], sizes[rel])
            if sizes[rel] >= 8 * MiB:
                self.assertEqual(h["ETag"], multipart_etag_of_file(os.path.join(src, rel), 8 * MiB), rel)
            else:
                with open(os.path.join(src, rel), "rb") as f:
                    self.assertEqual(h["ETag"], quoted(md5_hex(f.read())))
        # Nothing changed: nothing to do.
        p = self.run_ok(self.server.aws(self.home, "s3", "sync", "--no-progress", src, f"s3://{b}/m",
                                        check=False), "sync again")
        self.assertEqual(p.stdout.strip(), "")
        # Change a big file (new size): only it goes up again.
        write_random_file(os.path.join(src, "a.bin"), 17 * MiB)
        p = self.run_ok(self.server.aws(self.home, "s3", "sync", "--no-progress", src, f"s3://{b}/m",
                                        check=False), "sync changed")
        self.assertEqual(len([ln for ln in p.stdout.splitlines() if ln.startswith("upload:")]), 1, p.stdout)
        dst = self.path("dst")
        self.run_ok(self.server.aws(self.home, "s3", "sync", "--no-progress", f"s3://{b}/m", dst, check=False),
                    "sync down")
        self.assertEqual(tree_digest(dst), tree_digest(src))
        self.no_uploads_left(b)

    def test_rclone_multipart_copy_sync_check(self):
        b = self.make_bucket("rcmp")
        src = self.path("src")
        os.makedirs(os.path.join(src, "d"))
        sizes = {"big.bin": 23 * MiB + 17, "d/mid.bin": 12 * MiB, "d/small.txt": 4000}
        for rel, size in sizes.items():
            write_random_file(os.path.join(src, rel), size)
        flags = ["--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M", "--s3-upload-concurrency", "4",
                 "--transfers", "2", "--low-level-retries", "1", "--retries", "1"]

        def rclone(*args, check=True):
            p = self.server.rclone(self.home, *flags, *args, check=False)
            if check:
                self.run_ok(p, f"rclone {args}")
            return p

        rclone("copy", src, f"strata:{b}/data")
        h = self.s3.head_object(Bucket=b, Key="data/big.bin")
        self.assertEqual(h["ContentLength"], sizes["big.bin"])
        self.assertEqual(h["ETag"], multipart_etag_of_file(os.path.join(src, "big.bin"), 5 * MiB))
        self.assertTrue(h["ETag"].endswith('-5"'), h["ETag"])
        h = self.s3.head_object(Bucket=b, Key="data/d/mid.bin")
        self.assertEqual(h["ETag"], multipart_etag_of_file(os.path.join(src, "d/mid.bin"), 5 * MiB))
        # check with hashes: rclone keeps the MD5 of multipart uploads in metadata.
        p = rclone("check", src, f"strata:{b}/data")
        self.assertIn("0 differences found", p.stderr)
        self.assertIn("3 matching files", p.stderr)
        # sync after a change and a deletion.
        write_random_file(os.path.join(src, "d/mid.bin"), 11 * MiB)
        os.remove(os.path.join(src, "d/small.txt"))
        p = rclone("check", src, f"strata:{b}/data", check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        rclone("sync", src, f"strata:{b}/data")
        keys = {o["Key"]: o["Size"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]}
        self.assertEqual(keys, {"data/big.bin": sizes["big.bin"], "data/d/mid.bin": 11 * MiB})
        p = rclone("check", src, f"strata:{b}/data")
        self.assertIn("0 differences found", p.stderr)
        dst = self.path("dst")
        rclone("copy", f"strata:{b}/data", dst)
        self.assertEqual(tree_digest(dst), tree_digest(src))
        self.no_uploads_left(b)

    def test_s3cmd_multipart_put_get(self):
        b = self.make_bucket("s3cmp")
        src = self.path("s3cmd.bin")
        digest = write_random_file(src, 17 * MiB + 3)
        self.run_ok(self.server.s3cmd(self.home, "put", "--multipart-chunk-size-mb=5", src,
                                      f"s3://{b}/s3cmd.bin", check=False), "s3cmd put")
        h = self.s3.head_object(Bucket=b, Key="s3cmd.bin")
        self.assertEqual(h["ContentLength"], 17 * MiB + 3)
        self.assertEqual(h["ETag"], multipart_etag_of_file(src, 5 * MiB))
        dst = self.path("s3cmd.down")
        self.run_ok(self.server.s3cmd(self.home, "get", f"s3://{b}/s3cmd.bin", dst, check=False), "s3cmd get")
        self.assertEqual(sha256_file(dst), digest)
        # s3cmd lists and aborts unfinished uploads too.
        uid = self.s3.create_multipart_upload(Bucket=b, Key="unfinished")["UploadId"]
        p = self.run_ok(self.server.s3cmd(self.home, "multipart", f"s3://{b}", check=False), "s3cmd multipart")
        self.assertIn(uid, p.stdout)
        self.run_ok(self.server.s3cmd(self.home, "abortmp", f"s3://{b}/unfinished", uid, check=False),
                    "s3cmd abortmp")
        self.no_uploads_left(b)

    def test_boto3_transfer_manager(self):
        from boto3.s3.transfer import TransferConfig
        b = self.make_bucket("xfer")
        src = self.path("xfer.bin")
        digest = write_random_file(src, 41 * MiB)
        cfg = TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB, max_concurrency=8)
        client = self.server.boto3_client(max_pool_connections=16)
        try:
            client.upload_file(src, b, "xfer.bin", Config=cfg)
            h = client.head_object(Bucket=b, Key="xfer.bin")
            self.assertEqual(h["ETag"], multipart_etag_of_file(src, 5 * MiB))
            dst = self.path("xfer.down")
            client.download_file(b, "xfer.bin", dst, Config=cfg)
        finally:
            client.close()
        self.assertEqual(sha256_file(dst), digest)
        self.no_uploads_left(b)


if __name__ == "__main__":
    import unittest
    unittest.main()

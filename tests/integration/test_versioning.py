"""S3 Versioning (issue 11): Put/GetBucketVersioning, version ids on every
response AWS sends them on, the null version and suspended buckets, delete
markers (404 / 405 with x-amz-delete-marker, undelete by deleting the marker),
every by-versionId operation (GET with Range / conditionals / partNumber,
HEAD, DELETE, CopyObject and UploadPartCopy sources, tagging, attributes),
DeleteObjects with versions. Listing (ListObjectVersions against a model,
ListObjects) and aws s3api / rclone: test_versioning_listing.py.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_versioning.py -v
"""
import concurrent.futures
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


from harness import parse_xml  # noqa: E402
from s3util import PART, multipart_etag, payload  # noqa: E402
from versioning_util import (FastClient, VersioningCase, etag_of, list_versions_all,  # noqa: E402
                             content_md5, list_versions_page, md5_hex)

VERSIONING_XML = ('<VersioningConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                  '{}</VersioningConfiguration>')


# ==========================================================================
class BucketVersioningConfigTest(VersioningCase):
    def get_raw(self, bucket):
        r = self.fc.request("GET", f"/{bucket}", query="versioning")
        self.assertEqual(r.status, 200, r)
        root = parse_xml(r.body)
        self.assertEqual(root.tag, "VersioningConfiguration", r.body)
        return root

    def put_raw(self, bucket, inner):
        body = VERSIONING_XML.format(inner).encode()
        md5 = content_md5(body)
        return self.fc.request("PUT", f"/{bucket}", query="versioning", body=body,
                               headers={"Content-MD5": md5})

    def test_never_versioned_bucket_has_no_status(self):
        b = self.make_bucket("nover")
        r = self.s3.get_bucket_versioning(Bucket=b)
        self.assertNotIn("Status", r)
        self.assertNotIn("MFADelete", r)
        root = self.get_raw(b)
        self.assertIsNone(root.find("Status"))
        self.assertEqual(len(list(root)), 0)

    def test_enable_suspend_enable(self):
        b = self.make_bucket("cfg")
        for status in ("Enabled", "Suspended", "Enabled", "Suspended"):
            with self.subTest(status):
                self.set_versioning(b, status)
                self.assertEqual(self.s3.get_bucket_versioning(Bucket=b).get("Status"), status)
                self.assertEqual(self.get_raw(b).findtext("Status"), status)

    def test_bad_status_is_malformed_xml(self):
        b = self.make_bucket("badst")
        self.set_versioning(b, "Enabled")
        for inner in ("<Status>On</Status>", "<Status>Disabled</Status>", "<Status></Status>",
                      "<Status>Enabled"):
            with self.subTest(inner):
                r = self.put_raw(b, inner)
                self.assertEqual((r.status, r.error_code), (400, "MalformedXML"), r)
                self.assertEqual(self.s3.get_bucket_versioning(Bucket=b).get("Status"), "Enabled")
        # boto3 sends whatever it is given.
        self.assertS3Error(self.s3.put_bucket_versioning, "MalformedXML", 400, Bucket=b,
                           VersioningConfiguration={"Status": "Paused"})
        # A bad document leaves a never-versioned bucket never-versioned.
        b2 = self.make_bucket("badst2")
        r = self.put_raw(b2, "<Status>On</Status>")
        self.assertEqual(r.status, 400, r)
        self.assertNotIn("Status", self.s3.get_bucket_versioning(Bucket=b2))

    def test_mfa_delete_not_supported(self):
        b = self.make_bucket("mfa")
        r = self.put_raw(b, "<Status>Enabled</Status><MfaDelete>Enabled</MfaDelete>")
        self.assertEqual(r.status, 400, r)
        self.assertIsNotNone(r.error_code, r)
        self.assertNotIn("Status", self.s3.get_bucket_versioning(Bucket=b))
        self.set_versioning(b, "Suspended")
        r = self.put_raw(b, "<Status>Enabled</Status><MfaDelete>Enabled</MfaDelete>")
        self.assertEqual(r.status, 400, r)
        self.assertEqual(self.s3.get_bucket_versioning(Bucket=b).get("Status"), "Suspended")

    def test_missing_bucket(self):
        nob = self.bucket_name("nob")
        self.assertS3Error(self.s3.get_bucket_versioning, "NoSuchBucket", 404, Bucket=nob)
        self.assertS3Error(self.s3.put_bucket_versioning, "NoSuchBucket", 404, Bucket=nob,
                           VersioningConfiguration={"Status": "Enabled"})
        r = self.fc.request("GET", f"/{nob}", query="versions")
        self.assertEqual((r.status, r.error_code), (404, "NoSuchBucket"), r)


# ==========================================================================
class VersionedObjectsTest(VersioningCase):
    def test_never_versioned_bucket_sends_no_version_id(self):
        b = self.make_bucket("plain")
        for name, r in (("PUT", self.fc.put(b, "k", b"one")), ("PUT again", self.fc.put(b, "k", b"two")),
                        ("GET", self.fc.get(b, "k")), ("HEAD", self.fc.head(b, "k")),
                        ("COPY", self.fc.request("PUT", f"/{b}/k2",
                                                 headers={"x-amz-copy-source": f"/{b}/k"}))):
            with self.subTest(name):
                self.assertEqual(r.status, 200, r)
                self.assertIsNone(r.header("x-amz-version-id"), r)
        uid = self.s3.create_multipart_upload(Bucket=b, Key="mp")["UploadId"]
        e = self.s3.upload_part(Bucket=b, Key="mp", UploadId=uid, PartNumber=1, Body=b"p")["ETag"]
        done = self.s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=uid,
                                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e}]})
        self.assertNotIn("VersionId", done)
        self.assertNotIn("x-amz-version-id", done["ResponseMetadata"]["HTTPHeaders"])
        # ListObjectVersions of an unversioned bucket: one "null" version per key.
        page = list_versions_page(self.fc, b)
        self.assertEqual([(e.kind, e.key, e.version_id, e.is_latest, e.etag) for e in page.entries],
                         [("V", "k", "null", "true", etag_of(b"two")),
                          ("V", "k2", "null", "true", etag_of(b"two")),
                          ("V", "mp", "null", "true", multipart_etag([b"p"]))])
        r = self.fc.delete(b, "k")
        self.assertEqual(r.status, 204, r)
        self.assertIsNone(r.header("x-amz-version-id"), r)
        self.assertIsNone(r.header("x-amz-delete-marker"), r)
        self.assertEqual(self.fc.get(b, "k").status, 404)
        self.assertEqual(self.versions(b), [("V", "k2", "null", "true"), ("V", "mp", "null", "true")])
        r = self.s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "k2"}]})
        self.assertEqual([sorted(d) for d in r["Deleted"]], [["Key"]], r["Deleted"])

    def test_put_creates_versions(self):
        b = self.versioned_bucket()
        bodies = [b"first", b"second version", b""]
        vids = [self.put_vid(b, "obj", body) for body in bodies]
        for v in vids:
            self.assertValidVersionId(v)
        self.assertEqual(len(set(vids)), 3, vids)
        r = self.fc.get(b, "obj")
        self.assertEqual((r.status, r.body, r.header("x-amz-version-id")), (200, b"", vids[2]))
        for vid, body in zip(vids, bodies):
            with self.subTest(vid=vid):
                r = self.fc.get(b, "obj", version_id=vid)
                self.assertEqual((r.status, r.body), (200, body), r)
                self.assertEqual(r.header("x-amz-version-id"), vid)
                self.assertEqual(r.header("etag"), etag_of(body))
                h = self.fc.head(b, "obj", version_id=vid)
                self.assertEqual((h.status, h.header("content-length"), h.header("etag"),
                                  h.header("x-amz-version-id")), (200, str(len(body)), etag_of(body), vid))
                g = self.s3.get_object(Bucket=b, Key="obj", VersionId=vid)
                self.assertEqual((g["Body"].read(), g["VersionId"]), (body, vid))
        page = list_versions_page(self.fc, b)
        self.assertEqual([(e.kind, e.key, e.version_id, e.is_latest, e.etag, e.size) for e in page.entries],
                         [("V", "obj", vids[2], "true", etag_of(b""), 0),
                          ("V", "obj", vids[1], "false", etag_of(bodies[1]), len(bodies[1])),
                          ("V", "obj", vids[0], "false", etag_of(bodies[0]), len(bodies[0]))])
        self.assertFalse(page.truncated)
        lv = self.s3.list_object_versions(Bucket=b)
        self.assertEqual([(v["VersionId"], v["IsLatest"]) for v in lv["Versions"]],
                         [(vids[2], True), (vids[1], False), (vids[0], False)])
        self.assertNotIn("DeleteMarkers", lv)
        # boto3's own response field.
        r = self.s3.put_object(Bucket=b, Key="obj", Body=b"fourth")
        self.assertValidVersionId(r["VersionId"])
        self.assertNotIn(r["VersionId"], vids)

    def test_version_ids_unique_and_newest_first_under_concurrency(self):
        b = self.versioned_bucket("conc")
        lock = threading.Lock()
        records = []

        def writer(tid):
            c = FastClient(self.server.port)
            try:
                for n in range(25):
                    body = f"t{tid}-n{n}".encode()
                    start = time.monotonic()
                    r = c.put(b, "hot", body)
                    end = time.monotonic()
                    if r.status != 200:
                        raise AssertionError(r)
                    with lock:
                        records.append((start, end, r.header("x-amz-version-id"), body))
            finally:
                c.close()

        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            for f in [ex.submit(writer, t) for t in range(8)]:
                f.result()
        vids = [r[2] for r in records]
        self.assertEqual(len(set(vids)), 200, "version ids not unique")
        for v in vids:
            self.assertValidVersionId(v)
        listed = self.versions(b)
        self.assertEqual(sorted(v for _, _, v, _ in listed), sorted(vids))
        self.assertEqual([latest for *_, latest in listed], ["true"] + ["false"] * 199)
        pos = {v: i for i, (_, _, v, _) in enumerate(listed)}
        wrong = [(a[2], c[2]) for a in records for c in records
                 if a[1] < c[0] and not pos[c[2]] < pos[a[2]]]
        self.assertEqual(wrong[:5], [], "a PUT acknowledged before another started must be listed "
                                        "after it (older)")
        newest = listed[0][2]
        self.assertEqual(self.fc.get(b, "hot").body, next(r[3] for r in records if r[2] == newest))

    def test_delete_marker_lifecycle(self):
        b = self.versioned_bucket("dm")
        v1 = self.put_vid(b, "doc", b"content one")
        m1 = self.delete_marker(b, "doc")
        self.assertNotEqual(m1, v1)
        with self.subTest("GET latest marker -> 404 NoSuchKey with x-amz-delete-marker"):
            r = self.fc.get(b, "doc")
            self.assertEqual((r.status, r.error_code), (404, "NoSuchKey"), r)
            self.assertEqual(r.header("x-amz-delete-marker"), "true", r)
            self.assertEqual(r.header("x-amz-version-id"), m1, r)
        with self.subTest("HEAD latest marker -> 404 without body"):
            r = self.fc.head(b, "doc")
            self.assertEqual((r.status, r.body), (404, b""), r)
            self.assertEqual(r.header("x-amz-delete-marker"), "true", r)
            self.assertEqual(r.header("x-amz-version-id"), m1, r)
        with self.subTest("GET/HEAD marker by versionId -> 405 MethodNotAllowed"):
            r = self.fc.get(b, "doc", version_id=m1)
            self.assertEqual((r.status, r.error_code), (405, "MethodNotAllowed"), r)
            self.assertEqual(r.header("x-amz-delete-marker"), "true", r)
            r = self.fc.head(b, "doc", version_id=m1)
            self.assertEqual((r.status, r.body), (405, b""), r)
            self.assertEqual(r.header("x-amz-delete-marker"), "true", r)
        with self.subTest("boto3 sees NoSuchKey"):
            resp = self.assertS3Error(self.s3.get_object, "NoSuchKey", 404, Bucket=b, Key="doc")
            self.assertEqual(resp["ResponseMetadata"]["HTTPHeaders"].get("x-amz-delete-marker"), "true")
        r = self.fc.get(b, "doc", version_id=v1)
        self.assertEqual((r.status, r.body), (200, b"content one"), r)
        self.assertIsNone(r.header("x-amz-delete-marker"))
        self.assertEqual(self.s3.list_objects_v2(Bucket=b).get("KeyCount"), 0)
        self.assertNotIn("Contents", self.s3.list_objects(Bucket=b))
        self.assertEqual(self.versions(b), [("M", "doc", m1, "true"), ("V", "doc", v1, "false")])
        # A second DELETE adds a second marker.
        m2 = self.delete_marker(b, "doc")
        self.assertNotIn(m2, (m1, v1))
        self.assertEqual(self.versions(b), [("M", "doc", m2, "true"), ("M", "doc", m1, "false"),
                                            ("V", "doc", v1, "false")])
        lv = self.s3.list_object_versions(Bucket=b)
        self.assertEqual([(m["VersionId"], m["IsLatest"]) for m in lv["DeleteMarkers"]],
                         [(m2, True), (m1, False)])
        # Deleting the newest marker: the older marker is current again, still 404.
        r = self.fc.delete(b, "doc", version_id=m2)
        self.assertEqual(r.status, 204, r)
        self.assertEqual((r.header("x-amz-delete-marker"), r.header("x-amz-version-id")), ("true", m2), r)
        r = self.fc.get(b, "doc")
        self.assertEqual((r.status, r.header("x-amz-version-id")), (404, m1), r)
        # Deleting the last marker undeletes.
        r = self.fc.delete(b, "doc", version_id=m1)
        self.assertEqual((r.status, r.header("x-amz-delete-marker"), r.header("x-amz-version-id")),
                         (204, "true", m1), r)
        r = self.fc.get(b, "doc")
        self.assertEqual((r.status, r.body, r.header("x-amz-version-id")), (200, b"content one", v1), r)
        self.assertEqual([o["Key"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]], ["doc"])
        self.assertEqual(self.versions(b), [("V", "doc", v1, "true")])
        # boto3 fields of a DELETE that made a marker.
        d = self.s3.delete_object(Bucket=b, Key="doc")
        self.assertEqual(d["DeleteMarker"], True)
        self.assertValidVersionId(d["VersionId"])

    def test_delete_of_missing_key_makes_a_marker(self):
        b = self.versioned_bucket("dmnew")
        m = self.delete_marker(b, "never-written")
        self.assertEqual(self.versions(b), [("M", "never-written", m, "true")])
        r = self.fc.get(b, "never-written")
        self.assertEqual((r.status, r.error_code, r.header("x-amz-delete-marker")), (404, "NoSuchKey", "true"))

    def test_delete_specific_version(self):
        b = self.versioned_bucket("dv")
        v1, v2, v3 = (self.put_vid(b, "k", f"body {i}".encode()) for i in (1, 2, 3))
        r = self.fc.delete(b, "k", version_id=v2)
        self.assertEqual((r.status, r.header("x-amz-version-id")), (204, v2), r)
        self.assertNotEqual(r.header("x-amz-delete-marker"), "true", r)
        self.assertEqual(self.versions(b), [("V", "k", v3, "true"), ("V", "k", v1, "false")])
        r = self.fc.get(b, "k", version_id=v2)
        self.assertEqual((r.status, r.error_code), (404, "NoSuchVersion"), r)
        self.assertEqual(self.fc.get(b, "k").body, b"body 3")
        # Deleting the latest version makes the next older one current.
        d = self.s3.delete_object(Bucket=b, Key="k", VersionId=v3)
        self.assertEqual(d["VersionId"], v3)
        self.assertFalse(d.get("DeleteMarker", False), d)
        r = self.fc.get(b, "k")
        self.assertEqual((r.status, r.body, r.header("x-amz-version-id")), (200, b"body 1", v1))
        self.assertEqual(self.versions(b), [("V", "k", v1, "true")])
        listed = self.s3.list_objects_v2(Bucket=b)["Contents"]
        self.assertEqual([(o["Key"], o["Size"], o["ETag"]) for o in listed], [("k", 6, etag_of(b"body 1"))])
        # And the last one: the key is gone, no marker is left.
        self.assertEqual(self.fc.delete(b, "k", version_id=v1).status, 204)
        self.assertEqual(self.versions(b), [])
        r = self.fc.get(b, "k")
        self.assertEqual(r.status, 404, r)
        self.assertIsNone(r.header("x-amz-delete-marker"), r)

    def test_delete_of_nonexistent_version_is_204(self):
        b = self.versioned_bucket("dnx")
        va = self.put_vid(b, "a", b"a")
        vb = self.put_vid(b, "b", b"b")
        r = self.fc.delete(b, "a", version_id=vb)  # well formed, not a version of "a"
        self.assertEqual(r.status, 204, r)
        r = self.fc.delete(b, "no-such-key", version_id=vb)
        self.assertEqual(r.status, 204, r)
        self.assertEqual(self.versions(b), [("V", "a", va, "true"), ("V", "b", vb, "true")])

    def test_malformed_and_unknown_version_ids(self):
        vb_ = self.versioned_bucket("badv")
        plain = self.make_bucket("badvp")
        vid = self.put_vid(vb_, "k", b"data")
        other = self.put_vid(vb_, "other", b"x")
        self.assertEqual(self.fc.put(plain, "k", b"data").status, 200)
        for bucket in (vb_, plain):
            for method in ("GET", "HEAD", "DELETE"):
                with self.subTest(bucket=bucket, method=method):
                    r = self.fc.obj(method, bucket, "k", version_id="not-a-version!")
                    self.assertEqual(r.status, 400, r)
                    if method != "HEAD":
                        self.assertEqual(r.error_code, "InvalidArgument", r)
        for name, bad in (("empty", ""), ("space", "a b"), ("slash", "a/b")):
            with self.subTest(f"GET with a {name} version id"):
                r = self.fc.get(vb_, "k", version_id=bad)
                self.assertEqual((r.status, r.error_code), (400, "InvalidArgument"), r)
        r = self.fc.get(vb_, "k", version_id="a" * 2000)
        self.assertIn((r.status, r.error_code), [(400, "InvalidArgument"), (404, "NoSuchVersion")], r)
        with self.subTest("?versionId without a value (the empty string)"):
            r = self.fc.request("GET", f"/{vb_}/k", query="versionId")
            self.assertEqual((r.status, r.error_code), (400, "InvalidArgument"), r)
        self.assertEqual(self.fc.get(vb_, "k").body, b"data")
        self.assertEqual(self.fc.get(plain, "k").body, b"data")
        for method in ("GET", "HEAD"):
            with self.subTest(f"{method} of a well-formed unknown version"):
                r = self.fc.obj(method, vb_, "k", version_id=other)
                self.assertEqual(r.status, 404, r)
                if method == "GET":
                    self.assertEqual(r.error_code, "NoSuchVersion", r)
        self.assertS3Error(self.s3.get_object, "NoSuchVersion", 404, Bucket=vb_, Key="k", VersionId=other)
        self.assertEqual(self.versions(vb_), [("V", "k", vid, "true"), ("V", "other", other, "true")])

    def test_get_by_version_with_range_conditionals_and_part_number(self):
        b = self.versioned_bucket("rng")
        parts = [payload(PART, "vrng1"), payload(100, "vrng2")]
        uid = self.s3.create_multipart_upload(Bucket=b, Key="big")["UploadId"]
        done = [{"PartNumber": n, "ETag": self.s3.upload_part(Bucket=b, Key="big", UploadId=uid, PartNumber=n,
                                                              Body=p)["ETag"]}
                for n, p in enumerate(parts, 1)]
        c = self.s3.complete_multipart_upload(Bucket=b, Key="big", UploadId=uid, MultipartUpload={"Parts": done})
        v1, etag1 = c["VersionId"], c["ETag"]
        self.assertValidVersionId(v1)
        self.assertEqual(etag1, multipart_etag(parts))
        v2 = self.put_vid(b, "big", b"small latest")
        data = b"".join(parts)
        g = self.s3.get_object(Bucket=b, Key="big", VersionId=v1, Range="bytes=5-14")
        self.assertEqual((g["ResponseMetadata"]["HTTPStatusCode"], g["Body"].read(), g["ContentRange"],
                          g["VersionId"]), (206, data[5:15], f"bytes 5-14/{len(data)}", v1))
        g = self.s3.get_object(Bucket=b, Key="big", VersionId=v1, Range="bytes=-3")
        self.assertEqual(g["Body"].read(), data[-3:])
        g = self.s3.get_object(Bucket=b, Key="big", VersionId=v1, IfMatch=etag1)
        self.assertEqual(len(g["Body"].read()), len(data))
        self.assertS3Error(self.s3.get_object, "PreconditionFailed", 412, Bucket=b, Key="big", VersionId=v1,
                           IfMatch=etag_of(b"small latest"))
        r = self.fc.get(b, "big", version_id=v1, headers={"If-None-Match": etag1})
        self.assertEqual(r.status, 304, r)
        r = self.fc.get(b, "big", version_id=v2, headers={"If-None-Match": etag1})
        self.assertEqual((r.status, r.body), (200, b"small latest"), r)
        g = self.s3.get_object(Bucket=b, Key="big", VersionId=v1, PartNumber=2)
        self.assertEqual((g["Body"].read(), g["PartsCount"], g["ContentRange"]),
                         (parts[1], 2, f"bytes {PART}-{PART + 99}/{len(data)}"))
        h = self.s3.head_object(Bucket=b, Key="big", VersionId=v1, PartNumber=1)
        self.assertEqual((h["ContentLength"], h["PartsCount"], h["VersionId"]), (PART, 2, v1))
        g = self.s3.get_object(Bucket=b, Key="big", VersionId=v1, Range="bytes=0-9")
        self.assertEqual(g["Body"].read(), data[:10])
        self.assertEqual(self.s3.get_object(Bucket=b, Key="big")["Body"].read(), b"small latest")

    def test_copy_object_source_version(self):
        src = self.versioned_bucket("csrc")
        dst = self.versioned_bucket("cdst")
        plain = self.make_bucket("cplain")
        v1 = self.s3.put_object(Bucket=src, Key="k", Body=b"old bytes", Metadata={"gen": "1"})["VersionId"]
        v2 = self.s3.put_object(Bucket=src, Key="k", Body=b"new bytes", Metadata={"gen": "2"})["VersionId"]
        r = self.s3.copy_object(Bucket=dst, Key="c", CopySource={"Bucket": src, "Key": "k", "VersionId": v1})
        self.assertEqual(r["CopySourceVersionId"], v1)
        c1 = r["VersionId"]
        self.assertValidVersionId(c1)
        g = self.s3.get_object(Bucket=dst, Key="c")
        self.assertEqual((g["Body"].read(), g["Metadata"], g["VersionId"]), (b"old bytes", {"gen": "1"}, c1))
        r = self.s3.copy_object(Bucket=dst, Key="c", CopySource={"Bucket": src, "Key": "k"})
        self.assertEqual(r["CopySourceVersionId"], v2)
        c2 = r["VersionId"]
        self.assertEqual(self.versions(dst), [("V", "c", c2, "true"), ("V", "c", c1, "false")])
        self.assertEqual(self.get_body(dst, "c", VersionId=c1), b"old bytes")
        self.assertEqual(self.get_body(dst, "c"), b"new bytes")
        # Raw: the source's version in x-amz-copy-source-version-id, the new one in x-amz-version-id.
        raw = self.fc.request("PUT", f"/{dst}/raw", headers={"x-amz-copy-source": f"/{src}/k?versionId={v1}"})
        self.assertEqual(raw.status, 200, raw)
        self.assertEqual(raw.header("x-amz-copy-source-version-id"), v1, raw)
        self.assertValidVersionId(raw.header("x-amz-version-id"))
        self.assertEqual(self.get_body(dst, "raw"), b"old bytes")
        # Restoring an old version: copy it onto its own key.
        r = self.s3.copy_object(Bucket=src, Key="k", CopySource={"Bucket": src, "Key": "k", "VersionId": v1})
        v3 = r["VersionId"]
        self.assertEqual(self.get_body(src, "k"), b"old bytes")
        self.assertEqual(self.versions(src), [("V", "k", v3, "true"), ("V", "k", v2, "false"),
                                              ("V", "k", v1, "false")])
        # Into a never-versioned bucket: the source version is named, no new one.
        r = self.s3.copy_object(Bucket=plain, Key="p", CopySource={"Bucket": src, "Key": "k", "VersionId": v2})
        self.assertEqual(r["CopySourceVersionId"], v2)
        self.assertNotIn("VersionId", r)
        self.assertEqual(self.get_body(plain, "p"), b"new bytes")
        # Sources that are not objects.
        other = self.put_vid(src, "other", b"o")
        self.assertS3Error(self.s3.copy_object, "NoSuchVersion", 404, Bucket=dst, Key="x",
                           CopySource={"Bucket": src, "Key": "k", "VersionId": other})
        r = self.fc.request("PUT", f"/{dst}/x", headers={"x-amz-copy-source": f"/{src}/k?versionId=not-a-version!"})
        self.assertEqual((r.status, r.error_code), (400, "InvalidArgument"), r)
        m = self.delete_marker(src, "k")
        self.assertS3Error(self.s3.copy_object, "NoSuchKey", 404, Bucket=dst, Key="x",
                           CopySource={"Bucket": src, "Key": "k"})
        # A delete marker named as the source version: 400 (AWS: a delete marker
        # cannot be the x-amz-copy-source version).
        r = self.fc.request("PUT", f"/{dst}/x", headers={"x-amz-copy-source": f"/{src}/k?versionId={m}"})
        self.assertEqual(r.status, 400, r)
        self.assertEqual(self.versions(dst, prefix="x"), [])
        # The old versions are still copyable after the marker.
        r = self.s3.copy_object(Bucket=dst, Key="x", CopySource={"Bucket": src, "Key": "k", "VersionId": v2})
        self.assertEqual(self.get_body(dst, "x"), b"new bytes")

    def test_upload_part_copy_source_version(self):
        b = self.versioned_bucket("upc")
        big = payload(PART, "upc-big")
        v1 = self.put_vid(b, "src", big)
        v2 = self.put_vid(b, "src", b"0123456789")
        self.put_vid(b, "src", b"latest, not used")
        uid = self.s3.create_multipart_upload(Bucket=b, Key="assembled")["UploadId"]
        p1 = self.s3.upload_part_copy(Bucket=b, Key="assembled", UploadId=uid, PartNumber=1,
                                      CopySource={"Bucket": b, "Key": "src", "VersionId": v1})
        self.assertEqual(p1["CopySourceVersionId"], v1)
        p2 = self.s3.upload_part_copy(Bucket=b, Key="assembled", UploadId=uid, PartNumber=2,
                                      CopySource={"Bucket": b, "Key": "src", "VersionId": v2},
                                      CopySourceRange="bytes=2-5")
        self.assertEqual(p2["CopySourceVersionId"], v2)
        done = self.s3.complete_multipart_upload(
            Bucket=b, Key="assembled", UploadId=uid, MultipartUpload={"Parts": [
                {"PartNumber": 1, "ETag": p1["CopyPartResult"]["ETag"]},
                {"PartNumber": 2, "ETag": p2["CopyPartResult"]["ETag"]}]})
        self.assertValidVersionId(done.get("VersionId"))
        self.assertEqual(done["ETag"], multipart_etag([big, b"2345"]))
        self.assertEqual(self.get_body(b, "assembled"), big + b"2345")
        other = self.put_vid(b, "other", b"x")
        uid2 = self.s3.create_multipart_upload(Bucket=b, Key="assembled")["UploadId"]
        self.assertS3Error(self.s3.upload_part_copy, "NoSuchVersion", 404, Bucket=b, Key="assembled",
                           UploadId=uid2, PartNumber=1, CopySource={"Bucket": b, "Key": "src", "VersionId": other})
        self.s3.abort_multipart_upload(Bucket=b, Key="assembled", UploadId=uid2)

    def test_multipart_complete_creates_version(self):
        b = self.versioned_bucket("mpv")
        va = self.put_vid(b, "k", b"plain put")
        uid = self.s3.create_multipart_upload(Bucket=b, Key="k")["UploadId"]
        e = self.s3.upload_part(Bucket=b, Key="k", UploadId=uid, PartNumber=1, Body=b"multipart body")["ETag"]
        done = self.s3.complete_multipart_upload(Bucket=b, Key="k", UploadId=uid,
                                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e}]})
        vb = done["VersionId"]
        self.assertValidVersionId(vb)
        self.assertEqual(done["ResponseMetadata"]["HTTPHeaders"].get("x-amz-version-id"), vb)
        self.assertEqual(self.versions(b), [("V", "k", vb, "true"), ("V", "k", va, "false")])
        self.assertEqual(self.get_body(b, "k", VersionId=va), b"plain put")
        self.assertEqual(self.get_body(b, "k", VersionId=vb), b"multipart body")
        uid = self.s3.create_multipart_upload(Bucket=b, Key="k")["UploadId"]
        self.s3.upload_part(Bucket=b, Key="k", UploadId=uid, PartNumber=1, Body=b"aborted")
        self.s3.abort_multipart_upload(Bucket=b, Key="k", UploadId=uid)
        self.assertEqual(self.versions(b), [("V", "k", vb, "true"), ("V", "k", va, "false")])

    def test_tagging_by_version(self):
        b = self.versioned_bucket("tagv")

        def tags(**kw):
            r = self.s3.get_object_tagging(Bucket=b, Key="k", **kw)
            return r.get("VersionId"), sorted((t["Key"], t["Value"]) for t in r["TagSet"])

        va = self.s3.put_object(Bucket=b, Key="k", Body=b"a", Tagging="t=a")["VersionId"]
        vb = self.s3.put_object(Bucket=b, Key="k", Body=b"b", Tagging="t=b&u=2")["VersionId"]
        self.assertEqual(tags(VersionId=va), (va, [("t", "a")]))
        self.assertEqual(tags(), (vb, [("t", "b"), ("u", "2")]))
        r = self.s3.put_object_tagging(Bucket=b, Key="k", VersionId=va, Tagging={"TagSet": [{"Key": "x", "Value": "1"}]})
        self.assertEqual(r.get("VersionId"), va)
        self.assertEqual(tags(VersionId=va), (va, [("x", "1")]))
        self.assertEqual(tags(VersionId=vb), (vb, [("t", "b"), ("u", "2")]))
        self.assertEqual(self.s3.get_object(Bucket=b, Key="k", VersionId=vb)["TagCount"], 2)
        self.assertEqual(self.s3.get_object(Bucket=b, Key="k", VersionId=va)["TagCount"], 1)
        r = self.s3.delete_object_tagging(Bucket=b, Key="k", VersionId=va)
        self.assertEqual((r["ResponseMetadata"]["HTTPStatusCode"], r.get("VersionId")), (204, va))
        self.assertEqual(tags(VersionId=va), (va, []))
        self.assertNotIn("TagCount", self.s3.get_object(Bucket=b, Key="k", VersionId=va))
        self.assertEqual(tags(), (vb, [("t", "b"), ("u", "2")]))
        other = self.put_vid(b, "other", b"o")
        self.assertS3Error(self.s3.get_object_tagging, "NoSuchVersion", 404, Bucket=b, Key="k", VersionId=other)
        self.assertS3Error(self.s3.put_object_tagging, "NoSuchVersion", 404, Bucket=b, Key="k", VersionId=other,
                           Tagging={"TagSet": []})
        # Raw: ?tagging&versionId=
        r = self.fc.obj("GET", b, "k", version_id=va, query="tagging")
        self.assertEqual((r.status, r.header("x-amz-version-id")), (200, va), r)

    def test_get_object_attributes_by_version(self):
        b = self.versioned_bucket("attrv")
        va = self.put_vid(b, "k", b"x" * 10)
        vb = self.put_vid(b, "k", b"y" * 20)
        a = self.s3.get_object_attributes(Bucket=b, Key="k", VersionId=va, ObjectAttributes=["ETag", "ObjectSize"])
        self.assertEqual((a["ETag"], a["ObjectSize"], a.get("VersionId")), (md5_hex(b"x" * 10), 10, va))
        a = self.s3.get_object_attributes(Bucket=b, Key="k", ObjectAttributes=["ETag", "ObjectSize"])
        self.assertEqual((a["ETag"], a["ObjectSize"], a.get("VersionId")), (md5_hex(b"y" * 20), 20, vb))
        other = self.put_vid(b, "other", b"o")
        self.assertS3Error(self.s3.get_object_attributes, "NoSuchVersion", 404, Bucket=b, Key="k", VersionId=other,
                           ObjectAttributes=["ETag"])

    def test_list_objects_show_only_latest(self):
        b = self.versioned_bucket("lat")
        self.put_vid(b, "a", b"a1")
        self.put_vid(b, "a", b"a-two")
        self.put_vid(b, "b", b"b1")
        self.delete_marker(b, "b")
        self.delete_marker(b, "c")              # a marker with nothing under it
        self.put_vid(b, "dead/x", b"x")
        self.delete_marker(b, "dead/x")
        self.put_vid(b, "live/y", b"y")
        self.put_vid(b, "live/gone", b"g")
        self.delete_marker(b, "live/gone")
        v2 = self.s3.list_objects_v2(Bucket=b)
        self.assertEqual([(o["Key"], o["Size"], o["ETag"]) for o in v2["Contents"]],
                         [("a", 5, etag_of(b"a-two")), ("live/y", 1, etag_of(b"y"))])
        self.assertEqual(v2["KeyCount"], 2)
        v1 = self.s3.list_objects(Bucket=b)
        self.assertEqual([o["Key"] for o in v1["Contents"]], ["a", "live/y"])
        d = self.s3.list_objects_v2(Bucket=b, Delimiter="/")
        self.assertEqual([o["Key"] for o in d.get("Contents", [])], ["a"])
        self.assertEqual([p["Prefix"] for p in d.get("CommonPrefixes", [])], ["live/"],
                         "a prefix holding only delete markers is not listed")
        d1 = self.s3.list_objects(Bucket=b, Delimiter="/")
        self.assertEqual([p["Prefix"] for p in d1.get("CommonPrefixes", [])], ["live/"])
        # Paging by one key at a time skips the deleted keys too.
        keys = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=b, PaginationConfig={"PageSize": 1}):
            keys += [o["Key"] for o in page.get("Contents", [])]
        self.assertEqual(keys, ["a", "live/y"])
        keys = []
        for page in self.s3.get_paginator("list_objects").paginate(Bucket=b, PaginationConfig={"PageSize": 1}):
            keys += [o["Key"] for o in page.get("Contents", [])]
        self.assertEqual(keys, ["a", "live/y"])

    def test_delete_bucket_with_versions_or_markers(self):
        b = self.versioned_bucket("dbne")
        v = self.put_vid(b, "k", b"data")
        m = self.delete_marker(b, "k")
        self.assertEqual(self.s3.list_objects_v2(Bucket=b)["KeyCount"], 0)
        self.assertS3Error(self.s3.delete_bucket, "BucketNotEmpty", 409, Bucket=b)
        self.assertEqual(self.fc.delete(b, "k", version_id=v).status, 204)
        self.assertS3Error(self.s3.delete_bucket, "BucketNotEmpty", 409, Bucket=b)  # the marker
        self.assertEqual(self.fc.delete(b, "k", version_id=m).status, 204)
        self.assertEqual(self.s3.delete_bucket(Bucket=b)["ResponseMetadata"]["HTTPStatusCode"], 204)
        self.assertS3Error(self.s3.head_bucket, "404", 404, Bucket=b)

    def test_delete_objects_with_versions(self):
        b = self.versioned_bucket("dobj")
        v1a = self.put_vid(b, "k1", b"1a")
        v1b = self.put_vid(b, "k1", b"1b")
        v2a = self.put_vid(b, "k2", b"2a")
        v3a = self.put_vid(b, "k3", b"3a")
        m3 = self.delete_marker(b, "k3")
        r = self.s3.delete_objects(Bucket=b, Delete={"Objects": [
            {"Key": "k1", "VersionId": v1a},   # exactly that version
            {"Key": "k2"},                      # a new marker
            {"Key": "k3", "VersionId": m3},     # removes the marker: undelete
            {"Key": "k4"},                      # a marker over nothing
            {"Key": "k1", "VersionId": v2a},    # well formed, not a version of k1
        ]})
        self.assertEqual(r.get("Errors", []), [])
        got = {(d["Key"], d.get("VersionId")): d for d in r["Deleted"]}
        self.assertEqual(len(got), 5, r["Deleted"])
        d = got[("k1", v1a)]
        self.assertFalse(d.get("DeleteMarker", False), d)
        self.assertNotIn("DeleteMarkerVersionId", d)
        d = got[("k2", None)]
        self.assertEqual(d.get("DeleteMarker"), True, d)
        mk2 = d.get("DeleteMarkerVersionId")
        self.assertValidVersionId(mk2)
        d = got[("k3", m3)]
        self.assertEqual((d.get("DeleteMarker"), d.get("DeleteMarkerVersionId")), (True, m3), d)
        d = got[("k4", None)]
        self.assertEqual(d.get("DeleteMarker"), True, d)
        mk4 = d.get("DeleteMarkerVersionId")
        self.assertValidVersionId(mk4)
        self.assertIn(("k1", v2a), got)
        self.assertEqual(self.versions(b), [
            ("V", "k1", v1b, "true"),
            ("M", "k2", mk2, "true"), ("V", "k2", v2a, "false"),
            ("V", "k3", v3a, "true"),
            ("M", "k4", mk4, "true")])
        self.assertEqual(self.get_body(b, "k3"), b"3a")
        # Quiet mode: nothing reported, still done.
        r = self.s3.delete_objects(Bucket=b, Delete={"Quiet": True, "Objects": [
            {"Key": "k1", "VersionId": v1b}, {"Key": "k2", "VersionId": mk2}]})
        self.assertEqual((r.get("Deleted", []), r.get("Errors", [])), ([], []))
        self.assertEqual(self.versions(b, prefix="k1"), [])
        self.assertEqual(self.get_body(b, "k2"), b"2a")

    def test_head_and_get_by_version_return_that_versions_metadata(self):
        b = self.versioned_bucket("meta")
        v1 = self.s3.put_object(Bucket=b, Key="k", Body=b"one", ContentType="text/plain",
                                Metadata={"gen": "1"}, CacheControl="no-cache")["VersionId"]
        v2 = self.s3.put_object(Bucket=b, Key="k", Body=b"second", ContentType="application/json",
                                Metadata={"gen": "2", "extra": "x"})["VersionId"]
        h1 = self.s3.head_object(Bucket=b, Key="k", VersionId=v1)
        self.assertEqual((h1["ContentType"], h1["Metadata"], h1.get("CacheControl"), h1["ContentLength"]),
                         ("text/plain", {"gen": "1"}, "no-cache", 3))
        h2 = self.s3.head_object(Bucket=b, Key="k", VersionId=v2)
        self.assertEqual((h2["ContentType"], h2["Metadata"], h2.get("CacheControl")),
                         ("application/json", {"gen": "2", "extra": "x"}, None))
        g1 = self.s3.get_object(Bucket=b, Key="k", VersionId=v1)
        self.assertEqual((g1["ContentType"], g1["Metadata"], g1["Body"].read()), ("text/plain", {"gen": "1"}, b"one"))
        self.assertLessEqual(h1["LastModified"], h2["LastModified"])

    def test_conditional_writes_see_only_the_current_version(self):
        b = self.versioned_bucket("cond")
        v1 = self.put_vid(b, "k", b"first")
        r = self.fc.put(b, "k", b"second", headers={"If-None-Match": "*"})
        self.assertEqual((r.status, r.error_code), (412, "PreconditionFailed"), r)
        m = self.delete_marker(b, "k")
        # The current version is a marker: the key counts as absent.
        r = self.fc.put(b, "k", b"after the marker", headers={"If-Match": etag_of(b"first")})
        self.assertEqual((r.status, r.error_code), (404, "NoSuchKey"), r)
        r = self.fc.put(b, "k", b"after the marker", headers={"If-None-Match": "*"})
        self.assertEqual(r.status, 200, r)
        v3 = r.header("x-amz-version-id")
        self.assertValidVersionId(v3)
        r = self.fc.put(b, "k", b"fourth", headers={"If-Match": etag_of(b"first")})  # v1 is not current
        self.assertEqual((r.status, r.error_code), (412, "PreconditionFailed"), r)
        r = self.fc.put(b, "k", b"fourth", headers={"If-Match": etag_of(b"after the marker")})
        self.assertEqual(r.status, 200, r)
        v4 = r.header("x-amz-version-id")
        self.assertEqual(self.versions(b), [("V", "k", v4, "true"), ("V", "k", v3, "false"),
                                            ("M", "k", m, "false"), ("V", "k", v1, "false")])

    def test_version_id_header_on_every_write_path(self):
        b = self.versioned_bucket("hdr")
        r = self.fc.put(b, "k", b"x")
        self.assertValidVersionId(r.header("x-amz-version-id"))
        r = self.fc.request("PUT", f"/{b}/k2", headers={"x-amz-copy-source": f"/{b}/k"})
        self.assertEqual(r.status, 200, r)
        self.assertValidVersionId(r.header("x-amz-version-id"))
        r = self.fc.head(b, "k2")
        self.assertValidVersionId(r.header("x-amz-version-id"))
        # After a suspension the writes carry "null".
        self.set_versioning(b, "Suspended")
        for name, r in (("PUT", self.fc.put(b, "k", b"y")),
                        ("COPY", self.fc.request("PUT", f"/{b}/k3", headers={"x-amz-copy-source": f"/{b}/k"})),
                        ("GET", self.fc.get(b, "k")), ("HEAD", self.fc.head(b, "k3"))):
            with self.subTest(name):
                self.assertEqual(r.status, 200, r)
                self.assertEqual(r.header("x-amz-version-id"), "null", r)
        uid = self.s3.create_multipart_upload(Bucket=b, Key="mp")["UploadId"]
        e = self.s3.upload_part(Bucket=b, Key="mp", UploadId=uid, PartNumber=1, Body=b"p")["ETag"]
        done = self.s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=uid,
                                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e}]})
        self.assertEqual(done.get("VersionId"), "null")


# ==========================================================================
class NullVersionTest(VersioningCase):
    def test_null_version_through_enable_suspend_enable(self):
        b = self.make_bucket("nullv")
        self.assertEqual(self.fc.put(b, "k", b"n1").status, 200)
        self.assertEqual(self.fc.put(b, "k", b"n2").status, 200)  # replaces the null version
        self.assertEqual(self.versions(b), [("V", "k", "null", "true")])
        r = self.fc.get(b, "k", version_id="null")
        self.assertEqual((r.status, r.body), (200, b"n2"), r)

        self.set_versioning(b, "Enabled")
        r = self.fc.get(b, "k")
        self.assertEqual((r.body, r.header("x-amz-version-id")), (b"n2", "null"), r)
        v1 = self.put_vid(b, "k", b"v1")
        self.assertValidVersionId(v1)
        self.assertEqual(self.versions(b), [("V", "k", v1, "true"), ("V", "k", "null", "false")])
        self.assertEqual(self.fc.get(b, "k", version_id="null").body, b"n2")

        self.set_versioning(b, "Suspended")
        r = self.fc.put(b, "k", b"s1")
        self.assertEqual((r.status, r.header("x-amz-version-id")), (200, "null"), r)
        # The old null version (n2) was replaced; v1 is kept.
        self.assertEqual(self.versions(b), [("V", "k", "null", "true"), ("V", "k", v1, "false")])
        self.assertEqual(self.fc.get(b, "k", version_id="null").body, b"s1")
        self.assertEqual(self.fc.get(b, "k", version_id=v1).body, b"v1")
        r = self.fc.put(b, "k", b"s2")
        self.assertEqual(r.header("x-amz-version-id"), "null")
        self.assertEqual(self.versions(b), [("V", "k", "null", "true"), ("V", "k", v1, "false")])
        self.assertEqual(self.fc.get(b, "k").body, b"s2")

        self.set_versioning(b, "Enabled")
        v2 = self.put_vid(b, "k", b"v2")
        self.assertNotIn(v2, (v1, "null"))
        # Newest first: v2, then the null version (written after v1), then v1.
        self.assertEqual(self.versions(b), [("V", "k", v2, "true"), ("V", "k", "null", "false"),
                                            ("V", "k", v1, "false")])
        page = list_versions_page(self.fc, b)
        self.assertEqual([e.etag for e in page.entries], [etag_of(b"v2"), etag_of(b"s2"), etag_of(b"v1")])
        self.assertEqual(self.fc.get(b, "k", version_id="null").body, b"s2")
        r = self.fc.delete(b, "k", version_id="null")
        self.assertEqual((r.status, r.header("x-amz-version-id")), (204, "null"), r)
        self.assertEqual(self.versions(b), [("V", "k", v2, "true"), ("V", "k", v1, "false")])
        r = self.fc.get(b, "k", version_id="null")
        self.assertEqual((r.status, r.error_code), (404, "NoSuchVersion"), r)

    def test_objects_written_before_enabling_become_null_versions(self):
        b = self.make_bucket("before")
        for k in ("x", "y/z"):
            self.assertEqual(self.fc.put(b, k, k.encode()).status, 200)
        self.set_versioning(b, "Enabled")
        self.assertEqual(self.versions(b), [("V", "x", "null", "true"), ("V", "y/z", "null", "true")])
        h = self.s3.head_object(Bucket=b, Key="x")
        self.assertEqual(h["VersionId"], "null")
        m = self.delete_marker(b, "x")
        self.assertEqual(self.versions(b, prefix="x"), [("M", "x", m, "true"), ("V", "x", "null", "false")])
        self.assertEqual(self.get_body(b, "x", VersionId="null"), b"x")

    def test_suspended_delete_makes_a_null_marker(self):
        b = self.versioned_bucket("sdel")
        v1 = self.put_vid(b, "k", b"enabled era")
        self.set_versioning(b, "Suspended")
        self.assertEqual(self.fc.put(b, "k", b"null era").header("x-amz-version-id"), "null")
        r = self.fc.delete(b, "k")
        self.assertEqual((r.status, r.header("x-amz-delete-marker"), r.header("x-amz-version-id")),
                         (204, "true", "null"), r)
        # The null object version is gone, a null marker replaced it.
        self.assertEqual(self.versions(b), [("M", "k", "null", "true"), ("V", "k", v1, "false")])
        r = self.fc.get(b, "k")
        self.assertEqual((r.status, r.header("x-amz-delete-marker"), r.header("x-amz-version-id")),
                         (404, "true", "null"), r)
        r = self.fc.get(b, "k", version_id="null")
        self.assertEqual((r.status, r.error_code), (405, "MethodNotAllowed"), r)
        # Deleting again replaces the null marker: still one.
        r = self.fc.delete(b, "k")
        self.assertEqual((r.status, r.header("x-amz-version-id")), (204, "null"), r)
        self.assertEqual(self.versions(b), [("M", "k", "null", "true"), ("V", "k", v1, "false")])
        # DeleteObjects in a suspended bucket: a null marker as well.
        self.assertEqual(self.fc.put(b, "j", b"j").status, 200)
        r = self.s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "j"}]})
        d = r["Deleted"][0]
        self.assertEqual((d["Key"], d.get("DeleteMarker"), d.get("DeleteMarkerVersionId")), ("j", True, "null"), d)
        self.assertEqual(self.versions(b, prefix="j"), [("M", "j", "null", "true")])
        # Removing the null marker undeletes v1.
        r = self.fc.delete(b, "k", version_id="null")
        self.assertEqual((r.status, r.header("x-amz-delete-marker")), (204, "true"), r)
        self.assertEqual(self.fc.get(b, "k").body, b"enabled era")
        self.assertEqual(self.versions(b, prefix="k"), [("V", "k", v1, "true")])

    def test_suspended_delete_without_a_null_version(self):
        b = self.versioned_bucket("sdel2")
        v1 = self.put_vid(b, "k", b"only versioned")
        self.set_versioning(b, "Suspended")
        r = self.fc.delete(b, "k")
        self.assertEqual((r.status, r.header("x-amz-delete-marker"), r.header("x-amz-version-id")),
                         (204, "true", "null"), r)
        self.assertEqual(self.versions(b), [("M", "k", "null", "true"), ("V", "k", v1, "false")])
        # A PUT replaces the null marker with a null object version.
        self.assertEqual(self.fc.put(b, "k", b"null object").header("x-amz-version-id"), "null")
        self.assertEqual(self.versions(b), [("V", "k", "null", "true"), ("V", "k", v1, "false")])
        self.assertEqual(self.fc.get(b, "k").body, b"null object")

    def test_null_version_as_a_version_id_marker(self):
        b = self.versioned_bucket("nullmk")
        v1 = self.put_vid(b, "k", b"v1")
        self.set_versioning(b, "Suspended")
        self.assertEqual(self.fc.put(b, "k", b"null").header("x-amz-version-id"), "null")
        self.set_versioning(b, "Enabled")
        v2 = self.put_vid(b, "k", b"v2")
        lv = self.put_vid(b, "l", b"l")
        self.assertEqual(self.versions(b), [("V", "k", v2, "true"), ("V", "k", "null", "false"),
                                            ("V", "k", v1, "false"), ("V", "l", lv, "true")])
        p = list_versions_page(self.fc, b, key_marker="k", version_id_marker="null")
        self.assertEqual([(e.key, e.version_id) for e in p.entries], [("k", v1), ("l", lv)])
        p = list_versions_page(self.fc, b, max_keys=2)
        self.assertEqual((p.field("NextKeyMarker"), p.field("NextVersionIdMarker")), ("k", "null"))
        entries, _, _ = list_versions_all(self.fc, b, max_keys=1)
        self.assertEqual([e.version_id for e in entries], [v2, "null", v1, lv])
        # The null version as a copy source.
        r = self.fc.request("PUT", f"/{b}/copy", headers={"x-amz-copy-source": f"/{b}/k?versionId=null"})
        self.assertEqual((r.status, r.header("x-amz-copy-source-version-id")), (200, "null"), r)
        self.assertEqual(self.get_body(b, "copy"), b"null")
        # DELETE ?versionId=null where there is none: nothing to do.
        r = self.fc.delete(b, "l", version_id="null")
        self.assertEqual(r.status, 204, r)
        self.assertEqual(self.versions(b, prefix="l"), [("V", "l", lv, "true")])

    def test_suspended_bucket_keeps_versions_and_reads_them(self):
        b = self.versioned_bucket("skeep")
        vs = [self.put_vid(b, "k", f"v{i}".encode()) for i in range(3)]
        self.set_versioning(b, "Suspended")
        self.assertEqual(self.s3.get_bucket_versioning(Bucket=b)["Status"], "Suspended")
        for i, v in enumerate(vs):
            self.assertEqual(self.fc.get(b, "k", version_id=v).body, f"v{i}".encode())
        self.assertEqual(self.fc.delete(b, "k", version_id=vs[1]).status, 204)
        self.assertEqual(self.versions(b), [("V", "k", vs[2], "true"), ("V", "k", vs[0], "false")])


"""CopyObject (metadata / tagging directives, x-amz-copy-source-if-*, copy onto
itself, other buckets, multipart sources, aws s3 cp between buckets) and
conditional requests: GET/HEAD If-Match / If-None-Match / If-Modified-Since /
If-Unmodified-Since in AWS's precedence, conditional PutObject, and the race
of two writers with If-None-Match: * on one new key.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_copy_conditional.py -v
"""
import datetime
import json
import os
import shutil
import sys
import tempfile
import time
import unittest
from email.utils import format_datetime, parsedate_to_datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rawhttp  # noqa: E402
from harness import ServerTestCase, no_empty_expect, signed_request, write_random_file, sha256_file  # noqa: E402
from rawhttp import quote_key  # noqa: E402
from s3util import MiB, PART, md5_hex, multipart_etag_of_file, payload, quoted, race  # noqa: E402


def http_date(dt):
    return format_datetime(dt.astimezone(datetime.timezone.utc), usegmt=True)


class CopyObjectTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        no_empty_expect(cls.s3)
        from harness import unique_name
        cls.bucket = unique_name("copy")
        cls.other = unique_name("copy2")
        cls.s3.create_bucket(Bucket=cls.bucket)
        cls.s3.create_bucket(Bucket=cls.other)

    def tearDown(self):
        self.assertServerHealthy()

    def source(self, key, data=b"source body", tags=None, **kw):
        extra = {"Tagging": tags} if tags else {}
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=data, ContentType="text/x-src",
                           ContentDisposition="inline", Metadata={"origin": "src", "n": "1"}, **extra, **kw)
        return quoted(md5_hex(data))

    def tags(self, bucket, key):
        return sorted((t["Key"], t["Value"]) for t in
                      self.s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"])

    def copy(self, key, src_key, bucket=None, src_bucket=None, **kw):
        return self.s3.copy_object(Bucket=bucket or self.bucket, Key=key,
                                   CopySource={"Bucket": src_bucket or self.bucket, "Key": src_key}, **kw)

    # ---- directives ----------------------------------------------------------
    def test_copy_same_and_other_bucket_metadata_copy(self):
        data = payload(300 * 1024, "copy-data")  # above the inline limit: a data file
        etag = self.source("src/a b+c ü.bin", data, tags="t1=v1&t2=v2")
        for bucket in (self.bucket, self.other):
            with self.subTest(bucket=bucket):
                r = self.copy("dst/copy ü.bin", "src/a b+c ü.bin", bucket=bucket)
                self.assertEqual(r["CopyObjectResult"]["ETag"], etag)
                self.assertLess(abs(r["CopyObjectResult"]["LastModified"].timestamp() - time.time()), 60)
                h = self.s3.head_object(Bucket=bucket, Key="dst/copy ü.bin")
                self.assertEqual(h["ContentLength"], len(data))
                self.assertEqual(h["ETag"], etag)
                self.assertEqual(h["ContentType"], "text/x-src")
                self.assertEqual(h["ContentDisposition"], "inline")
                self.assertEqual(h["Metadata"], {"origin": "src", "n": "1"})
                self.assertEqual(self.get_body(bucket, "dst/copy ü.bin"), data)
                self.assertEqual(self.tags(bucket, "dst/copy ü.bin"), [("t1", "v1"), ("t2", "v2")])
        # The source is untouched; overwriting the source leaves the copy alone.
        self.s3.put_object(Bucket=self.bucket, Key="src/a b+c ü.bin", Body=b"changed")
        self.assertEqual(self.get_body(self.other, "dst/copy ü.bin"), data)
        # A copy source given as a string (botocore URL-encodes it), and raw with a leading slash.
        r = self.s3.copy_object(Bucket=self.other, Key="from-string",
                                CopySource=self.bucket + "/src/a b+c ü.bin")
        self.assertEqual(r["CopyObjectResult"]["ETag"], quoted(md5_hex(b"changed")))
        r = rawhttp.request(self.server.port, "PUT", f"/{self.other}/from-raw",
                            headers={"x-amz-copy-source": "/" + self.bucket + "/" + quote_key("src/a b+c ü.bin")})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.get_body(self.other, "from-raw"), b"changed")

    def test_metadata_directive_replace(self):
        self.source("md-src")
        self.copy("md-dst", "md-src", MetadataDirective="REPLACE", ContentType="application/x-new",
                  Metadata={"fresh": "yes"}, CacheControl="no-cache")
        h = self.s3.head_object(Bucket=self.bucket, Key="md-dst")
        self.assertEqual(h["Metadata"], {"fresh": "yes"})
        self.assertEqual(h["ContentType"], "application/x-new")
        self.assertEqual(h["CacheControl"], "no-cache")
        self.assertNotIn("ContentDisposition", h)
        self.assertEqual(self.get_body(self.bucket, "md-dst"), b"source body")
        # COPY (explicit) ignores metadata given with the request.
        self.copy("md-dst2", "md-src", MetadataDirective="COPY", ContentType="application/x-ignored",
                  Metadata={"ignored": "1"})
        h = self.s3.head_object(Bucket=self.bucket, Key="md-dst2")
        self.assertEqual(h["Metadata"], {"origin": "src", "n": "1"})
        self.assertEqual(h["ContentType"], "text/x-src")
        # Anything else is refused.
        r = rawhttp.request(self.server.port, "PUT", f"/{self.bucket}/md-bad",
                            headers={"x-amz-copy-source": f"/{self.bucket}/md-src",
                                     "x-amz-metadata-directive": "MERGE"})
        self.assertEqual((r.status, r.error_code), (400, "InvalidArgument"), r)
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=self.bucket, Key="md-bad")

    def test_copy_onto_itself(self):
        etag = self.source("self")
        before = self.s3.head_object(Bucket=self.bucket, Key="self")
        self.assertS3Error(self.copy, "InvalidRequest", 400, "self", "self")
        self.assertS3Error(self.copy, "InvalidRequest", 400, "self", "self", MetadataDirective="COPY")
        time.sleep(1.1)  # Last-Modified has one-second resolution
        r = self.copy("self", "self", MetadataDirective="REPLACE", Metadata={"updated": "true"},
                      ContentType="text/x-updated")
        self.assertEqual(r["CopyObjectResult"]["ETag"], etag)
        h = self.s3.head_object(Bucket=self.bucket, Key="self")
        self.assertEqual(h["Metadata"], {"updated": "true"})
        self.assertEqual(h["ContentType"], "text/x-updated")
        self.assertEqual(h["ETag"], etag)
        self.assertGreater(h["LastModified"], before["LastModified"])
        self.assertEqual(self.get_body(self.bucket, "self"), b"source body")
        # A storage-class change is also a change.
        self.copy("self", "self", StorageClass="STANDARD_IA")
        h = self.s3.head_object(Bucket=self.bucket, Key="self")
        self.assertEqual(h["StorageClass"], "STANDARD_IA")
        self.assertEqual(self.get_body(self.bucket, "self"), b"source body")

    def test_tagging_directive(self):
        self.source("tag-src", tags="a=1&b=2")
        self.copy("tag-copy", "tag-src")
        self.assertEqual(self.tags(self.bucket, "tag-copy"), [("a", "1"), ("b", "2")])
        self.copy("tag-copy2", "tag-src", TaggingDirective="COPY", Tagging="ignored=yes")
        self.assertEqual(self.tags(self.bucket, "tag-copy2"), [("a", "1"), ("b", "2")])
        self.copy("tag-replace", "tag-src", TaggingDirective="REPLACE", Tagging="c=3&d=four%20words")
        self.assertEqual(self.tags(self.bucket, "tag-replace"), [("c", "3"), ("d", "four words")])
        self.copy("tag-none", "tag-src", TaggingDirective="REPLACE")
        self.assertEqual(self.tags(self.bucket, "tag-none"), [])
        # Tag limits apply to the copy's tags.
        many = "&".join(f"k{i}=v" for i in range(11))
        self.assertS3Error(self.copy, "BadRequest", 400, "tag-many", "tag-src", TaggingDirective="REPLACE",
                           Tagging=many)
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=self.bucket, Key="tag-many")
        r = rawhttp.request(self.server.port, "PUT", f"/{self.bucket}/tag-bad",
                            headers={"x-amz-copy-source": f"/{self.bucket}/tag-src",
                                     "x-amz-tagging-directive": "KEEP"})
        self.assertEqual((r.status, r.error_code), (400, "InvalidArgument"), r)

    def test_copy_source_conditions(self):
        etag = self.source("cond-src")
        lm = self.s3.head_object(Bucket=self.bucket, Key="cond-src")["LastModified"]
        hour = datetime.timedelta(hours=1)
        before = http_date(lm - hour)
        ok, fail = 200, 412
        cases = [
            ("if-match equal", {"CopySourceIfMatch": etag}, ok),
            ("if-match differs", {"CopySourceIfMatch": quoted("1" * 32)}, fail),
            ("if-match *", {"CopySourceIfMatch": "*"}, ok),
            ("if-none-match equal", {"CopySourceIfNoneMatch": etag}, fail),
            ("if-none-match differs", {"CopySourceIfNoneMatch": quoted("1" * 32)}, ok),
            ("if-modified-since before", {"CopySourceIfModifiedSince": lm - hour}, ok),
            ("if-modified-since at", {"CopySourceIfModifiedSince": lm}, fail),
            ("if-unmodified-since at", {"CopySourceIfUnmodifiedSince": lm}, ok),
            ("if-unmodified-since before", {"CopySourceIfUnmodifiedSince": lm - hour}, fail),
            # AWS precedence: if-match true + if-unmodified-since false -> copied.
            ("if-match true, if-unmodified-since false",
             {"CopySourceIfMatch": etag, "CopySourceIfUnmodifiedSince": lm - hour}, ok),
            ("if-match false, if-unmodified-since true",
             {"CopySourceIfMatch": quoted("1" * 32), "CopySourceIfUnmodifiedSince": lm}, fail),
            # if-none-match false + if-modified-since true -> 412.
            ("if-none-match false, if-modified-since true",
             {"CopySourceIfNoneMatch": etag, "CopySourceIfModifiedSince": lm - hour}, fail),
            # if-none-match true + if-modified-since false -> copied.
            ("if-none-match true, if-modified-since false",
             {"CopySourceIfNoneMatch": quoted("1" * 32), "CopySourceIfModifiedSince": lm}, ok),
            ("all four true", {"CopySourceIfMatch": etag, "CopySourceIfUnmodifiedSince": lm,
                               "CopySourceIfNoneMatch": quoted("1" * 32),
                               "CopySourceIfModifiedSince": lm - hour}, ok),
        ]
        for i, (name, kw, want) in enumerate(cases):
            with self.subTest(name):
                dst = f"cond-dst-{i}"
                if want == ok:
                    r = self.copy(dst, "cond-src", **kw)
                    self.assertEqual(r["CopyObjectResult"]["ETag"], etag)
                    self.assertEqual(self.get_body(self.bucket, dst), b"source body")
                else:
                    self.assertS3Error(self.copy, "PreconditionFailed", 412, dst, "cond-src", **kw)
                    self.assertS3Error(self.s3.head_object, "404", 404, Bucket=self.bucket, Key=dst)
        # The same through raw headers with HTTP-date strings.
        r = rawhttp.request(self.server.port, "PUT", f"/{self.bucket}/cond-raw",
                            headers={"x-amz-copy-source": f"/{self.bucket}/cond-src",
                                     "x-amz-copy-source-if-unmodified-since": before})
        self.assertEqual((r.status, r.error_code), (412, "PreconditionFailed"), r)
        r = rawhttp.request(self.server.port, "PUT", f"/{self.bucket}/cond-raw",
                            headers={"x-amz-copy-source": f"/{self.bucket}/cond-src",
                                     "x-amz-copy-source-if-modified-since": before})
        self.assertEqual(r.status, 200, r)
        self.assertIn(b"<CopyObjectResult", r.body)
        self.assertIn(etag.strip('"').encode(), r.body)

    def test_copy_errors(self):
        self.source("err-src")
        missing_bucket = self.bucket_name("gone")
        self.assertS3Error(self.copy, "NoSuchKey", 404, "err-dst", "no-such-source")
        self.assertS3Error(self.copy, "NoSuchBucket", 404, "err-dst", "err-src", src_bucket=missing_bucket)
        self.assertS3Error(self.copy, "NoSuchBucket", 404, "err-dst", "err-src", bucket=missing_bucket)
        for bad in ("nobucketnokey", f"/{self.bucket}", f"/{self.bucket}/"):
            with self.subTest(copy_source=bad):
                r = rawhttp.request(self.server.port, "PUT", f"/{self.bucket}/err-dst",
                                    headers={"x-amz-copy-source": bad})
                self.assertEqual((r.status, r.error_code), (400, "InvalidArgument"), r)
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=self.bucket, Key="err-dst")

    def test_copy_multipart_source_and_large(self):
        key = "mp-src"
        parts = [payload(PART, "cmp1"), payload(2 * MiB + 1, "cmp2")]
        uid = self.s3.create_multipart_upload(Bucket=self.bucket, Key=key, Metadata={"mp": "yes"})["UploadId"]
        etags = [self.s3.upload_part(Bucket=self.bucket, Key=key, UploadId=uid, PartNumber=i + 1,
                                     Body=d)["ETag"] for i, d in enumerate(parts)]
        self.s3.complete_multipart_upload(Bucket=self.bucket, Key=key, UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": i + 1, "ETag": e} for i, e in enumerate(etags)]})
        r = self.copy("mp-copy", key, bucket=self.other)
        # The copy is a single-part object: its ETag is the MD5 of the bytes.
        whole = b"".join(parts)
        self.assertEqual(r["CopyObjectResult"]["ETag"], quoted(md5_hex(whole)))
        h = self.s3.head_object(Bucket=self.other, Key="mp-copy")
        self.assertEqual((h["ContentLength"], h["Metadata"]), (len(whole), {"mp": "yes"}))
        self.assertEqual(self.get_body(self.other, "mp-copy"), whole)

    def test_aws_cli_copy(self):
        """aws s3api copy-object, and aws s3 cp between buckets: server-side
        copies (a multipart UploadPartCopy above the CLI's threshold)."""
        home = self.home
        for k, v in (("default.s3.multipart_threshold", "8MB"), ("default.s3.multipart_chunksize", "8MB")):
            self.server.aws(home, "configure", "set", k, v)
        work = tempfile.mkdtemp(dir=home)
        self.addCleanup(shutil.rmtree, work, True)
        src = os.path.join(work, "cli.bin")
        digest = write_random_file(src, 20 * MiB)
        with open(src, "rb") as f:
            self.s3.put_object(Bucket=self.bucket, Key="cli/src.bin", Body=f, Metadata={"k": "v"})
        p = self.server.aws(home, "s3api", "copy-object", "--bucket", self.other, "--key", "cli/api-copy.bin",
                            "--copy-source", f"{self.bucket}/cli/src.bin", "--metadata-directive", "REPLACE",
                            "--metadata", "replaced=1", "--content-type", "text/x-cli", check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        h = self.s3.head_object(Bucket=self.other, Key="cli/api-copy.bin")
        self.assertEqual(r["CopyObjectResult"]["ETag"], h["ETag"])
        self.assertEqual((h["Metadata"], h["ContentType"], h["ContentLength"]),
                         ({"replaced": "1"}, "text/x-cli", 20 * MiB))
        p = self.server.aws(home, "s3", "cp", "--no-progress", f"s3://{self.bucket}/cli/src.bin",
                            f"s3://{self.other}/cli/cp.bin", check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("copy:", p.stdout)
        h = self.s3.head_object(Bucket=self.other, Key="cli/cp.bin")
        self.assertEqual(h["ContentLength"], 20 * MiB)
        # 20 MiB with an 8 MiB threshold: copied as 3 parts by UploadPartCopy.
        self.assertEqual(h["ETag"], multipart_etag_of_file(src, 8 * MiB))
        dst = os.path.join(work, "down.bin")
        self.s3.download_file(self.other, "cli/cp.bin", dst)
        self.assertEqual(sha256_file(dst), digest)


class ConditionalTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        no_empty_expect(cls.s3)
        from harness import unique_name
        cls.bucket = unique_name("cond")
        cls.s3.create_bucket(Bucket=cls.bucket)

    def tearDown(self):
        self.assertServerHealthy()

    def req(self, method, key, headers=None, body=b""):
        return signed_request(self.server, method, f"/{self.bucket}/{quote_key(key)}", headers=headers,
                              body=body)

    def raw(self, method, key, headers=None, body=b""):
        return rawhttp.request(self.server.port, method, f"/{self.bucket}/{quote_key(key)}",
                               headers=headers, body=body)

    # ---- GET / HEAD ---------------------------------------------------------
    def test_get_head_conditions(self):
        key = "get-cond"
        body = b"conditional body"
        etag = quoted(md5_hex(body))
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=body)
        lm_header = self.s3.head_object(Bucket=self.bucket, Key=key)["ResponseMetadata"]["HTTPHeaders"]["last-modified"]
        lm = parsedate_to_datetime(lm_header)
        at, before = http_date(lm), http_date(lm - datetime.timedelta(hours=1))
        other = quoted("2" * 32)
        cases = [
            ("no conditions", {}, 200),
            ("If-Match equal", {"If-Match": etag}, 200),
            ("If-Match unquoted", {"If-Match": etag.strip('"')}, 200),
            ("If-Match in a list", {"If-Match": f"{other}, {etag}"}, 200),
            ("If-Match *", {"If-Match": "*"}, 200),
            ("If-Match differs", {"If-Match": other}, 412),
            ("If-None-Match equal", {"If-None-Match": etag}, 304),
            ("If-None-Match *", {"If-None-Match": "*"}, 304),
            ("If-None-Match in a list", {"If-None-Match": f"{other}, {etag}"}, 304),
            ("If-None-Match differs", {"If-None-Match": other}, 200),
            ("If-Modified-Since at Last-Modified", {"If-Modified-Since": at}, 304),
            ("If-Modified-Since before", {"If-Modified-Since": before}, 200),
            ("If-Unmodified-Since at Last-Modified", {"If-Unmodified-Since": at}, 200),
            ("If-Unmodified-Since before", {"If-Unmodified-Since": before}, 412),
            # Precedence (AWS): If-Match true overrides If-Unmodified-Since false.
            ("If-Match true + If-Unmodified-Since false", {"If-Match": etag, "If-Unmodified-Since": before}, 200),
            ("If-Match false + If-Unmodified-Since true", {"If-Match": other, "If-Unmodified-Since": at}, 412),
            # If-None-Match false + If-Modified-Since true -> 304.
            ("If-None-Match false + If-Modified-Since true",
             {"If-None-Match": etag, "If-Modified-Since": before}, 304),
            # If-None-Match true + If-Modified-Since false -> 200 (If-Modified-Since ignored).
            ("If-None-Match true + If-Modified-Since false",
             {"If-None-Match": other, "If-Modified-Since": at}, 200),
            # If-Match false wins over everything.
            ("If-Match false + If-None-Match equal", {"If-Match": other, "If-None-Match": etag}, 412),
            ("If-Match true + If-None-Match equal", {"If-Match": etag, "If-None-Match": etag}, 304),
            ("unparseable date ignored", {"If-Modified-Since": "not a date"}, 200),
        ]
        for name, headers, want in cases:
            for method in ("GET", "HEAD"):
                with self.subTest(name, method=method):
                    r = self.req(method, key, headers=headers)
                    self.assertEqual(r.status, want, (r.status, r.body[:300]))
                    if want == 200:
                        self.assertEqual(r.headers["etag"], etag)
                        self.assertEqual(r.body, body if method == "GET" else b"")
                    elif want == 304:
                        self.assertEqual(r.body, b"")
                        self.assertEqual(r.headers["etag"], etag)
                        self.assertEqual(r.headers["last-modified"], lm_header)
                    else:
                        self.assertEqual(r.body[:0], b"")
                        if method == "GET":
                            self.assertIn(b"<Code>PreconditionFailed</Code>", r.body)
        # boto3's parameters.
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key=key, IfMatch=etag)["Body"].read(), body)
        self.assertS3Error(self.s3.get_object, "PreconditionFailed", 412, Bucket=self.bucket, Key=key,
                           IfMatch=other)
        self.assertS3Error(self.s3.get_object, "304", 304, Bucket=self.bucket, Key=key, IfNoneMatch=etag)
        self.assertS3Error(self.s3.head_object, "304", 304, Bucket=self.bucket, Key=key,
                           IfModifiedSince=lm)
        # Conditions combine with a range.
        r = self.req("GET", key, headers={"If-Match": etag, "Range": "bytes=0-10"})
        self.assertEqual((r.status, r.body), (206, body[:11]))
        r = self.req("GET", key, headers={"If-None-Match": etag, "Range": "bytes=0-10"})
        self.assertEqual(r.status, 304)
        # On a missing key the answer is 404, whatever the condition.
        for headers in ({"If-Match": etag}, {"If-None-Match": "*"}):
            r = self.req("GET", "no-such-key", headers=headers)
            self.assertEqual(r.status, 404, r)

    # ---- conditional PUT ------------------------------------------------------
    def test_put_if_none_match(self):
        key = "put-inm"
        r = self.raw("PUT", key, headers={"If-None-Match": "*"}, body=b"first")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header("ETag"), quoted(md5_hex(b"first")))
        r = self.raw("PUT", key, headers={"If-None-Match": "*"}, body=b"second")
        self.assertEqual((r.status, r.error_code), (412, "PreconditionFailed"), r)
        self.assertEqual(self.get_body(self.bucket, key), b"first")
        # Larger bodies (a data file) too, and a streaming aws-chunked one.
        big = payload(400 * 1024, "inm-big")
        r = self.raw("PUT", key, headers={"If-None-Match": "*"}, body=big)
        self.assertEqual((r.status, r.error_code), (412, "PreconditionFailed"), r)
        req = rawhttp.signed_streaming_put(self.server.port, f"/{self.bucket}/{key}", big,
                                           headers={"If-None-Match": "*"})
        r = rawhttp.send_request(self.server.port, req)
        self.assertEqual((r.status, r.error_code), (412, "PreconditionFailed"), r)
        self.assertEqual(self.get_body(self.bucket, key), b"first")
        # After a delete the key is free again.
        self.s3.delete_object(Bucket=self.bucket, Key=key)
        r = self.raw("PUT", key, headers={"If-None-Match": "*"}, body=big)
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.get_body(self.bucket, key), big)

    def test_put_if_match(self):
        key = "put-im"
        r = self.raw("PUT", key, headers={"If-Match": quoted(md5_hex(b"v1"))}, body=b"v1")
        self.assertEqual((r.status, r.error_code), (404, "NoSuchKey"), r)
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=self.bucket, Key=key)
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=b"v1")
        r = self.raw("PUT", key, headers={"If-Match": quoted(md5_hex(b"other"))}, body=b"v2")
        self.assertEqual((r.status, r.error_code), (412, "PreconditionFailed"), r)
        self.assertEqual(self.get_body(self.bucket, key), b"v1")
        r = self.raw("PUT", key, headers={"If-Match": quoted(md5_hex(b"v1"))}, body=b"v2")
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.get_body(self.bucket, key), b"v2")
        # The old ETag no longer matches.
        r = self.raw("PUT", key, headers={"If-Match": quoted(md5_hex(b"v1"))}, body=b"v3")
        self.assertEqual((r.status, r.error_code), (412, "PreconditionFailed"), r)
        self.assertEqual(self.get_body(self.bucket, key), b"v2")

    def test_if_none_match_race(self):
        """Two writers with If-None-Match: * on the same new key, released
        together, 20 times: exactly one 200 and one 412 each time, and the
        object is the winner's."""
        for rnd in range(20):
            key = f"race/{rnd}"
            bodies = [payload(200 * 1024 + w, f"race-{rnd}-{w}") for w in range(2)]
            reqs = [rawhttp.sign(self.server.port, "PUT", f"/{self.bucket}/{key}",
                                 headers={"If-None-Match": "*"}, body=b) for b in bodies]
            results = race(self.server.port, reqs)
            self.assertEqual(sorted(r.status for r in results), [200, 412], (rnd, results))
            winner = [i for i, r in enumerate(results) if r.status == 200][0]
            self.assertEqual(results[1 - winner].error_code, "PreconditionFailed")
            self.assertEqual(results[winner].header("ETag"), quoted(md5_hex(bodies[winner])))
            self.assertEqual(self.get_body(self.bucket, key), bodies[winner])

    def test_if_match_race(self):
        """Two writers with If-Match: <current etag>, released together: one
        replaces the object, the other finds the ETag changed (412)."""
        for rnd in range(10):
            key = f"race-im/{rnd}"
            self.s3.put_object(Bucket=self.bucket, Key=key, Body=b"base")
            bodies = [payload(150 * 1024 + w, f"im-{rnd}-{w}") for w in range(2)]
            reqs = [rawhttp.sign(self.server.port, "PUT", f"/{self.bucket}/{key}",
                                 headers={"If-Match": quoted(md5_hex(b"base"))}, body=b) for b in bodies]
            results = race(self.server.port, reqs)
            self.assertEqual(sorted(r.status for r in results), [200, 412], (rnd, results))
            winner = [i for i, r in enumerate(results) if r.status == 200][0]
            self.assertEqual(self.get_body(self.bucket, key), bodies[winner])


if __name__ == "__main__":
    unittest.main()

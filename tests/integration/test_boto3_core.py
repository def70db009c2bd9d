"""Core S3 API behaviour through boto3 (and raw signed HTTP where boto3 hides
the wire): buckets, objects, headers, ranges, keys, listing, virtual-host
addressing, presigned URLs, authentication errors and the error format."""
import base64
import datetime
import gzip
import hashlib
import http.client
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (ACCESS_KEY, SECRET_KEY, Server, ServerTestCase,  # noqa: E402
                     parse_error, parse_xml, signed_request, unique_name)

UTC = datetime.timezone.utc
DOMAIN = "s3.test"


def md5_hex(data):
    return hashlib.md5(data).hexdigest()


def etag_of(data):
    return '"%s"' % md5_hex(data)


def md5_b64(data):
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def byte_sorted(keys):
    return sorted(keys, key=lambda k: k.encode("utf-8"))


class Boto3CoreTest(ServerTestCase):
    server_kwargs = {"domain": DOMAIN}

    # ---- helpers ---------------------------------------------------------
    def assertRecent(self, when, slack=600):
        now = datetime.datetime.now(UTC)
        self.assertLess(abs((now - when).total_seconds()), slack, f"{when} is not close to {now}")

    def fill(self, bucket, keys):
        for k in keys:
            self.put(bucket, k, k.encode())

    def list_v2_all(self, bucket, **kw):
        """Pages ListObjectsV2 by ContinuationToken; returns [(keys, prefixes, resp)]."""
        pages, token = [], None
        while True:
            args = dict(Bucket=bucket, **kw)
            if token:
                args["ContinuationToken"] = token
            r = self.s3.list_objects_v2(**args)
            keys = [o["Key"] for o in r.get("Contents", [])]
            prefixes = [p["Prefix"] for p in r.get("CommonPrefixes", [])]
            self.assertEqual(r["KeyCount"], len(keys) + len(prefixes), r)
            pages.append((keys, prefixes, r))
            self.assertLess(len(pages), 1000, "pagination does not terminate")
            if not r["IsTruncated"]:
                self.assertNotIn("NextContinuationToken", r)
                return pages
            token = r["NextContinuationToken"]
            self.assertTrue(token)

    def curl(self, *args):
        """Runs curl; returns (http_status, body bytes, headers text)."""
        with tempfile.TemporaryDirectory() as d:
            out, hdr = os.path.join(d, "body"), os.path.join(d, "headers")
            p = subprocess.run(["curl", "-s", "-g", "-o", out, "-D", hdr, "-w", "%{http_code}", *args],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out, "rb") as f:
                body = f.read()
            with open(hdr) as f:
                headers = f.read()
            return int(p.stdout), body, headers

    # ---- buckets ---------------------------------------------------------
    def test_create_bucket_returns_location(self):
        b = self.bucket_name()
        r = self.s3.create_bucket(Bucket=b)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(r["Location"], "/" + b)
        self.assertEqual(self.s3.head_bucket(Bucket=b)["ResponseMetadata"]["HTTPStatusCode"], 200)

    def test_create_bucket_valid_edge_names(self):
        for name in ["abc", "a" * 63, "a.b-c1", "0abc", "ab9"]:
            with self.subTest(name=name):
                self.s3.create_bucket(Bucket=name)
                self.s3.head_bucket(Bucket=name)
                self.s3.delete_bucket(Bucket=name)

    def test_create_bucket_invalid_names(self):
        bad = ["ab", "UPPER", "Abc", "a_b", "192.168.1.1", "-abc", "abc-", ".abc", "abc.", "a..b",
               "a" * 64]
        for name in bad:
            with self.subTest(name=name):
                self.assertS3Error(self.s3.create_bucket, "InvalidBucketName", 400, Bucket=name)
        names = [b["Name"] for b in self.s3.list_buckets()["Buckets"]]
        for name in bad:
            self.assertNotIn(name, names)

    def test_create_bucket_twice_is_already_owned(self):
        b = self.make_bucket()
        self.put(b, "keep", b"data")
        self.assertS3Error(self.s3.create_bucket, "BucketAlreadyOwnedByYou", 409, Bucket=b)
        # The failed re-create leaves the bucket and its contents alone.
        self.assertEqual(self.get_body(b, "keep"), b"data")

    def test_create_bucket_with_location_constraint(self):
        srv = Server(extra_args=["--region", "eu-west-1"]).start()
        self.addCleanup(srv.cleanup)
        s3 = srv.boto3_client(region="eu-west-1")
        self.addCleanup(s3.close)
        b = self.bucket_name()
        r = s3.create_bucket(Bucket=b, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(s3.get_bucket_location(Bucket=b)["LocationConstraint"], "eu-west-1")
        h = s3.head_bucket(Bucket=b)
        self.assertEqual(h["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"], "eu-west-1")
        # A constraint naming another region is refused, and creates nothing.
        other = self.bucket_name()
        self.assertS3Error(s3.create_bucket, "IllegalLocationConstraintException", 400, Bucket=other,
                           CreateBucketConfiguration={"LocationConstraint": "ap-south-1"})
        self.assertNotIn(other, [x["Name"] for x in s3.list_buckets()["Buckets"]])

    def test_head_bucket(self):
        b = self.make_bucket()
        r = self.s3.head_bucket(Bucket=b)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(r["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"], "us-east-1")
        self.assertS3Error(self.s3.head_bucket, "404", 404, Bucket=self.bucket_name("missing"))

    def test_list_buckets(self):
        tag = unique_name("lb")
        mine = [f"{tag}-c", f"{tag}-a", f"{tag}-b"]
        for b in mine:
            self.s3.create_bucket(Bucket=b)
        r = self.s3.list_buckets()
        names = [b["Name"] for b in r["Buckets"]]
        self.assertEqual(names, sorted(names))
        self.assertEqual([n for n in names if n.startswith(tag)], sorted(mine))
        for b in r["Buckets"]:
            if b["Name"] in mine:
                self.assertRecent(b["CreationDate"])
        self.assertTrue(r["Owner"]["ID"])
        self.s3.delete_bucket(Bucket=f"{tag}-b")
        names = [b["Name"] for b in self.s3.list_buckets()["Buckets"]]
        self.assertEqual([n for n in names if n.startswith(tag)], [f"{tag}-a", f"{tag}-c"])

    def test_get_bucket_location(self):
        b = self.make_bucket()
        # us-east-1 is reported as an empty LocationConstraint.
        self.assertIsNone(self.s3.get_bucket_location(Bucket=b)["LocationConstraint"])
        self.assertS3Error(self.s3.get_bucket_location, "NoSuchBucket", 404, Bucket=self.bucket_name("missing"))

    def test_delete_bucket(self):
        b = self.make_bucket()
        self.put(b, "x", b"1")
        self.assertS3Error(self.s3.delete_bucket, "BucketNotEmpty", 409, Bucket=b)
        self.s3.head_bucket(Bucket=b)
        self.assertEqual(self.get_body(b, "x"), b"1")
        self.s3.delete_object(Bucket=b, Key="x")
        r = self.s3.delete_bucket(Bucket=b)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 204)
        self.assertS3Error(self.s3.head_bucket, "404", 404, Bucket=b)
        self.assertS3Error(self.s3.delete_bucket, "NoSuchBucket", 404, Bucket=b)
        self.assertNotIn(b, [x["Name"] for x in self.s3.list_buckets()["Buckets"]])
        # The name can be reused, and the new bucket starts empty.
        self.s3.create_bucket(Bucket=b)
        self.assertEqual(self.s3.list_objects_v2(Bucket=b)["KeyCount"], 0)

    # ---- objects: headers and metadata -------------------------------------
    def test_put_get_head_roundtrip_with_headers(self):
        b = self.make_bucket()
        body = gzip.compress(b"hello world " * 100)
        expires = datetime.datetime(2037, 1, 2, 3, 4, 5, tzinfo=UTC)
        r = self.put(b, "obj.txt", body, Metadata={"color": "blue", "two-words": "a b  c"},
                     ContentType="text/plain; charset=utf-8", ContentEncoding="gzip",
                     ContentDisposition='attachment; filename="r.txt"', ContentLanguage="en-US",
                     CacheControl="max-age=3600", Expires=expires)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(r["ETag"], etag_of(body))
        for op in (self.s3.head_object, self.s3.get_object):
            with self.subTest(op=op.__name__):
                h = op(Bucket=b, Key="obj.txt")
                self.assertEqual(h["ResponseMetadata"]["HTTPStatusCode"], 200)
                self.assertEqual(h["ETag"], etag_of(body))
                self.assertEqual(h["ContentLength"], len(body))
                self.assertEqual(h["Metadata"], {"color": "blue", "two-words": "a b  c"})
                self.assertEqual(h["ContentType"], "text/plain; charset=utf-8")
                self.assertEqual(h["ContentEncoding"], "gzip")
                self.assertEqual(h["ContentDisposition"], 'attachment; filename="r.txt"')
                self.assertEqual(h["ContentLanguage"], "en-US")
                self.assertEqual(h["CacheControl"], "max-age=3600")
                self.assertEqual(h["Expires"], expires)
                self.assertEqual(h["AcceptRanges"], "bytes")
                self.assertRecent(h["LastModified"])
                if "Body" in h:
                    self.assertEqual(h["Body"].read(), body)

    def test_metadata_keys_come_back_lowercase(self):
        b = self.make_bucket()
        self.put(b, "m", b"x", Metadata={"CamelCase": "Value", "UPPER": "V2"})
        self.assertEqual(self.s3.head_object(Bucket=b, Key="m")["Metadata"],
                         {"camelcase": "Value", "upper": "V2"})

    def test_default_content_type(self):
        b = self.make_bucket()
        self.put(b, "noct", b"abc")
        self.assertEqual(self.s3.head_object(Bucket=b, Key="noct")["ContentType"], "binary/octet-stream")

    def test_response_header_overrides(self):
        b = self.make_bucket()
        self.put(b, "o", b"payload", ContentType="text/plain", CacheControl="no-cache")
        exp = datetime.datetime(2031, 5, 6, 7, 8, 9, tzinfo=UTC)
        r = self.s3.get_object(Bucket=b, Key="o", ResponseContentType="application/x-override",
                               ResponseContentDisposition='attachment; filename="o.bin"',
                               ResponseContentEncoding="identity", ResponseContentLanguage="fr",
                               ResponseCacheControl="private, max-age=5", ResponseExpires=exp)
        self.assertEqual(r["Body"].read(), b"payload")
        self.assertEqual(r["ContentType"], "application/x-override")
        self.assertEqual(r["ContentDisposition"], 'attachment; filename="o.bin"')
        self.assertEqual(r["ContentEncoding"], "identity")
        self.assertEqual(r["ContentLanguage"], "fr")
        self.assertEqual(r["CacheControl"], "private, max-age=5")
        self.assertEqual(r["Expires"], exp)
        # Overrides do not change the stored object.
        h = self.s3.head_object(Bucket=b, Key="o")
        self.assertEqual(h["ContentType"], "text/plain")
        self.assertEqual(h["CacheControl"], "no-cache")
        self.assertNotIn("ContentDisposition", h)

    def test_content_md5(self):
        b = self.make_bucket()
        data = b"content-md5 check"
        r = self.put(b, "ok", data, ContentMD5=md5_b64(data))
        self.assertEqual(r["ETag"], etag_of(data))
        self.assertEqual(self.get_body(b, "ok"), data)
        # Well-formed but wrong digest: BadDigest, and nothing is stored.
        self.assertS3Error(self.put, "BadDigest", 400, b, "bad", data, ContentMD5=md5_b64(b"other"))
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=b, Key="bad")
        # ... and an existing object is left untouched.
        self.assertS3Error(self.put, "BadDigest", 400, b, "ok", b"new", ContentMD5=md5_b64(b"other"))
        self.assertEqual(self.get_body(b, "ok"), data)
        # Not base64, or not 16 bytes: InvalidDigest.
        for bad in ["not-base64!!", base64.b64encode(b"short").decode(), "AAAA"]:
            with self.subTest(md5=bad):
                self.assertS3Error(self.put, "InvalidDigest", 400, b, "inv", data, ContentMD5=bad)
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=b, Key="inv")

    # ---- ranges ----------------------------------------------------------
    def test_ranges(self):
        b = self.make_bucket()
        data = bytes(range(100))
        self.put(b, "r", data)
        cases = [("bytes=0-9", 0, 9), ("bytes=10-", 10, 99), ("bytes=-5", 95, 99),
                 ("bytes=90-200", 90, 99), ("bytes=99-99", 99, 99), ("bytes=-500", 0, 99),
                 ("bytes=0-0", 0, 0)]
        for rng, first, last in cases:
            with self.subTest(range=rng):
                r = self.s3.get_object(Bucket=b, Key="r", Range=rng)
                self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 206)
                self.assertEqual(r["ContentRange"], f"bytes {first}-{last}/100")
                self.assertEqual(r["ContentLength"], last - first + 1)
                self.assertEqual(r["ETag"], etag_of(data))
                self.assertEqual(r["Body"].read(), data[first:last + 1])

    def test_range_not_satisfiable(self):
        b = self.make_bucket()
        self.put(b, "r", bytes(100))
        for rng in ["bytes=100-", "bytes=100-200", "bytes=1000-1001"]:
            with self.subTest(range=rng):
                e = self.assertS3Error(self.s3.get_object, "InvalidRange", 416, Bucket=b, Key="r", Range=rng)
                self.assertEqual(e["ResponseMetadata"]["HTTPHeaders"]["content-range"], "bytes */100")

    def test_unparseable_range_is_ignored(self):
        b = self.make_bucket()
        self.put(b, "r", b"0123456789")
        for rng in ["bytes=x-y", "items=0-1"]:
            with self.subTest(range=rng):
                r = self.s3.get_object(Bucket=b, Key="r", Range=rng)
                self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
                self.assertNotIn("ContentRange", r)
                self.assertEqual(r["Body"].read(), b"0123456789")

    # ---- keys and sizes --------------------------------------------------
    def test_special_character_keys(self):
        b = self.make_bucket()
        keys = ["unicode-ключ-日本語-😀", "with space", "two  spaces ", "plus+sign", "100%", "pct%20lit",
                "question?mark", "hash#tag", "amp&eq=semi;colon", "tilde~star*(paren)!'", "a/b/c",
                "comma,colon:at@dollar$", "brackets[]{}^`|\\", "quote\"lt<gt>", "é"]
        for k in keys:
            with self.subTest(key=k):
                r = self.put(b, k, k.encode())
                self.assertEqual(r["ETag"], etag_of(k.encode()))
                self.assertEqual(self.get_body(b, k), k.encode())
                self.assertEqual(self.s3.head_object(Bucket=b, Key=k)["ContentLength"], len(k.encode()))
        listed = [o["Key"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]]
        self.assertEqual(listed, byte_sorted(keys))
        # '+' in a key is a literal plus, never a space.
        self.assertS3Error(self.s3.get_object, "NoSuchKey", 404, Bucket=b, Key="plus sign")
        for k in keys:
            self.assertEqual(self.s3.delete_object(Bucket=b, Key=k)["ResponseMetadata"]["HTTPStatusCode"], 204)
        self.assertEqual(self.s3.list_objects_v2(Bucket=b)["KeyCount"], 0)

    def test_key_length_limit(self):
        b = self.make_bucket()
        for key in ["k" * 1024, "é" * 512]:  # 1024 bytes of UTF-8 each
            with self.subTest(key_len=len(key)):
                self.put(b, key, b"long")
                self.assertEqual(self.get_body(b, key), b"long")
        for key in ["k" * 1025, "é" * 512 + "a"]:  # 1025 bytes
            with self.subTest(key_len=len(key)):
                self.assertS3Error(self.put, "KeyTooLongError", 400, b, key, b"x")
        listed = [o["Key"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]]
        self.assertEqual(listed, byte_sorted(["k" * 1024, "é" * 512]))

    def test_empty_object(self):
        b = self.make_bucket()
        r = self.put(b, "empty", b"")
        self.assertEqual(r["ETag"], '"d41d8cd98f00b204e9800998ecf8427e"')
        g = self.s3.get_object(Bucket=b, Key="empty")
        self.assertEqual(g["ContentLength"], 0)
        self.assertEqual(g["Body"].read(), b"")
        self.assertEqual(g["ETag"], '"d41d8cd98f00b204e9800998ecf8427e"')
        self.assertEqual(self.s3.head_object(Bucket=b, Key="empty")["ContentLength"], 0)
        self.assertEqual(self.s3.list_objects_v2(Bucket=b)["Contents"][0]["Size"], 0)

    def test_object_sizes_around_inline_boundary(self):
        b = self.make_bucket()
        k = 128 * 1024
        sizes = [0, 1, k - 1, k, k + 1, 5 * 1024 * 1024]
        blobs = {n: os.urandom(n) for n in sizes}
        for n, data in blobs.items():
            with self.subTest(size=n):
                key = f"size-{n:08d}"
                self.assertEqual(self.put(b, key, data)["ETag"], etag_of(data))
                h = self.s3.head_object(Bucket=b, Key=key)
                self.assertEqual(h["ContentLength"], n)
                self.assertEqual(h["ETag"], etag_of(data))
                got = self.get_body(b, key)
                self.assertEqual(len(got), n)
                self.assertEqual(got, data)
                if n >= 4:
                    r = self.s3.get_object(Bucket=b, Key=key, Range=f"bytes={n - 4}-{n + 10}")
                    self.assertEqual(r["ContentRange"], f"bytes {n - 4}-{n - 1}/{n}")
                    self.assertEqual(r["Body"].read(), data[-4:])
        listed = self.s3.list_objects_v2(Bucket=b)["Contents"]
        self.assertEqual([(o["Key"], o["Size"], o["ETag"]) for o in listed],
                         [(f"size-{n:08d}", n, etag_of(blobs[n])) for n in sizes])
        # A range across the 128 KiB mark of the 5 MiB object.
        big = blobs[5 * 1024 * 1024]
        r = self.s3.get_object(Bucket=b, Key="size-05242880", Range=f"bytes={k - 3}-{k + 2}")
        self.assertEqual(r["Body"].read(), big[k - 3:k + 3])

    def test_overwrite_replaces_content_and_metadata(self):
        b = self.make_bucket()
        self.put(b, "fresh", b"no content type given")
        default_type = self.s3.head_object(Bucket=b, Key="fresh")["ContentType"]
        self.put(b, "o", b"first version", Metadata={"v": "1"}, ContentType="text/plain")
        for size in [3, 200 * 1024, 5, 0]:  # inline -> file -> inline -> empty
            with self.subTest(size=size):
                data = os.urandom(size)
                self.put(b, "o", data, Metadata={"size": str(size)})
                g = self.s3.get_object(Bucket=b, Key="o")
                self.assertEqual(g["Body"].read(), data)
                self.assertEqual(g["ETag"], etag_of(data))
                self.assertEqual(g["Metadata"], {"size": str(size)})
                self.assertEqual(g["ContentType"], default_type)
        listed = self.s3.list_objects_v2(Bucket=b)
        self.assertEqual([(o["Key"], o["Size"]) for o in listed["Contents"]],
                         [("fresh", len(b"no content type given")), ("o", 0)])

    def test_missing_key_and_bucket_errors(self):
        b = self.make_bucket()
        missing = self.bucket_name("missing")
        self.assertS3Error(self.s3.get_object, "NoSuchKey", 404, Bucket=b, Key="nope")
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=b, Key="nope")
        self.assertS3Error(self.s3.get_object, "NoSuchBucket", 404, Bucket=missing, Key="k")
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=missing, Key="k")
        self.assertS3Error(self.put, "NoSuchBucket", 404, missing, "k", b"data")
        self.assertS3Error(self.s3.delete_object, "NoSuchBucket", 404, Bucket=missing, Key="k")
        self.assertS3Error(self.s3.list_objects_v2, "NoSuchBucket", 404, Bucket=missing)
        self.assertS3Error(self.s3.list_objects, "NoSuchBucket", 404, Bucket=missing)
        self.assertS3Error(self.s3.delete_objects, "NoSuchBucket", 404, Bucket=missing,
                           Delete={"Objects": [{"Key": "k"}]})
        self.assertNotIn(missing, [x["Name"] for x in self.s3.list_buckets()["Buckets"]])

    # ---- deletes ---------------------------------------------------------
    def test_delete_object(self):
        b = self.make_bucket()
        self.put(b, "d", b"x")
        self.put(b, "keep", b"y")
        self.assertEqual(self.s3.delete_object(Bucket=b, Key="d")["ResponseMetadata"]["HTTPStatusCode"], 204)
        self.assertS3Error(self.s3.get_object, "NoSuchKey", 404, Bucket=b, Key="d")
        # Deleting a key that does not exist succeeds too.
        self.assertEqual(self.s3.delete_object(Bucket=b, Key="d")["ResponseMetadata"]["HTTPStatusCode"], 204)
        self.assertEqual(self.s3.delete_object(Bucket=b, Key="never")["ResponseMetadata"]["HTTPStatusCode"], 204)
        self.assertEqual([o["Key"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]], ["keep"])

    def test_delete_objects_verbose(self):
        b = self.make_bucket()
        self.fill(b, ["k1", "k2", "dir/k3", "stay"])
        r = self.s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "k1"}, {"Key": "dir/k3"},
                                                                 {"Key": "absent"}, {"Key": "k2"}]})
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(sorted(d["Key"] for d in r["Deleted"]), ["absent", "dir/k3", "k1", "k2"])
        self.assertNotIn("Errors", r)
        self.assertEqual([o["Key"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]], ["stay"])

    def test_delete_objects_quiet(self):
        b = self.make_bucket()
        self.fill(b, ["q1", "q2", "stay"])
        r = self.s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "q1"}, {"Key": "q2"},
                                                                 {"Key": "absent"}], "Quiet": True})
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertNotIn("Deleted", r)
        self.assertNotIn("Errors", r)
        self.assertEqual([o["Key"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]], ["stay"])

    # ---- listing -----------------------------------------------------------
    LISTING_KEYS = ["a/1", "a/2", "a/b/3", "b/1", "c", "d/e/f", "e"]

    def listing_bucket(self):
        b = self.make_bucket("ls")
        self.fill(b, self.LISTING_KEYS)
        return b

    def test_list_v2_prefix_and_delimiter(self):
        b = self.listing_bucket()
        r = self.s3.list_objects_v2(Bucket=b)
        self.assertEqual([o["Key"] for o in r["Contents"]], self.LISTING_KEYS)
        self.assertEqual(r["KeyCount"], 7)
        self.assertFalse(r["IsTruncated"])
        self.assertEqual(r["Name"], b)
        self.assertEqual(r["MaxKeys"], 1000)
        for o in r["Contents"]:
            self.assertEqual(o["Size"], len(o["Key"]))
            self.assertEqual(o["ETag"], etag_of(o["Key"].encode()))
            self.assertEqual(o["StorageClass"], "STANDARD")
            self.assertRecent(o["LastModified"])

        cases = [
            (dict(Prefix="a/"), ["a/1", "a/2", "a/b/3"], []),
            (dict(Delimiter="/"), ["c", "e"], ["a/", "b/", "d/"]),
            (dict(Prefix="a/", Delimiter="/"), ["a/1", "a/2"], ["a/b/"]),
            (dict(Prefix="d/", Delimiter="/"), [], ["d/e/"]),
            (dict(Prefix="zzz"), [], []),
            (dict(Prefix="a/b/3"), ["a/b/3"], []),
            (dict(Delimiter="b"), ["a/1", "a/2", "c", "d/e/f", "e"], ["a/b", "b"]),
        ]
        for kw, keys, prefixes in cases:
            with self.subTest(**kw):
                r = self.s3.list_objects_v2(Bucket=b, **kw)
                self.assertEqual([o["Key"] for o in r.get("Contents", [])], keys)
                self.assertEqual([p["Prefix"] for p in r.get("CommonPrefixes", [])], prefixes)
                self.assertEqual(r["KeyCount"], len(keys) + len(prefixes))
                self.assertFalse(r["IsTruncated"])
                self.assertEqual(r.get("Prefix", ""), kw.get("Prefix", ""))
                if "Delimiter" in kw:
                    self.assertEqual(r["Delimiter"], kw["Delimiter"])

    def test_list_v2_max_keys_pagination(self):
        b = self.listing_bucket()
        for max_keys in [1, 2, 3, 6, 7, 1000]:
            with self.subTest(max_keys=max_keys):
                pages = self.list_v2_all(b, MaxKeys=max_keys)
                self.assertEqual([k for keys, _, _ in pages for k in keys], self.LISTING_KEYS)
                self.assertEqual(len(pages), max(1, -(-7 // max_keys)))
                for keys, _, r in pages[:-1]:
                    self.assertTrue(r["IsTruncated"])
                    self.assertEqual(len(keys), max_keys)
                    self.assertEqual(r["MaxKeys"], max_keys)

    def test_list_v2_delimiter_pagination(self):
        b = self.listing_bucket()
        for max_keys in [1, 2, 4]:
            with self.subTest(max_keys=max_keys):
                pages = self.list_v2_all(b, MaxKeys=max_keys, Delimiter="/")
                items = []
                for keys, prefixes, _ in pages:
                    self.assertLessEqual(len(keys) + len(prefixes), max_keys)
                    items += keys + prefixes
                self.assertEqual(sorted(items), ["a/", "b/", "c", "d/", "e"])
                self.assertEqual(len(items), 5)
                merged = []
                for keys, prefixes, _ in pages:
                    merged += sorted(keys + prefixes)
                self.assertEqual(merged, ["a/", "b/", "c", "d/", "e"])

    def test_list_v2_start_after(self):
        b = self.listing_bucket()
        cases = [("a/b/3", ["b/1", "c", "d/e/f", "e"]), ("b", ["b/1", "c", "d/e/f", "e"]),
                 ("", self.LISTING_KEYS), ("e", []), ("0", self.LISTING_KEYS)]
        for start, keys in cases:
            with self.subTest(start_after=start):
                r = self.s3.list_objects_v2(Bucket=b, StartAfter=start)
                self.assertEqual([o["Key"] for o in r.get("Contents", [])], keys)
                if start:
                    self.assertEqual(r["StartAfter"], start)
        pages = self.list_v2_all(b, StartAfter="a/2", MaxKeys=2)
        self.assertEqual([k for keys, _, _ in pages for k in keys], ["a/b/3", "b/1", "c", "d/e/f", "e"])

    def test_list_v2_encoding_type_url(self):
        b = self.make_bucket()
        keys = ["plain", "with space", "plus+sign", "ü-umlaut", "x/y z/w"]
        self.fill(b, keys)
        # Asking for url encoding explicitly: botocore then leaves the keys as sent.
        r = self.s3.list_objects_v2(Bucket=b, EncodingType="url")
        self.assertEqual(r["EncodingType"], "url")
        raw = [o["Key"] for o in r["Contents"]]
        self.assertEqual([urllib.parse.unquote_plus(k) for k in raw], byte_sorted(keys))
        by_key = dict(zip(byte_sorted(keys), raw))
        self.assertEqual(by_key["plain"], "plain")
        self.assertIn(by_key["with space"], ["with%20space", "with+space"])
        self.assertEqual(by_key["plus+sign"], "plus%2Bsign")
        self.assertEqual(by_key["ü-umlaut"], "%C3%BC-umlaut")
        r = self.s3.list_objects_v2(Bucket=b, EncodingType="url", Delimiter="/", Prefix="x/")
        self.assertEqual([urllib.parse.unquote_plus(p["Prefix"]) for p in r["CommonPrefixes"]], ["x/y z/"])
        self.assertNotIn(" ", r["CommonPrefixes"][0]["Prefix"])
        # Default boto3 call (it sets encoding-type=url itself and decodes).
        r = self.s3.list_objects_v2(Bucket=b)
        self.assertEqual([o["Key"] for o in r["Contents"]], byte_sorted(keys))
        r = self.s3.list_objects(Bucket=b)
        self.assertEqual([o["Key"] for o in r["Contents"]], byte_sorted(keys))

    def test_list_v2_fetch_owner(self):
        b = self.make_bucket()
        self.put(b, "k", b"v")
        owner = self.s3.list_buckets()["Owner"]
        r = self.s3.list_objects_v2(Bucket=b)
        self.assertNotIn("Owner", r["Contents"][0])
        r = self.s3.list_objects_v2(Bucket=b, FetchOwner=True)
        self.assertEqual(r["Contents"][0]["Owner"]["ID"], owner["ID"])
        # V1 always includes the owner.
        r = self.s3.list_objects(Bucket=b)
        self.assertEqual(r["Contents"][0]["Owner"]["ID"], owner["ID"])

    def test_list_v1_marker(self):
        b = self.listing_bucket()
        r = self.s3.list_objects(Bucket=b, Marker="a/2")
        self.assertEqual([o["Key"] for o in r["Contents"]], ["a/b/3", "b/1", "c", "d/e/f", "e"])
        self.assertEqual(r["Marker"], "a/2")
        self.assertFalse(r["IsTruncated"])
        # Paging without a delimiter: continue from the last key returned.
        keys, marker = [], ""
        for _ in range(10):
            r = self.s3.list_objects(Bucket=b, MaxKeys=3, Marker=marker)
            page = [o["Key"] for o in r.get("Contents", [])]
            keys += page
            self.assertEqual(r["MaxKeys"], 3)
            if not r["IsTruncated"]:
                break
            self.assertEqual(len(page), 3)
            if "NextMarker" in r:
                self.assertEqual(r["NextMarker"], page[-1])
            marker = page[-1]
        self.assertEqual(keys, self.LISTING_KEYS)
        self.assertFalse(r["IsTruncated"])

    def test_list_v1_next_marker_with_delimiter(self):
        b = self.listing_bucket()
        items, marker, pages = [], "", 0
        while True:
            r = self.s3.list_objects(Bucket=b, MaxKeys=2, Delimiter="/", Marker=marker)
            page = sorted([o["Key"] for o in r.get("Contents", [])] +
                          [p["Prefix"] for p in r.get("CommonPrefixes", [])])
            items += page
            pages += 1
            self.assertLessEqual(pages, 10)
            if not r["IsTruncated"]:
                break
            self.assertEqual(len(page), 2)
            self.assertEqual(r["NextMarker"], page[-1])
            marker = r["NextMarker"]
        self.assertEqual(items, ["a/", "b/", "c", "d/", "e"])
        self.assertEqual(pages, 3)

    def test_paginators(self):
        b = self.listing_bucket()
        v2 = self.s3.get_paginator("list_objects_v2")
        keys = [o["Key"] for p in v2.paginate(Bucket=b, PaginationConfig={"PageSize": 2})
                for o in p.get("Contents", [])]
        self.assertEqual(keys, self.LISTING_KEYS)
        pfx = [c["Prefix"] for p in v2.paginate(Bucket=b, Delimiter="/", PaginationConfig={"PageSize": 1})
               for c in p.get("CommonPrefixes", [])]
        self.assertEqual(pfx, ["a/", "b/", "d/"])
        v1 = self.s3.get_paginator("list_objects")
        keys = [o["Key"] for p in v1.paginate(Bucket=b, PaginationConfig={"PageSize": 2})
                for o in p.get("Contents", [])]
        self.assertEqual(keys, self.LISTING_KEYS)
        pages = list(v1.paginate(Bucket=b, Delimiter="/", PaginationConfig={"PageSize": 2}))
        self.assertEqual([c["Prefix"] for p in pages for c in p.get("CommonPrefixes", [])], ["a/", "b/", "d/"])
        self.assertEqual([o["Key"] for p in pages for o in p.get("Contents", [])], ["c", "e"])
        # MaxItems stops early and resumes with the token.
        first = v2.paginate(Bucket=b, PaginationConfig={"PageSize": 2, "MaxItems": 3}).build_full_result()
        self.assertEqual([o["Key"] for o in first["Contents"]], self.LISTING_KEYS[:3])
        rest = v2.paginate(Bucket=b, PaginationConfig={"PageSize": 2, "StartingToken": first["NextToken"]})
        self.assertEqual([o["Key"] for p in rest for o in p.get("Contents", [])], self.LISTING_KEYS[3:])

    # ---- virtual-host addressing -------------------------------------------
    def vhost(self, bucket, port=True):
        return f"{bucket}.{DOMAIN}" + (f":{self.server.port}" if port else "")

    def test_virtual_host_object_ops(self):
        b = self.make_bucket("vh")
        r = signed_request(self.server, "PUT", "/dir/v%20key", host=self.vhost(b), body=b"via vhost",
                           headers={"Content-Type": "text/x-vhost"})
        self.assertEqual(r.status, 200, r.body)
        self.assertEqual(r.headers["etag"], etag_of(b"via vhost"))
        # Visible path-style under the decoded key.
        g = self.s3.get_object(Bucket=b, Key="dir/v key")
        self.assertEqual(g["Body"].read(), b"via vhost")
        self.assertEqual(g["ContentType"], "text/x-vhost")
        self.put(b, "path-style", b"put with path style")
        r = signed_request(self.server, "GET", "/path-style", host=self.vhost(b))
        self.assertEqual((r.status, r.body), (200, b"put with path style"))
        r = signed_request(self.server, "GET", "/path-style", host=self.vhost(b, port=False))
        self.assertEqual((r.status, r.body), (200, b"put with path style"))
        r = signed_request(self.server, "HEAD", "/dir/v%20key", host=self.vhost(b))
        self.assertEqual(r.status, 200)
        self.assertEqual(r.headers["content-length"], str(len(b"via vhost")))
        r = signed_request(self.server, "DELETE", "/path-style", host=self.vhost(b))
        self.assertEqual(r.status, 204)
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=b, Key="path-style")
        r = signed_request(self.server, "GET", "/nope", host=self.vhost(b))
        self.assertEqual(r.status, 404)
        self.assertEqual(parse_error(r.body)["Code"], "NoSuchKey")

    def test_virtual_host_bucket_ops(self):
        b = self.bucket_name("vh")
        r = signed_request(self.server, "PUT", "/", host=self.vhost(b))
        self.assertEqual(r.status, 200, r.body)
        self.s3.head_bucket(Bucket=b)
        self.fill(b, ["x/1", "x/2", "y"])
        r = signed_request(self.server, "GET", "/", query="delimiter=%2F&list-type=2", host=self.vhost(b))
        self.assertEqual(r.status, 200, r.body)
        doc = parse_xml(r.body)
        self.assertEqual(doc.tag, "ListBucketResult")
        self.assertEqual(doc.findtext("Name"), b)
        self.assertEqual([e.findtext("Key") for e in doc.findall("Contents")], ["y"])
        self.assertEqual([e.findtext("Prefix") for e in doc.findall("CommonPrefixes")], ["x/"])
        self.assertEqual(doc.findtext("KeyCount"), "2")
        # The bare domain is the service endpoint: ListBuckets.
        r = signed_request(self.server, "GET", "/", host=f"{DOMAIN}:{self.server.port}")
        self.assertEqual(r.status, 200, r.body)
        doc = parse_xml(r.body)
        self.assertEqual(doc.tag, "ListAllMyBucketsResult")
        self.assertIn(b, [e.findtext("Name") for e in doc.iter("Bucket")])
        # Path-style requests to the bare domain address buckets by path.
        r = signed_request(self.server, "GET", f"/{b}/y", host=f"{DOMAIN}:{self.server.port}")
        self.assertEqual((r.status, r.body), (200, b"y"))
        missing = self.bucket_name("missing")
        r = signed_request(self.server, "GET", "/", query="list-type=2", host=self.vhost(missing))
        self.assertEqual(r.status, 404)
        self.assertEqual(parse_error(r.body)["Code"], "NoSuchBucket")
        for k in ["x/1", "x/2", "y"]:
            self.s3.delete_object(Bucket=b, Key=k)
        r = signed_request(self.server, "DELETE", "/", host=self.vhost(b))
        self.assertEqual(r.status, 204, r.body)
        self.assertS3Error(self.s3.head_bucket, "404", 404, Bucket=b)

    # ---- presigned URLs ----------------------------------------------------
    def client(self, **kw):
        c = self.server.boto3_client(**kw)
        self.addCleanup(c.close)
        return c

    def presigner(self):
        return self.client(signature_version="s3v4")

    def test_presigned_get(self):
        b = self.make_bucket()
        data = os.urandom(3000)
        self.put(b, "dir/pre signed+key", data)
        url = self.presigner().generate_presigned_url(
            "get_object", Params={"Bucket": b, "Key": "dir/pre signed+key"}, ExpiresIn=300)
        self.assertIn("X-Amz-Signature=", url)
        status, body, _ = self.curl(url)
        self.assertEqual(status, 200)
        self.assertEqual(body, data)
        # Presigned URL with response overrides.
        url = self.presigner().generate_presigned_url(
            "get_object", Params={"Bucket": b, "Key": "dir/pre signed+key",
                                  "ResponseContentType": "image/png"}, ExpiresIn=300)
        status, body, headers = self.curl(url)
        self.assertEqual(status, 200)
        self.assertIn("content-type: image/png", headers.lower())

    def test_presigned_put(self):
        b = self.make_bucket()
        data = os.urandom(200 * 1024)
        with tempfile.NamedTemporaryFile() as f:
            f.write(data)
            f.flush()
            url = self.presigner().generate_presigned_url(
                "put_object", Params={"Bucket": b, "Key": "uploaded"}, ExpiresIn=300)
            status, body, headers = self.curl("-T", f.name, url)
        self.assertEqual(status, 200, body)
        self.assertIn(f"etag: {etag_of(data)}", headers.lower())
        self.assertEqual(self.get_body(b, "uploaded"), data)

    def test_presigned_tampered_signature(self):
        b = self.make_bucket()
        self.put(b, "k", b"secret")
        url = self.presigner().generate_presigned_url("get_object", Params={"Bucket": b, "Key": "k"},
                                                      ExpiresIn=300)
        sig = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["X-Amz-Signature"][0]
        bad = sig[:-1] + ("0" if sig[-1] != "0" else "1")
        status, body, _ = self.curl(url.replace(sig, bad))
        self.assertEqual(status, 403)
        self.assertEqual(parse_error(body)["Code"], "SignatureDoesNotMatch")
        # Tampering with the key is caught too.
        status, body, _ = self.curl(url.replace("/k?", "/j?"))
        self.assertEqual(status, 403)
        self.assertEqual(parse_error(body)["Code"], "SignatureDoesNotMatch")

    def test_presigned_expired(self):
        b = self.make_bucket()
        self.put(b, "k", b"short-lived")
        url = self.presigner().generate_presigned_url("get_object", Params={"Bucket": b, "Key": "k"},
                                                      ExpiresIn=1)
        time.sleep(2.5)
        status, body, _ = self.curl(url)
        self.assertEqual(status, 403)
        self.assertEqual(parse_error(body)["Code"], "AccessDenied")

    # ---- authentication ----------------------------------------------------
    def test_wrong_secret_key(self):
        b = self.make_bucket()
        bad = self.client(secret_key=SECRET_KEY + "x")
        self.assertS3Error(bad.list_buckets, "SignatureDoesNotMatch", 403)
        self.assertS3Error(bad.put_object, "SignatureDoesNotMatch", 403, Bucket=b, Key="k", Body=b"x")
        self.assertS3Error(bad.get_object, "SignatureDoesNotMatch", 403, Bucket=b, Key="k")
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=b, Key="k")

    def test_unknown_access_key(self):
        b = self.make_bucket()
        bad = self.client(access_key="AKIDNOSUCHKEY0000000")
        self.assertS3Error(bad.list_buckets, "InvalidAccessKeyId", 403)
        self.assertS3Error(bad.put_object, "InvalidAccessKeyId", 403, Bucket=b, Key="k", Body=b"x")
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=b, Key="k")

    def test_anonymous_request_denied(self):
        b = self.make_bucket()
        self.put(b, "k", b"private")
        r = signed_request(self.server, "GET", f"/{b}/k", sign=False)
        self.assertEqual(r.status, 403)
        self.assertEqual(parse_error(r.body)["Code"], "AccessDenied")
        r = signed_request(self.server, "PUT", f"/{b}/anon", body=b"x", sign=False)
        self.assertEqual(r.status, 403)
        self.assertEqual(parse_error(r.body)["Code"], "AccessDenied")
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=b, Key="anon")

    def test_tampered_body_rejected(self):
        # The body's sha256 is signed (x-amz-content-sha256); sending other bytes must fail.
        b = self.make_bucket()
        host = f"127.0.0.1:{self.server.port}"
        req = AWSRequest(method="PUT", url=f"http://{host}/{b}/k", data=b"original")
        S3SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3", "us-east-1").add_auth(req)
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        conn.request("PUT", f"/{b}/k", body=b"modified", headers=dict(req.headers.items()))
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        self.assertEqual(resp.status, 400, body)
        self.assertEqual(parse_error(body)["Code"], "XAmzContentSHA256Mismatch")
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=b, Key="k")

    # ---- error format --------------------------------------------------------
    def assertWellFormedError(self, r, status, code):
        self.assertEqual(r.status, status, r.body)
        rid = r.headers.get("x-amz-request-id", "")
        self.assertTrue(rid, r.headers)
        self.assertIn("xml", r.headers.get("content-type", ""))
        err = parse_error(r.body)
        self.assertEqual(err["Code"], code)
        self.assertTrue(err.get("Message"), err)
        self.assertEqual(err.get("RequestId"), rid)
        return err

    def test_error_response_format_raw(self):
        b = self.make_bucket()
        missing = self.bucket_name("missing")
        self.assertWellFormedError(signed_request(self.server, "GET", f"/{b}/nokey"), 404, "NoSuchKey")
        self.assertWellFormedError(signed_request(self.server, "GET", f"/{missing}/k"), 404, "NoSuchBucket")
        self.assertWellFormedError(signed_request(self.server, "PUT", f"/{b}"), 409, "BucketAlreadyOwnedByYou")
        self.assertWellFormedError(signed_request(self.server, "PUT", "/Bad_Name"), 400, "InvalidBucketName")
        self.assertWellFormedError(signed_request(self.server, "GET", "/", secret_key="wrong"), 403,
                                   "SignatureDoesNotMatch")
        self.assertWellFormedError(signed_request(self.server, "GET", "/", access_key="NOSUCHKEY"), 403,
                                   "InvalidAccessKeyId")
        self.assertWellFormedError(signed_request(self.server, "GET", "/", sign=False), 403, "AccessDenied")
        # HEAD errors have no body but still carry the request id.
        r = signed_request(self.server, "HEAD", f"/{b}/nokey")
        self.assertEqual(r.status, 404)
        self.assertEqual(r.body, b"")
        self.assertTrue(r.headers.get("x-amz-request-id"))
        # Request ids are unique per request.
        ids = {signed_request(self.server, "GET", f"/{b}/nokey").headers["x-amz-request-id"] for _ in range(5)}
        self.assertEqual(len(ids), 5)

    def test_error_response_format_botocore(self):
        b = self.make_bucket()
        self.put(b, "r", b"0123456789")
        checks = [
            (self.s3.get_object, dict(Bucket=b, Key="nokey"), "NoSuchKey", 404),
            (self.s3.list_objects_v2, dict(Bucket=self.bucket_name("missing")), "NoSuchBucket", 404),
            (self.s3.delete_bucket, dict(Bucket=b), "BucketNotEmpty", 409),
            (self.s3.get_object, dict(Bucket=b, Key="r", Range="bytes=50-60"), "InvalidRange", 416),
            (self.s3.put_object, dict(Bucket=b, Key="x", Body=b"a", ContentMD5=md5_b64(b"b")), "BadDigest", 400),
            (self.s3.create_bucket, dict(Bucket="a_b"), "InvalidBucketName", 400),
        ]
        for fn, kw, code, status in checks:
            with self.subTest(code=code):
                e = self.assertS3Error(fn, code, status, **kw)
                self.assertTrue(e["Error"]["Message"], e)
                rid = e["ResponseMetadata"]["RequestId"]
                self.assertTrue(rid, e)
                self.assertEqual(e["ResponseMetadata"]["HTTPHeaders"]["x-amz-request-id"], rid)

    def test_success_responses_carry_request_id(self):
        b = self.make_bucket()
        for r in [self.put(b, "k", b"v"), self.s3.get_object(Bucket=b, Key="k"),
                  self.s3.list_objects_v2(Bucket=b), self.s3.list_buckets()]:
            self.assertTrue(r["ResponseMetadata"]["HTTPHeaders"].get("x-amz-request-id"))
        self.assertServerHealthy()

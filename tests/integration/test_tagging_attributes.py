"""Object tagging (Put/Get/DeleteObjectTagging, x-amz-tagging on PUT and on
CreateMultipartUpload, the limits: 10 tags, keys up to 128 and values up to
256 characters) and GetObjectAttributes (ETag, Checksum, ObjectParts,
StorageClass, ObjectSize) on single-part and multipart objects, through boto3,
raw requests and aws s3api.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_tagging_attributes.py -v
"""
import base64
import hashlib
import json
import os
import sys
import unittest
from urllib.parse import quote
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checksums as ck  # noqa: E402
import rawhttp  # noqa: E402
from harness import ServerTestCase, no_empty_expect, parse_xml  # noqa: E402
from rawhttp import quote_key  # noqa: E402
from s3util import PART, md5_hex, multipart_etag, payload, quoted  # noqa: E402


def tagging_header(tags):
    return "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in tags)


def tag_set(tags):
    return {"TagSet": [{"Key": k, "Value": v} for k, v in tags]}


class TaggingTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        no_empty_expect(cls.s3)
        from harness import unique_name
        cls.bucket = unique_name("tag")
        cls.s3.create_bucket(Bucket=cls.bucket)

    def tearDown(self):
        self.assertServerHealthy()

    def tags(self, key):
        r = self.s3.get_object_tagging(Bucket=self.bucket, Key=key)
        return sorted((t["Key"], t["Value"]) for t in r["TagSet"])

    def req(self, method, key, query="", headers=None, body=b""):
        return rawhttp.request(self.server.port, method, f"/{self.bucket}/{quote_key(key)}", query=query,
                               headers=headers, body=body)

    # ---- the three operations ---------------------------------------------------
    def test_put_get_delete_tagging(self):
        key = "tagged ü.txt"
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=b"x",
                           Tagging="project=strata&note=two%20words&empty=")
        self.assertEqual(self.tags(key), [("empty", ""), ("note", "two words"), ("project", "strata")])
        g = self.s3.get_object(Bucket=self.bucket, Key=key)
        self.assertEqual(g["TagCount"], 3)
        self.assertEqual(g["Body"].read(), b"x")
        self.assertEqual(self.s3.head_object(Bucket=self.bucket, Key=key)["ResponseMetadata"]["HTTPHeaders"]
                         .get("x-amz-tagging-count"), "3")
        # PutObjectTagging replaces the whole set.
        r = self.s3.put_object_tagging(Bucket=self.bucket, Key=key,
                                       Tagging=tag_set([("a", "1"), ("b", "x=y&z"), ("ü", "ö")]))
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(self.tags(key), [("a", "1"), ("b", "x=y&z"), ("ü", "ö")])
        # Tagging does not change the object.
        h = self.s3.head_object(Bucket=self.bucket, Key=key)
        self.assertEqual(h["ETag"], quoted(md5_hex(b"x")))
        r = self.s3.delete_object_tagging(Bucket=self.bucket, Key=key)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 204)
        self.assertEqual(self.tags(key), [])
        self.assertNotIn("TagCount", self.s3.get_object(Bucket=self.bucket, Key=key))
        # The raw document.
        self.s3.put_object_tagging(Bucket=self.bucket, Key=key, Tagging=tag_set([("k", "v")]))
        r = self.req("GET", key, query="tagging")
        self.assertEqual(r.status, 200, r)
        root = parse_xml(r.body)
        self.assertEqual(root.tag, "Tagging")
        self.assertEqual([(t.findtext("Key"), t.findtext("Value")) for t in root.findall("TagSet/Tag")], [("k", "v")])
        # An overwrite without tags makes a new object without tags.
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=b"new")
        self.assertEqual(self.tags(key), [])

    def test_tagging_missing_object_or_bucket(self):
        for fn, kw in ((self.s3.get_object_tagging, {}), (self.s3.delete_object_tagging, {}),
                       (self.s3.put_object_tagging, {"Tagging": tag_set([("a", "b")])})):
            with self.subTest(fn.__name__):
                self.assertS3Error(fn, "NoSuchKey", 404, Bucket=self.bucket, Key="no-such-key", **kw)
                self.assertS3Error(fn, "NoSuchBucket", 404, Bucket=self.bucket_name("nob"), Key="k", **kw)

    def test_malformed_tagging_xml(self):
        self.s3.put_object(Bucket=self.bucket, Key="xml", Body=b"x", Tagging="keep=1")
        for body in (b"", b"<Tagging><TagSet><Tag><Key>a</Key>", b"not xml at all",
                     b"<Tagging><TagSet><Tag><Value>no key</Value></Tag></TagSet></Tagging>"):
            with self.subTest(body=body):
                r = self.req("PUT", "xml", query="tagging", body=body)
                self.assertEqual(r.status, 400, r)
                self.assertIn(r.error_code, ("MalformedXML", "InvalidTag"), r)
        self.assertEqual(self.tags("xml"), [("keep", "1")])

    # ---- limits -------------------------------------------------------------------
    def limit_cases(self):
        ten = [(f"k{i}", f"v{i}") for i in range(10)]
        return [
            ("10 tags", ten, None),
            ("11 tags", ten + [("k10", "v10")], ("BadRequest", 400)),
            ("key of 128 chars", [("k" * 128, "v")], None),
            ("key of 129 chars", [("k" * 129, "v")], ("InvalidTag", 400)),
            ("key of 128 two-byte chars", [("é" * 128, "v")], None),
            ("value of 256 chars", [("k", "v" * 256)], None),
            ("value of 257 chars", [("k", "v" * 257)], ("InvalidTag", 400)),
            ("value of 256 two-byte chars", [("k", "ü" * 256)], None),
            ("duplicate keys", [("dup", "1"), ("dup", "2")], ("InvalidTag", 400)),
            ("empty key", [("", "v")], ("InvalidTag", 400)),
        ]

    def put_tagging_raw(self, key, tags):
        """PutObjectTagging as raw XML (botocore refuses an empty key itself)."""
        items = "".join(f"<Tag><Key>{escape(k)}</Key><Value>{escape(v)}</Value></Tag>" for k, v in tags)
        body = f'<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet>{items}</TagSet></Tagging>'
        body = body.encode()
        md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
        return self.req("PUT", key, query="tagging", headers={"Content-MD5": md5}, body=body)

    def test_tag_limits_put_object_tagging(self):
        self.s3.put_object(Bucket=self.bucket, Key="limits", Body=b"x", Tagging="orig=1")
        for name, tags, err in self.limit_cases():
            with self.subTest(name):
                if err is None:
                    self.s3.put_object_tagging(Bucket=self.bucket, Key="limits", Tagging=tag_set(tags))
                    self.assertEqual(self.tags("limits"), sorted(tags))
                else:
                    self.s3.put_object_tagging(Bucket=self.bucket, Key="limits", Tagging=tag_set([("orig", "1")]))
                    r = self.put_tagging_raw("limits", tags)
                    self.assertEqual((r.error_code, r.status), err, r)
                    self.assertEqual(self.tags("limits"), [("orig", "1")])

    def test_tag_limits_x_amz_tagging_on_put(self):
        # In the header, duplicate and empty keys are InvalidArgument (AWS: "The
        # header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL
        # query parameters without tag name duplicates.").
        header_errors = {"duplicate keys": ("InvalidArgument", 400), "empty key": ("InvalidArgument", 400)}
        for i, (name, tags, err) in enumerate(self.limit_cases()):
            err = header_errors.get(name, err)
            with self.subTest(name):
                key = f"hdr-limits-{i}"
                r = self.req("PUT", key, headers={"x-amz-tagging": tagging_header(tags)}, body=b"data")
                if err is None:
                    self.assertEqual(r.status, 200, r)
                    self.assertEqual(self.tags(key), sorted(tags))
                else:
                    self.assertEqual((r.error_code, r.status), err, r)
                    self.assertEqual(self.req("HEAD", key).status, 404)

    def test_tags_on_multipart_upload(self):
        key = "mp-tagged"
        uid = self.s3.create_multipart_upload(Bucket=self.bucket, Key=key, Tagging="mp=yes&n=2")["UploadId"]
        e = self.s3.upload_part(Bucket=self.bucket, Key=key, UploadId=uid, PartNumber=1, Body=b"p")["ETag"]
        self.s3.complete_multipart_upload(Bucket=self.bucket, Key=key, UploadId=uid,
                                          MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e}]})
        self.assertEqual(self.tags(key), [("mp", "yes"), ("n", "2")])
        many = "&".join(f"k{i}=v" for i in range(11))
        self.assertS3Error(self.s3.create_multipart_upload, "BadRequest", 400, Bucket=self.bucket, Key="mp-bad",
                           Tagging=many)
        self.assertEqual(self.s3.list_multipart_uploads(Bucket=self.bucket, Prefix="mp-bad").get("Uploads", []), [])

    def test_aws_s3api_tagging(self):
        def aws(*args):
            p = self.server.aws(self.home, *args, check=False)
            self.assertEqual(p.returncode, 0, f"aws {args}: {p.stderr}")
            return json.loads(p.stdout) if p.stdout.strip() else {}
        self.s3.put_object(Bucket=self.bucket, Key="cli-tags", Body=b"x")
        aws("s3api", "put-object-tagging", "--bucket", self.bucket, "--key", "cli-tags", "--tagging",
            json.dumps(tag_set([("team", "storage"), ("tier", "hot")])))
        r = aws("s3api", "get-object-tagging", "--bucket", self.bucket, "--key", "cli-tags")
        self.assertEqual(sorted((t["Key"], t["Value"]) for t in r["TagSet"]), [("team", "storage"), ("tier", "hot")])
        aws("s3api", "delete-object-tagging", "--bucket", self.bucket, "--key", "cli-tags")
        self.assertEqual(self.tags("cli-tags"), [])


class AttributesTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        no_empty_expect(cls.s3)
        from harness import unique_name
        cls.bucket = unique_name("attr")
        cls.s3.create_bucket(Bucket=cls.bucket)
        # One multipart object with CRC32C part checksums, used by several tests.
        cls.mp_key = "mp/object"
        cls.mp_parts = [payload(PART, "at1"), payload(PART + 1, "at2"), payload(4321, "at3")]
        uid = cls.s3.create_multipart_upload(Bucket=cls.bucket, Key=cls.mp_key, ChecksumAlgorithm="CRC32C",
                                             StorageClass="STANDARD_IA")["UploadId"]
        done = []
        for n, d in enumerate(cls.mp_parts, 1):
            r = cls.s3.upload_part(Bucket=cls.bucket, Key=cls.mp_key, UploadId=uid, PartNumber=n, Body=d,
                                   ChecksumAlgorithm="CRC32C")
            done.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumCRC32C": r["ChecksumCRC32C"]})
        cls.mp_complete = cls.s3.complete_multipart_upload(Bucket=cls.bucket, Key=cls.mp_key, UploadId=uid,
                                                           MultipartUpload={"Parts": done})

    def tearDown(self):
        self.assertServerHealthy()

    def req(self, method, key, query="", headers=None, body=b""):
        return rawhttp.request(self.server.port, method, f"/{self.bucket}/{quote_key(key)}", query=query,
                               headers=headers, body=body)

    def attrs(self, key, names, **kw):
        r = self.s3.get_object_attributes(Bucket=self.bucket, Key=key, ObjectAttributes=names, **kw)
        r.pop("ResponseMetadata")
        return r

    def test_single_part_object(self):
        data = payload(1000, "single")
        put = self.s3.put_object(Bucket=self.bucket, Key="single", Body=data, ChecksumAlgorithm="SHA256")
        head = self.s3.head_object(Bucket=self.bucket, Key="single")
        a = self.attrs("single", ["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"])
        self.assertEqual(a.pop("LastModified"), head["LastModified"])
        self.assertEqual(a, {"ETag": md5_hex(data),  # without quotes
                             "Checksum": {"ChecksumSHA256": ck.b64("SHA256", data)},
                             "StorageClass": "STANDARD",
                             "ObjectSize": 1000})
        self.assertEqual(put["ETag"], quoted(a["ETag"]))
        # Only what was asked for.
        self.assertEqual(self.attrs("single", ["ObjectSize"]).get("ObjectSize"), 1000)
        a = self.attrs("single", ["ETag", "StorageClass"])
        self.assertEqual((a.get("ETag"), a.get("StorageClass"), "ObjectSize" in a, "Checksum" in a),
                         (md5_hex(data), "STANDARD", False, False))
        # Another storage class; no checksum stored -> no Checksum element.
        self.s3.put_object(Bucket=self.bucket, Key="ia", Body=b"ia", StorageClass="STANDARD_IA")
        a = self.attrs("ia", ["StorageClass", "Checksum", "ObjectSize"])
        self.assertEqual((a["StorageClass"], a["ObjectSize"], "Checksum" in a), ("STANDARD_IA", 2, False))

    def test_multipart_object(self):
        parts = self.mp_parts
        a = self.attrs(self.mp_key, ["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"])
        self.assertEqual(a["ETag"], multipart_etag(parts).strip('"'))
        self.assertEqual(a["ObjectSize"], sum(map(len, parts)))
        self.assertEqual(a["StorageClass"], "STANDARD_IA")
        composite = ck.composite("CRC32C", parts)
        self.assertEqual(self.mp_complete["ChecksumCRC32C"], composite)
        self.assertEqual(a["Checksum"]["ChecksumCRC32C"].split("-")[0], composite.split("-")[0])
        op = a["ObjectParts"]
        self.assertFalse(op["IsTruncated"])
        self.assertEqual([(p["PartNumber"], p["Size"], p["ChecksumCRC32C"]) for p in op["Parts"]],
                         [(n, len(d), ck.b64("CRC32C", d)) for n, d in enumerate(parts, 1)])
        self.assertEqual(op.get("TotalPartsCount"), 3, op)  # <PartsCount> on the wire

    def test_multipart_object_parts_count_on_the_wire(self):
        r = self.req("GET", self.mp_key, query="attributes", headers={"x-amz-object-attributes": "ObjectParts"})
        self.assertEqual(r.status, 200, r)
        root = parse_xml(r.body)
        self.assertEqual(root.tag, "GetObjectAttributesResponse")
        # AWS's element is PartsCount (botocore maps it to TotalPartsCount).
        self.assertEqual(root.findtext("ObjectParts/PartsCount"), "3", r.body)
        self.assertEqual(len(root.findall("ObjectParts/Part")), 3)

    def test_multipart_object_without_checksums(self):
        """AWS lists <Part> elements only for objects uploaded with additional
        checksums (boto/boto3#3509, aws/aws-sdk#441); the count is always there."""
        key = "mp/plain"
        parts = [payload(PART, "plain1"), b"tail"]
        uid = self.s3.create_multipart_upload(Bucket=self.bucket, Key=key)["UploadId"]
        done = [{"PartNumber": n, "ETag": self.s3.upload_part(Bucket=self.bucket, Key=key, UploadId=uid,
                                                              PartNumber=n, Body=d)["ETag"]}
                for n, d in enumerate(parts, 1)]
        self.s3.complete_multipart_upload(Bucket=self.bucket, Key=key, UploadId=uid, MultipartUpload={"Parts": done})
        a = self.attrs(key, ["ObjectParts", "Checksum", "ObjectSize"])
        self.assertNotIn("Checksum", a)
        self.assertEqual(a["ObjectSize"], PART + 4)
        with self.subTest("no Part elements"):
            self.assertNotIn("Parts", a["ObjectParts"], a)
        with self.subTest("parts count"):
            self.assertEqual(a["ObjectParts"].get("TotalPartsCount"), 2, a)

    def test_multipart_object_parts_paging(self):
        a = self.attrs(self.mp_key, ["ObjectParts"], MaxParts=2)
        op = a["ObjectParts"]
        self.assertTrue(op["IsTruncated"])
        self.assertEqual(op["MaxParts"], 2)
        self.assertEqual(op["NextPartNumberMarker"], 2)
        self.assertEqual([p["PartNumber"] for p in op["Parts"]], [1, 2])
        a = self.attrs(self.mp_key, ["ObjectParts"], MaxParts=2, PartNumberMarker=2)
        op = a["ObjectParts"]
        self.assertFalse(op["IsTruncated"])
        self.assertEqual(op["PartNumberMarker"], 2)
        self.assertEqual([(p["PartNumber"], p["Size"]) for p in op["Parts"]], [(3, 4321)])

    def test_attribute_errors(self):
        self.s3.put_object(Bucket=self.bucket, Key="err", Body=b"x")
        r = self.req("GET", "err", query="attributes")
        self.assertEqual((r.status, r.error_code), (400, "InvalidArgument"), r)
        r = self.req("GET", "err", query="attributes", headers={"x-amz-object-attributes": "ETag,Colour"})
        self.assertEqual((r.status, r.error_code), (400, "InvalidArgument"), r)
        self.assertS3Error(self.s3.get_object_attributes, "NoSuchKey", 404, Bucket=self.bucket, Key="missing",
                           ObjectAttributes=["ETag"])
        self.assertS3Error(self.s3.get_object_attributes, "NoSuchBucket", 404, Bucket=self.bucket_name("nob"),
                           Key="k", ObjectAttributes=["ETag"])

    def test_aws_s3api_get_object_attributes(self):
        p = self.server.aws(self.home, "s3api", "get-object-attributes", "--bucket", self.bucket, "--key",
                            self.mp_key, "--object-attributes", "ETag", "ObjectSize", "StorageClass", "ObjectParts",
                            check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        self.assertEqual(r["ETag"], multipart_etag(self.mp_parts).strip('"'))
        self.assertEqual(r["ObjectSize"], sum(map(len, self.mp_parts)))
        self.assertEqual(r["StorageClass"], "STANDARD_IA")
        self.assertEqual(r["ObjectParts"].get("TotalPartsCount"), 3, r)


if __name__ == "__main__":
    unittest.main()

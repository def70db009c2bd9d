"""Additional checksums (x-amz-checksum-crc32 / crc32c / crc64nvme / sha1 /
sha256) against a real strata server: as headers, as trailers of
STREAMING-UNSIGNED-PAYLOAD-TRAILER and STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER
bodies, verified (BadDigest), stored and returned with x-amz-checksum-mode:
ENABLED; x-amz-sdk-checksum-algorithm; multipart COMPOSITE and FULL_OBJECT
checksums; malformed aws-chunked trailer framing.

Expected error codes for trailer problems are the ones AWS S3 answers with
(as reproduced against S3 in versity/versitygw issues #1653, #1666, #1690,
#1691, #1692, #1694, #1600 and #1593/#1659): a wrong trailing checksum ->
BadDigest; a malformed value -> InvalidRequest; broken chunk framing ->
IncompleteBody; a missing, misnamed or malformed trailer line ->
MalformedTrailerError.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_checksums.py -v
"""
import base64
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checksums as ck  # noqa: E402
import rawhttp  # noqa: E402
from harness import ServerTestCase, no_empty_expect, parse_xml  # noqa: E402
from rawhttp import quote_key  # noqa: E402
from s3util import MiB, PART, md5_hex, multipart_etag, payload, quoted  # noqa: E402

ALGS = ck.ALGORITHMS  # CRC32, CRC32C, CRC64NVME, SHA1, SHA256


def wrong_value(alg, data):
    """A well-formed checksum of the right length that does not match data."""
    return ck.b64(alg, data + b"!")


class ChecksumTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        no_empty_expect(cls.s3)
        from harness import unique_name
        cls.bucket = unique_name("cks")
        cls.s3.create_bucket(Bucket=cls.bucket)
        cls.port = cls.server.port

    def tearDown(self):
        self.assertServerHealthy()

    # ---- helpers ---------------------------------------------------------
    def path(self, key):
        return f"/{self.bucket}/{quote_key(key)}"

    def req(self, method, key, query="", headers=None, body=b"", **kw):
        return rawhttp.request(self.port, method, self.path(key), query=query, headers=headers, body=body, **kw)

    def send(self, signed):
        return rawhttp.send_request(self.port, signed)

    def assertError(self, resp, status, code, message=None):
        self.assertEqual((resp.status, resp.error_code), (status, code), resp)
        if message is not None:
            self.assertIn(message.encode(), resp.body, resp)

    def assertAbsent(self, key):
        time.sleep(0.05)
        r = self.req("HEAD", key)
        self.assertEqual(r.status, 404, f"{key!r} should not exist: {r}")
        listed = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=key).get("Contents", [])
        self.assertNotIn(key, [o["Key"] for o in listed])

    def assertStoredChecksum(self, key, alg, value, ctype="FULL_OBJECT", data=None):
        """HEAD/GET with x-amz-checksum-mode: ENABLED return it; without, not."""
        hdr = ck.header(alg)
        r = self.req("HEAD", key, headers={"x-amz-checksum-mode": "ENABLED"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header(hdr), value, r.headers)
        self.assertEqual(r.header("x-amz-checksum-type"), ctype, r.headers)
        r = self.req("HEAD", key)
        self.assertEqual([n for n, _ in r.headers if n.lower().startswith("x-amz-checksum-")], [], r.headers)
        r = self.req("GET", key, headers={"x-amz-checksum-mode": "ENABLED"})
        self.assertEqual(r.status, 200, r)
        self.assertEqual(r.header(hdr), value, r.headers)
        if data is not None:
            self.assertTrue(r.body == data, "GET body differs")
        # A ranged GET carries no whole-object checksum.
        if data is None or data:
            r = self.req("GET", key, headers={"x-amz-checksum-mode": "ENABLED", "Range": "bytes=0-0"})
            self.assertEqual(r.status, 206, r)
            self.assertIsNone(r.header(hdr), r.headers)

    def attributes(self, key, attrs="ETag,Checksum,ObjectParts,StorageClass,ObjectSize", headers=None):
        h = {"x-amz-object-attributes": attrs}
        h.update(headers or {})
        r = self.req("GET", key, query="attributes", headers=h)
        self.assertEqual(r.status, 200, r)
        return parse_xml(r.body)

    # ---- checksums in headers ------------------------------------------------
    def test_header_checksums_every_algorithm(self):
        for alg in ALGS:
            for size in (1000, 300 * 1024):
                with self.subTest(alg=alg, size=size):
                    key = f"hdr/{alg}/{size}"
                    data = payload(size, key)
                    value = ck.b64(alg, data)
                    r = self.req("PUT", key, headers={ck.header(alg): value}, body=data)
                    self.assertEqual(r.status, 200, r)
                    self.assertEqual(r.header("ETag"), quoted(md5_hex(data)))
                    self.assertEqual(r.header(ck.header(alg)), value)
                    self.assertEqual(r.header("x-amz-checksum-type"), "FULL_OBJECT")
                    self.assertStoredChecksum(key, alg, value, data=data)
                    root = self.attributes(key)
                    self.assertEqual(root.findtext(f"Checksum/{ck.response_key(alg)}"), value)
                    self.assertEqual(root.findtext("Checksum/ChecksumType"), "FULL_OBJECT")
        # Header names are case-insensitive; an empty body has checksums too.
        r = self.req("PUT", "hdr/empty", headers={"X-Amz-Checksum-CRC64NVME": ck.b64("CRC64NVME", b"")})
        self.assertEqual(r.status, 200, r)
        self.assertStoredChecksum("hdr/empty", "CRC64NVME", ck.b64("CRC64NVME", b""), data=b"")
        # No checksum given: none stored, none returned.
        self.req("PUT", "hdr/none", body=b"no checksum")
        r = self.req("HEAD", "hdr/none", headers={"x-amz-checksum-mode": "ENABLED"})
        self.assertEqual([n for n, _ in r.headers if n.lower().startswith("x-amz-checksum-")], [], r.headers)

    def test_wrong_header_checksum_is_bad_digest(self):
        for alg in ALGS:
            with self.subTest(alg=alg):
                key = f"bad/{alg}"
                data = payload(200 * 1024, key)
                r = self.req("PUT", key, headers={ck.header(alg): wrong_value(alg, data)}, body=data)
                self.assertError(r, 400, "BadDigest", f"The {alg} you specified did not match the calculated checksum.")
                self.assertAbsent(key)
        # An existing object is not replaced by a failed PUT.
        self.s3.put_object(Bucket=self.bucket, Key="bad/existing", Body=b"keep me")
        r = self.req("PUT", "bad/existing", headers={"x-amz-checksum-sha256": wrong_value("SHA256", b"new")},
                     body=b"new")
        self.assertError(r, 400, "BadDigest")
        self.assertEqual(self.get_body(self.bucket, "bad/existing"), b"keep me")

    def test_invalid_header_checksum_values(self):
        data = b"some data"
        cases = [
            ("too short", {"x-amz-checksum-crc32": base64.b64encode(b"abc").decode()}),
            ("too long", {"x-amz-checksum-crc64nvme": base64.b64encode(b"123456789").decode()}),
            ("sha256 of sha1 size", {"x-amz-checksum-sha256": ck.b64("SHA1", data)}),
            ("not base64", {"x-amz-checksum-crc32c": "!!!!!!!!"}),
            ("two algorithms", {"x-amz-checksum-crc32": ck.b64("CRC32", data),
                                "x-amz-checksum-sha1": ck.b64("SHA1", data)}),
        ]
        for name, headers in cases:
            with self.subTest(name):
                key = "invalid/" + name.replace(" ", "-")
                r = self.req("PUT", key, headers=headers, body=data)
                self.assertError(r, 400, "InvalidRequest")
                self.assertAbsent(key)

    def test_sdk_checksum_algorithm(self):
        data = b"sdk checksum algorithm"
        # Consistent with the checksum header: fine.
        r = self.req("PUT", "sdk/ok", headers={"x-amz-sdk-checksum-algorithm": "CRC32C",
                                              "x-amz-checksum-crc32c": ck.b64("CRC32C", data)}, body=data)
        self.assertEqual(r.status, 200, r)
        self.assertStoredChecksum("sdk/ok", "CRC32C", ck.b64("CRC32C", data))
        # Consistent with a trailer: fine.
        req = rawhttp.trailer_put(self.port, self.path("sdk/trailer"), data,
                                  [("x-amz-checksum-sha1", ck.b64("SHA1", data))],
                                  headers={"x-amz-sdk-checksum-algorithm": "SHA1"})
        self.assertEqual(self.send(req).status, 200)
        self.assertStoredChecksum("sdk/trailer", "SHA1", ck.b64("SHA1", data))
        # Unknown algorithm.
        r = self.req("PUT", "sdk/unknown", headers={"x-amz-sdk-checksum-algorithm": "MD5"}, body=data)
        self.assertError(r, 400, "InvalidRequest")
        self.assertAbsent("sdk/unknown")

    def test_sdk_checksum_algorithm_without_checksum(self):
        data = b"sdk checksum algorithm"
        # AWS: "x-amz-sdk-checksum-algorithm specified, but no corresponding
        # x-amz-checksum-* or x-amz-trailer headers were found." (400 InvalidRequest)
        r = self.req("PUT", "sdk/alone", headers={"x-amz-sdk-checksum-algorithm": "CRC32"}, body=data)
        self.assertError(r, 400, "InvalidRequest")
        self.assertAbsent("sdk/alone")

    def test_sdk_checksum_algorithm_mismatch(self):
        """AWS: 400 InvalidRequest "Value for x-amz-sdk-checksum-algorithm header
        is invalid." when it names another algorithm than the checksum sent."""
        data = b"sdk checksum algorithm"
        with self.subTest("header"):
            r = self.req("PUT", "sdk/mismatch", headers={"x-amz-sdk-checksum-algorithm": "CRC32",
                                                        "x-amz-checksum-sha256": ck.b64("SHA256", data)}, body=data)
            self.assertError(r, 400, "InvalidRequest")
            self.assertAbsent("sdk/mismatch")
        with self.subTest("trailer"):
            req = rawhttp.trailer_put(self.port, self.path("sdk/mismatch-trailer"), data,
                                      [("x-amz-checksum-crc64nvme", ck.b64("CRC64NVME", data))],
                                      headers={"x-amz-sdk-checksum-algorithm": "SHA1"})
            self.assertError(self.send(req), 400, "InvalidRequest")
            self.assertAbsent("sdk/mismatch-trailer")

    def test_boto3_flexible_checksums(self):
        """botocore 1.29 computes CRC32 / CRC32C / SHA1 / SHA256 headers itself
        and validates them on GET with ChecksumMode=ENABLED."""
        for alg in ("CRC32", "CRC32C", "SHA1", "SHA256"):
            with self.subTest(alg=alg):
                key = f"boto/{alg}"
                data = payload(150 * 1024, key)
                r = self.s3.put_object(Bucket=self.bucket, Key=key, Body=data, ChecksumAlgorithm=alg)
                self.assertEqual(r[ck.response_key(alg)], ck.b64(alg, data))
                g = self.s3.get_object(Bucket=self.bucket, Key=key, ChecksumMode="ENABLED")
                self.assertEqual(g[ck.response_key(alg)], ck.b64(alg, data))
                self.assertEqual(g["Body"].read(), data)  # botocore verifies while reading
                h = self.s3.head_object(Bucket=self.bucket, Key=key, ChecksumMode="ENABLED")
                self.assertEqual(h[ck.response_key(alg)], ck.b64(alg, data))
                a = self.s3.get_object_attributes(Bucket=self.bucket, Key=key, ObjectAttributes=["Checksum"])
                self.assertEqual(a["Checksum"], {ck.response_key(alg): ck.b64(alg, data)})
        # A precomputed value that is wrong.
        self.assertS3Error(self.s3.put_object, "BadDigest", 400, Bucket=self.bucket, Key="boto/wrong",
                           Body=b"abc", ChecksumSHA1=wrong_value("SHA1", b"abc"))
        self.assertAbsent("boto/wrong")
        # CopyObject keeps the source's algorithm, or computes the one asked for.
        r = self.s3.copy_object(Bucket=self.bucket, Key="boto/copy", CopySource=f"{self.bucket}/boto/CRC32C")
        data = self.get_body(self.bucket, "boto/CRC32C")
        self.assertEqual(r["CopyObjectResult"]["ChecksumCRC32C"], ck.b64("CRC32C", data))
        r = self.s3.copy_object(Bucket=self.bucket, Key="boto/copy256", CopySource=f"{self.bucket}/boto/CRC32",
                                ChecksumAlgorithm="SHA256")
        data = self.get_body(self.bucket, "boto/CRC32")
        self.assertEqual(r["CopyObjectResult"]["ChecksumSHA256"], ck.b64("SHA256", data))
        self.assertStoredChecksum("boto/copy256", "SHA256", ck.b64("SHA256", data))

    # ---- checksums in trailers ---------------------------------------------------
    def test_trailer_checksums_every_algorithm(self):
        data = payload(3 * 64 * 1024 + 1234, "trailers")
        for signed in (False, True):
            for alg in ALGS:
                with self.subTest(alg=alg, signed=signed):
                    key = f"trl/{alg}/{'signed' if signed else 'unsigned'}"
                    value = ck.b64(alg, data)
                    req = rawhttp.trailer_put(self.port, self.path(key), data, [(ck.header(alg), value)],
                                              signed=signed)
                    r = self.send(req)
                    self.assertEqual(r.status, 200, r)
                    self.assertEqual(r.header("ETag"), quoted(md5_hex(data)))
                    self.assertEqual(r.header(ck.header(alg)), value)
                    self.assertStoredChecksum(key, alg, value, data=data)
                    h = self.s3.head_object(Bucket=self.bucket, Key=key)
                    self.assertNotIn("ContentEncoding", h)
        # One chunk, tiny, and the empty body.
        for signed in (False, True):
            for body in (b"x", b""):
                key = f"trl/small-{signed}-{len(body)}"
                req = rawhttp.trailer_put(self.port, self.path(key), body,
                                          [("x-amz-checksum-crc32", ck.b64("CRC32", body))], signed=signed)
                self.assertEqual(self.send(req).status, 200)
                self.assertEqual(self.get_body(self.bucket, key), body)

    def test_wrong_trailer_checksum_is_bad_digest(self):
        data = payload(150 * 1024, "wrong-trailer")
        for signed in (False, True):
            for alg in ("CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"):
                with self.subTest(alg=alg, signed=signed):
                    key = f"trlbad/{alg}/{signed}"
                    req = rawhttp.trailer_put(self.port, self.path(key), data,
                                              [(ck.header(alg), wrong_value(alg, data))], signed=signed)
                    self.assertError(self.send(req), 400, "BadDigest",
                                     f"The {alg} you specified did not match the calculated checksum.")
                    self.assertAbsent(key)
        self.s3.put_object(Bucket=self.bucket, Key="trlbad/existing", Body=b"old")
        req = rawhttp.trailer_put(self.port, self.path("trlbad/existing"), data,
                                  [("x-amz-checksum-crc32", wrong_value("CRC32", data))])
        self.assertError(self.send(req), 400, "BadDigest")
        self.assertEqual(self.get_body(self.bucket, "trlbad/existing"), b"old")

    def test_trailer_value_and_signature_errors(self):
        data = payload(100 * 1024, "trailer-errors")
        good = ck.b64("CRC32", data)
        # A value that is not a CRC32 at all: InvalidRequest.
        for signed in (False, True):
            key = f"trlval/{signed}"
            req = rawhttp.trailer_put(self.port, self.path(key), data,
                                      [("x-amz-checksum-crc32", base64.b64encode(b"12345").decode())],
                                      signed=signed)
            self.assertError(self.send(req), 400, "InvalidRequest")
            self.assertAbsent(key)
        # Signed trailers: a wrong trailer signature, or one computed over another value.
        req = rawhttp.trailer_put(self.port, self.path("trlsig/zero"), data, [("x-amz-checksum-crc32", good)],
                                  signed=True, trailer_sig="0" * 64)
        self.assertError(self.send(req), 403, "SignatureDoesNotMatch")
        self.assertAbsent("trlsig/zero")
        req = rawhttp.trailer_put(self.port, self.path("trlsig/other"), data, [("x-amz-checksum-crc32", good)],
                                  signed=True, signed_trailers=[("x-amz-checksum-crc32", wrong_value("CRC32", data))])
        self.assertError(self.send(req), 403, "SignatureDoesNotMatch")
        self.assertAbsent("trlsig/other")
        # A checksum header and an x-amz-trailer together.
        req = rawhttp.trailer_put(self.port, self.path("trl/both"), data, [("x-amz-checksum-crc32", good)],
                                  headers={"x-amz-checksum-crc32": good})
        self.assertError(self.send(req), 400, "InvalidRequest")
        self.assertAbsent("trl/both")

    def test_malformed_trailer_framing(self):
        """Broken aws-chunked framing in STREAMING-UNSIGNED-PAYLOAD-TRAILER
        bodies: 400 with AWS's code, nothing stored, server fine."""
        data = payload(2 * 64 * 1024 + 100, "framing")
        crc = ck.b64("CRC32", data)
        first = b"10000\r\n"

        def replace_once(old, new):
            def m(body):
                self.assertIn(old, body)
                return body.replace(old, new, 1)
            return m

        chunk_end = len(first) + 64 * 1024
        cases = [
            ("bad hex size", "IncompleteBody", {"mutate": replace_once(first, b"zzzzz\r\n")}),
            ("size smaller than the chunk", "IncompleteBody", {"mutate": replace_once(first, b"ffff\r\n")}),
            ("size larger than the chunk", "IncompleteBody", {"mutate": replace_once(first, b"10001\r\n")}),
            ("no CRLF after chunk data", "IncompleteBody",
             {"mutate": lambda b: b[:chunk_end] + b[chunk_end + 2:]}),
            ("garbage instead of CRLF", "IncompleteBody",
             {"mutate": lambda b: b[:chunk_end] + b"XX" + b[chunk_end + 2:]}),
            ("cut inside a chunk", "IncompleteBody", {"mutate": lambda b: b[:len(first) + 1000]}),
            ("no final chunk", "IncompleteBody", {"mutate": lambda b: b[:b.rindex(b"0\r\n")]}),
            ("final CRLF missing", "IncompleteBody", {"mutate": lambda b: b[:-2]}),
            ("decoded length too large", "IncompleteBody", {"decoded_length": len(data) + 1}),
            ("decoded length too small", "IncompleteBody", {"decoded_length": len(data) - 1}),
            ("trailer line without colon", "MalformedTrailerError",
             {"mutate": replace_once(b"x-amz-checksum-crc32:", b"x-amz-checksum-crc32 ")}),
            ("trailer other than announced", "MalformedTrailerError",
             {"trailers": [("x-amz-checksum-crc32c", ck.b64("CRC32C", data))],
              "trailer_header": "x-amz-checksum-crc32"}),
            ("announced trailer missing", "MalformedTrailerError",
             {"trailers": [], "trailer_header": "x-amz-checksum-crc32"}),
        ]
        for name, code, kw in cases:
            with self.subTest(name):
                key = "framing/" + name.replace(" ", "-")
                trailers = kw.pop("trailers", [("x-amz-checksum-crc32", crc)])
                req = rawhttp.trailer_put(self.port, self.path(key), data, trailers, **kw)
                r = self.send(req)
                self.assertError(r, 400, code)
                self.assertAbsent(key)
                self.assertTrue(self.server.alive())
        # After all that, a good trailer upload on a fresh connection works.
        req = rawhttp.trailer_put(self.port, self.path("framing/good"), data, [("x-amz-checksum-crc32", crc)])
        self.assertEqual(self.send(req).status, 200)
        self.assertEqual(self.get_body(self.bucket, "framing/good"), data)

    # ---- multipart ------------------------------------------------------------------
    def create_upload(self, key, alg, ctype=None):
        headers = {"x-amz-checksum-algorithm": alg}
        if ctype:
            headers["x-amz-checksum-type"] = ctype
        r = self.req("POST", key, query="uploads", headers=headers)
        self.assertEqual(r.status, 200, r)
        return r, parse_xml(r.body).findtext("UploadId")

    def complete_xml(self, key, uid, parts, headers=None):
        """parts: [(number, etag, {element: value})]."""
        items = []
        for n, etag, extra in parts:
            ex = "".join(f"<{k}>{v}</{k}>" for k, v in extra.items())
            items.append(f"<Part><PartNumber>{n}</PartNumber><ETag>{etag}</ETag>{ex}</Part>")
        body = ("<CompleteMultipartUpload>" + "".join(items) + "</CompleteMultipartUpload>").encode()
        return self.req("POST", key, query=f"uploadId={uid}", headers=headers, body=body)

    def test_multipart_composite_crc32_boto3(self):
        key = "mp/composite-crc32"
        parts = [payload(PART, "cc1"), payload(PART, "cc2"), payload(777, "cc3")]
        r = self.s3.create_multipart_upload(Bucket=self.bucket, Key=key, ChecksumAlgorithm="CRC32")
        self.assertEqual(r["ChecksumAlgorithm"], "CRC32")
        self.assertEqual(r["ResponseMetadata"]["HTTPHeaders"]["x-amz-checksum-type"], "COMPOSITE")
        uid = r["UploadId"]
        done = []
        for n, d in enumerate(parts, 1):
            p = self.s3.upload_part(Bucket=self.bucket, Key=key, UploadId=uid, PartNumber=n, Body=d,
                                    ChecksumAlgorithm="CRC32")
            self.assertEqual(p["ChecksumCRC32"], ck.b64("CRC32", d))
            done.append({"PartNumber": n, "ETag": p["ETag"], "ChecksumCRC32": p["ChecksumCRC32"]})
        lp = self.s3.list_parts(Bucket=self.bucket, Key=key, UploadId=uid)
        self.assertEqual(lp["ChecksumAlgorithm"], "CRC32")
        self.assertEqual([(p["PartNumber"], p["ChecksumCRC32"]) for p in lp["Parts"]],
                         [(n, ck.b64("CRC32", d)) for n, d in enumerate(parts, 1)])
        lu = self.s3.list_multipart_uploads(Bucket=self.bucket, Prefix=key)
        self.assertEqual([u.get("ChecksumAlgorithm") for u in lu["Uploads"]], ["CRC32"])
        # A part's checksum in the completion list that is not the stored one.
        bad = [dict(p) for p in done]
        bad[1]["ChecksumCRC32"] = wrong_value("CRC32", parts[1])
        self.assertS3Error(self.s3.complete_multipart_upload, "InvalidPart", 400, Bucket=self.bucket, Key=key,
                           UploadId=uid, MultipartUpload={"Parts": bad})
        self.assertAbsent(key)
        c = self.s3.complete_multipart_upload(Bucket=self.bucket, Key=key, UploadId=uid,
                                              MultipartUpload={"Parts": done})
        composite = ck.composite("CRC32", parts)
        self.assertEqual(c["ChecksumCRC32"], composite)
        self.assertEqual(c["ETag"], multipart_etag(parts))
        self.assertStoredChecksum(key, "CRC32", composite, ctype="COMPOSITE")
        g = self.s3.get_object(Bucket=self.bucket, Key=key, ChecksumMode="ENABLED")
        self.assertEqual(g["ChecksumCRC32"], composite)
        self.assertEqual(g["Body"].read(), b"".join(parts))
        root = self.attributes(key)
        self.assertEqual(root.findtext("Checksum/ChecksumCRC32").split("-")[0], composite.split("-")[0])
        self.assertEqual(root.findtext("Checksum/ChecksumType"), "COMPOSITE")
        self.assertEqual([(p.findtext("PartNumber"), p.findtext("Size"), p.findtext("ChecksumCRC32"))
                          for p in root.findall("ObjectParts/Part")],
                         [(str(n), str(len(d)), ck.b64("CRC32", d)) for n, d in enumerate(parts, 1)])

    def test_multipart_full_object_crc32c(self):
        key = "mp/full-crc32c"
        parts = [payload(PART, "fc1"), payload(123456, "fc2")]
        r, uid = self.create_upload(key, "CRC32C", "FULL_OBJECT")
        self.assertEqual(r.header("x-amz-checksum-algorithm"), "CRC32C")
        self.assertEqual(r.header("x-amz-checksum-type"), "FULL_OBJECT")
        crcs, done = [], []
        for n, d in enumerate(parts, 1):
            value = ck.b64("CRC32C", d)
            crcs.append(value)
            p = self.s3.upload_part(Bucket=self.bucket, Key=key, UploadId=uid, PartNumber=n, Body=d,
                                    ChecksumCRC32C=value)
            self.assertEqual(p["ChecksumCRC32C"], value)
            done.append((n, p["ETag"], {"ChecksumCRC32C": value}))
        c = self.complete_xml(key, uid, done)
        self.assertEqual(c.status, 200, c)
        root = parse_xml(c.body)
        whole = base64.b64encode(ck.crc32c(parts[1], ck.crc32c(parts[0])).to_bytes(4, "big")).decode()
        self.assertEqual(root.findtext("ChecksumCRC32C"), whole)
        self.assertEqual(root.findtext("ChecksumType"), "FULL_OBJECT")
        self.assertStoredChecksum(key, "CRC32C", whole, ctype="FULL_OBJECT")
        root = self.attributes(key, "Checksum")
        self.assertEqual(root.findtext("Checksum/ChecksumCRC32C"), whole)

    def test_multipart_crc64nvme_parts_with_trailers(self):
        key = "mp/crc64-trailers"
        parts = [payload(PART, "nv1"), payload(PART + 1, "nv2"), payload(5000, "nv3")]
        r, uid = self.create_upload(key, "CRC64NVME")
        self.assertEqual(r.header("x-amz-checksum-type"), "FULL_OBJECT")  # the only type for CRC64NVME
        path = self.path(key)
        done = []
        running = 0
        for n, d in enumerate(parts, 1):
            raw = ck.crc64nvme(d)
            running = ck.crc64nvme(d, running)
            value = base64.b64encode(raw.to_bytes(8, "big")).decode()
            mode = {1: dict(signed=False), 2: dict(signed=True), 3: None}[n]
            if mode is None:  # the last one with a plain header
                resp = self.req("PUT", key, query=f"partNumber={n}&uploadId={uid}",
                                headers={"x-amz-checksum-crc64nvme": value}, body=d)
            else:
                req = rawhttp.trailer_put(self.port, path, d, [("x-amz-checksum-crc64nvme", value)],
                                          query=f"partNumber={n}&uploadId={uid}", chunk_size=1 * MiB, **mode)
                resp = self.send(req)
            self.assertEqual(resp.status, 200, resp)
            self.assertEqual(resp.header("ETag"), quoted(md5_hex(d)))
            self.assertEqual(resp.header("x-amz-checksum-crc64nvme"), value)
            done.append((n, resp.header("ETag"), {"ChecksumCRC64NVME": value}))
        # A part whose trailer is wrong is refused and not listed.
        req = rawhttp.trailer_put(self.port, path, b"bad part", [("x-amz-checksum-crc64nvme",
                                                                 wrong_value("CRC64NVME", b"bad part"))],
                                  query=f"partNumber=4&uploadId={uid}")
        self.assertError(self.send(req), 400, "BadDigest")
        lp = self.req("GET", key, query=f"uploadId={uid}")
        root = parse_xml(lp.body)
        self.assertEqual(root.findtext("ChecksumAlgorithm"), "CRC64NVME")
        self.assertEqual(root.findtext("ChecksumType"), "FULL_OBJECT")
        self.assertEqual([(p.findtext("PartNumber"), p.findtext("ChecksumCRC64NVME")) for p in root.findall("Part")],
                         [(str(n), extra["ChecksumCRC64NVME"]) for n, _, extra in done])
        c = self.complete_xml(key, uid, done)
        self.assertEqual(c.status, 200, c)
        whole = base64.b64encode(running.to_bytes(8, "big")).decode()
        root = parse_xml(c.body)
        self.assertEqual(root.findtext("ChecksumCRC64NVME"), whole)
        self.assertEqual(root.findtext("ChecksumType"), "FULL_OBJECT")
        self.assertEqual(root.findtext("ETag"), multipart_etag(parts))
        self.assertStoredChecksum(key, "CRC64NVME", whole, ctype="FULL_OBJECT", data=b"".join(parts))

    def test_multipart_sha256_composite_and_part_errors(self):
        key = "mp/sha256"
        parts = [payload(PART, "sh1"), payload(10, "sh2")]
        r, uid = self.create_upload(key, "SHA256")
        self.assertEqual(r.header("x-amz-checksum-type"), "COMPOSITE")
        # Part with the wrong checksum: BadDigest, not stored.
        r = self.req("PUT", key, query=f"partNumber=1&uploadId={uid}",
                     headers={"x-amz-checksum-sha256": wrong_value("SHA256", parts[0])}, body=parts[0])
        self.assertError(r, 400, "BadDigest")
        # Part with another algorithm than the upload's.
        r = self.req("PUT", key, query=f"partNumber=1&uploadId={uid}",
                     headers={"x-amz-checksum-crc32": ck.b64("CRC32", parts[0])}, body=parts[0])
        self.assertError(r, 400, "InvalidRequest")
        lp = parse_xml(self.req("GET", key, query=f"uploadId={uid}").body)
        self.assertEqual(lp.findall("Part"), [])
        done = []
        for n, d in enumerate(parts, 1):
            r = self.req("PUT", key, query=f"partNumber={n}&uploadId={uid}",
                         headers={"x-amz-checksum-sha256": ck.b64("SHA256", d)}, body=d)
            self.assertEqual(r.status, 200, r)
            done.append((n, r.header("ETag"), {"ChecksumSHA256": ck.b64("SHA256", d)}))
        c = self.complete_xml(key, uid, done)
        self.assertEqual(c.status, 200, c)
        composite = ck.composite("SHA256", parts)
        self.assertEqual(parse_xml(c.body).findtext("ChecksumSHA256"), composite)
        self.assertEqual(parse_xml(c.body).findtext("ChecksumType"), "COMPOSITE")
        self.assertStoredChecksum(key, "SHA256", composite, ctype="COMPOSITE")

    def test_multipart_checksum_type_rules(self):
        cases = [
            ("FULL_OBJECT with SHA256", "SHA256", "FULL_OBJECT"),
            ("FULL_OBJECT with SHA1", "SHA1", "FULL_OBJECT"),
            ("COMPOSITE with CRC64NVME", "CRC64NVME", "COMPOSITE"),
            ("unknown type", "CRC32", "PARTIAL"),
            ("unknown algorithm", "MD5", None),
        ]
        for name, alg, ctype in cases:
            with self.subTest(name):
                key = "mprules/" + name.replace(" ", "-")
                headers = {"x-amz-checksum-algorithm": alg}
                if ctype:
                    headers["x-amz-checksum-type"] = ctype
                r = self.req("POST", key, query="uploads", headers=headers)
                self.assertError(r, 400, "InvalidRequest")
                self.assertEqual(self.s3.list_multipart_uploads(Bucket=self.bucket, Prefix=key).get("Uploads", []), [])
        for alg, ctype in (("CRC32", "FULL_OBJECT"), ("CRC32C", "COMPOSITE"), ("SHA1", "COMPOSITE"),
                           ("CRC64NVME", "FULL_OBJECT")):
            r, uid = self.create_upload(f"mprules/ok-{alg}", alg, ctype)
            self.assertEqual((r.header("x-amz-checksum-algorithm"), r.header("x-amz-checksum-type")), (alg, ctype))
            self.s3.abort_multipart_upload(Bucket=self.bucket, Key=f"mprules/ok-{alg}", UploadId=uid)


if __name__ == "__main__":
    unittest.main()

"""Bad input against a real strata server, over raw sockets.

Every case checks the HTTP status and, where S3 defines one, the exact S3
error Code in the XML body; afterwards the server must still be alive and
serve a normal request (tearDown -> assertServerHealthy).

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_bad_input.py -v
"""
import base64
import datetime
import hashlib
import hmac
import os
import random
import sys
import time
import unittest
from email.utils import formatdate
from urllib.parse import urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from botocore.auth import S3SigV4QueryAuth  # noqa: E402
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402

import rawhttp  # noqa: E402
from harness import (ACCESS_KEY, REGION, SECRET_KEY, ServerTestCase, no_empty_expect,  # noqa: E402
                     parse_error)
from rawhttp import Conn, quote_key, sha256_hex  # noqa: E402

BUCKET = "bad-input"


def md5_b64(data):
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def payload(n, seed):
    return random.Random(seed).randbytes(n)


class BadInputTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.port = cls.server.port
        no_empty_expect(cls.s3)  # botocore#3755, see harness
        cls.s3.create_bucket(Bucket=BUCKET)
        cls.presigner = cls.server.boto3_client(signature_version="s3v4")

    @classmethod
    def tearDownClass(cls):
        cls.presigner.close()
        super().tearDownClass()

    def tearDown(self):
        self.assertServerHealthy()

    # ---- helpers -------------------------------------------------------
    def req(self, method, path, query="", headers=None, body=b"", **kw):
        return rawhttp.request(self.port, method, path, query=query, headers=headers, body=body, **kw)

    def send_raw(self, data, method="GET"):
        """Sends bytes on a fresh connection, returns the first response."""
        with Conn(self.port) as c:
            c.try_send(data)
            return c.read_response(method)

    def assertError(self, resp, status, code):
        self.assertEqual(resp.status, status, resp)
        self.assertEqual(resp.error_code, code, resp)
        ctype = resp.header("Content-Type") or ""
        self.assertIn("xml", ctype, resp.headers)

    def assertAbsent(self, key, bucket=BUCKET, settle=0.3):
        time.sleep(settle)  # give the server time to see the EOF / finish the request
        r = self.req("HEAD", f"/{bucket}/{quote_key(key)}")
        self.assertEqual(r.status, 404, f"{key!r} should not exist: {r}")
        listed = self.s3.list_objects_v2(Bucket=bucket, Prefix=key).get("Contents", [])
        self.assertNotIn(key, [o["Key"] for o in listed])

    def get_bytes(self, key, bucket=BUCKET):
        return self.s3.get_object(Bucket=bucket, Key=key)["Body"].read()

    def put(self, key, data):
        self.s3.put_object(Bucket=BUCKET, Key=key, Body=data)

    def assertObject(self, key, data):
        got = self.get_bytes(key)
        self.assertEqual(len(got), len(data))
        self.assertTrue(got == data, f"{key!r}: content differs")
        head = self.s3.head_object(Bucket=BUCKET, Key=key)
        self.assertEqual(head["ContentLength"], len(data))
        self.assertEqual(head["ETag"], '"%s"' % hashlib.md5(data).hexdigest())

    # ---- protocol-level garbage ---------------------------------------
    def test_malformed_request_lines(self):
        cases = {
            "garbage word": b"GARBAGE\r\n\r\n",
            "binary bytes": b"\x00\x01\x02\xff\xfe\x80 garbage \x7f\r\n\r\n",
            "no version": b"GET /\r\n\r\n",
            "bad version token": b"GET / HTTX/1.1\r\nHost: x\r\n\r\n",
            "too many parts": b"GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n",
            "header without colon": b"GET / HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n",
            "non-numeric content-length": b"PUT /bad-input/x HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
            "negative content-length": b"PUT /bad-input/x HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            "conflicting content-lengths":
                b"PUT /bad-input/x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        }
        for name, data in cases.items():
            with self.subTest(name):
                resp = self.send_raw(data)
                self.assertEqual(resp.status, 400, resp)
                self.assertTrue(self.server.alive(), self.server.read_log())
        self.assertAbsent("x")

    def test_oversized_header_section(self):
        target = f"/{BUCKET}/big-headers"
        single = (f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + "a" * 70000 + "\r\n\r\n").encode()
        many = (f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "".join(f"X-Filler-{i:05d}: {'b' * 40}\r\n" for i in range(1500)) + "\r\n").encode()
        for name, data in (("one 70 KiB header", single), ("1500 headers", many)):
            with self.subTest(name):
                self.assertGreater(len(data), 64 * 1024)
                resp = self.send_raw(data)
                self.assertIn(resp.status, (400, 431), resp)
                self.assertTrue(self.server.alive(), self.server.read_log())

    def test_oversized_request_line(self):
        data = (f"GET /{BUCKET}/" + "k" * 100000 + " HTTP/1.1\r\nHost: x\r\n\r\n").encode()
        resp = self.send_raw(data)
        self.assertIn(resp.status, (400, 414, 431), resp)

    # ---- bodies that do not match their framing ------------------------
    def test_content_length_larger_than_sent_then_close(self):
        key = "cl-larger"
        body = payload(1000, key)
        req = rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key}", body=body)
        with Conn(self.port) as c:
            c.send(req.header_block() + body[:500])
            time.sleep(0.2)
        self.assertAbsent(key)

    def test_content_length_smaller_than_body(self):
        key = "cl-smaller"
        body = b"0123456789"
        req = rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key}", body=body)
        extra = b"EXTRA GARBAGE\r\n\r\n"
        with Conn(self.port) as c:
            c.send(req.to_bytes() + extra)
            first = c.read_response("PUT")
            self.assertEqual(first.status, 200, first)
            # The extra bytes are the next request on the connection: garbage -> 400.
            second = c.read_response()
            self.assertEqual(second.status, 400, second)
        self.assertObject(key, body)

    def test_body_cut_mid_stream_keeps_previous_version(self):
        key = "cut-mid-stream"
        old = payload(64 * 1024, "old")
        self.put(key, old)
        new = payload(1024 * 1024, "new")
        req = rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key}", body=new)
        with Conn(self.port) as c:
            c.send(req.header_block() + new[:len(new) // 2])
            time.sleep(0.3)
        time.sleep(0.5)
        self.assertObject(key, old)
        # And a fresh key cut the same way never appears.
        key2 = "cut-mid-stream-fresh"
        req = rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key2}", body=new)
        with Conn(self.port) as c:
            c.send(req.header_block() + new[:len(new) // 2])
            time.sleep(0.3)
        self.assertAbsent(key2)

    # ---- integrity headers ---------------------------------------------
    def test_content_sha256_mismatch(self):
        key = "sha-mismatch"
        resp = self.req("PUT", f"/{BUCKET}/{key}", body=b"hello world",
                        payload_hash=sha256_hex(b"something else"))
        self.assertError(resp, 400, "XAmzContentSHA256Mismatch")
        self.assertAbsent(key)
        # Existing object is not replaced by a mismatching PUT.
        self.put(key, b"original")
        resp = self.req("PUT", f"/{BUCKET}/{key}", body=b"replacement",
                        payload_hash=sha256_hex(b"other"))
        self.assertError(resp, 400, "XAmzContentSHA256Mismatch")
        self.assertObject(key, b"original")

    def test_content_sha256_not_a_hash(self):
        key = "sha-garbage"
        resp = self.req("PUT", f"/{BUCKET}/{key}", body=b"hello", payload_hash="not-a-sha256")
        self.assertEqual(resp.status, 400, resp)
        self.assertIn(resp.error_code, ("InvalidArgument", "InvalidRequest"), resp)
        self.assertAbsent(key)

    def test_wrong_content_md5(self):
        key = "bad-digest"
        body = b"payload bytes"
        resp = self.req("PUT", f"/{BUCKET}/{key}", body=body, headers={"Content-MD5": md5_b64(b"other")})
        self.assertError(resp, 400, "BadDigest")
        self.assertAbsent(key)
        # The right MD5 is accepted.
        resp = self.req("PUT", f"/{BUCKET}/{key}", body=body, headers={"Content-MD5": md5_b64(body)})
        self.assertEqual(resp.status, 200, resp)
        self.assertObject(key, body)

    def test_invalid_content_md5(self):
        key = "invalid-digest"
        for name, value in (("not base64", "!!!not-base64!!!"),
                            ("short digest", base64.b64encode(b"12345").decode()),
                            ("hex digest", hashlib.md5(b"x").hexdigest())):
            with self.subTest(name):
                resp = self.req("PUT", f"/{BUCKET}/{key}", body=b"data", headers={"Content-MD5": value})
                self.assertError(resp, 400, "InvalidDigest")
        self.assertAbsent(key)

    # ---- names ---------------------------------------------------------
    def test_invalid_bucket_names(self):
        for name in ("ab", "a" * 64, "Bad_Bucket", "UPPERCASE", "-leading-dash", "trailing-dash-",
                     "double..dot", "192.168.1.1", "bad!char", "xn--punycode",
                     "ends-s3alias"):
            with self.subTest(name):
                resp = self.req("PUT", "/" + quote_key(name))
                self.assertError(resp, 400, "InvalidBucketName")
                names = [b["Name"] for b in self.s3.list_buckets()["Buckets"]]
                self.assertNotIn(name, names)

    def test_key_too_long(self):
        for name, key in (("1025 ascii bytes", "k" * 1025), ("1026 utf-8 bytes", "\u00e9" * 513)):
            with self.subTest(name):
                resp = self.req("PUT", f"/{BUCKET}/{quote_key(key)}", body=b"x")
                self.assertError(resp, 400, "KeyTooLongError")
        for name, key in (("1024 ascii bytes", "k" * 1024), ("1024 utf-8 bytes", "\u00e9" * 512)):
            with self.subTest(name):
                resp = self.req("PUT", f"/{BUCKET}/{quote_key(key)}", body=b"fits")
                self.assertEqual(resp.status, 200, resp)
                self.assertObject(key, b"fits")

    # ---- ranges ----------------------------------------------------------
    def test_ranges(self):
        key = "ten-bytes"
        self.put(key, b"0123456789")
        path = f"/{BUCKET}/{key}"

        resp = self.req("GET", path, headers={"Range": "bytes=5-2"})  # invalid syntax: ignored
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(resp.body, b"0123456789")
        self.assertIsNone(resp.header("Content-Range"))

        for rng in ("bytes=100-", "bytes=-0", "bytes=10-10"):
            with self.subTest(rng):
                resp = self.req("GET", path, headers={"Range": rng})
                self.assertError(resp, 416, "InvalidRange")

        for rng, body, crange in (("bytes=3-5", b"345", "bytes 3-5/10"),
                                  ("bytes=-3", b"789", "bytes 7-9/10"),
                                  ("bytes=8-100", b"89", "bytes 8-9/10"),
                                  ("bytes=0-", b"0123456789", "bytes 0-9/10")):
            with self.subTest(rng):
                resp = self.req("GET", path, headers={"Range": rng})
                self.assertEqual(resp.status, 206, resp)
                self.assertEqual(resp.body, body)
                self.assertEqual(resp.header("Content-Range"), crange)
                self.assertEqual(resp.header("Content-Length"), str(len(body)))

    # ---- aws-chunked (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) ---------------
    def test_signed_aws_chunked_upload(self):
        for name, size in (("200 KiB", 200 * 1024), ("exact chunk multiple", 128 * 1024),
                           ("one small chunk", 100), ("empty", 0)):
            with self.subTest(name):
                key = f"chunked-ok-{size}"
                data = payload(size, key)
                req = rawhttp.signed_streaming_put(self.port, f"/{BUCKET}/{key}", data, chunk_size=64 * 1024)
                resp = rawhttp.send_request(self.port, req)
                self.assertEqual(resp.status, 200, resp)
                self.assertEqual(resp.header("ETag"), '"%s"' % hashlib.md5(data).hexdigest())
                self.assertObject(key, data)
                head = self.s3.head_object(Bucket=BUCKET, Key=key)
                self.assertNotIn("aws-chunked", head.get("ContentEncoding", ""))

    def test_aws_chunked_bad_signature(self):
        data = payload(200 * 1024, "badsig")

        def bad_sig(index):
            def tamper(i, size_hex, sig, chunk):
                if i == index:
                    return size_hex, "0" * 64, chunk
                return None
            return tamper

        def bad_data(i, size_hex, sig, chunk):
            if i == 1:
                return size_hex, sig, bytes([chunk[0] ^ 1]) + chunk[1:]
            return None

        cases = (("first chunk signature", bad_sig(0)), ("second chunk signature", bad_sig(1)),
                 ("final empty chunk signature", bad_sig(4)), ("chunk data flipped", bad_data))
        for name, tamper in cases:
            with self.subTest(name):
                key = "chunked-badsig-" + name.replace(" ", "-")
                req = rawhttp.signed_streaming_put(self.port, f"/{BUCKET}/{key}", data,
                                                   chunk_size=64 * 1024, tamper=tamper)
                resp = rawhttp.send_request(self.port, req)
                self.assertError(resp, 403, "SignatureDoesNotMatch")
                self.assertAbsent(key)
        # A bad chunk never replaces an existing object.
        key = "chunked-badsig-existing"
        self.put(key, b"previous")
        req = rawhttp.signed_streaming_put(self.port, f"/{BUCKET}/{key}", data, chunk_size=64 * 1024,
                                           tamper=bad_sig(2))
        resp = rawhttp.send_request(self.port, req)
        self.assertError(resp, 403, "SignatureDoesNotMatch")
        time.sleep(0.3)
        self.assertObject(key, b"previous")

    def test_aws_chunked_malformed_framing(self):
        key = "chunked-framing"
        data = payload(100 * 1024, key)

        def non_hex(i, size_hex, sig, chunk):
            if i == 1:
                return "z" * len(size_hex), sig, chunk
            return None

        req = rawhttp.signed_streaming_put(self.port, f"/{BUCKET}/{key}", data, chunk_size=64 * 1024,
                                           tamper=non_hex)
        resp = rawhttp.send_request(self.port, req)
        self.assertEqual(resp.status, 400, resp)
        self.assertIn(resp.error_code, ("IncompleteBody", "InvalidRequest", "InvalidArgument",
                                        "MalformedChunkedEncoding"), resp)
        self.assertAbsent(key)

        # Chunk data not followed by CRLF.
        req = rawhttp.signed_streaming_put(self.port, f"/{BUCKET}/{key}", data, chunk_size=64 * 1024)
        first_end = req.body.index(b"\r\n") + 2 + 64 * 1024
        self.assertEqual(req.body[first_end:first_end + 2], b"\r\n")
        req.body = req.body[:first_end] + b"XX" + req.body[first_end + 2:]
        resp = rawhttp.send_request(self.port, req)
        self.assertEqual(resp.status, 400, resp)
        self.assertIn(resp.error_code, ("IncompleteBody", "InvalidRequest", "InvalidArgument",
                                        "MalformedChunkedEncoding"), resp)
        self.assertAbsent(key)

    def test_aws_chunked_decoded_length_mismatch(self):
        data = payload(100 * 1024, "declen")
        for name, declared in (("declared more than sent", len(data) + 100),
                               ("declared less than sent", len(data) - 100),
                               ("declared one byte", 1)):
            with self.subTest(name):
                key = "chunked-declen-" + name.replace(" ", "-")
                req = rawhttp.signed_streaming_put(self.port, f"/{BUCKET}/{key}", data,
                                                   chunk_size=64 * 1024, decoded_length=declared)
                resp = rawhttp.send_request(self.port, req)
                self.assertError(resp, 400, "IncompleteBody")
                self.assertAbsent(key)

    # ---- operations and XML ----------------------------------------------
    def test_unknown_operations(self):
        resp = self.req("GET", f"/{BUCKET}", query="website")
        self.assertError(resp, 501, "NotImplemented")
        resp = self.req("PUT", f"/{BUCKET}", query="notanop")
        self.assertError(resp, 501, "NotImplemented")

    def test_delete_objects_malformed_xml(self):
        self.put("keep-me", b"keep")
        for name, body in (("garbage", b"this is <not> xml at all"),
                           ("truncated", b"<Delete><Object><Key>keep-me</Key></Object>"),
                           ("wrong root", b"<NotDelete><Object><Key>keep-me</Key></Object></NotDelete>"),
                           ("empty", b"")):
            with self.subTest(name):
                resp = self.req("POST", f"/{BUCKET}", query="delete", body=body,
                                headers={"Content-MD5": md5_b64(body), "Content-Type": "application/xml"})
                self.assertError(resp, 400, "MalformedXML")
        self.assertObject("keep-me", b"keep")

    def test_create_bucket_malformed_xml(self):
        for name, body in (("garbage", b"garbage<<<"),
                           ("truncated", b"<CreateBucketConfiguration><LocationConstraint>us-east-1")):
            with self.subTest(name):
                resp = self.req("PUT", "/xml-bucket", body=body)
                self.assertError(resp, 400, "MalformedXML")
                resp = self.req("HEAD", "/xml-bucket")
                self.assertEqual(resp.status, 404, resp)

    # ---- authentication ---------------------------------------------------
    def test_missing_auth(self):
        self.put("private", b"secret")
        port = self.port
        resp = rawhttp.send_request(port, rawhttp.unsigned(port, "GET", f"/{BUCKET}/private"))
        self.assertError(resp, 403, "AccessDenied")
        self.assertNotIn(b"secret", resp.body)
        resp = rawhttp.send_request(port, rawhttp.unsigned(port, "GET", "/"))
        self.assertError(resp, 403, "AccessDenied")
        resp = rawhttp.send_request(port, rawhttp.unsigned(port, "PUT", f"/{BUCKET}/anon", body=b"x"))
        self.assertError(resp, 403, "AccessDenied")
        self.assertAbsent("anon")

    def test_sigv2_header_auth(self):
        # A SigV2 request built by hand from the RESTAuthentication spec
        # (--sigv2 off is covered in test_sigv2.py).
        key = "sigv2"
        date = formatdate(usegmt=True)
        sts = f"PUT\n\napplication/octet-stream\n{date}\nx-amz-meta-a:1\n/{BUCKET}/{key}"

        def v2_put(secret, body):
            sig = base64.b64encode(hmac.new(secret.encode(), sts.encode(), hashlib.sha1).digest())
            req = rawhttp.unsigned(self.port, "PUT", f"/{BUCKET}/{key}", body=body,
                                   headers={"Date": date, "Content-Type": "application/octet-stream",
                                            "X-Amz-Meta-A": "1",
                                            "Authorization": f"AWS {ACCESS_KEY}:{sig.decode()}"})
            return rawhttp.send_request(self.port, req)

        self.assertError(v2_put("not-the-secret", b"forged"), 403, "SignatureDoesNotMatch")
        self.assertAbsent(key)
        resp = v2_put(SECRET_KEY, b"v2 body")
        self.assertEqual(resp.status, 200, resp)
        self.assertObject(key, b"v2 body")
        head = self.s3.head_object(Bucket=BUCKET, Key=key)
        self.assertEqual(head["Metadata"], {"a": "1"})

    # ---- x-amz-* headers outside the signature ------------------------------
    def presigned(self, method, key, **kw):
        """A raw request for a SigV4 presigned URL (signed headers: host only)."""
        op = {"PUT": "put_object", "GET": "get_object"}[method]
        url = self.presigner.generate_presigned_url(op, Params={"Bucket": BUCKET, "Key": key},
                                                     ExpiresIn=300)
        split = urlsplit(url)
        return rawhttp.unsigned(self.port, method, f"{split.path}?{split.query}", **kw)

    def assertHeadersNotSigned(self, resp, names):
        self.assertError(resp, 403, "AccessDenied")
        err = parse_error(resp.body)
        self.assertEqual(err["Message"], "There were headers present in the request which were not signed")
        self.assertEqual(err.get("HeadersNotSigned"), ", ".join(names), err)

    def test_presigned_put_cannot_gain_a_copy_source(self):
        # Before the fix, this copied another bucket's object into the URL's key.
        other = self.make_bucket("secrets")
        self.s3.put_object(Bucket=other, Key="secret", Body=b"top secret")
        key = "presigned-copy"
        req = self.presigned("PUT", key, headers={"x-amz-copy-source": f"/{other}/secret"})
        self.assertHeadersNotSigned(rawhttp.send_request(self.port, req), ["x-amz-copy-source"])
        self.assertAbsent(key)

    def test_presigned_put_cannot_gain_metadata_or_tags(self):
        key = "presigned-meta"
        req = self.presigned("PUT", key, body=b"data",
                             headers={"X-Amz-Meta-Owner": "mallory", "x-amz-tagging": "evil=1",
                                      "x-amz-storage-class": "STANDARD_IA"})
        self.assertHeadersNotSigned(rawhttp.send_request(self.port, req),
                                    ["x-amz-meta-owner", "x-amz-storage-class", "x-amz-tagging"])
        self.assertAbsent(key)
        # x-amz-content-sha256 may accompany a presigned URL unsigned (it is the
        # payload line of the canonical request), as at AWS; other headers too.
        req = self.presigned("PUT", key, body=b"data",
                             headers={"x-amz-content-sha256": "UNSIGNED-PAYLOAD",
                                      "Content-Type": "text/plain", "X-Amzn-Trace-Id": "Root=1"})
        resp = rawhttp.send_request(self.port, req)
        self.assertEqual(resp.status, 200, resp)
        self.assertObject(key, b"data")
        self.assertEqual(self.s3.get_object_tagging(Bucket=BUCKET, Key=key)["TagSet"], [])

    def test_header_auth_cannot_gain_amz_headers(self):
        key = "header-auth-extra"
        req = rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key}", body=b"x")
        extra = [("x-amz-meta-evil", "1"), ("x-amz-meta-evil", "2"), ("x-amz-acl", "public-read")]
        resp = rawhttp.send_request(self.port, req.to_bytes(extra), "PUT")
        self.assertHeadersNotSigned(resp, ["x-amz-acl", "x-amz-meta-evil"])
        self.assertAbsent(key)

    def test_header_auth_x_amz_date_must_be_signed(self):
        key = "unsigned-date"
        resp = rawhttp.request(self.port, "PUT", f"/{BUCKET}/{key}", body=b"x",
                               unsigned_headers=("x-amz-date",))
        self.assertHeadersNotSigned(resp, ["x-amz-date"])
        self.assertAbsent(key)
        # AWS accepts an unsigned x-amz-content-sha256: the signature covers its value.
        resp = rawhttp.request(self.port, "PUT", f"/{BUCKET}/{key}", body=b"x",
                               unsigned_headers=("x-amz-content-sha256",))
        self.assertEqual(resp.status, 200, resp)
        self.assertObject(key, b"x")

    def test_clock_skew(self):
        key = "skew"
        now = datetime.datetime.utcnow()
        for name, when in (("1 hour old", now - datetime.timedelta(hours=1)),
                           ("1 hour ahead", now + datetime.timedelta(hours=1))):
            with self.subTest(name):
                resp = self.req("PUT", f"/{BUCKET}/{key}", body=b"late", when=when)
                self.assertError(resp, 403, "RequestTimeTooSkewed")
        self.assertAbsent(key)
        # Within the 15 minute window is fine.
        resp = self.req("PUT", f"/{BUCKET}/{key}", body=b"ok", when=now - datetime.timedelta(minutes=10))
        self.assertEqual(resp.status, 200, resp)
        self.assertObject(key, b"ok")

    def test_bad_signature(self):
        key = "badsig-header"
        req = rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key}", body=b"x")
        req.headers = [(n, v[:-4] + "0000" if n == "Authorization" else v) for n, v in req.headers]
        resp = rawhttp.send_request(self.port, req)
        self.assertError(resp, 403, "SignatureDoesNotMatch")
        self.assertAbsent(key)

    # ---- HTTP/1.1 features ---------------------------------------------------
    # ---- presigned X-Amz-Expires and the request date, as AWS answers them ----
    def presigned_expiring(self, key, expires_in):
        """The target of a presigned GET signed by botocore's S3SigV4QueryAuth with
        any X-Amz-Expires (generate_presigned_url refuses 0 and negative ones)."""
        req = AWSRequest(method="GET", url=f"http://127.0.0.1:{self.port}/{BUCKET}/{quote_key(key)}")
        S3SigV4QueryAuth(Credentials(ACCESS_KEY, SECRET_KEY), "s3", REGION,
                         expires=expires_in).add_auth(req)
        split = urlsplit(req.url)
        return f"{split.path}?{split.query}"

    def test_presigned_expires_out_of_range(self):
        self.put("expiring", b"data")
        week = ("X-Amz-Expires must be less than a week (in seconds); that is, the given "
                "X-Amz-Expires must be less than 604800 seconds")
        cases = [(-7, 400, "AuthorizationQueryParametersError", "X-Amz-Expires must be non-negative"),
                 (604801, 400, "AuthorizationQueryParametersError", week),
                 (609901, 400, "AuthorizationQueryParametersError", week),
                 (0, 403, "AccessDenied", "Request has expired")]
        for expires_in, status, code, message in cases:
            with self.subTest(expires_in=expires_in):
                target = self.presigned_expiring("expiring", expires_in)
                resp = rawhttp.send_request(self.port, rawhttp.unsigned(self.port, "GET", target))
                self.assertError(resp, status, code)
                self.assertEqual(parse_error(resp.body)["Message"], message)
                self.assertNotIn(b"data", resp.body)
        # Not a number: refused before the (now broken) signature is looked at.
        target = self.presigned_expiring("expiring", 300).replace("X-Amz-Expires=300", "X-Amz-Expires=abc")
        resp = rawhttp.send_request(self.port, rawhttp.unsigned(self.port, "GET", target))
        self.assertError(resp, 400, "AuthorizationQueryParametersError")
        self.assertEqual(parse_error(resp.body)["Message"], "X-Amz-Expires should be a number")
        # A week is the limit, and allowed.
        target = self.presigned_expiring("expiring", 604800)
        resp = rawhttp.send_request(self.port, rawhttp.unsigned(self.port, "GET", target))
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(resp.body, b"data")

    def signed_with_date(self, date, sign_date):
        """A GET / signed by hand (botocore replaces a Date header) with x-amz-date
        and a Date header, Date among the signed headers or not."""
        now = datetime.datetime.utcnow()
        amz_date = now.strftime("%Y%m%dT%H%M%SZ")
        headers = {"host": f"127.0.0.1:{self.port}", "date": date, "x-amz-date": amz_date,
                   "x-amz-content-sha256": rawhttp.UNSIGNED_PAYLOAD}
        names = sorted(n for n in headers if sign_date or n != "date")
        canonical = ("GET\n/\n\n" + "".join(f"{n}:{headers[n].strip()}\n" for n in names) + "\n" +
                     ";".join(names) + "\n" + rawhttp.UNSIGNED_PAYLOAD)
        scope = f"{amz_date[:8]}/us-east-1/s3/aws4_request"
        to_sign = f"AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{sha256_hex(canonical.encode())}"
        signature = hmac.new(rawhttp.signing_key(SECRET_KEY, amz_date[:8]), to_sign.encode(),
                             hashlib.sha256).hexdigest()
        headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/{scope}, "
                                    f"SignedHeaders={';'.join(names)}, Signature={signature}")
        head = "GET / HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        return head.encode("latin-1")

    def test_x_amz_date_takes_precedence_over_date(self):
        for date in ("not a date", "Thu, 01 Jan 1970 00:00:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT"):
            for sign_date in (False, True):
                with self.subTest(date=date, signed=sign_date):
                    resp = rawhttp.send_request(self.port, self.signed_with_date(date, sign_date))
                    self.assertEqual(resp.status, 200, resp)
                    self.assertIn(b"ListAllMyBucketsResult", resp.body)

    def test_expect_100_continue(self):
        key = "expect-continue"
        body = payload(256 * 1024, key)
        req = rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key}", body=body,
                           headers={"Expect": "100-continue"})
        with Conn(self.port) as c:
            c.send(req.header_block())
            interim = c.read_response("PUT", allow_interim=True)
            self.assertEqual(interim.status, 100, interim)
            c.send(body)
            final = c.read_response("PUT")
            self.assertEqual(final.status, 200, final)
        self.assertObject(key, body)

    def test_expect_100_continue_rejected_request(self):
        key = "expect-continue-denied"
        body = payload(64 * 1024, key)
        req = rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key}", body=body,
                           headers={"Expect": "100-continue"})
        req.headers = [(n, v[:-4] + "0000" if n == "Authorization" else v) for n, v in req.headers]
        with Conn(self.port) as c:
            c.send(req.header_block())
            first = c.read_response("PUT", allow_interim=True)
            if first.status == 100:  # allowed, though S3 answers the error right away
                c.send(body)
                first = c.read_response("PUT")
            self.assertError(first, 403, "SignatureDoesNotMatch")
        self.assertAbsent(key)

    def test_keep_alive_100_requests(self):
        with Conn(self.port) as c:
            for i in range(50):
                key = f"ka/{i:03d}"
                body = f"keep-alive body {i}".encode() * (i + 1)
                c.send(rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key}", body=body).to_bytes())
                resp = c.read_response("PUT")
                self.assertEqual(resp.status, 200, (i, resp))
                self.assertNotEqual((resp.header("Connection") or "").lower(), "close")
                c.send(rawhttp.sign(self.port, "GET", f"/{BUCKET}/{key}").to_bytes())
                resp = c.read_response("GET")
                self.assertEqual(resp.status, 200, (i, resp))
                self.assertEqual(resp.body, body)
                self.assertNotEqual((resp.header("Connection") or "").lower(), "close")

    def test_pipelined_gets(self):
        objs = {"pipe/a": payload(1000, "a"), "pipe/b": b"", "pipe/c": payload(300 * 1024, "c")}
        for k, v in objs.items():
            self.put(k, v)
        keys = list(objs)
        with Conn(self.port) as c:
            c.send(b"".join(rawhttp.sign(self.port, "GET", f"/{BUCKET}/{k}").to_bytes() for k in keys))
            for k in keys:
                resp = c.read_response("GET")
                self.assertEqual(resp.status, 200, (k, resp))
                self.assertEqual(resp.header("ETag"), '"%s"' % hashlib.md5(objs[k]).hexdigest())
                self.assertTrue(resp.body == objs[k], k)

    def test_pipelined_mixed_methods(self):
        self.put("pipe/x", b"x" * 5000)
        reqs = [rawhttp.sign(self.port, "HEAD", f"/{BUCKET}/pipe/x"),
                rawhttp.sign(self.port, "GET", f"/{BUCKET}/pipe/missing"),
                rawhttp.sign(self.port, "PUT", f"/{BUCKET}/pipe/y", body=b"yyy"),
                rawhttp.sign(self.port, "GET", f"/{BUCKET}/pipe/x", headers={"Range": "bytes=0-9"})]
        with Conn(self.port) as c:
            c.send(b"".join(r.to_bytes() for r in reqs))
            head = c.read_response("HEAD")
            self.assertEqual(head.status, 200, head)
            self.assertEqual(head.header("Content-Length"), "5000")
            missing = c.read_response("GET")
            self.assertError(missing, 404, "NoSuchKey")
            put = c.read_response("PUT")
            self.assertEqual(put.status, 200, put)
            rng = c.read_response("GET")
            self.assertEqual(rng.status, 206, rng)
            self.assertEqual(rng.body, b"x" * 10)
        self.assertObject("pipe/y", b"yyy")

    def test_transfer_encoding_chunked_unsigned_payload(self):
        key = "te-chunked"
        req = rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key}", payload_hash=rawhttp.UNSIGNED_PAYLOAD,
                           content_length=False)
        body = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
        with Conn(self.port) as c:
            c.send(req.header_block([("Transfer-Encoding", "chunked")]) + body)
            resp = c.read_response("PUT")
            self.assertEqual(resp.status, 200, resp)
        self.assertObject(key, b"hello world")

        # Larger body in uneven chunks, with a chunk extension and upper-case hex.
        key = "te-chunked-large"
        data = payload(300 * 1024, key)
        rnd = random.Random(7)
        parts, i = [], 0
        while i < len(data):
            n = min(rnd.randint(1, 50000), len(data) - i)
            ext = ";name=value" if len(parts) == 1 else ""
            parts.append(format(n, "X").encode() + ext.encode() + b"\r\n" + data[i:i + n] + b"\r\n")
            i += n
        parts.append(b"0\r\n\r\n")
        req = rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key}", payload_hash=rawhttp.UNSIGNED_PAYLOAD,
                           content_length=False)
        with Conn(self.port) as c:
            c.send(req.header_block([("Transfer-Encoding", "chunked")]) + b"".join(parts))
            resp = c.read_response("PUT")
            self.assertEqual(resp.status, 200, resp)
        self.assertObject(key, data)

    def test_transfer_encoding_chunked_cut_short(self):
        key = "te-chunked-cut"
        req = rawhttp.sign(self.port, "PUT", f"/{BUCKET}/{key}", payload_hash=rawhttp.UNSIGNED_PAYLOAD,
                           content_length=False)
        with Conn(self.port) as c:
            c.send(req.header_block([("Transfer-Encoding", "chunked")]) + b"5\r\nhello\r\n10\r\nonly-half")
            time.sleep(0.3)
        self.assertAbsent(key)


if __name__ == "__main__":
    unittest.main()

"""POST Object (browser-based upload with a SigV4 POST policy) against a real
strata server. Forms come from boto3's generate_presigned_post; the
multipart/form-data bodies are built by hand (and once by curl -F) and sent
with http.client, without an Authorization header.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_post_object.py -v
"""
import base64
import hashlib
import http.client
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
import uuid
import zlib
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import ServerTestCase, parse_error, parse_xml  # noqa: E402


def multipart(fields, content, filename="upload.bin", file_field="file", after=(),
              boundary=None):
    """A multipart/form-data body: `fields` (pairs, in order), then the file
    part, then `after` (pairs after the file). Returns (content_type, body)."""
    boundary = boundary or "----strataForm" + uuid.uuid4().hex
    out = []
    for name, value in fields:
        if isinstance(value, str):
            value = value.encode()
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                   .encode() + value + b"\r\n")
    if file_field is not None:
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; '
                   f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
                   .encode() + content + b"\r\n")
    for name, value in after:
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                   f"{value}\r\n".encode())
    out.append(f"--{boundary}--\r\n".encode())
    return f"multipart/form-data; boundary={boundary}", b"".join(out)


class PostObjectTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bucket = "post-object"
        cls.s3.create_bucket(Bucket=cls.bucket)
        cls.signer = cls.server.boto3_client(signature_version="s3v4")

    @classmethod
    def tearDownClass(cls):
        cls.signer.close()
        super().tearDownClass()

    def tearDown(self):
        self.assertServerHealthy()

    # ---- helpers -------------------------------------------------------
    def presign(self, key, fields=None, conditions=None, expires=600, client=None, bucket=None):
        post = (client or self.signer).generate_presigned_post(
            Bucket=bucket or self.bucket, Key=key, Fields=fields or {},
            Conditions=conditions or [], ExpiresIn=expires)
        return post["url"], dict(post["fields"])

    def send(self, url, content_type, body, extra_headers=None):
        parts = urlsplit(url)
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
        try:
            headers = {"Content-Type": content_type, "Host": parts.netloc}
            headers.update(extra_headers or {})
            conn.request("POST", parts.path or "/", body=body, headers=headers)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def post(self, url, fields, content, **kw):
        ct, body = multipart(list(fields.items()), content, **kw)
        return self.send(url, ct, body)

    def assertPostError(self, resp, status, code, message_part=None):
        st, _, body = resp
        self.assertEqual(st, status, body)
        err = parse_error(body)
        self.assertEqual(err["Code"], code, body)
        if message_part:
            self.assertIn(message_part, err.get("Message", ""), body)
        return err

    def assertNoObject(self, key):
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=self.bucket, Key=key)

    # ---- success -------------------------------------------------------
    def test_upload_204_with_headers_and_metadata(self):
        key = "docs/report.txt"
        fields = {"Content-Type": "text/plain; charset=utf-8", "x-amz-meta-color": "blue",
                  "Cache-Control": "max-age=60"}
        url, form = self.presign(key, fields=fields, conditions=[
            {"Content-Type": "text/plain; charset=utf-8"}, ["starts-with", "$x-amz-meta-color", ""],
            ["eq", "$Cache-Control", "max-age=60"]])
        data = b"hello from a browser\r\n--not-a-boundary\r\n"
        status, headers, body = self.post(url, form, data)
        self.assertEqual(status, 204, body)
        self.assertEqual(body, b"")
        self.assertEqual(headers["etag"], '"%s"' % hashlib.md5(data).hexdigest())
        self.assertTrue(headers["location"].endswith(f"/{self.bucket}/docs/report.txt"),
                        headers["location"])
        obj = self.s3.get_object(Bucket=self.bucket, Key=key)
        self.assertEqual(obj["Body"].read(), data)
        self.assertEqual(obj["ContentType"], "text/plain; charset=utf-8")
        self.assertEqual(obj["Metadata"], {"color": "blue"})
        self.assertEqual(obj["CacheControl"], "max-age=60")

    def test_upload_201_returns_post_response(self):
        key = "xml/obj.bin"
        url, form = self.presign(key, fields={"success_action_status": "201"},
                                 conditions=[{"success_action_status": "201"}])
        data = os.urandom(1000)
        status, headers, body = self.post(url, form, data)
        self.assertEqual(status, 201, body)
        doc = parse_xml(body)
        self.assertEqual(doc.tag, "PostResponse")
        got = {c.tag: c.text for c in doc}
        self.assertEqual(got["Bucket"], self.bucket)
        self.assertEqual(got["Key"], key)
        self.assertEqual(got["ETag"], '"%s"' % hashlib.md5(data).hexdigest())
        self.assertTrue(got["Location"].endswith(f"/{self.bucket}/xml/obj.bin"), got)
        self.assertEqual(self.get_body(self.bucket, key), data)

    def test_upload_200_and_redirect(self):
        url, form = self.presign("s200", fields={"success_action_status": "200"},
                                 conditions=[{"success_action_status": "200"}])
        status, _, body = self.post(url, form, b"x")
        self.assertEqual((status, body), (200, b""))
        redirect = "https://example.com/done?from=test"
        url, form = self.presign("redir/a b", fields={"success_action_redirect": redirect},
                                 conditions=[{"success_action_redirect": redirect}])
        status, headers, _ = self.post(url, form, b"yz")
        self.assertEqual(status, 303)
        loc = urlsplit(headers["location"])
        self.assertEqual(f"{loc.scheme}://{loc.netloc}{loc.path}", "https://example.com/done")
        q = parse_qs(loc.query)
        self.assertEqual(q["from"], ["test"])
        self.assertEqual(q["bucket"], [self.bucket])
        self.assertEqual(q["key"], ["redir/a b"])
        self.assertEqual(q["etag"], ['"%s"' % hashlib.md5(b"yz").hexdigest()])
        self.assertEqual(self.get_body(self.bucket, "redir/a b"), b"yz")

    def test_filename_substitution(self):
        url, form = self.presign("uploads/${filename}")
        self.assertEqual(form["key"], "uploads/${filename}")
        status, _, body = self.post(url, form, b"png bytes", filename="C:\\Users\\me\\photo.png")
        self.assertEqual(status, 204, body)
        self.assertEqual(self.get_body(self.bucket, "uploads/photo.png"), b"png bytes")

    def test_large_file_streams(self):
        data = random.Random(7).randbytes(3 * 1024 * 1024 + 17)
        url, form = self.presign("big/file", conditions=[["content-length-range", 0, 8 << 20]])
        status, headers, body = self.post(url, form, data)
        self.assertEqual(status, 204, body)
        self.assertEqual(headers["etag"], '"%s"' % hashlib.md5(data).hexdigest())
        self.assertEqual(self.get_body(self.bucket, "big/file"), data)

    def test_fields_after_file_are_ignored(self):
        url, form = self.presign("after/file")
        status, _, body = self.post(url, form, b"content",
                                    after=[("x-amz-meta-late", "1"), ("acl", "public-read")])
        self.assertEqual(status, 204, body)
        obj = self.s3.get_object(Bucket=self.bucket, Key="after/file")
        self.assertEqual(obj["Body"].read(), b"content")
        self.assertEqual(obj["Metadata"], {})

    def test_tagging_checksum_and_case_insensitive_names(self):
        tagging = ("<Tagging><TagSet><Tag><Key>team</Key><Value>web</Value></Tag>"
                   "</TagSet></Tagging>")
        data = b"checksummed"
        crc = base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()
        url, form = self.presign("tagged", fields={"tagging": tagging, "x-amz-checksum-crc32": crc},
                                 conditions=[{"tagging": tagging}, {"x-amz-checksum-crc32": crc}])
        # Field names are case-insensitive.
        form = {(k.upper() if k == "key" else k): v for k, v in form.items()}
        status, headers, body = self.post(url, form, data)
        self.assertEqual(status, 204, body)
        self.assertEqual(headers.get("x-amz-checksum-crc32"), crc)
        tags = self.s3.get_object_tagging(Bucket=self.bucket, Key="tagged")["TagSet"]
        self.assertEqual(tags, [{"Key": "team", "Value": "web"}])
        # A checksum that does not match the file.
        url, form = self.presign("tagged-bad", fields={"x-amz-checksum-crc32": crc},
                                 conditions=[{"x-amz-checksum-crc32": crc}])
        self.assertPostError(self.post(url, form, b"other data"), 400, "BadDigest")
        self.assertNoObject("tagged-bad")

    def test_curl_form_upload(self):
        url, form = self.presign("curl/${filename}", fields={"Content-Type": "image/png"},
                                 conditions=[["starts-with", "$Content-Type", "image/"]])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "pic.png")
            data = os.urandom(200000)
            with open(path, "wb") as f:
                f.write(data)
            args = ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}"]
            for k, v in form.items():
                args += ["--form-string", f"{k}={v}"]
            args += ["-F", f"file=@{path}", url]
            out = subprocess.run(args, capture_output=True, text=True, timeout=60)
        self.assertEqual(out.stdout.strip(), "204", out.stderr)
        obj = self.s3.get_object(Bucket=self.bucket, Key="curl/pic.png")
        self.assertEqual(obj["Body"].read(), data)
        self.assertEqual(obj["ContentType"], "image/png")

    # ---- refusals ------------------------------------------------------
    def test_expired_policy(self):
        url, form = self.presign("expired", expires=-5)
        self.assertPostError(self.post(url, form, b"x"), 403, "AccessDenied", "Policy expired")
        self.assertNoObject("expired")

    def test_tampered_policy(self):
        url, form = self.presign("tamper/${filename}")
        policy = json.loads(base64.b64decode(form["policy"]))
        policy["conditions"] = [c for c in policy["conditions"]
                                if not (isinstance(c, list) and c[1] == "$key")]
        policy["conditions"].append(["starts-with", "$key", ""])
        form["policy"] = base64.b64encode(json.dumps(policy).encode()).decode()
        form["key"] = "anywhere"
        self.assertPostError(self.post(url, form, b"x"), 403, "SignatureDoesNotMatch")
        self.assertNoObject("anywhere")

    def test_tampered_signature(self):
        url, form = self.presign("sig")
        sig = form["x-amz-signature"]
        form["x-amz-signature"] = ("0" if sig[0] != "0" else "1") + sig[1:]
        self.assertPostError(self.post(url, form, b"x"), 403, "SignatureDoesNotMatch")
        form["x-amz-signature"] = sig[:-2]
        self.assertPostError(self.post(url, form, b"x"), 403, "SignatureDoesNotMatch")
        self.assertNoObject("sig")

    def test_unknown_access_key_and_wrong_secret(self):
        other = self.server.boto3_client(signature_version="s3v4", access_key="NOSUCHKEY")
        try:
            url, form = self.presign("ak", client=other)
        finally:
            other.close()
        self.assertPostError(self.post(url, form, b"x"), 403, "InvalidAccessKeyId")
        wrong = self.server.boto3_client(signature_version="s3v4", secret_key="not-the-secret")
        try:
            url, form = self.presign("ak", client=wrong)
        finally:
            wrong.close()
        self.assertPostError(self.post(url, form, b"x"), 403, "SignatureDoesNotMatch")
        self.assertNoObject("ak")

    def test_sigv2_form(self):
        # boto3 with signature_version="s3" signs the policy with SigV2:
        # AWSAccessKeyId, policy, signature = base64(HMAC-SHA1(secret, policy)).
        v2 = self.server.boto3_client(signature_version="s3")
        self.addCleanup(v2.close)
        url, form = self.presign("v2/form.txt", fields={"x-amz-meta-via": "v2"},
                                 conditions=[{"x-amz-meta-via": "v2"}], client=v2)
        self.assertIn("AWSAccessKeyId", form)
        self.assertIn("signature", form)
        self.assertNotIn("x-amz-signature", form)
        status, _, body = self.post(url, form, b"posted with sigv2")
        self.assertEqual(status, 204, body)
        self.assertEqual(self.get_body(self.bucket, "v2/form.txt"), b"posted with sigv2")
        head = self.s3.head_object(Bucket=self.bucket, Key="v2/form.txt")
        self.assertEqual(head["Metadata"], {"via": "v2"})
        # The policy still binds: a field outside it is refused.
        bad = dict(form, **{"x-amz-meta-extra": "1"})
        self.assertPostError(self.post(url, bad, b"x"), 403, "AccessDenied")

    def test_sigv2_form_bad_signature(self):
        v2 = self.server.boto3_client(signature_version="s3", secret_key="not-the-secret")
        self.addCleanup(v2.close)
        url, form = self.presign("v2/forged", client=v2)
        self.assertPostError(self.post(url, form, b"x"), 403, "SignatureDoesNotMatch")
        good = self.server.boto3_client(signature_version="s3")
        self.addCleanup(good.close)
        url, form = self.presign("v2/forged", client=good)
        form["policy"] = form["policy"][:-4] + "AAA="
        self.assertPostError(self.post(url, form, b"x"), 403, "SignatureDoesNotMatch")
        self.assertNoObject("v2/forged")

    def test_starts_with_violation(self):
        url, form = self.presign("user/alice/${filename}")
        form["key"] = "user/bob/evil.txt"
        err = self.assertPostError(self.post(url, form, b"x"), 403, "AccessDenied",
                                   "Policy Condition failed")
        self.assertIn("$key", err["Message"])
        self.assertNoObject("user/bob/evil.txt")

    def test_exact_match_violation(self):
        url, form = self.presign("ct", fields={"Content-Type": "image/png"},
                                 conditions=[{"Content-Type": "image/png"}])
        form["Content-Type"] = "text/html"
        self.assertPostError(self.post(url, form, b"x"), 403, "AccessDenied",
                             "Policy Condition failed")
        self.assertNoObject("ct")

    def test_content_length_range(self):
        url, form = self.presign("sized", conditions=[["content-length-range", 5, 10]])
        self.assertPostError(self.post(url, form, b"x" * 11), 400, "EntityTooLarge")
        self.assertPostError(self.post(url, form, b"x" * 4), 400, "EntityTooSmall")
        self.assertPostError(self.post(url, form, b""), 400, "EntityTooSmall")
        self.assertNoObject("sized")
        # Far too large: refused while streaming.
        self.assertPostError(self.post(url, form, os.urandom(2 << 20)), 400, "EntityTooLarge")
        self.assertNoObject("sized")
        status, _, body = self.post(url, form, b"x" * 10)
        self.assertEqual(status, 204, body)

    def test_extra_field_not_in_policy(self):
        url, form = self.presign("extra")
        form["x-amz-meta-sneaky"] = "1"
        self.assertPostError(self.post(url, form, b"x"), 403, "AccessDenied",
                             "Extra input fields: x-amz-meta-sneaky")
        self.assertNoObject("extra")
        # x-ignore-* fields need no condition.
        del form["x-amz-meta-sneaky"]
        form["x-ignore-flash"] = "yes"
        status, _, body = self.post(url, form, b"x")
        self.assertEqual(status, 204, body)

    def test_wrong_bucket(self):
        other = self.make_bucket("post-other")
        url, form = self.presign("wb")
        other_url = url.replace(f"/{self.bucket}", f"/{other}")
        self.assertPostError(self.post(other_url, form, b"x"), 403, "AccessDenied",
                             "Policy Condition failed")
        url, form = self.presign("wb", bucket="no-such-bucket-post")
        self.assertPostError(self.post(url, form, b"x"), 404, "NoSuchBucket")

    def test_malformed_forms(self):
        url, form = self.presign("malformed")
        # No file part.
        self.assertPostError(self.post(url, form, b"", file_field=None), 400, "InvalidArgument")
        # Missing policy: anonymous, refused (no bucket policy makes this bucket public).
        f2 = dict(form)
        del f2["policy"]
        self.assertPostError(self.post(url, f2, b"x"), 403, "AccessDenied")
        # Missing key.
        f3 = dict(form)
        del f3["key"]
        self.assertPostError(self.post(url, f3, b"x"), 400, "InvalidArgument")
        # Body cut before the closing boundary.
        ct, body = multipart(list(form.items()), b"data" * 100)
        self.assertPostError(self.send(url, ct, body[:-60]), 400, "MalformedPOSTRequest")
        # Not multipart at all / garbage with a multipart content type.
        self.assertPostError(self.send(url, "multipart/form-data; boundary=zzz", b"garbage"),
                             400, "MalformedPOSTRequest")
        self.assertPostError(self.send(url, "multipart/form-data", b"garbage"), 400,
                             "MalformedPOSTRequest")
        # A field over 64 KiB before the file.
        ct, body = multipart([("x-ignore-big", "v" * (65 * 1024))] + list(form.items()), b"x")
        self.assertPostError(self.send(url, ct, body), 400, "MaxPostPreDataLengthExceededError")
        self.assertNoObject("malformed")

    def test_unsigned_non_form_post_still_needs_auth(self):
        url, _ = self.presign("nf")
        self.assertPostError(self.send(url, "application/octet-stream", b"x"), 403,
                             "AccessDenied")

    def test_server_survives_many_bad_posts(self):
        url, form = self.presign("many")
        for i in range(20):
            f = dict(form)
            f["x-amz-signature"] = "%064x" % i
            self.assertPostError(self.post(url, f, os.urandom(1000)), 403, "SignatureDoesNotMatch")
        status, _, body = self.post(url, form, b"ok")
        self.assertEqual(status, 204, body)


if __name__ == "__main__":
    unittest.main()

"""AWS Signature Version 2 against a real strata server: boto3 with
signature_version="s3" (header auth), boto3's default presigned URLs (SigV2
query auth in Debian's boto3 1.26), botocore's SigV2 signer on raw requests
(virtual-host style, clock skew), s3cmd with signature_v2 = True, and a
server started with --sigv2 off.

botocore 1.29's SigV2 signer appends a sub-resource twice, or signs a
non-sub-resource, for operations whose model URI carries a query
("/{Bucket}?delete", "?list-type=2", "?tagging", "?uploads"; boto/boto3#4433);
AWS refuses those requests too, so they are not exercised with SigV2 here.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_sigv2.py -v
"""
import datetime
import os
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rawhttp  # noqa: E402
from harness import ServerTestCase, parse_error  # noqa: E402
from test_post_object import multipart  # noqa: E402

DOMAIN = "s3.test"


def fetch(url, method="GET", data=None, headers=None):
    """urllib request; returns (status, body, headers) for success and errors alike."""
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read(), r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.read(), e.headers


class SigV2Test(ServerTestCase):
    server_kwargs = {"domain": DOMAIN}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.v2 = cls.server.boto3_client(signature_version="s3")
        cls.schemes = set()

        def record(request, **kwargs):
            value = request.headers.get("Authorization") or ""
            value = value.decode() if isinstance(value, bytes) else value
            cls.schemes.add(value.split(" ")[0])

        cls.v2.meta.events.register("before-send.s3", record)

    @classmethod
    def tearDownClass(cls):
        cls.v2.close()
        super().tearDownClass()

    def tearDown(self):
        self.assertServerHealthy()

    def client(self, **kw):
        c = self.server.boto3_client(**kw)
        self.addCleanup(c.close)
        return c

    # ---- boto3, header auth ------------------------------------------------
    def test_boto3_object_lifecycle(self):
        b = self.bucket_name("v2")
        v2 = self.v2
        v2.create_bucket(Bucket=b)
        v2.head_bucket(Bucket=b)
        v2.put_object(Bucket=b, Key="dir/a b+c.txt", Body=b"hello sigv2", ContentType="text/plain",
                      Metadata={"owner": "v2"}, Tagging="k=v")
        head = v2.head_object(Bucket=b, Key="dir/a b+c.txt")
        self.assertEqual(head["Metadata"], {"owner": "v2"})
        self.assertEqual(head["ContentType"], "text/plain")
        got = v2.get_object(Bucket=b, Key="dir/a b+c.txt", Range="bytes=0-4",
                            ResponseContentType="application/x-test")
        self.assertEqual(got["Body"].read(), b"hello")
        self.assertEqual(got["ContentType"], "application/x-test")
        self.assertEqual(self.s3.get_object_tagging(Bucket=b, Key="dir/a b+c.txt")["TagSet"],
                         [{"Key": "k", "Value": "v"}])
        v2.copy_object(Bucket=b, Key="copy", CopySource={"Bucket": b, "Key": "dir/a b+c.txt"})
        self.assertEqual(self.get_body(b, "copy"), b"hello sigv2")
        self.assertEqual([o["Key"] for o in v2.list_objects(Bucket=b)["Contents"]],
                         ["copy", "dir/a b+c.txt"])
        listed = v2.list_objects(Bucket=b, Prefix="dir/", Delimiter="/")
        self.assertEqual([o["Key"] for o in listed["Contents"]], ["dir/a b+c.txt"])
        self.assertIn(b, [x["Name"] for x in v2.list_buckets()["Buckets"]])
        v2.delete_object(Bucket=b, Key="copy")
        v2.delete_object(Bucket=b, Key="dir/a b+c.txt")
        self.assertNotIn("Contents", v2.list_objects(Bucket=b))
        v2.delete_bucket(Bucket=b)
        self.assertEqual(self.schemes, {"AWS"})  # every request was SigV2

    def test_boto3_multipart_parts(self):
        b = self.make_bucket("v2mp")
        part1, part2 = os.urandom(5 << 20), os.urandom(1000)
        # CreateMultipartUpload is one of the botocore cases above: SigV4.
        up = self.s3.create_multipart_upload(Bucket=b, Key="big")["UploadId"]
        etags = [self.v2.upload_part(Bucket=b, Key="big", UploadId=up, PartNumber=n, Body=d)["ETag"]
                 for n, d in ((1, part1), (2, part2))]
        parts = self.v2.list_parts(Bucket=b, Key="big", UploadId=up)["Parts"]
        self.assertEqual([p["PartNumber"] for p in parts], [1, 2])
        self.v2.complete_multipart_upload(
            Bucket=b, Key="big", UploadId=up,
            MultipartUpload={"Parts": [{"PartNumber": n, "ETag": e} for n, e in zip((1, 2), etags)]})
        self.assertEqual(self.get_body(b, "big"), part1 + part2)
        up = self.s3.create_multipart_upload(Bucket=b, Key="aborted")["UploadId"]
        self.v2.abort_multipart_upload(Bucket=b, Key="aborted", UploadId=up)
        self.assertEqual(self.s3.list_multipart_uploads(Bucket=b).get("Uploads", []), [])

    def test_wrong_secret_or_unknown_key(self):
        self.assertS3Error(self.client(signature_version="s3", secret_key="not-the-secret").list_buckets,
                           "SignatureDoesNotMatch", 403)
        self.assertS3Error(self.client(signature_version="s3", access_key="NOSUCHKEY").list_buckets,
                           "InvalidAccessKeyId", 403)

    # ---- presigned URLs (query auth) ----------------------------------------
    def test_default_presigned_urls_are_sigv2_and_work(self):
        b = self.make_bucket("v2pre")
        data = os.urandom(5000)
        self.put(b, "pre signed+key", data)
        presigner = self.client()  # no signature_version: boto3 1.26 presigns with SigV2
        url = presigner.generate_presigned_url("get_object", Params={"Bucket": b, "Key": "pre signed+key"},
                                               ExpiresIn=300)
        self.assertIn("AWSAccessKeyId=", url)
        self.assertNotIn("X-Amz-Signature", url)
        status, body, _ = fetch(url)
        self.assertEqual((status, body), (200, data))
        # A response override is a signed sub-resource.
        url = presigner.generate_presigned_url(
            "get_object", Params={"Bucket": b, "Key": "pre signed+key",
                                  "ResponseContentDisposition": 'attachment; filename="x y.bin"'},
            ExpiresIn=300)
        status, body, headers = fetch(url)
        self.assertEqual(status, 200, body)
        self.assertEqual(headers["Content-Disposition"], 'attachment; filename="x y.bin"')
        status, body, _ = fetch(url.replace("response-content-disposition=attachment",
                                            "response-content-disposition=inline"))
        self.assertEqual(status, 403)
        self.assertEqual(parse_error(body)["Code"], "SignatureDoesNotMatch")
        # PUT: Content-Type is part of the string to sign, so the URL names it.
        url = presigner.generate_presigned_url(
            "put_object", Params={"Bucket": b, "Key": "uploaded", "ContentType": "application/x-up"},
            ExpiresIn=300)
        status, body, _ = fetch(url, "PUT", b"via presigned sigv2", {"Content-Type": "application/x-up"})
        self.assertEqual(status, 200, body)
        self.assertEqual(self.get_body(b, "uploaded"), b"via presigned sigv2")
        status, body, _ = fetch(url, "PUT", b"other type", {"Content-Type": "text/html"})
        self.assertEqual(status, 403)
        self.assertEqual(parse_error(body)["Code"], "SignatureDoesNotMatch")

    def test_presigned_url_cannot_gain_amz_headers(self):
        # Every x-amz-* header is in a SigV2 string to sign: one added to a
        # presigned URL breaks the signature.
        b = self.make_bucket("v2copy")
        self.put(b, "secret", b"top secret")
        url = self.client().generate_presigned_url(
            "put_object", Params={"Bucket": b, "Key": "dst", "ContentType": "text/plain"},
            ExpiresIn=300)
        status, body, _ = fetch(url, "PUT", b"mine", {"Content-Type": "text/plain"})
        self.assertEqual(status, 200, body)
        status, body, _ = fetch(url, "PUT", b"", {"Content-Type": "text/plain",
                                                  "x-amz-copy-source": f"/{b}/secret"})
        self.assertEqual(status, 403, body)
        self.assertEqual(parse_error(body)["Code"], "SignatureDoesNotMatch")
        self.assertEqual(self.get_body(b, "dst"), b"mine")

    def test_presigned_expired_wrong_secret_tampered(self):
        b = self.make_bucket("v2exp")
        self.put(b, "k", b"private")
        expired = self.client().generate_presigned_url("get_object", Params={"Bucket": b, "Key": "k"},
                                                       ExpiresIn=-60)
        status, body, _ = fetch(expired)
        self.assertEqual(status, 403)
        err = parse_error(body)
        self.assertEqual((err["Code"], err["Message"]), ("AccessDenied", "Request has expired"))
        self.assertNotIn(b"private", body)
        wrong = self.client(secret_key="not-the-secret").generate_presigned_url(
            "get_object", Params={"Bucket": b, "Key": "k"}, ExpiresIn=300)
        status, body, _ = fetch(wrong)
        self.assertEqual(status, 403)
        self.assertEqual(parse_error(body)["Code"], "SignatureDoesNotMatch")
        good = self.client().generate_presigned_url("get_object", Params={"Bucket": b, "Key": "k"},
                                                    ExpiresIn=300)
        status, body, _ = fetch(good.replace(f"/{b}/k?", f"/{b}/j?"))
        self.assertEqual(status, 403)
        self.assertEqual(parse_error(body)["Code"], "SignatureDoesNotMatch")

    # ---- raw requests signed by botocore's SigV2 code ----------------------
    def test_virtual_host_style(self):
        b = self.make_bucket("v2vhost")
        host = f"{b}.{DOMAIN}:{self.server.port}"
        resp = rawhttp.send_request(self.server.port, rawhttp.sign_v2(
            self.server.port, "PUT", "/v/key", body=b"vhost body", host=host))
        self.assertEqual(resp.status, 200, resp)
        self.assertEqual(self.get_body(b, "v/key"), b"vhost body")
        resp = rawhttp.send_request(self.server.port, rawhttp.sign_v2(
            self.server.port, "GET", "/", query="location", host=host))
        self.assertEqual(resp.status, 200, resp)  # a sub-resource, signed as "/<bucket>/?location"
        # The bucket from Host is part of the signed resource.
        req = rawhttp.sign_v2(self.server.port, "GET", "/v/key", host=host)
        req.headers = [(n, f"other-bucket.{DOMAIN}:{self.server.port}" if n == "Host" else v)
                       for n, v in req.headers]
        self.assertEqual(rawhttp.send_request(self.server.port, req).error_code, "SignatureDoesNotMatch")

    def test_clock_skew(self):
        b = self.make_bucket("v2skew")
        now = datetime.datetime.utcnow()
        for when, status in ((now - datetime.timedelta(hours=1), 403),
                             (now + datetime.timedelta(hours=1), 403),
                             (now - datetime.timedelta(minutes=10), 200)):
            resp = rawhttp.send_request(self.server.port, rawhttp.sign_v2(
                self.server.port, "PUT", f"/{b}/k", body=b"x", when=when))
            self.assertEqual(resp.status, status, resp)
            if status == 403:
                self.assertEqual(resp.error_code, "RequestTimeTooSkewed")

    # ---- s3cmd -------------------------------------------------------------
    def test_s3cmd_signature_v2(self):
        b = self.bucket_name("v2s3cmd")
        data = os.urandom(300 * 1024)
        with tempfile.TemporaryDirectory() as d:
            src, dst = os.path.join(d, "src.bin"), os.path.join(d, "dst.bin")
            with open(src, "wb") as f:
                f.write(data)
            def run(*args):
                r = self.server.s3cmd(self.home, "--debug", *args, signature_v2=True)
                # s3cmd falls back to SigV4 when a SigV2 request is refused.
                self.assertIn("Using signature v2", r.stderr)
                self.assertNotIn("Using signature v4", r.stderr)
                return r
            run("mb", f"s3://{b}")
            run("put", src, f"s3://{b}/dir/file.bin")
            listing = run("ls", f"s3://{b}/dir/").stdout
            self.assertIn(f"s3://{b}/dir/file.bin", listing)
            run("get", f"s3://{b}/dir/file.bin", dst)
            with open(dst, "rb") as f:
                self.assertEqual(f.read(), data)
            run("del", f"s3://{b}/dir/file.bin")
            run("rb", f"s3://{b}")
        self.assertNotIn(b, [x["Name"] for x in self.s3.list_buckets()["Buckets"]])


class SigV2OffTest(ServerTestCase):
    """`strata server --sigv2 off`: SigV2 is refused as before SigV2 support."""

    server_kwargs = {"extra_args": ["--sigv2", "off"]}

    def test_sigv2_refused(self):
        b = self.make_bucket("v2off")
        self.put(b, "k", b"data")  # SigV4 still works
        v2 = self.server.boto3_client(signature_version="s3")
        self.addCleanup(v2.close)
        resp = self.assertS3Error(v2.get_object, "InvalidRequest", 400, Bucket=b, Key="k")
        self.assertIn("AWS4-HMAC-SHA256", resp["Error"]["Message"])
        self.assertS3Error(v2.put_object, "InvalidRequest", 400, Bucket=b, Key="new", Body=b"x")
        presigner = self.server.boto3_client()
        self.addCleanup(presigner.close)
        url = presigner.generate_presigned_url("get_object", Params={"Bucket": b, "Key": "k"})
        status, body, _ = fetch(url)
        self.assertEqual(status, 400)
        self.assertEqual(parse_error(body)["Code"], "InvalidRequest")
        self.assertNotIn(b"data", body)
        # A POST form signed with SigV2.
        post = v2.generate_presigned_post(Bucket=b, Key="posted", ExpiresIn=300)
        self.assertIn("AWSAccessKeyId", post["fields"])
        content_type, form = multipart(list(post["fields"].items()), b"form data")
        status, body, _ = fetch(post["url"], "POST", form, {"Content-Type": content_type})
        self.assertEqual(status, 400, body)
        self.assertEqual(parse_error(body)["Code"], "InvalidRequest")
        self.assertEqual([o["Key"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]], ["k"])


if __name__ == "__main__":
    unittest.main()

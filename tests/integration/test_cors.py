"""CORS (issue 12): Put/Get/DeleteBucketCors with boto3 and aws cli, the
browser's preflight (OPTIONS, unauthenticated) answered per the matching
rule or refused with 403 as S3 does, and the Access-Control-* headers on
actual requests, presigned GET / PUT and error responses included.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_cors.py -v
"""
import base64
import hashlib
import http.client
import json
import os
import sys
import unittest
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import ServerTestCase, parse_xml, signed_request, unique_name  # noqa: E402

APP = "https://app.example.com"
RULES = {"CORSRules": [
    {"ID": "web-app", "AllowedOrigins": [APP, "https://*.example.org"], "AllowedMethods": ["GET", "PUT"],
     "AllowedHeaders": ["Content-Type", "x-amz-*"], "ExposeHeaders": ["ETag", "x-amz-version-id"],
     "MaxAgeSeconds": 600},
    {"AllowedOrigins": ["*"], "AllowedMethods": ["HEAD"]},
]}


class CorsTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bucket = unique_name("cors")
        cls.s3.create_bucket(Bucket=cls.bucket)
        cls.s3.put_object(Bucket=cls.bucket, Key="page.html", Body=b"<p>hi</p>")
        cls.s3.put_bucket_cors(Bucket=cls.bucket, CORSConfiguration=RULES)

    def raw(self, method, target, headers):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        try:
            conn.request(method, target, headers=headers)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def test_get_configuration_round_trip(self):
        got = self.s3.get_bucket_cors(Bucket=self.bucket)["CORSRules"]
        self.assertEqual(got, RULES["CORSRules"])
        b = unique_name("nocors")
        self.s3.create_bucket(Bucket=b)
        self.assertS3Error(self.s3.get_bucket_cors, "NoSuchCORSConfiguration", 404, Bucket=b)
        self.s3.put_bucket_cors(Bucket=b, CORSConfiguration=RULES)
        self.s3.delete_bucket_cors(Bucket=b)
        self.assertS3Error(self.s3.get_bucket_cors, "NoSuchCORSConfiguration", 404, Bucket=b)
        out = self.server.aws(self.home, "s3api", "get-bucket-cors", "--bucket", self.bucket)
        self.assertEqual(json.loads(out.stdout)["CORSRules"][0]["ID"], "web-app")

    def test_invalid_configurations(self):
        b = unique_name("badcors")
        self.s3.create_bucket(Bucket=b)
        resp = self.assertS3Error(self.s3.put_bucket_cors, "InvalidRequest", 400, Bucket=b, CORSConfiguration={
            "CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}]})
        self.assertIn("PATCH", resp["Error"]["Message"])
        self.assertS3Error(self.s3.put_bucket_cors, "InvalidRequest", 400, Bucket=b, CORSConfiguration={
            "CORSRules": [{"AllowedOrigins": ["https://*.*.com"], "AllowedMethods": ["GET"]}]})
        broken = b"<CORSConfiguration><oops>"
        r = signed_request(self.server, "PUT", f"/{b}", query="cors", body=broken,
                           headers={"Content-MD5": base64.b64encode(hashlib.md5(broken).digest()).decode()})
        self.assertEqual((r.status, parse_xml(r.body).findtext("Code")), (400, "MalformedXML"))
        r = signed_request(self.server, "PUT", f"/{b}", query="cors", body=broken)  # no MD5: refused first
        self.assertEqual((r.status, parse_xml(r.body).findtext("Code")), (400, "InvalidRequest"))
        good = (b"<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin>"
                b"<AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>")
        r = signed_request(self.server, "PUT", f"/{b}", query="cors", body=good,
                           headers={"Content-MD5": "1B2M2Y8AsgTpgAmY7PhCfg=="})  # MD5 of ""
        self.assertEqual((r.status, parse_xml(r.body).findtext("Code")), (400, "BadDigest"))
        self.assertS3Error(self.s3.get_bucket_cors, "NoSuchCORSConfiguration", 404, Bucket=b)

    def test_preflight_of_a_presigned_request_is_not_authenticated(self):
        # The browser's preflight carries the presigned PUT's query (signed for
        # PUT, not OPTIONS): the CORS rules answer it; no signature is checked.
        url = self.s3.generate_presigned_url("put_object", ExpiresIn=600,
                                             Params={"Bucket": self.bucket, "Key": "up/presigned"})
        parts = urllib.parse.urlsplit(url)
        st, h, body = self.raw("OPTIONS", parts.path + "?" + parts.query, {
            "Origin": APP, "Access-Control-Request-Method": "PUT",
            "Access-Control-Request-Headers": "content-type"})
        self.assertEqual(st, 200, body)
        self.assertEqual(h["access-control-allow-origin"], APP)
        # Not allowed by the rules: refused the same way, signature or not.
        st, h, body = self.raw("OPTIONS", parts.path + "?" + parts.query, {
            "Origin": "https://evil.example.com", "Access-Control-Request-Method": "PUT"})
        self.assertEqual((st, parse_xml(body).findtext("Code")), (403, "AccessForbidden"))

    def test_preflight(self):
        target = f"/{self.bucket}/uploads/new.bin"
        st, h, _ = self.raw("OPTIONS", target, {"Origin": APP, "Access-Control-Request-Method": "PUT",
                                                "Access-Control-Request-Headers": "content-type, x-amz-date"})
        self.assertEqual(st, 200)
        self.assertEqual(h["access-control-allow-origin"], APP)
        self.assertEqual(h["access-control-allow-methods"], "GET, PUT")
        self.assertEqual(h["access-control-allow-headers"], "content-type, x-amz-date")
        self.assertEqual(h["access-control-max-age"], "600")
        self.assertIn("Origin", h["vary"])
        st, h, _ = self.raw("OPTIONS", target, {"Origin": "https://x.example.org",
                                                "Access-Control-Request-Method": "GET"})
        self.assertEqual((st, h["access-control-allow-origin"]), (200, "https://x.example.org"))
        for headers in ({"Origin": "https://evil.example.com", "Access-Control-Request-Method": "GET"},
                        {"Origin": APP, "Access-Control-Request-Method": "DELETE"},
                        {"Origin": APP, "Access-Control-Request-Method": "PUT",
                         "Access-Control-Request-Headers": "authorization"}):
            with self.subTest(headers=headers):
                st, h, body = self.raw("OPTIONS", target, headers)
                self.assertEqual((st, parse_xml(body).findtext("Code")), (403, "AccessForbidden"))
                self.assertNotIn("access-control-allow-origin", h)
        st, _, body = self.raw("OPTIONS", target, {"Access-Control-Request-Method": "GET"})
        self.assertEqual((st, parse_xml(body).findtext("Code")), (400, "BadRequest"))
        b = unique_name("nocors")
        self.s3.create_bucket(Bucket=b)
        st, _, body = self.raw("OPTIONS", f"/{b}/k", {"Origin": APP, "Access-Control-Request-Method": "GET"})
        self.assertEqual((st, parse_xml(body).findtext("Code")), (403, "AccessForbidden"))
        self.assertIn("not enabled", parse_xml(body).findtext("Message"))
        st, _, body = self.raw("OPTIONS", f"/{unique_name('missing')}/k",
                               {"Origin": APP, "Access-Control-Request-Method": "GET"})
        self.assertEqual((st, parse_xml(body).findtext("Code")), (404, "NoSuchBucket"))

    def test_actual_requests_carry_the_headers(self):
        url = self.server.boto3_client(signature_version="s3v4").generate_presigned_url(
            "get_object", Params={"Bucket": self.bucket, "Key": "page.html"}, ExpiresIn=300)
        target = url[len(self.server.endpoint):]
        st, h, body = self.raw("GET", target, {"Origin": APP})
        self.assertEqual((st, body), (200, b"<p>hi</p>"))
        self.assertEqual(h["access-control-allow-origin"], APP)
        self.assertEqual(h["access-control-expose-headers"], "ETag, x-amz-version-id")
        # Not an allowed origin: the object is served (the signature allows it)
        # but without the headers, so a browser will not hand it to the page.
        st, h, _ = self.raw("GET", target, {"Origin": "https://evil.example.com"})
        self.assertEqual(st, 200)
        self.assertNotIn("access-control-allow-origin", h)
        # Presigned PUT from the web app.
        put_url = self.server.boto3_client(signature_version="s3v4").generate_presigned_url(
            "put_object", Params={"Bucket": self.bucket, "Key": "uploads/from-browser"}, ExpiresIn=300)
        u = urllib.parse.urlsplit(put_url)
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        conn.request("PUT", u.path + "?" + u.query, body=b"uploaded", headers={"Origin": APP})
        r = conn.getresponse()
        r.read()
        conn.close()
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Access-Control-Allow-Origin"), APP)
        self.assertEqual(self.get_body(self.bucket, "uploads/from-browser"), b"uploaded")
        # An error answer too: the page can read why.
        st, h, body = self.raw("GET", f"/{self.bucket}/missing", {"Origin": APP})
        self.assertEqual(st, 403)  # unsigned
        self.assertEqual(h["access-control-allow-origin"], APP)
        # A HEAD from anywhere (the "*" rule): "*", no credentials.
        st, h, _ = self.raw("HEAD", f"/{self.bucket}/page.html", {"Origin": "https://anyone.net"})
        self.assertEqual(h["access-control-allow-origin"], "*")
        self.assertNotIn("access-control-allow-credentials", h)


if __name__ == "__main__":
    unittest.main()

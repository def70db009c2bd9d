"""Server-side encryption (issue 13) with real clients: SSE-S3, SSE-KMS with the
built-in key service (keys made, rotated, disabled and enabled with
`strata admin kms`), SSE-C (over HTTPS, and over plain HTTP only with
--sse-c-over-http), bucket default encryption; every header combination and
error case AWS defines; range reads across chunk boundaries; copies between
every pair of modes; multipart with SSE-C; aws cli --sse / --sse-kms-key-id /
--sse-c; no plaintext anywhere under the data directory; a flipped ciphertext
byte fails the read; everything readable after a restart.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_encryption.py -v
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (ACCESS_KEY, SECRET_KEY, Server, parse_error, signed_request,  # noqa: E402
                     unique_name)

CHUNK = 64 * 1024
MARKER = b"SSE-PLAINTEXT-MARKER-0123456789;"


def marked(n):
    return (MARKER * (n // len(MARKER) + 1))[:n]


def ssec(key):
    return {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": base64.b64encode(key).decode(),
            "SSECustomerKeyMD5": base64.b64encode(hashlib.md5(key).digest()).decode()}


def ssec_headers(key, prefix="x-amz-server-side-encryption-customer-", md5=True):
    h = {prefix + "algorithm": "AES256", prefix + "key": base64.b64encode(key).decode()}
    if md5:
        h[prefix + "key-MD5"] = base64.b64encode(hashlib.md5(key).digest()).decode()
    return h


def code_of(e):
    return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]


class EncryptionCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(extra_args=["--sse-c-over-http"]).start()
        cls.s3 = cls.server.boto3_client()
        cls.home = tempfile.mkdtemp(prefix="strata-sse-home-")
        cls.bucket = unique_name("sse")
        cls.s3.create_bucket(Bucket=cls.bucket)
        cls.key_c = os.urandom(32)

    @classmethod
    def tearDownClass(cls):
        cls.s3.close()
        cls.server.cleanup()
        shutil.rmtree(cls.home, ignore_errors=True)

    def kms(self, *args, check=True):
        env = dict(os.environ, STRATA_ROOT_USER=ACCESS_KEY, STRATA_ROOT_PASSWORD=SECRET_KEY)
        r = subprocess.run([self.server.bin, "admin", "kms", *args, "--endpoint", self.server.endpoint],
                           capture_output=True, text=True, env=env, timeout=60)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def create_key(self, alias):
        return json.loads(self.kms("create-key", "--alias", alias).stdout)

    def raw(self, method, key, headers=None, body=b"", query=""):
        return signed_request(self.server, method, f"/{self.bucket}/{key}", query=query,
                              headers=headers or {}, body=body)


class SseS3AndKmsTest(EncryptionCase):
    def test_sse_s3_round_trip_headers_and_md5_etag(self):
        body = marked(300_000)
        r = self.s3.put_object(Bucket=self.bucket, Key="s3", Body=body, ServerSideEncryption="AES256")
        self.assertEqual(r["ServerSideEncryption"], "AES256")
        self.assertEqual(r["ETag"], '"%s"' % hashlib.md5(body).hexdigest())  # as AWS for SSE-S3
        head = self.s3.head_object(Bucket=self.bucket, Key="s3")
        self.assertEqual(head["ServerSideEncryption"], "AES256")
        got = self.s3.get_object(Bucket=self.bucket, Key="s3")
        self.assertEqual(got["ServerSideEncryption"], "AES256")
        self.assertEqual(got["Body"].read(), body)
        # Ranges across chunk boundaries of every kind.
        for first, last in [(0, 0), (CHUNK - 1, CHUNK), (CHUNK, 2 * CHUNK - 1), (10, 200_000),
                            (2 * CHUNK - 3, 299_999), (299_999, 299_999)]:
            part = self.s3.get_object(Bucket=self.bucket, Key="s3", Range=f"bytes={first}-{last}")
            self.assertEqual(part["Body"].read(), body[first:last + 1], (first, last))

    def test_sse_kms_with_a_key_of_the_key_service(self):
        key = self.create_key("alias/it-team")
        self.assertTrue(key["arn"].startswith("arn:aws:kms:"), key)
        body = marked(5000)
        ctx = base64.b64encode(json.dumps({"project": "llm"}).encode()).decode()
        r = self.s3.put_object(Bucket=self.bucket, Key="kms", Body=body, ServerSideEncryption="aws:kms",
                               SSEKMSKeyId="alias/it-team", SSEKMSEncryptionContext=ctx,
                               BucketKeyEnabled=True)
        self.assertEqual(r["ServerSideEncryption"], "aws:kms")
        self.assertEqual(r["SSEKMSKeyId"], key["arn"])
        self.assertTrue(r["BucketKeyEnabled"])
        self.assertNotEqual(r["ETag"], '"%s"' % hashlib.md5(body).hexdigest())  # not an MD5, as AWS
        head = self.s3.head_object(Bucket=self.bucket, Key="kms")
        self.assertEqual((head["ServerSideEncryption"], head["SSEKMSKeyId"]), ("aws:kms", key["arn"]))
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="kms")["Body"].read(), body)
        # Without a key id: the AWS-managed key aws/s3, made on first use.
        r = self.s3.put_object(Bucket=self.bucket, Key="kms-default", Body=b"x", ServerSideEncryption="aws:kms")
        keys = json.loads(self.kms("list").stdout)["keys"]
        managed = [k for k in keys if k["alias"] == "alias/aws/s3"]
        self.assertEqual(len(managed), 1)
        self.assertEqual(r["SSEKMSKeyId"], managed[0]["arn"])

    def test_rotation_keeps_old_objects_and_a_disabled_key_makes_them_unreadable(self):
        key = self.create_key("alias/it-rotate")
        self.s3.put_object(Bucket=self.bucket, Key="before", Body=b"old material",
                           ServerSideEncryption="aws:kms", SSEKMSKeyId=key["key_id"])
        rotated = json.loads(self.kms("rotate", "alias/it-rotate").stdout)
        self.assertEqual(rotated["materials"], 2)
        self.s3.put_object(Bucket=self.bucket, Key="after", Body=b"new material",
                           ServerSideEncryption="aws:kms", SSEKMSKeyId=key["arn"])
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="before")["Body"].read(), b"old material")
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="after")["Body"].read(), b"new material")
        self.kms("disable", key["key_id"])
        from botocore.exceptions import ClientError
        for k in ("before", "after"):
            with self.assertRaises(ClientError) as cm:
                self.s3.get_object(Bucket=self.bucket, Key=k)
            self.assertEqual(code_of(cm.exception), ("KMS.DisabledException", 400))
        with self.assertRaises(ClientError) as cm:
            self.s3.put_object(Bucket=self.bucket, Key="new", Body=b"x", ServerSideEncryption="aws:kms",
                               SSEKMSKeyId=key["key_id"])
        self.assertEqual(code_of(cm.exception), ("KMS.DisabledException", 400))
        # The SSE-S3 key is the store's own: it cannot be disabled.
        self.s3.put_object(Bucket=self.bucket, Key="s3-key", Body=b"x", ServerSideEncryption="AES256")
        sse_s3 = [k for k in json.loads(self.kms("list").stdout)["keys"] if k["alias"] == "alias/strata/sse-s3"]
        self.assertEqual(self.kms("disable", sse_s3[0]["key_id"], check=False).returncode, 1)
        self.kms("enable", key["key_id"])
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="before")["Body"].read(), b"old material")

    def test_kms_errors(self):
        from botocore.exceptions import ClientError
        with self.assertRaises(ClientError) as cm:
            self.s3.put_object(Bucket=self.bucket, Key="k", Body=b"x", ServerSideEncryption="aws:kms",
                               SSEKMSKeyId="alias/does-not-exist")
        self.assertEqual(code_of(cm.exception), ("KMS.NotFoundException", 400))
        cases = [
            ({"x-amz-server-side-encryption": "AES128"}, "InvalidArgument"),
            ({"x-amz-server-side-encryption-aws-kms-key-id": "alias/x"}, "InvalidArgument"),
            ({"x-amz-server-side-encryption": "AES256",
              "x-amz-server-side-encryption-aws-kms-key-id": "alias/x"}, "InvalidArgument"),
            ({"x-amz-server-side-encryption": "aws:kms",
              "x-amz-server-side-encryption-context": "not base64 json"}, "InvalidArgument"),
            ({"x-amz-server-side-encryption": "aws:kms",
              "x-amz-server-side-encryption-context": base64.b64encode(b"[1,2]").decode()}, "InvalidArgument"),
            ({"x-amz-server-side-encryption": "AES256", **ssec_headers(self.key_c)}, "InvalidArgument"),
        ]
        for headers, code in cases:
            with self.subTest(headers=headers):
                r = self.raw("PUT", "bad-headers", headers, b"data")
                self.assertEqual((r.status, parse_error(r.body)["Code"]), (400, code), r.body)
        r = self.raw("HEAD", "bad-headers")
        self.assertEqual(r.status, 404)  # nothing was stored by any of them
        # SSE headers on GET and on operations that do not apply them: refused, not ignored.
        self.s3.put_object(Bucket=self.bucket, Key="plain", Body=b"p")
        r = self.raw("GET", "plain", {"x-amz-server-side-encryption": "AES256"})
        self.assertEqual(r.status, 400)
        r = self.raw("PUT", "plain", {"x-amz-server-side-encryption": "AES256"},
                     b"<Tagging><TagSet/></Tagging>", query="tagging")
        self.assertEqual((r.status, parse_error(r.body)["Code"]), (400, "InvalidArgument"))

    def test_bucket_default_encryption(self):
        from botocore.exceptions import ClientError
        bucket = unique_name("sse-default")
        self.s3.create_bucket(Bucket=bucket)
        with self.assertRaises(ClientError) as cm:
            self.s3.get_bucket_encryption(Bucket=bucket)
        self.assertEqual(code_of(cm.exception), ("ServerSideEncryptionConfigurationNotFoundError", 404))
        self.s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={
            "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
        rules = self.s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
        self.assertEqual(rules[0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"], "AES256")
        r = self.s3.put_object(Bucket=bucket, Key="by-default", Body=b"d")
        self.assertEqual(r["ServerSideEncryption"], "AES256")
        # Multipart under the default, and an aws:kms default with a key.
        key = self.create_key("alias/it-default")
        self.s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={
            "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms",
                                                              "KMSMasterKeyID": "alias/it-default"},
                       "BucketKeyEnabled": True}]})
        up = self.s3.create_multipart_upload(Bucket=bucket, Key="mp")
        self.assertEqual((up["ServerSideEncryption"], up["SSEKMSKeyId"]), ("aws:kms", key["arn"]))
        p1, p2 = marked(5 << 20), marked(1000)
        e1 = self.s3.upload_part(Bucket=bucket, Key="mp", UploadId=up["UploadId"], PartNumber=1, Body=p1)
        e2 = self.s3.upload_part(Bucket=bucket, Key="mp", UploadId=up["UploadId"], PartNumber=2, Body=p2)
        done = self.s3.complete_multipart_upload(
            Bucket=bucket, Key="mp", UploadId=up["UploadId"],
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1["ETag"]}, {"PartNumber": 2, "ETag": e2["ETag"]}]})
        self.assertEqual(done["ServerSideEncryption"], "aws:kms")
        self.assertEqual(self.s3.get_object(Bucket=bucket, Key="mp")["Body"].read(), p1 + p2)
        with self.assertRaises(ClientError) as cm:  # a key that does not exist is refused at once
            self.s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={
                "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms",
                                                                  "KMSMasterKeyID": "alias/nope"}}]})
        self.assertEqual(code_of(cm.exception)[0], "KMS.NotFoundException")
        self.s3.delete_bucket_encryption(Bucket=bucket)
        self.assertNotIn("ServerSideEncryption", self.s3.put_object(Bucket=bucket, Key="plain", Body=b"p"))


class SseCTest(EncryptionCase):
    def test_round_trip_ranges_and_the_key_errors(self):
        from botocore.exceptions import ClientError
        body = marked(3 * CHUNK + 17)
        r = self.s3.put_object(Bucket=self.bucket, Key="c", Body=body, **ssec(self.key_c))
        self.assertEqual(r["SSECustomerAlgorithm"], "AES256")
        self.assertEqual(r["SSECustomerKeyMD5"], ssec(self.key_c)["SSECustomerKeyMD5"])
        self.assertNotEqual(r["ETag"], '"%s"' % hashlib.md5(body).hexdigest())
        got = self.s3.get_object(Bucket=self.bucket, Key="c", **ssec(self.key_c))
        self.assertEqual(got["Body"].read(), body)
        part = self.s3.get_object(Bucket=self.bucket, Key="c", Range=f"bytes={CHUNK - 5}-{2 * CHUNK + 5}",
                                  **ssec(self.key_c))
        self.assertEqual(part["Body"].read(), body[CHUNK - 5:2 * CHUNK + 6])
        self.assertEqual(self.s3.head_object(Bucket=self.bucket, Key="c", **ssec(self.key_c))["ContentLength"],
                         len(body))
        with self.assertRaises(ClientError) as cm:
            self.s3.get_object(Bucket=self.bucket, Key="c")
        self.assertEqual(code_of(cm.exception), ("InvalidRequest", 400))
        with self.assertRaises(ClientError) as cm:
            self.s3.get_object(Bucket=self.bucket, Key="c", **ssec(os.urandom(32)))
        self.assertEqual(code_of(cm.exception), ("AccessDenied", 403))
        with self.assertRaises(ClientError) as cm:
            self.s3.head_object(Bucket=self.bucket, Key="c", **ssec(os.urandom(32)))
        self.assertEqual(code_of(cm.exception)[1], 403)
        # GET takes the key without its MD5 (as AWS); a 10-byte key is not the key (403).
        r = self.raw("GET", "c", ssec_headers(self.key_c, md5=False))
        self.assertEqual((r.status, r.body), (200, body))
        r = self.raw("GET", "c", ssec_headers(b"0123456789"))
        self.assertEqual(r.status, 403)
        # SSE-C headers on an object that is not SSE-C.
        self.s3.put_object(Bucket=self.bucket, Key="not-c", Body=b"x")
        r = self.raw("GET", "not-c", ssec_headers(self.key_c))
        self.assertEqual((r.status, parse_error(r.body)["Code"]), (400, "InvalidRequest"))

    def test_header_combinations_on_put(self):
        key = self.key_c
        full = ssec_headers(key)
        p = "x-amz-server-side-encryption-customer-"
        cases = {
            "only algorithm": ({p + "algorithm": "AES256"}, "InvalidArgument"),
            "only key": ({p + "key": full[p + "key"]}, "InvalidArgument"),
            "only md5": ({p + "key-MD5": full[p + "key-MD5"]}, "InvalidArgument"),
            "missing md5": (ssec_headers(key, md5=False), "InvalidArgument"),
            "bad algorithm": ({**full, p + "algorithm": "AES128"}, "InvalidEncryptionAlgorithmError"),
            "md5 mismatch": ({**full, p + "key-MD5": base64.b64encode(hashlib.md5(b"x").digest()).decode()},
                             "InvalidArgument"),
            "short key": (ssec_headers(b"0123456789"), "InvalidArgument"),
            "key not base64": ({**full, p + "key": "not base64!!"}, "InvalidArgument"),
        }
        for name, (headers, code) in cases.items():
            with self.subTest(name):
                r = self.raw("PUT", "combo", headers, b"data")
                self.assertEqual((r.status, parse_error(r.body)["Code"]), (400, code), r.body)
        self.assertEqual(self.raw("HEAD", "combo").status, 404)

    def test_multipart_with_sse_c_and_part_copy(self):
        from botocore.exceptions import ClientError
        up = self.s3.create_multipart_upload(Bucket=self.bucket, Key="mpc", **ssec(self.key_c))
        uid = up["UploadId"]
        p1, p2 = marked(5 << 20), marked(CHUNK + 9)
        with self.assertRaises(ClientError) as cm:  # parts need the upload's key
            self.s3.upload_part(Bucket=self.bucket, Key="mpc", UploadId=uid, PartNumber=1, Body=p1)
        self.assertEqual(code_of(cm.exception)[1], 400)
        with self.assertRaises(ClientError) as cm:
            self.s3.upload_part(Bucket=self.bucket, Key="mpc", UploadId=uid, PartNumber=1, Body=p1,
                                **ssec(os.urandom(32)))
        self.assertEqual(code_of(cm.exception), ("AccessDenied", 403))
        e1 = self.s3.upload_part(Bucket=self.bucket, Key="mpc", UploadId=uid, PartNumber=1, Body=p1,
                                 **ssec(self.key_c))
        # Part 2 copied from an SSE-KMS source.
        self.s3.put_object(Bucket=self.bucket, Key="src-kms", Body=p2, ServerSideEncryption="aws:kms")
        e2 = self.s3.upload_part_copy(Bucket=self.bucket, Key="mpc", UploadId=uid, PartNumber=2,
                                      CopySource={"Bucket": self.bucket, "Key": "src-kms"}, **ssec(self.key_c))
        self.s3.complete_multipart_upload(
            Bucket=self.bucket, Key="mpc", UploadId=uid,
            MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1["ETag"]},
                                       {"PartNumber": 2, "ETag": e2["CopyPartResult"]["ETag"]}]})
        got = self.s3.get_object(Bucket=self.bucket, Key="mpc", **ssec(self.key_c))["Body"].read()
        self.assertTrue(got == p1 + p2)
        part2 = self.s3.get_object(Bucket=self.bucket, Key="mpc", PartNumber=2, **ssec(self.key_c))
        self.assertEqual(part2["Body"].read(), p2)

    def test_copy_between_every_pair_of_modes(self):
        modes = {
            "none": {},
            "s3": {"ServerSideEncryption": "AES256"},
            "kms": {"ServerSideEncryption": "aws:kms"},
            "c": ssec(self.key_c),
        }
        other = os.urandom(32)
        body = marked(CHUNK * 2 + 3)
        for src_mode, src_args in modes.items():
            src = f"copy-src-{src_mode}"
            self.s3.put_object(Bucket=self.bucket, Key=src, Body=body, **src_args)
            for dst_mode, dst_args in modes.items():
                with self.subTest(src=src_mode, dst=dst_mode):
                    dst = f"copy-{src_mode}-to-{dst_mode}"
                    args = dict(dst_args)
                    if dst_mode == "c":
                        args = ssec(other)
                    if src_mode == "c":
                        args.update({"CopySourceSSECustomerAlgorithm": "AES256",
                                     "CopySourceSSECustomerKey": base64.b64encode(self.key_c).decode(),
                                     "CopySourceSSECustomerKeyMD5": ssec(self.key_c)["SSECustomerKeyMD5"]})
                    self.s3.copy_object(Bucket=self.bucket, Key=dst, CopySource={"Bucket": self.bucket, "Key": src},
                                        **args)
                    read_args = ssec(other) if dst_mode == "c" else {}
                    got = self.s3.get_object(Bucket=self.bucket, Key=dst, **read_args)
                    self.assertEqual(got["Body"].read(), body)
                    want = {"none": None, "s3": "AES256", "kms": "aws:kms", "c": None}[dst_mode]
                    if dst_mode == "none" and src_mode != "none":
                        want = "AES256"  # an encrypted source is never copied into plaintext
                    self.assertEqual(got.get("ServerSideEncryption"), want)
        # A copy of an SSE-C source without its key is refused.
        from botocore.exceptions import ClientError
        with self.assertRaises(ClientError) as cm:
            self.s3.copy_object(Bucket=self.bucket, Key="x", CopySource={"Bucket": self.bucket, "Key": "copy-src-c"})
        self.assertEqual(code_of(cm.exception)[1], 400)

    def test_aws_cli_sse_flags(self):
        src = os.path.join(self.home, "f")
        with open(src, "wb") as f:
            f.write(marked(9 << 20))  # multipart in aws cli
        keyfile = os.path.join(self.home, "ckey")
        with open(keyfile, "wb") as f:
            f.write(self.key_c)
        b = f"s3://{self.bucket}"
        self.server.aws(self.home, "s3", "cp", src, f"{b}/cli-s3", "--sse", "AES256")
        self.create_key("alias/it-cli")
        self.server.aws(self.home, "s3", "cp", src, f"{b}/cli-kms", "--sse", "aws:kms",
                        "--sse-kms-key-id", "alias/it-cli")
        self.server.aws(self.home, "s3", "cp", src, f"{b}/cli-c", "--sse-c", "AES256",
                        "--sse-c-key", f"fileb://{keyfile}")
        head = json.loads(self.server.aws(self.home, "s3api", "head-object", "--bucket", self.bucket,
                                          "--key", "cli-kms").stdout)
        self.assertEqual(head["ServerSideEncryption"], "aws:kms")
        self.assertIn("alias", json.loads(self.kms("show", head["SSEKMSKeyId"]).stdout))
        with open(src, "rb") as f:
            want = f.read()
        for key, extra in (("cli-s3", []), ("cli-kms", []),
                           ("cli-c", ["--sse-c", "AES256", "--sse-c-key", f"fileb://{keyfile}"])):
            out = os.path.join(self.home, key)
            self.server.aws(self.home, "s3", "cp", f"{b}/{key}", out, *extra)
            with open(out, "rb") as f:
                self.assertTrue(f.read() == want, key)
        r = self.server.aws(self.home, "s3", "cp", f"{b}/cli-c", os.path.join(self.home, "nokey"), check=False)
        self.assertNotEqual(r.returncode, 0)


class PostAndPolicyTest(EncryptionCase):
    def test_post_object_with_sse_and_sse_c_fields(self):
        from test_post_object import multipart
        import http.client
        from urllib.parse import urlsplit
        signer = self.server.boto3_client(signature_version="s3v4")

        def post(key, fields):
            presigned = signer.generate_presigned_post(
                Bucket=self.bucket, Key=key, Fields=fields,
                Conditions=[{k: v} for k, v in fields.items()], ExpiresIn=600)
            ct, body = multipart(list(presigned["fields"].items()), marked(3 * CHUNK))
            conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=60)
            try:
                conn.request("POST", urlsplit(presigned["url"]).path, body=body,
                             headers={"Content-Type": ct})
                r = conn.getresponse()
                return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
            finally:
                conn.close()
        st, headers, body = post("post-s3", {"x-amz-server-side-encryption": "AES256"})
        self.assertEqual(st, 204, body)
        self.assertEqual(headers.get("x-amz-server-side-encryption"), "AES256")
        self.assertEqual(self.s3.head_object(Bucket=self.bucket, Key="post-s3")["ServerSideEncryption"], "AES256")
        fields = {"x-amz-server-side-encryption-customer-algorithm": "AES256",
                  "x-amz-server-side-encryption-customer-key": base64.b64encode(self.key_c).decode(),
                  "x-amz-server-side-encryption-customer-key-MD5": ssec(self.key_c)["SSECustomerKeyMD5"]}
        st, headers, body = post("post-c", fields)
        self.assertEqual(st, 204, body)
        got = self.s3.get_object(Bucket=self.bucket, Key="post-c", **ssec(self.key_c))["Body"].read()
        self.assertEqual(got, marked(3 * CHUNK))
        st, _, body = post("post-bad", {"x-amz-server-side-encryption": "AES512"})
        self.assertEqual(st, 400, body)
        signer.close()

    def test_bucket_policy_requiring_encryption(self):
        from harness import make_user
        bucket = unique_name("sse-policy")
        self.s3.create_bucket(Bucket=bucket)
        user = make_user(self.server, unique_name("writer"), policy=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        self.s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Sid": "RequireSse", "Effect": "Deny", "Principal": "*", "Action": "s3:PutObject",
                           "Resource": f"arn:aws:s3:::{bucket}/*",
                           "Condition": {"StringNotEquals": {"s3:x-amz-server-side-encryption": "AES256"}}}]}))
        writer = self.server.boto3_client(access_key=user["ak"], secret_key=user["sk"])
        from botocore.exceptions import ClientError
        with self.assertRaises(ClientError) as cm:
            writer.put_object(Bucket=bucket, Key="plain", Body=b"x")
        self.assertEqual(code_of(cm.exception), ("AccessDenied", 403))
        with self.assertRaises(ClientError) as cm:
            writer.put_object(Bucket=bucket, Key="kms", Body=b"x", ServerSideEncryption="aws:kms")
        self.assertEqual(code_of(cm.exception), ("AccessDenied", 403))
        r = writer.put_object(Bucket=bucket, Key="s3", Body=b"x", ServerSideEncryption="AES256")
        self.assertEqual(r["ServerSideEncryption"], "AES256")
        writer.close()


class AtRestTest(unittest.TestCase):
    def test_no_plaintext_under_the_data_dir_and_tampering_fails(self):
        server = Server(extra_args=["--sse-c-over-http"]).start()
        try:
            s3 = server.boto3_client()
            bucket = unique_name("sse-rest")
            s3.create_bucket(Bucket=bucket)
            key_c = os.urandom(32)
            modes = {"s3": {"ServerSideEncryption": "AES256"}, "kms": {"ServerSideEncryption": "aws:kms"},
                     "c": ssec(key_c)}
            for name, args in modes.items():
                for size in (100, 3 * CHUNK + 1, 2 << 20):
                    s3.put_object(Bucket=bucket, Key=f"{name}-{size}", Body=marked(size), **args)
                up = s3.create_multipart_upload(Bucket=bucket, Key=f"{name}-mp", **args)
                part_args = ssec(key_c) if name == "c" else {}
                e = s3.upload_part(Bucket=bucket, Key=f"{name}-mp", UploadId=up["UploadId"], PartNumber=1,
                                   Body=marked(6 << 20), **part_args)
                s3.complete_multipart_upload(Bucket=bucket, Key=f"{name}-mp", UploadId=up["UploadId"],
                                             MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e["ETag"]}]})
            s3.close()
            server.stop()  # RocksDB flushed: every file as at rest

            def files_with(needle):
                hits = []
                for root, _, names in os.walk(server.data_dir):
                    for n in names:
                        with open(os.path.join(root, n), "rb") as f:
                            if needle in f.read():
                                hits.append(os.path.join(root, n))
                return hits
            self.assertEqual(files_with(MARKER), [])
            self.assertEqual(files_with(key_c), [])  # the SSE-C key is never stored

            # The control: the same text written unencrypted is found by the same scan.
            server.start()
            s3 = server.boto3_client()
            s3.put_object(Bucket=bucket, Key="clear", Body=marked(3 * CHUNK))
            s3.close()
            server.stop()
            clear_files = files_with(MARKER)
            self.assertEqual(len(clear_files), 1, clear_files)

            # Flip one ciphertext byte in the data file of an encrypted object: the read fails.
            objects = os.path.join(server.data_dir, "objects")
            candidates = []
            for root, _, names in os.walk(objects):
                for n in names:
                    p = os.path.join(root, n)
                    if p not in clear_files and os.path.getsize(p) > (2 << 20):
                        candidates.append(p)
            self.assertTrue(candidates)
            for p in candidates:
                with open(p, "r+b") as f:
                    f.seek(CHUNK + 100)
                    b = f.read(1)
                    f.seek(CHUNK + 100)
                    f.write(bytes([b[0] ^ 0x01]))
            server.start()  # also: every object of every mode readable after a restart
            s3 = server.boto3_client()
            from botocore.exceptions import ClientError
            for name, args in modes.items():
                read_args = ssec(key_c) if name == "c" else {}
                self.assertEqual(s3.get_object(Bucket=bucket, Key=f"{name}-100", **read_args)["Body"].read(),
                                 marked(100))
                self.assertEqual(s3.get_object(Bucket=bucket, Key=f"{name}-{3 * CHUNK + 1}",
                                               **read_args)["Body"].read(), marked(3 * CHUNK + 1))
                for key in (f"{name}-{2 << 20}", f"{name}-mp"):
                    with self.subTest(key=key):
                        # The damaged chunk is in the first piece read: an error, never data.
                        with self.assertRaises(ClientError) as cm:
                            s3.get_object(Bucket=bucket, Key=key, **read_args)["Body"].read()
                        self.assertEqual(code_of(cm.exception)[1], 500)
            s3.close()
        finally:
            server.cleanup()

    def test_sse_c_needs_tls_unless_allowed(self):
        server = Server().start()
        try:
            s3 = server.boto3_client()
            bucket = unique_name("sse-tls")
            s3.create_bucket(Bucket=bucket)
            r = signed_request(server, "PUT", f"/{bucket}/k", headers=ssec_headers(os.urandom(32)), body=b"x")
            self.assertEqual((r.status, parse_error(r.body)["Code"]), (400, "InvalidRequest"))
            self.assertIn(b"secure connection", r.body)
            s3.close()
        finally:
            server.cleanup()


if __name__ == "__main__":
    unittest.main()

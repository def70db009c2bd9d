"""Places where strata used to differ from AWS S3 when driven with SDK flows
(issue 9), each checked against a real server: a retried
CompleteMultipartUpload, non-ASCII user metadata (RFC 2047), ListObjects
encoding-type=url element by element, an empty continuation-token, and a PUT
without body framing.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_aws_compat.py -v
"""
import base64
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rawhttp  # noqa: E402
from harness import ServerTestCase  # noqa: E402


class AwsCompatTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bucket = "aws-compat"
        cls.s3.create_bucket(Bucket=cls.bucket)

    def tearDown(self):
        self.assertServerHealthy()

    def test_retried_complete_multipart_upload_succeeds(self):
        key = "ckpt/step-100"
        up = self.s3.create_multipart_upload(Bucket=self.bucket, Key=key)["UploadId"]
        parts = []
        for n, data in ((1, b"a" * (5 << 20)), (2, b"tail")):
            r = self.s3.upload_part(Bucket=self.bucket, Key=key, UploadId=up, PartNumber=n, Body=data)
            parts.append({"PartNumber": n, "ETag": r["ETag"]})
        first = self.s3.complete_multipart_upload(Bucket=self.bucket, Key=key, UploadId=up,
                                                  MultipartUpload={"Parts": parts})
        # The SDK retries after a lost response: the same object comes back.
        again = self.s3.complete_multipart_upload(Bucket=self.bucket, Key=key, UploadId=up,
                                                  MultipartUpload={"Parts": parts})
        self.assertEqual(again["ETag"], first["ETag"])
        # A different part list for the finished upload is still NoSuchUpload.
        self.assertS3Error(self.s3.complete_multipart_upload, "NoSuchUpload", 404,
                           Bucket=self.bucket, Key=key, UploadId=up,
                           MultipartUpload={"Parts": parts[:1]})
        # An upload id that never existed is NoSuchUpload.
        self.assertS3Error(self.s3.complete_multipart_upload, "NoSuchUpload", 404,
                           Bucket=self.bucket, Key=key, UploadId="0" * 32,
                           MultipartUpload={"Parts": parts})

    def test_non_ascii_metadata_round_trips_rfc2047(self):
        value = "café 東京"
        encoded = "=?UTF-8?B?" + base64.b64encode(value.encode()).decode() + "?="
        # boto3 refuses non-ASCII metadata, so clients send it RFC 2047-encoded...
        self.s3.put_object(Bucket=self.bucket, Key="m1", Body=b"x", Metadata={"name": encoded})
        head = self.s3.head_object(Bucket=self.bucket, Key="m1")
        self.assertEqual(head["Metadata"]["name"], encoded)
        # ... or raw UTF-8 (Go and curl clients): stored decoded, returned encoded.
        req = rawhttp.sign(self.server.port, "PUT", f"/{self.bucket}/m2", body=b"y",
                           headers={"x-amz-meta-name": value})  # signed over the UTF-8 bytes
        req.headers = [(n, v.encode().decode("latin-1") if n.lower() == "x-amz-meta-name" else v)
                       for n, v in req.headers]  # ... which go on the wire as they are
        r = rawhttp.send_request(self.server.port, req)
        self.assertEqual(r.status, 200, r)
        head = self.s3.head_object(Bucket=self.bucket, Key="m2")
        self.assertEqual(head["Metadata"]["name"], encoded)
        got = self.s3.get_object(Bucket=self.bucket, Key="m2")
        self.assertEqual(got["Metadata"]["name"], encoded)
        # Plain ASCII is returned as sent.
        self.s3.put_object(Bucket=self.bucket, Key="m3", Body=b"z", Metadata={"a": "b c=d"})
        self.assertEqual(self.s3.head_object(Bucket=self.bucket, Key="m3")["Metadata"], {"a": "b c=d"})

    def test_list_encoding_every_element_decodes_in_the_sdk(self):
        for k in ("nl\nb/c", "nl\nx", "nl\nb/d"):
            self.s3.put_object(Bucket=self.bucket, Key=k, Body=b".")
        # boto3 adds encoding-type=url itself and decodes what AWS encodes.
        v2 = self.s3.list_objects_v2(Bucket=self.bucket, Prefix="nl\n", Delimiter="/",
                                     StartAfter="nl\n")
        self.assertEqual(v2["Prefix"], "nl\n")
        self.assertEqual(v2["StartAfter"], "nl\n")
        self.assertEqual([c["Key"] for c in v2["Contents"]], ["nl\nx"])
        self.assertEqual([p["Prefix"] for p in v2["CommonPrefixes"]], ["nl\nb/"])
        v1 = self.s3.list_objects(Bucket=self.bucket, Prefix="nl\n", Delimiter="/", Marker="nl\n",
                                  MaxKeys=1)
        self.assertEqual(v1["Prefix"], "nl\n")
        self.assertEqual(v1["Marker"], "nl\n")
        self.assertEqual(v1["NextMarker"], "nl\nb/")
        self.assertEqual([p["Prefix"] for p in v1["CommonPrefixes"]], ["nl\nb/"])

    def test_empty_continuation_token_lists_from_the_start(self):
        self.s3.put_object(Bucket=self.bucket, Key="tok", Body=b".")
        r = self.s3.list_objects_v2(Bucket=self.bucket, ContinuationToken="", Prefix="tok")
        self.assertEqual(r["ContinuationToken"], "")
        self.assertEqual([c["Key"] for c in r["Contents"]], ["tok"])

    def test_put_without_length_or_chunked_framing_is_411(self):
        r = rawhttp.request(self.server.port, "PUT", f"/{self.bucket}/nolen", content_length=False,
                            headers={"x-amz-decoded-content-length": "0"})
        self.assertEqual(r.status, 411, r)
        self.assertEqual(r.error_code, "MissingContentLength")
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=self.bucket, Key="nolen")


class BucketTaggingTest(ServerTestCase):
    def test_put_get_delete_bucket_tagging(self):
        b = self.bucket_name("btag")
        self.s3.create_bucket(Bucket=b)
        self.assertS3Error(self.s3.get_bucket_tagging, "NoSuchTagSet", 404, Bucket=b)
        tags = [{"Key": "team", "Value": "rag"}, {"Key": "cost-centre", "Value": "42"},
                {"Key": "empty", "Value": ""}]
        self.s3.put_bucket_tagging(Bucket=b, Tagging={"TagSet": tags})
        got = self.s3.get_bucket_tagging(Bucket=b)["TagSet"]
        self.assertEqual(sorted((t["Key"], t["Value"]) for t in got),
                         sorted((t["Key"], t["Value"]) for t in tags))
        # Replacing, not merging.
        self.s3.put_bucket_tagging(Bucket=b, Tagging={"TagSet": [{"Key": "only", "Value": "1"}]})
        self.assertEqual(self.s3.get_bucket_tagging(Bucket=b)["TagSet"], [{"Key": "only", "Value": "1"}])
        # 50 is the limit on buckets (10 on objects); duplicates and long keys are InvalidTag.
        fifty = [{"Key": f"k{i}", "Value": "v"} for i in range(50)]
        self.s3.put_bucket_tagging(Bucket=b, Tagging={"TagSet": fifty})
        self.assertEqual(len(self.s3.get_bucket_tagging(Bucket=b)["TagSet"]), 50)
        self.assertS3Error(self.s3.put_bucket_tagging, "BadRequest", 400, Bucket=b,
                           Tagging={"TagSet": fifty + [{"Key": "k50", "Value": "v"}]})
        self.assertS3Error(self.s3.put_bucket_tagging, "InvalidTag", 400, Bucket=b,
                           Tagging={"TagSet": [{"Key": "a", "Value": "1"}, {"Key": "a", "Value": "2"}]})
        self.assertS3Error(self.s3.put_bucket_tagging, "InvalidTag", 400, Bucket=b,
                           Tagging={"TagSet": [{"Key": "x" * 129, "Value": "1"}]})
        self.s3.delete_bucket_tagging(Bucket=b)
        self.assertS3Error(self.s3.get_bucket_tagging, "NoSuchTagSet", 404, Bucket=b)
        self.assertS3Error(self.s3.get_bucket_tagging, "NoSuchBucket", 404, Bucket="no-such-bucket-x")
        # Tags survive a restart.
        self.s3.put_bucket_tagging(Bucket=b, Tagging={"TagSet": [{"Key": "keep", "Value": "me"}]})
        self.server.stop()
        self.server.start()
        s3 = self.server.boto3_client()
        self.assertEqual(s3.get_bucket_tagging(Bucket=b)["TagSet"], [{"Key": "keep", "Value": "me"}])
        s3.close()
        self.s3 = self.server.boto3_client()


if __name__ == "__main__":
    unittest.main()

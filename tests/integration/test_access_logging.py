"""AWS server access logging (issue 15, docs/access-logging.md): PutBucketLogging names a
target bucket and prefix; the requests to the logged bucket come back as log objects in the
target, one line per request in AWS's log record format (the request id the client saw,
the operation, the key, the status, the S3 error code, the bytes); Get/PutBucketLogging
answer and refuse as AWS does."""
import json
import re
import time
import unittest

import botocore.exceptions

import harness
from harness import Server, unique_name

# AWS's format: the fields this test reads, then the rest of the line.
RECORD = re.compile(
    r'^(?P<owner>\S+) (?P<bucket>\S+) \[(?P<time>[^\]]+)\] (?P<ip>\S+) (?P<requester>\S+) '
    r'(?P<request_id>\S+) (?P<operation>\S+) (?P<key>\S+) "(?P<uri>[^"]*)" (?P<status>\S+) '
    r'(?P<error>\S+) (?P<sent>\S+) (?P<size>\S+) (?P<total>\S+) (?P<turnaround>\S+) '
    r'"(?P<referer>[^"]*)" "(?P<agent>[^"]*)" (?P<version>\S+) (?P<host_id>\S+) (?P<sig>\S+) '
    r'(?P<cipher>\S+) (?P<auth>\S+) (?P<host>\S+) (?P<tls>\S+) (?P<ap>\S+) (?P<acl>\S+)$')


class AccessLoggingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(extra_args=["--access-log-delivery-seconds", "1",
                                        "--kv-listen", "off"]).start()
        cls.s3 = cls.server.boto3_client()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def error_code(self, fn, **kw):
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            fn(**kw)
        return cm.exception.response["Error"]["Code"]

    def log_lines(self, target, prefix):
        lines = []
        for o in self.s3.list_objects_v2(Bucket=target, Prefix=prefix).get("Contents", []):
            body = self.s3.get_object(Bucket=target, Key=o["Key"])["Body"].read().decode()
            lines += [line for line in body.split("\n") if line]
        return lines

    def test_requests_are_delivered_as_aws_records(self):
        source, target = unique_name("src"), unique_name("logs")
        self.s3.create_bucket(Bucket=source)
        self.s3.create_bucket(Bucket=target)
        self.assertNotIn("LoggingEnabled", self.s3.get_bucket_logging(Bucket=source))
        self.s3.put_bucket_logging(Bucket=source, BucketLoggingStatus={"LoggingEnabled": {
            "TargetBucket": target, "TargetPrefix": "web/"}})
        got = self.s3.get_bucket_logging(Bucket=source)["LoggingEnabled"]
        self.assertEqual((got["TargetBucket"], got["TargetPrefix"]), (target, "web/"))

        put = self.s3.put_object(Bucket=source, Key="a b.txt", Body=b"x" * 1234)
        get = self.s3.get_object(Bucket=source, Key="a b.txt")
        self.assertEqual(len(get["Body"].read()), 1234)
        with self.assertRaises(botocore.exceptions.ClientError):
            self.s3.get_object(Bucket=source, Key="absent")
        self.s3.list_objects_v2(Bucket=source)
        ids = {"put": put["ResponseMetadata"]["RequestId"],
               "get": get["ResponseMetadata"]["RequestId"]}
        harness.wait_for(self, self.server, "the log object", lambda: len(
            self.log_lines(target, "web/")) >= 4, 20)
        keys = [o["Key"] for o in self.s3.list_objects_v2(Bucket=target)["Contents"]]
        self.assertTrue(all(re.match(r"^web/\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d-[0-9A-F]{16}$", k)
                            for k in keys), keys)
        records = [RECORD.match(line) for line in self.log_lines(target, "web/")]
        self.assertTrue(all(records), self.log_lines(target, "web/"))
        by_id = {r["request_id"]: r for r in records}
        p = by_id[ids["put"]]
        self.assertEqual(p["bucket"], source)
        self.assertEqual(p["operation"], "REST.PUT.OBJECT")
        self.assertEqual(p["key"], "a%20b.txt")
        self.assertEqual(p["status"], "200")
        self.assertEqual(p["error"], "-")
        self.assertEqual(p["size"], "1234")
        self.assertEqual(p["ip"], "127.0.0.1")
        self.assertEqual(p["sig"], "SigV4")
        self.assertEqual(p["auth"], "AuthHeader")
        self.assertTrue(p["uri"].startswith("PUT /" + source + "/a%20b.txt"), p["uri"])
        self.assertIn("Botocore", p["agent"])
        self.assertRegex(p["time"], r"^\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d \+0000$")
        g = by_id[ids["get"]]
        self.assertEqual(g["operation"], "REST.GET.OBJECT")
        self.assertEqual(g["sent"], "1234")
        missing = [r for r in records if r["key"] == "absent"]
        self.assertEqual(len(missing), 1)
        self.assertEqual((missing[0]["status"], missing[0]["error"]), ("404", "NoSuchKey"))
        self.assertIn("REST.GET.BUCKET", [r["operation"] for r in records])
        # The target's own traffic (the reads above) is not logged there: it has no logging.
        self.assertTrue(all(r["bucket"] == source for r in records))

        # Off again: nothing more is delivered.
        self.s3.put_bucket_logging(Bucket=source, BucketLoggingStatus={})
        self.assertNotIn("LoggingEnabled", self.s3.get_bucket_logging(Bucket=source))
        before = len(self.log_lines(target, "web/"))
        self.s3.put_object(Bucket=source, Key="after", Body=b"y")
        time.sleep(2.5)
        self.assertEqual(len(self.log_lines(target, "web/")), before)

    def test_partitioned_prefix(self):
        source, target = unique_name("psrc"), unique_name("plogs")
        self.s3.create_bucket(Bucket=source)
        self.s3.create_bucket(Bucket=target)
        # Debian's botocore predates TargetObjectKeyFormat: the document as newer SDKs send it.
        doc = (f'<BucketLoggingStatus xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
               f'<LoggingEnabled><TargetBucket>{target}</TargetBucket><TargetPrefix>p/'
               f'</TargetPrefix><TargetObjectKeyFormat><PartitionedPrefix><PartitionDateSource>'
               f'EventTime</PartitionDateSource></PartitionedPrefix></TargetObjectKeyFormat>'
               f'</LoggingEnabled></BucketLoggingStatus>').encode()
        r = harness.signed_request(self.server, "PUT", "/" + source, query="logging=", body=doc)
        self.assertEqual(r.status, 200, r.body)
        r = harness.signed_request(self.server, "GET", "/" + source, query="logging=")
        self.assertEqual(r.status, 200, r.body)
        self.assertIn(b"<PartitionDateSource>EventTime</PartitionDateSource>", r.body)
        self.s3.put_object(Bucket=source, Key="k", Body=b"1")
        harness.wait_for(self, self.server, "the log object",
                         lambda: self.log_lines(target, "p/"), 20)
        key = self.s3.list_objects_v2(Bucket=target, Prefix="p/")["Contents"][0]["Key"]
        self.assertRegex(key, r"^p/[0-9a-f]+/us-east-1/" + re.escape(source) +
                         r"/\d{4}/\d\d/\d\d/\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d-[0-9A-F]{16}$")

    def test_refusals(self):
        source = unique_name("rsrc")
        self.s3.create_bucket(Bucket=source)
        self.assertEqual(self.error_code(
            self.s3.put_bucket_logging, Bucket=source, BucketLoggingStatus={"LoggingEnabled": {
                "TargetBucket": unique_name("absent"), "TargetPrefix": "x/"}}),
            "InvalidTargetBucketForLogging")
        enc = unique_name("enc")
        self.s3.create_bucket(Bucket=enc)
        self.s3.put_bucket_encryption(Bucket=enc, ServerSideEncryptionConfiguration={"Rules": [
            {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]})
        self.assertEqual(self.error_code(
            self.s3.put_bucket_logging, Bucket=source, BucketLoggingStatus={"LoggingEnabled": {
                "TargetBucket": enc, "TargetPrefix": "x/"}}),
            "InvalidTargetBucketForLogging")
        self.assertEqual(self.error_code(
            self.s3.put_bucket_logging, Bucket=unique_name("absent"),
            BucketLoggingStatus={}), "NoSuchBucket")
        self.assertEqual(self.error_code(
            self.s3.get_bucket_logging, Bucket=unique_name("absent")), "NoSuchBucket")
        # Another owner's bucket is no target.
        user = harness.make_user(self.server, unique_name("u"), policy=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*",
                                                   "Resource": "*"}]}))
        other = self.server.boto3_client(access_key=user["ak"], secret_key=user["sk"])
        theirs = unique_name("theirs")
        other.create_bucket(Bucket=theirs)
        self.assertEqual(self.error_code(
            self.s3.put_bucket_logging, Bucket=source, BucketLoggingStatus={"LoggingEnabled": {
                "TargetBucket": theirs, "TargetPrefix": "x/"}}),
            "InvalidTargetBucketForLogging")


if __name__ == "__main__":
    unittest.main()

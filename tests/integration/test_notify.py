"""Event notifications (issue 15, docs/notifications.md): a bucket's
NotificationConfiguration names webhook targets declared in the server's config file;
a receiver in the test gets exactly the expected AWS event documents for a scripted
workload driven by boto3, including across server restarts (SIGTERM and SIGKILL) while
the receiver is down; a full queue drops events, counts them in the metrics and writes an
audit record; the configuration calls answer as AWS does."""
import http.server
import json
import os
import shutil
import tempfile
import threading
import time
import unittest
import urllib.parse

import botocore.exceptions

import harness
from harness import Server, free_port, unique_name
from test_archive_tier import CONFIG as TIERS
from test_metrics import sample, scrape

TOKEN = "hook-token-0123"


class Receiver:
    """A webhook receiver on a fixed loopback port; can be stopped and started again."""

    def __init__(self, port=None, token=TOKEN):
        self.port = port or free_port()
        self.token = token
        self.events = []  # the Records[0] of every accepted POST, in arrival order
        self.tests = []   # s3:TestEvent messages
        self.bad_auth = 0
        self.lock = threading.Lock()
        self.httpd = None

    def start(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Authorization") != "Bearer " + receiver.token:
                    with receiver.lock:
                        receiver.bad_auth += 1
                    self.send_response(401)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                doc = json.loads(body)
                with receiver.lock:
                    if "Records" in doc:
                        receiver.events += doc["Records"]
                    else:
                        receiver.tests.append(doc)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/events"

    def snapshot(self):
        with self.lock:
            return list(self.events)

    def clear(self):
        with self.lock:
            self.events.clear()
            self.tests.clear()


def names(events):
    return [(e["eventName"], urllib.parse.unquote_plus(e["s3"]["object"]["key"])) for e in events]


def config_text(receiver, limit=None):
    text = (f'[notify.webhook.hook]\nendpoint = "{receiver.url}"\nauth_token = "{TOKEN}"\n')
    if limit:
        text += f"queue_limit = {limit}\n"
    return text


def queue_config(events, prefix=None, suffix=None, target="hook", id_=None):
    c = {"QueueArn": f"arn:strata:sqs::{target}:webhook", "Events": events}
    if id_:
        c["Id"] = id_
    rules = []
    if prefix is not None:
        rules.append({"Name": "prefix", "Value": prefix})
    if suffix is not None:
        rules.append({"Name": "suffix", "Value": suffix})
    if rules:
        c["Filter"] = {"Key": {"FilterRules": rules}}
    return c


class NotificationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.receiver = Receiver().start()
        cls.config = harness.write_config(config_text(cls.receiver), prefix="strata-notify-")
        cls.server = Server(extra_args=["--config", cls.config, "--kv-listen", "off"]).start()
        cls.s3 = cls.server.boto3_client()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.server.cleanup()
        cls.receiver.stop()
        os.unlink(cls.config)

    def setUp(self):
        self.receiver.clear()

    def wait_events(self, n, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            got = self.receiver.snapshot()
            if len(got) >= n:
                time.sleep(0.3)  # and no more than n
                return self.receiver.snapshot()
            time.sleep(0.05)
        self.fail(f"{n} events expected, got {names(self.receiver.snapshot())}; "
                  f"log: {self.server.read_log()}")

    def assertS3Error(self, fn, code, **kwargs):
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            fn(**kwargs)
        self.assertEqual(cm.exception.response["Error"]["Code"], code,
                         cm.exception.response["Error"])
        return cm.exception.response["Error"]

    def test_configuration_calls(self):
        b = unique_name("cfg")
        self.s3.create_bucket(Bucket=b)
        got = self.s3.get_bucket_notification_configuration(Bucket=b)
        self.assertNotIn("QueueConfigurations", got)  # none: an empty document, not an error
        # Unknown targets, unknown events, overlaps and other destinations are refused.
        bad = self.assertS3Error(
            self.s3.put_bucket_notification_configuration, "InvalidArgument", Bucket=b,
            NotificationConfiguration={"QueueConfigurations": [
                queue_config(["s3:ObjectCreated:*"], target="nobody")]})
        self.assertIn("Unable to validate the following destination configurations",
                      bad["Message"])
        self.assertS3Error(
            self.s3.put_bucket_notification_configuration, "InvalidArgument", Bucket=b,
            NotificationConfiguration={"QueueConfigurations": [
                queue_config(["s3:ObjectCreated:Get"])]})
        overlap = self.assertS3Error(
            self.s3.put_bucket_notification_configuration, "InvalidArgument", Bucket=b,
            NotificationConfiguration={"QueueConfigurations": [
                queue_config(["s3:ObjectCreated:*"], prefix="a/"),
                queue_config(["s3:ObjectCreated:Put"], prefix="a/b/")]})
        self.assertIn("Configurations overlap", overlap["Message"])
        self.assertS3Error(
            self.s3.put_bucket_notification_configuration, "NotImplemented", Bucket=b,
            NotificationConfiguration={"TopicConfigurations": [
                {"TopicArn": "arn:aws:sns:us-east-1:123456789012:t",
                 "Events": ["s3:ObjectCreated:*"]}]})
        self.assertS3Error(self.s3.put_bucket_notification_configuration, "NoSuchBucket",
                           Bucket=unique_name("absent"),
                           NotificationConfiguration={"QueueConfigurations": [
                               queue_config(["s3:ObjectCreated:*"])]})
        # A good one reads back as stored; the empty document removes it.
        resp = self.s3.put_bucket_notification_configuration(
            Bucket=b, NotificationConfiguration={"QueueConfigurations": [
                queue_config(["s3:ObjectCreated:*", "s3:ObjectRemoved:Delete"], prefix="img/",
                             suffix=".jpg", id_="images"),
                queue_config(["s3:ObjectCreated:*"], prefix="logs/")]})
        # The destination gets S3's test message, once for the configuration.
        harness.wait_for(self, self.server, "the test event", lambda: self.receiver.tests, 10)
        time.sleep(0.3)
        self.assertEqual(len(self.receiver.tests), 1, self.receiver.tests)
        test_event = self.receiver.tests[0]
        self.assertEqual(test_event["Event"], "s3:TestEvent")
        self.assertEqual(test_event["Service"], "Amazon S3")
        self.assertEqual(test_event["Bucket"], b)
        self.assertEqual(test_event["RequestId"], resp["ResponseMetadata"]["RequestId"])
        got = self.s3.get_bucket_notification_configuration(Bucket=b)["QueueConfigurations"]
        self.assertEqual(len(got), 2)
        self.assertEqual(got[0]["Id"], "images")
        self.assertEqual(got[0]["QueueArn"], "arn:strata:sqs::hook:webhook")
        self.assertEqual(got[0]["Events"], ["s3:ObjectCreated:*", "s3:ObjectRemoved:Delete"])
        self.assertEqual(sorted((r["Name"], r["Value"]) for r in got[0]["Filter"]["Key"]["FilterRules"]),
                         [("prefix", "img/"), ("suffix", ".jpg")])
        self.assertTrue(got[1]["Id"])  # generated
        self.s3.put_bucket_notification_configuration(Bucket=b, NotificationConfiguration={})
        got = self.s3.get_bucket_notification_configuration(Bucket=b)
        self.assertNotIn("QueueConfigurations", got)
        self.s3.put_object(Bucket=b, Key="img/a.jpg", Body=b"x")
        time.sleep(1)
        self.assertEqual(self.receiver.snapshot(), [])  # removed: no events

    def test_scripted_workload(self):
        b = unique_name("ev")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_bucket_notification_configuration(
            Bucket=b, NotificationConfiguration={"QueueConfigurations": [
                queue_config(["s3:ObjectCreated:*", "s3:ObjectRemoved:*", "s3:ObjectTagging:*"],
                             prefix="in/", id_="inbox")]})
        put = self.s3.put_object(Bucket=b, Key="in/a b+c.txt", Body=b"hello")
        self.s3.copy_object(Bucket=b, Key="in/copy", CopySource={"Bucket": b, "Key": "in/a b+c.txt"})
        mpu = self.s3.create_multipart_upload(Bucket=b, Key="in/big")
        part = self.s3.upload_part(Bucket=b, Key="in/big", UploadId=mpu["UploadId"], PartNumber=1,
                                   Body=b"p" * (5 << 20))
        self.s3.complete_multipart_upload(
            Bucket=b, Key="in/big", UploadId=mpu["UploadId"],
            MultipartUpload={"Parts": [{"ETag": part["ETag"], "PartNumber": 1}]})
        self.s3.put_object(Bucket=b, Key="out/ignored", Body=b"x")  # outside the filter
        self.s3.put_object_tagging(Bucket=b, Key="in/copy",
                                   Tagging={"TagSet": [{"Key": "k", "Value": "v"}]})
        self.s3.delete_object_tagging(Bucket=b, Key="in/copy")
        self.s3.delete_object(Bucket=b, Key="in/copy")
        self.s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "in/big"}, {"Key": "out/ignored"}]})
        expected = [("ObjectCreated:Put", "in/a b+c.txt"), ("ObjectCreated:Copy", "in/copy"),
                    ("ObjectCreated:CompleteMultipartUpload", "in/big"),
                    ("ObjectTagging:Put", "in/copy"), ("ObjectTagging:Delete", "in/copy"),
                    ("ObjectRemoved:Delete", "in/copy"), ("ObjectRemoved:Delete", "in/big")]
        events = self.wait_events(len(expected))
        self.assertEqual(names(events), expected)
        first = events[0]
        self.assertEqual(first["eventVersion"], "2.1")
        self.assertEqual(first["eventSource"], "aws:s3")
        self.assertEqual(first["awsRegion"], "us-east-1")
        self.assertEqual(first["s3"]["configurationId"], "inbox")
        self.assertEqual(first["s3"]["bucket"]["name"], b)
        self.assertEqual(first["s3"]["bucket"]["arn"], f"arn:aws:s3:::{b}")
        self.assertEqual(first["s3"]["object"]["key"], "in/a+b%2Bc.txt")  # URL-encoded as AWS
        self.assertEqual(first["s3"]["object"]["size"], 5)
        self.assertEqual(first["s3"]["object"]["eTag"], put["ETag"].strip('"'))
        self.assertNotIn("versionId", first["s3"]["object"])  # unversioned bucket
        self.assertEqual(first["responseElements"]["x-amz-request-id"],
                         put["ResponseMetadata"]["RequestId"])
        self.assertEqual(first["requestParameters"]["sourceIPAddress"], "127.0.0.1")
        self.assertTrue(first["userIdentity"]["principalId"])
        self.assertTrue(first["eventTime"].endswith("Z"))
        removal = events[5]
        self.assertNotIn("size", removal["s3"]["object"])
        # Sequencers grow for the events of one key.
        copy_seq = [e["s3"]["object"]["sequencer"] for e in events if
                    e["s3"]["object"]["key"] == "in/copy"]
        self.assertEqual(copy_seq, sorted(copy_seq))
        self.assertEqual(len(set(copy_seq)), len(copy_seq))
        self.assertEqual(self.receiver.bad_auth, 0)

    def test_versioned_removals(self):
        b = unique_name("ver")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
        self.s3.put_bucket_notification_configuration(
            Bucket=b, NotificationConfiguration={"QueueConfigurations": [
                queue_config(["s3:ObjectCreated:Put", "s3:ObjectRemoved:*"], suffix=".bin")]})
        v1 = self.s3.put_object(Bucket=b, Key="k.bin", Body=b"one")["VersionId"]
        marker = self.s3.delete_object(Bucket=b, Key="k.bin")
        self.s3.delete_object(Bucket=b, Key="k.bin", VersionId=v1)
        events = self.wait_events(3)
        self.assertEqual(names(events), [("ObjectCreated:Put", "k.bin"),
                                         ("ObjectRemoved:DeleteMarkerCreated", "k.bin"),
                                         ("ObjectRemoved:Delete", "k.bin")])
        self.assertEqual(events[0]["s3"]["object"]["versionId"], v1)
        self.assertEqual(events[1]["s3"]["object"]["versionId"], marker["VersionId"])
        self.assertEqual(events[2]["s3"]["object"]["versionId"], v1)


def start_server(testcase, receiver, limit=None, extra_config="", extra_args=()):
    """A server declaring `receiver` as webhook "hook" (stopped and removed, with the
    receiver and the config file, when `testcase` ends)."""
    config = harness.write_config(extra_config + config_text(receiver, limit),
                                  prefix="strata-notify-")
    testcase.addCleanup(os.unlink, config)
    testcase.addCleanup(receiver.stop)
    server = Server(extra_args=["--config", config, "--kv-listen", "off", *extra_args]).start()
    testcase.addCleanup(server.cleanup)
    testcase.addCleanup(server.stop)
    return server


def notified_bucket(s3, tag, events):
    """A new bucket whose events `events` go to webhook "hook"."""
    b = unique_name(tag)
    s3.create_bucket(Bucket=b)
    s3.put_bucket_notification_configuration(
        Bucket=b, NotificationConfiguration={"QueueConfigurations": [queue_config(events)]})
    return b


class NotificationDurabilityTest(unittest.TestCase):
    """Events wait in the queue while the receiver is down, across a clean restart and a
    SIGKILL, and all arrive once it is back; a full queue drops and reports."""

    def test_receiver_down_and_restarts(self):
        receiver = Receiver()  # not started: the target is down
        mport = free_port()
        server = start_server(self, receiver,
                              extra_args=["--metrics-listen", f"127.0.0.1:{mport}"])
        s3 = server.boto3_client()
        b = notified_bucket(s3, "dur", ["s3:ObjectCreated:*"])
        for i in range(5):
            s3.put_object(Bucket=b, Key=f"before-stop-{i}", Body=b"x")
        harness.wait_for(self, server, "delivery failures counted", lambda: (
            sample(metrics(mport), "strata_notify_delivery_failures_total", target="hook")
            or 0) >= 1, 20)
        # The five events and the configuration's test message.
        self.assertEqual(sample(metrics(mport), "strata_notify_queued_events", target="hook"), 6)
        server.stop()
        server.start()
        s3 = server.boto3_client()
        for i in range(3):
            s3.put_object(Bucket=b, Key=f"before-kill-{i}", Body=b"x")
        server.kill()
        server.start()
        receiver.start()
        expected = sorted([f"before-stop-{i}" for i in range(5)] +
                          [f"before-kill-{i}" for i in range(3)])
        harness.wait_for(self, server, "every queued event delivered",
                         lambda: len(receiver.snapshot()) >= len(expected), 30)
        time.sleep(0.5)
        got = sorted(k for _, k in names(receiver.snapshot()))
        self.assertEqual(got, expected)  # each once: none was delivered before
        self.assertEqual(len(receiver.tests), 1)
        harness.wait_for(self, server, "the queue drained", lambda: sample(
            metrics(mport), "strata_notify_queued_events", target="hook") == 0, 10)

    def test_full_queue_drops_and_reports(self):
        receiver = Receiver()  # down
        mport = free_port()
        server = start_server(self, receiver, limit=3,
                              extra_args=["--metrics-listen", f"127.0.0.1:{mport}"])
        s3 = server.boto3_client()
        b = notified_bucket(s3, "full", ["s3:ObjectCreated:*"])
        for i in range(5):
            s3.put_object(Bucket=b, Key=f"k{i}", Body=b"x")  # the writes all succeed
        # The queue holds the configuration's test message and k0, k1.
        text = metrics(mport)
        self.assertEqual(sample(text, "strata_notify_queued_events", target="hook"), 3)
        self.assertEqual(sample(text, "strata_notify_dropped_total", target="hook"), 3)

        def dropped_records():
            status, doc = harness.admin(server, "GET", "audit-query",
                                        operation="NotificationDropped")
            return doc.get("records", []) if status == 200 else []
        harness.wait_for(self, server, "audit records of the drops",
                         lambda: len(dropped_records()) == 3, 10)
        self.assertEqual(sorted(r["key"] for r in dropped_records()), ["k2", "k3", "k4"])
        self.assertTrue(all(r["result"].startswith("QueueFull hook s3:ObjectCreated:Put")
                            for r in dropped_records()), dropped_records())
        receiver.start()
        harness.wait_for(self, server, "the kept events delivered",
                         lambda: len(receiver.snapshot()) == 2, 30)
        self.assertEqual(sorted(k for _, k in names(receiver.snapshot())), ["k0", "k1"])

    def test_bad_webhook_config_stops_the_server(self):
        harness.assert_start_fails(self, '[notify.webhook.h]\nendpoint = "http://"\n',
                                   "notify.webhook.h")
        harness.assert_start_fails(self, '[notify.webhook.h]\nqueue_limit = 5\n',
                                   "needs endpoint")


class TieredNotificationTest(unittest.TestCase):
    """The server's own changes as events: lifecycle transitions and expirations, and the
    restore of an archived object (requested, completed, expired), on a fast clock."""

    def test_lifecycle_and_restore_events(self):
        receiver = Receiver().start()
        server = start_server(self, receiver, extra_config=TIERS, extra_args=[
            "--lifecycle-day-seconds", "1", "--lifecycle-interval-s", "1"])
        s3 = server.boto3_client()
        b = notified_bucket(s3, "life", ["s3:LifecycleTransition", "s3:LifecycleExpiration:*",
                                         "s3:ObjectRestore:*"])
        s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
            {"ID": "archive", "Status": "Enabled", "Filter": {"Prefix": "t/"},
             "Transitions": [{"Days": 1, "StorageClass": "GLACIER"}]},
            {"ID": "expire", "Status": "Enabled", "Filter": {"Prefix": "e/"},
             "Expiration": {"Days": 1}}]})
        s3.put_object(Bucket=b, Key="t/a", Body=b"x" * (200 << 10))
        s3.put_object(Bucket=b, Key="e/a", Body=b"y")

        def got(name, key):
            return [e for e in receiver.snapshot()
                    if (e["eventName"], urllib.parse.unquote_plus(e["s3"]["object"]["key"]))
                    == (name, key)]
        harness.wait_for(self, server, "the lifecycle events", lambda: got(
            "LifecycleTransition", "t/a") and got("LifecycleExpiration:Delete", "e/a"), 30)
        t = got("LifecycleTransition", "t/a")[0]
        self.assertEqual(t["lifecycleEventData"]["transitionEventData"]
                         ["destinationStorageClass"], "GLACIER")
        self.assertEqual(t["userIdentity"]["principalId"], "strata:lifecycle")
        s3.restore_object(Bucket=b, Key="t/a", RestoreRequest={"Days": 1})
        harness.wait_for(self, server, "the restore events", lambda: got(
            "ObjectRestore:Post", "t/a") and got("ObjectRestore:Completed", "t/a"), 30)
        done = got("ObjectRestore:Completed", "t/a")[0]
        self.assertEqual(done["glacierEventData"]["restoreEventData"]
                         ["lifecycleRestoreStorageClass"], "GLACIER")
        self.assertTrue(done["glacierEventData"]["restoreEventData"]
                        ["lifecycleRestorationExpiryTime"].endswith("Z"))
        harness.wait_for(self, server, "the restored copy's expiry",
                         lambda: got("ObjectRestore:Delete", "t/a"), 30)
        # Each of them once.
        self.assertEqual(sorted(names(receiver.snapshot())), sorted([
            ("LifecycleTransition", "t/a"), ("LifecycleExpiration:Delete", "e/a"),
            ("ObjectRestore:Post", "t/a"), ("ObjectRestore:Completed", "t/a"),
            ("ObjectRestore:Delete", "t/a")]))


def metrics(port):
    return scrape(port, token=None)[2]


if __name__ == "__main__":
    unittest.main()

"""strata.loader's S3 data path through the native module strata_http (client/http/http_range.h).

The integration suite's loader tests (tests/integration/test_loader.py, which run there without
the module on the path, so through http.client) run here again with the native exchange, which
tests/kv/run.sh puts on the path: whole checkpoints, malformed shards, checksums, a byte
flipped on the wire, overwrites mid-load, a server killed mid-load, a stalled connection. Then
what the native path answers by itself: S3 error replies, a refused connection, probes."""
import os
import shutil
import tempfile
import unittest

from botocore.credentials import Credentials

import strata_http
import test_loader  # tests/integration, on the path (tests/kv/run.sh)
from harness import ACCESS_KEY, SECRET_KEY, free_port, unique_name
from strata import s3http


class NativeLoaderTest(test_loader.LoaderTest):
    """Every test of LoaderTest, with the loader's ranges read by strata_http."""

    def setUp(self):
        os.environ.pop("STRATA_LOADER_NATIVE_HTTP", None)
        client = s3http.RangeClient(self.server.endpoint, Credentials(ACCESS_KEY, SECRET_KEY))
        self.addCleanup(client.close)
        self.assertTrue(client.native, "strata_http is on the path: the loader must use it")


class NativeRangeClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = test_loader.Server(extra_args=["--kv-listen", "off"]).start()
        cls.s3 = cls.server.boto3_client()
        cls.bucket = unique_name("nat")
        cls.s3.create_bucket(Bucket=cls.bucket)
        cls.body = bytes(range(256)) * 64  # 16 KiB
        cls.s3.put_object(Bucket=cls.bucket, Key="o", Body=cls.body)

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def client(self, endpoint=None):
        c = s3http.RangeClient(endpoint or self.server.endpoint,
                               Credentials(ACCESS_KEY, SECRET_KEY), stall_timeout=2.0)
        self.addCleanup(c.close)
        self.assertTrue(c.native)
        return c

    def test_ranges_land_in_the_buffer_and_the_reply_is_checked(self):
        c = self.client()
        buf = bytearray(1000)
        r = c.get_range(self.bucket, "o", 500, memoryview(buf), total=len(self.body))
        self.assertEqual(bytes(buf), self.body[500:1500])
        self.assertEqual((r.start, r.end, r.size), (500, 1500, len(self.body)))
        # The pinned size is checked before the bytes are trusted.
        with self.assertRaises(s3http.S3Error) as cm:
            c.get_range(self.bucket, "o", 0, memoryview(bytearray(10)), total=99)
        self.assertEqual(cm.exception.code, "SizeChanged")
        # Past the end: the reply is shorter than asked, nothing is read into the buffer.
        tail = bytearray(b"\xee" * 100)
        with self.assertRaises(s3http.S3Error) as cm:
            c.get_range(self.bucket, "o", len(self.body) - 10, memoryview(tail))
        self.assertEqual(cm.exception.code, "ShortRange")
        self.assertEqual(bytes(tail), b"\xee" * 100)

    def test_s3_errors_carry_their_code(self):
        c = self.client()
        with self.assertRaises(s3http.S3Error) as cm:
            c.get_range(self.bucket, "missing", 0, memoryview(bytearray(8)))
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "NoSuchKey"))
        etag = self.s3.head_object(Bucket=self.bucket, Key="o")["ETag"]
        with self.assertRaises(s3http.S3Error) as cm:
            c.get_range(self.bucket, "o", 0, memoryview(bytearray(8)), etag='"0000"')
        self.assertEqual((cm.exception.status, cm.exception.code), (412, "PreconditionFailed"))
        # The connection survives error replies: the next range on this thread reads fine.
        buf = bytearray(8)
        c.get_range(self.bucket, "o", 8, memoryview(buf), etag=etag)
        self.assertEqual(bytes(buf), self.body[8:16])

    def test_no_control_character_reaches_the_request_head(self):
        c = self.client()
        with self.assertRaises(ValueError):
            c.get_range(self.bucket, "o", 0, memoryview(bytearray(8)),
                        etag='"e"\r\nx-amz-meta-injected: 1')

    def test_probes_read_what_there_is(self):
        c = self.client()
        buf = bytearray(64 << 10)
        n, r = c.get_prefix(self.bucket, "o", memoryview(buf))
        self.assertEqual((n, r.size), (len(self.body), len(self.body)))
        self.assertEqual(bytes(buf[:n]), self.body)
        self.s3.put_object(Bucket=self.bucket, Key="empty", Body=b"")
        n, r = c.get_prefix(self.bucket, "empty", memoryview(buf))
        self.assertEqual((n, r.size), (0, 0))

    def test_a_refused_connection_is_retryable(self):
        c = self.client(f"http://127.0.0.1:{free_port()}")  # bound once, nothing listens
        with self.assertRaises(s3http.RetryableError):
            c.get_range(self.bucket, "o", 0, memoryview(bytearray(8)))

    def test_close_from_another_thread_ends_a_waiting_exchange(self):
        import socket
        import threading
        import time
        silent = socket.socket()  # accepts (the kernel does), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        self.addCleanup(silent.close)
        conn = strata_http.Connection("127.0.0.1", silent.getsockname()[1], timeout_ms=20000)
        errors = []

        def wait():
            try:
                conn.exchange(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", bytearray(8))
            except strata_http.Error as e:
                errors.append(e)

        t = threading.Thread(target=wait)
        t0 = time.monotonic()
        t.start()
        time.sleep(0.2)
        conn.close()
        t.join(5)
        self.assertFalse(t.is_alive(), "close() must end the exchange, not the 20 s timeout")
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual(len(errors), 1)
        self.assertFalse(conn.usable)

    def test_the_module_rejects_bad_buffers(self):
        conn = strata_http.Connection("127.0.0.1", self.server.port)
        with self.assertRaises((ValueError, TypeError, BufferError)):
            conn.exchange(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"read-only bytes")


class NativeTlsTest(unittest.TestCase):
    """https endpoints: the native exchange speaks TLS and checks the certificate against the
    trust store (here SSL_CERT_FILE naming the test's own certificate, as for http.client)."""

    @classmethod
    def setUpClass(cls):
        from test_kv_tls import make_cert
        cls.dir = tempfile.mkdtemp(prefix="strata-nattls-")
        cls.cert, key = make_cert(cls.dir)
        port = free_port()
        cls.server = test_loader.Server(extra_args=[
            "--kv-listen", "off", "--listen-tls", f"127.0.0.1:{port}", "--tls-cert", cls.cert,
            "--tls-key", key]).start()
        cls.https = f"https://127.0.0.1:{port}"
        s3 = cls.server.boto3_client()
        cls.bucket = unique_name("nattls")
        s3.create_bucket(Bucket=cls.bucket)
        cls.body = os.urandom(300 << 10)  # many TLS records
        s3.put_object(Bucket=cls.bucket, Key="o", Body=cls.body)

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_ranges_over_tls_and_an_untrusted_certificate(self):
        old = os.environ.get("SSL_CERT_FILE")
        self.addCleanup(lambda: os.environ.__setitem__("SSL_CERT_FILE", old) if old is not None
                        else os.environ.pop("SSL_CERT_FILE", None))
        os.environ["SSL_CERT_FILE"] = self.cert
        c = s3http.RangeClient(self.https, Credentials(ACCESS_KEY, SECRET_KEY))
        self.addCleanup(c.close)
        self.assertTrue(c.native)
        buf = bytearray(200 << 10)
        c.get_range(self.bucket, "o", 1000, memoryview(buf), total=len(self.body))
        self.assertEqual(bytes(buf), self.body[1000:1000 + len(buf)])
        os.environ["SSL_CERT_FILE"] = os.devnull  # trusts nothing
        untrusting = s3http.RangeClient(self.https, Credentials(ACCESS_KEY, SECRET_KEY))
        self.addCleanup(untrusting.close)
        with self.assertRaises(s3http.RetryableError):
            untrusting.get_range(self.bucket, "o", 0, memoryview(bytearray(8)))


if __name__ == "__main__":
    unittest.main()

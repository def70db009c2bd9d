"""Hostile clients against a real strata server on loopback.

Each test replays one attack from the front-door security review (slow heads,
idle and surplus connections, descriptor exhaustion, unbounded lines before
authentication, request smuggling, header injection, encryption headers that
would be silently ignored) in a bounded loop, and asserts that a well-behaved
boto3 client keeps being served while the attack goes on and that the
server's memory stays bounded.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_hostile.py -v
"""
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import uuid
from urllib.parse import quote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rawhttp  # noqa: E402
from harness import ACCESS_KEY, SECRET_KEY, Server, ServerTestCase, parse_error, signed_request  # noqa: E402
from rawhttp import Conn  # noqa: E402


def proc_status(pid, field):
    """A /proc/PID/status field in KiB (VmRSS, VmHWM)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field}")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_sockets(port, n, timeout=5):
    out = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        out.append(s)
    return out


class Trickler:
    """Sends one byte per `every` seconds on each socket from a thread."""

    def __init__(self, socks, every, byte=b"a"):
        self.socks, self.every, self.byte = socks, every, byte
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop_flag.wait(self.every):
            for s in self.socks:
                try:
                    s.send(self.byte)
                except OSError:
                    pass

    def stop(self):
        self.stop_flag.set()
        self.thread.join()


class HostileClientTest(ServerTestCase):
    # Few workers, short limits: an attack that holds a worker per connection
    # would take the service down with a handful of sockets.
    server_kwargs = {"extra_args": ["--workers", "8", "--idle-timeout-s", "2",
                                    "--header-timeout-s", "3"]}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bucket = "hostile"
        cls.s3.create_bucket(Bucket=cls.bucket)
        cls.good = cls.server.boto3_client(connect_timeout=5, read_timeout=5)

    @classmethod
    def tearDownClass(cls):
        cls.good.close()
        super().tearDownClass()

    def tearDown(self):
        self.assertServerHealthy()

    def assertServed(self, rounds=3):
        """A well-behaved client's PUT + GET round trips succeed (5 s timeouts)."""
        for i in range(rounds):
            key = f"good-{uuid.uuid4().hex}"
            self.good.put_object(Bucket=self.bucket, Key=key, Body=b"x" * 1000)
            self.assertEqual(self.good.get_object(Bucket=self.bucket, Key=key)["Body"].read(),
                             b"x" * 1000)

    # ---- slow heads (slowloris) -------------------------------------------
    def test_trickled_heads_do_not_block_service_and_time_out(self):
        socks = open_sockets(self.server.port, 64)
        for s in socks:
            s.send(b"GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ")
        trickle = Trickler(socks, 0.5)  # a byte per 0.5 s: no single read ever stalls
        try:
            start = time.time()
            while time.time() - start < 2.5:  # throughout the attack
                self.assertServed(rounds=1)
        finally:
            trickle.stop()
        # The whole head had 3 s: every trickler is answered RequestTimeout and closed.
        socks[0].settimeout(10)
        data = b""
        while True:
            chunk = socks[0].recv(4096)
            if not chunk:
                break
            data += chunk
        self.assertTrue(data.startswith(b"HTTP/1.1 400"), data[:200])
        self.assertIn(b"<Code>RequestTimeout</Code>", data)
        for s in socks:
            s.close()

    # ---- idle connections -------------------------------------------------
    def test_idle_connections_are_cheap_and_time_out(self):
        pid = self.server.proc.pid
        rss_before = proc_status(pid, "VmRSS")
        socks = open_sockets(self.server.port, 500)
        time.sleep(0.3)
        self.assertServed()
        grown_kib = proc_status(pid, "VmRSS") - rss_before
        self.assertLess(grown_kib, 32 * 1024, f"500 idle connections grew RSS by {grown_kib} KiB")
        # --idle-timeout-s 2: the server closes them all.
        deadline = time.time() + 10
        for s in socks:
            s.settimeout(max(0.1, deadline - time.time()))
            self.assertEqual(s.recv(1), b"", "idle connection not closed by the server")
            s.close()

    # ---- bad framing ------------------------------------------------------
    def test_transfer_encoding_smuggling_is_refused(self):
        smuggled = f"DELETE /{self.bucket}/victim HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        self.s3.put_object(Bucket=self.bucket, Key="victim", Body=b"v")
        for te, status in (("gzip", 400), ("chunked, identity", 400), ("xchunked", 400),
                           ("gzip, chunked", 501)):
            with Conn(self.server.port) as c:
                c.try_send(f"POST /{self.bucket}/k HTTP/1.1\r\nHost: x\r\n"
                           f"Transfer-Encoding: {te}\r\n\r\n".encode() + smuggled)
                r = c.read_response("POST")
                self.assertEqual(r.status, status, (te, r))
                self.assertTrue(c.at_eof(), f"connection left open after {te}")
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="victim")["Body"].read(), b"v")

    def test_unauthenticated_chunk_extension_is_bounded(self):
        pid = self.server.proc.pid
        hwm_before = proc_status(pid, "VmHWM")
        sent = 0
        with Conn(self.server.port, timeout=10) as c:
            c.try_send(f"POST /{self.bucket} HTTP/1.1\r\nHost: x\r\n"
                       "Content-Type: multipart/form-data; boundary=xyz\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n5;ext=".encode())
            piece = b"e" * (1 << 20)
            while sent < (300 << 20) and c.try_send(piece):  # up to 300 MiB of one line
                sent += len(piece)
            r = c.read_response("POST")
        self.assertEqual(r.status, 400, r)
        self.assertLess(sent, 300 << 20, "the server read a 300 MiB chunk line to its end")
        grown = proc_status(pid, "VmHWM") - hwm_before
        self.assertLess(grown, 32 * 1024, f"peak RSS grew by {grown} KiB")

    # ---- header injection -------------------------------------------------
    def test_response_overrides_with_crlf_are_refused(self):
        self.s3.put_object(Bucket=self.bucket, Key="plain", Body=b"p")
        r = rawhttp.request(self.server.port, "GET", f"/{self.bucket}/plain",
                            query="response-content-type=" + quote("text/plain\r\nSet-Cookie: a=b", safe=""))
        self.assertEqual(r.status, 400, r)
        self.assertEqual(r.error_code, "InvalidArgument")
        self.assertIsNone(r.header("set-cookie"))

    def test_post_form_fields_with_crlf_are_refused(self):
        signer = self.server.boto3_client(signature_version="s3v4")
        from test_post_object import multipart
        for name, value in (("Content-Type", "text/plain\r\nSet-Cookie: stolen=1"),
                            ("x-amz-meta-note", "a\r\nSet-Cookie: stolen=1"),
                            ("success_action_redirect", "http://example.com/\r\nSet-Cookie: x=1")):
            key = f"inject-{uuid.uuid4().hex}"
            post = signer.generate_presigned_post(
                Bucket=self.bucket, Key=key, Fields={name: value}, Conditions=[{name: value}])
            ct, body = multipart(list(post["fields"].items()), b"data")
            with Conn(self.server.port) as c:
                c.send(f"POST /{self.bucket} HTTP/1.1\r\nHost: 127.0.0.1:{self.server.port}\r\n"
                       f"Content-Type: {ct}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
                r = c.read_response("POST")
            self.assertEqual(r.status, 400, (name, r))
            self.assertEqual(r.error_code, "InvalidArgument", (name, r))
            self.assertIsNone(r.header("set-cookie"))
            self.assertS3Error(self.s3.head_object, "404", 404, Bucket=self.bucket, Key=key)
        signer.close()

    # ---- encryption must never be silently ignored -------------------------
    def test_encryption_requests_are_honoured_or_refused_never_ignored(self):
        # Honoured: what comes back says so.
        self.s3.put_object(Bucket=self.bucket, Key="sse-s3", Body=b"secret", ServerSideEncryption="AES256")
        self.assertEqual(self.s3.head_object(Bucket=self.bucket, Key="sse-s3")["ServerSideEncryption"], "AES256")
        # Refused, nothing stored: an unknown KMS key, an algorithm strata lacks,
        # an SSE-C key over plain HTTP (the server runs without --sse-c-over-http).
        cases = [
            ("SSE-KMS unknown key", "KMS.NotFoundException", dict(ServerSideEncryption="aws:kms", SSEKMSKeyId="k1")),
            ("DSSE-KMS", "InvalidArgument", dict(ServerSideEncryption="aws:kms:dsse")),
            ("SSE-C over http", "InvalidRequest", dict(SSECustomerAlgorithm="AES256", SSECustomerKey="k" * 32)),
        ]
        for what, code, extra in cases:
            key = f"sse-{uuid.uuid4().hex}"
            self.assertS3Error(self.s3.put_object, code, 400, Bucket=self.bucket, Key=key, Body=b"secret", **extra)
            self.assertS3Error(self.s3.head_object, "404", 404, Bucket=self.bucket, Key=key)
        self.assertS3Error(self.s3.create_multipart_upload, "InvalidRequest", 400, Bucket=self.bucket,
                           Key="mpu", SSECustomerAlgorithm="AES256", SSECustomerKey="k" * 32)
        self.s3.put_object(Bucket=self.bucket, Key="src", Body=b"s")
        self.assertS3Error(self.s3.copy_object, "KMS.NotFoundException", 400, Bucket=self.bucket,
                           Key="dst", CopySource={"Bucket": self.bucket, "Key": "src"},
                           ServerSideEncryption="aws:kms", SSEKMSKeyId="k1")
        self.assertS3Error(self.s3.get_object, "InvalidRequest", 400, Bucket=self.bucket,
                           Key="src", SSECustomerAlgorithm="AES256", SSECustomerKey="k" * 32)
        # On an operation that does not apply them: refused, not ignored.
        resp = signed_request(self.server, "DELETE", f"/{self.bucket}/src",
                              headers={"x-amz-server-side-encryption": "AES256"})
        self.assertEqual(resp.status, 400)
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="src")["Body"].read(), b"s")


class ConnectionLimitTest(unittest.TestCase):
    server = None

    def tearDown(self):
        if self.server is not None:
            self.server.cleanup()

    def test_connection_cap_answers_slow_down_and_recovers(self):
        self.server = Server(extra_args=["--max-connections", "40"]).start()
        s3 = self.server.boto3_client(connect_timeout=5, read_timeout=5)
        s3.create_bucket(Bucket="capped")
        s3.close()  # its pooled connection would count against the cap
        held = open_sockets(self.server.port, 40)
        time.sleep(0.2)
        # The server may not have seen boto3's connection close yet (a loaded machine):
        # then one more connection is admitted (it waits for a request, answering nothing)
        # and the next is over the cap. Each admitted one is kept, so it counts.
        r = None
        for _ in range(3):
            c = Conn(self.server.port, timeout=3)
            try:
                r = c.read_response("GET")
                c.close()
                break
            except TimeoutError:
                held.append(c.sock)
        self.assertIsNotNone(r, "no connection over the cap was answered")
        self.assertEqual(r.status, 503, r)
        self.assertEqual(r.error_code, "SlowDown")
        for s in held:
            s.close()
        time.sleep(0.5)
        s3 = self.server.boto3_client(connect_timeout=5, read_timeout=5)
        s3.put_object(Bucket="capped", Key="k", Body=b"ok")
        self.assertEqual(s3.get_object(Bucket="capped", Key="k")["Body"].read(), b"ok")
        s3.close()

    def test_descriptor_exhaustion_does_not_spin(self):
        def low_fd_limit():
            resource.setrlimit(resource.RLIMIT_NOFILE, (96, 96))

        self.server = Server()
        orig_popen = subprocess.Popen

        def popen(*a, **kw):
            return orig_popen(*a, preexec_fn=low_fd_limit, **kw)

        subprocess.Popen = popen
        try:
            self.server.start()
        finally:
            subprocess.Popen = orig_popen
        pid = self.server.proc.pid
        socks = []
        for _ in range(200):  # more than the server has descriptors
            try:
                socks.append(socket.create_connection(("127.0.0.1", self.server.port), timeout=2))
            except OSError:
                break
        time.sleep(0.5)
        cpu0 = cpu_seconds(pid)
        time.sleep(2.0)
        used = cpu_seconds(pid) - cpu0
        self.assertLess(used, 0.5, f"server burned {used:.2f} CPU-s in 2 s while out of descriptors")
        for s in socks:
            s.close()
        time.sleep(0.5)
        s3 = self.server.boto3_client(connect_timeout=5, read_timeout=5)
        s3.create_bucket(Bucket="fds")
        s3.put_object(Bucket="fds", Key="k", Body=b"ok")
        self.assertEqual(s3.get_object(Bucket="fds", Key="k")["Body"].read(), b"ok")
        s3.close()


class DataDirectoryTest(unittest.TestCase):
    """Files only the server's user can read; the secret printed only when generated."""

    def assertPrivate(self, root):
        for dirpath, dirnames, filenames in os.walk(root):
            mode = stat.S_IMODE(os.stat(dirpath).st_mode)
            self.assertEqual(mode & 0o077, 0, f"{dirpath} is {oct(mode)}")
            for name in filenames:
                path = os.path.join(dirpath, name)
                mode = stat.S_IMODE(os.stat(path).st_mode)
                self.assertEqual(mode & 0o077, 0, f"{path} is {oct(mode)}")

    def test_modes_and_secret_from_environment_is_not_printed(self):
        server = Server().start()
        try:
            s3 = server.boto3_client()
            s3.create_bucket(Bucket="modes")
            s3.put_object(Bucket="modes", Key="big", Body=os.urandom(300 << 10))  # a data file
            s3.close()
            self.assertNotIn(SECRET_KEY, server.read_log())
            self.assertIn(ACCESS_KEY, server.read_log())
            self.assertPrivate(server.data_dir)
        finally:
            server.cleanup()

    def test_generated_secret_is_printed_once(self):
        data = tempfile.mkdtemp(prefix="strata-gen-")
        bin_ = os.environ.get("STRATA_BIN", "build/strata")
        env = {k: v for k, v in os.environ.items()
               if k not in ("STRATA_ROOT_USER", "STRATA_ROOT_PASSWORD")}
        outputs = []
        try:
            for _ in range(2):
                port = rawhttp_free_port()
                p = subprocess.Popen([bin_, "server", "--listen", f"127.0.0.1:{port}", "--data",
                                      data, "--kv-listen", "off"], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                deadline = time.time() + 30
                while time.time() < deadline:
                    try:
                        socket.create_connection(("127.0.0.1", port), timeout=1).close()
                        break
                    except OSError:
                        time.sleep(0.05)
                p.terminate()
                out, _ = p.communicate(timeout=15)
                outputs.append(out)
            with open(os.path.join(data, "root-credentials")) as f:
                secret = f.read().splitlines()[1]  # access key, then secret key
            self.assertIn(secret, outputs[0])
            self.assertNotIn(secret, outputs[1])
            self.assertPrivate(data)
        finally:
            subprocess.run(["rm", "-rf", data])

    def test_stop_signal_during_start_up_is_a_clean_shutdown(self):
        # A SIGTERM that comes while the server starts (here: as soon as it has more than one
        # thread, RocksDB's among them) must not kill it on some thread that never blocked the
        # signal: the server finishes starting, prints its whole banner (the generated secret
        # with it, which would otherwise be lost for good) and shuts down with status 0.
        data = tempfile.mkdtemp(prefix="strata-sig-")
        bin_ = os.environ.get("STRATA_BIN", "build/strata")
        env = {k: v for k, v in os.environ.items()
               if k not in ("STRATA_ROOT_USER", "STRATA_ROOT_PASSWORD")}
        try:
            p = subprocess.Popen([bin_, "server", "--listen", f"127.0.0.1:{rawhttp_free_port()}",
                                  "--data", data, "--kv-listen", "off"], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            deadline = time.time() + 30
            while time.time() < deadline and p.poll() is None:
                try:
                    if len(os.listdir(f"/proc/{p.pid}/task")) > 1:
                        break
                except OSError:
                    pass
                time.sleep(0.001)
            p.send_signal(signal.SIGTERM)
            out, _ = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 0, out)
            self.assertIn("shutting down", out)
            with open(os.path.join(data, "root-credentials")) as f:
                secret = f.read().splitlines()[1]
            self.assertIn(secret, out)
        finally:
            subprocess.run(["rm", "-rf", data])


def rawhttp_free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    unittest.main()

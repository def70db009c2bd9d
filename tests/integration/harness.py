"""Starts a real `strata server` on a free loopback port in a temp dir and
builds clients (boto3, aws cli, rclone, s3cmd) pointed at it.

Run with Debian's /usr/bin/python3 (it has boto3); STRATA_BIN names the binary.
"""
import hashlib
import http.client
import itertools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET
from collections import namedtuple

ACCESS_KEY = "strataadmin"
SECRET_KEY = "strata-test-secret-key-0123456789"
REGION = "us-east-1"


# Set by scripts/sanitize.sh when STRATA_BIN is an ASan/UBSan (or TSan) build.
SANITIZED = os.environ.get("STRATA_SANITIZED") == "1"
SANITIZER_SLOWDOWN = 4 if SANITIZED else 1
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "WARNING: ThreadSanitizer", "ERROR: UndefinedBehaviorSanitizer")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One strata server process. Use start()/stop()/kill(); data dir survives restarts."""

    def __init__(self, data_dir=None, extra_args=(), domain=None):
        self.bin = os.environ.get("STRATA_BIN", os.path.join(os.path.dirname(__file__), "../../build/strata"))
        self.own_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="strata-it-")
        self.port = free_port()
        self.extra_args = list(extra_args)
        self.domain = domain
        self.proc = None
        # Beside the data dir (not "DIR/../x.log": that path stops resolving once DIR is removed).
        norm = os.path.normpath(os.path.abspath(self.data_dir))
        self.log_path = os.path.join(os.path.dirname(norm), os.path.basename(norm) + ".log")

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout=30):
        args = [self.bin, "server", "--listen", f"127.0.0.1:{self.port}", "--data", self.data_dir]
        if self.domain:
            args += ["--domain", self.domain]
        args += self.extra_args
        env = dict(os.environ, STRATA_ROOT_USER=ACCESS_KEY, STRATA_ROOT_PASSWORD=SECRET_KEY)
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"strata exited with {self.proc.returncode}; log: {self.read_log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    if s.recv(16).startswith(b"HTTP/1.1"):
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("strata did not become ready")

    def read_log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-4000:].decode(errors="replace")
        except OSError:
            return ""

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        proc, stopped_by_us = self.proc, False
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            stopped_by_us = True
            try:
                self.proc.wait(timeout=15 * SANITIZER_SLOWDOWN)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        self._close_log()
        if proc is not None and SANITIZED:
            self.check_sanitizers(proc.returncode, stopped_by_us)

    def check_sanitizers(self, returncode, stopped_by_us):
        """Sanitized builds (STRATA_SANITIZED=1, scripts/sanitize.sh): a report in the
        server's log, a crash, or a failed clean exit on SIGTERM (LeakSanitizer
        exits 23) fails the test that stops the server."""
        try:
            with open(self.log_path, "rb") as f:
                log = f.read().decode(errors="replace")
        except OSError:
            log = ""
        found = [m for m in SANITIZER_MARKERS if m in log]
        if found or returncode not in (0, None) and (stopped_by_us or returncode < 0):
            at = min((log.find(m) for m in found), default=max(0, len(log) - 4000))
            raise AssertionError(f"sanitizer/crash in strata (exit {returncode}, {found}):\n"
                                 + log[max(0, at - 500):at + 8000])

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        self._close_log()

    def _close_log(self):
        log = getattr(self, "log", None)
        if log is not None and not log.closed:
            log.close()

    def cleanup(self):
        try:
            self.stop()
        finally:
            if self.own_dir:
                shutil.rmtree(self.data_dir, ignore_errors=True)
                try:
                    os.remove(self.log_path)
                except OSError:
                    pass

    # ---- clients -------------------------------------------------------
    def boto3_client(self, addressing_style="path", access_key=ACCESS_KEY, secret_key=SECRET_KEY,
                     region=REGION, **cfg):
        """boto3 S3 client for this server; extra kwargs go to botocore Config
        (e.g. signature_version="s3v4" for presigned URLs, max_pool_connections)."""
        import boto3
        from botocore.config import Config
        return boto3.client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id=access_key,
            aws_secret_access_key=secret_key, region_name=region,
            config=Config(s3={"addressing_style": addressing_style}, retries={"max_attempts": 1}, **cfg))

    def cli_env(self, home):
        """Environment for /usr/bin/aws, s3cmd and rclone with credentials set."""
        return dict(os.environ, AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY,
                    AWS_DEFAULT_REGION=REGION, AWS_EC2_METADATA_DISABLED="true", HOME=home,
                    AWS_CONFIG_FILE=os.path.join(home, "aws-config"),
                    AWS_SHARED_CREDENTIALS_FILE=os.path.join(home, "aws-creds"))

    def aws(self, home, *args, check=True, input=None):
        """Runs Debian's aws cli v2 against this server; returns CompletedProcess."""
        cmd = ["/usr/bin/aws", "--endpoint-url", self.endpoint, *args]
        return subprocess.run(cmd, env=self.cli_env(home), capture_output=True, text=True,
                              check=check, input=input, timeout=600)

    def rclone_config(self, home):
        path = os.path.join(home, "rclone.conf")
        with open(path, "w") as f:
            f.write("[strata]\ntype = s3\nprovider = Other\nenv_auth = false\n"
                    f"access_key_id = {ACCESS_KEY}\nsecret_access_key = {SECRET_KEY}\n"
                    f"endpoint = {self.endpoint}\nregion = {REGION}\n")
        return path

    def rclone(self, home, *args, check=True):
        cmd = ["rclone", "--config", self.rclone_config(home), *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=600,
                              env=self.rclone_env())

    @staticmethod
    def rclone_env():
        # rclone 1.60 fails to build its S3 client when AWS_CA_BUNDLE is set
        # ("LoadCustomCABundleError ... unsupported transport"); we use plain http.
        return {k: v for k, v in os.environ.items() if k != "AWS_CA_BUNDLE"}

    def s3cmd_config(self, home, signature_v2=False):
        path = os.path.join(home, "s3cfg")
        with open(path, "w") as f:
            f.write(f"[default]\naccess_key = {ACCESS_KEY}\nsecret_key = {SECRET_KEY}\n"
                    f"host_base = 127.0.0.1:{self.port}\nhost_bucket = 127.0.0.1:{self.port}\n"
                    f"use_https = False\nsignature_v2 = {signature_v2}\n"
                    f"bucket_location = {REGION}\n")
        return path

    def s3cmd(self, home, *args, check=True, signature_v2=False):
        """Runs s3cmd against this server (SigV4, or SigV2 with signature_v2=True)."""
        cmd = ["s3cmd", "-c", self.s3cmd_config(home, signature_v2), *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=600)


class ServerTestCase(unittest.TestCase):
    """One server per test class; self.server, self.s3 (boto3), self.home (scratch dir).

    Subclasses may set server_kwargs (passed to Server(), e.g. {"domain": "s3.test"}).
    """

    server_kwargs = {}

    @classmethod
    def setUpClass(cls):
        cls.server = Server(**cls.server_kwargs).start()
        cls.s3 = cls.server.boto3_client()
        cls.home = tempfile.mkdtemp(prefix="strata-home-")

    @classmethod
    def tearDownClass(cls):
        cls.s3.close()
        cls.server.cleanup()
        shutil.rmtree(cls.home, ignore_errors=True)

    def assertServerHealthy(self):
        self.assertTrue(self.server.alive(), "server process died: " + self.server.read_log())
        self.s3.list_buckets()

    # ---- helpers ---------------------------------------------------------
    def bucket_name(self, tag="b"):
        """A fresh, valid, not-yet-created bucket name."""
        return unique_name(tag)

    def make_bucket(self, tag="b"):
        """Creates and returns a fresh bucket."""
        name = self.bucket_name(tag)
        self.s3.create_bucket(Bucket=name)
        return name

    def assertS3Error(self, fn, code, status, *args, **kwargs):
        """Calls fn(*args, **kwargs), expects a botocore ClientError with this
        S3 error code and HTTP status; returns the error's response dict."""
        from botocore.exceptions import ClientError
        with self.assertRaises(ClientError) as cm:
            fn(*args, **kwargs)
        resp = cm.exception.response
        self.assertEqual(resp["Error"]["Code"], code, resp)
        self.assertEqual(resp["ResponseMetadata"]["HTTPStatusCode"], status, resp)
        return resp

    def put(self, bucket, key, body=b"", **kw):
        return self.s3.put_object(Bucket=bucket, Key=key, Body=body, **kw)

    def get_body(self, bucket, key, **kw):
        return self.s3.get_object(Bucket=bucket, Key=key, **kw)["Body"].read()


# ---- module helpers -------------------------------------------------------
_counter = itertools.count()


def unique_name(tag="b"):
    """Lower-case DNS-compatible bucket name, unique within this process run."""
    return f"{tag}-{os.getpid()}-{next(_counter)}-{int(time.time() * 1000) % 100000000}"


Response = namedtuple("Response", "status headers body")


def signed_request(server, method, path, query="", headers=None, body=b"", host=None,
                   access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION, sign=True):
    """Sends one SigV4-signed request with http.client and returns Response.

    `path` and `query` must already be percent-encoded as they go on the wire.
    `host` overrides the Host header (virtual-host style), e.g. "b.s3.test:PORT";
    the TCP connection always goes to 127.0.0.1:server.port. Header names in the
    returned headers dict are lower case.
    """
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    host = host or f"127.0.0.1:{server.port}"
    target = path + ("?" + query if query else "")
    hdrs = dict(headers or {})
    if sign:
        req = AWSRequest(method=method, url=f"http://{host}{target}", data=body or b"", headers=hdrs)
        S3SigV4Auth(Credentials(access_key, secret_key), "s3", region).add_auth(req)
        hdrs = dict(req.headers.items())
    hdrs["Host"] = host
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        send_body = body if (body or method in ("PUT", "POST")) else None
        conn.request(method, target, body=send_body, headers=hdrs)
        r = conn.getresponse()
        data = r.read()
        return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
    finally:
        conn.close()


def admin(server, method, action, body=b"", **query):
    """One admin API call as root (/_strata/admin/<action>): (status, JSON document)."""
    import json
    import urllib.parse
    q = "&".join(f"{k}={urllib.parse.quote(v, safe='')}" for k, v in query.items())
    r = signed_request(server, method, "/_strata/admin/" + action, query=q, body=body)
    try:
        doc = json.loads(r.body) if r.body else {}
    except ValueError:
        doc = {"raw": r.body}
    return r.status, doc


def make_user(server, name, policy=None):
    """Creates user `name` with one access key and, if given, an identity
    policy (JSON text) attached; returns {name, ak, sk, arn, canonical_id}."""
    st, doc = admin(server, "POST", "user-create", name=name)
    assert st == 200, doc
    st, key = admin(server, "POST", "key-create", user=name)
    assert st == 200, key
    if policy is not None:
        st, doc = admin(server, "PUT", "policy", body=policy.encode(), name="p-" + name)
        assert st == 200, doc
        st, doc = admin(server, "POST", "policy-attach", name="p-" + name, user=name)
        assert st == 200, doc
    st, info = admin(server, "GET", "user", name=name)
    assert st == 200, info
    return {"name": name, "ak": key["access_key"], "sk": key["secret_key"], "arn": info["arn"],
            "canonical_id": info["canonical_id"]}


def xml_strip_ns(elem):
    for e in elem.iter():
        if isinstance(e.tag, str) and "}" in e.tag:
            e.tag = e.tag.split("}", 1)[1]
    return elem


def parse_xml(body):
    """Parses an S3 XML body with namespaces stripped from tags."""
    return xml_strip_ns(ET.fromstring(body))


def parse_error(body):
    """Returns the children of an S3 <Error> document as a dict (tag -> text)."""
    root = parse_xml(body)
    if root.tag != "Error":
        raise AssertionError(f"not an <Error> document: {body[:500]!r}")
    return {c.tag: (c.text or "") for c in root}


def sha256_file(path, chunk=1 << 20):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(chunk), b""):
            h.update(b)
    return h.hexdigest()


def tree_digest(root):
    """{relative posix path: sha256} for every file under root."""
    out = {}
    for d, _, files in os.walk(root):
        for name in files:
            p = os.path.join(d, name)
            out[os.path.relpath(p, root).replace(os.sep, "/")] = sha256_file(p)
    return out


def write_random_file(path, size, chunk=1 << 20):
    """Writes `size` random bytes to `path` in chunks; returns the sha256 hex."""
    h = hashlib.sha256()
    with open(path, "wb") as f:
        left = size
        while left > 0:
            b = os.urandom(min(chunk, left))
            h.update(b)
            f.write(b)
            left -= len(b)
    return h.hexdigest()


# ---- appended helpers (test_bad_input / test_crash) ----------------------
def _drop_expect_on_empty_body(request, **kwargs):
    body = request.body
    empty = body is None or request.headers.get("Content-Length") in ("0", b"0")
    if not empty and isinstance(body, (bytes, bytearray)):
        empty = len(body) == 0
    if not empty and hasattr(body, "seek") and hasattr(body, "tell"):
        pos = body.tell()
        body.seek(0, 2)
        empty = body.tell() == pos
        body.seek(pos)
    if empty and "Expect" in request.headers:
        del request.headers["Expect"]


def no_empty_expect(client):
    """Works around botocore < 1.43.77 (boto/botocore#3755): a zero-length PUT
    sent with `Expect: 100-continue` gets its final response straight away (as
    from AWS S3, and as RFC 9110 allows); old botocore then parses the next
    response on that pooled connection with the stale status line and stalls
    until read_timeout (60 s), then retries. Dropping Expect when the body is
    empty (what BOTO_EXPERIMENTAL__NO_EMPTY_CONTINUE does in newer botocore)
    avoids it; Expect is not signed. Returns the client."""
    client.meta.events.register_first("before-send.s3", _drop_expect_on_empty_body)
    return client


# A hot and a warm pool (the advisor's and the console's tests).
TWO_POOLS = """
[[pool]]
name = "hot"
media = "hot"
path = "pools/hot"
[[pool]]
name = "warm"
media = "warm"
path = "pools/warm"
"""


def audit_records(server, **filters):
    """Every audit record the admin API returns for `filters`, following the pages."""
    out, after = [], None
    while True:
        q = dict(filters)
        if after:
            q["after"] = str(after)
        status, doc = admin(server, "GET", "audit-query", **q)
        assert status == 200, doc
        out += doc["records"]
        after = doc["next_after"]
        if not after:
            return out


def write_config(text, prefix="strata-"):
    """`text` in a new temporary .toml file; returns its path (the caller removes it)."""
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=".toml")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def wait_for(testcase, server, what, predicate, timeout):
    """Polls `predicate` every 0.2 s; fails `testcase` with the server's log after `timeout`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    testcase.fail(f"timed out waiting for {what}; log: {server.read_log()}")


def assert_start_fails(testcase, config_text, message, returncode=None):
    """`strata server --config` with `config_text` exits (with `returncode`, or any
    non-zero one) naming `message` on stderr."""
    config = write_config(config_text, prefix="strata-badcfg-")
    data = tempfile.mkdtemp(prefix="strata-badcfg-")
    try:
        bin_ = os.environ.get("STRATA_BIN", os.path.join(os.path.dirname(__file__),
                                                         "../../build/strata"))
        r = subprocess.run([bin_, "server", "--config", config, "--data", data,
                            "--listen", "127.0.0.1:0", "--kv-listen", "off"],
                           capture_output=True, text=True, timeout=30)
        if returncode is None:
            testcase.assertNotEqual(r.returncode, 0, r.stderr)
        else:
            testcase.assertEqual(r.returncode, returncode, r.stderr)
        testcase.assertIn(message, r.stderr)
    finally:
        os.unlink(config)
        shutil.rmtree(data, ignore_errors=True)

"""HTTPS (issue 12): --listen-tls beside --listen with a certificate made by
openssl for the test; boto3 with verify=, aws cli with --ca-bundle, rclone
with --ca-cert and s3cmd with ca_certs_file, all over TLS; clients offering
only TLS 1.0 / 1.1 are refused; aws:SecureTransport is true on TLS requests
only; the certificate is re-read on SIGHUP; a 1 GiB object goes up and down
over TLS and comes back with the same SHA-256.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_tls.py -v
"""
import hashlib
import json
import warnings
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (ACCESS_KEY, REGION, SECRET_KEY, SANITIZED, Server, free_port,  # noqa: E402
                     unique_name)


def make_cert(directory, cn="localhost"):
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "2", "-subj", f"/CN={cn}",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


def peer_cert_der(port, cafile):
    ctx = ssl.create_default_context(cafile=cafile)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            return s.getpeercert(binary_form=True)


class TlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="strata-tls-")
        cls.cert, cls.key = make_cert(cls.dir)
        cls.tls_port = free_port()
        cls.server = Server(extra_args=["--listen-tls", f"127.0.0.1:{cls.tls_port}",
                                        "--tls-cert", cls.cert, "--tls-key", cls.key]).start()
        cls.https = f"https://127.0.0.1:{cls.tls_port}"
        cls.s3 = cls.client()
        cls.bucket = unique_name("tls")
        cls.s3.create_bucket(Bucket=cls.bucket)

    @classmethod
    def tearDownClass(cls):
        cls.s3.close()
        cls.server.cleanup()
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def client(cls, verify=None):
        import boto3
        from botocore.config import Config
        return boto3.client("s3", endpoint_url=cls.https, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name=REGION,
                            verify=cls.cert if verify is None else verify,
                            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

    def test_boto3_round_trip_and_untrusted_certificate(self):
        body = os.urandom(3 << 20)
        self.s3.put_object(Bucket=self.bucket, Key="boto3", Body=body)
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="boto3")["Body"].read(), body)
        # Without the CA: the client refuses the server (nothing is sent in the clear).
        from botocore.exceptions import SSLError
        bad = self.client(verify=True)
        with self.assertRaises(SSLError):
            bad.list_buckets()
        bad.close()
        # The plain listener still works beside it.
        plain = self.server.boto3_client()
        self.assertEqual(plain.get_object(Bucket=self.bucket, Key="boto3")["Body"].read(), body)
        plain.close()

    def test_old_protocols_are_refused(self):
        warnings.simplefilter("ignore", DeprecationWarning)  # the point is to offer them
        for version in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
            with self.subTest(version=version.name):
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.load_verify_locations(self.cert)
                ctx.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
                ctx.maximum_version = version
                try:
                    ctx.set_ciphers("ALL:@SECLEVEL=0")
                except ssl.SSLError:
                    pass
                with socket.create_connection(("127.0.0.1", self.tls_port), timeout=10) as raw:
                    with self.assertRaises((ssl.SSLError, ConnectionResetError, OSError)):
                        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                            s.recv(10)
        out = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{self.tls_port}",
                              "-tls1_2", "-CAfile", self.cert], input="", capture_output=True,
                             text=True, timeout=30)
        self.assertIn("Protocol  : TLSv1.2", out.stdout)
        self.assertTrue(self.server.alive())

    def test_plain_http_on_the_tls_port_is_not_served(self):
        with socket.create_connection(("127.0.0.1", self.tls_port), timeout=10) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            s.settimeout(10)
            try:
                data = s.recv(100)
            except ConnectionResetError:
                data = b""  # refused: fine
        self.assertFalse(data.startswith(b"HTTP/1.1 200"), data)
        self.assertTrue(self.server.alive())

    def test_secure_transport_condition(self):
        b = unique_name("sectls")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="k", Body=b"only over tls")
        self.s3.put_bucket_policy(Bucket=b, Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
            "Effect": "Deny", "Principal": "*", "Action": "s3:*",
            "Resource": [f"arn:aws:s3:::{b}", f"arn:aws:s3:::{b}/*"],
            "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}))
        self.assertEqual(self.s3.get_object(Bucket=b, Key="k")["Body"].read(), b"only over tls")
        plain = self.server.boto3_client()
        from botocore.exceptions import ClientError
        with self.assertRaises(ClientError) as cm:
            plain.get_object(Bucket=b, Key="k")
        self.assertEqual(cm.exception.response["Error"]["Code"], "AccessDenied")
        plain.close()

    def test_aws_cli_rclone_s3cmd_over_https(self):
        home = tempfile.mkdtemp(prefix="strata-tls-home-", dir=self.dir)
        src = os.path.join(home, "f.bin")
        with open(src, "wb") as f:
            f.write(os.urandom(5 << 20))
        env = self.server.cli_env(home)
        r = subprocess.run(["/usr/bin/aws", "--endpoint-url", self.https, "--ca-bundle", self.cert,
                            "s3", "cp", src, f"s3://{self.bucket}/cli.bin"], env=env,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        conf = os.path.join(home, "rclone.conf")
        with open(conf, "w") as f:
            f.write("[tls]\ntype = s3\nprovider = Other\nenv_auth = false\n"
                    f"access_key_id = {ACCESS_KEY}\nsecret_access_key = {SECRET_KEY}\n"
                    f"endpoint = {self.https}\nregion = {REGION}\n")
        r = subprocess.run(["rclone", "--config", conf, "--ca-cert", self.cert, "copyto",
                            f"tls:{self.bucket}/cli.bin", os.path.join(home, "rclone.bin")],
                           capture_output=True, text=True, timeout=300, env=Server.rclone_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        cfg = os.path.join(home, "s3cfg")
        with open(cfg, "w") as f:
            f.write(f"[default]\naccess_key = {ACCESS_KEY}\nsecret_key = {SECRET_KEY}\n"
                    f"host_base = 127.0.0.1:{self.tls_port}\nhost_bucket = 127.0.0.1:{self.tls_port}\n"
                    f"use_https = True\ncheck_ssl_certificate = True\nca_certs_file = {self.cert}\n"
                    f"bucket_location = {REGION}\n")
        r = subprocess.run(["s3cmd", "-c", cfg, "get", f"s3://{self.bucket}/cli.bin",
                            os.path.join(home, "s3cmd.bin")], capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        with open(src, "rb") as f:
            want = f.read()
        for name in ("rclone.bin", "s3cmd.bin"):
            with open(os.path.join(home, name), "rb") as f:
                self.assertEqual(f.read(), want, name)

    def test_sighup_reloads_the_certificate(self):
        before = peer_cert_der(self.tls_port, self.cert)
        fresh = tempfile.mkdtemp(dir=self.dir)
        cert2, key2 = make_cert(fresh, cn="localhost-rotated")
        shutil.copy(cert2, self.cert + ".new")
        shutil.copy(key2, self.key + ".new")
        os.replace(self.key + ".new", self.key)
        os.replace(self.cert + ".new", self.cert)
        self.server.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        after = before
        while time.time() < deadline and after == before:
            time.sleep(0.1)
            after = peer_cert_der(self.tls_port, self.cert)  # verified against the new CA
        self.assertNotEqual(after, before)
        self.assertTrue(self.server.alive())
        self.assertIn("TLS certificate reloaded", self.server.read_log())
        # A broken pair on the next SIGHUP: the rotated certificate stays.
        with open(self.key, "w") as f:
            f.write("not a key\n")
        self.server.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        self.assertEqual(peer_cert_der(self.tls_port, self.cert), after)
        self.assertIn("TLS reload failed", self.server.read_log())
        shutil.copy(key2, self.key)

    @unittest.skipIf(SANITIZED, "1 GiB through a sanitized server takes minutes")
    def test_one_gib_up_and_down_by_checksum(self):
        size = 1 << 30
        path = os.path.join(self.dir, "big.bin")
        h = hashlib.sha256()
        block = os.urandom(1 << 20)
        with open(path, "wb") as f:
            for i in range(size >> 20):
                chunk = block[:-8] + i.to_bytes(8, "little")
                h.update(chunk)
                f.write(chunk)
        want = h.hexdigest()
        from boto3.s3.transfer import TransferConfig
        cfg = TransferConfig(multipart_threshold=64 << 20, multipart_chunksize=64 << 20, max_concurrency=4)
        self.s3.upload_file(path, self.bucket, "big", Config=cfg)
        os.unlink(path)
        got = hashlib.sha256()
        body = self.s3.get_object(Bucket=self.bucket, Key="big")["Body"]
        n = 0
        for chunk in iter(lambda: body.read(8 << 20), b""):
            got.update(chunk)
            n += len(chunk)
        self.assertEqual((n, got.hexdigest()), (size, want))


class TlsFlagsTest(unittest.TestCase):
    def test_tls_flags_need_each_other_and_a_valid_pair(self):
        bin_ = os.environ.get("STRATA_BIN", os.path.join(os.path.dirname(__file__), "../../build/strata"))
        d = tempfile.mkdtemp(prefix="strata-tlsflags-")
        try:
            r = subprocess.run([bin_, "server", "--listen-tls", "127.0.0.1:0", "--data", d],
                               capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 2)
            self.assertIn("--tls-cert", r.stderr)
            cert, key = make_cert(d)
            other_cert, other_key = make_cert(tempfile.mkdtemp(dir=d))
            r = subprocess.run([bin_, "server", "--listen", "127.0.0.1:0", "--kv-listen", "off",
                                "--listen-tls", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", other_key,
                                "--data", os.path.join(d, "data")],
                               capture_output=True, text=True, timeout=30,
                               env=dict(os.environ, STRATA_ROOT_USER=ACCESS_KEY, STRATA_ROOT_PASSWORD=SECRET_KEY))
            self.assertEqual(r.returncode, 1)
            self.assertIn("private key", r.stderr)
            self.assertIn("mismatch", r.stderr)
        finally:
            shutil.rmtree(d, ignore_errors=True)


class ListenerReadinessTest(unittest.TestCase):
    """A readiness probe (a load balancer, systemd, this harness) watches the plain S3 port.
    Once it accepts, every other listener the server was asked for must accept too: CI once
    saw the TLS port refuse a connection right after the plain port answered."""

    def test_every_listener_accepts_once_the_plain_port_does(self):
        d = tempfile.mkdtemp(prefix="strata-ready-")
        self.addCleanup(shutil.rmtree, d, True)
        cert, key = make_cert(d)
        for attempt in range(5):
            ports = {name: free_port() for name in ("plain", "tls", "kv", "metrics")}
            server = Server(data_dir=os.path.join(d, f"data{attempt}"), extra_args=[
                "--listen-tls", f"127.0.0.1:{ports['tls']}", "--tls-cert", cert, "--tls-key", key,
                "--kv-listen", f"127.0.0.1:{ports['kv']}",
                "--metrics-listen", f"127.0.0.1:{ports['metrics']}"])
            server.port = ports["plain"]
            args = [server.bin, "server", "--listen", f"127.0.0.1:{server.port}",
                    "--data", server.data_dir, *server.extra_args]
            log = open(server.log_path, "ab")
            server.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=dict(
                os.environ, STRATA_ROOT_USER=ACCESS_KEY, STRATA_ROOT_PASSWORD=SECRET_KEY))
            log.close()
            self.addCleanup(server.cleanup)
            deadline = time.time() + 30 * (4 if SANITIZED else 1)
            while True:  # poll the plain port as fast as we can: no sleep between attempts
                self.assertTrue(server.alive(), server.read_log())
                self.assertLess(time.time(), deadline, "the plain port never opened")
                try:
                    socket.create_connection(("127.0.0.1", server.port), timeout=5).close()
                    break
                except OSError:
                    pass
            for name in ("tls", "kv", "metrics"):
                try:
                    socket.create_connection(("127.0.0.1", ports[name]), timeout=5).close()
                except OSError as e:
                    self.fail(f"start {attempt}: the plain port accepts but the {name} port "
                              f"does not: {e}")
            server.stop()


if __name__ == "__main__":
    unittest.main()

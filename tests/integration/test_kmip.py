"""SSE-KMS with master keys in an external KMIP key server (issue 13): Debian's
PyKMIP server (python3-pykmip) is started by the test with its own CA, and
strata talks to it over mutual TLS (--kmip-endpoint/-ca/-cert/-key). Keys made
with `strata admin kms create-key --external` live only in that server: strata
asks it to wrap and unwrap data keys (KMIP Encrypt / Decrypt, AES-256-GCM).
Covered: round trips with boto3 and aws cli, reads after a restart (the
unwrap goes back to the server), rotation, a key revoked at the KMIP server
(its objects become unreadable: KMS.DisabledException), the KMIP server down
(503, then readable again once it is back), and the TLS checks both ways (a
client certificate the server does not trust, a server certificate strata
does not trust). The key's bytes appear nowhere under strata's data
directory.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_kmip.py -v
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import ACCESS_KEY, SECRET_KEY, Server, free_port, unique_name  # noqa: E402

MARKER = b"KMIP-PLAINTEXT-MARKER-0123456789"


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca(d, name):
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-days", "2", "-subj", f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.pem", cwd=d)


def make_cert(d, ca, name, ext):
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj",
            f"/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=d)
    with open(os.path.join(d, f"{name}.ext"), "w") as f:
        f.write(ext + "\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem", cwd=d)


def locate(client, name):
    """The identifiers of the KMIP objects named `name`."""
    from kmip.core import enums
    from kmip.core.factories.attributes import AttributeFactory
    return client.locate(attributes=[AttributeFactory().create_attribute(enums.AttributeType.NAME, name)])


class KmipServer:
    """pykmip-server on a free loopback port, its state in `d`."""

    def __init__(self, d):
        self.d, self.port, self.proc = d, free_port(), None
        with open(os.path.join(d, "server.conf"), "w") as f:
            f.write(f"""[server]
hostname=127.0.0.1
port={self.port}
certificate_path={d}/kmip-server.pem
key_path={d}/kmip-server.key
ca_path={d}/ca.pem
auth_suite=TLS1.2
policy_path={d}/policies
enable_tls_client_auth=True
logging_level=INFO
database_path={d}/kmip.sqlite
""")
        os.makedirs(os.path.join(d, "policies"), exist_ok=True)

    def start(self):
        self.log = open(os.path.join(self.d, "kmip.out"), "ab")
        self.proc = subprocess.Popen(["pykmip-server", "-f", os.path.join(self.d, "server.conf"),
                                      "-l", os.path.join(self.d, "kmip.log")],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("pykmip-server exited: " + self.tail())
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("pykmip-server did not listen: " + self.tail())

    def tail(self):
        with open(os.path.join(self.d, "kmip.out"), "rb") as f:
            return f.read()[-3000:].decode(errors="replace")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        self.log.close()

    def client(self):
        """PyKMIP's own client, as the owner of strata's keys (same client certificate)."""
        warnings.simplefilter("ignore", DeprecationWarning)  # PyKMIP 0.10's ssl.wrap_socket
        from kmip.core import enums
        from kmip.pie.client import ProxyKmipClient
        return ProxyKmipClient(hostname="127.0.0.1", port=self.port, cert=f"{self.d}/strata.pem",
                               key=f"{self.d}/strata.key", ca=f"{self.d}/ca.pem", config_file="/dev/null",
                               kmip_version=enums.KMIPVersion.KMIP_1_4)


class KmipCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = tempfile.mkdtemp(prefix="strata-kmip-")
        make_ca(cls.d, "ca")
        make_cert(cls.d, "ca", "kmip-server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth")
        make_cert(cls.d, "ca", "strata", "extendedKeyUsage=clientAuth")
        make_ca(cls.d, "other-ca")
        make_cert(cls.d, "other-ca", "stranger", "extendedKeyUsage=clientAuth")
        cls.kmip = KmipServer(cls.d).start()
        cls.server = Server(extra_args=cls.kmip_args()).start()
        cls.s3 = cls.server.boto3_client()
        cls.bucket = unique_name("kmip")
        cls.s3.create_bucket(Bucket=cls.bucket)

    @classmethod
    def kmip_args(cls, ca="ca", cert="strata"):
        return ["--kmip-endpoint", f"127.0.0.1:{cls.kmip.port}", "--kmip-ca", f"{cls.d}/{ca}.pem",
                "--kmip-cert", f"{cls.d}/{cert}.pem", "--kmip-key", f"{cls.d}/{cert}.key"]

    @classmethod
    def tearDownClass(cls):
        cls.s3.close()
        cls.server.cleanup()
        if cls.kmip.proc:
            cls.kmip.stop()
        shutil.rmtree(cls.d, ignore_errors=True)

    def setUp(self):
        if not self.kmip.proc:
            self.kmip.start()

    def kms(self, *args, server=None, check=True):
        server = server or self.server
        env = dict(os.environ, STRATA_ROOT_USER=ACCESS_KEY, STRATA_ROOT_PASSWORD=SECRET_KEY)
        r = subprocess.run([server.bin, "admin", "kms", *args, "--endpoint", server.endpoint],
                           capture_output=True, text=True, env=env, timeout=120)
        if check:
            self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def external_key(self, alias):
        key = json.loads(self.kms("create-key", "--external", "--alias", alias).stdout)
        self.assertEqual(key["origin"], "EXTERNAL_KEY_STORE")
        return key

    def restart(self):
        """A new process: its data-key cache is empty, so reads unwrap at the KMIP server."""
        self.server.stop()
        self.server.start()
        self.s3.close()
        type(self).s3 = self.server.boto3_client()

    def error_of(self, fn, **kw):
        try:
            fn(**kw)
        except self.s3.exceptions.ClientError as e:
            return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
        self.fail("no error")

    def test_round_trip_restart_and_no_key_material_in_strata(self):
        key = self.external_key("alias/kmip-rt")
        small, large = MARKER * 4, MARKER * (3 * 65536 // len(MARKER) + 7)
        for name, body in (("small", small), ("large", large)):
            r = self.s3.put_object(Bucket=self.bucket, Key=name, Body=body, ServerSideEncryption="aws:kms",
                                   SSEKMSKeyId="alias/kmip-rt")
            self.assertEqual((r["ServerSideEncryption"], r["SSEKMSKeyId"]), ("aws:kms", key["arn"]))
        self.restart()
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="small")["Body"].read(), small)
        ranged = self.s3.get_object(Bucket=self.bucket, Key="large", Range="bytes=65530-131090")
        self.assertEqual(ranged["Body"].read(), large[65530:131091])
        head = self.s3.head_object(Bucket=self.bucket, Key="large")
        self.assertEqual((head["ServerSideEncryption"], head["SSEKMSKeyId"]), ("aws:kms", key["arn"]))
        # The master key exists only in the KMIP server: fetch it from there (as its
        # owner) and look for its bytes, and the plaintext, under strata's data dir.
        listed = json.loads(self.kms("show", key["key_id"]).stdout)
        self.assertEqual(listed["materials"], 1)
        with self.kmip.client() as c:
            uids = locate(c, "strata/" + key["key_id"])
            self.assertEqual(len(uids), 1)
            master = c.get(uids[0]).value
        self.assertEqual(len(master), 32)
        self.server.stop()
        try:
            for root, _, files in os.walk(self.server.data_dir):
                for f in files:
                    with open(os.path.join(root, f), "rb") as fh:
                        data = fh.read()
                    self.assertNotIn(master, data, os.path.join(root, f))
                    self.assertNotIn(MARKER, data, os.path.join(root, f))
        finally:
            self.server.start()
            self.s3.close()
            type(self).s3 = self.server.boto3_client()

    def test_rotation_then_a_key_revoked_at_the_kmip_server(self):
        key = self.external_key("alias/kmip-rot")
        self.s3.put_object(Bucket=self.bucket, Key="before", Body=b"one", ServerSideEncryption="aws:kms",
                           SSEKMSKeyId=key["key_id"])
        self.assertEqual(json.loads(self.kms("rotate", key["key_id"]).stdout)["materials"], 2)
        self.s3.put_object(Bucket=self.bucket, Key="after", Body=b"two", ServerSideEncryption="aws:kms",
                           SSEKMSKeyId=key["arn"])
        self.restart()
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="before")["Body"].read(), b"one")
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="after")["Body"].read(), b"two")
        # Disabled in strata: refused without asking the server.
        self.kms("disable", key["key_id"])
        self.assertEqual(self.error_of(self.s3.get_object, Bucket=self.bucket, Key="before"),
                         ("KMS.DisabledException", 400))
        self.kms("enable", key["key_id"])
        # Revoked at the KMIP server (the first material only): its objects are
        # gone for good (crypto-erase at the key server); the rotated one reads.
        from kmip.core import enums
        with self.kmip.client() as c:
            uids = sorted(locate(c, "strata/" + key["key_id"]), key=int)
            self.assertEqual(len(uids), 2)
            c.revoke(enums.RevocationReasonCode.CESSATION_OF_OPERATION, uids[0])
        self.restart()
        self.assertEqual(self.error_of(self.s3.get_object, Bucket=self.bucket, Key="before"),
                         ("KMS.DisabledException", 400))
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="after")["Body"].read(), b"two")

    def test_kmip_server_down_then_back(self):
        self.external_key("alias/kmip-down")
        self.s3.put_object(Bucket=self.bucket, Key="down", Body=b"payload", ServerSideEncryption="aws:kms",
                           SSEKMSKeyId="alias/kmip-down")
        self.restart()
        self.kmip.stop()
        self.assertEqual(self.error_of(self.s3.get_object, Bucket=self.bucket, Key="down"),
                         ("ServiceUnavailable", 503))
        self.assertEqual(self.error_of(self.s3.put_object, Bucket=self.bucket, Key="down2", Body=b"x",
                                       ServerSideEncryption="aws:kms", SSEKMSKeyId="alias/kmip-down"),
                         ("ServiceUnavailable", 503))
        r = self.kms("create-key", "--external", "--alias", "alias/kmip-none", check=False)
        self.assertNotEqual(r.returncode, 0)
        # Local keys do not depend on it.
        self.s3.put_object(Bucket=self.bucket, Key="local", Body=b"y", ServerSideEncryption="AES256")
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="local")["Body"].read(), b"y")
        self.kmip.start()
        self.assertEqual(self.s3.get_object(Bucket=self.bucket, Key="down")["Body"].read(), b"payload")

    def test_aws_cli_with_an_external_key(self):
        key = self.external_key("alias/kmip-cli")
        home = tempfile.mkdtemp(prefix="strata-kmip-home-")
        try:
            src = os.path.join(home, "f.bin")
            with open(src, "wb") as f:
                f.write(MARKER * 1000)
            self.server.aws(home, "s3", "cp", src, f"s3://{self.bucket}/cli", "--sse", "aws:kms",
                            "--sse-kms-key-id", "alias/kmip-cli")
            head = json.loads(self.server.aws(home, "s3api", "head-object", "--bucket", self.bucket,
                                              "--key", "cli").stdout)
            self.assertEqual(head["SSEKMSKeyId"], key["arn"])
            out = os.path.join(home, "back.bin")
            self.server.aws(home, "s3", "cp", f"s3://{self.bucket}/cli", out)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), MARKER * 1000)
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def test_tls_is_checked_both_ways(self):
        # A client certificate from a CA the KMIP server does not trust, then a
        # KMIP server certificate strata does not trust: no key is made.
        for ca, cert in (("ca", "stranger"), ("other-ca", "strata")):
            other = Server(extra_args=self.kmip_args(ca=ca, cert=cert)).start()
            try:
                r = self.kms("create-key", "--external", "--alias", "alias/kmip-tls", server=other, check=False)
                self.assertNotEqual(r.returncode, 0, (ca, cert))
                self.assertIn("TLS", r.stdout + r.stderr)
            finally:
                other.cleanup()
        # Without --kmip-endpoint, --external is refused outright.
        plain = Server().start()
        try:
            r = self.kms("create-key", "--external", server=plain, check=False)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("kmip-endpoint", r.stdout + r.stderr)
        finally:
            plain.cleanup()


if __name__ == "__main__":
    unittest.main()

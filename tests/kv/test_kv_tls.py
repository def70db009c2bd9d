"""The KV-cache listener over TLS (issue 12, --kv-tls with the S3 listener's
--tls-cert / --tls-key): the Python client (strata_kv.Client(tls=True,
ca_file=...)) and the adapters' connections (strata.kvutil) move blocks
through it; a plain client, a client that does not trust the certificate and
a TLS 1.0/1.1 client get nothing; aws:SecureTransport is true for KV
policies on the TLS listener and false on a plain one."""
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import unittest

import numpy as np
import strata_kv

from harness import make_user, unique_name
from kvtest import KvServer, chain_keys, descriptor, random_blocks
from strata.kvutil import NamespaceConnection, tls_options
from test_kv_policies import kv_policy

BLOCK = 256 << 10  # several TLS records per block


def make_cert(directory):
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


class KvTlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="strata-kvtls-")
        cls.cert, cls.key = make_cert(cls.dir)
        cls.server = KvServer(extra_args=["--kv-tls", "--tls-cert", cls.cert,
                                          "--tls-key", cls.key]).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def setUp(self):
        self.assertTrue(self.server.alive(), "server died: " + self.server.read_log())

    def tls_client(self, **kw):
        c = self.server.client(tls=True, ca_file=self.cert, **kw)
        self.addCleanup(c.close)
        return c

    def test_blocks_round_trip_over_tls(self):
        c = self.tls_client()
        ns = c.open_namespace(**descriptor(BLOCK))
        keys = chain_keys(8)
        blocks = random_blocks(8, BLOCK, seed=3)
        self.assertEqual(c.put(ns, keys, None, blocks), [strata_kv.OK] * 8)
        self.assertEqual(c.lookup(ns, keys), 8)
        out = [np.zeros(BLOCK, np.uint8) for _ in keys]
        self.assertEqual(c.get_into(ns, keys, out), [strata_kv.OK] * 8)
        for o, b in zip(out, blocks):
            self.assertTrue((o == b).all())
        # Several threads on one TLS connection at once (their requests are in
        # flight together: one sends while another reads replies).
        import threading
        errors = []

        def reader(i):
            try:
                for _ in range(5):
                    o = [np.zeros(BLOCK, np.uint8)]
                    self.assertEqual(c.get_into(ns, [keys[i]], o), [strata_kv.OK])
                    self.assertTrue((o[0] == blocks[i]).all())
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
        threads = [threading.Thread(target=reader, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        c.ping()

    def test_name_checked_and_overridable(self):
        c = self.tls_client(server_name="localhost")  # the certificate's DNS name
        c.ping()
        with self.assertRaises(strata_kv.Error) as cm:
            self.server.client(tls=True, ca_file=self.cert, server_name="kv.example.com")
        self.assertIn("certificate verify failed", str(cm.exception))

    def test_untrusted_certificate_is_refused(self):
        with self.assertRaises(strata_kv.Error) as cm:
            self.server.client(tls=True)  # the system's trust store does not know it
        self.assertEqual(cm.exception.code, strata_kv.IO_ERROR)
        self.assertIn("certificate verify failed", str(cm.exception))

    def test_plain_client_gets_nothing(self):
        with self.assertRaises(strata_kv.Error) as cm:
            self.server.client(timeout_ms=10000)
        self.assertIn(cm.exception.code, (strata_kv.IO_ERROR, strata_kv.PROTOCOL_ERROR),
                      str(cm.exception))

    def test_tls10_and_tls11_are_refused(self):
        for version in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.load_verify_locations(self.cert)
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
            ctx.minimum_version = version
            ctx.maximum_version = version
            with socket.create_connection(("127.0.0.1", self.server.kv_port), timeout=10) as raw:
                with self.assertRaises(ssl.SSLError, msg=str(version)):
                    ctx.wrap_socket(raw, server_hostname="localhost")
        # TLS 1.2 and 1.3 are accepted.
        for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
            ctx = ssl.create_default_context(cafile=self.cert)
            ctx.minimum_version = ctx.maximum_version = version
            with socket.create_connection(("127.0.0.1", self.server.kv_port), timeout=10) as raw:
                with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                    self.assertEqual(s.version(), {ssl.TLSVersion.TLSv1_2: "TLSv1.2",
                                                   ssl.TLSVersion.TLSv1_3: "TLSv1.3"}[version])

    def test_adapter_connections_use_tls(self):
        opts = tls_options("true", self.cert)
        self.assertEqual(opts, {"tls": True, "ca_file": self.cert, "server_name": ""})
        self.assertEqual(tls_options(False, self.cert), {})
        kw = self.server.conn_kwargs()
        conn = NamespaceConnection(kw["host"], kw["port"], kw["access_key"], kw["secret_key"],
                                   descriptor(4096), tls=opts)
        self.addCleanup(conn.close)
        keys = chain_keys(2)
        self.assertEqual(conn.call("put", keys, None, random_blocks(2, 4096)), [strata_kv.OK] * 2)
        self.assertEqual(conn.call("lookup", keys), 2)

    def test_secure_transport_is_true_on_the_tls_listener_only(self):
        only_tls = kv_policy("strata:KvRead",
                             condition={"Bool": {"aws:SecureTransport": "true"}})
        u = make_user(self.server, unique_name("tlsonly")[:60], only_tls)
        c = self.server.client(access_key=u["ak"], secret_key=u["sk"], tls=True,
                               ca_file=self.cert)
        self.addCleanup(c.close)
        c.open_namespace(**descriptor(4096))  # allowed: the connection is TLS
        plain = KvServer().start()  # the same policy on a plain listener: denied
        self.addCleanup(plain.cleanup)
        u2 = make_user(plain, unique_name("tlsonly")[:60], only_tls)
        c2 = plain.client(access_key=u2["ak"], secret_key=u2["sk"])
        self.addCleanup(c2.close)
        with self.assertRaises(strata_kv.Error) as cm:
            c2.open_namespace(**descriptor(4096))
        self.assertEqual(cm.exception.code, strata_kv.DENIED)


if __name__ == "__main__":
    unittest.main()

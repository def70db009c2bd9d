"""The KV listener of a real `strata server` under idle and hostile clients:
threads and memory per idle connection, the connection-cap flags, reserved
kv-* bucket names over S3, and the root-secret length check."""
import os
import shutil
import socket
import subprocess
import tempfile
import unittest

import botocore.exceptions

import harness
from kvtest import KvServer, descriptor


def proc_status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def closed_by_server(sock, timeout=20):
    """True when the server ends the connection within `timeout` seconds."""
    sock.settimeout(timeout)
    try:
        while sock.recv(256):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


class KvListenerTest(unittest.TestCase):

    def start(self, *args):
        server = KvServer(extra_args=list(args)).start()
        self.addCleanup(server.cleanup)
        return server

    def test_idle_connections_cost_no_threads(self):
        server = self.start("--kv-max-connections-per-ip", "5000")
        pid = server.proc.pid
        with server.client() as c:  # warm up
            c.ping()
        threads, rss_kb = proc_status(pid, "Threads"), proc_status(pid, "VmRSS")
        socks = []
        self.addCleanup(lambda: [s.close() for s in socks])
        for _ in range(1500):
            socks.append(socket.create_connection(("127.0.0.1", server.kv_port)))
        with server.client() as c:  # served while they sit there; all accepted by now
            ns = c.open_namespace(**descriptor(4096))
            self.assertEqual(c.lookup(ns, [os.urandom(32)]), 0)
        grown_threads = proc_status(pid, "Threads") - threads
        grown_kb = proc_status(pid, "VmRSS") - rss_kb
        print(f"\n  1500 idle KV connections: +{grown_threads} threads, +{grown_kb} KiB RSS "
              f"({grown_kb * 1024 / 1500:.0f} B per connection)")
        self.assertLessEqual(grown_threads, 2)
        self.assertLess(grown_kb, 16 * 1024)  # was +374 MB with a thread and 256 KiB each

    def test_per_address_cap_flag(self):
        server = self.start("--kv-max-connections-per-ip", "2")
        held = [socket.create_connection(("127.0.0.1", server.kv_port)) for _ in range(2)]
        self.addCleanup(lambda: [s.close() for s in held])
        # Accepted in order: the third is over the cap.
        over = socket.create_connection(("127.0.0.1", server.kv_port))
        self.addCleanup(over.close)
        self.assertTrue(closed_by_server(over))
        other = socket.socket()
        self.addCleanup(other.close)
        other.bind(("127.0.0.2", 0))  # another source address is not capped
        other.connect(("127.0.0.1", server.kv_port))
        other.settimeout(0.5)
        with self.assertRaises(socket.timeout):
            other.recv(1)

    def test_s3_cannot_create_kv_buckets(self):
        server = self.start()
        s3 = server.boto3_client()
        self.addCleanup(s3.close)
        with self.assertRaises(botocore.exceptions.ClientError) as cm:
            s3.create_bucket(Bucket="kv-0123456789abcdef")
        err = cm.exception.response
        self.assertEqual(err["Error"]["Code"], "InvalidBucketName")
        self.assertEqual(err["ResponseMetadata"]["HTTPStatusCode"], 400)
        self.assertIn("reserved for the KV-cache tier", err["Error"]["Message"])
        s3.create_bucket(Bucket="my-kv-bucket")  # only the prefix is reserved
        # The tier still creates its own bucket, visible over S3.
        with server.client() as c:
            ns = c.open_namespace(**descriptor(4096))
        names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
        self.assertIn(ns.bucket, names)
        self.assertTrue(ns.bucket.startswith("kv-"))

    def test_short_root_secret_is_refused(self):
        data = tempfile.mkdtemp(prefix="strata-kv-short-")
        self.addCleanup(shutil.rmtree, data, ignore_errors=True)
        env = dict(os.environ, STRATA_ROOT_USER=harness.ACCESS_KEY,
                   STRATA_ROOT_PASSWORD="short-secret")
        r = subprocess.run([os.environ["STRATA_BIN"], "server", "--data", data, "--listen",
                            f"127.0.0.1:{harness.free_port()}", "--kv-listen", "off"],
                           env=env, capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("at least 16 characters", r.stderr)


if __name__ == "__main__":
    unittest.main()

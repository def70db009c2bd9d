"""Large objects stream through the server in bounded memory: the server's
peak resident set (VmHWM) stays far below the object size during a 768 MiB
PUT and GET."""
import hashlib
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import ServerTestCase, write_random_file  # noqa: E402

MiB = 1024 * 1024
SIZE = 768 * MiB
PEAK_LIMIT = 128 * MiB  # rocksdb + 64 idle workers + a few 1 MiB buffers (measured ~17 MiB)


def vm_hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def md5_file(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(4 * MiB), b""):
            h.update(chunk)
    return h.hexdigest()


class MemoryTest(ServerTestCase):
    def test_large_put_and_get_in_bounded_memory(self):
        tmp = tempfile.mkdtemp(prefix="strata-mem-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "big")
        write_random_file(path, SIZE)
        expected = md5_file(path)
        b = self.make_bucket("mem")
        with open(path, "rb") as f:
            r = self.s3.put_object(Bucket=b, Key="big", Body=f)
        self.assertEqual(r["ETag"].strip('"'), expected)
        got = hashlib.md5()
        stream = self.s3.get_object(Bucket=b, Key="big")["Body"]
        for chunk in iter(lambda: stream.read(4 * MiB), b""):
            got.update(chunk)
        self.assertEqual(got.hexdigest(), expected)
        peak = vm_hwm(self.server.proc.pid)
        self.assertLess(peak, PEAK_LIMIT,
                        f"server peak RSS {peak / MiB:.0f} MiB for a {SIZE // MiB} MiB object")


if __name__ == "__main__":
    unittest.main()

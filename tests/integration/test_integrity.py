"""Bitrot on the default single-directory store (`--data DIR`) against a real
server: a flipped bit in a data file fails the read (500 InternalError)
instead of being served; the undamaged blocks of the object still read.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_integrity.py -v
"""
import glob
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import ServerTestCase  # noqa: E402

BLOCK = 64 * 1024


class PlainStoreBitrotTest(ServerTestCase):
    def data_files(self):
        return set(glob.glob(os.path.join(self.server.data_dir, "objects", "*", "*")))

    def test_flipped_bit_is_never_served(self):
        self.s3.create_bucket(Bucket="rot")
        before = self.data_files()
        data = os.urandom(1 << 20)
        self.s3.put_object(Bucket="rot", Key="weights.bin", Body=data)
        (path,) = self.data_files() - before
        at = 5 * BLOCK + 123
        with open(path, "r+b") as f:
            f.seek(at)
            byte = f.read(1)
            f.seek(at)
            f.write(bytes([byte[0] ^ 0x01]))
        self.assertS3Error(self.s3.get_object, "InternalError", 500, Bucket="rot", Key="weights.bin")
        # A range inside the damaged block fails too; one elsewhere is served.
        self.assertS3Error(self.s3.get_object, "InternalError", 500, Bucket="rot",
                           Key="weights.bin", Range=f"bytes={at}-{at + 7}")
        ok = self.s3.get_object(Bucket="rot", Key="weights.bin", Range="bytes=0-65535")
        self.assertEqual(ok["Body"].read(), data[:BLOCK])
        self.assertIn("fails its CRC32C", self.server.read_log())
        self.assertServerHealthy()


if __name__ == "__main__":
    unittest.main()

"""strata_kv.crc32c, the CRC32C the KV protocol and S3's x-amz-checksum-crc32c use, and
strata.loader's verification of shards stored with a CRC32C (whole-object and composite per
part) through it (docs/model-loading.md)."""
import base64
import unittest

import numpy as np

import strata_kv
from strata import loader as L
from strata import safetensors_format as stf


def b64(v):
    return base64.b64encode(v.to_bytes(4, "big")).decode()


class Crc32cTest(unittest.TestCase):
    def test_known_values_and_extension(self):
        self.assertEqual(strata_kv.crc32c(b"123456789"), 0xE3069283)  # the check value
        self.assertEqual(strata_kv.crc32c(b""), 0)
        data = np.random.default_rng(1).integers(0, 256, 1 << 20, dtype=np.uint8)
        whole = strata_kv.crc32c(data)
        self.assertEqual(strata_kv.crc32c(data[1000:], strata_kv.crc32c(data[:1000])), whole)
        self.assertEqual(strata_kv.crc32c(memoryview(data.tobytes())), whole)
        with self.assertRaises(ValueError):
            strata_kv.crc32c(data[::2])  # not contiguous

    def shard(self, body, checksum, parts=None):
        s = L.Shard("x.safetensors")
        n = int.from_bytes(body[:8], "little")
        s.head, s.size = body[:8 + n], len(body)
        s.header = stf.parse_header(body[8:8 + n], len(body))
        s.checksum, s.parts = checksum, parts
        g = L.Group(s, 8 + n, len(body), s.header.tensors)
        g.buffer = bytearray(body[8 + n:])
        return s, [g]

    def test_loader_verifies_crc32c_whole_and_per_part(self):
        head = stf.build_header([("w", "U8", (5000,), 5000)])
        body = head + bytes(np.random.default_rng(2).integers(0, 256, 5000, dtype=np.uint8))
        s, groups = self.shard(body, ("CRC32C", b64(strata_kv.crc32c(body))))
        self.assertTrue(L._verify(s, groups))
        groups[0].buffer[7] ^= 1
        with self.assertRaises(L.ChecksumMismatch):
            L._verify(s, groups)
        # Composite: parts of 3000 and the rest; the object's value is the CRC32C of the
        # parts' big-endian CRCs, "-2".
        p1, p2 = body[:3000], body[3000:]
        c1, c2 = strata_kv.crc32c(p1), strata_kv.crc32c(p2)
        outer = strata_kv.crc32c(c1.to_bytes(4, "big") + c2.to_bytes(4, "big"))
        s, groups = self.shard(body, ("CRC32C", b64(outer) + "-2"),
                               [(len(p1), b64(c1)), (len(p2), b64(c2))])
        self.assertTrue(L._verify(s, groups))
        s, groups = self.shard(body, ("CRC32C", b64(outer) + "-2"),
                               [(len(p1), b64(c1 ^ 1)), (len(p2), b64(c2))])
        with self.assertRaisesRegex(L.ChecksumMismatch, "part 1"):
            L._verify(s, groups)


if __name__ == "__main__":
    unittest.main()

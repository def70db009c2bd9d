"""Pure-Python checksums for the S3 additional-checksum tests.

CRC32 (zlib), CRC32C (Castagnoli, reflected poly 0x82F63B78) and CRC64NVME
(reflected poly 0x9a6c9329ac4bc9b5, init/xorout all ones), table-driven
(slicing-by-8) so a few MiB take about a second. Plus the S3 encodings:
base64 of the big-endian raw value, COMPOSITE multipart checksums
("base64(H(raw1 || raw2 ...))-N") and the x-amz-checksum-* header names.

Check values: crc32c(b"123456789") == 0xE3069283,
crc64nvme(b"123456789") == 0xAE8B14860A799888.
"""
import base64
import hashlib
import struct
import zlib

_CRC32C_POLY = 0x82F63B78
_CRC64NVME_POLY = 0x9A6C9329AC4BC9B5
_MASK64 = 0xFFFFFFFFFFFFFFFF


def _tables(poly, count=8):
    t0 = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        t0.append(c)
    tables = [t0]
    for _ in range(1, count):
        prev = tables[-1]
        tables.append([(prev[i] >> 8) ^ t0[prev[i] & 0xFF] for i in range(256)])
    return tables


_T32C = _tables(_CRC32C_POLY)
_T64 = _tables(_CRC64NVME_POLY)


def _crc_reflected(data, crc, tables, width):
    """Slicing-by-8 update of a reflected CRC of `width` bits (32 or 64);
    `crc` is the internal register (already xored with init)."""
    t0, t1, t2, t3, t4, t5, t6, t7 = tables
    mv = memoryview(data).cast("B")
    n = len(mv)
    body = n - (n % 8)
    if body:
        words = struct.unpack_from("<%dQ" % (body // 8), mv, 0)
        if width == 32:
            for w in words:
                lo = (w & 0xFFFFFFFF) ^ crc
                hi = w >> 32
                crc = (t7[lo & 0xFF] ^ t6[(lo >> 8) & 0xFF] ^ t5[(lo >> 16) & 0xFF] ^ t4[lo >> 24] ^
                       t3[hi & 0xFF] ^ t2[(hi >> 8) & 0xFF] ^ t1[(hi >> 16) & 0xFF] ^ t0[hi >> 24])
        else:
            for w in words:
                x = w ^ crc
                crc = (t7[x & 0xFF] ^ t6[(x >> 8) & 0xFF] ^ t5[(x >> 16) & 0xFF] ^
                       t4[(x >> 24) & 0xFF] ^ t3[(x >> 32) & 0xFF] ^ t2[(x >> 40) & 0xFF] ^
                       t1[(x >> 48) & 0xFF] ^ t0[x >> 56])
    for b in mv[body:]:
        crc = t0[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def crc32(data, value=0):
    return zlib.crc32(data, value) & 0xFFFFFFFF


def crc32c(data, value=0):
    """CRC32C of data; pass a previous result as `value` to continue it."""
    return _crc_reflected(data, value ^ 0xFFFFFFFF, _T32C, 32) ^ 0xFFFFFFFF


def crc64nvme(data, value=0):
    """CRC64NVME of data; pass a previous result as `value` to continue it."""
    return _crc_reflected(data, value ^ _MASK64, _T64, 64) ^ _MASK64


# ---- S3 encodings -----------------------------------------------------------
ALGORITHMS = ("CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256")


def raw(algorithm, data):
    """The raw (big-endian bytes) checksum S3 base64-encodes."""
    a = algorithm.upper()
    if a == "CRC32":
        return struct.pack(">I", crc32(data))
    if a == "CRC32C":
        return struct.pack(">I", crc32c(data))
    if a == "CRC64NVME":
        return struct.pack(">Q", crc64nvme(data))
    if a == "SHA1":
        return hashlib.sha1(data).digest()
    if a == "SHA256":
        return hashlib.sha256(data).digest()
    raise ValueError(algorithm)


def b64(algorithm, data):
    """base64 checksum as sent in x-amz-checksum-<alg>."""
    return base64.b64encode(raw(algorithm, data)).decode()


def composite(algorithm, parts):
    """COMPOSITE multipart checksum: base64(H(raw(p1) || raw(p2) ...))-N."""
    joined = b"".join(raw(algorithm, p) for p in parts)
    return base64.b64encode(raw(algorithm, joined)).decode() + "-%d" % len(parts)


def header(algorithm):
    return "x-amz-checksum-" + algorithm.lower()


def response_key(algorithm):
    """The boto3 response / XML element name, e.g. ChecksumCRC32C."""
    return "Checksum" + algorithm.upper()


if __name__ == "__main__":  # self-check
    import os
    import time
    assert crc32c(b"123456789") == 0xE3069283
    assert crc64nvme(b"123456789") == 0xAE8B14860A799888
    assert crc32(b"123456789") == 0xCBF43926
    d = os.urandom(1000003)
    assert crc32c(d[500:], crc32c(d[:500])) == crc32c(d)
    assert crc64nvme(d[7:], crc64nvme(d[:7])) == crc64nvme(d)
    big = os.urandom(5 << 20)
    for f in (crc32c, crc64nvme):
        t = time.time()
        f(big)
        print(f.__name__, "5 MiB: %.2fs" % (time.time() - t))
    print("ok")

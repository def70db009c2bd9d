"""Direct writes (`--direct-writes on`, io/direct_writer.h): an object's data past its
first 8 MiB goes to the drive with O_DIRECT in aligned 2 MiB chunks, the unaligned tail
through the page cache. A real server, boto3:

  * single PUTs of sizes around the 8 MiB switch and the chunk boundaries, and a
    multipart upload with odd part sizes, read back byte for byte (whole and ranged
    GETs that straddle the boundaries), ETags as AWS computes them;
  * every acknowledged object is still whole after kill -9 and a restart (what was
    staged for a direct write was written and synced before the 200).

The data directory is under /var/tmp (a disk file system on Debian; where O_DIRECT is
refused, e.g. tmpfs, the server falls back to the page cache and the checks still hold).

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_direct_writes.py -v
"""
import hashlib
import os
import random
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import Server  # noqa: E402

MiB = 1 << 20
SWITCH = 8 * MiB
CHUNK = 2 * MiB
SIZES = [SWITCH - 1, SWITCH, SWITCH + 1, SWITCH + 3 * CHUNK + 4097, 27 * MiB + 5]
PARTS = [9 * MiB + 123, 6 * MiB, 5 * MiB + 7]
BUCKET = "direct"


def body(size, seed):
    return random.Random(seed).randbytes(size)


class DirectWritesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="strata-direct-", dir="/var/tmp")
        cls.server = Server(data_dir=os.path.join(cls.dir, "data"),
                            extra_args=["--direct-writes", "on", "--kv-listen", "off"]).start()
        cls.s3 = cls.server.boto3_client()
        cls.s3.create_bucket(Bucket=BUCKET)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)
        try:
            os.remove(cls.server.log_path)
        except OSError:
            pass

    def check_object(self, key, want):
        got = self.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        self.assertEqual(len(got), len(want), key)
        self.assertTrue(got == want, f"{key}: bytes differ")
        for start, end in [(SWITCH - 5, SWITCH + 5), (SWITCH + CHUNK - 1, SWITCH + 2 * CHUNK),
                           (len(want) - 4097, len(want) - 1), (0, 4095)]:
            if start < 0 or end >= len(want):
                continue
            part = self.s3.get_object(Bucket=BUCKET, Key=key, Range=f"bytes={start}-{end}")
            self.assertTrue(part["Body"].read() == want[start:end + 1], f"{key} {start}-{end}")

    def test_single_and_multipart_uploads_read_back_after_a_kill(self):
        written = {}
        for i, size in enumerate(SIZES):
            data = body(size, i)
            key = f"single-{size}"
            r = self.s3.put_object(Bucket=BUCKET, Key=key, Body=data)
            self.assertEqual(r["ETag"].strip('"'), hashlib.md5(data).hexdigest())
            written[key] = data
        parts = [body(n, 100 + i) for i, n in enumerate(PARTS)]
        up = self.s3.create_multipart_upload(Bucket=BUCKET, Key="multi")
        etags = []
        for n, p in enumerate(parts, 1):
            r = self.s3.upload_part(Bucket=BUCKET, Key="multi", UploadId=up["UploadId"],
                                    PartNumber=n, Body=p)
            self.assertEqual(r["ETag"].strip('"'), hashlib.md5(p).hexdigest())
            etags.append({"PartNumber": n, "ETag": r["ETag"]})
        r = self.s3.complete_multipart_upload(Bucket=BUCKET, Key="multi", UploadId=up["UploadId"],
                                              MultipartUpload={"Parts": etags})
        want_etag = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest()
        self.assertEqual(r["ETag"].strip('"'), f"{want_etag}-{len(parts)}")
        written["multi"] = b"".join(parts)
        for key, data in written.items():
            self.check_object(key, data)

        # Acknowledged means on the drive: kill -9, restart on the same directory.
        self.server.kill()
        self.server.start()
        type(self).s3 = self.server.boto3_client()
        for key, data in written.items():
            self.check_object(key, data)
        listed = {o["Key"]: o["Size"] for o in
                  self.s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])}
        self.assertEqual(listed, {k: len(v) for k, v in written.items()})


if __name__ == "__main__":
    unittest.main()

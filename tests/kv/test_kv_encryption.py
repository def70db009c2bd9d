"""Encrypted KV namespaces against a real strata server: a namespace opts in
through S3 PutBucketEncryption on its bucket (boto3); its blocks are then
stored encrypted (no plaintext anywhere under the data directory), read back
whole and in ranges through the KV protocol, after a restart too; an SSE-KMS
key disabled with `strata admin kms disable` makes its blocks DENIED in their
own results, and enabling it makes them readable again."""
import json
import os
import subprocess
import unittest

import numpy as np

import strata_kv
from kvtest import ACCESS_KEY, SECRET_KEY, KvTestCase, chain_keys, descriptor

BLOCK = 256 << 10
MARKER = b"KV-ENCRYPTED-PLAINTEXT-MARKER-01"


def marked_block(i):
    body = (MARKER + i.to_bytes(4, "little")) * (BLOCK // (len(MARKER) + 4) + 1)
    return np.frombuffer(body[:BLOCK], dtype=np.uint8).copy()


class KvEncryptionTest(KvTestCase):

    def setUp(self):
        super().setUp()
        self.c = self.server.client()
        self.addCleanup(self.c.close)
        self.s3 = self.server.boto3_client()
        self.addCleanup(self.s3.close)

    def kms(self, *args):
        env = dict(os.environ, STRATA_ROOT_USER=ACCESS_KEY, STRATA_ROOT_PASSWORD=SECRET_KEY)
        r = subprocess.run([self.server.bin, "admin", "kms", *args, "--endpoint", self.server.endpoint],
                           capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout) if r.stdout.strip().startswith("{") else r.stdout

    def encrypt_bucket(self, bucket, algorithm, key=None):
        rule = {"SSEAlgorithm": algorithm}
        if key:
            rule["KMSMasterKeyID"] = key
        self.s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={
            "Rules": [{"ApplyServerSideEncryptionByDefault": rule}]})
        got = self.s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]
        self.assertEqual(got["Rules"][0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"], algorithm)

    def test_sse_s3_namespace_has_no_plaintext_at_rest(self):
        desc = descriptor(BLOCK)
        handle = self.c.open_namespace(**desc)
        self.encrypt_bucket(handle.bucket, "AES256")
        keys = chain_keys(3)
        blocks = [marked_block(i) for i in range(3)]
        self.assertEqual(self.c.put(handle, keys, [None] + keys[:-1], blocks), [strata_kv.OK] * 3)
        dst = [np.zeros(BLOCK, np.uint8) for _ in range(3)]
        self.assertEqual(self.c.get_into(handle, keys, dst), [strata_kv.OK] * 3)
        for got, want in zip(dst, blocks):
            np.testing.assert_array_equal(got, want)
        part = np.zeros(100000, np.uint8)  # across the 64 KiB chunks
        self.assertEqual(self.c.get_into(handle, [keys[1]], [part], offsets=[60000]), [strata_kv.OK])
        np.testing.assert_array_equal(part, blocks[1][60000:160000])
        head = self.s3.head_object(Bucket=handle.bucket, Key=self.s3.list_objects_v2(
            Bucket=handle.bucket)["Contents"][0]["Key"])
        self.assertEqual(head["ServerSideEncryption"], "AES256")
        # Stopped: no file under the data directory holds the blocks' bytes.
        self.c.close()
        self.server.stop()
        for root, _, files in os.walk(self.server.data_dir):
            for f in files:
                with open(os.path.join(root, f), "rb") as fh:
                    self.assertNotIn(MARKER, fh.read(), os.path.join(root, f))
        self.server.restart()
        self.c = self.server.client()
        self.addCleanup(self.c.close)
        handle = self.c.open_namespace(**desc)
        dst = np.zeros(BLOCK, np.uint8)
        self.assertEqual(self.c.get_into(handle, [keys[2]], [dst]), [strata_kv.OK])
        np.testing.assert_array_equal(dst, blocks[2])

    def test_disabled_kms_key_denies_its_blocks(self):
        key = self.kms("create-key", "--alias", "alias/kv-encrypted-" + os.urandom(4).hex())
        handle = self.c.open_namespace(**descriptor(BLOCK))
        self.encrypt_bucket(handle.bucket, "aws:kms", key["arn"])
        keys = chain_keys(2)
        blocks = [marked_block(10), marked_block(11)]
        self.assertEqual(self.c.put(handle, keys, None, blocks), [strata_kv.OK] * 2)
        self.kms("disable", key["key_id"])
        dst = [np.zeros(BLOCK, np.uint8) for _ in range(2)]
        self.assertEqual(self.c.get_into(handle, keys, dst), [strata_kv.DENIED] * 2)
        self.assertFalse(dst[0].any())
        self.assertEqual(self.c.put(handle, chain_keys(1), None, [marked_block(12)]), [strata_kv.DENIED])
        self.kms("enable", key["key_id"])
        self.assertEqual(self.c.get_into(handle, keys, dst), [strata_kv.OK] * 2)
        np.testing.assert_array_equal(dst[1], blocks[1])


if __name__ == "__main__":
    unittest.main()

"""Listing at scale: 10,000 keys in 200 'directories', listed in pages with and
without a delimiter (V2 continuation tokens and V1 markers). Every key and
every common prefix must come back exactly once, in byte order."""
import os
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import ServerTestCase  # noqa: E402

DIRS = 200
PER_DIR = 50
TOP_LEVEL = ["aaa-top", "dir-top", "zzz-top"]  # keys outside any directory


def key_of(i):
    return f"dir{i // PER_DIR:03d}/file{i:05d}"


class ListingScaleTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bucket = "scale-listing"
        cls.s3.create_bucket(Bucket=cls.bucket)
        cls.keys = sorted([key_of(i) for i in range(DIRS * PER_DIR)] + TOP_LEVEL)
        assert len(cls.keys) == 10003
        cls.prefixes = [f"dir{d:03d}/" for d in range(DIRS)]
        client = cls.server.boto3_client(max_pool_connections=16)

        def put(k):
            client.put_object(Bucket=cls.bucket, Key=k, Body=k.encode())

        with ThreadPoolExecutor(16) as pool:
            list(pool.map(put, cls.keys))  # re-raises the first failure
        client.close()

    # ---- helpers -----------------------------------------------------------
    def v2_pages(self, **kw):
        pages, token = [], None
        while True:
            args = dict(Bucket=self.bucket, **kw)
            if token:
                args["ContinuationToken"] = token
            r = self.s3.list_objects_v2(**args)
            keys = [o["Key"] for o in r.get("Contents", [])]
            prefixes = [p["Prefix"] for p in r.get("CommonPrefixes", [])]
            self.assertEqual(r["KeyCount"], len(keys) + len(prefixes))
            self.assertLessEqual(len(keys) + len(prefixes), kw.get("MaxKeys", 1000))
            self.assertEqual(keys, sorted(keys))
            self.assertEqual(prefixes, sorted(prefixes))
            pages.append((keys, prefixes, r["IsTruncated"]))
            self.assertLess(len(pages), 20000, "pagination does not terminate")
            if not r["IsTruncated"]:
                self.assertNotIn("NextContinuationToken", r)
                return pages
            token = r["NextContinuationToken"]

    def v1_pages(self, **kw):
        pages, marker = [], ""
        while True:
            r = self.s3.list_objects(Bucket=self.bucket, Marker=marker, **kw)
            keys = [o["Key"] for o in r.get("Contents", [])]
            prefixes = [p["Prefix"] for p in r.get("CommonPrefixes", [])]
            self.assertLessEqual(len(keys) + len(prefixes), kw.get("MaxKeys", 1000))
            pages.append((keys, prefixes, r["IsTruncated"]))
            self.assertLess(len(pages), 20000, "pagination does not terminate")
            if not r["IsTruncated"]:
                return pages
            last = max(keys + prefixes)
            if "Delimiter" in kw:
                self.assertEqual(r["NextMarker"], last)
            elif "NextMarker" in r:
                self.assertEqual(r["NextMarker"], last)
            marker = r.get("NextMarker", last)

    @staticmethod
    def flatten(pages):
        return [x for keys, prefixes, _ in pages for x in sorted(keys + prefixes)]

    # ---- tests ---------------------------------------------------------------
    def test_v2_pages_of_1000_without_delimiter(self):
        pages = self.v2_pages(MaxKeys=1000)
        self.assertEqual(len(pages), 11)
        self.assertEqual([len(k) for k, _, _ in pages], [1000] * 10 + [3])
        self.assertEqual([t for _, _, t in pages], [True] * 10 + [False])
        self.assertTrue(all(not p for _, p, _ in pages))
        got = self.flatten(pages)
        self.assertEqual(len(got), len(set(got)))
        self.assertEqual(got, self.keys)

    def test_v2_default_page_size(self):
        r = self.s3.list_objects_v2(Bucket=self.bucket)
        self.assertEqual(r["MaxKeys"], 1000)
        self.assertEqual(r["KeyCount"], 1000)
        self.assertTrue(r["IsTruncated"])
        self.assertEqual([o["Key"] for o in r["Contents"]], self.keys[:1000])

    def test_v2_pages_with_delimiter(self):
        pages = self.v2_pages(MaxKeys=1000, Delimiter="/")
        self.assertEqual(len(pages), 1)
        keys, prefixes, truncated = pages[0]
        self.assertFalse(truncated)
        self.assertEqual(prefixes, self.prefixes)
        self.assertEqual(keys, TOP_LEVEL)

    def test_v2_small_pages_with_delimiter(self):
        pages = self.v2_pages(MaxKeys=7, Delimiter="/")
        got = self.flatten(pages)
        self.assertEqual(got, sorted(self.prefixes + TOP_LEVEL))
        self.assertEqual(len(pages), -(-(DIRS + len(TOP_LEVEL)) // 7))
        self.assertEqual(sorted(p for _, ps, _ in pages for p in ps), self.prefixes)

    def test_v2_prefix_and_delimiter_inside_directory(self):
        for d in [0, 57, DIRS - 1]:
            with self.subTest(dir=d):
                prefix = f"dir{d:03d}/"
                pages = self.v2_pages(MaxKeys=1000, Prefix=prefix, Delimiter="/")
                self.assertEqual(len(pages), 1)
                self.assertEqual(pages[0][1], [])
                self.assertEqual(pages[0][0], [k for k in self.keys if k.startswith(prefix)])
                self.assertEqual(len(pages[0][0]), PER_DIR)

    def test_v2_prefix_paging(self):
        pages = self.v2_pages(MaxKeys=333, Prefix="dir1")  # dir100..dir199
        expected = [k for k in self.keys if k.startswith("dir1")]
        self.assertEqual(len(expected), 100 * PER_DIR)
        self.assertEqual(self.flatten(pages), expected)
        self.assertEqual(len(pages), -(-len(expected) // 333))

    def test_v2_start_after_paging(self):
        start = key_of(4321)
        pages = self.v2_pages(MaxKeys=1000, StartAfter=start)
        self.assertEqual(self.flatten(pages), [k for k in self.keys if k > start])

    def test_v2_paginator(self):
        pager = self.s3.get_paginator("list_objects_v2")
        got = [o["Key"] for p in pager.paginate(Bucket=self.bucket, PaginationConfig={"PageSize": 1000})
               for o in p.get("Contents", [])]
        self.assertEqual(got, self.keys)

    def test_v1_marker_paging_without_delimiter(self):
        pages = self.v1_pages(MaxKeys=1000)
        self.assertEqual([len(k) for k, _, _ in pages], [1000] * 10 + [3])
        got = self.flatten(pages)
        self.assertEqual(len(got), len(set(got)))
        self.assertEqual(got, self.keys)

    def test_v1_marker_paging_with_delimiter(self):
        pages = self.v1_pages(MaxKeys=1000, Delimiter="/")
        self.assertEqual(len(pages), 1)
        self.assertEqual(pages[0][1], self.prefixes)
        self.assertEqual(pages[0][0], TOP_LEVEL)
        pages = self.v1_pages(MaxKeys=9, Delimiter="/")
        self.assertEqual(self.flatten(pages), sorted(self.prefixes + TOP_LEVEL))
        self.assertEqual(len(pages), -(-(DIRS + len(TOP_LEVEL)) // 9))

    def test_v1_paginator_with_delimiter(self):
        pager = self.s3.get_paginator("list_objects")
        pages = list(pager.paginate(Bucket=self.bucket, Delimiter="/", PaginationConfig={"PageSize": 50}))
        self.assertEqual([p["Prefix"] for pg in pages for p in pg.get("CommonPrefixes", [])], self.prefixes)
        self.assertEqual([o["Key"] for pg in pages for o in pg.get("Contents", [])], TOP_LEVEL)

    def test_objects_are_readable(self):
        for k in [self.keys[0], self.keys[5000], self.keys[-1], key_of(9999)]:
            self.assertEqual(self.get_body(self.bucket, k), k.encode())
        self.assertServerHealthy()

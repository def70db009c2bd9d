#!/usr/bin/python3
"""Instructions per signed 4 KiB PUT, server side (all its threads, RocksDB's
flushes and compactions included), counted by callgrind: new keys into a
never-versioned bucket, and new versions of 8 keys in a versioned one (what
the metadata path costs per small write). Counts are repeatable where
wall-clock runs on shared cores are not.

  bench/callgrind_put.py [STRATA_BIN] [N] [KEEP_DIR]   (default build/strata, 300)

With KEEP_DIR the callgrind dumps are kept there (for callgrind_annotate).
"""
import itertools
import os

from callgrind_util import CallgrindServer, cli_args

binary, n, keep = cli_args(300)
with CallgrindServer(binary, keep) as srv:
    s3 = srv.boto3()
    s3.create_bucket(Bucket="cgplain")
    s3.create_bucket(Bucket="cgversioned")
    s3.put_bucket_versioning(Bucket="cgversioned",
                             VersioningConfiguration={"Status": "Enabled"})
    body = os.urandom(4096)
    seq = itertools.count()
    for _ in range(20):  # warm up
        s3.put_object(Bucket="cgplain", Key=f"warm/{next(seq)}", Body=body)
        s3.put_object(Bucket="cgversioned", Key=f"k{next(seq) % 8}", Body=body)
    srv.measure("new keys, unversioned", n,
                lambda: s3.put_object(Bucket="cgplain", Key=f"o/{next(seq)}", Body=body))
    srv.measure("new versions, 8 keys", n,
                lambda: s3.put_object(Bucket="cgversioned", Key=f"k{next(seq) % 8}", Body=body))
for k, v in srv.results.items():
    print(f"{k:24s} {v / 1000:8.1f}k instructions per PUT")

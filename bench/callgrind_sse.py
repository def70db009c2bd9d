#!/usr/bin/python3
"""Instructions per signed 4 KiB GET, server side, counted by callgrind: an
unencrypted object vs an SSE-S3 one (what encryption adds per small read).
Counts are repeatable where wall-clock runs on shared cores are not.

  bench/callgrind_sse.py [STRATA_BIN] [N] [KEEP_DIR]   (default build/strata, 300)

With KEEP_DIR the callgrind dumps are kept there (for callgrind_annotate).
"""
import os

from callgrind_util import CallgrindServer, cli_args

binary, n, keep = cli_args(300)
with CallgrindServer(binary, keep) as srv:
    s3 = srv.boto3()
    s3.create_bucket(Bucket="cgbucket")
    body = os.urandom(4096)
    s3.put_object(Bucket="cgbucket", Key="plain", Body=body)
    s3.put_object(Bucket="cgbucket", Key="sse", Body=body, ServerSideEncryption="AES256")
    for key in ("plain", "sse"):
        for _ in range(20):
            assert s3.get_object(Bucket="cgbucket", Key=key)["Body"].read() == body  # warm up
    for name, key in (("unencrypted", "plain"), ("SSE-S3", "sse")):
        srv.measure(name, n, lambda: s3.get_object(Bucket="cgbucket", Key=key)["Body"].read())
for k, v in srv.results.items():
    print(f"{k:20s} {v / 1000:8.1f}k instructions per GET")
vals = list(srv.results.values())
if len(vals) == 2:
    print(f"SSE-S3/unencrypted rate by instructions: {vals[0] / vals[1] * 100:.1f} %")

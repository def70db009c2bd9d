#!/usr/bin/python3
"""Instructions per signed 4 KiB GET, server side, counted by callgrind:
root on a bucket without a policy vs a user allowed only by a 20-statement
bucket policy (the statements of s3bench's access group). Counts are
repeatable where wall-clock runs on shared cores are not.

  bench/callgrind_access.py [STRATA_BIN] [N]     (default build/strata, 300)

Starts strata under `valgrind --tool=callgrind --instr-atstart=no`, sets up
both buckets with boto3 (Debian's /usr/bin/python3), then for each phase
zeroes the counters, turns instrumentation on for N GETs, off, and dumps.
"""
import json
import os
import sys

from callgrind_util import CallgrindServer, harness, root

binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "strata")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
with CallgrindServer(binary) as srv:
    s3 = srv.boto3()
    user = harness.make_user(srv, "bench-reader")
    s3.create_bucket(Bucket="plain")
    s3.create_bucket(Bucket="pol")
    statements = []
    for i in range(20):
        last = i == 19
        statements.append({
            "Sid": f"s{i}", "Effect": "Allow" if last else "Deny", "Principal": {"AWS": user["arn"]},
            "Action": ["s3:GetObject", "s3:GetObjectVersion"], "Resource": "arn:aws:s3:::pol/*",
            "Condition": {("IpAddress" if last else "NotIpAddress"): {"aws:SourceIp": [f"10.{i}.0.0/16", "127.0.0.0/8"]},
                          "StringEquals": {"s3:signatureversion": "AWS4-HMAC-SHA256"},
                          "Bool": {"aws:SecureTransport": "false"},
                          "StringNotEquals": {"s3:x-amz-server-side-encryption": "aws:kms"}}})
    s3.put_bucket_policy(Bucket="pol", Policy=json.dumps({"Version": "2012-10-17", "Statement": statements}))
    body = os.urandom(4096)
    for b in ("plain", "pol"):
        s3.put_object(Bucket=b, Key="k", Body=body)
    as_user = srv.boto3(access_key=user["ak"], secret_key=user["sk"])
    for client, bucket in ((s3, "plain"), (as_user, "pol")):
        for _ in range(20):
            client.get_object(Bucket=bucket, Key="k")["Body"].read()  # warm up
    for name, client, bucket in (("root, no policy", s3, "plain"), ("user via 20-statement policy", as_user, "pol")):
        srv.measure(name, n, lambda: client.get_object(Bucket=bucket, Key="k")["Body"].read())
for k, v in srv.results.items():
    print(f"{k:40s} {v / 1000:8.1f}k instructions per GET")
vals = list(srv.results.values())
if len(vals) == 2:
    print(f"user/root rate by instructions: {vals[0] / vals[1] * 100:.1f} %")

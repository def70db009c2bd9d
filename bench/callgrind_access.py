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
import shutil
import socket
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "integration"))
import harness  # noqa: E402

binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "strata")
n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
work = tempfile.mkdtemp(prefix="strata-cg-")
port = harness.free_port()
env = dict(os.environ, STRATA_ROOT_USER=harness.ACCESS_KEY, STRATA_ROOT_PASSWORD=harness.SECRET_KEY)
out = os.path.join(work, "cg.out")
p = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                      binary, "server", "--data", os.path.join(work, "data"), "--listen", f"127.0.0.1:{port}",
                      "--kv-listen", "off", "--workers", "4"],
                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            break
        except OSError:
            time.sleep(0.2)

    class Endpoint:
        endpoint = f"http://127.0.0.1:{port}"
        port = 0
    srv = Endpoint()
    srv.port = port
    s3 = harness.Server.boto3_client(srv)
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
    as_user = harness.Server.boto3_client(srv, access_key=user["ak"], secret_key=user["sk"])
    for client, bucket in ((s3, "plain"), (as_user, "pol")):
        for _ in range(20):
            client.get_object(Bucket=bucket, Key="k")["Body"].read()  # warm up
    results = {}
    for name, client, bucket in (("root, no policy", s3, "plain"), ("user via 20-statement policy", as_user, "pol")):
        ctl = lambda *a: subprocess.run(["callgrind_control", *a, str(p.pid)], capture_output=True)  # noqa: E731
        ctl("-z")
        ctl("-i", "on")
        for _ in range(n):
            client.get_object(Bucket=bucket, Key="k")["Body"].read()
        ctl("-i", "off")
        ctl("-d", name.replace(" ", "_"))
    p.terminate()
    p.wait()
    dumps = sorted(f for f in os.listdir(work) if f.startswith("cg.out.") and not f.endswith(str(p.pid)))
    for f in dumps:
        text = open(os.path.join(work, f)).read()
        trigger = [l for l in text.splitlines() if l.startswith("desc: Trigger")]
        total = [l for l in text.splitlines() if l.startswith("totals:")]
        if trigger and total:
            results[trigger[0].split("dump ", 1)[-1]] = int(total[0].split()[1]) / n
    for k, v in results.items():
        label = k.replace("_", " ")
        print(f"{label:40s} {v / 1000:8.1f}k instructions per GET")
    vals = list(results.values())
    if len(vals) == 2:
        print(f"user/root rate by instructions: {vals[0] / vals[1] * 100:.1f} %")
finally:
    if p.poll() is None:
        p.kill()
    shutil.rmtree(work, ignore_errors=True)

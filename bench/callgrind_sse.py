#!/usr/bin/python3
"""Instructions per signed 4 KiB GET, server side, counted by callgrind: an
unencrypted object vs an SSE-S3 one (what encryption adds per small read).

  bench/callgrind_sse.py [STRATA_BIN] [N] [KEEP_DIR]   (default build/strata, 300)

As bench/callgrind_access.py: strata under `valgrind --tool=callgrind
--instr-atstart=no`, N GETs per phase with instrumentation on. With KEEP_DIR
the dumps are kept there for callgrind_annotate.
"""
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
keep = sys.argv[3] if len(sys.argv) > 3 else None
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
    s3 = harness.Server.boto3_client(Endpoint())
    s3.create_bucket(Bucket="cgbucket")
    body = os.urandom(4096)
    s3.put_object(Bucket="cgbucket", Key="plain", Body=body)
    s3.put_object(Bucket="cgbucket", Key="sse", Body=body, ServerSideEncryption="AES256")
    for key in ("plain", "sse"):
        for _ in range(20):
            assert s3.get_object(Bucket="cgbucket", Key=key)["Body"].read() == body  # warm up
    results = {}
    for name, key in (("unencrypted", "plain"), ("SSE-S3", "sse")):
        ctl = lambda *a: subprocess.run(["callgrind_control", *a, str(p.pid)], capture_output=True)  # noqa: E731
        ctl("-z")
        ctl("-i", "on")
        for _ in range(n):
            s3.get_object(Bucket="cgbucket", Key=key)["Body"].read()
        ctl("-i", "off")
        ctl("-d", name)
    p.terminate()
    p.wait()
    dumps = sorted(f for f in os.listdir(work) if f.startswith("cg.out.") and not f.endswith(str(p.pid)))
    for f in dumps:
        text = open(os.path.join(work, f)).read()
        trigger = [l for l in text.splitlines() if l.startswith("desc: Trigger")]
        total = [l for l in text.splitlines() if l.startswith("totals:")]
        if trigger and total:
            results[trigger[0].split("dump ", 1)[-1]] = int(total[0].split()[1]) / n
        if keep:
            os.makedirs(keep, exist_ok=True)
            shutil.copy(os.path.join(work, f), keep)
    for k, v in results.items():
        print(f"{k:20s} {v / 1000:8.1f}k instructions per GET")
    vals = list(results.values())
    if len(vals) == 2:
        print(f"SSE-S3/unencrypted rate by instructions: {vals[0] / vals[1] * 100:.1f} %")
finally:
    if p.poll() is None:
        p.kill()
    shutil.rmtree(work, ignore_errors=True)

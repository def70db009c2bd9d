#!/usr/bin/python3
"""Time per GET of one object of each size, fetched by curl over one keep-alive
connection through a presigned URL (curl writes to /dev/null: the client
costs little). What a GET costs by object size, server side, outside s3bench.

  bench/get_sizes.py [STRATA_BIN] [SIZE_MIB:COUNT ...]   (default build/strata 2:400 256:12)

Compare two binaries by running it against each, alternately, a few times.
"""
import os
import subprocess
import sys
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "integration"))
if len(sys.argv) > 1:
    os.environ["STRATA_BIN"] = os.path.abspath(sys.argv[1])
import harness  # noqa: E402

cases = [tuple(float(x) for x in a.split(":")) for a in sys.argv[2:]] or [(2, 400), (256, 12)]
server = harness.Server(extra_args=["--kv-listen", "off"]).start()
try:
    s3 = server.boto3_client()
    s3.create_bucket(Bucket="get-sizes")
    for mib, count in cases:
        size, key = int(mib * (1 << 20)), f"o{mib}"
        s3.put_object(Bucket="get-sizes", Key=key, Body=os.urandom(size))
        url = s3.generate_presigned_url("get_object", Params={"Bucket": "get-sizes", "Key": key},
                                        ExpiresIn=3600)
        args = ["curl", "-s", "--fail"]
        for _ in range(int(count)):
            args += ["-o", "/dev/null", url]
        t0 = time.time()
        subprocess.run(args, check=True)
        dt = time.time() - t0
        print(f"GET {mib:g} MiB: {dt / count * 1000:.2f} ms each, {size * count / dt / 1e9:.2f} GB/s")
finally:
    server.stop()
    server.cleanup()

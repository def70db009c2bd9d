#!/usr/bin/python3
"""Instructions per signed 4 KiB PUT, server side, counted by callgrind: a
server with the audit trail on (the default) vs one with --audit off (what
the trail adds per mutating request). Counts are repeatable where wall-clock
runs on shared cores are not. The servers run one after the other.

  bench/callgrind_audit.py [STRATA_BIN] [N] [KEEP_DIR]   (default build/strata, 200)

With KEEP_DIR the callgrind dumps are kept there (for callgrind_annotate).
"""
import os

from callgrind_util import CallgrindServer, cli_args

binary, n, keep = cli_args(200)
results = {}
for name, extra in (("audit off", ["--audit", "off"]), ("audit on", [])):
    with CallgrindServer(binary, keep and os.path.join(keep, name.replace(" ", "_")),
                         extra_args=extra) as srv:
        s3 = srv.boto3()
        s3.create_bucket(Bucket="cgbucket")
        body = os.urandom(4096)
        for i in range(20):
            s3.put_object(Bucket="cgbucket", Key=f"warm/{i}", Body=body)  # warm up
        count = iter(range(n))
        srv.measure(name, n, lambda: s3.put_object(Bucket="cgbucket", Key=f"k/{next(count)}", Body=body))
    results.update(srv.results)
for k, v in results.items():
    print(f"{k:12s} {v / 1000:8.1f}k instructions per PUT")
if len(results) == 2:
    off, on = results["audit off"], results["audit on"]
    print(f"audit on / off rate by instructions: {off / on * 100:.1f} %")

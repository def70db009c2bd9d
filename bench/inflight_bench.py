#!/usr/bin/python3
"""512 ranged GETs in flight at once (issue 16): how long each waits for its first byte, how
long it goes without progress, how long it takes, against a strata server.

    bench/inflight_bench.py --strata build/strata [--requests 512] [--objects 64] [--runs 3]
                            [--drives 6]   (erasure-coded objects: read through ReadAhead, not sendfile)

Starts its own server (harness.Server: fresh data directory, loopback port), stores
`--objects` objects of `--requests / --objects` × 8 MiB each, then per run opens `--requests`
keep-alive connections, sends one signed 8 MiB ranged GET on each at the same moment, and
reads every reply in one thread with a selector: each round takes at most `--recv-kib` (64)
from every connection with bytes waiting, into one reused buffer, so the client spends little
CPU per byte, never clears fresh pages, and does not itself leave a connection unread for long
(with 1 MiB per receive, one round over 512 ready connections took more than a second of the
client's hashing). Per request it records: the time to
the first byte of the reply, the longest gap between two receives after that (a loader's
stall timeout, Run:ai's 1 s, fires on such a gap or on the wait for the first byte), and the
time to the last byte. Every reply must be 206 with exactly 8 MiB; the bytes are checked
against the stored objects by a digest.

Also printed: the server's threads at most during the run (from /proc), since a worker that
waits on a slow reader hands its running slot to another thread (http/server.h).
"""
import argparse
import hashlib
import os
import selectors
import shutil
import socket
import statistics
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(ROOT, "tests", "integration")]

import harness  # noqa: E402
from botocore.auth import S3SigV4Auth  # noqa: E402
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402

MiB = 1 << 20
RANGE = 8 * MiB


def signed_head(endpoint, creds, bucket, key, start, n):
    path = f"/{bucket}/{urllib.parse.quote(key)}"
    req = AWSRequest(method="GET", url=endpoint + path,
                     headers={"Range": f"bytes={start}-{start + n - 1}",
                              "Host": urllib.parse.urlsplit(endpoint).netloc})
    S3SigV4Auth(creds, "s3", "us-east-1").add_auth(req)
    return (f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in req.headers.items())
            + "\r\n").encode()


class Reply:
    def __init__(self, sock, expect_digest):
        self.sock, self.expect = sock, expect_digest
        self.head = b""
        self.body_left = None
        self.digest = hashlib.blake2b()
        self.sent = self.first = self.last = None
        self.max_gap = 0.0
        self.status = None

    def feed(self, data, now):
        if self.first is None:
            self.first = now
        elif self.last is not None:
            self.max_gap = max(self.max_gap, now - self.last)
        self.last = now
        if self.body_left is None:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return False
            head, data = self.head[:end].decode("latin-1"), self.head[end + 4:]
            self.status = int(head.split(" ", 2)[1])
            length = [int(line.split(":", 1)[1]) for line in head.split("\r\n")[1:]
                      if line.lower().startswith("content-length:")]
            self.body_left = length[0] if length else 0
        self.digest.update(data)
        self.body_left -= len(data)
        return self.body_left <= 0


def server_threads(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def one_run(server, creds, jobs, recv_bytes):
    """jobs: [(bucket, key, start, digest)]; per-request (first byte, max gap, total) seconds."""
    socks = [socket.create_connection(("127.0.0.1", server.port)) for _ in jobs]
    heads = [signed_head(server.endpoint, creds, b, k, s, RANGE) for b, k, s, _ in jobs]
    sel = selectors.DefaultSelector()
    replies = {}
    buf = bytearray(recv_bytes)
    view = memoryview(buf)
    threads, next_sample = 0, 0.0
    t0 = time.monotonic()
    for s, h, (_, _, _, d) in zip(socks, heads, jobs):
        sent = time.monotonic()
        s.sendall(h)
        s.setblocking(False)
        replies[s] = Reply(s, d)
        replies[s].sent = sent
        sel.register(s, selectors.EVENT_READ)
    left = len(socks)
    while left:
        now = time.monotonic()
        if now >= next_sample:
            threads, next_sample = max(threads, server_threads(server.proc.pid)), now + 0.05
        for key, _ in sel.select(timeout=30):
            s = key.fileobj
            try:
                n = s.recv_into(view)
            except BlockingIOError:
                continue
            r = replies[s]
            if n == 0:
                raise RuntimeError("the server closed a connection before its reply ended")
            if r.feed(bytes(view[:n]) if r.body_left is None else view[:n], time.monotonic()):
                sel.unregister(s)
                left -= 1
    out = []
    for s in socks:
        r = replies[s]
        if r.status != 206 or r.body_left != 0 or r.digest.digest() != r.expect:
            raise RuntimeError(f"bad reply: status {r.status}, {r.body_left} bytes short or over, "
                               f"digest {'ok' if r.digest.digest() == r.expect else 'wrong'}")
        # Times from the request's own send: the client's send loop, which the server's
        # threads preempt on these 2 cores, is not the server's wait.
        out.append((r.first - r.sent, r.max_gap, r.last - r.sent, r.sent - t0))
        s.close()
    return out, threads


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--strata", required=True)
    p.add_argument("--requests", type=int, default=512)
    p.add_argument("--objects", type=int, default=64)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--workers", type=int, default=0, help="the server's --workers (0: its default)")
    p.add_argument("--drives", type=int, default=0,
                   help="erasure-code over this many drive directories (the server's default k+m)")
    p.add_argument("--recv-kib", type=int, default=64, help="the most read from one connection per round")
    a = p.parse_args()
    os.environ["STRATA_BIN"] = os.path.abspath(a.strata)
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    per_object = -(-a.requests // a.objects)
    work = tempfile.mkdtemp(prefix="strata-inflight-")
    extra = ["--kv-listen", "off"] + (["--workers", str(a.workers)] if a.workers else [])
    if a.drives:
        drives = [os.path.join(work, f"drive{i}") for i in range(a.drives)]
        for d in drives:
            os.makedirs(d)
        extra += ["--drives", ",".join(drives)]
    server = harness.Server(data_dir=os.path.join(work, "data"), extra_args=extra).start()
    try:
        s3 = server.boto3_client()
        s3.create_bucket(Bucket="inflight")
        jobs = []
        for i in range(a.objects):
            body = hashlib.shake_256(f"object {i}".encode()).digest(per_object * RANGE)
            s3.put_object(Bucket="inflight", Key=f"o{i}", Body=body)
            for j in range(per_object):
                if len(jobs) < a.requests:
                    jobs.append(("inflight", f"o{i}", j * RANGE,
                                 hashlib.blake2b(body[j * RANGE:(j + 1) * RANGE]).digest()))
        creds = Credentials(harness.ACCESS_KEY, harness.SECRET_KEY)
        one_run(server, creds, jobs[:8], a.recv_kib << 10)  # warm: the objects are in the page cache already
        print(f"{len(jobs)} ranged GETs of 8 MiB at once over {len(jobs)} connections, "
              f"{a.objects} objects; server workers: {a.workers or 'default'}; drives: {a.drives or 'one data dir'}; "
              f"{os.cpu_count()} CPUs; {a.recv_kib} KiB per receive; {a.runs} runs")
        print(f"{'run':>4} {'GB/s':>6} {'first byte p50/p99/max s':>26} {'longest gap max s':>18} "
              f"{'waited > 1 s for a byte':>24} {'total p50/max s':>16} {'server threads':>15} "
              f"{'send loop s':>12}")
        print("(first byte and total are timed from each request's own send)")
        for r in range(a.runs):
            res, threads = one_run(server, creds, jobs, a.recv_kib << 10)
            first = sorted(x[0] for x in res)
            gaps = [x[1] for x in res]
            total = sorted(x[2] for x in res)
            waited = sum(1 for f, g, _, _ in res if max(f, g) > 1.0)
            gbs = len(jobs) * RANGE / max(x[2] + x[3] for x in res) / 1e9
            send_loop = max(x[3] for x in res)
            print(f"{r + 1:>4} {gbs:6.2f} {statistics.median(first):8.3f} "
                  f"{first[int(len(first) * 0.99) - 1]:8.3f} {first[-1]:8.3f} {max(gaps):18.3f} "
                  f"{waited:>24} {statistics.median(total):8.3f} {total[-1]:7.3f} {threads:>15} "
                  f"{send_loop:12.3f}",
                  flush=True)
    except Exception:
        print(f"server {'running' if server.alive() else 'exited'}; its log ends:\n"
              + server.read_log(), file=sys.stderr)
        raise
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

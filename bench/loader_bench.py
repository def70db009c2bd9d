#!/usr/bin/python3
"""Model-loading benchmark (issue 16, docs/model-loading.md): one command, one run, medians.

    bench/loader_bench.py --strata build/strata [--size-mib 1024] [--shards 12] [--runs 5]
    bench/loader_bench.py --strata build/strata --smoke        # seconds, for CI

Starts a strata server on a free loopback port with a fresh data directory, writes a
deterministic sharded safetensors checkpoint (tests/integration/checkpoint_gen.py) both into
strata and into a local directory on the same file system, and then reads it back, each way
`--runs` times, interleaved:

  loopback     the machine's limit: TCP over 127.0.0.1, Python sockets (sendall / recv_into
               of 8 MiB buffers, the same calls the loader's data path makes), 1 and 4 streams
  local        parallel pread of the local files (8 threads, 8 MiB reads)
  loader       strata.loader.Loader.iter_raw (bytes into page-aligned buffers; --tensors also
               makes the torch tensors)
  boto3        boto3's download_fileobj with default settings, shard by shard, into memory
  awscli       `aws s3 cp --recursive` into /dev/shm
  runai        a Run:ai Model Streamer-shaped reader: W workers, each a contiguous region
               of the concatenated shards, 8 MiB ranged GETs, 1 s stall timeout; every byte
               checked against the generator; requests over 1 s counted
  modelexpress a ModelExpress / NIXL-shaped reader: 64 KiB header probes, then every 8 MiB
               range at once with up to --mx-in-flight requests in flight
  loader KV    the same loader over the KV protocol (strata-kv://, strata.loader_kv): the
               same shards stored as blocks of a KV namespace, each 8 MiB range one KV GET
               into its slice of the group buffer (needs the strata_kv module built next to
               the --strata binary: BUILD/client/python)

Warm: the data in the page cache (a read before the timed runs). Cold (root only): the page
cache dropped before each run (local and loader). Prints GB/s per case and the ratios the
issue's targets are stated in.
"""
import argparse
import concurrent.futures
import hashlib
import io
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(ROOT, "client", "python"), os.path.join(ROOT, "tests", "integration")]

import checkpoint_gen as gen  # noqa: E402
import harness  # noqa: E402
from strata import loader as L  # noqa: E402
from strata.s3http import RangeClient  # noqa: E402

MiB = 1 << 20
RANGE = 8 * MiB


# ---- the machine's limit ------------------------------------------------------------------

def loopback(streams, seconds):
    """Bytes per second over `streams` TCP connections on 127.0.0.1."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(streams)
    port = srv.getsockname()[1]
    stop = time.monotonic() + seconds
    got = [0] * streams

    def sender():
        c = socket.create_connection(("127.0.0.1", port))
        buf = memoryview(bytearray(RANGE))
        try:
            while time.monotonic() < stop:
                c.sendall(buf)
        except OSError:
            pass
        c.close()

    def receiver(i, conn):
        buf = memoryview(bytearray(RANGE))
        while True:
            n = conn.recv_into(buf)
            if not n:
                break
            got[i] += n
        conn.close()

    senders = [threading.Thread(target=sender) for _ in range(streams)]
    t0 = time.monotonic()
    for s in senders:
        s.start()
    receivers = []
    for i in range(streams):
        conn, _ = srv.accept()
        r = threading.Thread(target=receiver, args=(i, conn))
        r.start()
        receivers.append(r)
    for t in senders + receivers:
        t.join()
    srv.close()
    return sum(got) / (time.monotonic() - t0)


# ---- the readers --------------------------------------------------------------------------

def read_local(paths, threads=8, fresh=False):
    """Parallel 8 MiB preads of the files: into one reused buffer per thread, or (`fresh`)
    into a new page-aligned mapping per file, as the loader's group buffers are: the kernel
    then faults in and clears every page first, which a reused buffer never pays."""
    jobs = []
    dests = {}
    for p in paths:
        size = os.path.getsize(p)
        if fresh:
            dests[p] = memoryview(L._buffer(max(size, 1)))
        jobs += [(p, off, min(RANGE, size - off)) for off in range(0, size, RANGE)]
    local = threading.local()
    fds = {}
    lock = threading.Lock()

    def fd(p):
        with lock:
            if p not in fds:
                fds[p] = os.open(p, os.O_RDONLY)
            return fds[p]

    def one(job):
        p, off, n = job
        if fresh:
            got = os.preadv(fd(p), [dests[p][off:off + n]], off)
            assert got == n
            return n
        buf = getattr(local, "buf", None)
        if buf is None:
            buf = local.buf = memoryview(bytearray(RANGE))
        got = os.preadv(fd(p), [buf[:n]], off)
        assert got == n
        return n

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        total = sum(pool.map(one, jobs))
    for f in fds.values():
        os.close(f)
    return total


def read_loader(uri, kw, tensors, in_flight, device="cpu", transfer="auto"):
    """Bytes read: the tensors' ranges plus the headers the probes read. With a device, the
    tensors are made there (`transfer`: strata.loader_device) and the clock stops once the
    device has them all."""
    loader = L.Loader(uri, max_in_flight=in_flight, verify=False, **kw)
    try:
        if device != "cpu":
            import torch
            for _ in loader.iter_tensors(device, transfer):
                pass
            torch.cuda.synchronize(device)
        elif tensors:
            for _ in loader.iter_tensors():
                pass
        else:
            for _ in loader.iter_raw():
                pass
    finally:
        loader.close()
    return loader.stats["bytes"] + loader.stats["header_bytes"]


def read_boto3(server, bucket, keys):
    s3 = server.boto3_client()
    total = 0
    for k in keys:
        f = io.BytesIO()
        s3.download_fileobj(bucket, k, f)
        total += len(f.getbuffer())  # parts land out of order: tell() is the last one's end
    return total


def read_awscli(server, bucket, prefix, home):
    dest = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        server.aws(home, "s3", "cp", "--recursive", "--only-show-errors",
                   f"s3://{bucket}/{prefix}", dest)
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(dest) for f in fs
                   if f.endswith(".safetensors"))
    finally:
        shutil.rmtree(dest, ignore_errors=True)


class Shape:
    """Per-request figures of a shaped reader."""

    def __init__(self):
        self.lock = threading.Lock()
        self.over_1s = self.failures = self.requests = 0
        self.slowest = 0.0

    def note(self, dt, ok):
        with self.lock:
            self.requests += 1
            self.slowest = max(self.slowest, dt)
            self.over_1s += dt > 1.0
            self.failures += not ok


def expected_range(files_meta, key, start, n):
    """The generator's bytes for [start, start+n) of `key` (header included)."""
    return files_meta[key][start:start + n]


def read_runai(client, bucket, shards, sizes, workers, shape, truth):
    """`workers` threads, each one contiguous region of the concatenated objects."""
    total = sum(sizes)
    per = -(-total // workers)
    starts = [0]
    for s in sizes:
        starts.append(starts[-1] + s)

    def region(w):
        lo, hi = w * per, min(total, (w + 1) * per)
        buf = memoryview(bytearray(RANGE))
        done = 0
        pos = lo
        while pos < hi:
            i = max(j for j in range(len(sizes)) if starts[j] <= pos)
            key, off = shards[i], pos - starts[i]
            n = min(RANGE, hi - pos, sizes[i] - off)
            for attempt in range(3):
                t0 = time.monotonic()
                try:
                    client.get_range(bucket, key, off, buf[:n], total=sizes[i])
                    ok = hashlib.blake2b(buf[:n]).digest() == truth(key, off, n)
                    shape.note(time.monotonic() - t0, ok)
                    break
                except Exception:  # noqa: BLE001 - a stall (1 s) or a refused request: retry
                    shape.note(time.monotonic() - t0, True)
            pos += n
            done += n
        return done

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return sum(pool.map(region, range(workers)))


def read_modelexpress(client, bucket, shards, sizes, in_flight, shape, truth):
    probe = memoryview(bytearray(64 << 10))
    for k in shards:
        client.get_prefix(bucket, k, probe)
    jobs = [(k, off, min(RANGE, size - off)) for k, size in zip(shards, sizes)
            for off in range(0, size, RANGE)]
    local = threading.local()

    def one(job):
        k, off, n = job
        buf = getattr(local, "buf", None)
        if buf is None:
            buf = local.buf = memoryview(bytearray(RANGE))
        t0 = time.monotonic()
        client.get_range(bucket, k, off, buf[:n])
        shape.note(time.monotonic() - t0, hashlib.blake2b(buf[:n]).digest() == truth(k, off, n))
        return n

    with concurrent.futures.ThreadPoolExecutor(in_flight) as pool:
        return sum(pool.map(one, jobs))


def python_http(fn):
    """fn() with the loader's pure-Python HTTP path (strata.s3http without strata_http)."""
    old = os.environ.get("STRATA_LOADER_NATIVE_HTTP")
    os.environ["STRATA_LOADER_NATIVE_HTTP"] = "0"
    try:
        return fn()
    finally:
        if old is None:
            del os.environ["STRATA_LOADER_NATIVE_HTTP"]
        else:
            os.environ["STRATA_LOADER_NATIVE_HTTP"] = old


def process_cpu_s(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def process_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_split(server, fn):
    """(server cores, this process's cores, this process's user-time cores) while fn runs."""
    import resource
    s0, u0, t0 = process_cpu_s(server.proc.pid), resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    fn()
    dt = time.monotonic() - t0
    s1, u1 = process_cpu_s(server.proc.pid), resource.getrusage(resource.RUSAGE_SELF)
    mine = (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)
    return (s1 - s0) / dt, mine / dt, (u1.ru_utime - u0.ru_utime) / dt


def idle_connection_bytes(work, n):
    """RSS growth of a fresh server per keep-alive connection that made one request and stays
    open (fresh: a server that served many connections before reuses what they allocated)."""
    import resource
    server = harness.Server(data_dir=os.path.join(work, f"conns-{n}"),
                            extra_args=["--kv-listen", "off"]).start()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    n = min(n, hard - 100)
    base = process_rss(server.proc.pid)
    socks = []
    try:
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", server.port))
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            socks.append(s)
        answered = sum(s.recv(65536).startswith(b"HTTP/1.1") for s in socks)
        time.sleep(0.5)
        return n, answered, (process_rss(server.proc.pid) - base) / n
    finally:
        for s in socks:
            s.close()
        server.stop()


def drop_caches():
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


# ---- the run ------------------------------------------------------------------------------

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--strata", required=True, help="the strata binary")
    p.add_argument("--size-mib", type=int, default=1024, help="checkpoint size (1024)")
    p.add_argument("--shards", type=int, default=12)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--in-flight", type=int, default=32, help="the loader's requests in flight")
    p.add_argument("--runai-workers", default="8,512")
    p.add_argument("--mx-in-flight", type=int, default=512)
    p.add_argument("--tensors", action="store_true", help="the loader also makes torch tensors")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, one run (CI)")
    p.add_argument("--device", default="cpu",
                   help="also load the tensors into this CUDA device (cuda, cuda:N): through "
                        "the pinned ring and through torch's .to(), for the device script")
    a = p.parse_args()
    if a.smoke:
        a.size_mib, a.shards, a.runs, a.runai_workers, a.mx_in_flight = 48, 3, 1, "8,64", 64
    os.environ["STRATA_BIN"] = os.path.abspath(a.strata)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(a.strata)), "client", "python"))
    work = tempfile.mkdtemp(prefix="strata-loadbench-")
    a.kv_port = harness.free_port()
    server = harness.Server(data_dir=os.path.join(work, "data"),
                            extra_args=["--kv-listen", f"127.0.0.1:{a.kv_port}"]).start()
    try:
        run(a, server, work)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


def run(a, server, work):
    # The checkpoint: shards of ~size/shards, tensors of 16 MiB (smoke: 1 MiB) in F16/BF16/F32.
    per_shard = a.size_mib * MiB // a.shards
    side = 2048 if not a.smoke else 512
    tensor_bytes = side * side * 4
    per = max(1, per_shard // tensor_bytes)
    files, _ = gen.checkpoint(a.shards, per, seed=11, shape=(side, side))
    shards = sorted(k for k in files if k.endswith(".safetensors"))
    sizes = [len(files[k]) for k in shards]
    total = sum(sizes)
    local_dir = os.path.join(work, "local")
    os.makedirs(local_dir)
    for k, body in files.items():
        with open(os.path.join(local_dir, k), "wb") as f:
            f.write(body)
    s3 = server.boto3_client()
    bucket, prefix = "models", "ckpt/"
    s3.create_bucket(Bucket=bucket)
    for k, body in files.items():
        s3.upload_fileobj(io.BytesIO(body), bucket, prefix + k)
    # Ground truth for the shaped readers: a digest per 8 MiB-aligned range.
    digests = {}

    def truth(k, off, n):
        key = (k, off, n)
        if key not in digests:
            digests[key] = hashlib.blake2b(memoryview(files[k.rsplit("/", 1)[-1]])[off:off + n]).digest()
        return digests[key]

    for k in shards:
        for off in range(0, len(files[k]), RANGE):
            truth(prefix + k, off, min(RANGE, len(files[k]) - off))
    keys = [prefix + k for k in shards]
    paths = [os.path.join(local_dir, k) for k in shards]
    kw = dict(endpoint_url=server.endpoint, access_key=harness.ACCESS_KEY,
              secret_key=harness.SECRET_KEY)
    kv_kw = dict(access_key=harness.ACCESS_KEY, secret_key=harness.SECRET_KEY)
    uri = f"s3://{bucket}/{prefix}"
    home = os.path.join(work, "home")
    os.makedirs(home)
    client = RangeClient(server.endpoint, _creds(), "us-east-1", stall_timeout=1.0)
    runai_workers = [int(x) for x in a.runai_workers.split(",")]

    kv_uri = store_in_kv(a, files, shards)
    print(f"checkpoint: {a.shards} shards, {total / 1e9:.3f} GB; {a.runs} runs per case, "
          f"interleaved; strata {a.strata}; {os.cpu_count()} CPUs; loader HTTP path: "
          f"{'native (strata_http)' if client.native else 'http.client'}", flush=True)
    read_local(paths)  # warm the page cache, and strata's data files
    read_loader(uri, kw, False, a.in_flight)
    cases = {
        "loopback 1 stream": lambda: loopback(1, 1.0 if not a.smoke else 0.3),
        "loopback 4 streams": lambda: loopback(4, 1.0 if not a.smoke else 0.3),
        "local pread x8 (warm)": lambda: timed(total, lambda: read_local(paths)),
        "local pread x8 into fresh memory (warm)": lambda: timed(
            total, lambda: read_local(paths, fresh=True)),
        f"loader {a.in_flight} in flight (warm)": lambda: timed(
            total, lambda: read_loader(uri, kw, a.tensors, a.in_flight)),
        **({f"loader {a.in_flight} in flight, http.client (warm)": lambda: timed(
            total, lambda: python_http(lambda: read_loader(uri, kw, a.tensors, a.in_flight)))}
           if client.native else {}),
        **({f"loader over KV {a.in_flight} in flight (warm)": lambda: timed(
            total, lambda: read_loader(kv_uri, kv_kw, a.tensors, a.in_flight))} if kv_uri else {}),
        **({f"loader -> {a.device}, pinned ring": lambda: timed(
            total, lambda: read_loader(uri, kw, True, a.in_flight, a.device, "ring")),
            f"loader -> {a.device}, .to() per tensor": lambda: timed(
            total, lambda: read_loader(uri, kw, True, a.in_flight, a.device, "to"))}
           if a.device != "cpu" else {}),
        "boto3 download_fileobj defaults": lambda: timed(total, lambda: read_boto3(server, bucket, keys)),
        "aws s3 cp --recursive": lambda: timed(total, lambda: read_awscli(server, bucket, prefix, home)),
    }
    shapes = {}
    for w in runai_workers:
        shapes[f"runai-shaped {w} workers"] = Shape()
        cases[f"runai-shaped {w} workers"] = (lambda w=w: timed(total, lambda: read_runai(
            client, bucket, keys, sizes, w, shapes[f"runai-shaped {w} workers"], truth)))
    shapes[f"modelexpress-shaped {a.mx_in_flight} in flight"] = Shape()
    cases[f"modelexpress-shaped {a.mx_in_flight} in flight"] = lambda: timed(total, lambda: read_modelexpress(
        client, bucket, keys, sizes, a.mx_in_flight,
        shapes[f"modelexpress-shaped {a.mx_in_flight} in flight"], truth))
    cold = os.geteuid() == 0 and drop_caches()
    if cold:
        cases["local pread x8 (cold)"] = lambda: (drop_caches(), timed(total, lambda: read_local(paths)))[1]
        cases[f"loader {a.in_flight} in flight (cold)"] = lambda: (drop_caches(), timed(
            total, lambda: read_loader(uri, kw, a.tensors, a.in_flight)))[1]
    figures = {name: [] for name in cases}
    for r in range(a.runs):
        for name, fn in cases.items():
            figures[name].append(fn())
        if cold:  # leave the cache warm for the next round's warm cases
            read_local(paths)
            read_loader(uri, kw, False, a.in_flight)
    med = {n: statistics.median(v) for n, v in figures.items()}
    srv_cores, my_cores, my_user = cpu_split(server, lambda: read_loader(uri, kw, False, a.in_flight))
    print(f"\n{'case':44} {'median GB/s':>12} {'runs GB/s':>30}")
    for n, v in figures.items():
        print(f"{n:44} {med[n] / 1e9:12.3f}   {' '.join(f'{x / 1e9:.2f}' for x in v):>28}")
    for n, s in shapes.items():
        print(f"{n:44} requests {s.requests}, over 1 s {s.over_1s}, slowest {s.slowest:.3f} s, "
              f"verification failures {s.failures}")
    print(f"loader warm, CPU: server {srv_cores:.2f} cores, loader {my_cores:.2f} cores "
          f"(user {my_user:.2f}) of {os.cpu_count()}")
    for n in ([1024] if a.smoke else [1024, 8000]):
        got, answered, per = idle_connection_bytes(work, n)
        print(f"idle keep-alive connections: {got} ({answered} answered), server RSS "
              f"{per / 1024:.1f} KiB per connection (target <= 16 KiB)")
    lb = max(med["loopback 1 stream"], med["loopback 4 streams"])
    ld = med[f"loader {a.in_flight} in flight (warm)"]
    print("\nratios (targets from issue 16):")
    print(f"  loader warm / loopback TCP           {100 * ld / lb:6.1f} %   (>= 85 %)")
    print(f"  loader warm / boto3 defaults         {ld / med['boto3 download_fileobj defaults']:6.2f} x   (>= 3 x)")
    print(f"  loader warm / aws s3 cp              {ld / med['aws s3 cp --recursive']:6.2f} x")
    print(f"  loader warm / local pread warm       {100 * ld / med['local pread x8 (warm)']:6.1f} %")
    print(f"  loader warm / local pread into fresh {100 * ld / med['local pread x8 into fresh memory (warm)']:6.1f} %"
          "   (both fill new pages, as tensors need)")
    if client.native:
        lp = med[f"loader {a.in_flight} in flight, http.client (warm)"]
        print(f"  loader native HTTP / http.client     {ld / lp:6.2f} x")
    if kv_uri:
        lk = med[f"loader over KV {a.in_flight} in flight (warm)"]
        print(f"  loader over KV / over HTTP, warm     {lk / ld:6.2f} x")
        print(f"  loader over KV warm / loopback TCP   {100 * lk / lb:6.1f} %")
    if a.device != "cpu":
        lr = med[f"loader -> {a.device}, pinned ring"]
        print(f"  loader -> {a.device} ring / loader warm to host  {100 * lr / ld:6.1f} %")
        print(f"  loader -> {a.device} ring / .to() per tensor     "
              f"{lr / med[f'loader -> {a.device}, .to() per tensor']:6.2f} x")
    if cold:
        c = med[f"loader {a.in_flight} in flight (cold)"] / med["local pread x8 (cold)"]
        print(f"  loader cold / local pread cold       {100 * c:6.1f} %   (>= 90 %)")
    else:
        print("  cold: not measured (needs root to drop the page cache)")
    client.close()


def store_in_kv(a, files, shards):
    """The same shard files as blocks of a KV namespace (strata.loader_kv's layout); the
    strata-kv:// URI, or None when the strata_kv module is not built."""
    try:
        from strata import loader_kv
    except ImportError as e:
        print(f"loader over KV: skipped ({e})", flush=True)
        return None
    import json
    index = files.get(L.INDEX_NAME)
    weight_map = json.loads(index)["weight_map"] if index else None
    uri = f"strata-kv://127.0.0.1:{a.kv_port}/bench-{os.getpid()}"
    loader_kv.save([[memoryview(files[k])] for k in shards], shards, weight_map, uri,
                   harness.ACCESS_KEY, harness.SECRET_KEY)
    return uri


def _creds():
    from botocore.credentials import Credentials
    return Credentials(harness.ACCESS_KEY, harness.SECRET_KEY)


def timed(total, fn):
    t0 = time.monotonic()
    got = fn()
    dt = time.monotonic() - t0
    if got != total:
        raise SystemExit(f"{getattr(fn, '__name__', fn)}: read {got} bytes, expected {total}")
    return total / dt


if __name__ == "__main__":
    main()

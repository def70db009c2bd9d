"""Small helpers shared by the multipart / copy / checksum / tagging tests."""
import contextlib
import hashlib
import os
import random
import threading
import time

import rawhttp

MiB = 1024 * 1024
PART = 5 * MiB  # the smallest allowed non-last part


def payload(n, seed):
    """n deterministic pseudo-random bytes."""
    return random.Random(seed).randbytes(n)


def quoted(etag):
    return '"%s"' % etag


def md5_hex(data):
    return hashlib.md5(data).hexdigest()


def multipart_etag(parts):
    """S3 multipart ETag (quoted): md5 of the concatenated part MD5s, "-N"."""
    joined = b"".join(hashlib.md5(p).digest() for p in parts)
    return '"%s-%d"' % (hashlib.md5(joined).hexdigest(), len(parts))


def multipart_etag_of_file(path, part_size):
    digests = []
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(part_size), b""):
            digests.append(hashlib.md5(block).digest())
    return '"%s-%d"' % (hashlib.md5(b"".join(digests)).hexdigest(), len(digests))


@contextlib.contextmanager
def extra_headers(client, operation, headers):
    """Adds (and signs) `headers` on every `operation` call of a boto3 client
    inside the with-block, e.g. If-None-Match on CompleteMultipartUpload,
    which botocore 1.29 has no parameter for."""
    def add(request, **kwargs):
        for k, v in headers.items():
            if k in request.headers:
                del request.headers[k]
            request.headers[k] = v
    event = f"before-sign.s3.{operation}"
    client.meta.events.register(event, add, unique_id=f"extra-headers-{id(add)}")
    try:
        yield
    finally:
        client.meta.events.unregister(event, add, unique_id=f"extra-headers-{id(add)}")


def stored_size(n):
    """Size on disk of a plain-store data file holding n bytes: the bytes, a
    CRC32C per 64 KiB block and a 24-byte footer (docs/formats/data-files.md)."""
    return n + 4 * ((n + 65535) // 65536) + 24


def data_files(server):
    """{(inode, size)} of the data files under DATA/objects (objects above 128 KiB)."""
    out = set()
    root = os.path.join(server.data_dir, "objects")
    for d, _, files in os.walk(root):
        for name in files:
            try:
                st = os.stat(os.path.join(d, name))
            except FileNotFoundError:
                continue
            out.add((st.st_ino, st.st_size))
    return out


def wait_for(predicate, timeout=3.0, interval=0.05):
    """Polls predicate() until true or timeout; returns its last value."""
    deadline = time.time() + timeout
    while True:
        v = predicate()
        if v or time.time() >= deadline:
            return v
        time.sleep(interval)


def race(port, reqs):
    """Sends every request but its last byte on its own connection, then the
    last bytes from one thread each, released together; returns the responses
    in request order."""
    conns = [rawhttp.Conn(port, timeout=30) for _ in reqs]
    try:
        raws = [r.to_bytes() for r in reqs]
        for c, raw in zip(conns, raws):
            c.send(raw[:-1])
        time.sleep(0.05)
        barrier = threading.Barrier(len(reqs))
        results = [None] * len(reqs)

        def go(i):
            barrier.wait(timeout=10)
            conns[i].send(raws[i][-1:])
            results[i] = conns[i].read_response(reqs[i].method)

        threads = [threading.Thread(target=go, args=(i,)) for i in range(len(reqs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        return results
    finally:
        for c in conns:
            c.close()

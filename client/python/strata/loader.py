"""Fast model loading: safetensors checkpoints streamed from strata (or any S3 endpoint) by
many parallel ranged GETs, straight into the buffers that become the tensors.

    from strata.loader import load_safetensors, iter_safetensors, save_safetensors
    state = load_safetensors("s3://models/llama-8b/", endpoint_url="http://127.0.0.1:9000")
    for name, tensor in iter_safetensors("s3://models/llama-8b/"):   # as they arrive
        ...
    save_safetensors(model.state_dict(), "s3://models/ckpt-0042/")

How a load goes (docs/model-loading.md):
  1. The URI names one `.safetensors` object, or a prefix holding
     `model.safetensors.index.json` (its weight_map names the shards) or, without an index,
     the `*.safetensors` objects directly under it.
  2. One 64 KiB ranged GET per shard, all in parallel: the header length, usually the whole
     header, and the object's size, ETag and version id. Every later range is pinned to that
     version (versionId where the bucket keeps versions, If-Match on the ETag always), so an
     object overwritten mid-load fails the load (or, versioned, keeps serving the old
     version) and never yields a mix of two.
  3. Each header is validated (dtype, shape against the byte span, no gap, no overlap, nothing
     past the last tensor, the size it implies against the object's, headers over 100 MB
     refused) before any data is read.
  4. Each shard's tensors are coalesced into ~64 MiB groups (page-aligned anonymous mappings)
     cut into 8 MiB ranged GETs; `max_in_flight` of them run at once, interleaved across the
     shards; each one's reply is checked (206, exactly the Content-Range and length asked for,
     the pinned ETag) and its body read straight into its slice of the group buffer. A request
     whose connection makes no progress for `stall_timeout` seconds is retried, up to
     `retries` times, as are refused or reset connections and 5xx replies.
  5. A finished group becomes tensors with torch.frombuffer (no copy); where the object has a
     stored checksum (CRC32, CRC32C, SHA-1, SHA-256, whole-object or per-part) the shard's bytes
     are checked against it before any of its tensors is handed out.

strata-kv://host:port/name reads a checkpoint that save_safetensors stored in a KV-cache
namespace, over the KV protocol instead of HTTP (strata.loader_kv): the same plan, probes,
groups, ranges and checks, each range one KV GET into its slice of the group buffer.

Credentials and the endpoint come from the arguments or the usual AWS environment
(AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_ENDPOINT_URL / AWS_REGION or botocore's
configuration files). Needs botocore (signing) and, for tensors, torch; Debian's packages do.
"""
import base64
import concurrent.futures
import hashlib
import json
import mmap
import queue
import sys
import threading
import time
import urllib.parse
import zlib

from strata import safetensors_format as stf
from strata.loader_sources import (INDEX_NAME, KV_SCHEME, PROBE_BYTES, ChecksumMismatch,  # noqa: F401
                                   Endpoint, LoadError, call_with_retries, open_source,
                                   parse_uri)
from strata.s3http import RetryableError, S3Error

RANGE_BYTES = 8 << 20
GROUP_BYTES = 64 << 20


# ---- the plan -----------------------------------------------------------------------------

class Shard:
    """One safetensors object of the checkpoint, as its probe found it."""

    def __init__(self, key):
        self.key = key
        self.size = 0
        self.etag = None
        self.version_id = None      # set where the bucket keeps versions
        self.head = b""             # bytes [0, 8 + N)
        self.header = None          # safetensors_format.Header
        self.checksum = None        # (algorithm, value) stored with the object, or None
        self.parts = None           # [(size, checksum)] of a multipart object's parts
        self.group_count = 0

    def pin(self):
        return dict(total=self.size, etag=self.etag, version_id=self.version_id)


class Group:
    """Contiguous tensors of one shard read into one buffer."""

    def __init__(self, shard, start, end, tensors):
        self.shard, self.start, self.end, self.tensors = shard, start, end, tensors
        self.buffer = None
        self.pending = 0


def _buffer(n):
    """A page-aligned anonymous mapping of n bytes for one group (transparent huge pages
    asked for: a 64 MiB group then faults in 32 times, not 16,384). Private: mmap's default,
    a shared anonymous mapping, is shmem, which kernels give huge pages only when
    shmem_enabled says so (Debian: never), so every 4 KiB page faulted and was cleared alone
    (loader 0.85 -> 1.5 GB/s here, docs/performance.md)."""
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", 0x20))
    if hasattr(mmap, "MADV_HUGEPAGE"):
        m.madvise(mmap.MADV_HUGEPAGE)
    return m


def _plan_groups(shard, group_bytes):
    groups, cur, cur_start = [], [], None
    base = shard.header.data_start
    for t in shard.header.tensors:
        if cur and (base + t.end) - cur_start > group_bytes:
            groups.append(Group(shard, cur_start, base + cur[-1].end, cur))
            cur = []
        if not cur:
            cur_start = base + t.begin
        cur.append(t)
    if cur:
        groups.append(Group(shard, cur_start, base + cur[-1].end, cur))
    return groups


def _interleave(per_shard):
    """Round-robin across the shards' request lists, so that the requests in flight at any
    moment spread over many objects instead of piling onto one."""
    out, lists = [], [list(x) for x in per_shard if x]
    i = 0
    while lists:
        i %= len(lists)
        out.append(lists[i].pop(0))
        if not lists[i]:
            lists.pop(i)
        else:
            i += 1
    return out


# ---- checksums ----------------------------------------------------------------------------

class _Crc:
    """A 32-bit CRC as a hashlib-like object: `extend(data, crc)` is the CRC's function."""

    def __init__(self, extend):
        self._extend, self.v = extend, 0

    def update(self, b):
        self.v = self._extend(b, self.v)

    def digest(self):
        return self.v.to_bytes(4, "big")


def _hasher(algorithm):
    if algorithm == "CRC32":
        return _Crc(zlib.crc32)
    if algorithm == "CRC32C":
        try:
            import strata_kv  # the C++ client module exposes the server's CRC32C
        except ImportError:
            return None
        return _Crc(strata_kv.crc32c) if hasattr(strata_kv, "crc32c") else None
    if algorithm == "SHA1":
        return hashlib.sha1()
    if algorithm == "SHA256":
        return hashlib.sha256()
    return None


def _segments(shard, groups, start, end):
    """memoryviews over bytes [start, end) of the shard (header bytes, then group buffers)."""
    pieces = [(0, len(shard.head), memoryview(shard.head))]
    pieces += [(g.start, g.end, memoryview(g.buffer)) for g in groups]
    for a, b, mv in pieces:
        lo, hi = max(a, start), min(b, end)
        if lo < hi:
            yield mv[lo - a:hi - a]


def _verify(shard, groups):
    """Checks the shard's bytes against its stored checksum; returns True if checked, False if
    the object has none this client can compute."""
    if shard.checksum is None:
        return False
    algorithm, value = shard.checksum
    if shard.parts is None:
        if "-" in value:
            return False  # composite, but the parts are unknown
        h = _hasher(algorithm)
        if h is None:
            return False
        for mv in _segments(shard, groups, 0, shard.size):
            h.update(mv)
        got = base64.b64encode(h.digest()).decode()
        if got != value:
            raise ChecksumMismatch(f"{shard.key}: {algorithm} {got}, stored {value}")
        return True
    pos, digests = 0, []
    for n, (size, part_value) in enumerate(shard.parts, 1):
        h = _hasher(algorithm)
        if h is None:
            return False
        for mv in _segments(shard, groups, pos, pos + size):
            h.update(mv)
        d = h.digest()
        got = base64.b64encode(d).decode()
        if part_value and got != part_value:
            raise ChecksumMismatch(f"{shard.key} part {n}: {algorithm} {got}, stored {part_value}")
        digests.append(d)
        pos += size
    if pos != shard.size:
        raise LoadError(f"{shard.key}: its parts add up to {pos} bytes, the object has {shard.size}")
    outer = _hasher(algorithm)
    outer.update(b"".join(digests))
    got = f"{base64.b64encode(outer.digest()).decode()}-{len(digests)}"
    if got != value:
        raise ChecksumMismatch(f"{shard.key}: composite {algorithm} {got}, stored {value}")
    return True


# ---- the loader ---------------------------------------------------------------------------

class Loader:
    """One load of one checkpoint. `stats` after (or during) the load: bytes, requests,
    retries, seconds, verified shards."""

    def __init__(self, uri, *, endpoint_url=None, access_key=None, secret_key=None, region=None,
                 max_in_flight=32, range_bytes=RANGE_BYTES, group_bytes=GROUP_BYTES,
                 stall_timeout=1.0, retries=4, verify=True, progress=None):
        if range_bytes < 1 or group_bytes < 1 or max_in_flight < 1:
            raise ValueError("range_bytes, group_bytes and max_in_flight must be positive")
        self.uri = uri
        self.max_in_flight, self.range_bytes, self.group_bytes = max_in_flight, range_bytes, group_bytes
        self.retries, self.verify, self.progress = retries, verify, progress
        self._src = open_source(uri, endpoint_url, access_key, secret_key, region,
                                stall_timeout, max_in_flight)
        self._lock = threading.Lock()
        self._group_ready = None  # set by iter_tensors for a device load
        self.stats = dict(bytes=0, total_bytes=0, header_bytes=0, requests=0, retries=0, seconds=0.0,
                          shards=0, tensors=0, verified_shards=0, slowest_request_s=0.0)

    def close(self):
        self._src.close()

    # -- data calls with retries --
    def _retrying(self, what, fn):
        def timed():
            t0 = time.monotonic()
            r = fn()
            dt = time.monotonic() - t0
            with self._lock:
                self.stats["requests"] += 1
                self.stats["slowest_request_s"] = max(self.stats["slowest_request_s"], dt)
            return r

        def counted():
            with self._lock:
                self.stats["retries"] += 1

        try:
            return call_with_retries(timed, self.retries + 1, counted)
        except RetryableError as e:
            raise LoadError(f"{what}: gave up after {self.retries + 1} tries: {e}") from None
        except S3Error as e:
            if e.status == 412 or e.code in ("ETagChanged", "SizeChanged"):
                raise LoadError(f"{what}: the object changed during the load ({e}); "
                                "nothing of it is returned") from None
            raise LoadError(f"{what}: {e}") from None

    def _probe(self, key):
        shard = Shard(key)
        buf = bytearray(PROBE_BYTES)
        where = self._src.where(key)
        n, reply = self._retrying(where, lambda: self._src.probe(key, memoryview(buf)))
        shard.size, shard.etag = reply.size, reply.etag
        if reply.version_id and reply.version_id != "null":
            shard.version_id = reply.version_id
        try:
            hlen = stf.header_length(bytes(buf[:n]), where)
            if 8 + hlen > shard.size:
                raise stf.FormatError(f"{where}: header length {hlen} runs past the end of the "
                                      f"{shard.size}-byte object (truncated?)")
            head = bytearray(8 + hlen)
            have = min(n, 8 + hlen)
            head[:have] = buf[:have]
            if have < 8 + hlen:
                rest = memoryview(head)[have:]
                self._retrying(where, lambda: self._src.get_range(shard, have, rest))
            shard.head = bytes(head)
            shard.header = stf.parse_header(shard.head[8:], shard.size, where)
        except stf.FormatError as e:
            raise LoadError(str(e)) from None
        if self.verify:
            try:
                self._src.checksum(shard)
            except LoadError:
                raise
            except Exception as e:  # noqa: BLE001 - botocore's errors, reported with context
                raise LoadError(f"{where}: reading its stored checksum failed: {e}") from None
        return shard

    def _read(self, group, offset, length):
        dest = memoryview(group.buffer)[offset:offset + length]
        shard = group.shard
        self._retrying(f"{self._src.where(shard.key)} bytes {group.start + offset}+{length}",
                       lambda: self._src.get_range(shard, group.start + offset, dest))
        with self._lock:
            self.stats["bytes"] += length
            group.pending -= 1
            return group.pending == 0

    def plan(self, pool):
        keys, weight_map = self._src.shard_keys()
        shards = list(pool.map(self._probe, keys))
        if weight_map is not None:
            by_key = {s.key: {t.name for t in s.header.tensors} for s in shards}
            for name, key in weight_map.items():
                if name not in by_key[key]:
                    raise LoadError(f"{INDEX_NAME} places {name!r} in {key}, whose header has "
                                    "no such tensor")
        names = set()
        for s in shards:
            for t in s.header.tensors:
                if t.name in names:
                    raise LoadError(f"tensor {t.name!r} is in more than one shard")
                names.add(t.name)
        return shards

    def iter_raw(self):
        """Yields (shard, group) as each group's bytes are all in (and verified, where the
        shard's last group completes its checksum)."""
        t0 = time.monotonic()
        done_q = queue.Queue()
        failed = threading.Event()
        with concurrent.futures.ThreadPoolExecutor(self.max_in_flight,
                                                   thread_name_prefix="strata-load") as pool:
            try:
                shards = self.plan(pool)
            except concurrent.futures.CancelledError:
                raise LoadError("load cancelled") from None
            self.stats["shards"] = len(shards)
            per_shard, groups_of = [], {}
            for s in shards:
                groups = _plan_groups(s, self.group_bytes)
                groups_of[s.key] = groups
                s.group_count = len(groups)
                reqs = []
                for g in groups:
                    g.buffer = _buffer(max(g.end - g.start, 1))
                    length = g.end - g.start
                    g.pending = max(1, -(-length // self.range_bytes)) if length else 0
                    for off in range(0, length, self.range_bytes):
                        reqs.append((g, off, min(self.range_bytes, length - off)))
                    if length == 0:
                        if self._group_ready is not None:
                            self._group_ready(g)
                        done_q.put(g)
                per_shard.append(reqs)
                self.stats["total_bytes"] += s.size - len(s.head)
                self.stats["header_bytes"] += len(s.head)

            def run(g, off, n):
                if failed.is_set():
                    return
                try:
                    if self._read(g, off, n):
                        if self._group_ready is not None:
                            self._group_ready(g)  # e.g. queue its copy to the GPU
                        done_q.put(g)
                except BaseException as e:  # noqa: BLE001 - handed to the consumer
                    failed.set()
                    done_q.put(e)

            futures = [pool.submit(run, *r) for r in _interleave(per_shard)]
            total_groups = sum(len(v) for v in groups_of.values())
            left_in_shard = {k: len(v) for k, v in groups_of.items()}
            try:
                for _ in range(total_groups):
                    item = done_q.get()
                    if isinstance(item, BaseException):
                        raise item
                    shard = item.shard
                    left_in_shard[shard.key] -= 1
                    if left_in_shard[shard.key] == 0 and self.verify:
                        if _verify(shard, groups_of[shard.key]):
                            self.stats["verified_shards"] += 1
                    if self.progress:
                        self.stats["seconds"] = time.monotonic() - t0
                        self.progress(self.stats)
                    yield shard, item
            finally:
                failed.set()
                for f in futures:
                    f.cancel()
        self.stats["seconds"] = time.monotonic() - t0

    def iter_tensors(self, device="cpu", transfer="auto"):
        """(name, tensor) as groups arrive. `device`: where the tensors go; `transfer`: how
        they get there when it is not the CPU ("auto", "ring", "to": strata.loader_device)."""
        import torch
        from strata import loader_device
        sink = loader_device.open_transfer(torch, device, transfer)
        self._group_ready = sink.group_ready if sink is not None else None
        raw = self.iter_raw()
        try:
            # A shard with a stored checksum hands out no tensor before its last group is in
            # and the checksum holds; the others' groups become tensors as they arrive.
            waiting = {}
            for shard, group in raw:
                if not (self.verify and shard.checksum):
                    yield from _tensors(torch, [group], sink, self.stats)
                    continue
                w = waiting.setdefault(shard.key, [])
                w.append(group)
                if len(w) == shard.group_count:
                    yield from _tensors(torch, waiting.pop(shard.key), sink, self.stats)
        finally:
            raw.close()  # its workers are done before the sink goes
            self._group_ready = None
            if sink is not None:
                sink.drain()  # no copy may still write into a buffer about to be freed
                if sink is not transfer and hasattr(sink, "close"):
                    sink.close()

    def load(self, device="cpu", transfer="auto"):
        return dict(self.iter_tensors(device, transfer))


def _torch_dtype(torch, name):
    attr = stf.DTYPES[name][1]
    dt = getattr(torch, attr, None)
    if dt is None:
        raise LoadError(f"dtype {name}: this torch ({torch.__version__}) has no torch.{attr}")
    return dt


def _tensors(torch, groups, transfer, stats):
    """(name, tensor) of each group: CPU tensors over the group's buffer (no copy), or placed
    on a device by `transfer` (strata.loader_device)."""
    import warnings
    for g in groups:
        specs = [(t, _torch_dtype(torch, t.dtype)) for t in g.tensors]
        if transfer is not None and transfer.name == "ring":
            out = transfer.place(g, specs)
            try:
                g.buffer.close()  # on the device now; the host copy is let go at once
            except BufferError:
                pass
        else:
            out = []
            for t, dt in specs:
                numel = 1
                for d in t.shape:
                    numel *= d
                if numel == 0:
                    x = torch.empty(t.shape, dtype=dt)
                else:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # "non-writable buffer": mmap is writable
                        x = torch.frombuffer(g.buffer, dtype=dt, count=numel,
                                             offset=g.shard.header.data_start + t.begin - g.start)
                    x = x.reshape(t.shape)
                out.append((t.name, x))
            if transfer is not None:
                out = transfer.place(g, out)
        stats["tensors"] += len(out)
        yield from out


def load_safetensors(uri, device="cpu", transfer="auto", **kw):
    """{name: tensor} of the checkpoint at `uri` (see the module text); LoadError if any part
    of it cannot be read or checked — never a partial dict."""
    loader = Loader(uri, **kw)
    try:
        return loader.load(device, transfer)
    finally:
        loader.close()


def iter_safetensors(uri, device="cpu", transfer="auto", **kw):
    """(name, tensor) as each group of tensors arrives (a shard with a stored checksum: once
    it is verified). Raises LoadError mid-iteration if the load fails."""
    loader = Loader(uri, **kw)
    try:
        yield from loader.iter_tensors(device, transfer)
    finally:
        loader.close()


# ---- saving -------------------------------------------------------------------------------

class _ChainReader:
    """A read()-able stream over memoryviews, without joining them."""

    def __init__(self, views):
        self._views, self._i, self._pos = views, 0, 0

    def read(self, n=-1):
        out = []
        want = sys.maxsize if n is None or n < 0 else n
        while want > 0 and self._i < len(self._views):
            v = self._views[self._i]
            take = v[self._pos:self._pos + want]
            out.append(bytes(take))
            want -= len(take)
            self._pos += len(take)
            if self._pos >= len(v):
                self._i, self._pos = self._i + 1, 0
        return b"".join(out)


def _tensor_bytes(torch, name, x):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name!r} is a {type(x).__name__}, not a tensor")
    for st_name, (_, attr) in stf.DTYPES.items():
        if getattr(torch, attr, None) == x.dtype:
            break
    else:
        raise TypeError(f"{name!r}: dtype {x.dtype} has no safetensors name")
    c = x.detach().to("cpu").contiguous()
    raw = c.reshape(-1).view(torch.uint8).numpy() if c.numel() else None
    return st_name, tuple(c.shape), c, (memoryview(raw).cast("B") if raw is not None else memoryview(b""))


def save_safetensors(state_dict, uri, *, max_shard_bytes=5 << 30, metadata=None,
                     endpoint_url=None, access_key=None, secret_key=None, region=None,
                     part_bytes=64 << 20, max_concurrency=8, checksum="CRC32"):
    """Writes `state_dict` as a safetensors checkpoint: `uri` ending in `.safetensors` gets one
    object; a prefix gets model.safetensors, or model-0000i-of-0000n.safetensors shards of at
    most `max_shard_bytes` each plus model.safetensors.index.json (the Hugging Face layout).
    Shards go up as parallel multipart uploads, each stored with a `checksum` (the loader
    verifies it). Returns the keys written, the index last.

    strata-kv://host:port/name stores the same shards as blocks of a KV namespace, then a
    manifest with their CRC32Cs (strata.loader_kv); `max_shard_bytes` is then capped at a
    block's 4 GiB."""
    import torch
    kv = urllib.parse.urlsplit(uri).scheme == KV_SCHEME
    if kv:
        from strata import loader_kv
        loader_kv.parse_uri(uri)  # a bad URI fails before any work
        bucket, path = None, ""
        max_shard_bytes = min(max_shard_bytes, loader_kv.MAX_SHARD_BYTES)
    else:
        bucket, path = parse_uri(uri)
    items = [(n,) + _tensor_bytes(torch, n, x) for n, x in state_dict.items()]
    shards, cur, cur_bytes = [], [], 0
    for it in items:
        nbytes = len(it[4])
        if cur and cur_bytes + nbytes > max_shard_bytes:
            shards.append(cur)
            cur, cur_bytes = [], 0
        cur.append(it)
        cur_bytes += nbytes
    shards.append(cur)
    single_file = path.endswith(".safetensors")
    if single_file and len(shards) > 1:
        raise ValueError(f"{uri}: one file asked for, but the tensors need {len(shards)} shards of "
                         f"{max_shard_bytes} bytes")
    prefix = "" if single_file else (path if not path or path.endswith("/") else path + "/")
    if single_file:
        names = [path]
    elif len(shards) == 1:
        names = [prefix + "model.safetensors"]
    else:
        names = [prefix + f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
                 for i in range(len(shards))]
    if kv:
        views = []
        for i in range(len(shards)):
            entries = [(n, dt, shape, len(mv)) for n, dt, shape, _, mv in shards[i]]
            views.append([memoryview(stf.build_header(entries, metadata))] +
                         [mv for *_, mv in shards[i] if len(mv)])
        weight_map = ({n: names[i] for i, sh in enumerate(shards) for n, *_ in sh}
                      if len(shards) > 1 else None)
        try:
            return loader_kv.save(views, names, weight_map, uri, access_key, secret_key)
        except Exception as e:  # noqa: BLE001 - strata_kv.Error, OSError, ValueError
            raise LoadError(f"{uri}: {e}") from None
    from boto3.s3.transfer import TransferConfig
    ep = Endpoint(endpoint_url, access_key, secret_key, region, stall_timeout=30.0,
                   max_pool=max_concurrency * 2)
    cfg = TransferConfig(multipart_threshold=part_bytes, multipart_chunksize=part_bytes,
                         max_concurrency=max_concurrency, use_threads=True)
    extra = {"ChecksumAlgorithm": checksum} if checksum else {}

    def upload(i):
        entries = [(n, dt, shape, len(mv)) for n, dt, shape, _, mv in shards[i]]
        head = stf.build_header(entries, metadata)
        views = [memoryview(head)] + [mv for *_, mv in shards[i] if len(mv)]
        ep.s3.upload_fileobj(_ChainReader(views), bucket, names[i], ExtraArgs=extra, Config=cfg)

    try:
        with concurrent.futures.ThreadPoolExecutor(min(4, len(shards))) as pool:
            list(pool.map(upload, range(len(shards))))
        written = list(names)
        if not single_file and len(shards) > 1:
            # total_size: the tensors' bytes, headers not counted (as Hugging Face writes it)
            index = {"metadata": {"total_size": sum(len(mv) for sh in shards for *_, mv in sh)},
                     "weight_map": {n: names[i].rsplit("/", 1)[-1]
                                    for i, sh in enumerate(shards) for n, *_ in sh}}
            ep.s3.put_object(Bucket=bucket, Key=prefix + INDEX_NAME,
                             Body=json.dumps(index, indent=2).encode())
            written.append(prefix + INDEX_NAME)
        return written
    finally:
        ep.close()


# ---- command line -------------------------------------------------------------------------

def _human(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(prog="strata load",
                                description="Load a safetensors checkpoint from S3 (strata.loader).")
    p.add_argument("uri", help="s3://bucket/prefix/, s3://bucket/key.safetensors or "
                               "strata-kv://host:port/name (a checkpoint saved over the KV protocol)")
    p.add_argument("--endpoint-url")
    p.add_argument("--verify", action="store_true",
                   help="check stored checksums and print every tensor's name, dtype and shape")
    p.add_argument("--in-flight", type=int, default=32, help="requests in flight (32)")
    p.add_argument("--range-mib", type=int, default=8, help="bytes per ranged GET, MiB (8)")
    p.add_argument("--raw", action="store_true", help="bytes only: no torch tensors made")
    p.add_argument("--device", default="cpu",
                   help="where the tensors go: cpu (default), cuda, cuda:N, ...")
    p.add_argument("--transfer", default="auto", choices=("auto", "ring", "to"),
                   help="how tensors reach a device: the pinned-buffer ring (CUDA), torch's "
                        ".to(), or auto: the ring when it opens (auto)")
    a = p.parse_args(argv)
    tty = sys.stderr.isatty()

    def progress(s):
        if not tty:
            return
        rate = s["bytes"] / s["seconds"] if s["seconds"] else 0
        eta = (s["total_bytes"] - s["bytes"]) / rate if rate else 0
        sys.stderr.write(f"\r{_human(s['bytes'])} / {_human(s['total_bytes'])}  "
                         f"{rate / 1e9:.2f} GB/s  ETA {eta:.0f} s   ")
        sys.stderr.flush()

    loader = Loader(a.uri, endpoint_url=a.endpoint_url, max_in_flight=a.in_flight,
                    range_bytes=a.range_mib << 20, verify=a.verify, progress=progress)
    try:
        if a.raw:
            for _ in loader.iter_raw():
                pass
        else:
            for name, t in loader.iter_tensors(a.device, a.transfer):
                if a.verify:
                    print(f"{name}\t{str(t.dtype).replace('torch.', '')}\t{list(t.shape)}")
    except LoadError as e:
        if tty:
            sys.stderr.write("\n")
        print(f"strata load: {e}", file=sys.stderr)
        return 1
    finally:
        loader.close()
    s = loader.stats
    if tty:
        sys.stderr.write("\n")
    rate = s["bytes"] / s["seconds"] / 1e9 if s["seconds"] else 0
    print(f"loaded {s['tensors']} tensors, {s['bytes']} bytes from {s['shards']} shards in "
          f"{s['seconds']:.2f} s ({rate:.2f} GB/s); {s['requests']} requests, {s['retries']} "
          f"retried, slowest {s['slowest_request_s']:.3f} s; {s['verified_shards']} shards "
          "verified against stored checksums", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

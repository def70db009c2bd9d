"""The model loader's second transport: a safetensors checkpoint kept in a strata KV-cache
namespace and read with the KV protocol's ranged GET straight into the group buffers (no
HTTP, no SigV4 per request, one binary frame per range).

    save_safetensors(model.state_dict(), "strata-kv://127.0.0.1:7450/llama-8b")
    state = load_safetensors("strata-kv://127.0.0.1:7450/llama-8b")

Layout (docs/model-loading.md, "Over the KV protocol"):
  - The path after host:port names the checkpoint; its namespace is the one whose model_id is
    "safetensors:<path>" (block_bytes 0: blocks of any length).
  - Each shard file is one block, key SHA-256 of its file name, stored put-if-absent with its
    CRC32C (the server checks it on arrival; whole-block reads are checked by the client).
  - A manifest block (key SHA-256 of MANIFEST_NAME), written last, so a checkpoint is either
    complete or absent: JSON {"format": MANIFEST_FORMAT, "weight_map": {tensor: file} or null,
    "shards": {file: {"size": n, "crc32c": base64 big-endian}}}. The loader verifies every
    shard's bytes against that CRC32C before handing out its tensors.
  - Blocks are immutable, so a load never mixes two checkpoints; saving over an existing
    checkpoint name fails (choose a new name per checkpoint). A block evicted mid-load (quota,
    TTL) fails the load with a clear error, never a partial state dict.
Credentials: access_key / secret_key, else STRATA_KV_ACCESS_KEY / STRATA_KV_SECRET_KEY, else
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (a strata identity's S3 keys are its KV keys).
"""
import base64
import hashlib
import json
import os
import urllib.parse

SCHEME = "strata-kv"
MANIFEST_NAME = "strata.safetensors.manifest.json"
MANIFEST_FORMAT = "strata-safetensors-1"
MAX_MANIFEST_BYTES = 64 << 20
FIRST_MANIFEST_BYTES = 1 << 20  # the first try's buffer: a manifest is rarely larger
MAX_SHARD_BYTES = (1 << 32) - 1  # a KV block's length is a u32


class _TooSmall(Exception):
    """A whole-block GET's destination was shorter than the block."""


def parse_uri(uri):
    """(host, port, name) of strata-kv://host:port/name."""
    u = urllib.parse.urlsplit(uri)
    name = u.path.strip("/")
    if u.scheme != SCHEME or not u.hostname or not name:
        raise ValueError(f"{uri!r}: expected {SCHEME}://host:port/checkpoint-name")
    return u.hostname, u.port or 7450, name


def block_key(file_name):
    return hashlib.sha256(file_name.encode()).digest()


def namespace_fields(name):
    return dict(model_id="safetensors:" + name, weights_fingerprint="", kv_dtype="bytes",
                kv_layout="safetensors", tokens_per_block=1, block_bytes=0, tp_size=1, tp_rank=0,
                pp_size=1, pp_rank=0, hash_algorithm="sha256(file name)", hash_seed=0,
                tenant_salt="")


def _credentials(access_key, secret_key):
    if access_key and secret_key:
        return access_key, secret_key
    for a, s in (("STRATA_KV_ACCESS_KEY", "STRATA_KV_SECRET_KEY"),
                 ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")):
        if os.environ.get(a) and os.environ.get(s):
            return os.environ[a], os.environ[s]
    return None, None


def _crc32c_b64(crc):
    return base64.b64encode(crc.to_bytes(4, "big")).decode()


class KvSource:
    """What Loader needs from where the checkpoint lives, over the KV protocol: the shard list,
    a prefix probe, ranged reads into caller memory, the stored checksum."""

    def __init__(self, uri, access_key=None, secret_key=None, timeout_ms=60000, tls=None):
        from strata import kvutil  # imports strata_kv (the C++ client module)
        self._kv = kvutil
        self.host, self.port, self.name = parse_uri(uri)
        ak, sk = _credentials(access_key, secret_key)
        if not ak:
            raise PermissionError("no KV credentials (pass access_key/secret_key or set "
                                  "STRATA_KV_ACCESS_KEY/STRATA_KV_SECRET_KEY)")
        self._conns = kvutil.PerThreadConnections(self.host, self.port, ak, sk,
                                                  namespace_fields(self.name), timeout_ms, tls)
        self._manifest = None

    def where(self, key=""):
        return f"{SCHEME}://{self.host}:{self.port}/{self.name}" + (f" {key}" if key else "")

    def close(self):
        self._conns.close_all()

    def _get(self, file_name, offset, dest, whole=False):
        """Bytes of the block from `offset` into dest; returns how many came. Raises
        ConnectionError (retryable) when the connection is lost, KeyError when the block is
        not stored, ValueError when its bytes fail the CRC32C, PermissionError when the keys
        are refused, OSError otherwise."""
        import strata_kv
        conn = self._conns.get()
        try:
            st, counts = conn.call("get_into", [block_key(file_name)], [dest], [offset],
                                   [0 if whole else len(dest)], with_lengths=True)
        except strata_kv.Error as e:
            if e.code in self._kv.CONNECTION_LOST:
                conn.close()
                raise ConnectionError(str(e)) from None
            if e.code in (strata_kv.AUTH_FAILED, strata_kv.DENIED):
                raise PermissionError(str(e)) from None
            raise OSError(str(e)) from None
        if st[0] == strata_kv.NOT_FOUND:
            raise KeyError(file_name)
        if st[0] == strata_kv.CORRUPT:
            raise ValueError(f"{file_name}: the block's bytes do not match its CRC32C")
        if st[0] == strata_kv.BUFFER_TOO_SMALL and whole:
            raise _TooSmall(file_name)
        if st[0] != strata_kv.OK:
            raise OSError(f"{file_name}: KV GET {strata_kv.status_name(st[0])}")
        return counts[0]

    def manifest(self):
        if self._manifest is None:
            # A buffer of the largest manifest allowed would be 64 MiB of fresh memory to
            # clear on every load (~0.2 s on the benchmark's VM): start small, grow on
            # BUFFER_TOO_SMALL.
            size = FIRST_MANIFEST_BYTES
            while True:
                buf = bytearray(size)
                try:
                    n = self._get(MANIFEST_NAME, 0, memoryview(buf), whole=True)
                    break
                except KeyError:
                    raise FileNotFoundError(f"{self.where()}: no checkpoint saved under this "
                                            "name (or its save did not finish)") from None
                except _TooSmall:
                    if size >= MAX_MANIFEST_BYTES:
                        raise ValueError(f"{self.where(MANIFEST_NAME)}: over "
                                         f"{MAX_MANIFEST_BYTES} bytes, not a checkpoint "
                                         "manifest") from None
                    size = min(size * 8, MAX_MANIFEST_BYTES)
            try:
                m = json.loads(bytes(buf[:n]))
                if m.get("format") != MANIFEST_FORMAT or not isinstance(m.get("shards"), dict):
                    raise ValueError(f"format {m.get('format')!r}, expected {MANIFEST_FORMAT}")
                for f, s in m["shards"].items():
                    if not isinstance(s.get("size"), int) or not isinstance(s.get("crc32c"), str):
                        raise ValueError(f"shard {f!r}: size and crc32c expected")
            except (ValueError, AttributeError, TypeError) as e:
                raise ValueError(f"{self.where(MANIFEST_NAME)}: not a checkpoint manifest: {e}") \
                    from None
            self._manifest = m
        return self._manifest

    def shard_keys(self):
        m = self.manifest()
        return sorted(m["shards"]), m.get("weight_map")

    def size(self, file_name):
        return self.manifest()["shards"][file_name]["size"]

    def checksum(self, file_name):
        return ("CRC32C", self.manifest()["shards"][file_name]["crc32c"])

    def get_range(self, file_name, offset, dest):
        n = self._get(file_name, offset, dest)
        if n != len(dest):
            raise ValueError(f"{file_name}: {n} bytes at {offset}, {len(dest)} asked for "
                             "(the block is shorter than its manifest says)")
        return n


def save(shards, names, weight_map, uri, access_key=None, secret_key=None, timeout_ms=600000,
         tls=None):
    """Stores the shards (lists of memoryviews: header first, then the tensors' bytes) as
    blocks named `names`, then the manifest. Returns the names written, the manifest last."""
    import strata_kv
    from strata import kvutil
    host, port, name = parse_uri(uri)
    ak, sk = _credentials(access_key, secret_key)
    if not ak:
        raise PermissionError("no KV credentials (pass access_key/secret_key or set "
                              "STRATA_KV_ACCESS_KEY/STRATA_KV_SECRET_KEY)")
    conn = kvutil.NamespaceConnection(host, port, ak, sk, namespace_fields(name), timeout_ms, tls)
    try:
        entries = {}
        for views, file_name in zip(shards, names):
            # One block per shard: its bytes must be contiguous for the PUT (one copy here;
            # the S3 path streams them instead).
            size = sum(len(v) for v in views)
            if size > MAX_SHARD_BYTES:
                raise ValueError(f"{file_name}: {size} bytes, a KV block holds at most "
                                 f"{MAX_SHARD_BYTES} (lower max_shard_bytes)")
            block = bytearray(size)
            pos = 0
            for v in views:
                block[pos:pos + len(v)] = v
                pos += len(v)
            st = conn.call("put", [block_key(file_name)], None, [block])
            if st[0] == strata_kv.EXISTS:
                raise FileExistsError(f"{SCHEME}://{host}:{port}/{name}: {file_name} is already "
                                      "stored (blocks are immutable: save under a new name)")
            if st[0] != strata_kv.OK:
                raise OSError(f"{file_name}: KV PUT {strata_kv.status_name(st[0])}")
            entries[file_name] = {"size": size, "crc32c": _crc32c_b64(strata_kv.crc32c(block))}
        doc = json.dumps({"format": MANIFEST_FORMAT, "weight_map": weight_map,
                          "shards": entries}, indent=1).encode()
        st = conn.call("put", [block_key(MANIFEST_NAME)], None, [doc])
        if st[0] != strata_kv.OK:
            raise OSError(f"{MANIFEST_NAME}: KV PUT {strata_kv.status_name(st[0])}")
        return list(names) + [MANIFEST_NAME]
    finally:
        conn.close()

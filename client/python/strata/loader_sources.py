"""Where strata.loader reads a checkpoint from: an S3 endpoint (the lean RangeClient for the
control calls and the data) or a KV-cache namespace over the KV protocol (strata.loader_kv),
behind one small interface: where(key), shard_keys(), probe(key, buf), get_range(shard,
offset, dest), checksum(shard), close(). Also the loader's errors and URI parsing."""
import json
import os
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET

from strata.s3http import RangeClient, RangeReply, RetryableError, S3Error

INDEX_NAME = "model.safetensors.index.json"
PROBE_BYTES = 64 << 10
KV_SCHEME = "strata-kv"  # strata-kv://host:port/name: the KV transport (strata.loader_kv)


class LoadError(Exception):
    """The checkpoint could not be loaded; nothing partial is returned."""


class ChecksumMismatch(LoadError):
    """Bytes read do not match the checksum the object was stored with."""


def call_with_retries(fn, tries, on_retry=None):
    """fn() with up to `tries` tries while it raises RetryableError (a stall, a reset, a 5xx,
    429 or a throttling reply), backing off from 50 ms (x4, at most 2 s); the last try's error
    is raised. `on_retry()` runs before each further try."""
    delay = 0.05
    for attempt in range(tries):
        try:
            return fn()
        except RetryableError:
            if attempt == tries - 1:
                raise
            if on_retry is not None:
                on_retry()
            time.sleep(delay)
            delay = min(delay * 4, 2.0)


# ---- where, who ---------------------------------------------------------------------------

def parse_uri(uri):
    u = urllib.parse.urlsplit(uri)
    if u.scheme != "s3" or not u.netloc:
        raise ValueError(f"{uri!r}: expected s3://bucket/key.safetensors or s3://bucket/prefix/")
    return u.netloc, u.path.lstrip("/")


class Endpoint:
    """The endpoint, credentials and region, resolved once; the lean RangeClient for data and
    for a load's few control calls (index, listing, checksums), and a boto3 client for uploads,
    made on first use (`s3`): making one loads botocore's S3 model, ~55 ms here, which a load
    does not need (docs/performance.md)."""

    def __init__(self, endpoint_url=None, access_key=None, secret_key=None, region=None,
                 stall_timeout=1.0, max_pool=16):
        import botocore.session
        session = botocore.session.get_session()
        if access_key and secret_key:
            session.set_credentials(access_key, secret_key)
        creds = session.get_credentials()
        if creds is None:
            raise LoadError("no S3 credentials (pass access_key/secret_key or set "
                            "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)")
        self.credentials = creds.get_frozen_credentials()
        self.region = region or session.get_config_variable("region") or "us-east-1"
        self.endpoint_url = (endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or
                             os.environ.get("AWS_ENDPOINT_URL") or
                             f"https://s3.{self.region}.amazonaws.com")
        self._session, self._max_pool = session, max_pool
        self._s3, self._s3_lock = None, threading.Lock()
        self.ranges = RangeClient(self.endpoint_url, creds, self.region, stall_timeout)

    @property
    def s3(self):
        with self._s3_lock:
            if self._s3 is None:
                import boto3
                import botocore.config
                self._s3 = boto3.session.Session(botocore_session=self._session).client(
                    "s3", endpoint_url=self.endpoint_url, region_name=self.region,
                    config=botocore.config.Config(s3={"addressing_style": "path"},
                                                  max_pool_connections=self._max_pool,
                                                  retries={"max_attempts": 4, "mode": "standard"}))
            return self._s3

    def control(self, method, bucket, key=None, query=None, headers=None, tries=4):
        """RangeClient.request, retried as the data ranges are (call_with_retries)."""
        return call_with_retries(
            lambda: self.ranges.request(method, bucket, key, query, headers), tries)

    def close(self):
        self.ranges.close()


def _local(tag):
    return tag.rsplit("}", 1)[-1]  # without the XML namespace


def _child(node, name):
    return next((c for c in node if _local(c.tag) == name), None)


def _text(node, name, default=None):
    c = _child(node, name)
    return c.text or "" if c is not None else default


_ALGORITHMS = ("CRC32", "CRC32C", "SHA1", "SHA256")  # stored checksums the loader checks


class S3Source:
    """An S3 endpoint: the lean RangeClient for the control calls and the data."""

    def __init__(self, uri, endpoint_url, access_key, secret_key, region, stall_timeout,
                 max_pool):
        self.bucket, self.path = parse_uri(uri)
        self._ep = Endpoint(endpoint_url, access_key, secret_key, region, stall_timeout,
                             max_pool=max_pool)

    def where(self, key):
        return f"s3://{self.bucket}/{key}"

    def close(self):
        self._ep.close()

    def probe(self, key, buf):
        """(bytes read into buf from offset 0, RangeReply with the object's size and pins)."""
        return self._ep.ranges.get_prefix(self.bucket, key, buf)

    def get_range(self, shard, offset, dest):
        self._ep.ranges.get_range(self.bucket, shard.key, offset, dest, **shard.pin())

    def shard_keys(self):
        ep, b, p = self._ep, self.bucket, self.path
        if p.endswith(".safetensors"):
            return [p], None
        prefix = p if not p or p.endswith("/") else p + "/"
        try:
            doc = ep.control("GET", b, prefix + INDEX_NAME)[2]
        except S3Error as e:
            if e.code != "NoSuchKey":
                raise LoadError(f"s3://{b}/{prefix}{INDEX_NAME}: {e}") from None
            doc = None
        except RetryableError as e:
            raise LoadError(f"s3://{b}/{prefix}{INDEX_NAME}: {e}") from None
        if doc is not None:
            try:
                index = json.loads(doc)
                weight_map = index["weight_map"]
                if not isinstance(weight_map, dict) or not all(
                        isinstance(v, str) for v in weight_map.values()):
                    raise ValueError("weight_map must map tensor names to file names")
            except (ValueError, KeyError, TypeError) as e:
                raise LoadError(f"s3://{b}/{prefix}{INDEX_NAME}: not a safetensors index: {e}") from None
            for f in weight_map.values():
                if "/" in f or f in ("", ".", ".."):
                    raise LoadError(f"{INDEX_NAME}: shard name {f!r} is not a file name")
            keys = sorted({prefix + f for f in weight_map.values()})
            return keys, {name: prefix + f for name, f in weight_map.items()}
        try:
            keys = [k for k in self._list(prefix) if k.endswith(".safetensors")]
        except (S3Error, RetryableError, ET.ParseError) as e:
            raise LoadError(f"s3://{b}/{prefix}: listing failed: {e}") from None
        if not keys:
            raise LoadError(f"s3://{b}/{prefix}: no {INDEX_NAME} and no .safetensors objects")
        return sorted(keys), None

    def _list(self, prefix):
        """The keys directly under prefix (ListObjectsV2 with delimiter '/', every page)."""
        keys, token, seen = [], None, set()
        while True:
            query = {"list-type": "2", "prefix": prefix, "delimiter": "/", "encoding-type": "url"}
            if token:
                query["continuation-token"] = token
            root = ET.fromstring(self._ep.control("GET", self.bucket, None, query)[2])
            seen.add(token)
            encoded = _text(root, "EncodingType") == "url"
            for c in root:
                if _local(c.tag) == "Contents":
                    k = _text(c, "Key", "")
                    keys.append(urllib.parse.unquote_plus(k) if encoded else k)
            if _text(root, "IsTruncated") != "true":
                return keys
            token = _text(root, "NextContinuationToken")
            if not token or token in seen:  # a server going round in circles: stop
                raise S3Error(200, "", "a truncated listing page without a new "
                              "NextContinuationToken")

    def checksum(self, shard):
        query = {"versionId": shard.version_id} if shard.version_id else {}
        _, head, _ = self._ep.control("HEAD", self.bucket, shard.key, query,
                                      {"x-amz-checksum-mode": "ENABLED"})
        if head.get("etag") != shard.etag:
            raise LoadError(f"{shard.key} changed while the load began (ETag {head.get('etag')}, "
                            f"pinned {shard.etag})")
        for a in _ALGORITHMS:
            v = head.get("x-amz-checksum-" + a.lower())
            if v:
                shard.checksum = (a, v)
                break
        if shard.checksum and "-" in shard.checksum[1]:
            body = self._ep.control("GET", self.bucket, shard.key, {"attributes": "", **query},
                                    {"x-amz-object-attributes": "ObjectParts",
                                     "x-amz-max-parts": "10000"})[2]
            parts_node = _child(ET.fromstring(body), "ObjectParts")
            parts = []
            for x in (parts_node if parts_node is not None else []):
                if _local(x.tag) != "Part":
                    continue
                number, size = _text(x, "PartNumber"), _text(x, "Size")
                if number is None or size is None:
                    return  # parts without sizes: the composite checksum cannot be checked
                parts.append((int(number), int(size), _text(x, "Checksum" + shard.checksum[0])))
            if parts:
                shard.parts = [(size, value) for _, size, value in sorted(parts)]



class KvSource:
    """A checkpoint in a KV namespace (strata.loader_kv); its errors mapped onto the loader's."""

    def __init__(self, uri, access_key, secret_key):
        from strata import loader_kv
        try:
            self._kv = loader_kv.KvSource(uri, access_key, secret_key)
        except (PermissionError, ValueError) as e:
            raise LoadError(str(e)) from None
        except Exception as e:  # noqa: BLE001 - strata_kv.Error (connect, auth)
            raise LoadError(f"{uri}: {e}") from None

    def where(self, key):
        return self._kv.where(key)

    def close(self):
        self._kv.close()

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except ConnectionError as e:
            raise RetryableError(str(e)) from None
        except (KeyError, ValueError, OSError) as e:
            what = "not stored (evicted or deleted?)" if isinstance(e, KeyError) else str(e)
            raise LoadError(f"{self._kv.where()}: {what}") from None

    def shard_keys(self):
        return self._call(self._kv.shard_keys)

    def probe(self, key, buf):
        size = self._call(self._kv.size, key)
        n = min(len(buf), size)
        self._call(self._kv.get_range, key, 0, buf[:n])
        return n, RangeReply(0, n, size, None, None)

    def get_range(self, shard, offset, dest):
        self._call(self._kv.get_range, shard.key, offset, dest)

    def checksum(self, shard):
        shard.checksum = self._call(self._kv.checksum, shard.key)


def open_source(uri, endpoint_url=None, access_key=None, secret_key=None, region=None,
                stall_timeout=1.0, max_pool=16):
    if urllib.parse.urlsplit(uri).scheme == KV_SCHEME:
        return KvSource(uri, access_key, secret_key)
    return S3Source(uri, endpoint_url, access_key, secret_key, region, stall_timeout, max_pool)

"""Where strata.loader reads a checkpoint from: an S3 endpoint (boto3 for the control calls,
the lean RangeClient for data) or a KV-cache namespace over the KV protocol (strata.loader_kv),
behind one small interface: where(key), shard_keys(), probe(key, buf), get_range(shard,
offset, dest), checksum(shard), close(). Also the loader's errors and URI parsing."""
import json
import os
import urllib.parse

from strata.s3http import RangeClient, RangeReply, RetryableError

INDEX_NAME = "model.safetensors.index.json"
PROBE_BYTES = 64 << 10
KV_SCHEME = "strata-kv"  # strata-kv://host:port/name: the KV transport (strata.loader_kv)


class LoadError(Exception):
    """The checkpoint could not be loaded; nothing partial is returned."""


class ChecksumMismatch(LoadError):
    """Bytes read do not match the checksum the object was stored with."""


# ---- where, who ---------------------------------------------------------------------------

def parse_uri(uri):
    u = urllib.parse.urlsplit(uri)
    if u.scheme != "s3" or not u.netloc:
        raise ValueError(f"{uri!r}: expected s3://bucket/key.safetensors or s3://bucket/prefix/")
    return u.netloc, u.path.lstrip("/")


class Endpoint:
    """The endpoint, credentials and region, resolved once; a boto3 client for the control
    calls (index, listing, checksums, uploads) and the lean RangeClient for data."""

    def __init__(self, endpoint_url=None, access_key=None, secret_key=None, region=None,
                 stall_timeout=1.0, max_pool=16):
        import boto3
        import botocore.config
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
        self.s3 = boto3.session.Session(botocore_session=session).client(
            "s3", endpoint_url=self.endpoint_url, region_name=self.region,
            config=botocore.config.Config(s3={"addressing_style": "path"},
                                          max_pool_connections=max_pool,
                                          retries={"max_attempts": 4, "mode": "standard"}))
        self.ranges = RangeClient(self.endpoint_url, creds, self.region, stall_timeout)

    def close(self):
        self.ranges.close()


_ALGORITHMS = ("CRC32", "CRC32C", "SHA1", "SHA256")  # stored checksums the loader checks


class S3Source:
    """An S3 endpoint: boto3 for the control calls, the lean RangeClient for data."""

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
        s3, b, p = self._ep.s3, self.bucket, self.path
        if p.endswith(".safetensors"):
            return [p], None
        prefix = p if not p or p.endswith("/") else p + "/"
        try:
            doc = s3.get_object(Bucket=b, Key=prefix + INDEX_NAME)["Body"].read()
        except s3.exceptions.NoSuchKey:
            doc = None
        except Exception as e:  # noqa: BLE001 - reported with context
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
        keys = []
        try:
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=b, Prefix=prefix,
                                                                      Delimiter="/"):
                keys += [o["Key"] for o in page.get("Contents", [])
                         if o["Key"].endswith(".safetensors")]
        except Exception as e:  # noqa: BLE001 - botocore's errors, reported with context
            raise LoadError(f"s3://{b}/{prefix}: listing failed: {e}") from None
        if not keys:
            raise LoadError(f"s3://{b}/{prefix}: no {INDEX_NAME} and no .safetensors objects")
        return sorted(keys), None

    def checksum(self, shard):
        s3 = self._ep.s3
        kw = dict(Bucket=self.bucket, Key=shard.key)
        if shard.version_id:
            kw["VersionId"] = shard.version_id
        head = s3.head_object(ChecksumMode="ENABLED", **kw)
        if head.get("ETag") != shard.etag:
            raise LoadError(f"{shard.key} changed while the load began (ETag {head.get('ETag')}, "
                            f"pinned {shard.etag})")
        for a in _ALGORITHMS:
            v = head.get("Checksum" + a)
            if v:
                shard.checksum = (a, v)
                break
        if shard.checksum and "-" in shard.checksum[1]:
            attrs = s3.get_object_attributes(ObjectAttributes=["ObjectParts"], MaxParts=10000, **kw)
            parts = attrs.get("ObjectParts", {}).get("Parts") or []
            a = shard.checksum[0]
            if parts and all("Size" in x for x in parts):
                shard.parts = [(x["Size"], x.get("Checksum" + a)) for x in
                               sorted(parts, key=lambda x: x["PartNumber"])]



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

"""A lean signed S3 ranged-GET client for the loader's data path.

boto3 reads a body into a fresh bytes object and then the caller copies it; the loader wants
every byte to land once, in the buffer that becomes the tensor. So the data path speaks HTTP
itself over http.client (one keep-alive connection per worker thread, `readinto` straight
into the caller's memoryview) and lets botocore do what botocore is good at: SigV4 signing
and finding the credentials. Every reply is checked: 206 with exactly the Content-Range and
Content-Length asked for, and the ETag the load pinned; a recv that makes no progress for
`stall_timeout` seconds fails the request, which the caller retries.
"""
import http.client
import re
import threading
import urllib.parse
import xml.etree.ElementTree as ET

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest


class S3Error(Exception):
    """An S3 error reply: .status (HTTP), .code (the S3 error code, "" if none)."""

    def __init__(self, status, code, message):
        super().__init__(f"{status} {code}: {message}" if code else f"{status}: {message}")
        self.status, self.code = status, code


class RetryableError(Exception):
    """A transport failure (refused, reset, stalled, short body): worth another try."""


_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)$")


class RangeReply:
    __slots__ = ("start", "end", "size", "etag", "version_id")

    def __init__(self, start, end, size, etag, version_id):
        self.start, self.end, self.size = start, end, size  # end exclusive
        self.etag, self.version_id = etag, version_id


class RangeClient:
    def __init__(self, endpoint_url, credentials, region="us-east-1", stall_timeout=1.0):
        u = urllib.parse.urlsplit(endpoint_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"endpoint {endpoint_url!r} is not an http(s) URL")
        self._scheme, self._host = u.scheme, u.hostname
        self._port = u.port or (443 if u.scheme == "https" else 80)
        self._netloc = u.netloc
        self._signer = S3SigV4Auth(credentials, "s3", region)
        self._stall = stall_timeout
        self._local = threading.local()
        self._all = []
        self._all_lock = threading.Lock()
        self.endpoint_url = f"{u.scheme}://{u.netloc}"

    def close(self):
        with self._all_lock:
            conns, self._all = self._all, []
        for c in conns:
            c.close()

    def _conn(self):
        c = getattr(self._local, "conn", None)
        if c is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            c = cls(self._host, self._port, timeout=self._stall)
            self._local.conn = c
            with self._all_lock:
                self._all.append(c)
        return c

    def _drop(self):
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None

    def _signed(self, bucket, key, query, headers):
        path = "/" + urllib.parse.quote(bucket, safe="") + "/" + urllib.parse.quote(key, safe="/~")
        qs = urllib.parse.urlencode(sorted(query.items()), quote_via=urllib.parse.quote)
        url = f"{self.endpoint_url}{path}" + (f"?{qs}" if qs else "")
        req = AWSRequest(method="GET", url=url, headers=headers)
        self._signer.add_auth(req)
        return path + (f"?{qs}" if qs else ""), dict(req.headers.items())

    def _send(self, bucket, key, query, headers, what):
        """Sends one signed GET on this thread's connection; the response, its head read."""
        target, signed = self._signed(bucket, key, query, headers)
        conn = self._conn()
        try:
            conn.request("GET", target, headers=signed)
            return conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            self._drop()
            raise RetryableError(f"{what}: {e}") from None

    @staticmethod
    def _fill(resp, dest, what):
        """Reads exactly len(dest) body bytes into dest."""
        pos = 0
        while pos < len(dest):
            k = resp.readinto(dest[pos:])
            if not k:
                raise RetryableError(f"{what}: body ended at {pos} of {len(dest)}")
            pos += k

    def get_range(self, bucket, key, start, dest, *, total=None, version_id=None, etag=None):
        """Reads bytes [start, start + len(dest)) of the object into `dest` (a writable
        memoryview). `total`: the object size the load pinned (the reply must agree). A range
        running past the end of the object is the caller's error: it asked for what is not
        there (the reply's size says so). Returns a RangeReply."""
        n = len(dest)
        if n == 0:
            raise ValueError("empty range")
        query = {"versionId": version_id} if version_id else {}
        headers = {"Range": f"bytes={start}-{start + n - 1}", "Host": self._netloc}
        if etag:
            headers["If-Match"] = etag
        what = f"GET {key} bytes {start}+{n}"
        resp = self._send(bucket, key, query, headers, what)
        try:
            if resp.status != 206:
                raise _error(resp.status, resp.read(64 << 10), what)
            m = _RANGE.match(resp.getheader("Content-Range", ""))
            length = int(resp.getheader("Content-Length", "-1"))
            if not m:
                raise S3Error(206, "", f"GET {key}: reply has no valid Content-Range")
            r_start, r_end, size = int(m[1]), int(m[2]) + 1, int(m[3])
            if total is not None and size != total:
                raise S3Error(206, "SizeChanged", f"{key} is {size} bytes now, {total} when the "
                              "load began")
            if r_start != start or r_end != start + n or length != n:
                raise S3Error(206, "ShortRange", f"GET {key} bytes {start}+{n}: got "
                              f"{resp.getheader('Content-Range')} ({length} bytes) of {size}")
            got_etag = resp.getheader("ETag")
            if etag and got_etag != etag:
                raise S3Error(206, "ETagChanged", f"{key}: ETag {got_etag}, pinned {etag}")
            self._fill(resp, dest, what)
            return RangeReply(r_start, r_end, size, got_etag, resp.getheader("x-amz-version-id"))
        except (OSError, http.client.HTTPException) as e:  # socket.timeout: a stall
            self._drop()
            raise RetryableError(f"{what}: {e}") from None
        except BaseException:
            self._drop()  # a half-read reply leaves the connection unusable
            raise

    def get_prefix(self, bucket, key, dest):
        """The first len(dest) bytes of an object, or all of it if it is shorter: returns
        (bytes read, RangeReply). A range starting inside an object and ending past its end
        gets the bytes there are (206 with the true Content-Range)."""
        n = len(dest)
        headers = {"Range": f"bytes=0-{n - 1}", "Host": self._netloc}
        what = f"GET {key} head probe"
        resp = self._send(bucket, key, {}, headers, what)
        try:
            if resp.status == 416:  # an empty object has no byte 0
                resp.read()
                return 0, RangeReply(0, 0, 0, resp.getheader("ETag"),
                                     resp.getheader("x-amz-version-id"))
            if resp.status not in (200, 206):
                raise _error(resp.status, resp.read(64 << 10), f"GET {key}")
            if resp.status == 206:
                m = _RANGE.match(resp.getheader("Content-Range", ""))
                if not m or int(m[1]) != 0:
                    raise S3Error(206, "", f"GET {key}: reply has no valid Content-Range")
                size = int(m[3])
                want = int(m[2]) + 1
            else:
                size = want = int(resp.getheader("Content-Length", "-1"))
            if want > n:
                raise S3Error(resp.status, "ShortRange", f"GET {key}: {want} bytes for {n} asked")
            self._fill(resp, dest[:want], what)
            return want, RangeReply(0, want, size, resp.getheader("ETag"),
                                    resp.getheader("x-amz-version-id"))
        except (OSError, http.client.HTTPException) as e:
            self._drop()
            raise RetryableError(f"{what}: {e}") from None
        except BaseException:
            self._drop()
            raise


def _error(status, body, what):
    code, message = "", body[:200].decode("utf-8", "replace")
    try:
        root = ET.fromstring(body)
        code = root.findtext("Code") or ""
        message = root.findtext("Message") or message
    except ET.ParseError:
        pass
    if status in (500, 502, 503, 504):
        return RetryableError(f"{what}: {status} {code} {message}")
    return S3Error(status, code, f"{what}: {message}")


__all__ = ["RangeClient", "RangeReply", "S3Error", "RetryableError"]

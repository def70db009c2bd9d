"""A lean signed S3 ranged-GET client for the loader's data path.

boto3 reads a body into a fresh bytes object and then the caller copies it; the loader wants
every byte to land once, in the buffer that becomes the tensor. So the data path speaks HTTP
itself over http.client (one keep-alive connection per worker thread, `readinto` straight
into the caller's memoryview) and lets botocore do what botocore is good at: SigV4 signing
and finding the credentials. Every reply is checked: 206 with exactly the Content-Range and
Content-Length asked for, and the ETag the load pinned; a recv that makes no progress for
`stall_timeout` seconds fails the request, which the caller retries.

Where the native module `strata_http` (client/http/http_range.h, built next to `strata_kv`)
can be imported, each exchange after the signing runs there instead, with the GIL released from
the send to the last byte of the body (http.client takes the GIL back for every receive; per
byte it cost the loader 1.45-2.5x the CPU, docs/performance.md). STRATA_LOADER_NATIVE_HTTP=0
keeps the pure-Python path. The replies are checked the same way on both.
"""
import http.client
import os
import re
import threading
import urllib.parse
import xml.etree.ElementTree as ET

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest

_native = None


def _native_module():
    """strata_http, if it can be imported (looked for again until it is found: a caller may
    put its build directory on sys.path after importing this module)."""
    global _native
    if _native is None:
        try:
            import strata_http
            _native = strata_http
        except ImportError:
            pass
    return _native


class S3Error(Exception):
    """An S3 error reply: .status (HTTP), .code (the S3 error code, "" if none)."""

    def __init__(self, status, code, message):
        super().__init__(f"{status} {code}: {message}" if code else f"{status}: {message}")
        self.status, self.code = status, code


class RetryableError(Exception):
    """A transport failure (refused, reset, stalled, short body): worth another try."""


_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)$")
CONTROL_TIMEOUT = 60.0  # seconds without progress before a control request fails
# Replies worth another try besides 500/502/503/504, as boto3's standard retry mode has them.
_RETRY_CODES = {"RequestTimeout", "RequestTimeoutException", "Throttling", "ThrottlingException",
                "ThrottledException", "RequestThrottledException", "TooManyRequestsException",
                "SlowDown", "RequestLimitExceeded", "BandwidthLimitExceeded",
                "PriorRequestNotComplete"}
_UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # no CR, LF or other control in a head


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
        # The native exchange (module docstring), unless it is missing or turned off.
        self.native = (os.environ.get("STRATA_LOADER_NATIVE_HTTP", "1") != "0" and
                       _native_module() is not None)

    def close(self):
        with self._all_lock:
            conns, self._all = self._all, []
        for c in conns:
            c.close()

    def _conn(self, control=False):
        """This thread's connection for data (a stall fails a request after `stall_timeout`)
        or, with `control`, for control requests, which may take the server longer to
        answer (a listing page of a large prefix): CONTROL_TIMEOUT, as boto3's read timeout."""
        name = "control" if control else "conn"
        c = getattr(self._local, name, None)
        if c is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            c = cls(self._host, self._port,
                    timeout=max(self._stall, CONTROL_TIMEOUT) if control else self._stall)
            setattr(self._local, name, c)
            with self._all_lock:
                self._all.append(c)
        return c

    def _drop(self, control=False):
        name = "control" if control else "conn"
        c = getattr(self._local, name, None)
        if c is not None:
            c.close()
            setattr(self._local, name, None)
        if not control:
            self._drop_native()

    def _drop_native(self):
        """Closes this thread's native connection (a reply the checks refused may have left
        its body unread: the next request must not read it as its own)."""
        c = getattr(self._local, "native", None)
        if c is not None:
            c.close()
            self._local.native = None

    def _signed(self, bucket, key, query, headers, method="GET"):
        """(request target, signed headers). key None: the bucket itself (a listing)."""
        path = "/" + urllib.parse.quote(bucket, safe="")
        if key is not None:
            path += "/" + urllib.parse.quote(key, safe="/~")
        qs = urllib.parse.urlencode(sorted(query.items()), quote_via=urllib.parse.quote)
        url = f"{self.endpoint_url}{path}" + (f"?{qs}" if qs else "")
        req = AWSRequest(method=method, url=url, headers=headers)
        self._signer.add_auth(req)
        return path + (f"?{qs}" if qs else ""), dict(req.headers.items())

    def _send(self, bucket, key, query, headers, what, method="GET", control=False):
        """Sends one signed request on this thread's connection (`_conn`); the response, its
        head read."""
        target, signed = self._signed(bucket, key, query, headers, method)
        conn = self._conn(control)
        try:
            conn.request(method, target, headers=signed)
            return conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            self._drop(control)
            raise RetryableError(f"{what}: {e}") from None

    def request(self, method, bucket, key=None, query=None, headers=None, limit=16 << 20):
        """One signed control request (a HEAD, or a GET of a small document: an index, a
        listing page, an object's attributes) on this thread's http.client connection, so a
        load needs no boto3 client (creating one costs ~55 ms, docs/performance.md). Returns
        (status, {lower-case header name: value}, body). An error reply raises S3Error
        (RetryableError for 500/502/503/504), a transport failure RetryableError, a body over
        `limit` bytes S3Error."""
        what = f"{method} {bucket}/{key}" if key is not None else f"{method} {bucket}"
        hdrs = {"Host": self._netloc, **(headers or {})}
        resp = self._send(bucket, key, query or {}, hdrs, what, method, control=True)
        try:
            body = resp.read(limit + 1)
            if len(body) > limit:
                self._drop(control=True)  # the rest of the body is still on the connection
                raise S3Error(resp.status, "", f"{what}: reply body over {limit} bytes")
        except (OSError, http.client.HTTPException) as e:
            self._drop(control=True)
            raise RetryableError(f"{what}: {e}") from None
        if resp.status >= 300:
            raise _error(resp.status, body, what)
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body

    def _exchange(self, bucket, key, query, headers, what, dest, exact):
        """The native path: one signed GET on this thread's native connection; a 200/206 body
        that fits (exactly len(dest) bytes if `exact`, else at most) lands in dest."""
        target, signed = self._signed(bucket, key, query, headers)
        for k, v in signed.items():  # as http.client's putheader refuses them
            if _UNSAFE.search(k) or _UNSAFE.search(v):
                raise ValueError(f"{what}: header {k!r} has a control character")
        head = (f"GET {target} HTTP/1.1\r\n" +
                "".join(f"{k}: {v}\r\n" for k, v in signed.items()) + "\r\n").encode("latin-1")
        conn = getattr(self._local, "native", None)
        try:
            if conn is None or not conn.usable:
                conn = _native.Connection(self._host, self._port, max(1, int(self._stall * 1000)),
                                          tls=self._scheme == "https",
                                          server_name=self._host)
                self._local.native = conn
                with self._all_lock:
                    self._all.append(conn)
            status, hdrs, body, filled = conn.exchange(head, dest, exact)
        except (_native.Error, OSError) as e:  # refused, reset, stalled, TLS, not HTTP
            self._drop_native()
            raise RetryableError(f"{what}: {e}") from None
        return _NativeReply(status, hdrs, body, filled)

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
        if self.native:
            resp = self._exchange(bucket, key, query, headers, what, dest, True)
            try:
                reply = self._check_range(resp, key, start, n, total, etag, what)
                if resp.filled != n:  # cannot be after the checks; never trust dest then
                    raise RetryableError(f"{what}: body not received")
                return reply
            except BaseException:
                self._drop_native()
                raise
        resp = self._send(bucket, key, query, headers, what)
        try:
            reply = self._check_range(resp, key, start, n, total, etag, what)
            self._fill(resp, dest, what)
            return reply
        except (OSError, http.client.HTTPException) as e:  # socket.timeout: a stall
            self._drop()
            raise RetryableError(f"{what}: {e}") from None
        except BaseException:
            self._drop()  # a half-read reply leaves the connection unusable
            raise

    @staticmethod
    def _check_range(resp, key, start, n, total, etag, what):
        """The reply to a ranged GET of [start, start + n), as the loader needs it: 206 with
        exactly that Content-Range and Content-Length, the pinned size and ETag."""
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
        return RangeReply(r_start, r_end, size, got_etag, resp.getheader("x-amz-version-id"))

    def get_prefix(self, bucket, key, dest):
        """The first len(dest) bytes of an object, or all of it if it is shorter: returns
        (bytes read, RangeReply). A range starting inside an object and ending past its end
        gets the bytes there are (206 with the true Content-Range)."""
        n = len(dest)
        headers = {"Range": f"bytes=0-{n - 1}", "Host": self._netloc}
        what = f"GET {key} head probe"
        if self.native:
            resp = self._exchange(bucket, key, {}, headers, what, dest, False)
            try:
                got, reply = self._check_prefix(resp, key, n)
                if resp.filled != got:
                    raise S3Error(resp.status, "ShortRange", f"GET {key}: {resp.filled} body "
                                  f"bytes for {got} in the reply's range")
                return got, reply
            except BaseException:
                self._drop_native()
                raise
        resp = self._send(bucket, key, {}, headers, what)
        try:
            want, reply = self._check_prefix(resp, key, n)
            if want:
                self._fill(resp, dest[:want], what)
            else:
                resp.read()
            return want, reply
        except (OSError, http.client.HTTPException) as e:
            self._drop()
            raise RetryableError(f"{what}: {e}") from None
        except BaseException:
            self._drop()
            raise

    @staticmethod
    def _check_prefix(resp, key, n):
        """(bytes the reply to a probe of n bytes carries, RangeReply)."""
        if resp.status == 416:  # an empty object has no byte 0
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
        if want > n or want < 0:
            raise S3Error(resp.status, "ShortRange", f"GET {key}: {want} bytes for {n} asked")
        return want, RangeReply(0, want, size, resp.getheader("ETag"),
                                resp.getheader("x-amz-version-id"))


class _NativeReply:
    """strata_http's reply, read like an http.client response by the checks."""
    __slots__ = ("status", "_headers", "_body", "filled")

    def __init__(self, status, headers, body, filled):
        self.status, self._headers, self._body, self.filled = status, headers, body, filled

    def getheader(self, name, default=None):
        return self._headers.get(name.lower(), default)

    def read(self, n=-1):
        return self._body if n < 0 else self._body[:n]


def _error(status, body, what):
    code, message = "", body[:200].decode("utf-8", "replace")
    try:
        root = ET.fromstring(body)
        code = root.findtext("Code") or ""
        message = root.findtext("Message") or message
    except ET.ParseError:
        pass
    if status in (429, 500, 502, 503, 504) or code in _RETRY_CODES:
        return RetryableError(f"{what}: {status} {code} {message}")
    return S3Error(status, code, f"{what}: {message}")


__all__ = ["RangeClient", "RangeReply", "S3Error", "RetryableError"]

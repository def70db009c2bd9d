"""Raw-socket HTTP/1.1 helpers for the integration tests.

Requests are signed with botocore's own SigV4 code (S3SigV4Auth over an
AWSRequest) and then written byte by byte over a plain socket, so a test can
lie about Content-Length, cut a body short, pipeline requests or send garbage.
Also: a small HTTP/1.1 response reader and a builder for signed aws-chunked
(STREAMING-AWS4-HMAC-SHA256-PAYLOAD) bodies written with hmac/hashlib only.

Run with Debian's /usr/bin/python3 (it has botocore).
"""
import datetime
import hashlib
import hmac
import re
import socket
from urllib.parse import quote

from email.utils import formatdate

from botocore.auth import HmacV1Auth, S3SigV4Auth, SIGV4_TIMESTAMP
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from harness import ACCESS_KEY, SECRET_KEY, REGION

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
STREAMING_PAYLOAD = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
DEFAULT_TIMEOUT = 20.0


def sha256_hex(data):
    return hashlib.sha256(data).hexdigest()


def quote_key(key):
    """Percent-encodes an object key for a path the way the AWS SDKs do."""
    if isinstance(key, str):
        key = key.encode("utf-8")
    return quote(key, safe="/~")


# --------------------------------------------------------------------------
# Signing
# --------------------------------------------------------------------------
class _Signer(S3SigV4Auth):
    """S3SigV4Auth with a caller-chosen payload hash and clock, and optionally
    some headers left out of SignedHeaders (sent, but not signed)."""

    def __init__(self, credentials, region, payload_hash=None, when=None, unsigned_headers=()):
        super().__init__(credentials, "s3", region)
        self._payload_hash = payload_hash
        self._when = when
        self._unsigned = {n.lower() for n in unsigned_headers}

    def headers_to_sign(self, request):
        headers = super().headers_to_sign(request)
        for name in self._unsigned:
            if name in headers:
                del headers[name]
        return headers

    def payload(self, request):
        if self._payload_hash is not None:
            return self._payload_hash
        return super().payload(request)

    def add_auth(self, request):
        # Same as SigV4Auth.add_auth but with an injectable timestamp.
        when = self._when or datetime.datetime.utcnow()
        request.context["timestamp"] = when.strftime(SIGV4_TIMESTAMP)
        self._modify_request_before_signing(request)
        canonical_request = self.canonical_request(request)
        string_to_sign = self.string_to_sign(request, canonical_request)
        signature = self.signature(string_to_sign, request)
        self._inject_signature_to_request(request, signature)
        self.last_signature = signature
        self.last_timestamp = request.context["timestamp"]


class Signed:
    """A signed request: method, target (path?query), ordered header list, body."""

    def __init__(self, method, target, headers, body, signature=None, amz_date=None, scope=None,
                 signing_key=None):
        self.method = method
        self.target = target
        self.headers = headers  # list of (name, value)
        self.body = body
        self.signature = signature
        self.amz_date = amz_date
        self.scope = scope
        self.signing_key = signing_key

    def header_block(self, extra_headers=()):
        lines = [f"{self.method} {self.target} HTTP/1.1"]
        for name, value in list(self.headers) + list(extra_headers):
            lines.append(f"{name}: {value}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def to_bytes(self, extra_headers=()):
        return self.header_block(extra_headers) + (self.body or b"")


def signing_key(secret, date, region=REGION, service="s3"):
    k = hmac.new(("AWS4" + secret).encode(), date.encode(), hashlib.sha256).digest()
    k = hmac.new(k, region.encode(), hashlib.sha256).digest()
    k = hmac.new(k, service.encode(), hashlib.sha256).digest()
    return hmac.new(k, b"aws4_request", hashlib.sha256).digest()


def sign(port, method, path, query="", headers=None, body=b"", payload_hash=None, when=None,
         access_key=ACCESS_KEY, secret_key=SECRET_KEY, region=REGION, content_length=True,
         unsigned_headers=()):
    """Signs a request with botocore SigV4 and returns a Signed.

    path: already percent-encoded path ("/bucket/key"). query: raw query
    string without '?' ("delete", "list-type=2&prefix=a"). headers: dict or
    list of extra headers to send and sign. payload_hash: the
    x-amz-content-sha256 value to sign (default: sha256 of body).
    content_length: True -> Content-Length: len(body) is added (and signed)
    unless headers already has one; an int -> that value; False -> none.
    unsigned_headers: names sent but left out of SignedHeaders (e.g. "x-amz-date").
    """
    headers = list(headers.items() if isinstance(headers, dict) else (headers or []))
    names = {n.lower() for n, _ in headers}
    host = f"127.0.0.1:{port}"
    if "host" not in names:
        headers.insert(0, ("Host", host))
    if "content-length" not in names and content_length is not False:
        cl = len(body or b"") if content_length is True else int(content_length)
        headers.append(("Content-Length", str(cl)))
    if payload_hash is None:
        payload_hash = sha256_hex(body or b"")
    target = path + (("?" + query) if query else "")
    url = f"http://{host}{target}"
    req = AWSRequest(method=method, url=url, data=body or b"", headers=dict(headers))
    signer = _Signer(Credentials(access_key, secret_key), region, payload_hash=payload_hash, when=when,
                     unsigned_headers=unsigned_headers)
    signer.add_auth(req)
    # AWSRequest's headers are case-insensitive; keep the caller's order, then
    # append what the signer added.
    out = []
    seen = set()
    for name, _ in headers:
        if name.lower() in seen:
            continue
        seen.add(name.lower())
        out.append((name, req.headers[name]))
    for name, value in req.headers.items():
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append((name, value))
    date = signer.last_timestamp
    scope = f"{date[:8]}/{region}/s3/aws4_request"
    return Signed(method, target, out, body or b"", signature=signer.last_signature, amz_date=date,
                  scope=scope, signing_key=signing_key(secret_key, date[:8], region))


class _V2Signer(HmacV1Auth):
    """botocore's SigV2 signer (Authorization: AWS key:signature) with an
    injectable clock for its Date header."""

    def __init__(self, credentials, when=None):
        super().__init__(credentials)
        self._when = when

    def _get_date(self):
        if self._when is None:
            return super()._get_date()
        return formatdate(self._when.replace(tzinfo=datetime.timezone.utc).timestamp(), usegmt=True)


def sign_v2(port, method, path, query="", headers=None, body=b"", host=None, when=None,
            access_key=ACCESS_KEY, secret_key=SECRET_KEY):
    """Signs a request with botocore's SigV2 code and returns a Signed.

    path/query as in sign(). host: the Host header, e.g. "b.s3.test:PORT" for
    virtual-host style; then `path` is the key path and the bucket (the first
    label of host) is signed as the start of the resource, as botocore does.
    when: a naive UTC datetime for the Date header (default: now).
    """
    headers = list(headers.items() if isinstance(headers, dict) else (headers or []))
    host = host or f"127.0.0.1:{port}"
    headers.insert(0, ("Host", host))
    headers.append(("Content-Length", str(len(body or b""))))
    target = path + (("?" + query) if query else "")
    auth_path = None
    if not host.startswith("127.0.0.1"):
        auth_path = "/" + host.split(".", 1)[0] + path
    req = AWSRequest(method=method, url=f"http://{host}{target}", data=body or b"",
                     headers=dict(headers), auth_path=auth_path)
    _V2Signer(Credentials(access_key, secret_key), when=when).add_auth(req)
    return Signed(method, target, list(req.headers.items()), body or b"")


def unsigned(port, method, target, headers=None, body=b"", content_length=True):
    """A request with no Authorization at all."""
    headers = list(headers.items() if isinstance(headers, dict) else (headers or []))
    names = {n.lower() for n, _ in headers}
    if "host" not in names:
        headers.insert(0, ("Host", f"127.0.0.1:{port}"))
    if "content-length" not in names and content_length is not False:
        cl = len(body or b"") if content_length is True else int(content_length)
        headers.append(("Content-Length", str(cl)))
    return Signed(method, target, headers, body or b"")


# --------------------------------------------------------------------------
# aws-chunked (STREAMING-AWS4-HMAC-SHA256-PAYLOAD)
# --------------------------------------------------------------------------
def chunk_signature(key, amz_date, scope, prev_sig, data):
    sts = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, prev_sig, EMPTY_SHA256,
                     sha256_hex(data)])
    return hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()


def aws_chunked_body(chunks, seed_signature, amz_date, scope, key, tamper=None):
    """Encodes `chunks` (a list of bytes; the final empty chunk is appended)
    as a signed aws-chunked body. tamper(index, size_hex, sig, data) may return
    a replacement (size_hex, sig, data) tuple for chunk `index` to corrupt it;
    signatures chain over the *original* data so a tampered chunk breaks it."""
    out = []
    prev = seed_signature
    for i, data in enumerate(list(chunks) + [b""]):
        sig = chunk_signature(key, amz_date, scope, prev, data)
        prev = sig
        size_hex = format(len(data), "x")
        if tamper is not None:
            replaced = tamper(i, size_hex, sig, data)
            if replaced is not None:
                size_hex, sig, data = replaced
        out.append(f"{size_hex};chunk-signature={sig}\r\n".encode() + data + b"\r\n")
    return b"".join(out)


def encoded_length(chunk_sizes):
    """Length of an aws-chunked body with the given chunk sizes (+ final 0 chunk)."""
    total = 0
    for n in list(chunk_sizes) + [0]:
        total += len(format(n, "x")) + len(";chunk-signature=") + 64 + 2 + n + 2
    return total


def split_chunks(data, chunk_size):
    return [data[i:i + chunk_size] for i in range(0, len(data), chunk_size)] or []


def signed_streaming_put(port, path, data, chunk_size=64 * 1024, headers=None, tamper=None,
                         decoded_length=None, chunks=None):
    """Builds a signed aws-chunked PUT. Returns the Signed with its body set.

    decoded_length overrides x-amz-decoded-content-length (to lie);
    chunks overrides how `data` is split."""
    chunks = chunks if chunks is not None else split_chunks(data, chunk_size)
    dlen = len(data) if decoded_length is None else decoded_length
    hdrs = list(headers.items() if isinstance(headers, dict) else (headers or []))
    hdrs += [("Content-Encoding", "aws-chunked"), ("x-amz-decoded-content-length", str(dlen))]
    # Content-Length is the encoded length; compute it from the untampered
    # layout, then fix it up if tampering changed the size.
    enc_len = encoded_length([len(c) for c in chunks])
    req = sign(port, "PUT", path, headers=hdrs, body=b"", payload_hash=STREAMING_PAYLOAD,
               content_length=enc_len)
    body = aws_chunked_body(chunks, req.signature, req.amz_date, req.scope, req.signing_key, tamper)
    if len(body) != enc_len:
        raise ValueError("tampering changed the encoded length; pass a same-length replacement")
    req.body = body
    return req


# --------------------------------------------------------------------------
# Connection and response reader
# --------------------------------------------------------------------------
class Response:
    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers  # list of (name, value) as received
        self.body = body

    def header(self, name, default=None):
        name = name.lower()
        for n, v in self.headers:
            if n.lower() == name:
                return v
        return default

    @property
    def error_code(self):
        m = re.search(rb"<Code>([^<]*)</Code>", self.body or b"")
        return m.group(1).decode() if m else None

    def __repr__(self):
        return f"<Response {self.status} {self.reason} {self.body[:300]!r}>"


class ConnectionClosed(Exception):
    """The server closed the connection before a complete response arrived."""


class Conn:
    """One client TCP connection with a read buffer (so pipelined responses work)."""

    def __init__(self, port, timeout=DEFAULT_TIMEOUT):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.eof = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, data):
        self.sock.sendall(data)

    def try_send(self, data):
        """sendall that reports (rather than raises) a peer that went away."""
        try:
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def shutdown_write(self):
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def _fill(self):
        if self.eof:
            return False
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            data = b""
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def _read_line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            if not self._fill():
                raise ConnectionClosed(f"EOF while reading a line; have {self.buf[:200]!r}")

    def _read_exact(self, n):
        while len(self.buf) < n:
            if not self._fill():
                raise ConnectionClosed(f"EOF after {len(self.buf)} of {n} body bytes")
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def at_eof(self, wait=2.0):
        """True when the server has closed (or closes within `wait` seconds) with nothing pending."""
        if self.buf:
            return False
        old = self.sock.gettimeout()
        self.sock.settimeout(wait)
        try:
            return not self._fill()
        except socket.timeout:
            return False
        finally:
            self.sock.settimeout(old)

    def read_response(self, method="GET", allow_interim=False):
        """Reads one response. 1xx responses are skipped unless allow_interim."""
        while True:
            line = self._read_line()
            while line == b"" and not allow_interim:  # tolerate stray CRLF between responses
                line = self._read_line()
            m = re.match(rb"HTTP/1\.[01] (\d{3})(?: (.*))?$", line)
            if not m:
                raise AssertionError(f"bad status line {line!r}")
            status = int(m.group(1))
            reason = (m.group(2) or b"").decode("latin-1")
            headers = []
            while True:
                h = self._read_line()
                if h == b"":
                    break
                name, _, value = h.partition(b":")
                headers.append((name.decode("latin-1").strip(), value.decode("latin-1").strip()))
            resp = Response(status, reason, headers, b"")
            if 100 <= status < 200:
                if allow_interim:
                    return resp
                continue
            break
        if method == "HEAD" or status in (204, 304):
            return resp
        te = (resp.header("Transfer-Encoding") or "").lower()
        cl = resp.header("Content-Length")
        if "chunked" in te:
            body = []
            while True:
                size_line = self._read_line()
                size = int(size_line.split(b";")[0].strip(), 16)
                if size == 0:
                    while self._read_line() != b"":  # trailers
                        pass
                    break
                body.append(self._read_exact(size))
                if self._read_line() != b"":
                    raise AssertionError("bad chunk terminator in response")
            resp.body = b"".join(body)
        elif cl is not None:
            resp.body = self._read_exact(int(cl))
        else:
            while self._fill():
                pass
            resp.body, self.buf = self.buf, b""
        return resp


def send_request(port, req, method=None, timeout=DEFAULT_TIMEOUT):
    """Sends one request on a fresh connection and reads the response."""
    with Conn(port, timeout=timeout) as c:
        data = req if isinstance(req, (bytes, bytearray)) else req.to_bytes()
        c.try_send(data)
        return c.read_response(method or (req.method if hasattr(req, "method") else "GET"))


def request(port, method, path, query="", headers=None, body=b"", **kw):
    """Signs and sends one request on a fresh connection; returns the Response."""
    req = sign(port, method, path, query=query, headers=headers, body=body, **kw)
    return send_request(port, req, method)


# --------------------------------------------------------------------------
# aws-chunked with trailers (STREAMING-UNSIGNED-PAYLOAD-TRAILER and
# STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER)
# --------------------------------------------------------------------------
STREAMING_UNSIGNED_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
STREAMING_SIGNED_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"


def trailer_lines(trailers):
    """[(name, value)] -> b"name:value\\r\\n..." (the order given)."""
    return b"".join(f"{n}:{v}\r\n".encode() for n, v in trailers)


def unsigned_trailer_body(chunks, trailers):
    """STREAMING-UNSIGNED-PAYLOAD-TRAILER body: "hex\\r\\n data\\r\\n" per chunk,
    "0\\r\\n", the trailer lines, then "\\r\\n" (as botocore writes it)."""
    out = [format(len(c), "x").encode() + b"\r\n" + c + b"\r\n" for c in chunks if c]
    out.append(b"0\r\n")
    out.append(trailer_lines(trailers))
    out.append(b"\r\n")
    return b"".join(out)


def trailer_signature(key, amz_date, scope, prev_sig, trailers):
    """x-amz-trailer-signature: HMAC over "AWS4-HMAC-SHA256-TRAILER\\n" date scope
    previous-signature and hex(sha256 of the "name:value\\n" trailer lines)."""
    canonical = "".join(f"{n}:{v}\n" for n, v in trailers).encode()
    sts = "\n".join(["AWS4-HMAC-SHA256-TRAILER", amz_date, scope, prev_sig, sha256_hex(canonical)])
    return hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()


def signed_trailer_body(chunks, trailers, seed_signature, amz_date, scope, key,
                        signed_trailers=None, trailer_sig=None):
    """STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER body: signed chunks, the
    signed final 0-chunk, the trailer lines, "x-amz-trailer-signature:<hex>",
    then "\\r\\n". signed_trailers: what the trailer signature is computed over
    (default: `trailers`, i.e. a correct signature); trailer_sig overrides it."""
    out = []
    prev = seed_signature
    for data in [c for c in chunks if c] + [b""]:
        sig = chunk_signature(key, amz_date, scope, prev, data)
        prev = sig
        out.append(f"{len(data):x};chunk-signature={sig}\r\n".encode() + data)
        if data:
            out.append(b"\r\n")
    out.append(trailer_lines(trailers))
    if trailer_sig is None:
        trailer_sig = trailer_signature(key, amz_date, scope, prev,
                                        trailers if signed_trailers is None else signed_trailers)
    out.append(f"x-amz-trailer-signature:{trailer_sig}\r\n".encode())
    out.append(b"\r\n")
    return b"".join(out)


def trailer_put(port, path, data, trailers, signed=False, query="", chunk_size=64 * 1024,
                headers=None, trailer_header=None, decoded_length=None, chunks=None,
                mutate=None, signed_trailers=None, trailer_sig=None):
    """Builds a PUT (PutObject, or UploadPart with `query`) whose body is
    aws-chunked with trailers. Returns the Signed, ready for send_request.

    trailers: [(name, value)] sent after the final chunk. trailer_header: the
    x-amz-trailer value (default: the first trailer's name; "" -> header left
    out). decoded_length overrides x-amz-decoded-content-length. mutate(body)
    may return a changed body (unsigned mode only: Content-Length follows it).
    signed_trailers / trailer_sig: see signed_trailer_body."""
    chunks = chunks if chunks is not None else split_chunks(data, chunk_size)
    if trailer_header is None:
        trailer_header = trailers[0][0] if trailers else ""
    hdrs = list(headers.items() if isinstance(headers, dict) else (headers or []))
    hdrs += [("Content-Encoding", "aws-chunked"),
             ("x-amz-decoded-content-length", str(len(data) if decoded_length is None else decoded_length))]
    if trailer_header:
        hdrs.append(("x-amz-trailer", trailer_header))
    if not signed:
        body = unsigned_trailer_body(chunks, trailers)
        if mutate is not None:
            body = mutate(body)
        req = sign(port, "PUT", path, query=query, headers=hdrs, body=b"",
                   payload_hash=STREAMING_UNSIGNED_TRAILER, content_length=len(body))
        req.body = body
        return req
    if mutate is not None:
        raise ValueError("mutate is for the unsigned mode")
    # Every signature is 64 hex digits, so a dummy layout has the real length.
    dummy = "0" * 64
    length = len(signed_trailer_body(chunks, trailers, dummy, "20000101T000000Z", "x", b"k",
                                     trailer_sig=trailer_sig))
    req = sign(port, "PUT", path, query=query, headers=hdrs, body=b"",
               payload_hash=STREAMING_SIGNED_TRAILER, content_length=length)
    req.body = signed_trailer_body(chunks, trailers, req.signature, req.amz_date, req.scope,
                                   req.signing_key, signed_trailers=signed_trailers,
                                   trailer_sig=trailer_sig)
    if len(req.body) != length:
        raise AssertionError("signed trailer body length changed")
    return req

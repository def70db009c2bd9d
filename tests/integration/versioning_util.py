"""Helpers shared by the versioning / Object Lock tests (test_versioning.py,
test_object_lock.py, test_versioning_durability.py).

FastClient: one keep-alive HTTP/1.1 connection with SigV4 signing (botocore's
S3SigV4Auth), for writing thousands of small versions quickly and for reading
response headers (x-amz-version-id, x-amz-delete-marker) exactly as sent.
list_versions_page / list_versions_all: ListObjectVersions parsed from the raw
XML, so that <Version> and <DeleteMarker> keep their order on the wire (boto3
splits them into two lists).
"""
import base64
import datetime
import hashlib
import http.client
import re
import socket
from collections import namedtuple
from urllib.parse import quote

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from harness import ACCESS_KEY, REGION, SECRET_KEY, ServerTestCase, no_empty_expect, parse_xml
from rawhttp import quote_key

# RFC 3986 unreserved characters: a version id must go into a query string as is.
URL_SAFE = re.compile(r"^[A-Za-z0-9._~-]+$")
ISO8601 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def md5_hex(data):
    return hashlib.md5(data).hexdigest()


def etag_of(data):
    return '"%s"' % md5_hex(data)


def content_md5(data):
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def qs(*pairs, **params):
    """A query string: pairs are (name, value) or a bare name (value None);
    values are percent-encoded as SigV4 wants them."""
    items = list(pairs) + list(params.items())
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
            continue
        k, v = item
        if v is None:
            out.append(k)
        else:
            out.append(f"{k}={quote(str(v), safe='-_.~')}")
    return "&".join(out)


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def whole_seconds_from_now(seconds):
    """A UTC datetime `seconds` from now, rounded up to a whole second."""
    t = utc_now().replace(microsecond=0) + datetime.timedelta(seconds=1)
    return t + datetime.timedelta(seconds=seconds)


def iso(dt):
    return dt.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def parse_iso(s):
    s = s.strip()
    if s.endswith("Z"):
        s = s[:-1] + "+00:00"
    return datetime.datetime.fromisoformat(s)


class Resp:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers  # lower-case name -> value
        self.body = body

    def header(self, name, default=None):
        return self.headers.get(name.lower(), default)

    @property
    def error_code(self):
        m = re.search(rb"<Code>([^<]*)</Code>", self.body or b"")
        return m.group(1).decode() if m else None

    def __repr__(self):
        hdrs = {k: v for k, v in self.headers.items() if k.startswith("x-amz-")}
        return f"<Resp {self.status} {hdrs} {self.body[:400]!r}>"


class FastClient:
    """SigV4-signed requests over one keep-alive connection (not thread safe:
    one per thread). retry_stale: resend once when a reused connection turns
    out to have been closed by the server before the request (never for
    tests that count acknowledgements)."""

    def __init__(self, port, timeout=60, retry_stale=True):
        self.port = port
        self.host = f"127.0.0.1:{port}"
        self.timeout = timeout
        self.retry_stale = retry_stale
        self.creds = Credentials(ACCESS_KEY, SECRET_KEY)
        self.conn = None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def _connect(self):
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def request(self, method, path, query="", headers=None, body=b""):
        """path: already percent-encoded ("/bucket/key"); query: see qs()."""
        target = path + ("?" + query if query else "")
        req = AWSRequest(method=method, url=f"http://{self.host}{target}", data=body or b"",
                         headers=dict(headers or {}))
        S3SigV4Auth(self.creds, "s3", REGION).add_auth(req)
        hdrs = dict(req.headers.items())
        hdrs["Host"] = self.host
        send_body = body if (body or method in ("PUT", "POST")) else None
        if send_body is not None:
            hdrs["Content-Length"] = str(len(send_body))
        for attempt in (0, 1):
            reused = self.conn is not None
            if not reused:
                self._connect()
            try:
                self.conn.request(method, target, body=send_body, headers=hdrs)
                r = self.conn.getresponse()
                data = r.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                    http.client.CannotSendRequest, http.client.BadStatusLine):
                self.close()
                if attempt == 0 and reused and self.retry_stale:
                    continue
                raise
            except Exception:
                self.close()
                raise
            resp = Resp(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
            if (resp.header("connection") or "").lower() == "close":
                self.close()
            return resp
        raise AssertionError("unreachable")

    # ---- object shortcuts ------------------------------------------------
    def obj(self, method, bucket, key, version_id=None, query="", headers=None, body=b""):
        q = query
        if version_id is not None:
            q = (q + "&" if q else "") + qs(versionId=version_id)
        return self.request(method, f"/{bucket}/{quote_key(key)}", query=q, headers=headers, body=body)

    def put(self, bucket, key, body, headers=None):
        return self.obj("PUT", bucket, key, headers=headers, body=body)

    def get(self, bucket, key, version_id=None, headers=None):
        return self.obj("GET", bucket, key, version_id=version_id, headers=headers)

    def head(self, bucket, key, version_id=None, headers=None):
        return self.obj("HEAD", bucket, key, version_id=version_id, headers=headers)

    def delete(self, bucket, key, version_id=None, headers=None):
        return self.obj("DELETE", bucket, key, version_id=version_id, headers=headers)


# ---- ListObjectVersions ------------------------------------------------------
Entry = namedtuple("Entry", "kind key version_id is_latest etag size last_modified")
# kind: "V" (a <Version>) or "M" (a <DeleteMarker>); etag/size None for markers.


class Page:
    def __init__(self, root, resp):
        self.resp = resp
        self.root = root
        self.entries = []
        self.prefixes = []
        self.order = []  # ("E", Entry) / ("P", prefix) in document order
        for child in root:
            if child.tag == "Version":
                e = Entry("V", child.findtext("Key"), child.findtext("VersionId"),
                          child.findtext("IsLatest"), child.findtext("ETag"),
                          int(child.findtext("Size")) if child.findtext("Size") is not None else None,
                          child.findtext("LastModified"))
                self.entries.append(e)
                self.order.append(("E", e))
            elif child.tag == "DeleteMarker":
                e = Entry("M", child.findtext("Key"), child.findtext("VersionId"),
                          child.findtext("IsLatest"), None, None, child.findtext("LastModified"))
                self.entries.append(e)
                self.order.append(("E", e))
            elif child.tag == "CommonPrefixes":
                p = child.findtext("Prefix")
                self.prefixes.append(p)
                self.order.append(("P", p))

    def field(self, name):
        return self.root.findtext(name)

    @property
    def truncated(self):
        return self.root.findtext("IsTruncated") == "true"


def list_versions_page(client, bucket, **params):
    """One ListObjectVersions request; params use the wire names with '_'
    for '-' (key_marker=..., version_id_marker=..., max_keys=..., prefix=...,
    delimiter=..., encoding_type=...). Returns a Page (asserting a 200)."""
    pairs = ["versions"] + [(k.replace("_", "-"), v) for k, v in params.items() if v is not None]
    r = client.request("GET", f"/{bucket}", query=qs(*pairs))
    if r.status != 200:
        raise AssertionError(f"ListObjectVersions {params}: {r}")
    root = parse_xml(r.body)
    if root.tag != "ListVersionsResult":
        raise AssertionError(f"not a ListVersionsResult: {r.body[:300]!r}")
    return Page(root, r)


def list_versions_all(client, bucket, max_pages=10000, **params):
    """Pages through ListObjectVersions with NextKeyMarker/NextVersionIdMarker.
    Returns (entries, prefixes, pages)."""
    entries, prefixes, pages = [], [], []
    key_marker = params.pop("key_marker", None)
    vid_marker = params.pop("version_id_marker", None)
    while True:
        page = list_versions_page(client, bucket, key_marker=key_marker,
                                  version_id_marker=vid_marker, **params)
        pages.append(page)
        entries += page.entries
        prefixes += page.prefixes
        if not page.truncated:
            return entries, prefixes, pages
        key_marker = page.field("NextKeyMarker")
        vid_marker = page.field("NextVersionIdMarker")
        if not key_marker:
            raise AssertionError(f"truncated page without NextKeyMarker: {page.resp.body[:500]!r}")
        if len(pages) >= max_pages:
            raise AssertionError(f"more than {max_pages} pages")


# ---- the test base class -----------------------------------------------------
class VersioningCase(ServerTestCase):
    """Shared helpers: self.fc (raw keep-alive client), versioned buckets."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        no_empty_expect(cls.s3)
        cls.fc = FastClient(cls.server.port)

    @classmethod
    def tearDownClass(cls):
        cls.fc.close()
        super().tearDownClass()

    def tearDown(self):
        self.assertServerHealthy()

    def set_versioning(self, bucket, status):
        r = self.s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": status})
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)

    def versioned_bucket(self, tag="v"):
        b = self.make_bucket(tag)
        self.set_versioning(b, "Enabled")
        return b

    def versions(self, bucket, **params):
        """[(kind, key, version_id, is_latest)] of ListObjectVersions."""
        entries, _, _ = list_versions_all(self.fc, bucket, **params)
        return [(e.kind, e.key, e.version_id, e.is_latest) for e in entries]

    def put_vid(self, bucket, key, body=b"", headers=None):
        r = self.fc.put(bucket, key, body, headers=headers)
        self.assertEqual(r.status, 200, r)
        vid = r.header("x-amz-version-id")
        self.assertIsNotNone(vid, f"PUT {key}: no x-amz-version-id: {r}")
        return vid

    def delete_marker(self, bucket, key):
        """DELETE without versionId in an Enabled bucket: returns the marker's id."""
        r = self.fc.delete(bucket, key)
        self.assertEqual(r.status, 204, r)
        self.assertEqual(r.header("x-amz-delete-marker"), "true", r)
        vid = r.header("x-amz-version-id")
        self.assertTrue(vid and vid != "null", r)
        return vid

    def assertValidVersionId(self, vid):
        self.assertIsNotNone(vid)
        self.assertNotEqual(vid, "null")
        self.assertRegex(vid, URL_SAFE)

#!/usr/bin/python3
"""Writes the seed corpora of the libFuzzer targets: tests/fuzz/<target>/.

Run with Debian's /usr/bin/python3 (botocore signs the SigV4 seeds, as boto3
would send them, at the fuzz targets' fixed clock 2013-05-24T00:00:00Z with
AWS's example credentials). Each seed starts with the control byte its target
reads (see the header comment of each *_fuzz.cc). Deterministic: rerunning it
rewrites the same files. The kv_frame seeds are not written here (kept as is).
"""
import base64
import datetime
import email.utils
import hashlib
import hmac
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ACCESS = "AKIAIOSFODNN7EXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
REGION = "us-east-1"
FIXED_NOW = datetime.datetime(2013, 5, 24, 0, 0, 0)
AMZ_DATE = "20130524T000000Z"
SCOPE = "20130524/us-east-1/s3/aws4_request"
SEED_SIG = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
EMPTY_SHA = hashlib.sha256(b"").hexdigest()


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- botocore at a fixed clock ------------------------------------------------
class _FixedDatetime(datetime.datetime):
    @classmethod
    def utcnow(cls):
        return FIXED_NOW


def _botocore():
    import botocore.auth
    import botocore.signers
    shim = type(sys)("datetime_shim")
    shim.datetime = _FixedDatetime
    shim.timedelta = datetime.timedelta
    botocore.auth.datetime = shim
    botocore.signers.datetime = shim
    fixed_unix = 1369353600
    botocore.auth.formatdate = lambda *a, usegmt=False, **k: \
        "Fri, 24 May 2013 00:00:00 GMT" if not a else email.utils.formatdate(*a, usegmt=usegmt)
    botocore.auth.time = type(sys)("time_shim")
    botocore.auth.time.time = lambda: fixed_unix
    return botocore


def signed(method, url, headers=None, body=b"", payload=None):
    """(path, query, headers) of a request botocore signed in the header."""
    bc = _botocore()
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    req = AWSRequest(method=method, url=url, data=body, headers=dict(headers or {}))
    auth = bc.auth.S3SigV4Auth(Credentials(ACCESS, SECRET), "s3", REGION)
    if payload:  # a streaming mode: sign the literal instead of the body hash
        auth.payload = lambda request: payload
    auth.add_auth(req)
    return req


def signed_v2(method, url, headers=None, query=False, expires=600, auth_path=None):
    """A request botocore signed with SigV2 (header "AWS key:sig", or query);
    auth_path: the resource botocore signs for a virtual-host request."""
    bc = _botocore()
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    req = AWSRequest(method=method, url=url, headers=dict(headers or {}))
    if auth_path:
        req.auth_path = auth_path
    cls = bc.auth.HmacV1QueryAuth if query else bc.auth.HmacV1Auth
    signer = cls(Credentials(ACCESS, SECRET), expires) if query else cls(Credentials(ACCESS, SECRET))
    signer.add_auth(req)
    return req


def presigned(method, url, expires=3600):
    bc = _botocore()
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    req = AWSRequest(method=method, url=url)
    bc.auth.S3SigV4QueryAuth(Credentials(ACCESS, SECRET), "s3", REGION, expires=expires).add_auth(req)
    return req


def split_url(url):
    rest = url.split("://", 1)[1]
    target = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
    path, _, query = target.partition("?")
    return path, query


def host_of(url):
    return url.split("://", 1)[1].split("/", 1)[0]


def wire(req, body=b""):
    """The request as it goes on the wire (HTTP/1.1, headers as botocore set them)."""
    path, query = split_url(req.url)
    target = path + ("?" + query if query else "")
    head = f"{req.method} {target} HTTP/1.1\r\nHost: {host_of(req.url)}\r\n"
    for k, v in req.headers.items():
        head += f"{k}: {v.decode() if isinstance(v, bytes) else v}\r\n"
    return head.encode() + b"\r\n" + body


def sigv4_text(req):
    path, query = split_url(req.url)
    lines = [req.method, path, query, "host:" + host_of(req.url)]
    for k, v in req.headers.items():
        lines.append(f"{k}:{v.decode() if isinstance(v, bytes) else v}")
    return "\n".join(lines)


# ---- aws-chunked (AWS's SigV4 streaming example context) ------------------------
def signing_key():
    k = hmac.new(("AWS4" + SECRET).encode(), b"20130524", hashlib.sha256).digest()
    for part in (REGION, "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    return k


def chunk_sig(prev, data):
    sts = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", AMZ_DATE, SCOPE, prev, EMPTY_SHA,
                     hashlib.sha256(data).hexdigest()])
    return hmac.new(signing_key(), sts.encode(), hashlib.sha256).hexdigest()


def aws_chunked(chunks, signed_chunks, trailers=None):
    prev, out = SEED_SIG, b""
    for c in list(chunks) + [b""]:
        line = b"%x" % len(c)
        if signed_chunks:
            prev = chunk_sig(prev, c)
            line += b";chunk-signature=" + prev.encode()
        out += line + b"\r\n" + (c + b"\r\n" if c else b"")
    if trailers is not None:
        canonical = "".join(f"{k}:{v}\n" for k, v in trailers)
        out += "".join(f"{k}:{v}\r\n" for k, v in trailers).encode()
        if signed_chunks:
            sts = "\n".join(["AWS4-HMAC-SHA256-TRAILER", AMZ_DATE, SCOPE, prev,
                             hashlib.sha256(canonical.encode()).hexdigest()])
            sig = hmac.new(signing_key(), sts.encode(), hashlib.sha256).hexdigest()
            out += f"x-amz-trailer-signature:{sig}\r\n".encode()
    return out + b"\r\n"


# ---- CRC32C, varints (shard and record formats) ---------------------------------
def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7F | 0x80])
        v >>= 7
    return out + bytes([v])


def lp(s):
    s = s.encode() if isinstance(s, str) else s
    return varint(len(s)) + s


def main():
    ctl = bytes  # readability: ctl([0x80]) is a control byte

    # http_request: control byte (0x80: the server's 64 KiB header limit; high
    # nibble the read piece limit) + the bytes of one connection.
    put = signed("PUT", "http://127.0.0.1:9000/bucket/photos/a%20b.jpg",
                 {"Content-Type": "image/jpeg", "Expect": "100-continue",
                  "Content-Length": "11", "Content-MD5": "XrY7u+Ae7tCTyyK7j1rNww=="},
                 body=b"hello world")
    write("http_request", "boto3_put_object", ctl([0xF0]) + wire(put, b"hello world"))
    get = signed("GET", "http://127.0.0.1:9000/bucket/key?list-type=2&prefix=a%2Fb",
                 {"Range": "bytes=0-99"})
    write("http_request", "boto3_get_pipelined", ctl([0xC0]) + wire(get) + wire(get))
    write("http_request", "curl_chunked_upload", ctl([0x90]) + (
        b"PUT /bucket/big HTTP/1.1\r\nHost: 127.0.0.1:9000\r\nUser-Agent: curl/7.88.1\r\n"
        b"Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"
        b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nx-trailer: 1\r\n\r\n"
        b"GET /bucket/big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
    write("http_request", "http10_close", ctl([0x81]) + (
        b"DELETE /bucket/key HTTP/1.0\r\nHost: x\r\nContent-Length: 0\r\n\r\n"))
    xml = b"<Delete><Object><Key>a</Key></Object><Quiet>true</Quiet></Delete>"
    write("http_request", "post_delete_xml", ctl([0xA0]) + (
        b"POST /bucket?delete HTTP/1.1\r\nHost: bucket.s3.test\r\nContent-Type: application/xml\r\n"
        b"Content-Length: %d\r\n\r\n" % len(xml)) + xml)
    write("http_request", "te_not_chunked", ctl([0x80]) + (
        b"POST /bucket/key HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"
        b"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"))
    write("http_request", "small_header_limit", ctl([0x10]) + (
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 300 + b"\r\n\r\n"))

    # sigv4: control 0x80 = the seeds' clock; METHOD \n path \n query \n headers.
    seeds = {
        "header_get": signed("GET", "http://127.0.0.1:9000/bucket/a%20b/c~d?versionId=null&x-id=GetObject"),
        "header_put_signed_payload": signed("PUT", "http://127.0.0.1:9000/bucket/key",
                                            {"Content-Type": "text/plain", "x-amz-meta-a": "  b   c "},
                                            body=b"payload"),
        "header_streaming": signed("PUT", "http://127.0.0.1:9000/bucket/stream",
                                   {"x-amz-decoded-content-length": "66560",
                                    "Content-Encoding": "aws-chunked"},
                                   payload="STREAMING-AWS4-HMAC-SHA256-PAYLOAD"),
        "header_streaming_trailer": signed("PUT", "http://127.0.0.1:9000/bucket/stream",
                                           {"x-amz-trailer": "x-amz-checksum-crc32"},
                                           payload="STREAMING-UNSIGNED-PAYLOAD-TRAILER"),
        "presigned_get": presigned("GET", "http://127.0.0.1:9000/bucket/key%2Bplus?response-content-type=text%2Fplain"),
        "presigned_put": presigned("PUT", "http://bucket.s3.test:9000/key", expires=60),
    }
    seeds["v2_header_put"] = signed_v2("PUT", "http://127.0.0.1:9000/bucket/key?tagging",
                                       {"Content-Type": "text/plain", "x-amz-meta-a": "b",
                                        "Content-MD5": "XrY7u+Ae7tCTyyK7j1rNww=="})
    seeds["v2_virtual_host"] = signed_v2("GET", "http://bucket.s3.test:9000/dir/key?acl",
                                         auth_path="/bucket/dir/key")
    seeds["v2_query"] = signed_v2("GET", "http://127.0.0.1:9000/bucket/a%20b?response-content-type=x",
                                  query=True)
    for name, req in seeds.items():
        write("sigv4", name, ctl([0x80]) + sigv4_text(req).encode())

    # aws_chunked: raw mode "<decoded length>\n<body>"; build mode (control & 3 == 3).
    c1, c2 = b"a" * 64, b"hello, world"
    write("aws_chunked", "signed", ctl([0x00]) + b"%d\n" % (len(c1) + len(c2)) + aws_chunked([c1, c2], True))
    write("aws_chunked", "signed_trailer", ctl([0x25]) + b"%d\n" % len(c2) +
          aws_chunked([c2], True, [("x-amz-checksum-crc32", "sOO8/Q==")]))
    write("aws_chunked", "unsigned_trailer", ctl([0xEA]) + b"%d\n" % len(c2) +
          aws_chunked([c2], False, [("x-amz-checksum-crc32c", "yZRlqg==")]))
    write("aws_chunked", "unsigned_no_trailer", ctl([0x4A]) + b"5\n5\r\nhello\r\n0\r\n\r\n")
    write("aws_chunked", "build_signed", ctl([0x03, 0x00]) + b"\x05hello\x03abc\x00")
    write("aws_chunked", "build_signed_trailer", ctl([0x47, 0x01]) + b"\x02hi\x00x-amz-checksum-sha256:abc=\nx-b:2\n")
    write("aws_chunked", "build_unsigned_trailer", ctl([0xFF, 0x02]) + b"\x04data\x00x-amz-checksum-crc32:AAAAAA==\n")

    # s3_router: METHOD \n target \n Host; control bits 0-1 the domain.
    for name, control, text in [
        ("list_buckets", 0, "GET\n/\n127.0.0.1:9000"),
        ("get_object", 0, "GET\n/bucket/dir/a%20b.txt?response-content-type=text/plain\n127.0.0.1:9000"),
        ("virtual_host", 1, "PUT\n/key?tagging\nbucket.s3.test:9000"),
        ("upload_part_copy", 4, "PUT\n/bucket/key?partNumber=2&uploadId=abc\nlocalhost"),
        ("list_v2", 0, "GET\n/bucket?list-type=2&delimiter=%2F&prefix=a+b\nlocalhost"),
        ("delete_objects", 0, "POST\n/bucket?delete\nlocalhost"),
        ("admin", 0, "POST\n/_strata/admin/heal?drive=1\nlocalhost"),
        ("unimplemented", 2, "GET\n/bucket?acl\nbucket.localhost"),
        ("post_object", 3, "POST\n/\nbucket.s3.amazonaws.com"),
    ]:
        write("s3_router", name, ctl([control]) + text.encode())

    # s3_xml: mode byte, then the body (0-3) or NUL-separated strings (4-6).
    ns = ' xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
    write("s3_xml", "delete", ctl([0]) + f'<?xml version="1.0" encoding="UTF-8"?>\n<Delete{ns}><Object><Key>a&amp;b</Key></Object>'
          f'<Object><Key>dir/c</Key><VersionId>null</VersionId></Object><Quiet>true</Quiet></Delete>'.encode())
    write("s3_xml", "complete", ctl([1]) + f'<CompleteMultipartUpload{ns}><Part><ETag>"7778aef83f66abc1fa1e8477f296d394"</ETag>'
          f'<PartNumber>1</PartNumber><ChecksumCRC32>sOO8/Q==</ChecksumCRC32></Part><Part><ETag>"aa"</ETag>'
          f'<PartNumber>2</PartNumber></Part></CompleteMultipartUpload>'.encode())
    write("s3_xml", "tagging", ctl([2]) + f'<Tagging{ns}><TagSet><Tag><Key>k1</Key><Value>v 1</Value></Tag>'
          f'<Tag><Key>k2</Key><Value></Value></Tag></TagSet></Tagging>'.encode())
    write("s3_xml", "create_bucket", ctl([3]) + f'<CreateBucketConfiguration{ns}><LocationConstraint>eu-west-1'
          f'</LocationConstraint></CreateBucketConfiguration>'.encode())
    write("s3_xml", "roundtrip_delete", ctl([4]) + "a\0b c\0d/\u00e9\0x&<>'\"\r\n".encode())
    write("s3_xml", "roundtrip_tagging", ctl([5]) + b"key\0value\0k2\0")
    write("s3_xml", "roundtrip_complete", ctl([6]) + b"7778aef83f66abc1fa1e8477f296d394\0ab-2")
    write("s3_xml", "versioning", ctl([7]) + f'<VersioningConfiguration{ns}><Status>Enabled</Status>'
          f'<MfaDelete>Disabled</MfaDelete></VersioningConfiguration>'.encode())
    write("s3_xml", "object_lock", ctl([8]) + f'<ObjectLockConfiguration{ns}><ObjectLockEnabled>Enabled'
          f'</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>30</Days>'
          f'</DefaultRetention></Rule></ObjectLockConfiguration>'.encode())
    write("s3_xml", "retention", ctl([9]) + f'<Retention{ns}><Mode>COMPLIANCE</Mode><RetainUntilDate>'
          f'2030-01-01T00:00:00.000Z</RetainUntilDate></Retention>'.encode())
    write("s3_xml", "legal_hold", ctl([10]) + f'<LegalHold{ns}><Status>ON</Status></LegalHold>'.encode())

    # s3_headers: name:value lines; control bits 0-2 the object size.
    for name, control, text in [
        ("range", 3, "range:bytes=10-20\nif-match:\"9bb58f26192e4ba00f01e2e7b136bbd8\""),
        ("suffix_range", 4, "range:bytes=-500\nif-none-match:W/\"x\", *"),
        ("dates", 3, "if-modified-since:Fri, 24 May 2013 00:00:00 GMT\n"
                     "if-unmodified-since:Friday, 24-May-13 00:00:00 GMT"),
        ("copy", 5, "x-amz-copy-source:/src-bucket/a%2Fb?versionId=null\n"
                    "x-amz-copy-source-range:bytes=0-1048575\n"
                    "x-amz-copy-source-if-modified-since:Thu May 23 00:00:00 2013"),
        ("write", 0x43, "content-md5:XrY7u+Ae7tCTyyK7j1rNww==\nx-amz-tagging:a=1&b=%20x\n"
                        "x-amz-checksum-crc32:sOO8/Q==\nx-amz-sdk-checksum-algorithm:CRC32\n"
                        "x-amz-storage-class:STANDARD_IA\nx-amz-meta-name:v\ncontent-type:text/plain"),
        ("streaming", 0x23, "x-amz-decoded-content-length:12\nx-amz-trailer:x-amz-checksum-crc64nvme"),
    ]:
        write("s3_headers", name, ctl([control]) + text.encode())

    # post_form: raw mode "<Content-Type>\n<body>"; build mode (control & 1).
    b = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
    body = (f"--{b}\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nuploads/${{filename}}\r\n"
            f"--{b}\r\nContent-Disposition: form-data; name=\"x-amz-algorithm\"\r\n\r\nAWS4-HMAC-SHA256\r\n"
            f"--{b}\r\nContent-Disposition: form-data; name=\"Policy\"\r\n\r\neyJleHBpcmF0aW9uIjoiMjAxMy0wNS0yNFQwMTowMDowMFoifQ==\r\n"
            f"--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"C:\\dir\\a.txt\"\r\n"
            f"Content-Type: text/plain\r\n\r\nfile body\r\n--{b}x\r\nnot yet\r\n--{b}--\r\nepilogue")
    write("post_form", "browser", ctl([0x0C]) + f"multipart/form-data; boundary={b}\n{body}".encode())
    write("post_form", "quoted_boundary", ctl([0x02]) + (
        b'multipart/form-data; charset=utf-8; boundary="a b"\n'
        b'--a b \t\r\ncontent-disposition: form-data; name=file; filename*=UTF-8\'\'%C3%A9.txt\r\n\r\n'
        b'\r\n--a b--'))
    write("post_form", "build", ctl([0x05, 0x1F]) + b"key\0a/${filename}\0success_action_status\0201\0file data\r\n--")
    write("post_form", "build_empty_file", ctl([0x0F, 0x00]) + b"policy\0e30=\0")

    # post_policy: policy JSON \n--\n name=value fields (as boto3 posts them).
    policy = {"expiration": "2024-01-01T01:00:00.000Z", "conditions": [
        {"bucket": "bucket"}, ["starts-with", "$key", "uploads/"], {"acl": "private"},
        ["content-length-range", 1, 10485760], ["eq", "$success_action_status", "201"],
        {"x-amz-algorithm": "AWS4-HMAC-SHA256"}, {"x-amz-credential": f"{ACCESS}/20240101/{REGION}/s3/aws4_request"},
        {"x-amz-date": "20240101T000000Z"}]}
    fields = ["key=uploads/a.txt", "acl=private", "success_action_status=201", "x-amz-algorithm=AWS4-HMAC-SHA256",
              f"x-amz-credential={ACCESS}/20240101/{REGION}/s3/aws4_request", "x-amz-date=20240101T000000Z",
              "Policy=" + base64.b64encode(json.dumps(policy).encode()).decode(), "x-amz-signature=00",
              "x-ignore-me=1"]
    write("post_policy", "boto3_policy", ctl([0x80]) + (json.dumps(policy) + "\n--\n" + "\n".join(fields)).encode())
    write("post_policy", "expired", ctl([0xFF]) + b'{"expiration":"2023-12-31T23:59:59Z","conditions":[["content-length-range","0","5"]]}\n--\nkey=x')
    write("post_policy", "fields", ctl([0x80]) + b'{"expiration":"2030-01-01T00:00:00Z","conditions":[{"$key":"${filename}"},'
          b'["starts-with","$Content-Type",""]]}\n--\nkey=${filename}\ncontent-type=multipart/form-data; boundary=xyz\n'
          b'file=C:\\a\\b.png')

    # shard_format: control % 5 the decoder, bit 3 re-seal.
    hdr_body = varint(2) + varint(4) + varint(2) + varint(1 << 20) + lp("0123456789abcdef0123456789abcdef") + \
        lp("bucket") + lp("key") + lp("") + varint(0) + varint(12345)
    hdr = b"STRATASH" + struct.pack("<II", 1, 16 + len(hdr_body) + 4) + hdr_body
    hdr += struct.pack("<I", crc32c(hdr))
    write("shard_format", "header", ctl([0]) + hdr)
    write("shard_format", "header_reseal", ctl([10]) + hdr[:-8] + b"\x00\x00\x00\x00\x00\x00\x00\x00")
    trailer = b"O" + b"\x02record"
    fixed = struct.pack("<QI", 5000, len(trailer))
    write("shard_format", "footer", ctl([1]) + trailer + fixed + struct.pack("<I", crc32c(trailer + fixed)) + b"STRATAFT")
    fmt = ("strata-drive-format 1\ndeployment=5f0c1e2d3c4b5a69788796a5b4c3d2e1\ndrive=a93b07c6d5e4f30211203f4e5d6c7b8a\n"
           "pool=0\nset=0\nposition=3\ndrives=6\nk=4\nm=2\nblock_bytes=1048576\n")
    write("shard_format", "drive_format", ctl([2]) + (fmt + "crc32c=%08x\n" % crc32c(fmt.encode())).encode())
    write("shard_format", "drive_format_reseal", ctl([12]) + (fmt + "future_key=1\n").encode())
    tomb = b"STRATATB" + struct.pack("<I", 1) + lp("0123456789abcdef0123456789abcdef") + struct.pack("<Q", 77)
    write("shard_format", "tombstone", ctl([4]) + tomb + struct.pack("<I", crc32c(tomb)))
    write("shard_format", "geometry", ctl([3]) + struct.pack("<QBI", 10 << 20, 4, 1 << 20) + b"\x00")

    # data_file: bit 0 build mode (written through the store, one byte damaged), bits 1-4 repeats.
    write("data_file", "build_small", ctl([0x01]) + b"hello world")
    write("data_file", "build_blocks", ctl([0x7F]) + bytes(range(256)) * 17)
    body = b"x" * 100
    crc_table = struct.pack("<I", crc32c(body))
    write("data_file", "raw_checksummed", ctl([0x00]) + body + crc_table + b"STRCRC01" +
          struct.pack("<IIQ", 65536, crc32c(crc_table), len(body)))
    write("data_file", "raw_legacy", ctl([0xA0]) + b"legacy file bytes")

    # object_record: control % 5 the decoder.
    headers = b"".join(lp(s) for s in ["text/plain", "", "attachment", "", "max-age=1", ""]) + varint(1) + lp("a") + lp("b")
    obj2 = bytes([2]) + varint(1) + varint(5) + lp("5d41402abc4b2a76b9719d911017c592") + varint(1369353600 * 10**9) + \
        varint(7) + headers + lp("hello") + varint(0) + lp("CRC32") + lp("NhCmhg==") + lp("FULL_OBJECT") + \
        varint(1) + lp("tag") + lp("v") + lp("")
    write("object_record", "object_inline", ctl([0]) + obj2)
    obj_parts = bytes([2]) + varint(0) + varint(10) + lp("etag-2") + varint(1) + varint(8) + headers + \
        lp("0123456789abcdef0123456789abcdef") + varint(2) + \
        b"".join(lp("f%d" % i) + varint(5) + lp("e%d" % i) + lp("") for i in range(2)) + \
        lp("") + lp("") + lp("") + varint(0) + lp("GLACIER")
    write("object_record", "object_multipart", ctl([5]) + obj_parts)
    write("object_record", "object_v3_completed", ctl([0]) + bytes([3]) + obj_parts[1:] + lp("upload-id-1"))
    write("object_record", "object_v1", ctl([0]) + bytes([1]) + varint(0) + varint(3) + lp("e") + varint(1) + varint(1) +
          headers + lp("0123456789abcdef0123456789abcdef"))
    write("object_record", "upload", ctl([1]) + bytes([1]) + varint(99) + headers + lp("SHA256") + lp("COMPOSITE") +
          varint(0) + lp("") + lp(ACCESS))
    write("object_record", "part", ctl([2]) + bytes([1]) + varint(5 << 20) + lp("etag") + varint(3) + lp("fileid") + lp(""))
    write("object_record", "bucket", ctl([3]) + bytes([1]) + varint(1) + lp("us-east-1") + lp(ACCESS))
    write("object_record", "tags_record", ctl([5]) + bytes([1]) + lp("0123456789abcdef0123456789abcdef") +
          varint(7) + varint(2) + lp("k") + lp("v") + lp("k2") + lp(""))
    write("object_record", "bucket_v2_tags", ctl([3]) + bytes([2]) + varint(1) + lp("us-east-1") + lp(ACCESS) +
          varint(1) + lp("team") + lp("a"))
    # Format 4: flags versioned|lock-on-drives, lock COMPLIANCE until 2^61, hold ON.
    obj4 = bytes([4]) + varint(4 | 16) + obj_parts[2:] + lp("") + bytes([2]) + varint(1 << 61) + bytes([2])
    write("object_record", "object_v4_locked", ctl([0]) + obj4)
    write("object_record", "object_v4_marker", ctl([0]) + bytes([4]) + varint(1 | 4 | 8) + varint(0) + lp("") +
          varint(1) + varint(9) + b"".join(lp("") for _ in range(6)) + varint(0) + lp("") + varint(0) +
          lp("") + lp("") + lp("") + varint(0) + lp("") + lp("") + bytes([0]) + varint(0) + bytes([0]))
    write("object_record", "bucket_v3_lock", ctl([3]) + bytes([3]) + varint(1) + lp("us-east-1") + lp(ACCESS) +
          varint(0) + bytes([1, 1, 1]) + varint(30) + varint(0))
    write("object_record", "lock_record", ctl([6]) + bytes([1]) + lp("0123456789abcdef0123456789abcdef") +
          varint(7) + bytes([1]) + varint(123456789) + bytes([1]))
    write("object_record", "version_id", ctl([7]) + b"ffffe712cfba268e")
    write("object_record", "trailer", ctl([4]) + b"B" + bytes([1]) + varint(1) + lp("") + lp(""))
    # Format 5: owner and ACL (auth/acl.h encoding: format 1, owner, grants (kind, id, permission)).
    acl = bytes([1]) + lp("") + varint(2) + bytes([0]) + lp("b" * 64) + bytes([1]) + bytes([1]) + lp("") + bytes([1])
    write("object_record", "object_v5_acl", ctl([0]) + bytes([5]) + varint(1 | 4 | 32) + varint(0) + lp("") + varint(1) + varint(9) + b"".join(lp("") for _ in range(6)) + varint(0) + lp("") +
          varint(0) + lp("") + lp("") + lp("") + varint(0) + lp("") + lp("") + bytes([0]) + varint(0) + bytes([0]) +
          lp("a" * 64) + lp(acl))
    write("object_record", "acl_record", ctl([8]) + bytes([1]) + lp("0123456789abcdef0123456789abcdef") +
          varint(9) + lp("a" * 64) + lp(acl))

    # meta_keys: control % 3 the parser (raw KvStore keys).
    write("meta_keys", "object_version", ctl([0]) + b"Obucket\0dir/key\0" + struct.pack(">Q", (1 << 64) - 1 - 15))
    write("meta_keys", "upload", ctl([1]) + b"Ubucket\0a/b\0" + b"0123456789abcdef" * 2)
    write("meta_keys", "part", ctl([2]) + b"P" + b"0123456789abcdef" * 2 + struct.pack(">I", 7))

    # http_range: the byte stream an endpoint sends the loader's native range reader
    # (client/http/http_range.h): replies to three GETs of 64 bytes.
    body = bytes(range(64))
    ok = (b"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-63/100\r\n"
          b"Content-Length: 64\r\nETag: \"e\"\r\n\r\n" + body)
    err = (b"HTTP/1.1 404 Not Found\r\nContent-Type: application/xml\r\nContent-Length: 60\r\n\r\n"
           b"<Error><Code>NoSuchKey</Code><Message>gone</Message></Error>")
    write("http_range", "two_ranges", ok + ok)
    write("http_range", "error_then_range", err + ok)
    write("http_range", "short_prefix", ok + b"HTTP/1.1 206 Partial Content\r\nContent-Length: 3\r\n\r\nabc")
    write("http_range", "chunked", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n")
    write("http_range", "close", b"HTTP/1.0 206 Partial Content\r\nContent-Length: 64\r\n\r\n" + body)
    # remote_replies: first byte % 5 the parser (remote/s3_replies.h, the remote footer).
    write("remote_replies", "error", bytes([0]) + b"<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code>"
          b"<Message>gone</Message></Error>")
    write("remote_replies", "initiate", bytes([1]) + b"<InitiateMultipartUploadResult><Bucket>a</Bucket>"
          b"<Key>p/0a</Key><UploadId>u-1</UploadId></InitiateMultipartUploadResult>")
    write("remote_replies", "list_v2", bytes([2]) + b"<ListBucketResult><IsTruncated>true</IsTruncated>"
          b"<NextContinuationToken>t</NextContinuationToken><Contents><Key>p/0a</Key><Size>5</Size>"
          b"</Contents></ListBucketResult>")
    write("remote_replies", "uploads", bytes([3]) + b"<ListMultipartUploadsResult><IsTruncated>false"
          b"</IsTruncated><Upload><Key>p/0a</Key><UploadId>u</UploadId></Upload>"
          b"</ListMultipartUploadsResult>")
    header = b"".join(struct.pack("<I", len(x)) + x for x in (b"bucket", b"a/key", b"")) + \
        struct.pack("<IQ", 0, 42)
    body = header + b"trailer"
    body += struct.pack("<IIQ", len(header), len(b"trailer"), 1234)
    body += struct.pack("<I", crc32c(body)) + b"STRATARO"
    write("remote_replies", "footer", bytes([4]) + body)

    # archive_record: one segment record (storage/archive_format.h).
    def archive_rec(t, payload):
        head = t + struct.pack("<I", len(payload)) + payload
        return head + struct.pack("<I", crc32c(head))
    def alp(b):
        return struct.pack("<I", len(b)) + b
    write("archive_record", "entry", archive_rec(b"H", alp(b"0a" * 16) + alp(b"bucket") + alp(b"k") +
                                                 alp(b"") + struct.pack("<IQ", 0, 7)))
    write("archive_record", "frame_raw", archive_rec(b"F", bytes([0]) + struct.pack("<I", 5) + b"hello"))
    write("archive_record", "end", archive_rec(b"E", struct.pack("<Q", 5) + b"trailer"))
    write("archive_record", "tombstone", archive_rec(b"T", alp(b"0a" * 16) + struct.pack("<Q", 7)))
    write("archive_record", "abort", archive_rec(b"A", b""))

    # audit_trail: control 0 a stored record, 1 an exported segment (audit/export.h),
    # 2 a posting list (varint count, varint deltas).
    def audit_record(seq, kind=1, status=0, strings=("AKID", "127.0.0.1:1", "REQ", "PutObject",
                                                     "b", "k", "fffffffffffffffe", "OK")):
        return (bytes([1]) + struct.pack(">QQ", seq, 1764676800123000000 + seq) + bytes([kind]) +
                varint(status) + varint(4096) + varint(0) + b"".join(lp(x) for x in strings))
    write("audit_trail", "record", bytes([0]) + audit_record(1))
    write("audit_trail", "denied", bytes([0]) + audit_record(2, 3, 403, ("", "10.0.0.1:5", "R2",
                                                                        "GetObject", "b", "k", "",
                                                                        "AccessDenied")))
    key = b"0123456789abcdef0123456789abcdef"
    prev = bytes(32)
    lines = [json.dumps({"segment": 1, "first": 1, "last": 3, "prev_hash": prev.hex()})]
    for seq in (1, 2, 3):
        if seq == 2:
            prev = hashlib.sha256(prev + b"gap" + struct.pack(">Q", seq)).digest()
            lines.append(json.dumps({"seq": seq, "hash": prev.hex(), "gap": True}))
            continue
        raw = audit_record(seq)
        prev = hashlib.sha256(prev + raw).digest()
        lines.append(json.dumps({"seq": seq, "hash": prev.hex(),
                                 "raw": base64.b64encode(raw).decode(), "record": None}))
    t = 1764676801000000000
    mac = hmac.new(key, b"strata-audit-checkpoint-v1" + struct.pack(">QQ", 3, t) + prev,
                   hashlib.sha256).digest()
    lines.append(json.dumps({"checkpoint": {"seq": 3, "time_ns": t, "hash": prev.hex(),
                                            "mac": mac.hex()}}))
    write("audit_trail", "segment", bytes([1]) + ("\n".join(lines) + "\n").encode())
    write("audit_trail", "postings", bytes([2]) + varint(4) + varint(1) + varint(1) + varint(298) +
          varint(1 << 40))

    # encoding: control % 6 the coding.
    write("encoding", "hex", ctl([0]) + b"00ff7fA0")
    write("encoding", "base64", ctl([1]) + b"aGVsbG8gd29ybGQ=")
    write("encoding", "uri", ctl([2]) + b"a%20b+c%2F%zz")
    write("encoding", "utf8", ctl([3]) + "h\u00e9\u20ac\U0001F600".encode() + b"\xed\xa0\x80")
    write("encoding", "varint", ctl([4]) + varint(300) + lp("abc") + b"\xff" * 10)
    write("encoding", "rfc2047", ctl([5]) + b"=?UTF-8?B?w6k=?= and =?utf-8?Q?caf=C3=A9_x?= =?ISO-8859-1?Q?a?=")

    # advisor_policy: even control a policy document, odd "pattern\ntext" for GlobMatch.
    write("advisor_policy", "default", ctl([0]) + json.dumps({
        "enabled": True, "require_approval": True, "buckets": ["*"], "prefixes": [],
        "moves": ["hot->warm"], "max_bytes_per_day": 1099511627776, "window_start_hour": 0,
        "window_end_hour": 24, "max_objects_per_second": 50}).encode())
    write("advisor_policy", "night_window", ctl([0]) + json.dumps({
        "require_approval": False, "buckets": ["train-*", "ckpt"], "prefixes": ["ckpt/2026-"],
        "moves": ["hot->warm", "warm->cold", "gpu-direct->hot"], "max_bytes_per_day": 0,
        "window_start_hour": 22, "window_end_hour": 6, "max_objects_per_second": 0}).encode())
    write("advisor_policy", "glob", ctl([1]) + b"ckpt-*-20*6\nckpt-llama-2026")
    write("advisor_policy", "glob_stars", ctl([1]) + b"**a*b**\nxxaxxbxx")

    # advisor_state: even control the access statistics, odd one recommendation.
    day = [0] * 32
    day[20061 % 32] = 12
    day[20062 % 32] = 3
    write("advisor_state", "stats", ctl([0]) + json.dumps({"version": 1, "prefixes": [
        {"b": "train", "p": "ckpt/2026-10/", "r": 11.25, "br": 4.5e9, "tr": 15, "tb": 6000000000,
         "f": 1733270400000000000, "l": 1733356800000000000, "a": 1733356800000000000,
         "ld": 20062, "d": day},
        {"b": "rag", "p": "", "r": 0.0, "br": 0.0, "tr": 0, "tb": 0, "f": 0, "l": 0, "a": 0,
         "ld": 0, "d": [0] * 32}]}).encode())
    write("advisor_state", "recommendation", ctl([1]) + json.dumps({
        "id": "0123456789abcdef", "kind": "colder", "bucket": "train", "prefix": "ckpt/2026-10/",
        "from_media": "hot", "to_media": "warm", "from_classes": ["STANDARD"],
        "from_pool": "hot", "to_pool": "warm", "to_class": "STANDARD_IA",
        "summary": "prefix ckpt/2026-10/ - 3.1 TiB, no reads for 34 days -> warm",
        "window_days": 30, "reads_in_window": 0, "active_days": 0, "reads_per_active_day": 0.0,
        "rereads_per_object": 0.0, "last_read_ns": 0, "idle_days": 34.2, "objects": 120,
        "bytes": 3408486046105, "daily_reads": [0] * 30, "size_hist": [0, 0, 0, 0, 0, 0, 120],
        "age_hist": [0, 0, 0, 120, 0, 0], "by_class": {"STANDARD": {"objects": 120, "bytes": 3408486046105}},
        "objects_to_move": 120, "bytes_to_move": 3408486046105,
        "capacity_change": {"hot": -3408486046105, "warm": 3408486046105},
        "watts_before": 3.72, "watts_after": 1.24, "cost_month_before": 186.0, "cost_month_after": 46.5,
        "action": "move 120 objects hot -> warm",
        "lifecycle_rule": "<Rule><ID>advisor-0123456789abcdef</ID><Filter><Prefix>ckpt/2026-10/</Prefix></Filter>"
                          "<Status>Enabled</Status><Transition><Days>30</Days><StorageClass>STANDARD_IA"
                          "</StorageClass></Transition></Rule>",
        "state": "waiting", "created_ns": 1733356800000000000, "updated_ns": 1733356800000000000,
        "decided_ns": 0, "finished_ns": 0, "decided_by": "", "reason": "", "waiting": "daily budget",
        "moved_objects": 3, "moved_bytes": 85212151152, "skipped": 0, "locked": 1, "failed": 0,
        "resume_after": "ckpt/2026-10/shard-0003", "size_buckets": ["< 4 KiB"],
        "model": {"kind": "modelled", "currency": "USD"}}).encode())

    # console_wire: even control a sign-in body, odd a Cookie header.
    write("console_wire", "sign_in", ctl([0]) + json.dumps({"access_key": ACCESS, "secret_key": SECRET}).encode())
    write("console_wire", "cookies", ctl([1]) + b"theme=dark; strata_console=" + b"ab" * 32 + b"; _ga=GA1.2")
    write("console_wire", "cookie_blanks", ctl([1]) + b" \tstrata_console = x ;;strata_console=y")

    # kmip_response: what a KMIP server answers strata (kms/kmip_protocol.h), TTLV.
    def ttlv(tag, typ, value):
        if typ == 1:
            body = b"".join(value)
        elif typ in (2, 5):
            body = struct.pack(">I", value & 0xFFFFFFFF)
        else:
            body = value
        return struct.pack(">I", tag)[1:] + bytes([typ]) + struct.pack(">I", len(body)) + body + \
            b"\0" * (-len(body) % 8)

    def response(op, payload=(), status=0, reason=None, message=None):
        header = ttlv(0x42007A, 1, [ttlv(0x420069, 1, [ttlv(0x42006A, 2, 1), ttlv(0x42006B, 2, 4)]),
                                    ttlv(0x420092, 9, struct.pack(">q", 1733356800)), ttlv(0x42000D, 2, 1)])
        item = [ttlv(0x42005C, 5, op), ttlv(0x42007F, 5, status)]
        if reason is not None:
            item.append(ttlv(0x42007E, 5, reason))
        if message is not None:
            item.append(ttlv(0x42007D, 7, message))
        if payload:
            item.append(ttlv(0x42007C, 1, list(payload)))
        return ttlv(0x42007B, 1, [header, ttlv(0x42000F, 1, item)])

    uid = ttlv(0x420094, 7, b"17")
    write("kmip_response", "create", response(0x01, [ttlv(0x420057, 5, 2), uid]))
    write("kmip_response", "activate", response(0x12, [uid]))
    write("kmip_response", "encrypt", response(0x1F, [uid, ttlv(0x4200C2, 8, bytes(range(32))),
                                                      ttlv(0x4200FF, 8, b"\x5a" * 16)]))
    write("kmip_response", "decrypt", response(0x20, [uid, ttlv(0x4200C2, 8, b"\xa5" * 32)]))
    write("kmip_response", "refused", response(0x20, status=1, reason=0x0C,
                                               message=b"The decryption key must be in the Active state"))


if __name__ == "__main__":
    main()

"""Access control (issue 12), the gaps a review found, against a real server
with real clients (boto3, urllib / http.client without credentials, raw
signed requests):

- policy condition keys computed from the request itself, each allowing
  with the matching value and refused (403 AccessDenied) with another:
  aws:Referer, aws:UserAgent, s3:VersionId, s3:signatureversion (SigV4 vs
  SigV2), s3:authType (header vs presigned), s3:x-amz-acl, s3:delimiter,
  s3:max-keys, s3:object-lock-retain-until-date (PutObjectRetention's body
  and PutObject's headers), aws:CurrentTime and aws:EpochTime;
- canned ACLs end to end on buckets whose ownership allows ACLs: CreateBucket
  public-read (anonymous listing), public-read-write (anonymous upload),
  bucket-owner-read (the bucket owner may read another user's object),
  CopyObject with public-read, READ_ACP / WRITE_ACP grant headers;
- canonical ids of a non-root user: ListBuckets Owner = GetBucketAcl Owner =
  fetch-owner = the admin API's canonical_id;
- a client offering only TLS 1.0 (proven able to: it talks TLS 1.0 to a
  local TLS 1.0 server) is refused, the same client allowing TLS 1.2 is
  served;
- --iam-key-file: the operator's key seals the secrets (no DATA/iam.key is
  made), users survive a restart with it, another key refuses to start.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_iam_conditions.py -v
"""
import datetime
import http.client
import os
import shutil
import socket
import ssl
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import (ACCESS_KEY, REGION, SECRET_KEY, Server, admin, free_port,  # noqa: E402
                     make_user, parse_xml, unique_name)
from test_iam import IamCase, policy_doc, raw_request  # noqa: E402
from test_post_object import multipart  # noqa: E402

ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
ANONYMOUS_ID = "65a011a29cdf8ec533ec3d1ccaae921c"  # AWS's canonical id of anonymous writers


def grants_of(acl):
    return sorted((g["Grantee"]["Type"], g["Grantee"].get("ID") or g["Grantee"].get("URI"),
                   g["Permission"]) for g in acl["Grants"])


def iso(ts):
    return datetime.datetime.fromtimestamp(ts, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def fetch(url, method="GET", data=None, headers=None):
    """urllib with no credentials at all: (status, body)."""
    req = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def error_code(body):
    return parse_xml(body).findtext("Code")


class ConditionCase(IamCase):
    def user_client(self, tag, policy=None, **cfg):
        u = self.make_user(tag, policy)
        return u, self.client(u, **cfg)

    def bucket_with(self, *keys, **create):
        b = unique_name("cond")
        self.s3.create_bucket(Bucket=b, **create)
        for k in keys:
            self.s3.put_object(Bucket=b, Key=k, Body=b"body of " + k.encode())
        return b


# ==========================================================================
class ConditionKeysTest(ConditionCase):
    def test_referer(self):
        # AWS's documented example: anonymous reads only from one site's pages.
        b = self.bucket_with("page.html")
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
             "Resource": f"arn:aws:s3:::{b}/*",
             "Condition": {"StringLike": {"aws:Referer": ["https://www.example.com/*"]}}}))
        status, body = raw_request(self.server, "GET", f"/{b}/page.html",
                                   headers={"Referer": "https://www.example.com/index.html"})
        self.assertEqual((status, body), (200, b"body of page.html"))
        status, body = raw_request(self.server, "GET", f"/{b}/page.html",
                                   headers={"Referer": "https://evil.example.net/index.html"})
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))
        status, body = raw_request(self.server, "GET", f"/{b}/page.html")  # no Referer at all
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))

    def test_user_agent(self):
        b = self.bucket_with("k")
        u, plain = self.user_client("ua", policy_doc(
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/*"}))
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": f"arn:aws:s3:::{b}/*",
             "Condition": {"StringLike": {"aws:UserAgent": "*BadBot*"}}}))
        bot = self.client(u, user_agent_extra="BadBot/1.0")
        self.assertEqual(plain.get_object(Bucket=b, Key="k")["Body"].read(), b"body of k")
        self.assertDenied(bot.get_object, Bucket=b, Key="k")
        # The Deny binds root too (it is not a policy-management call).
        root_bot = self.server.boto3_client(user_agent_extra="BadBot/1.0")
        self.addCleanup(root_bot.close)
        self.assertDenied(root_bot.get_object, Bucket=b, Key="k")

    def test_version_id(self):
        b = unique_name("condv")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
        v1 = self.s3.put_object(Bucket=b, Key="k", Body=b"one")["VersionId"]
        v2 = self.s3.put_object(Bucket=b, Key="k", Body=b"two")["VersionId"]
        u, c = self.user_client("vid")
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Effect": "Allow", "Principal": {"AWS": u["arn"]}, "Action": "s3:GetObjectVersion",
             "Resource": f"arn:aws:s3:::{b}/k", "Condition": {"StringEquals": {"s3:VersionId": v1}}}))
        self.assertEqual(c.get_object(Bucket=b, Key="k", VersionId=v1)["Body"].read(), b"one")
        self.assertDenied(c.get_object, Bucket=b, Key="k", VersionId=v2)
        self.assertDenied(c.get_object, Bucket=b, Key="k")  # no versionId: s3:GetObject, not granted

    def test_signature_version(self):
        b = self.bucket_with("k")
        u, v4 = self.user_client("sigver", policy_doc(
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/v4/*",
             "Condition": {"StringEquals": {"s3:signatureversion": "AWS4-HMAC-SHA256"}}},
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/v2/*",
             "Condition": {"StringEquals": {"s3:signatureversion": "AWS"}}}))
        self.s3.put_object(Bucket=b, Key="v4/k", Body=b"four")
        self.s3.put_object(Bucket=b, Key="v2/k", Body=b"two")
        v2 = self.client(u, signature_version="s3")  # SigV2 (strata accepts it: --sigv2 on)
        self.assertEqual(v4.get_object(Bucket=b, Key="v4/k")["Body"].read(), b"four")
        self.assertDenied(v2.get_object, Bucket=b, Key="v4/k")
        self.assertEqual(v2.get_object(Bucket=b, Key="v2/k")["Body"].read(), b"two")
        self.assertDenied(v4.get_object, Bucket=b, Key="v2/k")
        # Presigned URLs carry their signature's version too.
        v4_presigner = self.client(u, signature_version="s3v4")
        for client, good, bad in ((v4_presigner, "v4/k", "v2/k"), (v2, "v2/k", "v4/k")):
            url = client.generate_presigned_url("get_object", Params={"Bucket": b, "Key": good})
            self.assertEqual(fetch(url)[0], 200, url)
            url = client.generate_presigned_url("get_object", Params={"Bucket": b, "Key": bad})
            self.assertEqual(fetch(url)[0], 403, url)

    def test_auth_type(self):
        b = self.bucket_with()
        u, c = self.user_client("authtype", policy_doc(
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/header/*",
             "Condition": {"StringEquals": {"s3:authType": "REST-HEADER"}}},
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/query/*",
             "Condition": {"StringEquals": {"s3:authType": "REST-QUERY-STRING"}}}))
        self.s3.put_object(Bucket=b, Key="header/k", Body=b"by header")
        self.s3.put_object(Bucket=b, Key="query/k", Body=b"by query")
        presigner = self.client(u, signature_version="s3v4")

        def presigned(key):
            return fetch(presigner.generate_presigned_url(
                "get_object", Params={"Bucket": b, "Key": key}, ExpiresIn=300))
        self.assertEqual(c.get_object(Bucket=b, Key="header/k")["Body"].read(), b"by header")
        status, body = presigned("header/k")
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))
        self.assertEqual(presigned("query/k"), (200, b"by query"))
        self.assertDenied(c.get_object, Bucket=b, Key="query/k")
        # A SigV2 query string is REST-QUERY-STRING as well.
        v2_url = self.client(u, signature_version="s3").generate_presigned_url(
            "get_object", Params={"Bucket": b, "Key": "query/k"}, ExpiresIn=300)
        self.assertIn("Signature=", v2_url)
        self.assertEqual(fetch(v2_url), (200, b"by query"))

    def test_browser_form_keys(self):
        # A POST form is signed too (SigV4 or SigV2, from its fields), its authType is
        # POST, and its `acl` field is what the x-amz-acl header is to a PUT.
        b = self.bucket_with(ObjectOwnership="ObjectWriter")
        u, v4 = self.user_client("form", policy_doc(
            {"Effect": "Allow", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{b}/open/*"},
            {"Effect": "Allow", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{b}/handed/*",
             "Condition": {"StringEquals": {"s3:x-amz-acl": "bucket-owner-full-control"}}},
            {"Effect": "Allow", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{b}/form-only/*",
             "Condition": {"StringEquals": {"s3:authType": "POST"}}}), signature_version="s3v4")
        # AWS's "no SigV2 here" bucket policy.
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": f"arn:aws:s3:::{b}/*",
             "Condition": {"StringNotEquals": {"s3:signatureversion": "AWS4-HMAC-SHA256"}}}))
        v2 = self.client(u, signature_version="s3")

        def post(client, key, acl=None):
            fields = {"acl": acl} if acl else {}
            form = client.generate_presigned_post(Bucket=b, Key=key, Fields=fields,
                                                  Conditions=[{"acl": acl}] if acl else [])
            ct, body = multipart(list(form["fields"].items()), b"posted " + key.encode())
            conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
            try:
                conn.request("POST", f"/{b}", body=body, headers={"Content-Type": ct})
                r = conn.getresponse()
                return r.status, r.read()
            finally:
                conn.close()
        self.assertEqual(post(v4, "open/v4")[0], 204)
        status, body = post(v2, "open/v2")
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))
        v4.put_object(Bucket=b, Key="open/put-v4", Body=b"x")
        self.assertDenied(v2.put_object, Bucket=b, Key="open/put-v2", Body=b"x")
        self.assertEqual(post(v4, "handed/ok", acl="bucket-owner-full-control")[0], 204)
        status, body = post(v4, "handed/no", acl="private")
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))
        self.assertEqual(post(v4, "form-only/k")[0], 204)
        self.assertDenied(v4.put_object, Bucket=b, Key="form-only/put", Body=b"x")
        self.assertEqual(sorted(o["Key"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]),
                         ["form-only/k", "handed/ok", "open/put-v4", "open/v4"])

    def test_x_amz_acl(self):
        # The classic cross-writer rule: uploads must hand the bucket owner full control.
        b = self.bucket_with(ObjectOwnership="ObjectWriter")
        u, c = self.user_client("xamzacl", policy_doc(
            {"Effect": "Allow", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{b}/*",
             "Condition": {"StringEquals": {"s3:x-amz-acl": "bucket-owner-full-control"}}}))
        c.put_object(Bucket=b, Key="ok", Body=b"x", ACL="bucket-owner-full-control")
        self.assertDenied(c.put_object, Bucket=b, Key="private", Body=b"x", ACL="private")
        self.assertDenied(c.put_object, Bucket=b, Key="none", Body=b"x")  # key absent
        root_id = self.s3.list_buckets()["Owner"]["ID"]
        self.assertIn(("CanonicalUser", root_id, "FULL_CONTROL"),
                      grants_of(self.s3.get_object_acl(Bucket=b, Key="ok")))
        self.assertEqual([o["Key"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]], ["ok"])

    def test_delimiter_and_max_keys(self):
        b = self.bucket_with("a/1", "a/2", "b")
        u, c = self.user_client("listcond", policy_doc(
            {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{b}",
             "Condition": {"StringEquals": {"s3:delimiter": "/"},
                           "NumericLessThanEquals": {"s3:max-keys": "10"}}}))
        out = c.list_objects_v2(Bucket=b, Delimiter="/", MaxKeys=10)
        self.assertEqual([p["Prefix"] for p in out["CommonPrefixes"]], ["a/"])
        self.assertEqual([o["Key"] for o in out["Contents"]], ["b"])
        c.list_objects_v2(Bucket=b, Delimiter="/", MaxKeys=2)
        self.assertDenied(c.list_objects_v2, Bucket=b, Delimiter="/", MaxKeys=11)
        self.assertDenied(c.list_objects_v2, Bucket=b, Delimiter="-", MaxKeys=10)
        self.assertDenied(c.list_objects_v2, Bucket=b, Delimiter="/")  # no max-keys: key absent
        self.assertDenied(c.list_objects_v2, Bucket=b, MaxKeys=10)  # no delimiter

    def test_object_lock_retain_until_date(self):
        b = unique_name("condlock")
        self.s3.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)
        vid = self.s3.put_object(Bucket=b, Key="k", Body=b"x")["VersionId"]
        limit = time.time() + 30 * 86400
        u, c = self.user_client("retdate", policy_doc(
            {"Effect": "Allow", "Action": ["s3:PutObjectRetention"], "Resource": f"arn:aws:s3:::{b}/*",
             "Condition": {"DateLessThan": {"s3:object-lock-retain-until-date": iso(limit)}}},
            {"Effect": "Allow", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{b}/*"}))
        soon, late = time.time() + 10 * 86400, time.time() + 60 * 86400
        # PutObjectRetention: the date is in the XML body.
        c.put_object_retention(Bucket=b, Key="k", VersionId=vid,
                               Retention={"Mode": "GOVERNANCE", "RetainUntilDate": soon})
        self.assertDenied(c.put_object_retention, Bucket=b, Key="k", VersionId=vid,
                          Retention={"Mode": "GOVERNANCE", "RetainUntilDate": late})
        got = self.s3.get_object_retention(Bucket=b, Key="k", VersionId=vid)["Retention"]
        self.assertLess(abs(got["RetainUntilDate"].timestamp() - soon), 2)
        # PutObject: the date is in x-amz-object-lock-retain-until-date.
        c.put_object(Bucket=b, Key="soon", Body=b"x", ObjectLockMode="GOVERNANCE",
                     ObjectLockRetainUntilDate=soon)
        self.assertDenied(c.put_object, Bucket=b, Key="late", Body=b"x", ObjectLockMode="GOVERNANCE",
                          ObjectLockRetainUntilDate=late)
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=b, Key="late")

    def test_current_time_and_epoch_time(self):
        b = self.bucket_with()
        past, future = 1577836800, 4102444800  # 2020-01-01, 2100-01-01
        rules = {
            "iso-past": {"DateGreaterThan": {"aws:CurrentTime": iso(past)}},
            "iso-future": {"DateGreaterThan": {"aws:CurrentTime": iso(future)}},
            "iso-before-future": {"DateLessThan": {"aws:CurrentTime": iso(future)}},
            "epoch-past": {"DateGreaterThan": {"aws:EpochTime": past}},
            "epoch-future": {"DateGreaterThan": {"aws:EpochTime": str(future)}},
            "num-past": {"NumericGreaterThan": {"aws:EpochTime": str(past)}},
            "num-future": {"NumericGreaterThan": {"aws:EpochTime": str(future)}},
        }
        u, c = self.user_client("clock", policy_doc(*[
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/{name}",
             "Condition": cond} for name, cond in rules.items()]))
        for name in rules:
            self.s3.put_object(Bucket=b, Key=name, Body=name.encode())
        for name in rules:
            with self.subTest(rule=name):
                if "future" in name and "before" not in name:
                    self.assertDenied(c.get_object, Bucket=b, Key=name)
                else:
                    self.assertEqual(c.get_object(Bucket=b, Key=name)["Body"].read(), name.encode())
        # A bucket policy Deny on a time window in the past binds nobody; one open now binds root.
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Effect": "Deny", "Principal": "*", "Action": "s3:GetObject",
             "Resource": f"arn:aws:s3:::{b}/iso-past",
             "Condition": {"DateLessThan": {"aws:CurrentTime": iso(past)}}},
            {"Effect": "Deny", "Principal": "*", "Action": "s3:GetObject",
             "Resource": f"arn:aws:s3:::{b}/epoch-past",
             "Condition": {"DateGreaterThan": {"aws:EpochTime": str(past)}}}))
        self.assertEqual(self.s3.get_object(Bucket=b, Key="iso-past")["Body"].read(), b"iso-past")
        self.assertDenied(self.s3.get_object, Bucket=b, Key="epoch-past")


# ==========================================================================
class CannedAclTest(ConditionCase):
    def setUp(self):
        super().setUp()
        self.root_id = self.s3.list_buckets()["Owner"]["ID"]

    def url(self, b, key=""):
        return f"{self.server.endpoint}/{b}" + (f"/{key}" if key else "")

    def test_create_bucket_public_read(self):
        b = unique_name("pubr")
        self.s3.create_bucket(Bucket=b, ACL="public-read", ObjectOwnership="ObjectWriter")
        self.assertEqual(grants_of(self.s3.get_bucket_acl(Bucket=b)), sorted([
            ("CanonicalUser", self.root_id, "FULL_CONTROL"), ("Group", ALL_USERS, "READ")]))
        self.s3.put_object(Bucket=b, Key="listed.txt", Body=b"not public itself")
        status, body = fetch(self.url(b))
        self.assertEqual(status, 200, body)
        listing = parse_xml(body)
        self.assertEqual(listing.tag, "ListBucketResult")
        self.assertEqual([k.text for k in listing.iter("Key")], ["listed.txt"])
        # Bucket READ lists; it does not read the objects (their ACL is private).
        status, body = fetch(self.url(b, "listed.txt"))
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))
        status, body = fetch(self.url(b, "new"), "PUT", b"x")  # READ is not WRITE
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))

    def test_create_bucket_public_read_write_lets_anonymous_upload(self):
        b = unique_name("pubrw")
        self.s3.create_bucket(Bucket=b, ACL="public-read-write", ObjectOwnership="ObjectWriter")
        self.assertEqual(grants_of(self.s3.get_bucket_acl(Bucket=b)), sorted([
            ("CanonicalUser", self.root_id, "FULL_CONTROL"), ("Group", ALL_USERS, "READ"),
            ("Group", ALL_USERS, "WRITE")]))
        status, body = fetch(self.url(b, "dropped.txt"), "PUT", b"from nobody",
                             {"Content-Type": "text/plain"})
        self.assertEqual(status, 200, body)
        self.assertEqual(self.get_body(b, "dropped.txt"), b"from nobody")
        # ObjectWriter: the anonymous writer owns it (AWS's anonymous canonical id).
        acl = self.s3.get_object_acl(Bucket=b, Key="dropped.txt")
        self.assertEqual(acl["Owner"]["ID"], ANONYMOUS_ID)
        status, body = fetch(self.url(b))
        self.assertEqual(status, 200, body)
        self.assertIn(b"dropped.txt", body)

    def test_bucket_owner_read(self):
        b = unique_name("bor")
        writer = self.make_user("borw")
        owner = self.make_user("boro", policy=policy_doc(
            {"Effect": "Allow", "Action": ["s3:CreateBucket", "s3:GetBucketAcl", "s3:PutBucketAcl"],
             "Resource": f"arn:aws:s3:::{b}"}))  # nothing on objects: only ACLs let it read
        o, w = self.client(owner), self.client(writer)
        o.create_bucket(Bucket=b, ObjectOwnership="ObjectWriter",
                        GrantFullControl=f'id="{owner["canonical_id"]}"',
                        GrantWrite=f'id="{writer["canonical_id"]}"')
        self.assertEqual(o.get_bucket_acl(Bucket=b)["Owner"]["ID"], owner["canonical_id"])
        w.put_object(Bucket=b, Key="shared", Body=b"for the bucket owner", ACL="bucket-owner-read")
        w.put_object(Bucket=b, Key="kept", Body=b"writer only")
        acl = w.get_object_acl(Bucket=b, Key="shared")
        self.assertEqual(acl["Owner"]["ID"], writer["canonical_id"])
        self.assertEqual(grants_of(acl), sorted([
            ("CanonicalUser", writer["canonical_id"], "FULL_CONTROL"),
            ("CanonicalUser", owner["canonical_id"], "READ")]))
        self.assertEqual(o.get_object(Bucket=b, Key="shared")["Body"].read(), b"for the bucket owner")
        self.assertDenied(o.get_object, Bucket=b, Key="kept")

    def test_copy_object_with_public_read(self):
        b = unique_name("cpacl")
        self.s3.create_bucket(Bucket=b, ObjectOwnership="BucketOwnerPreferred")
        self.s3.put_object(Bucket=b, Key="src", Body=b"copied bytes")
        self.s3.copy_object(Bucket=b, Key="dst", CopySource={"Bucket": b, "Key": "src"},
                            ACL="public-read")
        self.assertIn(("Group", ALL_USERS, "READ"), grants_of(self.s3.get_object_acl(Bucket=b, Key="dst")))
        self.assertEqual(fetch(self.url(b, "dst")), (200, b"copied bytes"))
        status, body = fetch(self.url(b, "src"))
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))

    def test_read_acp_and_write_acp_grant_headers(self):
        b = unique_name("acp")
        self.s3.create_bucket(Bucket=b, ObjectOwnership="ObjectWriter")
        reader, writer = self.make_user("racp"), self.make_user("wacp")
        self.s3.put_object(Bucket=b, Key="k", Body=b"acp", GrantReadACP=f'id="{reader["canonical_id"]}"',
                           GrantWriteACP=f'id="{writer["canonical_id"]}"')
        self.assertEqual(grants_of(self.s3.get_object_acl(Bucket=b, Key="k")), sorted([
            ("CanonicalUser", reader["canonical_id"], "READ_ACP"),
            ("CanonicalUser", writer["canonical_id"], "WRITE_ACP")]))
        r, w = self.client(reader), self.client(writer)
        # READ_ACP reads the ACL, not the object; WRITE_ACP writes the ACL only.
        self.assertEqual(len(r.get_object_acl(Bucket=b, Key="k")["Grants"]), 2)
        self.assertDenied(r.get_object, Bucket=b, Key="k")
        self.assertDenied(r.put_object_acl, Bucket=b, Key="k", ACL="public-read")
        self.assertDenied(w.get_object_acl, Bucket=b, Key="k")
        self.assertDenied(w.get_object, Bucket=b, Key="k")
        self.assertEqual(fetch(self.url(b, "k"))[0], 403)
        w.put_object_acl(Bucket=b, Key="k", ACL="public-read")
        self.assertEqual(fetch(self.url(b, "k")), (200, b"acp"))
        self.assertEqual(grants_of(self.s3.get_object_acl(Bucket=b, Key="k")), sorted([
            ("CanonicalUser", self.root_id, "FULL_CONTROL"), ("Group", ALL_USERS, "READ")]))


# ==========================================================================
class CanonicalIdTest(ConditionCase):
    def test_user_owner_ids_agree_everywhere(self):
        b = unique_name("canon")
        u, c = self.user_client("canon", policy_doc(
            {"Effect": "Allow", "Action": "s3:*", "Resource": [f"arn:aws:s3:::{b}", f"arn:aws:s3:::{b}/*"]},
            {"Effect": "Allow", "Action": "s3:ListAllMyBuckets", "Resource": "*"}))
        st, info = admin(self.server, "GET", "user", name=u["name"])
        self.assertEqual(st, 200, info)
        cid = info["canonical_id"]
        self.assertRegex(cid, "^[0-9a-f]{64}$")
        c.create_bucket(Bucket=b)
        c.put_object(Bucket=b, Key="k", Body=b"x")
        listed = c.list_buckets()
        acl = c.get_bucket_acl(Bucket=b)
        fetched = c.list_objects_v2(Bucket=b, FetchOwner=True)["Contents"][0]["Owner"]
        obj_acl = c.get_object_acl(Bucket=b, Key="k")
        self.assertIn(b, [x["Name"] for x in listed["Buckets"]])
        for owner in (listed["Owner"], acl["Owner"], fetched, obj_acl["Owner"]):
            self.assertEqual(owner["ID"], cid)
            self.assertEqual(owner.get("DisplayName"), listed["Owner"].get("DisplayName"))
        self.assertEqual(grants_of(acl), [("CanonicalUser", cid, "FULL_CONTROL")])
        # Root's id is another one.
        root = self.s3.list_buckets()["Owner"]["ID"]
        self.assertNotEqual(root, cid)
        self.assertEqual(self.s3.get_bucket_acl(Bucket=b)["Owner"]["ID"], cid)


# ==========================================================================
def make_cert(directory):
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    import subprocess
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


def tls_context(cafile, maximum, server=False):
    """A context offering TLS 1.0 up to `maximum`, every cipher OpenSSL has (security level 0)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server else ssl.PROTOCOL_TLS_CLIENT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        ctx.maximum_version = maximum
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    if not server:
        ctx.load_verify_locations(cafile)
    return ctx


class TlsVersionTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="strata-tls10-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.cert, self.key = make_cert(self.dir)

    def client_can_speak_tls10(self):
        """Whether this Python/OpenSSL can complete a TLS 1.0 handshake at all:
        against a local server that offers only TLS 1.0."""
        server_ctx = tls_context(None, ssl.TLSVersion.TLSv1, server=True)
        server_ctx.load_cert_chain(self.cert, self.key)
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(10)

        def serve():
            try:
                conn, _ = listener.accept()
                with server_ctx.wrap_socket(conn, server_side=True) as s:
                    s.sendall(b"ok")
            except (OSError, ssl.SSLError):
                pass
        t = threading.Thread(target=serve, daemon=True)
        t.start()
        try:
            with socket.create_connection(listener.getsockname(), timeout=10) as raw:
                with tls_context(self.cert, ssl.TLSVersion.TLSv1).wrap_socket(
                        raw, server_hostname="localhost") as s:
                    return s.version() == "TLSv1" and s.recv(2) == b"ok"
        except (OSError, ssl.SSLError):
            return False
        finally:
            t.join(10)
            listener.close()

    def test_tls10_only_client_refused_tls12_served(self):
        if not self.client_can_speak_tls10():
            self.skipTest("this Python/OpenSSL cannot complete a TLS 1.0 handshake even at "
                          "SECLEVEL=0, so a refusal by strata would prove nothing")
        tls_port = free_port()
        server = Server(extra_args=["--listen-tls", f"127.0.0.1:{tls_port}",
                                    "--tls-cert", self.cert, "--tls-key", self.key]).start()
        self.addCleanup(server.cleanup)
        # TLS 1.0 only: the handshake fails, nothing is served.
        with socket.create_connection(("127.0.0.1", tls_port), timeout=10) as raw:
            with self.assertRaises((ssl.SSLError, ConnectionResetError)):
                with tls_context(self.cert, ssl.TLSVersion.TLSv1).wrap_socket(
                        raw, server_hostname="localhost") as s:
                    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                    s.recv(10)
        # The same client allowing up to TLS 1.2: served, and a signed ListBuckets answers 200.
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials
        req = AWSRequest(method="GET", url=f"https://127.0.0.1:{tls_port}/", data=b"")
        S3SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3", REGION).add_auth(req)
        conn = http.client.HTTPSConnection("127.0.0.1", tls_port, timeout=30,
                                           context=tls_context(self.cert, ssl.TLSVersion.TLSv1_2))
        try:
            conn.request("GET", "/", headers=dict(req.headers.items()))
            r = conn.getresponse()
            body = r.read()
            self.assertEqual(conn.sock.version(), "TLSv1.2")
            self.assertEqual(r.status, 200, body)
            self.assertEqual(parse_xml(body).tag, "ListAllMyBucketsResult")
        finally:
            conn.close()
        self.assertTrue(server.alive())


# ==========================================================================
class IamKeyFileTest(unittest.TestCase):
    def write_key(self, hex_text):
        fd, path = tempfile.mkstemp(prefix="strata-iamkey-")
        with os.fdopen(fd, "w") as f:
            f.write(hex_text + "\n")
        os.chmod(path, 0o600)
        self.addCleanup(os.unlink, path)
        return path

    def test_operator_key_file(self):
        key_file = self.write_key(os.urandom(32).hex())
        server = Server(extra_args=["--iam-key-file", key_file]).start()
        self.addCleanup(server.cleanup)
        s3 = server.boto3_client()
        self.addCleanup(s3.close)
        b = unique_name("iamkey")
        s3.create_bucket(Bucket=b)
        s3.put_object(Bucket=b, Key="k", Body=b"sealed by the operator's key")
        u = make_user(server, unique_name("keyed"), policy_doc(
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/*"}))
        # The operator's key is used: none is made in the data directory.
        self.assertFalse(os.path.exists(os.path.join(server.data_dir, "iam.key")))
        server.stop()

        def user_reads():
            c = server.boto3_client(access_key=u["ak"], secret_key=u["sk"])
            try:
                return c.get_object(Bucket=b, Key="k")["Body"].read()
            finally:
                c.close()
        # Same file: the user and its secret are back.
        server.start()
        self.assertEqual(user_reads(), b"sealed by the operator's key")
        server.stop()
        # Another key: refuses to start rather than lose the secrets.
        server.extra_args = ["--iam-key-file", self.write_key(os.urandom(32).hex())]
        with self.assertRaises(RuntimeError) as cm:
            server.start(timeout=15)
        server.stop()  # reaps the exited process, closes its log
        self.assertIn("does not open with this IAM key", str(cm.exception))
        # A missing or malformed file: refused with the reason.
        server.extra_args = ["--iam-key-file", os.path.join(server.data_dir, "no-such-key")]
        with self.assertRaises(RuntimeError) as cm:
            server.start(timeout=15)
        server.stop()  # reaps the exited process, closes its log
        self.assertIn("cannot read the IAM key file", str(cm.exception))
        server.extra_args = ["--iam-key-file", self.write_key("abcd")]
        with self.assertRaises(RuntimeError) as cm:
            server.start(timeout=15)
        server.stop()  # reaps the exited process, closes its log
        self.assertIn("must hold 64 hex digits", str(cm.exception))
        # The right file again: nothing was lost by the refusals.
        server.extra_args = ["--iam-key-file", key_file]
        server.start()
        self.assertEqual(user_reads(), b"sealed by the operator's key")


if __name__ == "__main__":
    unittest.main()

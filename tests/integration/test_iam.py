"""Identities and policies (issue 12) against a real server with real clients:
users, access keys (create, disable, rotate, delete), groups and identity
policies through the admin API and `strata admin`; bucket policies
(Put/Get/Delete/GetBucketPolicyStatus) with boto3 and aws cli; who may do
what: two users and anonymous requests (curl without a signature), a
cross-user bucket policy granting read-only on a prefix, aws:SecureTransport,
aws:SourceIp (the client bound to 127.0.0.1 vs 127.0.0.2), tag conditions,
s3:prefix on listings, presigned URLs of a disabled key, DeleteObjects per
key, s3:BypassGovernanceRetention as a real permission; bad input (malformed
policies, PolicyTooLarge, odd user names); everything survives a restart.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_iam.py -v
"""
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from botocore.exceptions import ClientError  # noqa: E402

from harness import (ACCESS_KEY, SECRET_KEY, Server, ServerTestCase, admin, make_user,  # noqa: E402
                     parse_xml, signed_request, unique_name)


def raw_request(server, method, target, headers=None, body=None, source="127.0.0.1"):
    """An unsigned request from `source` (a loopback address): what curl or a browser sends."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30,
                                      source_address=(source, 0))
    try:
        conn.request(method, target, body=body, headers=dict(headers or {}))
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def error_code(body):
    return parse_xml(body).findtext("Code")


def policy_doc(*statements):
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


class IamCase(ServerTestCase):
    """Helpers: make users with keys and policies, clients for them."""

    def make_user(self, tag, policy=None):
        return make_user(self.server, f"{tag}-{unique_name('u')}"[:64], policy)

    def client(self, user, **cfg):
        c = self.server.boto3_client(access_key=user["ak"], secret_key=user["sk"], **cfg)
        self.addCleanup(c.close)
        return c

    def assertDenied(self, fn, *args, **kwargs):
        return self.assertS3Error(fn, "AccessDenied", 403, *args, **kwargs)


# ==========================================================================
class AdminTest(IamCase):
    def test_users_keys_and_listing_never_show_secrets(self):
        u = self.make_user("adm")
        st, users = admin(self.server, "GET", "users")
        self.assertEqual(st, 200)
        mine = [x for x in users["users"] if x["name"] == u["name"]]
        self.assertEqual(len(mine), 1)
        self.assertEqual([k["access_key"] for k in mine[0]["access_keys"]], [u["ak"]])
        self.assertNotIn(u["sk"], json.dumps(users))
        self.assertTrue(mine[0]["arn"].endswith(":user/" + u["name"]))
        self.assertRegex(mine[0]["canonical_id"], "^[0-9a-f]{64}$")
        # The secret is not in the metadata store in the clear either.
        meta = os.path.join(self.server.data_dir, "meta")
        for root, _, files in os.walk(meta):
            for f in files:
                with open(os.path.join(root, f), "rb") as fh:
                    self.assertNotIn(u["sk"].encode(), fh.read(), f)
        self.assertEqual(os.stat(os.path.join(self.server.data_dir, "iam.key")).st_mode & 0o777, 0o600)

    def test_bad_names_duplicates_and_missing(self):
        for bad in ("has space", "slash/name", "x" * 65, "", "semi;colon", "ünïcode"):
            st, doc = admin(self.server, "POST", "user-create", name=bad)
            self.assertEqual(st, 400, (bad, doc))
            self.assertIn("needs name=" if not bad else "not valid", doc["error"])
        u = self.make_user("dup")
        st, doc = admin(self.server, "POST", "user-create", name=u["name"])
        self.assertEqual(st, 409, doc)
        self.assertEqual(admin(self.server, "POST", "key-create", user="nobody-here")[0], 404)
        self.assertEqual(admin(self.server, "POST", "policy-attach", name="nope", user=u["name"])[0], 404)
        # At most two keys: the third is refused.
        self.assertEqual(admin(self.server, "POST", "key-create", user=u["name"])[0], 200)
        st, doc = admin(self.server, "POST", "key-create", user=u["name"])
        self.assertEqual(st, 409, doc)
        # A malformed identity policy is refused with the reason.
        st, doc = admin(self.server, "PUT", "policy", body=b'{"Statement": [{"Effect": "Maybe"}]}', name="bad")
        self.assertEqual(st, 400, doc)
        st, doc = admin(self.server, "PUT", "policy", body=b"not json", name="bad")
        self.assertEqual(st, 400, doc)

    def test_admin_api_is_root_only(self):
        u = self.make_user("notroot", policy=policy_doc(
            {"Effect": "Allow", "Action": "*", "Resource": "*"}))
        r = signed_request(self.server, "GET", "/_strata/admin/users", access_key=u["ak"], secret_key=u["sk"])
        self.assertEqual(r.status, 403, r)
        self.assertEqual(error_code(r.body), "AccessDenied")
        status, _ = raw_request(self.server, "GET", "/_strata/admin/users")
        self.assertEqual(status, 403)

    def test_cli_commands_and_exit_codes(self):
        env = dict(os.environ, STRATA_ROOT_USER=ACCESS_KEY, STRATA_ROOT_PASSWORD=SECRET_KEY)
        ep = ["--endpoint", self.server.endpoint]

        def strata(*args, stdin=None):
            return subprocess.run([self.server.bin, "admin", *args, *ep], env=env, input=stdin,
                                  capture_output=True, text=True, timeout=60)
        name = unique_name("cli")
        r = strata("user", "create", name)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["name"], name)
        r = strata("key", "create", name)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("secret key:", r.stdout)
        ak = [ln.split()[-1] for ln in r.stdout.splitlines() if ln.startswith("access key:")][0]
        r = strata("policy", "put", "cli-read-" + name, "-",
                   stdin=policy_doc({"Effect": "Allow", "Action": "s3:ListAllMyBuckets", "Resource": "*"}))
        self.assertEqual(r.returncode, 0, r.stderr)
        r = strata("group", "create", "g-" + name)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(strata("group", "add", "g-" + name, name).returncode, 0)
        self.assertEqual(strata("policy", "attach", "cli-read-" + name, "--group", "g-" + name).returncode, 0)
        r = strata("group", "list")
        g = [x for x in json.loads(r.stdout)["groups"] if x["name"] == "g-" + name][0]
        self.assertEqual(g["members"], [name])
        self.assertEqual(g["policies"], ["cli-read-" + name])
        # Refusals: the server's message, exit 1; a usage error exits 2 (CLI11: 106 is its own).
        r = strata("policy", "delete", "cli-read-" + name)
        self.assertEqual(r.returncode, 1)
        self.assertIn("attached to group", r.stderr)
        r = strata("user", "create", "bad name")
        self.assertEqual(r.returncode, 1)
        self.assertIn("not valid", r.stderr)
        r = strata("policy", "attach", "cli-read-" + name)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--user or --group", r.stderr)
        self.assertEqual(strata("key", "disable", ak).returncode, 0)
        r = strata("user", "show", name)
        self.assertEqual(json.loads(r.stdout)["access_keys"][0]["active"], False)


# ==========================================================================
class PolicyEnforcementTest(IamCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bucket = unique_name("iam")
        cls.s3.create_bucket(Bucket=cls.bucket)
        for key in ("shared/a.txt", "shared/deep/b.txt", "private/c.txt", "public/d.txt"):
            cls.s3.put_object(Bucket=cls.bucket, Key=key, Body=key.encode())

    def test_user_without_policy_may_do_nothing(self):
        u = self.make_user("none")
        c = self.client(u)
        self.assertDenied(c.list_buckets)
        self.assertDenied(c.get_object, Bucket=self.bucket, Key="shared/a.txt")
        self.assertDenied(c.put_object, Bucket=self.bucket, Key="x", Body=b"x")
        self.assertDenied(c.create_bucket, Bucket=unique_name("nope"))
        self.assertDenied(c.list_objects_v2, Bucket=self.bucket)
        self.assertDenied(c.get_bucket_policy, Bucket=self.bucket)

    def test_identity_policy_scopes_a_user_to_its_bucket(self):
        own = unique_name("own")
        u = self.make_user("scoped", policy=policy_doc(
            {"Effect": "Allow", "Action": ["s3:CreateBucket", "s3:ListBucket"], "Resource": f"arn:aws:s3:::{own}"},
            {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"], "Resource": f"arn:aws:s3:::{own}/*"}))
        c = self.client(u)
        c.create_bucket(Bucket=own)
        c.put_object(Bucket=own, Key="k", Body=b"mine")
        self.assertEqual(c.get_object(Bucket=own, Key="k")["Body"].read(), b"mine")
        self.assertEqual([o["Key"] for o in c.list_objects_v2(Bucket=own)["Contents"]], ["k"])
        self.assertDenied(c.delete_object, Bucket=own, Key="k")  # not granted
        self.assertDenied(c.get_object, Bucket=self.bucket, Key="shared/a.txt")
        self.assertDenied(c.put_object, Bucket=self.bucket, Key="k", Body=b"x")
        # The bucket is the creator's: ListObjects reports it as the owner.
        owner = self.s3.list_objects_v2(Bucket=own, FetchOwner=True)["Contents"][0]["Owner"]
        self.assertEqual(owner["ID"], u["canonical_id"])
        self.assertEqual(owner["DisplayName"], u["name"])

    def test_explicit_deny_beats_allow(self):
        u = self.make_user("deny", policy=policy_doc(
            {"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
            {"Effect": "Deny", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{self.bucket}/private/*"}))
        c = self.client(u)
        self.assertEqual(c.get_object(Bucket=self.bucket, Key="shared/a.txt")["Body"].read(), b"shared/a.txt")
        self.assertDenied(c.get_object, Bucket=self.bucket, Key="private/c.txt")
        self.assertS3Error(c.head_object, "403", 403, Bucket=self.bucket, Key="private/c.txt")  # HEAD: no body

    def test_group_policies_apply_to_members(self):
        u = self.make_user("member")
        group = unique_name("grp")
        self.assertEqual(admin(self.server, "POST", "group-create", name=group)[0], 200)
        pname = "gp-" + group
        self.assertEqual(admin(self.server, "PUT", "policy", name=pname, body=policy_doc(
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{self.bucket}/*"}).encode())[0], 200)
        self.assertEqual(admin(self.server, "POST", "policy-attach", name=pname, group=group)[0], 200)
        c = self.client(u)
        self.assertDenied(c.get_object, Bucket=self.bucket, Key="shared/a.txt")
        self.assertEqual(admin(self.server, "POST", "group-add", group=group, user=u["name"])[0], 200)
        self.assertEqual(c.get_object(Bucket=self.bucket, Key="shared/a.txt")["Body"].read(), b"shared/a.txt")
        self.assertEqual(admin(self.server, "POST", "group-remove", group=group, user=u["name"])[0], 200)
        self.assertDenied(c.get_object, Bucket=self.bucket, Key="shared/a.txt")

    def test_bucket_policy_grants_another_user_read_only_on_a_prefix(self):
        bob = self.make_user("bob")
        b = unique_name("xacct")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="shared/x", Body=b"x")
        self.s3.put_object(Bucket=b, Key="secret/y", Body=b"y")
        policy = policy_doc(
            {"Sid": "ReadShared", "Effect": "Allow", "Principal": {"AWS": bob["arn"]},
             "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/shared/*"},
            {"Sid": "ListShared", "Effect": "Allow", "Principal": {"AWS": [bob["arn"]]},
             "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{b}",
             "Condition": {"StringLike": {"s3:prefix": ["shared/", "shared/*"]}}})
        self.s3.put_bucket_policy(Bucket=b, Policy=policy)
        self.assertEqual(json.loads(self.s3.get_bucket_policy(Bucket=b)["Policy"]), json.loads(policy))
        c = self.client(bob)
        self.assertEqual(c.get_object(Bucket=b, Key="shared/x")["Body"].read(), b"x")
        self.assertDenied(c.get_object, Bucket=b, Key="secret/y")
        self.assertDenied(c.put_object, Bucket=b, Key="shared/new", Body=b"n")
        self.assertDenied(c.delete_object, Bucket=b, Key="shared/x")
        self.assertEqual([o["Key"] for o in c.list_objects_v2(Bucket=b, Prefix="shared/")["Contents"]],
                         ["shared/x"])
        self.assertDenied(c.list_objects_v2, Bucket=b)
        self.assertDenied(c.list_objects_v2, Bucket=b, Prefix="secret/")
        # Another user named nowhere gets nothing.
        carol = self.client(self.make_user("carol"))
        self.assertDenied(carol.get_object, Bucket=b, Key="shared/x")
        # Gone with the policy.
        self.s3.delete_bucket_policy(Bucket=b)
        self.assertDenied(c.get_object, Bucket=b, Key="shared/x")
        self.assertS3Error(self.s3.get_bucket_policy, "NoSuchBucketPolicy", 404, Bucket=b)

    def test_anonymous_reads_only_what_a_policy_makes_public(self):
        b = unique_name("anon")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="public/p.txt", Body=b"hello world")
        self.s3.put_object(Bucket=b, Key="private/q.txt", Body=b"secret")
        status, body = raw_request(self.server, "GET", f"/{b}/public/p.txt")
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))
        self.assertS3Error(self.s3.get_bucket_policy_status, "NoSuchBucketPolicy", 404, Bucket=b)
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
             "Resource": f"arn:aws:s3:::{b}/public/*"}))
        self.assertTrue(self.s3.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"])
        # curl, no signature at all
        out = subprocess.run(["curl", "-s", "-o", "-", "-w", "\n%{http_code}",
                              f"{self.server.endpoint}/{b}/public/p.txt"],
                             capture_output=True, text=True, timeout=30)
        body, code = out.stdout.rsplit("\n", 1)
        self.assertEqual((code, body), ("200", "hello world"))
        status, body = raw_request(self.server, "GET", f"/{b}/private/q.txt")
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))
        status, body = raw_request(self.server, "PUT", f"/{b}/public/new.txt", body=b"x",
                                   headers={"Content-Length": "1"})
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))
        status, _ = raw_request(self.server, "GET", "/")
        self.assertEqual(status, 403)
        self.assertNotIn("new.txt", str(self.s3.list_objects_v2(Bucket=b)))

    def test_anonymous_form_upload_needs_a_public_write_policy(self):
        b = unique_name("drop")
        self.s3.create_bucket(Bucket=b)
        boundary = "strataboundary7"

        def form(key):
            parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="key"\r\n\r\n{key}\r\n',
                     f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.txt"\r\n'
                     "Content-Type: text/plain\r\n\r\nanonymous bytes\r\n", f"--{boundary}--\r\n"]
            body = "".join(parts).encode()
            return raw_request(self.server, "POST", f"/{b}", body=body, headers={
                "Content-Type": f"multipart/form-data; boundary={boundary}", "Content-Length": str(len(body))})
        status, body = form("drop/a.txt")
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Effect": "Allow", "Principal": "*", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{b}/drop/*"}))
        status, _ = form("drop/a.txt")
        self.assertEqual(status, 204)
        self.assertEqual(self.get_body(b, "drop/a.txt"), b"anonymous bytes")
        status, body = form("elsewhere/b.txt")
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))

    def test_deny_without_tls_binds_root_but_root_can_remove_the_policy(self):
        b = unique_name("tls")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="k", Body=b"v")
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Sid": "TlsOnly", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
             "Resource": [f"arn:aws:s3:::{b}", f"arn:aws:s3:::{b}/*"],
             "Condition": {"Bool": {"aws:SecureTransport": "false"}}}))
        # This listener is plain HTTP: even root is refused everything...
        self.assertDenied(self.s3.get_object, Bucket=b, Key="k")
        self.assertDenied(self.s3.put_object, Bucket=b, Key="k2", Body=b"x")
        self.assertDenied(self.s3.list_objects_v2, Bucket=b)
        # ...but the bucket policy calls: root cannot lock itself out.
        self.assertIn("TlsOnly", self.s3.get_bucket_policy(Bucket=b)["Policy"])
        self.s3.delete_bucket_policy(Bucket=b)
        self.assertEqual(self.s3.get_object(Bucket=b, Key="k")["Body"].read(), b"v")

    def test_source_ip_condition(self):
        b = unique_name("ip")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="k", Body=b"from loopback one")
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/*",
             "Condition": {"IpAddress": {"aws:SourceIp": "127.0.0.1/32"}}}))
        status, body = raw_request(self.server, "GET", f"/{b}/k", source="127.0.0.1")
        self.assertEqual((status, body), (200, b"from loopback one"))
        status, body = raw_request(self.server, "GET", f"/{b}/k", source="127.0.0.2")
        self.assertEqual((status, error_code(body)), (403, "AccessDenied"))
        # A NotIpAddress deny refuses a signed user from the other address too.
        u = self.make_user("ipuser", policy=policy_doc(
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"},
            {"Effect": "Deny", "Action": "*", "Resource": "*",
             "Condition": {"NotIpAddress": {"aws:SourceIp": ["127.0.0.1/32", "::1/128"]}}}))
        r = signed_request(self.server, "GET", f"/{b}/k", access_key=u["ak"], secret_key=u["sk"])
        self.assertEqual(r.status, 200)
        conn_src = http.client.HTTPConnection  # bind the signed request to 127.0.0.2
        orig = conn_src.__init__

        def bound(self_, *a, **kw):
            kw["source_address"] = ("127.0.0.2", 0)
            orig(self_, *a, **kw)
        http.client.HTTPConnection.__init__ = bound
        try:
            r = signed_request(self.server, "GET", f"/{b}/k", access_key=u["ak"], secret_key=u["sk"])
        finally:
            http.client.HTTPConnection.__init__ = orig
        self.assertEqual((r.status, error_code(r.body)), (403, "AccessDenied"))

    def test_tag_conditions(self):
        u = self.make_user("tags", policy=policy_doc(
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{self.bucket}/*",
             "Condition": {"StringEquals": {"s3:ExistingObjectTag/team": "ml"}}},
            {"Effect": "Allow", "Action": ["s3:PutObject", "s3:PutObjectTagging"],
             "Resource": f"arn:aws:s3:::{self.bucket}/tagged/*",
             "Condition": {"StringEquals": {"s3:RequestObjectTag/team": "ml"},
                           "ForAllValues:StringEquals": {"s3:RequestObjectTagKeys": ["team", "run"]}}}))
        c = self.client(u)
        self.s3.put_object(Bucket=self.bucket, Key="tagged/ml", Body=b"ml data", Tagging="team=ml")
        self.s3.put_object(Bucket=self.bucket, Key="tagged/web", Body=b"web data", Tagging="team=web")
        self.assertEqual(c.get_object(Bucket=self.bucket, Key="tagged/ml")["Body"].read(), b"ml data")
        self.assertDenied(c.get_object, Bucket=self.bucket, Key="tagged/web")
        c.put_object(Bucket=self.bucket, Key="tagged/new", Body=b"n", Tagging="team=ml&run=7")
        self.assertDenied(c.put_object, Bucket=self.bucket, Key="tagged/new2", Body=b"n", Tagging="team=web")
        self.assertDenied(c.put_object, Bucket=self.bucket, Key="tagged/new3", Body=b"n", Tagging="team=ml&owner=x")
        self.assertDenied(c.put_object, Bucket=self.bucket, Key="tagged/new4", Body=b"n")
        # PutObjectTagging: the new tags are the request's tags.
        c.put_object_tagging(Bucket=self.bucket, Key="tagged/new",
                             Tagging={"TagSet": [{"Key": "team", "Value": "ml"}]})
        self.assertDenied(c.put_object_tagging, Bucket=self.bucket, Key="tagged/new",
                          Tagging={"TagSet": [{"Key": "team", "Value": "web"}]})
        self.assertEqual(self.s3.get_object_tagging(Bucket=self.bucket, Key="tagged/new")["TagSet"],
                         [{"Key": "team", "Value": "ml"}])
        # Tags change: so does the answer.
        self.s3.put_object_tagging(Bucket=self.bucket, Key="tagged/web",
                                   Tagging={"TagSet": [{"Key": "team", "Value": "ml"}]})
        self.assertEqual(c.get_object(Bucket=self.bucket, Key="tagged/web")["Body"].read(), b"web data")

    def test_delete_objects_checks_each_key(self):
        b = unique_name("delobj")
        self.s3.create_bucket(Bucket=b)
        for k in ("tmp/1", "tmp/2", "keep/3"):
            self.s3.put_object(Bucket=b, Key=k, Body=b"x")
        u = self.make_user("deleter", policy=policy_doc(
            {"Effect": "Allow", "Action": "s3:DeleteObject", "Resource": f"arn:aws:s3:::{b}/tmp/*"}))
        out = self.client(u).delete_objects(Bucket=b, Delete={"Objects": [
            {"Key": "tmp/1"}, {"Key": "keep/3"}, {"Key": "tmp/2"}]})
        self.assertEqual(sorted(d["Key"] for d in out.get("Deleted", [])), ["tmp/1", "tmp/2"])
        self.assertEqual([(e["Key"], e["Code"]) for e in out["Errors"]], [("keep/3", "AccessDenied")])
        self.assertEqual([o["Key"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]], ["keep/3"])

    def test_copy_needs_read_on_the_source(self):
        u = self.make_user("copier", policy=policy_doc(
            {"Effect": "Allow", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{self.bucket}/copies/*"},
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{self.bucket}/shared/*"}))
        c = self.client(u)
        c.copy_object(Bucket=self.bucket, Key="copies/a", CopySource={"Bucket": self.bucket, "Key": "shared/a.txt"})
        self.assertDenied(c.copy_object, Bucket=self.bucket, Key="copies/c",
                          CopySource={"Bucket": self.bucket, "Key": "private/c.txt"})
        self.assertEqual(self.get_body(self.bucket, "copies/a"), b"shared/a.txt")

    def test_disabled_and_rotated_keys(self):
        u = self.make_user("rotate", policy=policy_doc(
            {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{self.bucket}/*"}))
        c = self.client(u, signature_version="s3v4")
        url = c.generate_presigned_url("get_object", Params={"Bucket": self.bucket, "Key": "shared/a.txt"},
                                       ExpiresIn=600)
        target = url[len(self.server.endpoint):]
        self.assertEqual(raw_request(self.server, "GET", target)[0], 200)
        # Rotation: a second key, clients move, the first is disabled then deleted.
        st, k2 = admin(self.server, "POST", "key-create", user=u["name"])
        self.assertEqual(st, 200)
        c2 = self.client({"ak": k2["access_key"], "sk": k2["secret_key"]})
        self.assertEqual(admin(self.server, "POST", "key-disable", id=u["ak"])[0], 200)
        status, body = raw_request(self.server, "GET", target)
        self.assertEqual((status, error_code(body)), (403, "InvalidAccessKeyId"))
        self.assertS3Error(c.get_object, "InvalidAccessKeyId", 403, Bucket=self.bucket, Key="shared/a.txt")
        self.assertEqual(c2.get_object(Bucket=self.bucket, Key="shared/a.txt")["Body"].read(), b"shared/a.txt")
        self.assertEqual(admin(self.server, "POST", "key-enable", id=u["ak"])[0], 200)
        self.assertEqual(raw_request(self.server, "GET", target)[0], 200)
        self.assertEqual(admin(self.server, "POST", "key-delete", id=u["ak"])[0], 200)
        self.assertEqual(raw_request(self.server, "GET", target)[0], 403)
        # A disabled user: every key stops.
        self.assertEqual(admin(self.server, "POST", "user-disable", name=u["name"])[0], 200)
        self.assertS3Error(c2.get_object, "InvalidAccessKeyId", 403, Bucket=self.bucket, Key="shared/a.txt")
        self.assertEqual(admin(self.server, "POST", "user-enable", name=u["name"])[0], 200)
        self.assertEqual(c2.get_object(Bucket=self.bucket, Key="shared/a.txt")["Body"].read(), b"shared/a.txt")

    def test_bypass_governance_is_a_permission(self):
        b = unique_name("gov")
        self.s3.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)
        put = self.s3.put_object(Bucket=b, Key="k", Body=b"locked", ObjectLockMode="GOVERNANCE",
                                 ObjectLockRetainUntilDate=time.time() + 3600)
        vid = put["VersionId"]
        base = [{"Effect": "Allow", "Action": ["s3:DeleteObjectVersion", "s3:PutObjectRetention"],
                 "Resource": f"arn:aws:s3:::{b}/*"}]
        plain = self.client(self.make_user("nobypass", policy=policy_doc(*base)))
        self.assertDenied(plain.delete_object, Bucket=b, Key="k", VersionId=vid, BypassGovernanceRetention=True)
        self.assertDenied(plain.delete_object, Bucket=b, Key="k", VersionId=vid)
        self.assertEqual(self.get_body(b, "k", VersionId=vid), b"locked")
        bypass = self.client(self.make_user("bypass", policy=policy_doc(*base, {
            "Effect": "Allow", "Action": "s3:BypassGovernanceRetention", "Resource": f"arn:aws:s3:::{b}/*"})))
        self.assertDenied(bypass.delete_object, Bucket=b, Key="k", VersionId=vid)  # no header: still locked
        bypass.delete_object(Bucket=b, Key="k", VersionId=vid, BypassGovernanceRetention=True)
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=b, Key="k", VersionId=vid)

    def test_retention_conditions_read_the_body(self):
        b = unique_name("lockc")
        self.s3.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)
        vid = self.s3.put_object(Bucket=b, Key="k", Body=b"x")["VersionId"]
        c = self.client(self.make_user("shortret", policy=policy_doc(
            {"Effect": "Allow", "Action": "s3:PutObjectRetention", "Resource": f"arn:aws:s3:::{b}/*",
             "Condition": {"NumericLessThanEquals": {"s3:object-lock-remaining-retention-days": "30"},
                           "StringEquals": {"s3:object-lock-mode": "GOVERNANCE"}}})))
        c.put_object_retention(Bucket=b, Key="k", VersionId=vid,
                               Retention={"Mode": "GOVERNANCE", "RetainUntilDate": time.time() + 10 * 86400})
        self.assertDenied(c.put_object_retention, Bucket=b, Key="k", VersionId=vid,
                          Retention={"Mode": "GOVERNANCE", "RetainUntilDate": time.time() + 60 * 86400})
        self.assertDenied(c.put_object_retention, Bucket=b, Key="k", VersionId=vid,
                          Retention={"Mode": "COMPLIANCE", "RetainUntilDate": time.time() + 20 * 86400})
        mode = self.s3.get_object_retention(Bucket=b, Key="k", VersionId=vid)["Retention"]["Mode"]
        self.assertEqual(mode, "GOVERNANCE")

    def test_lock_headers_need_retention_permission(self):
        b = unique_name("lockp")
        self.s3.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)
        c = self.client(self.make_user("putonly", policy=policy_doc(
            {"Effect": "Allow", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{b}/*"})))
        c.put_object(Bucket=b, Key="plain", Body=b"x")
        self.assertDenied(c.put_object, Bucket=b, Key="locked", Body=b"x", ObjectLockMode="GOVERNANCE",
                          ObjectLockRetainUntilDate=time.time() + 3600)
        self.assertDenied(c.put_object, Bucket=b, Key="held", Body=b"x", ObjectLockLegalHoldStatus="ON")
        self.assertDenied(c.put_object_retention, Bucket=b, Key="plain",
                          Retention={"Mode": "GOVERNANCE", "RetainUntilDate": time.time() + 3600})


# ==========================================================================
class BucketPolicyApiTest(IamCase):
    def test_malformed_policies_get_aws_errors(self):
        b = unique_name("bad")
        self.s3.create_bucket(Bucket=b)
        cases = [
            ("not json", "MalformedPolicy"),
            ("[1, 2]", "MalformedPolicy"),
            (json.dumps({"Statement": [{"Effect": "Allow", "Action": "s3:GetObject",
                                        "Resource": f"arn:aws:s3:::{b}/*"}]}), "MalformedPolicy"),  # no Principal
            (policy_doc({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                         "Resource": "arn:aws:s3:::some-other-bucket/*"}), "MalformedPolicy"),
            (policy_doc({"Effect": "Allow", "Principal": "*", "Action": "iam:CreateUser",
                         "Resource": f"arn:aws:s3:::{b}/*"}), "MalformedPolicy"),
            (policy_doc({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                         "Resource": f"arn:aws:s3:::{b}/*", "Condition": {"StringEqualz": {"s3:prefix": "x"}}}),
             "MalformedPolicy"),
            (policy_doc({"Effect": "Allow", "Principal": "*", "Actions": "s3:GetObject",
                         "Resource": f"arn:aws:s3:::{b}/*"}), "MalformedPolicy"),
        ]
        for text, code in cases:
            with self.subTest(text[:60]):
                resp = self.assertS3Error(self.s3.put_bucket_policy, code, 400, Bucket=b, Policy=text)
                self.assertTrue(resp["Error"]["Message"], resp)
        self.assertS3Error(self.s3.get_bucket_policy, "NoSuchBucketPolicy", 404, Bucket=b)
        self.assertS3Error(self.s3.put_bucket_policy, "NoSuchBucket", 404, Bucket=unique_name("missing"),
                           Policy=policy_doc({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                                              "Resource": "arn:aws:s3:::x/*"}))

    def test_policy_size_limit(self):
        b = unique_name("big")
        self.s3.create_bucket(Bucket=b)
        stmt = {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/*"}
        base = policy_doc(stmt)
        pad = 20 * 1024 - len(base) - len(', "Id": ""')
        at_limit = json.dumps({"Version": "2012-10-17", "Statement": [stmt], "Id": "x" * pad})
        self.assertEqual(len(at_limit), 20 * 1024)
        self.s3.put_bucket_policy(Bucket=b, Policy=at_limit)
        over = at_limit[:-2] + 'x"}'
        self.assertEqual(len(over), 20 * 1024 + 1)
        self.assertS3Error(self.s3.put_bucket_policy, "PolicyTooLarge", 400, Bucket=b, Policy=over)
        self.assertEqual(self.s3.get_bucket_policy(Bucket=b)["Policy"], at_limit)

    def test_policy_status_public_and_not(self):
        b = unique_name("status")
        self.s3.create_bucket(Bucket=b)
        u = self.make_user("status")
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Effect": "Allow", "Principal": {"AWS": u["arn"]}, "Action": "s3:GetObject",
             "Resource": f"arn:aws:s3:::{b}/*"}))
        self.assertFalse(self.s3.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"])
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/*",
             "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}}))
        self.assertFalse(self.s3.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"])

    def test_aws_cli_bucket_policy_round_trip_and_user_profile(self):
        b = unique_name("cli")
        self.s3.create_bucket(Bucket=b)
        u = self.make_user("cliuser")
        policy = policy_doc({"Effect": "Allow", "Principal": {"AWS": u["arn"]},
                             "Action": ["s3:PutObject", "s3:GetObject"], "Resource": f"arn:aws:s3:::{b}/*"})
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(policy)
        self.server.aws(self.home, "s3api", "put-bucket-policy", "--bucket", b, "--policy", "file://" + f.name)
        out = self.server.aws(self.home, "s3api", "get-bucket-policy", "--bucket", b)
        self.assertEqual(json.loads(json.loads(out.stdout)["Policy"]), json.loads(policy))
        env = self.server.cli_env(self.home)
        env.update(AWS_ACCESS_KEY_ID=u["ak"], AWS_SECRET_ACCESS_KEY=u["sk"])
        src = os.path.join(self.home, "upload.bin")
        with open(src, "wb") as fh:
            fh.write(os.urandom(100_000))

        def aws(*args):
            return subprocess.run(["aws", "--endpoint-url", self.server.endpoint, *args], env=env,
                                  capture_output=True, text=True, timeout=120)
        r = aws("s3", "cp", src, f"s3://{b}/up.bin")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = aws("s3", "ls", f"s3://{b}/")  # ListBucket not granted
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("AccessDenied", r.stderr)
        os.unlink(f.name)


# ==========================================================================
class AclAndPublicAccessTest(IamCase):
    """New buckets are BucketOwnerEnforced (AWS's default): ACLs are read as
    the owner's FULL_CONTROL and refused when they would grant more (the
    ACL-enabled settings: test_acl.py); the public access block is stored
    and enforced."""

    def test_acls_are_disabled_as_aws_does(self):
        b = unique_name("acl")
        self.s3.create_bucket(Bucket=b)
        self.assertS3Error(self.s3.put_object, "AccessControlListNotSupported", 400, Bucket=b, Key="k",
                           Body=b"x", ACL="public-read")
        self.assertS3Error(self.s3.put_object, "AccessControlListNotSupported", 400, Bucket=b, Key="k",
                           Body=b"x", GrantRead='uri="http://acs.amazonaws.com/groups/global/AllUsers"')
        self.assertS3Error(self.s3.put_object, "InvalidArgument", 400, Bucket=b, Key="k", Body=b"x",
                           ACL="not-a-canned-acl")
        self.s3.put_object(Bucket=b, Key="k", Body=b"x", ACL="bucket-owner-full-control")
        self.s3.put_object(Bucket=b, Key="k2", Body=b"x", ACL="private")
        self.assertS3Error(self.s3.create_bucket, "InvalidBucketAclWithObjectOwnership", 400,
                           Bucket=unique_name("acl"), ACL="public-read")
        root_id = self.s3.list_buckets()["Owner"]["ID"]
        for acl in (self.s3.get_bucket_acl(Bucket=b), self.s3.get_object_acl(Bucket=b, Key="k")):
            self.assertEqual(acl["Owner"]["ID"], root_id)
            self.assertEqual([(g["Grantee"]["ID"], g["Grantee"]["Type"], g["Permission"]) for g in acl["Grants"]],
                             [(root_id, "CanonicalUser", "FULL_CONTROL")])
        self.assertS3Error(self.s3.put_object_acl, "AccessControlListNotSupported", 400, Bucket=b, Key="k",
                           ACL="public-read")
        self.s3.put_object_acl(Bucket=b, Key="k", AccessControlPolicy={
            "Owner": {"ID": root_id},
            "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": root_id}, "Permission": "FULL_CONTROL"}]})
        self.assertS3Error(self.s3.put_bucket_acl, "AccessControlListNotSupported", 400, Bucket=b,
                           AccessControlPolicy={"Owner": {"ID": root_id}, "Grants": [
                               {"Grantee": {"Type": "Group", "URI": "http://acs.amazonaws.com/groups/global/AllUsers"},
                                "Permission": "READ"}]})
        r = signed_request(self.server, "PUT", f"/{b}", query="acl", body=b"<AccessControlPolicy><oops")
        self.assertEqual((r.status, parse_xml(r.body).findtext("Code")), (400, "MalformedACLError"))
        self.assertS3Error(self.s3.get_object_acl, "NoSuchKey", 404, Bucket=b, Key="missing")
        # Ownership controls: the one supported setting, reported.
        oc = self.s3.get_bucket_ownership_controls(Bucket=b)["OwnershipControls"]["Rules"]
        self.assertEqual(oc, [{"ObjectOwnership": "BucketOwnerEnforced"}])
        self.s3.put_bucket_ownership_controls(Bucket=b, OwnershipControls={
            "Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
        # ACL-enabled settings are test_acl.py's; switching there and back works.
        self.s3.put_bucket_ownership_controls(Bucket=b, OwnershipControls={
            "Rules": [{"ObjectOwnership": "ObjectWriter"}]})
        oc = self.s3.get_bucket_ownership_controls(Bucket=b)["OwnershipControls"]["Rules"]
        self.assertEqual(oc, [{"ObjectOwnership": "ObjectWriter"}])
        self.s3.put_bucket_ownership_controls(Bucket=b, OwnershipControls={
            "Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
        # A user's object is the bucket owner's too.
        u = self.make_user("aclw", policy=policy_doc(
            {"Effect": "Allow", "Action": ["s3:PutObject", "s3:GetObjectAcl"], "Resource": f"arn:aws:s3:::{b}/*"}))
        c = self.client(u)
        c.put_object(Bucket=b, Key="by-user", Body=b"x", ACL="bucket-owner-full-control")
        self.assertEqual(c.get_object_acl(Bucket=b, Key="by-user")["Owner"]["ID"], root_id)

    def test_public_access_block(self):
        b = unique_name("pab")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="public/p", Body=b"public bytes")
        self.assertS3Error(self.s3.get_public_access_block, "NoSuchPublicAccessBlockConfiguration", 404, Bucket=b)
        public = policy_doc({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                             "Resource": f"arn:aws:s3:::{b}/public/*"})
        self.s3.put_bucket_policy(Bucket=b, Policy=public)
        out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                              f"{self.server.endpoint}/{b}/public/p"], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.stdout, "200")
        self.s3.put_public_access_block(Bucket=b, PublicAccessBlockConfiguration={
            "BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": False,
            "RestrictPublicBuckets": True})
        got = self.s3.get_public_access_block(Bucket=b)["PublicAccessBlockConfiguration"]
        self.assertEqual(got, {"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": False,
                               "RestrictPublicBuckets": True})
        out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                              f"{self.server.endpoint}/{b}/public/p"], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.stdout, "403")  # blocked now
        self.assertEqual(self.get_body(b, "public/p"), b"public bytes")  # root still reads
        # BlockPublicPolicy: a public policy cannot be put any more; a non-public one can.
        self.s3.put_public_access_block(Bucket=b, PublicAccessBlockConfiguration={"BlockPublicPolicy": True})
        self.assertDenied(self.s3.put_bucket_policy, Bucket=b, Policy=public)
        u = self.make_user("pabu")
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
            {"Effect": "Allow", "Principal": {"AWS": u["arn"]}, "Action": "s3:GetObject",
             "Resource": f"arn:aws:s3:::{b}/*"}))
        self.assertEqual(self.client(u).get_object(Bucket=b, Key="public/p")["Body"].read(), b"public bytes")
        self.s3.delete_public_access_block(Bucket=b)
        self.assertS3Error(self.s3.get_public_access_block, "NoSuchPublicAccessBlockConfiguration", 404, Bucket=b)
        self.s3.put_bucket_policy(Bucket=b, Policy=public)
        status, _ = raw_request(self.server, "GET", f"/{b}/public/p")
        self.assertEqual(status, 200)


# ==========================================================================
class PersistenceTest(unittest.TestCase):
    def test_identities_and_policies_survive_a_restart(self):
        server = Server().start()
        try:
            case = IamCase()
            case.server = server
            s3 = server.boto3_client()
            b = unique_name("persist")
            s3.create_bucket(Bucket=b)
            s3.put_object(Bucket=b, Key="k", Body=b"durable")
            u = IamCase.make_user(case, "persist", policy=policy_doc(
                {"Effect": "Allow", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/*"}))
            s3.put_bucket_policy(Bucket=b, Policy=policy_doc(
                {"Effect": "Deny", "Principal": {"AWS": u["arn"]}, "Action": "s3:GetObject",
                 "Resource": f"arn:aws:s3:::{b}/denied/*"}))
            server.kill()  # no clean shutdown: what was acknowledged must be there
            server.start()
            c = server.boto3_client(access_key=u["ak"], secret_key=u["sk"])
            self.addCleanup(c.close)
            self.assertEqual(c.get_object(Bucket=b, Key="k")["Body"].read(), b"durable")
            s3.close()
            s3 = server.boto3_client()
            self.addCleanup(s3.close)
            s3.put_object(Bucket=b, Key="denied/x", Body=b"x")
            with self.assertRaises(ClientError) as cm:
                c.get_object(Bucket=b, Key="denied/x")
            self.assertEqual(cm.exception.response["Error"]["Code"], "AccessDenied")
            st, info = admin(server, "GET", "user", name=u["name"])
            self.assertEqual((st, info["canonical_id"]), (200, u["canonical_id"]))
        finally:
            server.cleanup()

    def test_wrong_iam_key_refuses_to_start(self):
        server = Server().start()
        try:
            case = IamCase()
            case.server = server
            IamCase.make_user(case, "sealed")
            server.stop()
            with open(os.path.join(server.data_dir, "iam.key"), "w") as f:
                f.write("00" * 32 + "\n")
            with self.assertRaises(RuntimeError) as cm:
                server.start(timeout=10)
            self.assertIn("IAM key", str(cm.exception))
        finally:
            server.cleanup()


if __name__ == "__main__":
    unittest.main()

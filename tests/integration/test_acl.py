"""ACLs on buckets whose object ownership enables them (issue 12):
CreateBucket with x-amz-object-ownership, Put/Get/DeleteBucketOwnershipControls,
canned ACLs, grant headers and AccessControlPolicy documents on buckets and
objects (PUT, COPY, multipart, PutObjectAcl / PutBucketAcl) with boto3 and aws
cli, enforced: a public-read object is fetched by curl with no signature, a
grant to one user lets that user (and nobody else) read, a bucket WRITE grant
lets a user upload (and own what it wrote under ObjectWriter), BucketOwner-
Preferred hands objects written with bucket-owner-full-control to the bucket
owner; IgnorePublicAcls / BlockPublicAcls; explicit Deny beats a grant; the
AWS errors for bad ACLs; everything survives a restart.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_acl.py -v
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import ACCESS_KEY, SECRET_KEY, parse_xml, signed_request, unique_name  # noqa: E402
from test_iam import IamCase, policy_doc, raw_request  # noqa: E402

ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
AUTH_USERS = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"


def grants_of(acl):
    out = []
    for g in acl["Grants"]:
        who = g["Grantee"].get("ID") or g["Grantee"].get("URI")
        out.append((g["Grantee"]["Type"], who, g["Permission"]))
    return sorted(out)


class AclTest(IamCase):
    def setUp(self):
        super().setUp()
        self.root_id = self.s3.list_buckets()["Owner"]["ID"]

    def bucket(self, ownership="ObjectWriter", **kw):
        b = unique_name("acl")
        self.s3.create_bucket(Bucket=b, ObjectOwnership=ownership, **kw)
        return b

    def anonymous_get(self, b, key):
        return raw_request(self.server, "GET", f"/{b}/{key}")[0]

    def test_ownership_controls_round_trip(self):
        b = self.bucket("BucketOwnerPreferred")
        oc = self.s3.get_bucket_ownership_controls(Bucket=b)["OwnershipControls"]["Rules"]
        self.assertEqual(oc, [{"ObjectOwnership": "BucketOwnerPreferred"}])
        self.s3.delete_bucket_ownership_controls(Bucket=b)
        self.assertS3Error(self.s3.get_bucket_ownership_controls, "OwnershipControlsNotFoundError",
                           404, Bucket=b)
        # No setting: ACLs stay on (as ObjectWriter).
        self.s3.put_object(Bucket=b, Key="pub", Body=b"p", ACL="public-read")
        self.assertEqual(self.anonymous_get(b, "pub"), 200)
        # Enforcing is refused while the bucket ACL grants others something.
        self.s3.put_bucket_acl(Bucket=b, ACL="public-read")
        self.assertS3Error(self.s3.put_bucket_ownership_controls,
                           "InvalidBucketAclWithObjectOwnership", 400, Bucket=b,
                           OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
        self.s3.put_bucket_acl(Bucket=b, ACL="private")
        self.s3.put_bucket_ownership_controls(
            Bucket=b, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
        # Enforced: object ACLs stop applying (the stored one is not consulted).
        self.assertEqual(self.anonymous_get(b, "pub"), 403)
        acl = self.s3.get_object_acl(Bucket=b, Key="pub")
        self.assertEqual(grants_of(acl), [("CanonicalUser", self.root_id, "FULL_CONTROL")])
        r = signed_request(self.server, "PUT", "/" + unique_name("acl"),
                           headers={"x-amz-object-ownership": "Everyone"})
        self.assertEqual((r.status, parse_xml(r.body).findtext("Code")), (400, "InvalidArgument"))

    def test_public_read_object_then_ignore_and_block_public_acls(self):
        b = self.bucket()
        self.s3.put_object(Bucket=b, Key="open", Body=b"for everyone", ACL="public-read")
        self.s3.put_object(Bucket=b, Key="closed", Body=b"private")
        out = subprocess.run(["curl", "-s", f"http://127.0.0.1:{self.server.port}/{b}/open"],
                             capture_output=True, check=True)
        self.assertEqual(out.stdout, b"for everyone")
        self.assertEqual(self.anonymous_get(b, "closed"), 403)
        acl = self.s3.get_object_acl(Bucket=b, Key="open")
        self.assertEqual(acl["Owner"]["ID"], self.root_id)
        self.assertEqual(grants_of(acl), sorted([("CanonicalUser", self.root_id, "FULL_CONTROL"),
                                                 ("Group", ALL_USERS, "READ")]))
        # Anonymous listing needs a bucket READ grant.
        self.assertEqual(raw_request(self.server, "GET", f"/{b}")[0], 403)
        self.s3.put_bucket_acl(Bucket=b, ACL="public-read")
        self.assertEqual(raw_request(self.server, "GET", f"/{b}")[0], 200)
        # IgnorePublicAcls: the grants stay, and count for nothing.
        self.s3.put_public_access_block(Bucket=b, PublicAccessBlockConfiguration={
            "IgnorePublicAcls": True, "BlockPublicAcls": False, "BlockPublicPolicy": False,
            "RestrictPublicBuckets": False})
        self.assertEqual(self.anonymous_get(b, "open"), 403)
        self.assertEqual(raw_request(self.server, "GET", f"/{b}")[0], 403)
        self.assertIn(("Group", ALL_USERS, "READ"), grants_of(self.s3.get_object_acl(Bucket=b, Key="open")))
        # BlockPublicAcls: setting a public ACL is refused; private ones pass.
        self.s3.put_public_access_block(Bucket=b, PublicAccessBlockConfiguration={
            "IgnorePublicAcls": False, "BlockPublicAcls": True, "BlockPublicPolicy": False,
            "RestrictPublicBuckets": False})
        self.assertEqual(self.anonymous_get(b, "open"), 200)  # existing grants apply again
        self.assertDenied(self.s3.put_object_acl, Bucket=b, Key="closed", ACL="public-read")
        self.assertDenied(self.s3.put_object, Bucket=b, Key="new", Body=b"x", ACL="authenticated-read")
        self.assertDenied(self.s3.put_bucket_acl, Bucket=b, GrantRead=f'uri="{ALL_USERS}"')
        self.s3.put_object(Bucket=b, Key="new", Body=b"x", ACL="private")
        self.s3.delete_public_access_block(Bucket=b)
        # The ACL of a version, set and read through aws cli.
        env = dict(os.environ, AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY,
                   AWS_DEFAULT_REGION="us-east-1", AWS_CONFIG_FILE="/dev/null",
                   AWS_SHARED_CREDENTIALS_FILE="/dev/null")
        base = ["aws", "--endpoint-url", f"http://127.0.0.1:{self.server.port}", "s3api"]
        subprocess.run(base + ["put-object-acl", "--bucket", b, "--key", "closed", "--acl",
                               "public-read"], env=env, check=True, capture_output=True)
        got = subprocess.run(base + ["get-object-acl", "--bucket", b, "--key", "closed"], env=env,
                             check=True, capture_output=True, text=True)
        self.assertIn(("Group", ALL_USERS, "READ"), grants_of(json.loads(got.stdout)))
        self.assertEqual(self.anonymous_get(b, "closed"), 200)

    def test_user_grants_read_write_and_ownership(self):
        b = self.bucket()
        reader = self.make_user("reader")  # no policy at all: only ACLs give it anything
        writer = self.make_user("writer")
        stranger = self.make_user("stranger")
        r, w, x = self.client(reader), self.client(writer), self.client(stranger)
        self.s3.put_object(Bucket=b, Key="shared", Body=b"shared bytes",
                           GrantRead=f'id="{reader["canonical_id"]}"')
        self.assertEqual(r.get_object(Bucket=b, Key="shared")["Body"].read(), b"shared bytes")
        self.assertDenied(x.get_object, Bucket=b, Key="shared")
        self.assertDenied(r.get_object_acl, Bucket=b, Key="shared")  # READ is not READ_ACP
        self.assertDenied(r.put_object, Bucket=b, Key="nope", Body=b"x")
        # A bucket WRITE grant: the writer may upload; under ObjectWriter it owns
        # what it wrote, and the bucket owner (root here) sees the owner.
        self.s3.put_bucket_acl(Bucket=b, AccessControlPolicy={
            "Owner": {"ID": self.root_id},
            "Grants": [
                {"Grantee": {"Type": "CanonicalUser", "ID": self.root_id}, "Permission": "FULL_CONTROL"},
                {"Grantee": {"Type": "CanonicalUser", "ID": writer["canonical_id"]}, "Permission": "WRITE"},
                {"Grantee": {"Type": "CanonicalUser", "ID": reader["canonical_id"]}, "Permission": "READ"}]})
        self.assertEqual(grants_of(self.s3.get_bucket_acl(Bucket=b)), sorted([
            ("CanonicalUser", self.root_id, "FULL_CONTROL"),
            ("CanonicalUser", writer["canonical_id"], "WRITE"),
            ("CanonicalUser", reader["canonical_id"], "READ")]))
        w.put_object(Bucket=b, Key="by-writer", Body=b"mine")
        acl = w.get_object_acl(Bucket=b, Key="by-writer")  # the owner may read its ACL
        self.assertEqual(acl["Owner"]["ID"], writer["canonical_id"])
        self.assertEqual(grants_of(acl), [("CanonicalUser", writer["canonical_id"], "FULL_CONTROL")])
        self.assertEqual(w.get_object(Bucket=b, Key="by-writer")["Body"].read(), b"mine")
        # The reader may list (bucket READ) and sees the writer as the owner.
        listed = r.list_objects_v2(Bucket=b, FetchOwner=True)["Contents"]
        owners = {o["Key"]: o["Owner"]["ID"] for o in listed}
        self.assertEqual(owners["by-writer"], writer["canonical_id"])
        self.assertEqual(owners["shared"], self.root_id)
        self.assertDenied(r.get_object, Bucket=b, Key="by-writer")  # no grant on that object
        self.assertDenied(x.list_objects_v2, Bucket=b)
        # The writer shares its object by PutObjectAcl (it holds WRITE_ACP as owner).
        w.put_object_acl(Bucket=b, Key="by-writer", GrantRead=f'id="{reader["canonical_id"]}"')
        self.assertEqual(r.get_object(Bucket=b, Key="by-writer")["Body"].read(), b"mine")
        # Multipart and copy carry the request's ACL.
        up = w.create_multipart_upload(Bucket=b, Key="mp", ACL="authenticated-read")
        part = w.upload_part(Bucket=b, Key="mp", UploadId=up["UploadId"], PartNumber=1, Body=b"m" * 100)
        w.complete_multipart_upload(Bucket=b, Key="mp", UploadId=up["UploadId"], MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
        self.assertEqual(x.get_object(Bucket=b, Key="mp")["Body"].read(), b"m" * 100)
        self.assertEqual(raw_request(self.server, "GET", f"/{b}/mp")[0], 403)  # not anonymous
        self.s3.copy_object(Bucket=b, Key="copy", CopySource={"Bucket": b, "Key": "shared"})
        self.assertDenied(r.get_object, Bucket=b, Key="copy")  # a copy does not keep the ACL
        # An explicit Deny in the bucket policy beats any grant.
        self.s3.put_bucket_policy(Bucket=b, Policy=policy_doc({
            "Effect": "Deny", "Principal": {"AWS": reader["arn"]}, "Action": "s3:GetObject",
            "Resource": f"arn:aws:s3:::{b}/shared"}))
        self.assertDenied(r.get_object, Bucket=b, Key="shared")
        self.assertEqual(r.get_object(Bucket=b, Key="by-writer")["Body"].read(), b"mine")
        self.s3.delete_bucket_policy(Bucket=b)
        # All of it survives a restart.
        self.server.stop()
        self.server.start()
        r = self.client(reader)
        self.assertEqual(r.get_object(Bucket=b, Key="shared")["Body"].read(), b"shared bytes")
        self.assertEqual(self.s3_after_restart().get_object_acl(Bucket=b, Key="by-writer")["Owner"]["ID"],
                         writer["canonical_id"])

    def s3_after_restart(self):
        c = self.server.boto3_client()
        self.addCleanup(c.close)
        return c

    def test_s3cmd_and_rclone_set_public_acls(self):
        # s3cmd setacl reads the ACL document, edits it and puts it back (the
        # AccessControlPolicy path); rclone uploads with a canned ACL header.
        b = self.bucket()
        self.s3.put_object(Bucket=b, Key="by-s3cmd", Body=b"s3cmd bytes")
        self.assertEqual(self.anonymous_get(b, "by-s3cmd"), 403)
        self.server.s3cmd(self.home, "setacl", f"s3://{b}/by-s3cmd", "--acl-public")
        self.assertEqual(self.anonymous_get(b, "by-s3cmd"), 200)
        self.assertIn(("Group", ALL_USERS, "READ"),
                      grants_of(self.s3.get_object_acl(Bucket=b, Key="by-s3cmd")))
        self.server.s3cmd(self.home, "setacl", f"s3://{b}/by-s3cmd", "--acl-private")
        self.assertEqual(self.anonymous_get(b, "by-s3cmd"), 403)
        src = os.path.join(self.home, "rclone-src")
        os.makedirs(src, exist_ok=True)
        with open(os.path.join(src, "by-rclone"), "wb") as f:
            f.write(b"rclone bytes")
        self.server.rclone(self.home, "copy", "--s3-acl", "public-read", src, f"strata:{b}")
        self.assertEqual(self.anonymous_get(b, "by-rclone"), 200)

    def test_bucket_owner_preferred(self):
        b = self.bucket("BucketOwnerPreferred")
        writer = self.make_user("bop")
        self.s3.put_bucket_acl(Bucket=b, GrantWrite=f'id="{writer["canonical_id"]}"',
                               GrantFullControl=f'id="{self.root_id}"')
        w = self.client(writer)
        w.put_object(Bucket=b, Key="handed-over", Body=b"x", ACL="bucket-owner-full-control")
        w.put_object(Bucket=b, Key="kept", Body=b"x")
        self.assertEqual(self.s3.get_object_acl(Bucket=b, Key="handed-over")["Owner"]["ID"], self.root_id)
        self.assertEqual(w.get_object_acl(Bucket=b, Key="kept")["Owner"]["ID"], writer["canonical_id"])
        # Root is allowed everything by no grant at all.
        self.assertEqual(self.s3.get_object(Bucket=b, Key="kept")["Body"].read(), b"x")

    def test_bad_acls_get_the_aws_errors(self):
        b = self.bucket()
        self.s3.put_object(Bucket=b, Key="k", Body=b"x")
        self.assertS3Error(self.s3.put_object, "InvalidArgument", 400, Bucket=b, Key="k2", Body=b"x",
                           GrantRead='id="' + "0" * 64 + '"')  # nobody has that id
        self.assertS3Error(self.s3.put_object, "UnresolvableGrantByEmailAddress", 400, Bucket=b,
                           Key="k2", Body=b"x", GrantRead='emailAddress="someone@example.com"')
        self.assertS3Error(self.s3.put_object, "InvalidArgument", 400, Bucket=b, Key="k2", Body=b"x",
                           GrantRead='uri="http://acs.amazonaws.com/groups/global/Everyone"')
        r = signed_request(self.server, "PUT", f"/{b}/k2", body=b"x",
                           headers={"x-amz-acl": "public-read", "x-amz-grant-read": f'uri="{ALL_USERS}"'})
        self.assertEqual((r.status, parse_xml(r.body).findtext("Code")), (400, "InvalidRequest"))
        r = signed_request(self.server, "PUT", f"/{b}/k", query="acl", body=b"<AccessControlPolicy><oops")
        self.assertEqual((r.status, parse_xml(r.body).findtext("Code")), (400, "MalformedACLError"))
        other = self.make_user("notowner")
        self.assertS3Error(self.s3.put_object_acl, "AccessDenied", 403, Bucket=b, Key="k",
                           AccessControlPolicy={"Owner": {"ID": other["canonical_id"]}, "Grants": []})
        self.assertS3Error(self.s3.put_object_acl, "MissingSecurityHeader", 400, Bucket=b, Key="k")
        self.assertS3Error(self.s3.get_object_acl, "NoSuchKey", 404, Bucket=b, Key="missing")
        # Nothing changed by the refusals.
        self.assertEqual(grants_of(self.s3.get_object_acl(Bucket=b, Key="k")),
                         [("CanonicalUser", self.root_id, "FULL_CONTROL")])
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=b, Key="k2")


if __name__ == "__main__":
    unittest.main()

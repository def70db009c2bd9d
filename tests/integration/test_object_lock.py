"""S3 Object Lock (issue 11): buckets created with Object Lock, Put/Get
ObjectLockConfiguration and its validation, lock headers on PUT / CopyObject /
CreateMultipartUpload (and the Content-MD5 / checksum they require), the
bucket's default retention, Put/GetObjectRetention and Put/GetObjectLegalHold
on any version, and the matrix: COMPLIANCE / GOVERNANCE / legal hold x every
delete and overwrite path (DELETE with and without versionId, DeleteObjects,
CopyObject, multipart, PutObjectRetention shorten / extend / remove / switch,
with and without x-amz-bypass-governance-retention) with AWS's error codes;
a short retention passing its date releases the version; a "backup
application" run against an attacker holding the root keys; aws s3api.

The cases of identities other than root (the bypass permission, retention
rights) are in test_iam.py.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_object_lock.py -v
"""
import datetime
import json
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from botocore.exceptions import ClientError  # noqa: E402

import checksums as ck  # noqa: E402
from harness import parse_xml, unique_name  # noqa: E402
from s3util import PART, payload  # noqa: E402
from versioning_util import (VersioningCase, content_md5, iso, list_versions_page,  # noqa: E402
                             md5_hex, utc_now, whole_seconds_from_now, ISO8601)

DAY = datetime.timedelta(days=1)
LOCK_XML = ('<ObjectLockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            '{}</ObjectLockConfiguration>')


def rule(mode, days=None, years=None):
    d = {"Mode": mode}
    if days is not None:
        d["Days"] = days
    if years is not None:
        d["Years"] = years
    return {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": d}}


class LockCase(VersioningCase):
    def lock_bucket(self, tag="lk", default=None):
        b = self.bucket_name(tag)
        self.s3.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)
        if default is not None:
            self.s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=default)
        return b

    def put_locked(self, bucket, key, body=b"locked", mode=None, until=None, hold=None, **kw):
        if mode is not None:
            kw["ObjectLockMode"] = mode
        if until is not None:
            kw["ObjectLockRetainUntilDate"] = until
        if hold is not None:
            kw["ObjectLockLegalHoldStatus"] = hold
        r = self.s3.put_object(Bucket=bucket, Key=key, Body=body, **kw)
        self.assertValidVersionId(r["VersionId"])
        return r["VersionId"]

    def retention(self, bucket, key, vid=None):
        """(mode, retain-until as a unix time) or None (404 NoSuchObjectLockConfiguration)."""
        kw = {"VersionId": vid} if vid else {}
        try:
            r = self.s3.get_object_retention(Bucket=bucket, Key=key, **kw)
        except ClientError as e:
            self.assertEqual((e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]),
                             ("NoSuchObjectLockConfiguration", 404), e.response)
            return None
        ret = r["Retention"]
        if "Mode" not in ret and "RetainUntilDate" not in ret:
            return None
        return ret.get("Mode"), ret["RetainUntilDate"].timestamp() if "RetainUntilDate" in ret else None

    def legal_hold(self, bucket, key, vid=None):
        kw = {"VersionId": vid} if vid else {}
        try:
            return self.s3.get_object_legal_hold(Bucket=bucket, Key=key, **kw)["LegalHold"]["Status"]
        except ClientError as e:
            self.assertEqual((e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]),
                             ("NoSuchObjectLockConfiguration", 404), e.response)
            return None

    def set_retention(self, bucket, key, vid, mode, until, bypass=False):
        kw = {"BypassGovernanceRetention": True} if bypass else {}
        ret = {} if mode is None else {"Mode": mode, "RetainUntilDate": until}
        return self.s3.put_object_retention(Bucket=bucket, Key=key, VersionId=vid, Retention=ret, **kw)

    def assertDenied(self, fn, *args, **kwargs):
        return self.assertS3Error(fn, "AccessDenied", 403, *args, **kwargs)

    def assertVersionIntact(self, bucket, key, vid, body):
        r = self.fc.get(bucket, key, version_id=vid)
        self.assertEqual((r.status, r.body), (200, body), f"{key}@{vid}: {r}")

    def delete_version(self, bucket, key, vid, bypass=False):
        headers = {"x-amz-bypass-governance-retention": "true"} if bypass else None
        return self.fc.delete(bucket, key, version_id=vid, headers=headers)


# ==========================================================================
class ObjectLockConfigTest(LockCase):
    def put_config_raw(self, bucket, inner):
        body = LOCK_XML.format(inner).encode()
        return self.fc.request("PUT", f"/{bucket}", query="object-lock", body=body,
                               headers={"Content-MD5": content_md5(body)})

    def test_create_bucket_with_object_lock(self):
        b = self.lock_bucket()
        self.assertEqual(self.s3.get_bucket_versioning(Bucket=b).get("Status"), "Enabled")
        c = self.s3.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"]
        self.assertEqual(c, {"ObjectLockEnabled": "Enabled"})
        self.assertS3Error(self.s3.put_bucket_versioning, "InvalidBucketState", 409, Bucket=b,
                           VersioningConfiguration={"Status": "Suspended"})
        self.assertEqual(self.s3.get_bucket_versioning(Bucket=b).get("Status"), "Enabled")
        self.set_versioning(b, "Enabled")  # re-enabling is harmless
        # Raw: the header boto3 sends.
        b2 = self.bucket_name("lkraw")
        r = self.fc.request("PUT", f"/{b2}", headers={"x-amz-bucket-object-lock-enabled": "true"})
        self.assertEqual(r.status, 200, r)
        r = self.fc.request("GET", f"/{b2}", query="object-lock")
        self.assertEqual(r.status, 200, r)
        root = parse_xml(r.body)
        self.assertEqual((root.tag, root.findtext("ObjectLockEnabled")), ("ObjectLockConfiguration", "Enabled"))
        self.assertIsNone(root.find("Rule"))

    def test_no_lock_configuration_is_404(self):
        plain = self.make_bucket("nolk")
        versioned = self.versioned_bucket("nolkv")
        for b in (plain, versioned):
            self.assertS3Error(self.s3.get_object_lock_configuration, "ObjectLockConfigurationNotFoundError", 404,
                               Bucket=b)

    def test_enable_on_existing_bucket_requires_versioning(self):
        b = self.make_bucket("lkex")
        self.assertS3Error(self.s3.put_object_lock_configuration, "InvalidBucketState", 409, Bucket=b,
                           ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})
        self.set_versioning(b, "Suspended")
        self.assertS3Error(self.s3.put_object_lock_configuration, "InvalidBucketState", 409, Bucket=b,
                           ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})
        self.assertS3Error(self.s3.get_object_lock_configuration, "ObjectLockConfigurationNotFoundError", 404,
                           Bucket=b)
        self.set_versioning(b, "Enabled")
        self.s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=rule("GOVERNANCE", days=2))
        c = self.s3.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"]
        self.assertEqual(c, rule("GOVERNANCE", days=2))
        self.assertS3Error(self.s3.put_bucket_versioning, "InvalidBucketState", 409, Bucket=b,
                           VersioningConfiguration={"Status": "Suspended"})

    def test_default_retention_round_trip(self):
        b = self.lock_bucket("lkdef")
        for cfg in (rule("GOVERNANCE", days=1), rule("COMPLIANCE", years=1), rule("GOVERNANCE", days=36500)):
            with self.subTest(cfg=cfg):
                self.s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=cfg)
                self.assertEqual(self.s3.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"], cfg)
        # Without a Rule: the default retention is gone, Object Lock stays.
        self.s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})
        self.assertEqual(self.s3.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"],
                         {"ObjectLockEnabled": "Enabled"})
        vid = self.put_locked(b, "no-default")
        self.assertIsNone(self.retention(b, "no-default", vid))

    def test_configuration_validation(self):
        b = self.lock_bucket("lkval")
        self.s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=rule("GOVERNANCE", days=3))
        enabled = "<ObjectLockEnabled>Enabled</ObjectLockEnabled>"

        def dr(inner):
            return enabled + f"<Rule><DefaultRetention>{inner}</DefaultRetention></Rule>"

        cases = [
            ("ObjectLockEnabled Disabled", "<ObjectLockEnabled>Disabled</ObjectLockEnabled>", "MalformedXML"),
            ("ObjectLockEnabled lower case", "<ObjectLockEnabled>enabled</ObjectLockEnabled>", "MalformedXML"),
            ("bad mode", dr("<Mode>FOREVER</Mode><Days>1</Days>"), "MalformedXML"),
            ("no mode", dr("<Days>1</Days>"), "MalformedXML"),
            ("Days and Years", dr("<Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years>"), "MalformedXML"),
            ("neither Days nor Years", dr("<Mode>GOVERNANCE</Mode>"), "MalformedXML"),
            ("not XML", "<ObjectLockEnabled>Enabled", "MalformedXML"),
            ("Days 0", dr("<Mode>GOVERNANCE</Mode><Days>0</Days>"), "InvalidArgument"),
            ("Days -1", dr("<Mode>COMPLIANCE</Mode><Days>-1</Days>"), "InvalidArgument"),
            ("Years 0", dr("<Mode>COMPLIANCE</Mode><Years>0</Years>"), "InvalidArgument"),
        ]
        for name, inner, code in cases:
            with self.subTest(name):
                r = self.put_config_raw(b, inner)
                self.assertEqual((r.status, r.error_code), (400, code), r)
                self.assertEqual(self.s3.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"],
                                 rule("GOVERNANCE", days=3))
        r = self.put_config_raw(b, dr("<Mode>COMPLIANCE</Mode><Days>5</Days>"))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.s3.get_object_lock_configuration(Bucket=b)["ObjectLockConfiguration"],
                         rule("COMPLIANCE", days=5))

    def test_missing_bucket(self):
        nob = self.bucket_name("lknob")
        self.assertS3Error(self.s3.get_object_lock_configuration, "NoSuchBucket", 404, Bucket=nob)
        self.assertS3Error(self.s3.put_object_lock_configuration, "NoSuchBucket", 404, Bucket=nob,
                           ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})


# ==========================================================================
class LockHeadersTest(LockCase):
    def test_put_with_retention_and_legal_hold(self):
        b = self.lock_bucket("lkh")
        until = whole_seconds_from_now(3600)
        vid = self.put_locked(b, "k", b"held", mode="GOVERNANCE", until=until, hold="ON")
        h = self.s3.head_object(Bucket=b, Key="k", VersionId=vid)
        self.assertEqual((h["ObjectLockMode"], h["ObjectLockRetainUntilDate"].timestamp(),
                          h["ObjectLockLegalHoldStatus"]), ("GOVERNANCE", until.timestamp(), "ON"))
        g = self.s3.get_object(Bucket=b, Key="k")
        self.assertEqual((g["ObjectLockMode"], g["ObjectLockRetainUntilDate"].timestamp(),
                          g["ObjectLockLegalHoldStatus"], g["Body"].read()),
                         ("GOVERNANCE", until.timestamp(), "ON", b"held"))
        self.assertEqual(self.retention(b, "k", vid), ("GOVERNANCE", until.timestamp()))
        self.assertEqual(self.legal_hold(b, "k", vid), "ON")
        # On the wire: ISO 8601 dates.
        for method in ("HEAD", "GET"):
            r = self.fc.obj(method, b, "k", version_id=vid)
            self.assertEqual(r.header("x-amz-object-lock-mode"), "GOVERNANCE", r)
            self.assertRegex(r.header("x-amz-object-lock-retain-until-date") or "", ISO8601)
            self.assertEqual(r.header("x-amz-object-lock-legal-hold"), "ON")
        # A version without lock settings has none of the headers.
        plain = self.put_locked(b, "k", b"unlocked")
        r = self.fc.head(b, "k", version_id=plain)
        for name in ("x-amz-object-lock-mode", "x-amz-object-lock-retain-until-date", "x-amz-object-lock-legal-hold"):
            self.assertIsNone(r.header(name), r)
        # Legal hold alone and retention alone.
        v2 = self.put_locked(b, "hold-only", hold="ON")
        h = self.s3.head_object(Bucket=b, Key="hold-only", VersionId=v2)
        self.assertEqual(h.get("ObjectLockLegalHoldStatus"), "ON")
        self.assertNotIn("ObjectLockMode", h)
        v3 = self.put_locked(b, "ret-only", mode="COMPLIANCE", until=until)
        h = self.s3.head_object(Bucket=b, Key="ret-only", VersionId=v3)
        self.assertEqual(h.get("ObjectLockMode"), "COMPLIANCE")
        self.assertNotIn("ObjectLockLegalHoldStatus", h)
        self.assertIsNone(self.legal_hold(b, "ret-only", v3))

    def test_lock_header_validation(self):
        b = self.lock_bucket("lkhv")
        until = whole_seconds_from_now(3600)
        past = utc_now().replace(microsecond=0) - datetime.timedelta(seconds=60)
        for name, kw, code in (
                ("mode without date", {"ObjectLockMode": "GOVERNANCE"}, "InvalidArgument"),
                ("date without mode", {"ObjectLockRetainUntilDate": until}, "InvalidArgument"),
                ("date in the past", {"ObjectLockMode": "COMPLIANCE", "ObjectLockRetainUntilDate": past},
                 "InvalidArgument")):
            with self.subTest(name):
                self.assertS3Error(self.s3.put_object, code, 400, Bucket=b, Key="bad", Body=b"x", **kw)
        for name, hdrs in (("bad mode", {"x-amz-object-lock-mode": "FOREVER",
                                         "x-amz-object-lock-retain-until-date": iso(until)}),
                           ("bad legal hold", {"x-amz-object-lock-legal-hold": "MAYBE"}),
                           ("bad date", {"x-amz-object-lock-mode": "GOVERNANCE",
                                         "x-amz-object-lock-retain-until-date": "tomorrow"})):
            with self.subTest(name):
                hdrs = dict(hdrs, **{"Content-MD5": content_md5(b"x")})
                r = self.fc.put(b, "bad", b"x", headers=hdrs)
                self.assertEqual(r.status, 400, r)
        self.assertEqual(list_versions_page(self.fc, b).entries, [])

    def test_lock_headers_on_bucket_without_object_lock(self):
        until = whole_seconds_from_now(3600)
        for b in (self.make_bucket("nolkh"), self.versioned_bucket("nolkhv")):
            self.s3.put_object(Bucket=b, Key="src", Body=b"source")
            for name, kw in (("retention", {"ObjectLockMode": "GOVERNANCE", "ObjectLockRetainUntilDate": until}),
                             ("legal hold", {"ObjectLockLegalHoldStatus": "ON"})):
                with self.subTest(bucket=b, headers=name):
                    self.assertS3Error(self.s3.put_object, "InvalidRequest", 400, Bucket=b, Key="x", Body=b"x", **kw)
                    self.assertS3Error(self.s3.copy_object, "InvalidRequest", 400, Bucket=b, Key="x",
                                       CopySource={"Bucket": b, "Key": "src"}, **kw)
                    self.assertS3Error(self.s3.create_multipart_upload, "InvalidRequest", 400, Bucket=b, Key="x",
                                       **kw)
            self.assertEqual([e.key for e in list_versions_page(self.fc, b).entries], ["src"])
            self.assertEqual(self.s3.list_multipart_uploads(Bucket=b).get("Uploads", []), [])

    def test_lock_headers_need_content_md5_or_checksum(self):
        b = self.lock_bucket("lkmd5")
        data = b"needs an integrity header"
        ret = {"x-amz-object-lock-mode": "GOVERNANCE",
               "x-amz-object-lock-retain-until-date": iso(whole_seconds_from_now(3600))}
        hold = {"x-amz-object-lock-legal-hold": "ON"}
        for name, hdrs in (("retention", ret), ("legal hold", hold)):
            with self.subTest(f"{name} without Content-MD5"):
                r = self.fc.put(b, "nomd5", data, headers=hdrs)
                self.assertEqual((r.status, r.error_code), (400, "InvalidRequest"), r)
        self.assertEqual(list_versions_page(self.fc, b).entries, [])
        r = self.fc.put(b, "md5", data, headers=dict(ret, **{"Content-MD5": content_md5(data)}))
        self.assertEqual(r.status, 200, r)
        r = self.fc.put(b, "crc", data, headers=dict(hold, **{ck.header("CRC32"): ck.b64("CRC32", data)}))
        self.assertEqual(r.status, 200, r)
        self.assertEqual(self.s3.head_object(Bucket=b, Key="md5")["ObjectLockMode"], "GOVERNANCE")
        self.assertEqual(self.s3.head_object(Bucket=b, Key="crc")["ObjectLockLegalHoldStatus"], "ON")
        # A PUT without lock headers needs neither.
        self.assertEqual(self.fc.put(b, "plain", data).status, 200)

    def test_default_retention_applies_to_new_versions(self):
        b = self.lock_bucket("lkdflt", default=rule("GOVERNANCE", days=1))
        t0 = time.time()
        vid = self.put_locked(b, "put", b"default")
        mode, until = self.retention(b, "put", vid)
        self.assertEqual(mode, "GOVERNANCE")
        self.assertLess(abs(until - (t0 + 86400)), 120, (until, t0))
        h = self.fc.head(b, "put", version_id=vid)
        self.assertEqual(h.header("x-amz-object-lock-mode"), "GOVERNANCE")
        self.assertIsNone(h.header("x-amz-object-lock-legal-hold"))
        # CopyObject and multipart get it too.
        c = self.s3.copy_object(Bucket=b, Key="copy", CopySource={"Bucket": b, "Key": "put"})
        self.assertEqual(self.retention(b, "copy", c["VersionId"])[0], "GOVERNANCE")
        uid = self.s3.create_multipart_upload(Bucket=b, Key="mpu")["UploadId"]
        e = self.s3.upload_part(Bucket=b, Key="mpu", UploadId=uid, PartNumber=1, Body=b"part")["ETag"]
        done = self.s3.complete_multipart_upload(Bucket=b, Key="mpu", UploadId=uid,
                                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e}]})
        mode, until = self.retention(b, "mpu", done["VersionId"])
        self.assertEqual(mode, "GOVERNANCE")
        self.assertLess(abs(until - (t0 + 86400)), 120)
        # Explicit headers win over the default.
        explicit = whole_seconds_from_now(7200)
        vid = self.put_locked(b, "explicit", mode="COMPLIANCE", until=explicit)
        self.assertEqual(self.retention(b, "explicit", vid), ("COMPLIANCE", explicit.timestamp()))
        # Years.
        self.s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=rule("COMPLIANCE", years=1))
        t0 = time.time()
        vid = self.put_locked(b, "years", b"y")
        mode, until = self.retention(b, "years", vid)
        self.assertEqual(mode, "COMPLIANCE")
        self.assertTrue(t0 + 365 * 86400 - 120 < until < t0 + 366 * 86400 + 120, until - t0)
        # A new default does not change the versions written under the old one.
        self.assertEqual(self.retention(b, "put", self.s3.head_object(Bucket=b, Key="put")["VersionId"])[0],
                         "GOVERNANCE")

    def test_copy_and_multipart_with_lock_headers(self):
        b = self.lock_bucket("lkcm")
        until = whole_seconds_from_now(5000)
        src = self.put_locked(b, "src", b"copy me")
        c = self.s3.copy_object(Bucket=b, Key="dst", CopySource={"Bucket": b, "Key": "src", "VersionId": src},
                                ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until,
                                ObjectLockLegalHoldStatus="ON")
        h = self.s3.head_object(Bucket=b, Key="dst", VersionId=c["VersionId"])
        self.assertEqual((h["ObjectLockMode"], h["ObjectLockRetainUntilDate"].timestamp(),
                          h["ObjectLockLegalHoldStatus"]), ("COMPLIANCE", until.timestamp(), "ON"))
        self.assertIsNone(self.retention(b, "src", src))
        uid = self.s3.create_multipart_upload(Bucket=b, Key="mp", ObjectLockMode="GOVERNANCE",
                                              ObjectLockRetainUntilDate=until,
                                              ObjectLockLegalHoldStatus="OFF")["UploadId"]
        parts = [payload(PART, "lkmp1"), b"tail"]
        done = [{"PartNumber": n, "ETag": self.s3.upload_part(Bucket=b, Key="mp", UploadId=uid, PartNumber=n,
                                                              Body=p)["ETag"]}
                for n, p in enumerate(parts, 1)]
        r = self.s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=uid, MultipartUpload={"Parts": done})
        h = self.s3.head_object(Bucket=b, Key="mp", VersionId=r["VersionId"])
        self.assertEqual((h["ObjectLockMode"], h["ObjectLockRetainUntilDate"].timestamp()),
                         ("GOVERNANCE", until.timestamp()))
        self.assertEqual(h.get("ObjectLockLegalHoldStatus", "OFF"), "OFF")
        self.assertDenied(self.s3.delete_object, Bucket=b, Key="mp", VersionId=r["VersionId"])


# ==========================================================================
class RetentionApiTest(LockCase):
    def test_retention_calls_on_bucket_without_object_lock(self):
        for b, versioned in ((self.make_bucket("rnolk"), False), (self.versioned_bucket("rnolkv"), True)):
            vid = self.s3.put_object(Bucket=b, Key="k", Body=b"x").get("VersionId")
            self.assertEqual(vid is not None, versioned)
            kw = {"VersionId": vid} if vid else {}
            with self.subTest(bucket=b):
                self.assertS3Error(self.s3.put_object_retention, "InvalidRequest", 400, Bucket=b, Key="k", **kw,
                                   Retention={"Mode": "GOVERNANCE", "RetainUntilDate": whole_seconds_from_now(60)})
                self.assertS3Error(self.s3.get_object_retention, "InvalidRequest", 400, Bucket=b, Key="k", **kw)
                self.assertS3Error(self.s3.put_object_legal_hold, "InvalidRequest", 400, Bucket=b, Key="k", **kw,
                                   LegalHold={"Status": "ON"})
                self.assertS3Error(self.s3.get_object_legal_hold, "InvalidRequest", 400, Bucket=b, Key="k", **kw)

    def test_none_set_is_404(self):
        b = self.lock_bucket("rnone")
        vid = self.put_locked(b, "k", b"x")
        self.assertS3Error(self.s3.get_object_retention, "NoSuchObjectLockConfiguration", 404, Bucket=b, Key="k")
        self.assertS3Error(self.s3.get_object_retention, "NoSuchObjectLockConfiguration", 404, Bucket=b, Key="k",
                           VersionId=vid)
        self.assertS3Error(self.s3.get_object_legal_hold, "NoSuchObjectLockConfiguration", 404, Bucket=b, Key="k",
                           VersionId=vid)
        self.assertS3Error(self.s3.get_object_retention, "NoSuchKey", 404, Bucket=b, Key="missing")

    def test_retention_and_legal_hold_on_a_chosen_version(self):
        b = self.lock_bucket("rver")
        v1 = self.put_locked(b, "k", b"one")
        v2 = self.put_locked(b, "k", b"two")
        until = whole_seconds_from_now(3600)
        r = self.set_retention(b, "k", v1, "GOVERNANCE", until)
        self.assertEqual(r["ResponseMetadata"]["HTTPStatusCode"], 200)
        self.assertEqual(self.retention(b, "k", v1), ("GOVERNANCE", until.timestamp()))
        self.assertIsNone(self.retention(b, "k", v2))
        self.assertIsNone(self.retention(b, "k"))  # the latest: v2
        self.assertIsNone(self.fc.head(b, "k").header("x-amz-object-lock-mode"))
        self.assertEqual(self.fc.head(b, "k", version_id=v1).header("x-amz-object-lock-mode"), "GOVERNANCE")
        # Without versionId: the latest version.
        self.s3.put_object_retention(Bucket=b, Key="k", Retention={"Mode": "COMPLIANCE", "RetainUntilDate": until})
        self.assertEqual(self.retention(b, "k", v2), ("COMPLIANCE", until.timestamp()))
        # Raw ?retention&versionId= document.
        r = self.fc.obj("GET", b, "k", version_id=v1, query="retention")
        self.assertEqual(r.status, 200, r)
        root = parse_xml(r.body)
        self.assertEqual((root.tag, root.findtext("Mode")), ("Retention", "GOVERNANCE"))
        self.assertRegex(root.findtext("RetainUntilDate"), ISO8601)
        # Legal hold on one version only.
        self.s3.put_object_legal_hold(Bucket=b, Key="k", VersionId=v1, LegalHold={"Status": "ON"})
        self.assertEqual(self.legal_hold(b, "k", v1), "ON")
        self.assertIsNone(self.legal_hold(b, "k", v2))
        self.s3.put_object_legal_hold(Bucket=b, Key="k", VersionId=v1, LegalHold={"Status": "OFF"})
        self.assertEqual(self.legal_hold(b, "k", v1), "OFF")
        self.assertEqual(self.fc.head(b, "k", version_id=v1).header("x-amz-object-lock-legal-hold"), "OFF")
        r = self.fc.obj("GET", b, "k", version_id=v1, query="legal-hold")
        self.assertEqual((r.status, parse_xml(r.body).findtext("Status")), (200, "OFF"), r)
        # Unknown versions.
        other = self.put_locked(b, "other")
        self.assertS3Error(self.s3.put_object_retention, "NoSuchVersion", 404, Bucket=b, Key="k", VersionId=other,
                           Retention={"Mode": "GOVERNANCE", "RetainUntilDate": until})
        self.assertS3Error(self.s3.get_object_legal_hold, "NoSuchVersion", 404, Bucket=b, Key="k", VersionId=other)

    def test_malformed_retention_and_legal_hold_documents(self):
        b = self.lock_bucket("rxml")
        vid = self.put_locked(b, "k")
        ns = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
        date = iso(whole_seconds_from_now(600))
        for name, query, doc in (
                ("legal hold MAYBE", "legal-hold", f"<LegalHold {ns}><Status>MAYBE</Status></LegalHold>"),
                ("legal hold without Status", "legal-hold", f"<LegalHold {ns}></LegalHold>"),
                ("retention mode without date", "retention", f"<Retention {ns}><Mode>GOVERNANCE</Mode></Retention>"),
                ("retention date without mode", "retention",
                 f"<Retention {ns}><RetainUntilDate>{date}</RetainUntilDate></Retention>"),
                ("retention bad mode", "retention",
                 f"<Retention {ns}><Mode>FOREVER</Mode><RetainUntilDate>{date}</RetainUntilDate></Retention>"),
                ("not XML", "retention", "<Retention")):
            with self.subTest(name):
                data = doc.encode()
                r = self.fc.obj("PUT", b, "k", version_id=vid, query=query, body=data,
                                headers={"Content-MD5": content_md5(data)})
                self.assertEqual((r.status, r.error_code), (400, "MalformedXML"), r)
        self.assertIsNone(self.retention(b, "k", vid))
        self.assertIsNone(self.legal_hold(b, "k", vid))
        self.assertS3Error(self.s3.put_object_legal_hold, "NoSuchKey", 404, Bucket=b, Key="missing",
                           LegalHold={"Status": "ON"})

    def test_create_bucket_with_lock_header_false(self):
        b = self.bucket_name("lkfalse")
        r = self.fc.request("PUT", f"/{b}", headers={"x-amz-bucket-object-lock-enabled": "false"})
        self.assertEqual(r.status, 200, r)
        self.assertNotIn("Status", self.s3.get_bucket_versioning(Bucket=b))
        self.assertS3Error(self.s3.get_object_lock_configuration, "ObjectLockConfigurationNotFoundError", 404,
                           Bucket=b)

    def test_retention_in_the_past_is_rejected(self):
        b = self.lock_bucket("rpast")
        vid = self.put_locked(b, "k")
        past = utc_now().replace(microsecond=0) - datetime.timedelta(seconds=30)
        self.assertS3Error(self.s3.put_object_retention, "InvalidArgument", 400, Bucket=b, Key="k", VersionId=vid,
                           Retention={"Mode": "GOVERNANCE", "RetainUntilDate": past})
        self.assertIsNone(self.retention(b, "k", vid))


# ==========================================================================
class LockMatrixTest(LockCase):
    """Every delete / overwrite / retention-change path against COMPLIANCE,
    GOVERNANCE and legal hold, with and without the bypass header."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.bucket = unique_name("mx")
        cls.s3.create_bucket(Bucket=cls.bucket, ObjectLockEnabledForBucket=True)

    def locked(self, key, mode=None, seconds=3600, hold=None, body=None):
        until = whole_seconds_from_now(seconds) if mode else None
        body = body if body is not None else f"content of {key}".encode()
        return self.put_locked(self.bucket, key, body, mode=mode, until=until, hold=hold), until, body

    def test_compliance_version_cannot_be_deleted(self):
        b = self.bucket
        vid, until, body = self.locked("c-del", "COMPLIANCE")
        for bypass in (False, True):
            with self.subTest(bypass=bypass):
                r = self.delete_version(b, "c-del", vid, bypass=bypass)
                self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
                kw = {"BypassGovernanceRetention": True} if bypass else {}
                self.assertDenied(self.s3.delete_object, Bucket=b, Key="c-del", VersionId=vid, **kw)
                d = self.s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "c-del", "VersionId": vid}]}, **kw)
                self.assertEqual(d.get("Deleted", []), [])
                self.assertEqual([(e["Key"], e.get("VersionId"), e["Code"]) for e in d["Errors"]],
                                 [("c-del", vid, "AccessDenied")])
        self.assertVersionIntact(b, "c-del", vid, body)
        self.assertEqual(self.retention(b, "c-del", vid), ("COMPLIANCE", until.timestamp()))

    def test_compliance_retention_can_only_be_extended(self):
        b = self.bucket
        vid, until, body = self.locked("c-ret", "COMPLIANCE")
        shorter = until - datetime.timedelta(seconds=600)
        for bypass in (False, True):
            for name, mode, date in (("shorten", "COMPLIANCE", shorter), ("remove", None, None),
                                     ("switch to GOVERNANCE", "GOVERNANCE", until),
                                     ("switch to GOVERNANCE, later", "GOVERNANCE", until + DAY)):
                with self.subTest(name, bypass=bypass):
                    self.assertDenied(self.set_retention, b, "c-ret", vid, mode, date, bypass=bypass)
                    self.assertEqual(self.retention(b, "c-ret", vid), ("COMPLIANCE", until.timestamp()))
        longer = until + DAY
        self.set_retention(b, "c-ret", vid, "COMPLIANCE", longer)
        self.assertEqual(self.retention(b, "c-ret", vid), ("COMPLIANCE", longer.timestamp()))
        h = self.s3.head_object(Bucket=b, Key="c-ret", VersionId=vid)
        self.assertEqual(h["ObjectLockRetainUntilDate"].timestamp(), longer.timestamp())
        # The original date is now a shortening too.
        self.assertDenied(self.set_retention, b, "c-ret", vid, "COMPLIANCE", until, bypass=True)
        self.assertVersionIntact(b, "c-ret", vid, body)

    def test_governance_delete_needs_bypass(self):
        b = self.bucket
        vid, until, body = self.locked("g-del", "GOVERNANCE")
        r = self.delete_version(b, "g-del", vid)
        self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
        d = self.s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "g-del", "VersionId": vid}]})
        self.assertEqual([(e["Key"], e["Code"]) for e in d["Errors"]], [("g-del", "AccessDenied")])
        self.assertVersionIntact(b, "g-del", vid, body)
        r = self.delete_version(b, "g-del", vid, bypass=True)
        self.assertEqual((r.status, r.header("x-amz-version-id")), (204, vid), r)
        self.assertEqual(self.fc.get(b, "g-del", version_id=vid).status, 404)
        # DeleteObjects with the bypass header.
        vid2, _, _ = self.locked("g-del2", "GOVERNANCE")
        d = self.s3.delete_objects(Bucket=b, BypassGovernanceRetention=True,
                                   Delete={"Objects": [{"Key": "g-del2", "VersionId": vid2}]})
        self.assertEqual((d.get("Errors", []), [(x["Key"], x["VersionId"]) for x in d["Deleted"]]),
                         ([], [("g-del2", vid2)]))
        # boto3's parameter on DeleteObject.
        vid3, _, _ = self.locked("g-del3", "GOVERNANCE")
        self.assertDenied(self.s3.delete_object, Bucket=b, Key="g-del3", VersionId=vid3)
        self.s3.delete_object(Bucket=b, Key="g-del3", VersionId=vid3, BypassGovernanceRetention=True)
        self.assertEqual(self.versions(b, prefix="g-del3"), [])

    def test_governance_retention_changes(self):
        b = self.bucket
        vid, until, body = self.locked("g-ret", "GOVERNANCE")
        longer = until + DAY
        self.set_retention(b, "g-ret", vid, "GOVERNANCE", longer)  # extend: no bypass needed
        self.assertEqual(self.retention(b, "g-ret", vid), ("GOVERNANCE", longer.timestamp()))
        self.assertDenied(self.set_retention, b, "g-ret", vid, "GOVERNANCE", until)
        self.assertDenied(self.set_retention, b, "g-ret", vid, None, None)
        self.assertEqual(self.retention(b, "g-ret", vid), ("GOVERNANCE", longer.timestamp()))
        self.set_retention(b, "g-ret", vid, "GOVERNANCE", until, bypass=True)  # shorten with bypass
        self.assertEqual(self.retention(b, "g-ret", vid), ("GOVERNANCE", until.timestamp()))
        self.set_retention(b, "g-ret", vid, None, None, bypass=True)  # remove with bypass
        self.assertIsNone(self.retention(b, "g-ret", vid))
        self.assertIsNone(self.fc.head(b, "g-ret", version_id=vid).header("x-amz-object-lock-mode"))
        r = self.delete_version(b, "g-ret", vid)  # no retention left: deletable without bypass
        self.assertEqual(r.status, 204, r)

    def test_governance_can_become_compliance(self):
        b = self.bucket
        vid, until, body = self.locked("g-to-c", "GOVERNANCE")
        self.set_retention(b, "g-to-c", vid, "COMPLIANCE", until)
        self.assertEqual(self.retention(b, "g-to-c", vid), ("COMPLIANCE", until.timestamp()))
        self.assertDenied(self.set_retention, b, "g-to-c", vid, "GOVERNANCE", until, bypass=True)
        r = self.delete_version(b, "g-to-c", vid, bypass=True)
        self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
        self.assertVersionIntact(b, "g-to-c", vid, body)

    def test_legal_hold_blocks_deletion_until_released(self):
        b = self.bucket
        for name, mode in (("hold only", None), ("hold + governance", "GOVERNANCE"),
                           ("hold + compliance", "COMPLIANCE")):
            with self.subTest(name):
                key = "lh-" + (mode or "none").lower()
                vid, until, body = self.locked(key, mode, hold="ON")
                for bypass in (False, True):
                    r = self.delete_version(b, key, vid, bypass=bypass)
                    self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), (bypass, r))
                    d = self.s3.delete_objects(Bucket=b, BypassGovernanceRetention=bypass,
                                               Delete={"Objects": [{"Key": key, "VersionId": vid}]})
                    self.assertEqual([e["Code"] for e in d.get("Errors", [])], ["AccessDenied"], d)
                self.assertVersionIntact(b, key, vid, body)
                self.s3.put_object_legal_hold(Bucket=b, Key=key, VersionId=vid, LegalHold={"Status": "OFF"})
                r = self.delete_version(b, key, vid, bypass=(mode == "GOVERNANCE"))
                if mode == "COMPLIANCE":
                    self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
                    self.assertVersionIntact(b, key, vid, body)
                else:
                    self.assertEqual(r.status, 204, r)
                    self.assertEqual(self.fc.get(b, key, version_id=vid).status, 404)
        # Setting a legal hold on a version that has one is harmless; putting
        # it back ON after OFF blocks again.
        vid, _, _ = self.locked("lh-again", hold="ON")
        self.s3.put_object_legal_hold(Bucket=b, Key="lh-again", VersionId=vid, LegalHold={"Status": "ON"})
        self.s3.put_object_legal_hold(Bucket=b, Key="lh-again", VersionId=vid, LegalHold={"Status": "OFF"})
        self.s3.put_object_legal_hold(Bucket=b, Key="lh-again", VersionId=vid, LegalHold={"Status": "ON"})
        self.assertEqual(self.delete_version(b, "lh-again", vid).status, 403)

    def test_delete_without_version_id_adds_a_marker(self):
        b = self.bucket
        for mode, hold in (("COMPLIANCE", None), ("GOVERNANCE", None), (None, "ON")):
            key = f"marker-{mode or 'hold'}".lower()
            with self.subTest(key):
                vid, until, body = self.locked(key, mode, hold=hold)
                m = self.delete_marker(b, key)
                r = self.fc.get(b, key)
                self.assertEqual((r.status, r.header("x-amz-delete-marker")), (404, "true"), r)
                self.assertVersionIntact(b, key, vid, body)
                d = self.s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": key}]})
                self.assertEqual(d.get("Errors", []), [])
                self.assertEqual(d["Deleted"][0].get("DeleteMarker"), True)
                m2 = d["Deleted"][0]["DeleteMarkerVersionId"]
                self.assertEqual(self.versions(b, prefix=key),
                                 [("M", key, m2, "true"), ("M", key, m, "false"), ("V", key, vid, "false")])
                # Markers carry no retention: removing them is allowed.
                self.assertEqual(self.delete_version(b, key, m2).status, 204)
                self.assertEqual(self.delete_version(b, key, m).status, 204)
                self.assertEqual(self.fc.get(b, key).body, body)

    def test_overwrites_make_new_versions_and_leave_the_locked_one(self):
        b = self.bucket
        vid, until, body = self.locked("c-over", "COMPLIANCE")
        new_put = self.put_locked(b, "c-over", b"overwritten by PUT")
        cp = self.s3.copy_object(Bucket=b, Key="c-over", CopySource={"Bucket": b, "Key": "c-over", "VersionId": vid},
                                 MetadataDirective="REPLACE", Metadata={"x": "y"})["VersionId"]
        uid = self.s3.create_multipart_upload(Bucket=b, Key="c-over")["UploadId"]
        e = self.s3.upload_part(Bucket=b, Key="c-over", UploadId=uid, PartNumber=1, Body=b"mpu over")["ETag"]
        mp = self.s3.complete_multipart_upload(Bucket=b, Key="c-over", UploadId=uid,
                                               MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e}]})["VersionId"]
        # Copying another object onto the key.
        self.put_locked(b, "other-src", b"other")
        cp2 = self.s3.copy_object(Bucket=b, Key="c-over", CopySource={"Bucket": b, "Key": "other-src"})["VersionId"]
        self.assertEqual(self.versions(b, prefix="c-over"),
                         [("V", "c-over", v, "true" if i == 0 else "false")
                          for i, v in enumerate([cp2, mp, cp, new_put, vid])])
        self.assertVersionIntact(b, "c-over", vid, body)
        self.assertEqual(self.retention(b, "c-over", vid), ("COMPLIANCE", until.timestamp()))
        self.assertIsNone(self.retention(b, "c-over", new_put))
        self.assertEqual(self.fc.get(b, "c-over", version_id=cp).body, body)
        self.assertEqual(self.get_body(b, "c-over"), b"other")
        # The new, unlocked versions can go; the locked one stays.
        for v in (cp2, mp, cp, new_put):
            self.assertEqual(self.delete_version(b, "c-over", v).status, 204)
        self.assertEqual(self.delete_version(b, "c-over", vid, bypass=True).status, 403)
        self.assertEqual(self.get_body(b, "c-over"), body)

    def test_delete_objects_reports_locked_versions_and_deletes_the_rest(self):
        b = self.bucket
        c, _, cbody = self.locked("batch/compliance", "COMPLIANCE")
        g, _, _ = self.locked("batch/governance", "GOVERNANCE")
        h, _, hbody = self.locked("batch/hold", hold="ON")
        free, _, _ = self.locked("batch/free")
        self.locked("batch/marker-me", "COMPLIANCE")
        objects = [{"Key": "batch/compliance", "VersionId": c}, {"Key": "batch/governance", "VersionId": g},
                   {"Key": "batch/hold", "VersionId": h}, {"Key": "batch/free", "VersionId": free},
                   {"Key": "batch/marker-me"}]
        d = self.s3.delete_objects(Bucket=b, Delete={"Objects": objects})
        self.assertEqual(sorted((e["Key"], e.get("VersionId"), e["Code"]) for e in d["Errors"]),
                         [("batch/compliance", c, "AccessDenied"), ("batch/governance", g, "AccessDenied"),
                          ("batch/hold", h, "AccessDenied")])
        deleted = {x["Key"]: x for x in d["Deleted"]}
        self.assertEqual(sorted(deleted), ["batch/free", "batch/marker-me"])
        self.assertEqual(deleted["batch/free"].get("VersionId"), free)
        self.assertEqual(deleted["batch/marker-me"].get("DeleteMarker"), True)
        self.assertEqual(self.fc.get(b, "batch/free", version_id=free).status, 404)
        self.assertVersionIntact(b, "batch/compliance", c, cbody)
        self.assertVersionIntact(b, "batch/hold", h, hbody)
        # With the bypass header, only the governance version goes.
        d = self.s3.delete_objects(Bucket=b, BypassGovernanceRetention=True, Delete={"Objects": objects[:3]})
        self.assertEqual(sorted((e["Key"], e["Code"]) for e in d["Errors"]),
                         [("batch/compliance", "AccessDenied"), ("batch/hold", "AccessDenied")])
        self.assertEqual([(x["Key"], x["VersionId"]) for x in d["Deleted"]], [("batch/governance", g)])

    def test_retention_passing_its_date_releases_the_version(self):
        b = self.bucket
        until = whole_seconds_from_now(2)
        keys = {}
        for mode in ("COMPLIANCE", "GOVERNANCE"):
            key = f"expiring-{mode.lower()}"
            keys[key] = self.put_locked(b, key, b"short-lived", mode=mode, until=until)
        for key, vid in keys.items():
            r = self.delete_version(b, key, vid)
            self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
        released = {}
        deadline = until.timestamp() + 10
        while len(released) < len(keys) and time.time() < deadline:
            for key, vid in keys.items():
                if key in released:
                    continue
                r = self.delete_version(b, key, vid)
                done = time.time()
                if r.status == 204:
                    released[key] = done
                else:
                    self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
            time.sleep(0.1)
        self.assertEqual(sorted(released), sorted(keys), "retention did not pass within 10 s of its date")
        for key, t in released.items():
            self.assertGreaterEqual(t, until.timestamp(), f"{key} deletable before its retain-until date")
            self.assertEqual(self.fc.get(b, key, version_id=keys[key]).status, 404)

    def test_locked_null_version(self):
        b = self.make_bucket("lknull")
        self.assertEqual(self.fc.put(b, "k", b"null version").status, 200)
        self.set_versioning(b, "Enabled")
        self.s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration={"ObjectLockEnabled": "Enabled"})
        until = whole_seconds_from_now(3600)
        self.set_retention(b, "k", "null", "COMPLIANCE", until)
        self.assertEqual(self.retention(b, "k", "null"), ("COMPLIANCE", until.timestamp()))
        r = self.delete_version(b, "k", "null", bypass=True)
        self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
        v = self.put_locked(b, "k", b"new")
        self.assertEqual(self.versions(b), [("V", "k", v, "true"), ("V", "k", "null", "false")])
        self.assertVersionIntact(b, "k", "null", b"null version")

    def test_bucket_with_locked_versions_cannot_be_deleted(self):
        b = self.lock_bucket("lkdb")
        vid = self.put_locked(b, "k", mode="COMPLIANCE", until=whole_seconds_from_now(3600))
        self.delete_marker(b, "k")
        self.assertS3Error(self.s3.delete_bucket, "BucketNotEmpty", 409, Bucket=b)
        self.assertEqual(self.delete_version(b, "k", vid, bypass=True).status, 403)
        self.assertIn(b, [x["Name"] for x in self.s3.list_buckets()["Buckets"]])

    def test_bypass_header_on_unlocked_version_is_harmless(self):
        vid, _, _ = self.locked("bypass-free")
        r = self.delete_version(self.bucket, "bypass-free", vid, bypass=True)
        self.assertEqual(r.status, 204, r)

    # A second identity (a user without s3:BypassGovernanceRetention, without
    # s3:PutObjectRetention): test_iam.py, PolicyEnforcementTest.


# ==========================================================================
class LockAuditLogTest(LockCase):
    """Every change of a lock setting is logged with who made it (issue 11;
    the audit trail of a later issue takes these records over). The format
    is not fixed: a line names the identity and what changed."""

    def log_lines(self):
        with open(self.server.log_path, "rb") as f:
            return [ln for ln in f.read().decode(errors="replace").splitlines() if "object lock" in ln.lower()]

    def assertLogged(self, *words):
        lines = self.log_lines()
        self.assertTrue(any(all(w in ln for w in words) for ln in lines),
                        f"no log line with {words}; object lock lines:\n" + "\n".join(lines[-20:]))

    def test_lock_changes_are_logged_with_the_identity(self):
        from harness import ACCESS_KEY
        b = self.lock_bucket("lklog")
        self.assertLogged(ACCESS_KEY, b)
        self.s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=rule("GOVERNANCE", days=3))
        self.assertLogged(ACCESS_KEY, b, "GOVERNANCE")
        vid = self.put_locked(b, "logged-key")
        self.set_retention(b, "logged-key", vid, "COMPLIANCE", whole_seconds_from_now(7 * 86400))
        self.assertLogged(ACCESS_KEY, "logged-key", vid, "COMPLIANCE")
        self.s3.put_object_legal_hold(Bucket=b, Key="logged-key", VersionId=vid, LegalHold={"Status": "ON"})
        self.assertLogged(ACCESS_KEY, "logged-key", vid, "ON")
        v2 = self.put_locked(b, "bypassed")
        self.set_retention(b, "bypassed", v2, "GOVERNANCE", whole_seconds_from_now(60), bypass=True)
        self.assertLogged(ACCESS_KEY, "bypassed", "bypass")
        self.assertEqual(self.delete_version(b, "bypassed", v2, bypass=True).status, 204)
        self.assertLogged(ACCESS_KEY, "DELETE", "bypassed", "bypass")


# ==========================================================================
class BackupApplicationTest(LockCase):
    """What Veeam / Commvault-style backup software does: a bucket with Object
    Lock and a default COMPLIANCE retention, a chain of restore points (a full
    backup as a multipart upload, incrementals, a metadata file rewritten after
    each), immutability extended on the existing objects; then an attacker with
    the root keys tries every way to destroy the chain; everything is still
    readable and restorable."""

    def test_backup_chain_survives_an_attacker_with_root_keys(self):
        b = self.bucket_name("backup")
        self.s3.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)
        self.s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=rule("COMPLIANCE", days=1))
        chain = []  # (key, version id, bytes)

        full = [payload(PART, "vbk-1"), payload(333, "vbk-2")]
        key = "Veeam/Backup/job-1/full-0001.vbk"
        uid = self.s3.create_multipart_upload(Bucket=b, Key=key)["UploadId"]
        parts = [{"PartNumber": n, "ETag": self.s3.upload_part(Bucket=b, Key=key, UploadId=uid, PartNumber=n,
                                                               Body=p)["ETag"]}
                 for n, p in enumerate(full, 1)]
        r = self.s3.complete_multipart_upload(Bucket=b, Key=key, UploadId=uid, MultipartUpload={"Parts": parts})
        chain.append((key, r["VersionId"], b"".join(full)))
        for i in range(2, 6):
            inc = payload(1000 + i * 37, f"vib-{i}")
            key = f"Veeam/Backup/job-1/inc-{i:04d}.vib"
            chain.append((key, self.put_locked(b, key, inc), inc))
            meta = json.dumps({"job": 1, "restore_points": i}).encode()
            chain.append(("Veeam/Backup/job-1/job.vbm", self.put_locked(b, "Veeam/Backup/job-1/job.vbm", meta), meta))
        for key, vid, _ in chain:
            mode, until = self.retention(b, key, vid)
            self.assertEqual(mode, "COMPLIANCE", key)
            self.assertGreater(until, time.time() + 86400 - 120)

        # The application extends immutability on every existing version.
        extended = whole_seconds_from_now(30 * 86400)
        for key, vid, _ in chain:
            self.set_retention(b, key, vid, "COMPLIANCE", extended)
            self.assertEqual(self.retention(b, key, vid), ("COMPLIANCE", extended.timestamp()))

        # ---- the attacker (root access key and secret) ----------------------
        shorter = whole_seconds_from_now(60)
        for key, vid, _ in chain:
            with self.subTest("per-version attack", key=key, vid=vid):
                for bypass in (False, True):
                    r = self.delete_version(b, key, vid, bypass=bypass)
                    self.assertEqual((r.status, r.error_code), (403, "AccessDenied"), r)
                    for mode, date in (("COMPLIANCE", shorter), ("GOVERNANCE", extended), (None, None)):
                        self.assertDenied(self.set_retention, b, key, vid, mode, date, bypass=bypass)
                # A legal hold OFF does not unlock anything.
                self.s3.put_object_legal_hold(Bucket=b, Key=key, VersionId=vid, LegalHold={"Status": "OFF"})
                self.assertEqual(self.delete_version(b, key, vid, bypass=True).status, 403)
        d = self.s3.delete_objects(Bucket=b, BypassGovernanceRetention=True,
                                   Delete={"Objects": [{"Key": k, "VersionId": v} for k, v, _ in chain]})
        self.assertEqual(d.get("Deleted", []), [])
        self.assertEqual(len(d["Errors"]), len(chain))
        self.assertEqual({e["Code"] for e in d["Errors"]}, {"AccessDenied"})
        # Overwrites and plain deletes "succeed" as new versions / markers only.
        keys = sorted({k for k, _, _ in chain})
        for key in keys:
            self.put_locked(b, key, b"ransomware was here")
            self.delete_marker(b, key)
        self.assertEqual(self.s3.list_objects_v2(Bucket=b)["KeyCount"], 0)
        self.assertS3Error(self.s3.put_bucket_versioning, "InvalidBucketState", 409, Bucket=b,
                           VersioningConfiguration={"Status": "Suspended"})
        disable = LOCK_XML.format("<ObjectLockEnabled>Disabled</ObjectLockEnabled>").encode()
        r = self.fc.request("PUT", f"/{b}", query="object-lock", body=disable,
                            headers={"Content-MD5": content_md5(disable)})
        self.assertEqual((r.status, r.error_code), (400, "MalformedXML"), r)
        # A weaker default applies only to new versions.
        self.s3.put_object_lock_configuration(Bucket=b, ObjectLockConfiguration=rule("GOVERNANCE", days=1))
        self.assertS3Error(self.s3.delete_bucket, "BucketNotEmpty", 409, Bucket=b)

        # ---- everything is still there, with its retention ------------------
        for key, vid, data in chain:
            r = self.fc.get(b, key, version_id=vid)
            self.assertEqual((r.status, md5_hex(r.body), r.header("x-amz-object-lock-mode")),
                             (200, md5_hex(data), "COMPLIANCE"), key)
            self.assertEqual(self.retention(b, key, vid), ("COMPLIANCE", extended.timestamp()))
        # ---- and restorable: drop the markers (they carry no lock), copy the
        # last good version back as the current one.
        for key in keys:
            for kind, k, vid, _ in self.versions(b, prefix=key):
                if kind == "M" and k == key:
                    self.assertEqual(self.delete_version(b, key, vid).status, 204)
            good = [v for k, v, _ in chain if k == key][-1]
            self.s3.copy_object(Bucket=b, Key=key, CopySource={"Bucket": b, "Key": key, "VersionId": good})
            want = [data for k, _, data in chain if k == key][-1]
            self.assertEqual(md5_hex(self.get_body(b, key)), md5_hex(want), key)
        self.assertEqual(sorted(o["Key"] for o in self.s3.list_objects_v2(Bucket=b)["Contents"]), keys)


# ==========================================================================
class ObjectLockCliTest(LockCase):
    def aws(self, *args, ok=True):
        p = self.server.aws(self.home, *args, check=False)
        if ok:
            self.assertEqual(p.returncode, 0, f"aws {args}: {p.stdout}\n{p.stderr}")
            return json.loads(p.stdout) if p.stdout.strip() else {}
        self.assertNotEqual(p.returncode, 0, f"aws {args} succeeded: {p.stdout}")
        return p

    def test_aws_s3api_object_lock(self):
        b = self.bucket_name("clilk")
        self.aws("s3api", "create-bucket", "--bucket", b, "--object-lock-enabled-for-bucket")
        self.aws("s3api", "put-object-lock-configuration", "--bucket", b, "--object-lock-configuration",
                 json.dumps(rule("GOVERNANCE", days=1)))
        r = self.aws("s3api", "get-object-lock-configuration", "--bucket", b)
        self.assertEqual(r["ObjectLockConfiguration"], rule("GOVERNANCE", days=1))
        v1 = self.put_locked(b, "db.bak", b"backup one")
        v2 = self.put_locked(b, "db.bak", b"backup two")
        until = whole_seconds_from_now(86400 * 7)
        self.aws("s3api", "put-object-retention", "--bucket", b, "--key", "db.bak", "--version-id", v1,
                 "--retention", json.dumps({"Mode": "COMPLIANCE", "RetainUntilDate": iso(until)}))
        r = self.aws("s3api", "get-object-retention", "--bucket", b, "--key", "db.bak", "--version-id", v1)
        self.assertEqual(r["Retention"]["Mode"], "COMPLIANCE")
        self.assertEqual(self.retention(b, "db.bak", v1), ("COMPLIANCE", until.timestamp()))
        p = self.aws("s3api", "put-object-retention", "--bucket", b, "--key", "db.bak", "--version-id", v1,
                     "--bypass-governance-retention", "--retention",
                     json.dumps({"Mode": "COMPLIANCE", "RetainUntilDate": iso(whole_seconds_from_now(60))}), ok=False)
        self.assertIn("AccessDenied", p.stderr)
        # GOVERNANCE (the default on v2): shortened with the bypass flag.
        short = whole_seconds_from_now(3600)
        self.aws("s3api", "put-object-retention", "--bucket", b, "--key", "db.bak", "--version-id", v2,
                 "--bypass-governance-retention", "--retention",
                 json.dumps({"Mode": "GOVERNANCE", "RetainUntilDate": iso(short)}))
        self.assertEqual(self.retention(b, "db.bak", v2), ("GOVERNANCE", short.timestamp()))
        self.aws("s3api", "put-object-legal-hold", "--bucket", b, "--key", "db.bak", "--version-id", v2,
                 "--legal-hold", "Status=ON")
        r = self.aws("s3api", "get-object-legal-hold", "--bucket", b, "--key", "db.bak", "--version-id", v2)
        self.assertEqual(r["LegalHold"]["Status"], "ON")
        p = self.aws("s3api", "delete-object", "--bucket", b, "--key", "db.bak", "--version-id", v2,
                     "--bypass-governance-retention", ok=False)
        self.assertIn("AccessDenied", p.stderr)
        r = self.aws("s3api", "list-object-versions", "--bucket", b)
        self.assertEqual([v["VersionId"] for v in r["Versions"]], [v2, v1])
        r = self.aws("s3api", "head-object", "--bucket", b, "--key", "db.bak", "--version-id", v1)
        self.assertEqual((r["ObjectLockMode"], r["VersionId"]), ("COMPLIANCE", v1))


if __name__ == "__main__":
    unittest.main()

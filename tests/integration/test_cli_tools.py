"""Real S3 clients against a real strata server: aws cli v2 (s3 and s3api),
rclone, s3cmd, and a 1 GiB streaming round trip through boto3. All uploads are
single PUTs (multipart is covered elsewhere)."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import ServerTestCase, sha256_file, tree_digest, write_random_file  # noqa: E402

MiB = 1024 * 1024
RCLONE_FLAGS = ["--s3-upload-cutoff", "4G", "--low-level-retries", "1", "--retries", "1"]


def md5_file(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(MiB), b""):
            h.update(b)
    return h.hexdigest()



class CliToolsTest(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # Single PUT for every aws cli upload used here (64 MiB file included).
        cls.server.aws(cls.home, "configure", "set", "default.s3.multipart_threshold", "2GB")

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="strata-cli-", dir=self.home)
        self.addCleanup(shutil.rmtree, self.work, True)

    # ---- helpers -----------------------------------------------------------
    def path(self, *parts):
        return os.path.join(self.work, *parts)

    def write(self, rel, data):
        p = self.path(rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def aws(self, *args, check=True, input=None):
        p = self.server.aws(self.home, *args, check=False, input=input)
        if check:
            self.assertEqual(p.returncode, 0, f"aws {args}: {p.stdout}\n{p.stderr}")
        return p

    def transfer_lines(self, stdout):
        """The 'upload:/download:/delete:' lines of aws s3 output, with the local
        path (printed relative to the cwd) reduced to its base name."""
        out = []
        for ln in stdout.splitlines():
            m = re.match(r"^(upload|download|delete|copy): (.*)$", ln.strip())
            if m:
                parts = m.group(2).split(" to ")
                parts = [x if x.startswith("s3://") else "LOCAL/" + os.path.basename(x) for x in parts]
                out.append(f"{m.group(1)}: " + " to ".join(parts))
        return sorted(out)

    def aws_json(self, *args):
        out = self.aws(*args, "--output", "json").stdout
        return json.loads(out) if out.strip() else {}

    def rclone(self, *args, check=True):
        p = self.server.rclone(self.home, *RCLONE_FLAGS, *args, check=False)
        if check:
            self.assertEqual(p.returncode, 0, f"rclone {args}: {p.stdout}\n{p.stderr}")
        return p

    def s3cmd(self, *args, check=True):
        p = self.server.s3cmd(self.home, *args, check=False)
        if check:
            self.assertEqual(p.returncode, 0, f"s3cmd {args}: {p.stdout}\n{p.stderr}")
        return p

    def keys_and_sizes(self, bucket, prefix=""):
        out = {}
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for o in page.get("Contents", []):
                out[o["Key"]] = o["Size"]
        return out

    def bucket_exists(self, bucket):
        try:
            self.s3.head_bucket(Bucket=bucket)
            return True
        except Exception as e:  # botocore ClientError
            self.assertEqual(e.response["ResponseMetadata"]["HTTPStatusCode"], 404)
            return False

    # ---- aws s3 --------------------------------------------------------------
    def test_aws_s3_mb_ls_rb(self):
        b = self.bucket_name("awsmb")
        p = self.aws("s3", "mb", f"s3://{b}")
        self.assertEqual(p.stdout.strip(), f"make_bucket: {b}")
        self.assertTrue(self.bucket_exists(b))
        lines = self.aws("s3", "ls").stdout.splitlines()
        mine = [ln for ln in lines if ln.endswith(" " + b)]
        self.assertEqual(len(mine), 1, lines)
        self.assertRegex(mine[0], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d " + re.escape(b) + "$")
        # mb of an existing bucket fails.
        p = self.aws("s3", "mb", f"s3://{b}", check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("BucketAlreadyOwnedByYou", p.stderr)
        p = self.aws("s3", "rb", f"s3://{b}")
        self.assertEqual(p.stdout.strip(), f"remove_bucket: {b}")
        self.assertFalse(self.bucket_exists(b))

    def test_aws_s3_cp_small_roundtrip(self):
        b = self.make_bucket("awscp")
        data = os.urandom(5000)
        src = self.write("small.bin", data)
        p = self.aws("s3", "cp", "--no-progress", src, f"s3://{b}/dir/small.bin")
        self.assertEqual(self.transfer_lines(p.stdout), [f"upload: LOCAL/small.bin to s3://{b}/dir/small.bin"])
        h = self.s3.head_object(Bucket=b, Key="dir/small.bin")
        self.assertEqual(h["ContentLength"], 5000)
        self.assertEqual(h["ETag"], '"%s"' % hashlib.md5(data).hexdigest())
        dst = self.path("down.bin")
        p = self.aws("s3", "cp", "--no-progress", f"s3://{b}/dir/small.bin", dst)
        self.assertEqual(self.transfer_lines(p.stdout), [f"download: s3://{b}/dir/small.bin to LOCAL/down.bin"])
        self.assertEqual(sha256_file(dst), hashlib.sha256(data).hexdigest())
        # stdin up, stdout down.
        self.aws("s3", "cp", "-", f"s3://{b}/from-stdin.txt", input="streamed via stdin\n")
        self.assertEqual(self.get_body(b, "from-stdin.txt"), b"streamed via stdin\n")
        p = self.aws("s3", "cp", f"s3://{b}/from-stdin.txt", "-")
        self.assertEqual(p.stdout, "streamed via stdin\n")
        # Downloading a missing key fails.
        p = self.aws("s3", "cp", f"s3://{b}/missing", self.path("x"), check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("404", p.stderr)
        self.assertFalse(os.path.exists(self.path("x")))

    def test_aws_s3_cp_64mib(self):
        b = self.make_bucket("awsbig")
        src = self.path("big.bin")
        digest = write_random_file(src, 64 * MiB)
        self.aws("s3", "cp", "--no-progress", src, f"s3://{b}/big.bin")
        h = self.s3.head_object(Bucket=b, Key="big.bin")
        self.assertEqual(h["ContentLength"], 64 * MiB)
        self.assertEqual(h["ETag"], '"%s"' % md5_file(src))  # single PUT: plain MD5
        dst = self.path("big.down")
        self.aws("s3", "cp", "--no-progress", f"s3://{b}/big.bin", dst)
        self.assertEqual(os.path.getsize(dst), 64 * MiB)
        self.assertEqual(sha256_file(dst), digest)

    def test_aws_s3_ls_and_rm(self):
        b = self.make_bucket("awsls")
        objs = {"dir/a.txt": b"a" * 10, "dir/sub/b.txt": b"b" * 20, "top.txt": b"t" * 7, "z z.txt": b"zz"}
        for k, v in objs.items():
            self.put(b, k, v)
        lines = self.aws("s3", "ls", f"s3://{b}/").stdout.splitlines()
        self.assertEqual(len(lines), 3, lines)
        self.assertRegex(lines[0], r"^\s+PRE dir/$")
        self.assertRegex(lines[1], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+7 top\.txt$")
        self.assertRegex(lines[2], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+2 z z\.txt$")
        lines = self.aws("s3", "ls", f"s3://{b}/dir/").stdout.splitlines()
        self.assertEqual([ln.split()[-1] for ln in lines], ["sub/", "a.txt"])
        lines = self.aws("s3", "ls", "--recursive", f"s3://{b}").stdout.splitlines()
        got = {ln[31:]: int(ln[19:30]) for ln in lines}
        self.assertEqual(got, {k: len(v) for k, v in objs.items()})
        p = self.aws("s3", "rm", f"s3://{b}/top.txt")
        self.assertEqual(self.transfer_lines(p.stdout), [f"delete: s3://{b}/top.txt"])
        p = self.aws("s3", "rm", "--recursive", f"s3://{b}/dir/")
        self.assertEqual(self.transfer_lines(p.stdout),
                         [f"delete: s3://{b}/dir/a.txt", f"delete: s3://{b}/dir/sub/b.txt"])
        self.assertEqual(self.keys_and_sizes(b), {"z z.txt": 2})

    def test_aws_s3api(self):
        b = self.make_bucket("api")
        data = b"s3api payload\n" * 100
        src = self.write("p.txt", data)
        etag = '"%s"' % hashlib.md5(data).hexdigest()
        r = self.aws_json("s3api", "put-object", "--bucket", b, "--key", "k/one.txt", "--body", src,
                          "--content-type", "text/plain", "--metadata", "color=red,size=big")
        self.assertEqual(r["ETag"], etag)
        r = self.aws_json("s3api", "head-object", "--bucket", b, "--key", "k/one.txt")
        self.assertEqual(r["ContentLength"], len(data))
        self.assertEqual(r["ContentType"], "text/plain")
        self.assertEqual(r["ETag"], etag)
        self.assertEqual(r["Metadata"], {"color": "red", "size": "big"})
        dst = self.path("got.txt")
        r = self.aws_json("s3api", "get-object", "--bucket", b, "--key", "k/one.txt", dst)
        self.assertEqual(r["ContentLength"], len(data))
        self.assertEqual(r["ETag"], etag)
        with open(dst, "rb") as f:
            self.assertEqual(f.read(), data)
        r = self.aws_json("s3api", "get-object", "--bucket", b, "--key", "k/one.txt", "--range", "bytes=0-3",
                          self.path("part"))
        self.assertEqual(r["ContentRange"], f"bytes 0-3/{len(data)}")
        with open(self.path("part"), "rb") as f:
            self.assertEqual(f.read(), b"s3ap")
        self.aws_json("s3api", "put-object", "--bucket", b, "--key", "k/two.txt", "--body", src)
        self.aws_json("s3api", "put-object", "--bucket", b, "--key", "other", "--body", src)
        r = self.aws_json("s3api", "list-objects-v2", "--bucket", b, "--prefix", "k/")
        self.assertEqual([o["Key"] for o in r["Contents"]], ["k/one.txt", "k/two.txt"])
        self.assertEqual([o["Size"] for o in r["Contents"]], [len(data)] * 2)
        r = self.aws_json("s3api", "list-objects-v2", "--bucket", b, "--delimiter", "/")
        self.assertEqual([p["Prefix"] for p in r["CommonPrefixes"]], ["k/"])
        self.assertEqual([o["Key"] for o in r["Contents"]], ["other"])
        r = self.aws_json("s3api", "delete-objects", "--bucket", b, "--delete",
                          json.dumps({"Objects": [{"Key": "k/one.txt"}, {"Key": "k/two.txt"}]}))
        self.assertEqual(sorted(d["Key"] for d in r["Deleted"]), ["k/one.txt", "k/two.txt"])
        self.assertEqual(self.keys_and_sizes(b), {"other": len(data)})
        p = self.aws("s3api", "head-object", "--bucket", b, "--key", "k/one.txt", check=False)
        self.assertEqual(p.returncode, 254, p.stderr)
        self.assertIn("Not Found", p.stderr)
        p = self.aws("s3api", "get-object", "--bucket", b, "--key", "k/one.txt", self.path("n"), check=False)
        self.assertEqual(p.returncode, 254, p.stderr)
        self.assertIn("NoSuchKey", p.stderr)

    def test_aws_s3_sync(self):
        b = self.make_bucket("sync")
        src = self.path("src")
        expected = {}
        old = time.time() - 3600
        for i in range(50):
            rel = f"sub{i % 5}/deeper{i % 2}/file_{i:02d}.dat" if i % 3 else f"file_{i:02d}.dat"
            data = os.urandom(100 + i * 37)
            p = self.write(os.path.join("src", rel), data)
            os.utime(p, (old, old))
            expected[rel] = data
        p = self.aws("s3", "sync", "--no-progress", src, f"s3://{b}/mirror")
        self.assertEqual(self.transfer_lines(p.stdout), sorted(
            f"upload: LOCAL/{os.path.basename(k)} to s3://{b}/mirror/{k}" for k in expected))
        listed = self.s3.list_objects_v2(Bucket=b, Prefix="mirror/")
        self.assertEqual(listed["KeyCount"], 50)
        self.assertEqual({o["Key"]: (o["Size"], o["ETag"]) for o in listed["Contents"]},
                         {f"mirror/{k}": (len(v), '"%s"' % hashlib.md5(v).hexdigest())
                          for k, v in expected.items()})
        # Nothing changed: nothing to do.
        p = self.aws("s3", "sync", "--no-progress", src, f"s3://{b}/mirror")
        self.assertEqual(p.stdout.strip(), "")
        # Change one, add one, remove one.
        changed = "sub1/deeper1/file_01.dat"
        self.write(os.path.join("src", changed), b"changed and different size")
        self.write(os.path.join("src", "new.txt"), b"new file")
        os.remove(os.path.join(src, "file_03.dat"))
        p = self.aws("s3", "sync", "--no-progress", "--delete", src, f"s3://{b}/mirror")
        self.assertEqual(self.transfer_lines(p.stdout), sorted([
            f"delete: s3://{b}/mirror/file_03.dat",
            f"upload: LOCAL/new.txt to s3://{b}/mirror/new.txt",
            f"upload: LOCAL/file_01.dat to s3://{b}/mirror/{changed}"]))
        self.assertEqual(self.get_body(b, f"mirror/{changed}"), b"changed and different size")
        # And back down: the trees match.
        dst = self.path("dst")
        p = self.aws("s3", "sync", "--no-progress", f"s3://{b}/mirror", dst)
        self.assertEqual(len(self.transfer_lines(p.stdout)), 50)
        self.assertEqual(tree_digest(dst), tree_digest(src))
        self.assertEqual(len(tree_digest(dst)), 50)

    # ---- rclone ---------------------------------------------------------------
    def make_tree(self, name, count=12):
        root = self.path(name)
        files = {}
        for i in range(count):
            rel = f"d{i % 3}/f{i:02d}.txt" if i % 2 else f"top{i:02d}.bin"
            data = os.urandom(i * 1000 + 1)
            self.write(os.path.join(name, rel), data)
            files[rel] = data
        files["big/one-mib.bin"] = os.urandom(MiB + 7)
        self.write(os.path.join(name, "big/one-mib.bin"), files["big/one-mib.bin"])
        files["space name/x y.txt"] = b"spaces"
        self.write(os.path.join(name, "space name/x y.txt"), b"spaces")
        return root, files

    def test_rclone(self):
        b = self.bucket_name("rc")
        self.rclone("mkdir", f"strata:{b}")
        self.assertTrue(self.bucket_exists(b))
        src, files = self.make_tree("rsrc")
        self.rclone("copy", src, f"strata:{b}/data")
        self.assertEqual(self.keys_and_sizes(b), {f"data/{k}": len(v) for k, v in files.items()})
        for k, v in files.items():
            self.assertEqual(self.s3.head_object(Bucket=b, Key=f"data/{k}")["ETag"],
                             '"%s"' % hashlib.md5(v).hexdigest())
        # ls: "<size> <path>" per object.
        out = self.rclone("ls", f"strata:{b}").stdout
        got = {}
        for ln in out.splitlines():
            size, path = ln.strip().split(" ", 1)
            got[path] = int(size)
        self.assertEqual(got, {f"data/{k}": len(v) for k, v in files.items()})
        # lsjson -R: files with sizes and MD5 hashes.
        entries = json.loads(self.rclone("lsjson", "-R", "--hash", f"strata:{b}/data").stdout)
        got = {e["Path"]: (e["Size"], e["Hashes"]["md5"]) for e in entries if not e["IsDir"]}
        self.assertEqual(got, {k: (len(v), hashlib.md5(v).hexdigest()) for k, v in files.items()})
        self.assertEqual(sorted(e["Path"] for e in entries if e["IsDir"]),
                         ["big", "d0", "d1", "d2", "space name"])
        # cat
        p = subprocess.run(["rclone", "--config", self.server.rclone_config(self.home), "cat",
                            f"strata:{b}/data/space name/x y.txt"], capture_output=True, timeout=120,
                           env=self.server.rclone_env())
        self.assertEqual((p.returncode, p.stdout), (0, b"spaces"))
        # check (MD5 on both sides): identical, then one object changed behind rclone's back.
        p = self.rclone("check", src, f"strata:{b}/data")
        self.assertIn("0 differences found", p.stderr)
        self.assertIn(f"{len(files)} matching files", p.stderr)
        changed = bytes([files["top00.bin"][0] ^ 0xFF])  # same size (1 byte), different content
        self.put(b, "data/top00.bin", changed)
        p = self.rclone("check", src, f"strata:{b}/data", check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("1 differences found", p.stderr)
        # copy down and compare trees.
        dst = self.path("rdst")
        self.rclone("copy", f"strata:{b}/data", dst)
        down = tree_digest(dst)
        self.assertEqual(down["top00.bin"], hashlib.sha256(changed).hexdigest())
        self.assertEqual({k: v for k, v in down.items() if k != "top00.bin"},
                         {k: hashlib.sha256(v).hexdigest() for k, v in files.items() if k != "top00.bin"})
        # delete one file, then everything, then the bucket.
        self.rclone("deletefile", f"strata:{b}/data/big/one-mib.bin")
        self.assertNotIn("data/big/one-mib.bin", self.keys_and_sizes(b))
        self.rclone("delete", f"strata:{b}/data/d1")
        self.assertEqual(sorted(k for k in self.keys_and_sizes(b) if k.startswith("data/d1/")), [])
        self.rclone("delete", f"strata:{b}")
        self.assertEqual(self.keys_and_sizes(b), {})
        self.rclone("rmdir", f"strata:{b}")
        self.assertFalse(self.bucket_exists(b))

    # ---- s3cmd ------------------------------------------------------------------
    def test_s3cmd(self):
        b = self.bucket_name("s3c")
        p = self.s3cmd("mb", f"s3://{b}")
        self.assertIn(f"Bucket 's3://{b}/' created", p.stdout)
        self.assertTrue(self.bucket_exists(b))
        small = self.write("small.txt", b"hello from s3cmd\n")
        bigdata_path = self.path("big.bin")
        big_sha = write_random_file(bigdata_path, 20 * MiB)
        self.s3cmd("put", "--disable-multipart", small, f"s3://{b}/docs/small.txt")
        self.s3cmd("put", "--disable-multipart", bigdata_path, f"s3://{b}/big.bin")
        self.assertEqual(self.keys_and_sizes(b), {"docs/small.txt": 17, "big.bin": 20 * MiB})
        # ls shows the prefix as DIR and the object with size; la shows all buckets' objects.
        lines = self.s3cmd("ls", f"s3://{b}").stdout.splitlines()
        self.assertEqual(len(lines), 2, lines)
        self.assertRegex(lines[0], r"^\s+DIR\s+s3://%s/docs/$" % re.escape(b))
        self.assertRegex(lines[1], r"^\d{4}-\d\d-\d\d \d\d:\d\d\s+%d\s+s3://%s/big\.bin$" % (20 * MiB, re.escape(b)))
        lines = self.s3cmd("ls", "--recursive", f"s3://{b}").stdout.splitlines()
        self.assertEqual([ln.split()[-1] for ln in lines], [f"s3://{b}/big.bin", f"s3://{b}/docs/small.txt"])
        self.assertIn(f"s3://{b}", self.s3cmd("ls").stdout)
        la = self.s3cmd("la").stdout
        self.assertIn(f"s3://{b}/big.bin", la)
        self.assertIn(f"s3://{b}/docs/", la)
        # get
        self.s3cmd("get", f"s3://{b}/docs/small.txt", self.path("small.down"))
        with open(self.path("small.down"), "rb") as f:
            self.assertEqual(f.read(), b"hello from s3cmd\n")
        self.s3cmd("get", f"s3://{b}/big.bin", self.path("big.down"))
        self.assertEqual(sha256_file(self.path("big.down")), big_sha)
        # info shows the MD5 of a single-part upload.
        info = self.s3cmd("info", f"s3://{b}/docs/small.txt").stdout
        self.assertIn(hashlib.md5(b"hello from s3cmd\n").hexdigest(), info)
        # rb refuses a non-empty bucket.
        p = self.s3cmd("rb", f"s3://{b}", check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("BucketNotEmpty", p.stdout + p.stderr)
        p = self.s3cmd("del", f"s3://{b}/docs/small.txt")
        self.assertIn(f"delete: 's3://{b}/docs/small.txt'", p.stdout)
        self.s3cmd("del", f"s3://{b}/big.bin")
        self.assertEqual(self.keys_and_sizes(b), {})
        p = self.s3cmd("rb", f"s3://{b}")
        self.assertIn(f"Bucket 's3://{b}/' removed", p.stdout)
        self.assertFalse(self.bucket_exists(b))

    # ---- 1 GiB through boto3 ----------------------------------------------------
    def test_boto3_1gib_streaming(self):
        b = self.make_bucket("huge")
        src = self.path("1gib.bin")
        size = 1024 * MiB
        digest = write_random_file(src, size)
        with open(src, "rb") as f:
            r = self.s3.put_object(Bucket=b, Key="huge.bin", Body=f)
        self.assertEqual(r["ETag"], '"%s"' % md5_file(src))
        os.remove(src)  # keep disk use bounded
        g = self.s3.get_object(Bucket=b, Key="huge.bin")
        self.assertEqual(g["ContentLength"], size)
        h = hashlib.sha256()
        got = 0
        dst = self.path("1gib.down")
        with open(dst, "wb") as f:
            for chunk in g["Body"].iter_chunks(MiB):
                h.update(chunk)
                f.write(chunk)
                got += len(chunk)
        self.assertEqual(got, size)
        self.assertEqual(h.hexdigest(), digest)
        self.assertEqual(sha256_file(dst), digest)
        r = self.s3.get_object(Bucket=b, Key="huge.bin", Range=f"bytes={size - 10}-")
        self.assertEqual(r["ContentRange"], f"bytes {size - 10}-{size - 1}/{size}")
        with open(dst, "rb") as f:
            f.seek(size - 10)
            self.assertEqual(r["Body"].read(), f.read())
        self.s3.delete_object(Bucket=b, Key="huge.bin")
        self.assertServerHealthy()

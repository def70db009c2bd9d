"""strata.loader (issue 16, docs/model-loading.md) against a real server: checkpoints of 1, 12
and 128 shards from the deterministic generator load with every tensor's bytes as generated;
every malformed variant fails with a clear error and no tensors; a PyTorch model saved with
save_safetensors (parallel multipart uploads with CRC32 checksums) and loaded back gives
identical outputs, its checksums verified; an object overwritten mid-load fails the load when
the bucket keeps no versions and keeps serving the first version when it does, never a mix;
a server killed mid-load is an error, not a partial state dict; a connection that stalls is
retried. The S3 side of what loaders rely on is checked too: a range running past the end
returns the bytes there are with the true Content-Range."""
import concurrent.futures
import os
import re
import socket
import subprocess
import sys
import threading
import time
import unittest

import torch

import checkpoint_gen as gen
import harness
from harness import ACCESS_KEY, SECRET_KEY, Server, unique_name

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "client", "python"))
from strata import loader as L  # noqa: E402
from strata import s3http  # noqa: E402


def as_bytes(t):
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


class LoaderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(extra_args=["--kv-listen", "off"]).start()
        cls.s3 = cls.server.boto3_client()

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def kw(self, **extra):
        return dict(endpoint_url=self.server.endpoint, access_key=ACCESS_KEY,
                    secret_key=SECRET_KEY, **extra)

    def upload(self, files, prefix="ckpt/"):
        b = unique_name("load")
        self.s3.create_bucket(Bucket=b)
        for name, body in files.items():
            self.s3.put_object(Bucket=b, Key=prefix + name, Body=body)
        return b

    def check(self, state, expect, seed=7):
        self.assertEqual(set(state), set(expect))
        for name, (dtype, shape) in expect.items():
            t = state[name]
            self.assertEqual(tuple(t.shape), shape, name)
            self.assertEqual(as_bytes(t), gen.expected_bytes(seed, name, len(as_bytes(t))), name)
            self.assertEqual(t.element_size() * t.numel(),
                             gen.ITEMSIZE[dtype] * (shape[0] * (shape[1] if len(shape) > 1 else 1)))

    def test_sharded_checkpoints_load_exactly(self):
        for shards, per in ((1, 6), (12, 4), (128, 2)):
            with self.subTest(shards=shards):
                files, expect = gen.checkpoint(shards, per)
                b = self.upload(files)
                # Small groups and ranges, so that tensors straddle ranges and groups.
                loader = L.Loader(f"s3://{b}/ckpt/", max_in_flight=8, range_bytes=5000,
                                  group_bytes=20000, **self.kw())
                try:
                    state = loader.load()
                finally:
                    loader.close()
                self.check(state, expect)
                self.assertEqual(loader.stats["shards"], shards)
                self.assertEqual(loader.stats["retries"], 0)
        # One object named directly, and the iterator form.
        files, expect = gen.checkpoint(1, 5)
        b = self.upload(files)
        got = dict(L.iter_safetensors(f"s3://{b}/ckpt/model.safetensors", **self.kw()))
        self.check(got, expect)

    def test_a_load_lists_every_page_and_makes_no_boto3_client(self):
        # No index: the shards are found by listing, here on the second page (1,000 keys a
        # page), under a name that needs URL encoding in the listing.
        files, expect = gen.checkpoint(1, 3)
        b = self.upload({"z b+c%.safetensors": files["model.safetensors"]})
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            list(pool.map(lambda i: self.s3.put_object(Bucket=b, Key=f"ckpt/filler-{i:04d}"),
                          range(1001)))
        loader = L.Loader(f"s3://{b}/ckpt/", **self.kw())
        try:
            state = loader.load()
            # Index, listing, checksum HEAD: all on the lean client; boto3's client (its S3
            # model alone takes ~55 ms to load) is made for uploads only.
            self.assertIsNone(loader._src._ep._s3)
        finally:
            loader.close()
        self.check(state, expect)
        self.assertEqual(loader.stats["shards"], 1)

    def test_malformed_variants_fail_clearly(self):
        for variant, (body, phrase) in gen.malformed().items():
            with self.subTest(variant=variant):
                b = self.upload({"model.safetensors": body})
                with self.assertRaises(L.LoadError) as cm:
                    L.load_safetensors(f"s3://{b}/ckpt/", **self.kw())
                self.assertIn(phrase, str(cm.exception))
        # An index naming a tensor its shard lacks, and a missing checkpoint.
        files, _ = gen.checkpoint(2, 2)
        files["model.safetensors.index.json"] = (
            b'{"weight_map": {"ghost": "model-00001-of-00002.safetensors"}}')
        b = self.upload(files)
        with self.assertRaisesRegex(L.LoadError, "no such tensor"):
            L.load_safetensors(f"s3://{b}/ckpt/", **self.kw())
        with self.assertRaisesRegex(L.LoadError, "no .*safetensors"):
            L.load_safetensors(f"s3://{b}/nothing-here/", **self.kw())
        with self.assertRaisesRegex(L.LoadError, "NoSuchBucket"):  # the S3 error code, as a LoadError
            L.load_safetensors(f"s3://{unique_name('absent')}/x/", **self.kw())

    def test_saved_model_loads_back_with_identical_outputs_and_verified_checksums(self):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(),
                                    torch.nn.Linear(1024, 2048), torch.nn.LayerNorm(2048),
                                    torch.nn.Linear(2048, 16))
        model.half()  # 2-byte dtype
        b = unique_name("save")
        self.s3.create_bucket(Bucket=b)
        # ~5.3 MiB of weights in shards of at most 3 MiB... one tensor is 4 MiB: a shard of
        # its own, uploaded in parts of 5 MiB - so also one single-part and one multi-part.
        keys = L.save_safetensors(model.state_dict(), f"s3://{b}/m/", max_shard_bytes=3 << 20,
                                  part_bytes=5 << 20, **self.kw())
        self.assertEqual(keys[-1], "m/model.safetensors.index.json")
        self.assertGreater(len(keys), 2)
        loader = L.Loader(f"s3://{b}/m/", **self.kw())
        try:
            state = loader.load()
        finally:
            loader.close()
        self.assertEqual(loader.stats["verified_shards"], len(keys) - 1)
        other = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(),
                                    torch.nn.Linear(1024, 2048), torch.nn.LayerNorm(2048),
                                    torch.nn.Linear(2048, 16)).half()
        other.load_state_dict(state)
        x = torch.randn(4, 512).half()
        with torch.no_grad():
            self.assertTrue(torch.equal(model.float()(x.float()), other.float()(x.float())))
        # A big single tensor crosses part boundaries: multipart with composite checksums.
        big = {"w": torch.arange(3 << 20, dtype=torch.float32)}  # 12 MiB
        L.save_safetensors(big, f"s3://{b}/big.safetensors", part_bytes=5 << 20, **self.kw())
        head = self.s3.head_object(Bucket=b, Key="big.safetensors", ChecksumMode="ENABLED")
        self.assertTrue(head["ChecksumCRC32"].endswith("-3"), head.get("ChecksumCRC32"))
        loader = L.Loader(f"s3://{b}/big.safetensors", **self.kw())
        try:
            got = loader.load()
        finally:
            loader.close()
        self.assertTrue(torch.equal(got["w"], big["w"]))
        self.assertEqual(loader.stats["verified_shards"], 1)

    def test_a_flipped_byte_on_the_wire_fails_the_checksum(self):
        b = unique_name("flip")
        self.s3.create_bucket(Bucket=b)
        L.save_safetensors({"w": torch.ones(1000)}, f"s3://{b}/x.safetensors", **self.kw())
        loader = L.Loader(f"s3://{b}/x.safetensors", **self.kw())
        real = loader._src._ep.ranges.get_range

        def flipping(*a, **k):
            r = real(*a, **k)
            a[3][10] ^= 0x01  # the destination buffer: as if a byte flipped in transit
            return r
        loader._src._ep.ranges.get_range = flipping
        with self.assertRaises(L.ChecksumMismatch):
            loader.load()
        loader.close()

    def overwrite_during_load(self, versioned):
        files, expect = gen.checkpoint(1, 8, seed=7, shape=(256, 256))
        b = self.upload(files, prefix="")
        if versioned:
            self.s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
            self.s3.put_object(Bucket=b, Key="model.safetensors", Body=files["model.safetensors"])
        other, _ = gen.checkpoint(1, 8, seed=8, shape=(256, 256))  # same layout, other bytes
        loader = L.Loader(f"s3://{b}/model.safetensors", max_in_flight=1, range_bytes=64 << 10,
                          group_bytes=256 << 10, **self.kw())
        real, calls = loader._src._ep.ranges.get_range, [0]

        def overwriting(*a, **k):
            calls[0] += 1
            if calls[0] == 3:  # between two ranges of one load
                self.s3.put_object(Bucket=b, Key="model.safetensors", Body=other["model.safetensors"])
            return real(*a, **k)
        loader._src._ep.ranges.get_range = overwriting
        return loader, expect

    def test_an_overwrite_mid_load_fails_an_unversioned_load(self):
        loader, _ = self.overwrite_during_load(versioned=False)
        with self.assertRaisesRegex(L.LoadError, "changed during the load"):
            loader.load()
        loader.close()

    def test_a_versioned_load_stays_on_the_version_it_began_with(self):
        loader, expect = self.overwrite_during_load(versioned=True)
        try:
            state = loader.load()
        finally:
            loader.close()
        self.check(state, expect, seed=7)  # all of seed 7's bytes, none of seed 8's

    def test_a_server_killed_mid_load_is_an_error(self):
        server = Server(extra_args=["--kv-listen", "off"]).start()
        self.addCleanup(server.cleanup)
        s3 = server.boto3_client()
        s3.create_bucket(Bucket="killed")
        files, _ = gen.checkpoint(1, 8, shape=(256, 256))
        s3.put_object(Bucket="killed", Key="model.safetensors", Body=files["model.safetensors"])
        loader = L.Loader("s3://killed/model.safetensors", endpoint_url=server.endpoint,
                          access_key=ACCESS_KEY, secret_key=SECRET_KEY, max_in_flight=2,
                          range_bytes=64 << 10, retries=2, verify=False)
        real, calls = loader._src._ep.ranges.get_range, [0]

        def killing(*a, **k):
            calls[0] += 1
            if calls[0] == 4:
                server.kill()
            return real(*a, **k)
        loader._src._ep.ranges.get_range = killing
        got = None
        with self.assertRaisesRegex(L.LoadError, "gave up after 3 tries"):
            got = loader.load()
        self.assertIsNone(got)
        loader.close()

    def test_a_stalled_connection_is_retried(self):
        files, expect = gen.checkpoint(1, 4)
        b = self.upload(files, prefix="")
        proxy = StallingProxy(self.server.port, stall_request=2, stall_s=3)
        self.addCleanup(proxy.close)
        loader = L.Loader(f"s3://{b}/model.safetensors", stall_timeout=0.5,
                          range_bytes=4096, max_in_flight=1,
                          endpoint_url=f"http://127.0.0.1:{proxy.port}",
                          access_key=ACCESS_KEY, secret_key=SECRET_KEY)
        self.addCleanup(loader.close)
        self.check(loader.load(), expect)
        self.assertEqual(proxy.stalled, 1)  # the second data range's reply was held back
        self.assertGreaterEqual(loader.stats["retries"], 1)  # and asked for again

    def test_a_slow_listing_is_waited_for_not_failed(self):
        # The stall timeout is for data ranges; a listing page may take the server longer.
        files, expect = gen.checkpoint(1, 2)
        b = self.upload(files)  # ckpt/model.safetensors, no index: found by listing
        proxy = StallingProxy(self.server.port, stall_request=1, stall_s=1.5,
                              matches=lambda head: b"list-type=2" in head)
        self.addCleanup(proxy.close)
        loader = L.Loader(f"s3://{b}/ckpt/", stall_timeout=0.5,
                          endpoint_url=f"http://127.0.0.1:{proxy.port}",
                          access_key=ACCESS_KEY, secret_key=SECRET_KEY)
        self.addCleanup(loader.close)
        self.check(loader.load(), expect)
        self.assertEqual(proxy.stalled, 1)
        self.assertEqual(proxy.matched, 1)  # waited for, not timed out and asked again

    def test_a_listing_that_goes_round_in_circles_fails(self):
        from strata import loader_sources
        src = loader_sources.S3Source("s3://b/p/", self.server.endpoint, ACCESS_KEY, SECRET_KEY,
                                      None, 1.0, 4)
        self.addCleanup(src.close)
        page = (b'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult '
                b'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>true</IsTruncated>'
                b'<Contents><Key>p/a.safetensors</Key></Contents>'
                b'<NextContinuationToken>again</NextContinuationToken></ListBucketResult>')
        calls = []

        def control(method, bucket, key=None, query=None, headers=None):
            calls.append(query)
            if key is not None:  # the index
                raise s3http.S3Error(404, "NoSuchKey", "no index")
            return 200, {}, page
        src._ep.control = control
        with self.assertRaisesRegex(L.LoadError, "listing failed.*NextContinuationToken"):
            src.shard_keys()
        # The index, then two pages: the second one's token is the one just used.
        self.assertEqual(len(calls), 3)
        self.assertEqual(calls[2]["continuation-token"], "again")

    def test_ranges_past_the_end_return_what_there_is(self):
        b = unique_name("rng")
        self.s3.create_bucket(Bucket=b)
        self.s3.put_object(Bucket=b, Key="o", Body=bytes(range(256)) * 4)  # 1024 bytes
        r = self.s3.get_object(Bucket=b, Key="o", Range="bytes=1000-99999")
        self.assertEqual(r["ContentRange"], "bytes 1000-1023/1024")
        self.assertEqual(r["Body"].read(), (bytes(range(256)) * 4)[1000:])
        r = self.s3.get_object(Bucket=b, Key="o", Range="bytes=0-7")  # the 8-byte probe
        self.assertEqual(r["ContentRange"], "bytes 0-7/1024")
        # A pinned range whose ETag no longer matches: 412, as the loader relies on.
        etag = r["ETag"]
        self.s3.put_object(Bucket=b, Key="o", Body=b"other")
        with self.assertRaises(Exception) as cm:
            self.s3.get_object(Bucket=b, Key="o", Range="bytes=0-7", IfMatch=etag)
        self.assertEqual(cm.exception.response["Error"]["Code"], "PreconditionFailed")

    def test_cli_prints_progress_summary_and_tensors(self):
        files, expect = gen.checkpoint(3, 2)
        b = self.upload(files)
        root = os.path.join(os.path.dirname(__file__), "..", "..")
        env = dict(os.environ, AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY,
                   PYTHONPATH=os.path.join(root, "client", "python"))
        r = subprocess.run([sys.executable, "-m", "strata.loader", f"s3://{b}/ckpt/", "--verify",
                            "--endpoint-url", self.server.endpoint], capture_output=True,
                           text=True, env=env, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), len(expect))
        self.assertIn("loaded 6 tensors", r.stderr)
        # `strata load` runs the same loader (the package found beside the binary).
        r = subprocess.run([self.server.bin, "load", f"s3://{b}/ckpt/", "--raw",
                            "--endpoint-url", self.server.endpoint], capture_output=True,
                           text=True, env=dict(env, PYTHONPATH=""), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("0 tensors, ", r.stderr)
        self.assertIn("from 3 shards", r.stderr)
        r = subprocess.run([sys.executable, "-m", "strata.loader", f"s3://{b}/missing/",
                            "--endpoint-url", self.server.endpoint], capture_output=True,
                           text=True, env=env, timeout=120)
        self.assertEqual(r.returncode, 1)
        self.assertIn("strata load:", r.stderr)


class StallingProxy:
    """A TCP proxy to the server that holds back the reply to the `stall_request`-th request
    whose head `matches` (default: a ranged GET of data, a Range not starting at byte 0, not a
    header probe) for `stall_s` seconds, then forwards the rest of that connection's replies
    (a stalled request). `matched`: how many requests matched."""

    def __init__(self, port, stall_request, stall_s, matches=None):
        self.target, self.stall_request, self.stall_s = port, stall_request, stall_s
        self.matches = matches or (lambda head: any(
            int(m[1]) > 0 for m in re.finditer(rb"(?im)^range: bytes=(\d+)-", head)))
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.matched = self.stalled = 0
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.pipe, args=(c,), daemon=True).start()

    def pipe(self, c):
        s = socket.create_connection(("127.0.0.1", self.target))
        stall = threading.Event()

        def up():
            try:
                while data := c.recv(65536):
                    # One request at a time per connection (one thread, keep-alive): the
                    # head arrives whole, and the replies before it were all read.
                    if self.matches(data):
                        with self.lock:
                            self.matched += 1
                            if self.matched == self.stall_request:
                                stall.set()
                    s.sendall(data)
            except OSError:
                pass
        threading.Thread(target=up, daemon=True).start()
        try:
            while data := s.recv(65536):
                if stall.is_set():
                    stall.clear()
                    self.stalled += 1
                    time.sleep(self.stall_s)
                c.sendall(data)
        except OSError:
            pass
        finally:
            c.close()
            s.close()

    def close(self):
        self.closed = True
        self.sock.close()


if __name__ == "__main__":
    unittest.main()

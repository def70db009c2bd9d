"""strata.loader over the KV protocol (strata-kv://host:port/name, strata.loader_kv;
docs/model-loading.md): the deterministic checkpoints of 1, 12 and 128 shards saved into a KV
namespace load back exactly through the same plan as over S3; a PyTorch model saved and loaded
gives identical outputs; every shard is verified against the manifest's CRC32C (a flipped
byte fails the load, never a wrong tensor); a missing checkpoint, an unfinished save (shards
without a manifest), an evicted shard and bad credentials are clear errors; saving over an
existing name is refused; a dropped connection is retried."""
import os
import sys
import unittest

import torch

import checkpoint_gen as gen
import kvtest
from harness import ACCESS_KEY, SECRET_KEY, unique_name

from strata import loader as L
from strata import loader_kv as LK
from strata import safetensors_format as stf


def as_bytes(t):
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


def state_of(files):
    """The tensors of a generated checkpoint's shards, as torch tensors (through the format
    parser, independent of the loader)."""
    out = {}
    for name, body in files.items():
        if not name.endswith(".safetensors"):
            continue
        n = int.from_bytes(body[:8], "little")
        h = stf.parse_header(body[8:8 + n], len(body))
        for t in h.tensors:
            raw = body[h.data_start + t.begin:h.data_start + t.end]
            dt = getattr(torch, stf.DTYPES[t.dtype][1])
            x = torch.frombuffer(bytearray(raw), dtype=dt) if raw else torch.empty(0, dtype=dt)
            out[t.name] = x.reshape(t.shape)
    return out


class LoaderKvTest(kvtest.KvTestCase):
    def uri(self, name=None):
        return f"strata-kv://127.0.0.1:{self.server.kv_port}/{name or unique_name('ckpt')}"

    def kw(self, **extra):
        return dict(access_key=ACCESS_KEY, secret_key=SECRET_KEY, **extra)

    def test_a_manifest_larger_than_the_first_buffer_is_read_whole(self):
        # The manifest is read into a buffer that grows on BUFFER_TOO_SMALL (not one of the
        # largest size allowed, 64 MiB of fresh memory per load); one over the limit fails.
        files, expect = gen.checkpoint(12, 2)
        state = state_of(files)
        uri = self.uri()
        L.save_safetensors(state, uri, max_shard_bytes=max(
            1, sum(len(b) for b in files.values()) // 12), **self.kw())
        first, most = LK.FIRST_MANIFEST_BYTES, LK.MAX_MANIFEST_BYTES
        self.addCleanup(setattr, LK, "FIRST_MANIFEST_BYTES", first)
        self.addCleanup(setattr, LK, "MAX_MANIFEST_BYTES", most)
        LK.FIRST_MANIFEST_BYTES = 16  # 16, 128, 1024, ... bytes: several tries
        got = L.load_safetensors(uri, **self.kw())
        self.assertEqual(set(got), set(expect))
        for name in expect:
            self.assertEqual(as_bytes(got[name]), as_bytes(state[name]), name)
        LK.MAX_MANIFEST_BYTES = 128
        with self.assertRaisesRegex(L.LoadError, "over 128 bytes, not a checkpoint manifest"):
            L.load_safetensors(uri, **self.kw())

    def test_checkpoints_round_trip_exactly(self):
        for shards, per in ((1, 6), (12, 4), (128, 2)):
            with self.subTest(shards=shards):
                files, expect = gen.checkpoint(shards, per)
                state = state_of(files)
                uri = self.uri()
                written = L.save_safetensors(state, uri, max_shard_bytes=max(
                    1, sum(len(b) for b in files.values()) // shards), **self.kw())
                self.assertEqual(written[-1], LK.MANIFEST_NAME)
                # Small groups and ranges: tensors straddle ranges and groups.
                loader = L.Loader(uri, max_in_flight=8, range_bytes=5000, group_bytes=20000,
                                  **self.kw())
                try:
                    got = loader.load()
                finally:
                    loader.close()
                self.assertEqual(set(got), set(expect))
                for name in expect:
                    self.assertEqual(as_bytes(got[name]), as_bytes(state[name]), name)
                    self.assertEqual(got[name].dtype, state[name].dtype, name)
                    self.assertEqual(tuple(got[name].shape), tuple(state[name].shape), name)
                self.assertEqual(loader.stats["shards"], len(written) - 1)
                self.assertEqual(loader.stats["verified_shards"], loader.stats["shards"])
                self.assertEqual(loader.stats["retries"], 0)

    def test_a_model_saved_and_loaded_gives_identical_outputs(self):
        torch.manual_seed(3)
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                                    torch.nn.Linear(128, 16)).to(torch.bfloat16)
        uri = self.uri()
        L.save_safetensors(model.state_dict(), uri, max_shard_bytes=20000, **self.kw())
        names = [n for n, _ in L.iter_safetensors(uri, **self.kw())]
        self.assertEqual(sorted(names), sorted(model.state_dict()))
        twin = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                                   torch.nn.Linear(128, 16)).to(torch.bfloat16)
        twin.load_state_dict(L.load_safetensors(uri, **self.kw()))
        x = torch.randn(4, 64).to(torch.bfloat16)
        self.assertTrue(torch.equal(model(x), twin(x)))

    def test_a_flipped_byte_fails_the_load(self):
        files, _ = gen.checkpoint(2, 3)
        uri = self.uri()
        L.save_safetensors(state_of(files), uri, max_shard_bytes=1, **self.kw())
        loader = L.Loader(uri, range_bytes=4096, **self.kw())
        real = LK.KvSource.get_range

        def flipping(src, file_name, offset, dest):
            n = real(src, file_name, offset, dest)
            if offset > 4096 and len(dest):
                dest[0] ^= 0x01
            return n

        LK.KvSource.get_range = flipping
        try:
            with self.assertRaises(L.ChecksumMismatch):
                loader.load()
        finally:
            LK.KvSource.get_range = real
            loader.close()

    def test_missing_unfinished_evicted_and_unauthorized(self):
        with self.assertRaisesRegex(L.LoadError, "no checkpoint saved under this name"):
            L.load_safetensors(self.uri(), **self.kw())
        # Shards stored, the manifest not (a save that died): still no checkpoint.
        files, _ = gen.checkpoint(2, 2)
        name = unique_name("half")
        conn = self.server.client()
        ns = conn.open_namespace(**LK.namespace_fields(name))
        body = next(b for f, b in files.items() if f.endswith(".safetensors"))
        conn.put(ns, [LK.block_key("model.safetensors")], None, [body])
        with self.assertRaisesRegex(L.LoadError, "did not finish"):
            L.load_safetensors(self.uri(name), **self.kw())
        # A complete checkpoint whose shard is then deleted (as eviction would).
        uri = self.uri()
        L.save_safetensors(state_of(files), uri, max_shard_bytes=1, **self.kw())
        src = LK.KvSource(uri, **self.kw())
        try:
            victim = src.shard_keys()[0][0]
        finally:
            src.close()
        ns2 = conn.open_namespace(**LK.namespace_fields(uri.rsplit("/", 1)[1]))
        conn.delete(ns2, [LK.block_key(victim)])
        with self.assertRaisesRegex(L.LoadError, "not stored"):
            L.load_safetensors(uri, **self.kw())
        conn.close()
        with self.assertRaisesRegex(L.LoadError, "AUTH|auth"):
            L.load_safetensors(uri, access_key=ACCESS_KEY, secret_key="wrong")
        with self.assertRaises(ValueError):
            LK.parse_uri("strata-kv://127.0.0.1:1/")

    def test_saving_over_an_existing_checkpoint_is_refused(self):
        files, _ = gen.checkpoint(1, 2)
        uri = self.uri()
        L.save_safetensors(state_of(files), uri, **self.kw())
        with self.assertRaisesRegex(L.LoadError, "already stored"):
            L.save_safetensors(state_of(files), uri, **self.kw())
        self.assertEqual(len(L.load_safetensors(uri, **self.kw())), 2)

    def test_a_dropped_connection_is_retried(self):
        files, expect = gen.checkpoint(3, 2)
        uri = self.uri()
        L.save_safetensors(state_of(files), uri, max_shard_bytes=1, **self.kw())
        loader = L.Loader(uri, max_in_flight=2, range_bytes=4096, **self.kw())
        real, calls = LK.KvSource._get, [0]

        def dropping(src, *a, **k):
            calls[0] += 1
            if calls[0] == 4:
                src._conns.get().close()  # this thread's connection goes away
                raise ConnectionError("injected: connection lost")
            return real(src, *a, **k)

        LK.KvSource._get = dropping
        try:
            got = loader.load()
        finally:
            LK.KvSource._get = real
            loader.close()
        self.assertEqual(set(got), set(expect))
        self.assertEqual(loader.stats["retries"], 1)


if __name__ == "__main__":
    unittest.main()

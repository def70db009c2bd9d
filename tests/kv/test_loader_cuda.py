"""strata.loader's device path through the C++ pinned-buffer ring (strata_cuda,
client/cuda/pinned_ring.h; docs/model-loading.md, "Into GPU memory"). No GPU here: the ring
runs over the stand-in CUDA runtime (libstrata_fake_cudart.so, $STRATA_FAKE_CUDART), whose
"device memory" is host memory and whose streams run each copy late on a thread of their
own, so the loader's whole device path (group copies queued by the worker threads, tickets
waited for before tensors are handed out, device buffers viewed as tensors) is checked byte
for byte. With the real runtime and no device, device="cuda" with transfer="ring" must fail
clearly."""
import ctypes
import os
import unittest
import warnings

import torch

import checkpoint_gen as gen
import kvtest
from harness import ACCESS_KEY, SECRET_KEY, unique_name

from strata import loader as L
from strata import loader_device as LD
from test_loader_kv import as_bytes, state_of

FAKE = os.environ.get("STRATA_FAKE_CUDART", "")


def fake():
    lib = ctypes.CDLL(FAKE)  # the same handle the ring dlopen()s by this path
    lib.fake_cudart_configure.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_uint64,
                                          ctypes.c_uint64]
    return lib


@unittest.skipUnless(FAKE and os.path.exists(FAKE), "STRATA_FAKE_CUDART not built")
class LoaderRingTest(kvtest.KvTestCase):
    def uri(self):
        return f"strata-kv://127.0.0.1:{self.server.kv_port}/{unique_name('ring')}"

    def kw(self, **extra):
        return dict(access_key=ACCESS_KEY, secret_key=SECRET_KEY, **extra)

    def ring(self, **kw):
        return LD.RingToDevice(torch, "cpu", runtime=FAKE, **kw)

    def round_trip(self, state):
        """`state` saved, then loaded back through a fresh ring."""
        uri = self.uri()
        L.save_safetensors(state, uri, **self.kw())
        ring = self.ring()
        try:
            return L.load_safetensors(uri, device="cpu", transfer=ring, **self.kw())
        finally:
            ring.close()

    def tearDown(self):
        fake().fake_cudart_configure(1, 0, 0, 0)
        super().tearDown()

    def test_checkpoints_reach_the_device_exactly_through_the_ring(self):
        fake().fake_cudart_configure(1, 200, 0, 0)  # every copy lands 200 us late
        for shards, per in ((1, 6), (12, 4)):
            with self.subTest(shards=shards):
                files, expect = gen.checkpoint(shards, per)
                state = state_of(files)
                uri = self.uri()
                L.save_safetensors(state, uri, max_shard_bytes=max(
                    1, sum(len(b) for b in files.values()) // shards), **self.kw())
                ring = self.ring(slot_mib=4096 / (1 << 20), slots=3)  # 4 KiB slots
                loader = L.Loader(uri, max_in_flight=8, range_bytes=5000, group_bytes=20000,
                                  **self.kw())
                try:
                    got = loader.load(device="cpu", transfer=ring)
                    st = ring.ring.stats()
                finally:
                    loader.close()
                    ring.close()
                self.assertEqual(set(got), set(expect))
                for name in expect:
                    self.assertEqual(as_bytes(got[name]), as_bytes(state[name]), name)
                    self.assertEqual(got[name].dtype, state[name].dtype, name)
                    self.assertEqual(tuple(got[name].shape), tuple(state[name].shape), name)
                # Every tensor byte went through the ring, in slot-sized pieces.
                data = sum(state[n].numel() * state[n].element_size() for n in state)
                self.assertEqual(st["bytes"], data)
                self.assertGreaterEqual(st["pieces"], data // 4096)
                self.assertGreater(st["slot_waits"], 0)

    def test_a_tensor_at_an_unaligned_offset_is_placed_right(self):
        # A 3-byte U8 tensor puts the F32 after it at an odd offset: no dtype view of the
        # device buffer there, so that tensor is copied out of it.
        state = {"a": torch.tensor([1, 2, 3], dtype=torch.uint8),
                 "b": torch.arange(10, dtype=torch.float32) * 1.5,
                 "c": torch.arange(6, dtype=torch.int16).reshape(2, 3)}
        got = self.round_trip(state)
        for name, x in state.items():
            self.assertTrue(torch.equal(got[name], x), name)

    def test_empty_tensors_and_a_shard_of_nothing_but_them(self):
        state = {"e": torch.empty(0), "z": torch.empty(2, 0, dtype=torch.int64)}
        got = self.round_trip(state)
        for name, x in state.items():
            self.assertEqual(tuple(got[name].shape), tuple(x.shape), name)
            self.assertEqual(got[name].dtype, x.dtype, name)

    def test_a_load_abandoned_midway_leaves_no_copy_running(self):
        fake().fake_cudart_configure(1, 300, 0, 0)
        files, _ = gen.checkpoint(12, 4)
        uri = self.uri()
        L.save_safetensors(state_of(files), uri, max_shard_bytes=1, **self.kw())
        ring = self.ring(slot_mib=0.01, slots=2)
        try:
            it = L.iter_safetensors(uri, device="cpu", transfer=ring, group_bytes=8192,
                                    **self.kw())
            name, first = next(it)
            it.close()  # the consumer stops: the loader drains the ring before it lets go
            self.assertEqual(ring._in_flight, {})
            ring.ring.wait(0)  # still usable, not broken
        finally:
            ring.close()
        ring.close()  # twice is harmless

    def test_a_model_loaded_through_the_ring_gives_identical_outputs(self):
        torch.manual_seed(5)
        model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(),
                                    torch.nn.Linear(64, 8))
        uri = self.uri()
        L.save_safetensors(model.state_dict(), uri, max_shard_bytes=6000, **self.kw())
        twin = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(),
                                   torch.nn.Linear(64, 8))
        ring = self.ring(slot_mib=0.01, slots=2)
        try:
            twin.load_state_dict(L.load_safetensors(uri, device="cpu", transfer=ring,
                                                    group_bytes=4096, **self.kw()))
        finally:
            ring.close()
        x = torch.randn(3, 32)
        self.assertTrue(torch.equal(model(x), twin(x)))

    def test_a_failed_copy_fails_the_load_and_returns_nothing(self):
        files, _ = gen.checkpoint(3, 3)
        uri = self.uri()
        L.save_safetensors(state_of(files), uri, max_shard_bytes=1, **self.kw())
        for refused, on_device in ((2, 0), (0, 3)):
            with self.subTest(refused=refused, on_device=on_device):
                fake().fake_cudart_configure(1, 100, refused, on_device)
                ring = self.ring(slot_mib=0.01, slots=2)
                got = None
                try:
                    with self.assertRaisesRegex(L.LoadError, "copy to cpu failed: .*(invalid "
                                                "argument|unspecified launch failure)"):
                        got = L.load_safetensors(uri, device="cpu", transfer=ring,
                                                 group_bytes=8192, **self.kw())
                finally:
                    ring.close()
                self.assertIsNone(got)


class LoaderDeviceChoiceTest(unittest.TestCase):
    def test_transfer_must_be_known(self):
        with self.assertRaises(ValueError):
            LD.open_transfer(torch, "cuda", "dma")

    def test_the_cpu_needs_no_transfer_and_other_devices_use_to(self):
        self.assertIsNone(LD.open_transfer(torch, "cpu", "auto"))
        self.assertEqual(LD.open_transfer(torch, "meta", "auto").name, "to")
        # The ring copies host to CUDA device memory; another device only with a stand-in.
        with self.assertRaisesRegex(L.LoadError, "copies to CUDA devices, not meta"):
            LD.open_transfer(torch, "meta", "ring")

    @unittest.skipIf(torch.cuda.is_available(), "this machine has a CUDA device")
    def test_ring_without_a_cuda_device_is_a_clear_error(self):
        env = os.environ.pop("STRATA_CUDART", None)
        try:
            with self.assertRaisesRegex(L.LoadError, "pinned ring for cuda.*(CUDA|cuda)"):
                LD.open_transfer(torch, "cuda", "ring")
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                t = LD.open_transfer(torch, "cuda", "auto")
            self.assertEqual(t.name, "to")  # and .to("cuda") then fails in torch, loudly
            self.assertTrue(any("moving tensors with .to(cuda)" in str(x.message) for x in w))
        finally:
            if env is not None:
                os.environ["STRATA_CUDART"] = env


if __name__ == "__main__":
    unittest.main()

"""The vLLM model-loader plugin (strata/vllm_loader.py) driven the way vLLM drives a load
format: the vllm.general_plugins entry point (from client/python/pyproject.toml) imported,
get_model_loader(LoadConfig(load_format="strata", model_loader_extra_config=...)),
download_model(model_config), then load_model(vllm_config=..., model_config=...) building an
architecture registered with ModelRegistry.register_model and handing load_weights a model
whose load_weights consumes (name, tensor) pairs like vLLM's models. Against vLLM 0.33's
interface stubs (tests/kv/stubs) where vLLM is not installed."""
import importlib
import inspect
import os
import tomllib
import unittest

import torch

import harness
import vllm_driver  # noqa: F401 - puts the stubs on sys.path when vLLM is absent
from harness import ACCESS_KEY, SECRET_KEY, Server, unique_name
from strata import PINNED_VERSIONS
from strata.loader import LoadError, save_safetensors
from vllm.config import DeviceConfig, LoadConfig, ModelConfig, VllmConfig
from vllm.model_executor.model_loader import get_model_loader, register_model_loader
from vllm.model_executor.model_loader.base_loader import BaseModelLoader
from vllm.model_executor.models import ModelRegistry

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


class TinyForCausalLM(torch.nn.Module):
    """An out-of-tree architecture in vLLM's shape: built from the VllmConfig, loading weights
    from an iterable of (name, tensor) through each parameter's weight_loader."""

    def __init__(self, *, vllm_config, prefix=""):
        super().__init__()
        self.embed = torch.nn.Embedding(64, 32)
        self.proj = torch.nn.Linear(32, 48)
        self.head = torch.nn.Linear(48, 64, bias=False)

    def forward(self, ids):
        return self.head(torch.relu(self.proj(self.embed(ids))))

    def load_weights(self, weights):
        params = dict(self.named_parameters())
        loaded = set()
        for name, w in weights:
            p = params[name]
            loader = getattr(p, "weight_loader", lambda param, t: param.data.copy_(t))
            loader(p, w)
            loaded.add(name)
        return loaded


class VllmLoaderPluginTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(extra_args=["--kv-listen", "off"]).start()
        cls.s3 = cls.server.boto3_client()
        # What vLLM does at start-up: every vllm.general_plugins entry point, called.
        with open(os.path.join(ROOT, "client", "python", "pyproject.toml"), "rb") as f:
            eps = tomllib.load(f)["project"]["entry-points"]["vllm.general_plugins"]
        module, func = eps["strata"].split(":")
        cls.plugin_cls = getattr(importlib.import_module(module), func)()
        ModelRegistry.register_model("TinyForCausalLM", TinyForCausalLM)

    @classmethod
    def tearDownClass(cls):
        cls.server.cleanup()

    def extra(self, **kw):
        return dict(endpoint_url=self.server.endpoint, access_key=ACCESS_KEY,
                    secret_key=SECRET_KEY, **kw)

    def test_interface(self):
        self.assertEqual(PINNED_VERSIONS["vllm"], "0.33")
        self.assertTrue(issubclass(self.plugin_cls, BaseModelLoader))
        self.assertFalse(inspect.isabstract(self.plugin_cls))
        self.assertEqual(list(inspect.signature(self.plugin_cls.__init__).parameters),
                         ["self", "load_config"])
        self.assertEqual(list(inspect.signature(self.plugin_cls.load_weights).parameters),
                         ["self", "model", "model_config"])
        self.assertEqual(list(inspect.signature(self.plugin_cls.download_model).parameters),
                         ["self", "model_config"])
        with self.assertRaises(ValueError):  # vLLM's registry checks the base class
            register_model_loader("not-a-loader")(object)

    def test_load_format_strata_builds_and_loads_the_model(self):
        torch.manual_seed(3)
        ref = TinyForCausalLM(vllm_config=None)
        b = unique_name("vllm")
        self.s3.create_bucket(Bucket=b)
        save_safetensors(ref.state_dict(), f"s3://{b}/tiny/", max_shard_bytes=8 << 10,
                         endpoint_url=self.server.endpoint, access_key=ACCESS_KEY,
                         secret_key=SECRET_KEY)
        load_config = LoadConfig(load_format="strata",
                                 model_loader_extra_config=self.extra(max_in_flight=4, device="cpu"))
        model_config = ModelConfig(model=f"s3://{b}/tiny/", architecture="TinyForCausalLM")
        vllm_config = VllmConfig(model_config=model_config, load_config=load_config,
                                 device_config=DeviceConfig("cpu"))
        loader = get_model_loader(load_config)
        self.assertIsInstance(loader, self.plugin_cls)
        loader.download_model(model_config)
        model = loader.load_model(vllm_config=vllm_config, model_config=model_config)
        self.assertFalse(model.training)
        ids = torch.arange(10)
        with torch.no_grad():
            self.assertTrue(torch.equal(model(ids), ref(ids)))

    def test_errors_are_clear(self):
        with self.assertRaisesRegex(ValueError, "unknown model_loader_extra_config"):
            get_model_loader(LoadConfig(load_format="strata",
                                        model_loader_extra_config={"concurrency": 8}))
        with self.assertRaisesRegex(ValueError, "max_in_flight must be"):
            get_model_loader(LoadConfig(load_format="strata",
                                        model_loader_extra_config={"max_in_flight": "8"}))
        with self.assertRaisesRegex(ValueError, "device must be 'cpu' or 'cuda'"):
            get_model_loader(LoadConfig(load_format="strata",
                                        model_loader_extra_config={"device": "tpu"}))
        loader = get_model_loader(LoadConfig(load_format="strata",
                                             model_loader_extra_config=self.extra()))
        with self.assertRaisesRegex(ValueError, "s3://"):
            loader.download_model(ModelConfig(model="/models/llama"))
        b = unique_name("vllm")
        self.s3.create_bucket(Bucket=b)
        with self.assertRaises(LoadError):  # nothing there: fails before the model is built
            loader.download_model(ModelConfig(model=f"s3://{b}/absent/"))
        # A checkpoint missing a parameter of the model: vLLM's check, by name.
        save_safetensors({"embed.weight": torch.zeros(64, 32)}, f"s3://{b}/partial/",
                         endpoint_url=self.server.endpoint, access_key=ACCESS_KEY,
                         secret_key=SECRET_KEY)
        mc = ModelConfig(model=f"s3://{b}/partial/", architecture="TinyForCausalLM")
        with self.assertRaisesRegex(ValueError, "not initialized from checkpoint"):
            loader.load_model(vllm_config=VllmConfig(model_config=mc,
                                                     load_config=loader.load_config),
                              model_config=mc)


if __name__ == "__main__":
    harness.unittest.main()

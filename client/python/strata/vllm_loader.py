"""vLLM model-loader plugin: `--load-format strata` loads the weights with strata.loader.

    vllm serve s3://models/llama-8b/ --load-format strata \\
        --model-loader-extra-config '{"endpoint_url": "http://strata:9000", "max_in_flight": 64}'

Written against vLLM 0.33 (PINNED_VERSIONS in strata/__init__.py):
`vllm.model_executor.model_loader.register_model_loader(load_format)` registers a
`BaseModelLoader` subclass (base_loader.py: `__init__(load_config)`, abstract
`download_model(model_config)` and `load_weights(model, model_config)`; its `load_model`
builds the model and calls `load_weights`); `get_model_loader(load_config)` builds the class
registered for `load_config.load_format` with the LoadConfig alone. Like vLLM's own loaders,
`load_weights` hands the model a generator of (name, tensor) — `model.load_weights(weights)`
— so tensors are consumed as they arrive, and checks the names it returns against the
model's parameters.

vLLM imports plugins in every process from the `vllm.general_plugins` entry point group;
client/python/pyproject.toml declares `strata = "strata.vllm_loader:register"`. Importing
this module registers the loader too.

Options (`model_loader_extra_config`): endpoint_url, region, access_key, secret_key (else the
AWS environment), max_in_flight, range_mib, stall_timeout, retries, verify, and device:
"cpu" (the default: the model's weight loaders copy each CPU tensor to the GPU, as with
vLLM's default loader) or "cuda" (the weights arrive in this worker's current GPU through
strata's pinned-buffer ring, docs/model-loading.md "Into GPU memory", and the weight
loaders copy device to device). An unknown option is an error, not ignored.
"""
from vllm.model_executor.model_loader import register_model_loader
from vllm.model_executor.model_loader.base_loader import BaseModelLoader

from strata import loader as strata_loader

LOAD_FORMAT = "strata"

_OPTIONS = {"endpoint_url": str, "region": str, "access_key": str, "secret_key": str,
            "max_in_flight": int, "range_mib": int, "stall_timeout": (int, float),
            "retries": int, "verify": bool, "device": str}


@register_model_loader(LOAD_FORMAT)
class StrataModelLoader(BaseModelLoader):
    """Loads safetensors weights from an s3:// URI (the model path, or model_weights)."""

    def __init__(self, load_config):
        super().__init__(load_config)
        extra = dict(load_config.model_loader_extra_config or {})
        unknown = sorted(set(extra) - set(_OPTIONS))
        if unknown:
            raise ValueError(f"--load-format strata: unknown model_loader_extra_config keys "
                             f"{unknown}; known: {sorted(_OPTIONS)}")
        for k, v in extra.items():
            if not isinstance(v, _OPTIONS[k]) or (isinstance(v, bool) and _OPTIONS[k] is int):
                raise ValueError(f"--load-format strata: {k} must be {_OPTIONS[k]}, not {v!r}")
        self.device = extra.pop("device", "cpu")
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"--load-format strata: device must be 'cpu' or 'cuda', not "
                             f"{self.device!r}")
        self.options = extra
        range_mib = extra.pop("range_mib", None)
        if range_mib is not None:
            extra["range_bytes"] = range_mib << 20

    @staticmethod
    def _uri(model_config):
        uri = getattr(model_config, "model_weights", None) or model_config.model
        if not isinstance(uri, str) or not uri.startswith("s3://"):
            raise ValueError(f"--load-format strata loads from s3://bucket/prefix/, not {uri!r}")
        return uri

    def download_model(self, model_config) -> None:
        """Nothing to download: checks that the checkpoint is there and every header is valid
        (one probe per shard), so that a bad path fails before the model is built."""
        loader = strata_loader.Loader(self._uri(model_config), **self.options)
        try:
            import concurrent.futures
            with concurrent.futures.ThreadPoolExecutor(loader.max_in_flight) as pool:
                loader.plan(pool)
        finally:
            loader.close()

    def _device(self):
        if self.device == "cpu":
            return "cpu"
        import torch
        return f"cuda:{torch.cuda.current_device()}"  # the GPU vLLM set for this worker

    def load_weights(self, model, model_config) -> None:
        weights = strata_loader.iter_safetensors(self._uri(model_config), device=self._device(),
                                                 **self.options)
        loaded = model.load_weights(weights)
        if loaded is not None:  # as vLLM's default loader checks
            missing = {name for name, _ in model.named_parameters()} - set(loaded)
            if missing:
                raise ValueError(f"Following weights were not initialized from checkpoint: "
                                 f"{sorted(missing)}")


def register():
    """The vllm.general_plugins entry point: importing this module has registered the loader."""
    return StrataModelLoader

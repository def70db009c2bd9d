"""vllm.model_executor.model_loader.utils (stub): initialize_model builds the registered
architecture (vllm.model_executor.models.ModelRegistry) of the model config."""
from vllm.model_executor.models import ModelRegistry


def initialize_model(vllm_config, *, model_config=None, prefix=""):
    model_config = model_config or vllm_config.model_config
    cls = ModelRegistry.models.get(model_config.architecture)
    if cls is None:
        raise ValueError(f"Model architecture {model_config.architecture!r} is not supported")
    return cls(vllm_config=vllm_config, prefix=prefix)

"""vllm.model_executor.model_loader (stub): the load-format registry. register_model_loader
refuses a class that is not a BaseModelLoader (ValueError, as vLLM); get_model_loader builds
the registered class with the LoadConfig alone."""
from vllm.config.load import LoadConfig
from vllm.model_executor.model_loader.base_loader import BaseModelLoader

_LOAD_FORMAT_TO_MODEL_LOADER = {}


def register_model_loader(load_format: str):
    def _wrapper(model_loader_cls):
        if not issubclass(model_loader_cls, BaseModelLoader):
            raise ValueError("The model loader must be a subclass of `BaseModelLoader`.")
        _LOAD_FORMAT_TO_MODEL_LOADER[load_format] = model_loader_cls
        return model_loader_cls
    return _wrapper


def get_model_loader(load_config: LoadConfig) -> BaseModelLoader:
    load_format = load_config.load_format
    if load_format not in _LOAD_FORMAT_TO_MODEL_LOADER:
        raise ValueError(f"Load format `{load_format}` is not supported")
    return _LOAD_FORMAT_TO_MODEL_LOADER[load_format](load_config)


__all__ = ["BaseModelLoader", "get_model_loader", "register_model_loader"]

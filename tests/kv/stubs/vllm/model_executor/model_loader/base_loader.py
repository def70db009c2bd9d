"""vllm.model_executor.model_loader.base_loader (stub): BaseModelLoader as vLLM 0.33 declares
it: __init__(load_config), abstract download_model(model_config) and load_weights(model,
model_config), and load_model(vllm_config, model_config, prefix) that builds the model on the
load device and hands it to load_weights, then puts it in eval mode."""
import contextlib
from abc import ABC, abstractmethod

import torch

from vllm.model_executor.model_loader.utils import initialize_model


class BaseModelLoader(ABC):
    def __init__(self, load_config):
        self.load_config = load_config

    @abstractmethod
    def download_model(self, model_config) -> None:
        raise NotImplementedError

    @abstractmethod
    def load_weights(self, model, model_config) -> None:
        raise NotImplementedError

    def load_model(self, vllm_config, model_config, prefix: str = ""):
        load_device = (vllm_config.device_config.device if vllm_config.load_config.device is None
                       else vllm_config.load_config.device)
        device = torch.device(load_device)
        # torch >= 2.0 makes a device the default of what is built inside the block
        scope = device if hasattr(device, "__enter__") else contextlib.nullcontext()
        with scope:
            model = initialize_model(vllm_config=vllm_config, model_config=model_config,
                                     prefix=prefix)
        self.load_weights(model, model_config)
        return model.eval()

"""vllm.config (stub of vLLM 0.33's names; see ../__init__.py): the configs a model loader is
handed. Only the fields a loader reads."""
from dataclasses import dataclass, field
from typing import Any, Optional

from vllm.config.load import LoadConfig


@dataclass
class ModelConfig:
    model: str = ""                 # the model's name, path or object-store URI
    revision: Optional[str] = None
    dtype: Any = None
    # vLLM derives this from the checkpoint's config.json ("architectures"[0]).
    architecture: str = ""


@dataclass
class DeviceConfig:
    device: Any = "cpu"


@dataclass
class VllmConfig:
    model_config: ModelConfig = field(default_factory=ModelConfig)
    load_config: LoadConfig = field(default_factory=LoadConfig)
    device_config: DeviceConfig = field(default_factory=DeviceConfig)


__all__ = ["DeviceConfig", "LoadConfig", "ModelConfig", "VllmConfig"]

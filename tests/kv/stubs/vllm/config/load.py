"""vllm.config.load (stub): LoadConfig, the --load-format and --model-loader-extra-config
of the engine's arguments."""
from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass
class LoadConfig:
    load_format: str = "auto"
    download_dir: Optional[str] = None
    model_loader_extra_config: dict = field(default_factory=dict)
    device: Optional[Any] = None
    ignore_patterns: Optional[list] = None
    use_tqdm_on_load: bool = True

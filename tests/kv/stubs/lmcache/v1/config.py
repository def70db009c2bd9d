"""Stub of lmcache/v1/config.py: the LMCacheEngineConfig fields a remote
connector reads."""
from dataclasses import dataclass, field, fields
from typing import Any, Optional


@dataclass
class LMCacheEngineConfig:
    chunk_size: int = 256
    local_cpu: bool = True
    max_local_cpu_size: float = 5.0
    remote_url: Optional[str] = None
    remote_serde: Optional[str] = "naive"
    save_unfull_chunk: bool = False
    use_layerwise: bool = False
    blocking_timeout_secs: int = 10
    remote_storage_plugins: Optional[list] = None
    extra_config: Optional[dict] = None
    lmcache_instance_id: str = "lmcache_default_instance"
    pre_caching_hash_algorithm: str = "builtin"

    @staticmethod
    def from_defaults(**kwargs) -> "LMCacheEngineConfig":
        names = {f.name for f in fields(LMCacheEngineConfig)}
        unknown = set(kwargs) - names
        if unknown:
            raise ValueError(f"unknown config keys {sorted(unknown)}")
        return LMCacheEngineConfig(**kwargs)

    def get_extra_config_value(self, key: str, default: Any = None) -> Any:
        return (self.extra_config or {}).get(key, default)

"""Stub of lmcache/v1/metadata.py: LMCacheMetadata (moved here from
lmcache/config.py in 0.4.x; fmt removed, local ranks added)."""
from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class LMCacheMetadata:
    model_name: str
    world_size: int
    local_world_size: int
    worker_id: int
    local_worker_id: int
    kv_dtype: Any
    kv_shape: tuple  # (num_layers, 2 (K/V), chunk_size, num_heads, head_size)
    use_mla: bool = False
    role: str = "worker"
    chunk_size: int = 256
    engine_id: Optional[str] = None
    kv_connector_extra_config: Optional[dict] = None

    def get_shapes(self):
        """Shapes of one full chunk, one per KV group: [2, layers, tokens, hidden]."""
        L, kv, T, H, D = self.kv_shape
        return [(kv, L, T, H * D)] if not self.use_mla else [(1, L, T, H * D)]

    def get_dtypes(self):
        return [self.kv_dtype]

    def get_num_groups(self):
        return 1

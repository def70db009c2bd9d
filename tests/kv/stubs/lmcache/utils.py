"""Stub of lmcache/utils.py: CacheEngineKey (LMCache >= 0.4.2 fields: no fmt)."""
from dataclasses import dataclass
from typing import Any, Optional

try:
    import torch
    TORCH_DTYPE_TO_STR_DTYPE = {
        torch.half: "half", torch.float16: "half", torch.bfloat16: "bfloat16",
        torch.float: "float", torch.float32: "float", torch.float64: "double",
        torch.uint8: "fp8",
    }
except ImportError:  # the stubs also run without torch (numpy dtypes)
    torch = None
    TORCH_DTYPE_TO_STR_DTYPE = {}


def _dtype_str(dtype):
    return TORCH_DTYPE_TO_STR_DTYPE.get(dtype, str(dtype))


@dataclass(slots=True)
class CacheEngineKey:
    model_name: str
    world_size: int
    worker_id: int
    chunk_hash: int
    dtype: Any
    request_configs: Optional[dict] = None

    def __hash__(self):
        return hash((self.model_name, self.world_size, self.worker_id, self.chunk_hash,
                     _dtype_str(self.dtype), self._tags()))

    def __eq__(self, other):
        return isinstance(other, CacheEngineKey) and self.to_string() == other.to_string()

    def _tags(self):
        rc = self.request_configs or {}
        return tuple(f"{k}%{v}" for k, v in sorted(rc.items())
                     if str(k).startswith("lmcache.tag."))

    def to_string(self):
        s = (f"{self.model_name}@{self.world_size}@{self.worker_id}"
             f"@{self.chunk_hash:x}@{_dtype_str(self.dtype)}")
        tags = self._tags()
        return s + ("@" + "@".join(tags) if tags else "")

    def with_new_worker_id(self, worker_id):
        return CacheEngineKey(self.model_name, self.world_size, worker_id, self.chunk_hash,
                              self.dtype, self.request_configs)

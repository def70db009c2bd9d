"""Stub of lmcache/v1/storage_backend/connector/base_connector.py:
RemoteConnector (abstract methods, optional batched calls behind support_*
flags, chunk metadata from (config, metadata))."""
import abc
from typing import List, Optional

from lmcache.logging import init_logger
from lmcache.utils import CacheEngineKey
from lmcache.v1.memory_management import MemoryFormat, MemoryObj, get_size_bytes

logger = init_logger(__name__)


class RemoteConnector(metaclass=abc.ABCMeta):
    """Interface for remote connectors."""

    def __init__(self, config, metadata):
        self.config = config
        self.metadata = metadata
        self.save_chunk_meta = True
        self.meta_shapes = None
        self.meta_dtypes = None
        self.meta_fmt = None
        self.full_chunk_size_bytes = None
        self.single_token_size = None
        if config is None or metadata is None:
            return
        extra = config.extra_config or {}
        self.save_chunk_meta = bool(extra.get("save_chunk_meta", True) or config.use_layerwise)
        self.meta_shapes = metadata.get_shapes()
        self.meta_dtypes = metadata.get_dtypes()
        self.meta_fmt = MemoryFormat.KV_MLA_FMT if metadata.use_mla else MemoryFormat.KV_2LTD
        self.full_chunk_size_bytes = get_size_bytes(self.meta_shapes, self.meta_dtypes)
        self.single_token_size = self.full_chunk_size_bytes // metadata.chunk_size

    def reshape_partial_chunk(self, memory_obj: MemoryObj, bytes_read: int) -> MemoryObj:
        if bytes_read % self.single_token_size != 0 or bytes_read > self.full_chunk_size_bytes:
            raise ValueError(f"bytes_read: {bytes_read} is illegal")
        if bytes_read == self.full_chunk_size_bytes:
            return memory_obj
        shape = list(memory_obj.meta.shape)
        shape[2] = bytes_read // self.single_token_size
        memory_obj.raw_data = memory_obj.raw_data[:bytes_read]
        memory_obj.meta.shape = tuple(shape)
        memory_obj.meta.shapes = [tuple(shape)]
        return memory_obj

    def post_init(self):
        pass

    @abc.abstractmethod
    async def exists(self, key: CacheEngineKey) -> bool:
        raise NotImplementedError

    @abc.abstractmethod
    def exists_sync(self, key: CacheEngineKey) -> bool:
        raise NotImplementedError

    @abc.abstractmethod
    async def get(self, key: CacheEngineKey) -> Optional[MemoryObj]:
        raise NotImplementedError

    @abc.abstractmethod
    async def put(self, key: CacheEngineKey, memory_obj: MemoryObj):
        """Sends memory_obj; decreases its ref count once sent."""
        raise NotImplementedError

    @abc.abstractmethod
    async def list(self) -> List[str]:
        raise NotImplementedError

    @abc.abstractmethod
    async def close(self):
        raise NotImplementedError

    def support_ping(self) -> bool:
        return False

    async def ping(self) -> int:
        raise NotImplementedError

    def support_batched_get(self) -> bool:
        return False

    async def batched_get(self, keys: List[CacheEngineKey]) -> List[Optional[MemoryObj]]:
        raise NotImplementedError

    def support_batched_put(self) -> bool:
        return False

    async def batched_put(self, keys: List[CacheEngineKey], memory_objs: List[MemoryObj]):
        raise NotImplementedError

    def support_batched_async_contains(self) -> bool:
        return False

    async def batched_async_contains(self, lookup_id: str, keys: List[CacheEngineKey],
                                     pin: bool = False) -> int:
        raise NotImplementedError

    def support_batched_get_non_blocking(self) -> bool:
        return False

    async def batched_get_non_blocking(self, lookup_id: str,
                                       keys: List[CacheEngineKey]) -> List[MemoryObj]:
        raise NotImplementedError

    def remove_sync(self, key: CacheEngineKey) -> bool:
        raise NotImplementedError

    def support_batched_contains(self) -> bool:
        return False

    def batched_contains(self, keys: List[CacheEngineKey]) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

"""Stub of lmcache/v1/memory_management.py: MemoryFormat, MemoryObjMetadata,
MemoryObj (ref-counted, freed to its allocator at 0) and a capacity-bounded
CPU allocator. raw_data is a flat uint8 tensor (numpy without torch)."""
import abc
import enum
import threading
from dataclasses import dataclass
from typing import Any, List, Optional

import numpy as np

try:
    import torch
except ImportError:
    torch = None


class MemoryFormat(enum.Enum):
    UNDEFINED = 0
    KV_2LTD = 1       # [2, num_layers, num_tokens, hidden_dim]
    KV_T2D = 2        # [num_tokens, 2, hidden_dim]
    KV_2TD = 3
    BINARY = 4        # serialized bytes (cachegen etc.)
    BINARY_BUFFER = 5
    KV_MLA_FMT = 6    # [1, num_layers, num_tokens, hidden_dim]

    def token_dim(self) -> int:
        return {MemoryFormat.KV_2LTD: 2, MemoryFormat.KV_MLA_FMT: 2,
                MemoryFormat.KV_T2D: 0, MemoryFormat.KV_2TD: 1}.get(self, -1)


def dtype_itemsize(dtype) -> int:
    if torch is not None and isinstance(dtype, torch.dtype):
        return torch.tensor([], dtype=dtype).element_size()
    return np.dtype(dtype).itemsize


def get_size_bytes(shapes, dtypes) -> int:
    return sum(int(np.prod(s)) * dtype_itemsize(d) for s, d in zip(shapes, dtypes))


@dataclass
class MemoryObjMetadata:
    shape: Any
    dtype: Any
    address: int
    phy_size: int
    ref_count: int
    pin_count: int = 0
    fmt: MemoryFormat = MemoryFormat.UNDEFINED
    shapes: Optional[List[Any]] = None
    dtypes: Optional[List[Any]] = None

    def get_size(self) -> int:
        shapes = self.shapes if self.shapes is not None else [self.shape]
        dtypes = self.dtypes if self.dtypes is not None else [self.dtype]
        return get_size_bytes(shapes, dtypes)


class MemoryObj(metaclass=abc.ABCMeta):
    @abc.abstractmethod
    def get_size(self) -> int: ...

    @abc.abstractmethod
    def get_physical_size(self) -> int: ...

    @abc.abstractmethod
    def ref_count_up(self): ...

    @abc.abstractmethod
    def ref_count_down(self): ...

    @abc.abstractmethod
    def get_ref_count(self) -> int: ...

    @property
    @abc.abstractmethod
    def metadata(self) -> MemoryObjMetadata: ...

    @property
    @abc.abstractmethod
    def tensor(self): ...

    @property
    @abc.abstractmethod
    def byte_array(self) -> memoryview: ...


class TensorMemoryObj(MemoryObj):
    def __init__(self, raw_data, metadata: MemoryObjMetadata, parent_allocator=None):
        self.raw_data = raw_data
        self.meta = metadata
        self.parent_allocator = parent_allocator
        self._lock = threading.Lock()

    def get_size(self):
        return self.meta.get_size()

    def get_physical_size(self):
        return self.meta.phy_size

    def ref_count_up(self):
        with self._lock:
            assert self.meta.ref_count > 0, "ref_count_up on a freed MemoryObj"
            self.meta.ref_count += 1

    def ref_count_down(self):
        with self._lock:
            assert self.meta.ref_count > 0, "ref_count_down below zero"
            self.meta.ref_count -= 1
            freed = self.meta.ref_count == 0
        if freed and self.parent_allocator is not None:
            self.parent_allocator.free(self)

    def get_ref_count(self):
        return self.meta.ref_count

    @property
    def metadata(self):
        return self.meta

    def _flat(self):
        raw = self.raw_data[: self.get_size()]
        return raw.numpy() if torch is not None and isinstance(raw, torch.Tensor) else raw

    @property
    def byte_array(self):
        return memoryview(self._flat())

    @property
    def tensor(self):
        flat = self.raw_data[: self.get_size()]
        if torch is not None and isinstance(flat, torch.Tensor):
            return flat.view(self.meta.dtype).view(tuple(self.meta.shape))
        return flat.view(np.dtype(self.meta.dtype)).reshape(tuple(self.meta.shape))


class MixedMemoryAllocator:
    """Bounded CPU allocator: allocate() returns None when capacity is used up."""

    def __init__(self, size: int):
        self.capacity = int(size)
        self.used = 0
        self.live = set()
        self._lock = threading.Lock()
        self._next_address = 0

    def allocate(self, shapes, dtypes, fmt=MemoryFormat.KV_2LTD) -> Optional[TensorMemoryObj]:
        if not isinstance(shapes, list):
            shapes, dtypes = [shapes], [dtypes]
        nbytes = get_size_bytes(shapes, dtypes)
        with self._lock:
            if self.used + nbytes > self.capacity:
                return None
            self.used += nbytes
            address = self._next_address
            self._next_address += nbytes
        raw = (torch.empty(nbytes, dtype=torch.uint8) if torch is not None
               else np.empty(nbytes, dtype=np.uint8))
        meta = MemoryObjMetadata(shape=shapes[0], dtype=dtypes[0], address=address,
                                 phy_size=nbytes, ref_count=1, fmt=fmt,
                                 shapes=list(shapes), dtypes=list(dtypes))
        obj = TensorMemoryObj(raw, meta, self)
        with self._lock:
            self.live.add(id(obj))
        return obj

    def free(self, obj: TensorMemoryObj):
        with self._lock:
            self.live.discard(id(obj))
            self.used -= obj.meta.phy_size

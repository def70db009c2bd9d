"""Stub of lmcache/v1/storage_backend/local_cpu_backend.py: the allocator
remote connectors draw their MemoryObjs from (get paths)."""
from lmcache.v1.memory_management import MemoryFormat


class LocalCPUBackend:
    def __init__(self, config, metadata=None, memory_allocator=None, lookup_server=None,
                 lmcache_worker=None):
        self.config = config
        self.metadata = metadata
        self.memory_allocator = memory_allocator

    def allocate(self, shapes, dtypes, fmt=MemoryFormat.KV_2LTD, eviction=True,
                 busy_loop=True):
        return self.memory_allocator.allocate(shapes, dtypes, fmt)

    def __str__(self):
        return "LocalCPUBackend"

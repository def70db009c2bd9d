"""Stub of vllm/v1/kv_offload/base.py (vLLM 0.33): keys, lookup verdicts,
per-request context and the OffloadingSpec base."""
from abc import ABC, abstractmethod
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import Enum, auto
from typing import Any, NamedTuple, NewType

from vllm.v1.kv_offload.config import OffloadingConfig

# Block hash + 4-byte big-endian KV-group index (36 bytes with SHA-256).
OffloadKey = NewType("OffloadKey", bytes)


def make_offload_key(block_hash: bytes, group_idx: int) -> OffloadKey:
    return OffloadKey(bytes(block_hash) + group_idx.to_bytes(4, "big", signed=False))


def get_offload_block_hash(key: OffloadKey) -> bytes:
    return key[:-4]


def get_offload_group_idx(key: OffloadKey) -> int:
    return int.from_bytes(key[-4:], "big", signed=False)


class Medium(Enum):
    CPU = "CPU"
    STORAGE = "STORAGE"


class Locality(Enum):
    LOCAL = "LOCAL"
    REMOTE = "REMOTE"


@dataclass
class ReqContext:
    req_id: str
    kv_transfer_params: dict[str, Any] | None = None
    _state: dict[type, Any] = field(default_factory=dict, repr=False, init=False)
    # End-token position of each key in the request (set by the scheduler).
    _offload_key_positions: dict[OffloadKey, int] = field(default_factory=dict, repr=False,
                                                          init=False)

    def set_state(self, val: Any) -> None:
        self._state[type(val)] = val

    def get_state(self, cls: type) -> Any | None:
        return self._state.get(cls)

    def set_offload_key_position(self, key: OffloadKey, end_token: int) -> None:
        self._offload_key_positions[key] = end_token

    def get_offload_key_position(self, key: OffloadKey) -> int | None:
        return self._offload_key_positions.get(key)


class LookupResult(Enum):
    MISS = auto()
    HIT = auto()
    HIT_PENDING = auto()
    RETRY = auto()


class OffloadPolicy(Enum):
    CHUNK_LEVEL = "chunk_level"
    REQUEST_LEVEL = "request_level"


@dataclass
class RequestOffloadingContext:
    policy: OffloadPolicy = OffloadPolicy.CHUNK_LEVEL


class ScheduleEndContext(NamedTuple):
    new_req_ids: Collection[str]
    preempted_req_ids: Collection[str]


@dataclass
class OffloadingEvent:
    keys: list[OffloadKey]
    medium: Medium
    removed: bool
    locality: Locality | None = None
    ownership: str | None = None
    removal_expected: bool = False


@dataclass(frozen=True)
class OffloadingMetricMetadata:
    documentation: str
    labelnames: tuple[str, ...] = ()


@dataclass(frozen=True)
class OffloadingKVEventsConfig:
    enable_kv_cache_events: bool
    self_describing_kv_events: bool


class OffloadingSpec(ABC):
    def __init__(self, config: OffloadingConfig):
        self.config = config
        self.extra_config = config.extra_config
        self.kv_events_config = OffloadingKVEventsConfig(
            enable_kv_cache_events=config.enable_kv_cache_events,
            self_describing_kv_events=bool(self.extra_config.get("self_describing_kv_events",
                                                                 False)))
        self.tokens_per_block = tuple(g.tokens_per_block for g in config.groups)
        self.tokens_per_hash = config.cache.tokens_per_hash
        self.blocks_per_chunk = config.cache.blocks_per_chunk

    @abstractmethod
    def get_manager(self): ...

    @abstractmethod
    def get_worker(self, kv_caches): ...

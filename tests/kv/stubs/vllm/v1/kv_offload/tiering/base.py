"""Stub of vllm/v1/kv_offload/tiering/base.py (vLLM 0.33): the secondary tier
interface. Abstract: lookup, submit_store, submit_load, get_finished_jobs,
on_new_request, drain_jobs; the rest are optional hooks with defaults."""
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from vllm.v1.kv_offload.base import (Locality, LookupResult, Medium, OffloadingEvent,
                                     OffloadingMetricMetadata, OffloadKey, ReqContext,
                                     RequestOffloadingContext, ScheduleEndContext)

JobId = int


@dataclass
class TransferJob:
    job_id: JobId
    keys: Collection[OffloadKey]
    chunk_ids: np.ndarray      # primary-tier slots, parallel to keys
    is_promotion: bool         # True: a load (secondary -> primary)
    req_context: ReqContext


@dataclass
class JobResult:
    job_id: JobId
    success: bool
    # Promotions only: on a partial failure, the keys that did load.
    successful_keys: Collection[OffloadKey] | None = None
    transfer_time: float | None = None


class SecondaryTierManager(ABC):
    medium: ClassVar[Medium | None] = None

    def __init__(self, offloading_spec, primary_kv_view: memoryview, tier_type: str) -> None:
        self._offloading_spec = offloading_spec
        self._primary_kv_view: memoryview = primary_kv_view
        self.tier_type = tier_type
        self.locality: Locality | None = None

    @abstractmethod
    def lookup(self, key: OffloadKey, req_context: ReqContext) -> LookupResult: ...

    @abstractmethod
    def submit_store(self, job_metadata: TransferJob) -> None: ...

    @abstractmethod
    def submit_load(self, job_metadata: TransferJob) -> None: ...

    @abstractmethod
    def get_finished_jobs(self) -> Iterable[JobResult]: ...

    def has_pending_work(self) -> bool:
        return False

    def take_events(self) -> Iterable[OffloadingEvent]:
        return ()

    def touch(self, keys: Collection[OffloadKey], req_context: ReqContext):
        return

    @abstractmethod
    def on_new_request(self, req_context: ReqContext) -> RequestOffloadingContext: ...

    def on_request_finished(self, req_context: ReqContext) -> None:
        return

    def bind_parent(self, parent) -> None:
        return

    def stop_executor(self) -> None:
        return

    def on_schedule_end(self, context: ScheduleEndContext) -> None:
        return

    @abstractmethod
    def drain_jobs(self) -> None: ...

    def shutdown(self) -> None:
        return

    @classmethod
    def build_metric_definitions(cls, extra_config: dict[str, Any]
                                 ) -> dict[str, OffloadingMetricMetadata]:
        return {}

    def get_stats(self):
        return None

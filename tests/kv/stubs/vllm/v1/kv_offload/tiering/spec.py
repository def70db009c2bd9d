"""Stub of vllm/v1/kv_offload/tiering/spec.py (vLLM 0.33): the spec named by
kv_connector_extra_config "spec_name": "TieringOffloadingSpec"; it reads
"secondary_tiers" (a list of tier configs) from the extra config. The stub
has no primary tier: get_manager / get_worker are not implemented."""
from vllm.v1.kv_offload.base import OffloadingSpec


class TieringOffloadingSpec(OffloadingSpec):
    def __init__(self, config):
        super().__init__(config)
        self.secondary_tier_configs = self.extra_config.get("secondary_tiers", [])
        if not isinstance(self.secondary_tier_configs, list):
            raise ValueError("secondary_tiers must be a list of tier configurations")

    def get_manager(self):
        raise NotImplementedError("interface stub: no primary tier")

    def get_worker(self, kv_caches):
        raise NotImplementedError("interface stub: no worker")

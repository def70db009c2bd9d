"""Stub of vllm/v1/kv_offload/tiering/factory.py (vLLM 0.33). An out-of-tree
tier needs no registration: its config names the class as "type" and the
module as "module_path"; the factory imports it, asserts issubclass, and
constructs it with keywords (offloading_spec, primary_kv_view, tier_type and
the rest of the tier's config)."""
import importlib
import logging

from vllm.v1.kv_offload.tiering.base import SecondaryTierManager

logger = logging.getLogger(__name__)


class SecondaryTierFactory:
    _registry: dict = {}

    @classmethod
    def register_tier(cls, tier_type: str, module_path: str, class_name: str) -> None:
        if tier_type in cls._registry:
            raise ValueError(f"Tier '{tier_type}' is already registered.")
        cls._registry[tier_type] = lambda: getattr(importlib.import_module(module_path),
                                                   class_name)

    @classmethod
    def create_secondary_tier(cls, tier_config: dict, primary_kv_view: memoryview,
                              offloading_spec) -> SecondaryTierManager:
        tier_cls = cls.get_tier_class(tier_config)
        config = dict(tier_config)
        tier_type = config.pop("type")
        config.pop("module_path", None)
        return tier_cls(offloading_spec=offloading_spec, primary_kv_view=primary_kv_view,
                        tier_type=tier_type, **config)

    @classmethod
    def get_tier_class(cls, tier_config: dict) -> type:
        tier_type = tier_config.get("type")
        if not tier_type:
            raise ValueError("Secondary tier configuration must include 'type'")
        if tier_type in cls._registry:
            return cls._registry[tier_type]()
        module_path = tier_config.get("module_path")
        if module_path is None:
            raise ValueError(f"Unknown secondary tier type: {tier_type!r}; for an "
                             "out-of-tree tier, also set 'module_path'.")
        logger.info("Loading out-of-tree secondary tier '%s' from '%s'.", tier_type, module_path)
        tier_cls = getattr(importlib.import_module(module_path), tier_type)
        assert issubclass(tier_cls, SecondaryTierManager)
        return tier_cls

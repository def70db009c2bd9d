"""strata KV-cache adapters, pure Python on top of the `strata_kv` module.

  strata.vllm_tier.StrataSecondaryTier         vLLM offloading secondary tier
                                               (SecondaryTierManager, loaded by
                                               vLLM's SecondaryTierFactory)
  strata.lmcache_connector                     LMCache remote storage plugin
                                               (StrataConnectorAdapter, StrataRemoteConnector)
  strata.kvutil                                key mapping, byte views, connections
  strata.loader                                safetensors checkpoints loaded by parallel
                                               ranged GETs / saved by multipart uploads
                                               (docs/model-loading.md; python3 -m strata.loader)
  strata.vllm_loader                           vLLM `--load-format strata` (register_model_loader)

`strata_kv` (client/python/strata_kv.cc) is built by CMake into
<build>/client/python/; put that directory and client/python/ on sys.path
(tests/kv/run.sh does) and use Debian's /usr/bin/python3.

PINNED_VERSIONS: the engine interfaces the adapters are written against.
vLLM: 0.33 (Nov 2026), vllm.v1.kv_offload.tiering: SecondaryTierManager
(tiering/base.py), SecondaryTierFactory's out-of-tree loader (tiering/
factory.py: "type" = class name, "module_path" = module), TieringOffloadingSpec
(tiering/spec.py), OffloadKey / ReqContext / LookupResult /
ScheduleEndContext (kv_offload/base.py), OffloadingConfig (kv_offload/
config.py). tests/kv/stubs/vllm declares that interface for CI.
vLLM model loading: register_model_loader / get_model_loader
(model_executor/model_loader/__init__.py), BaseModelLoader (base_loader.py),
LoadConfig (config/load.py), ModelRegistry.register_model, the
vllm.general_plugins entry point group (client/python/pyproject.toml).
"""

# Engine versions the adapters are written and tested against (one per line).
PINNED_VERSIONS = {
    "vllm": "0.33",
    "lmcache": "0.5.6",  # strata.lmcache_connector; tests/kv/stubs mirror its interfaces
}

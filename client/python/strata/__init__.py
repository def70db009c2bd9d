"""strata KV-cache adapters, pure Python on top of the `strata_kv` module.

  strata.vllm_tier.StrataOffloadTier          vLLM offloading secondary tier
  strata.lmcache_connector                     LMCache remote storage plugin
                                               (StrataConnectorAdapter, StrataRemoteConnector)
  strata.kvutil                                key mapping, byte views, connections

`strata_kv` (client/python/strata_kv.cc) is built by CMake into
<build>/client/python/; put that directory and client/python/ on sys.path
(tests/kv/run.sh does) and use Debian's /usr/bin/python3.
"""

# Engine versions the adapters are written and tested against (one per line).
PINNED_VERSIONS = {
    "lmcache": "0.5.6",  # strata.lmcache_connector; tests/kv/stubs mirror its interfaces
}

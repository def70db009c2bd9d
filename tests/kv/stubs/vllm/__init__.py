"""Interface stubs of vLLM 0.33 (Nov 2026) for the strata adapter tests.

Only the names the offloading secondary-tier interface consists of, under
vLLM's real module paths, so that `issubclass`, the factory's keyword
construction and `inspect.signature` checks run where vLLM is not installed.
tests/kv/vllm_driver.py puts tests/kv/stubs on sys.path only when
`import vllm` fails; with vLLM installed the same tests run against it.
Written from the interface (class names, abstract methods, dataclass fields,
the factory's loader); no vLLM code. Nothing here runs a model.
"""
__version__ = "0.33.0"
STRATA_INTERFACE_STUB = True

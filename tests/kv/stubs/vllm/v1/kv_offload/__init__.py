"""Stub: vllm.v1.kv_offload (see tests/kv/stubs/vllm/__init__.py)."""

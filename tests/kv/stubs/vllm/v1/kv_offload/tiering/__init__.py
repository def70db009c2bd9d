"""Stub: vllm.v1.kv_offload.tiering (see tests/kv/stubs/vllm/__init__.py)."""

"""vllm.model_executor (stub)."""

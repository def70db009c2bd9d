"""vllm.model_executor.models (stub): ModelRegistry.register_model, vLLM's public way to add
an out-of-tree architecture; the stub's initialize_model builds what is registered."""


class _ModelRegistry:
    def __init__(self):
        self.models = {}

    def register_model(self, model_arch, model_cls):
        self.models[model_arch] = model_cls

    def get_supported_archs(self):
        return self.models.keys()


ModelRegistry = _ModelRegistry()

"""Model servers a run starts and owns (NeMo Curator's ``nemo_curator.core.serve``)."""

from curator_llm.serve.base import BaseModelConfig, BaseServerConfig, InferenceBackend
from curator_llm.serve.llamacpp import LlamaCppBackend, LlamaCppModelConfig, LlamaCppServerConfig
from curator_llm.serve.server import (
    InferenceServer,
    ServerStartError,
    free_port,
    is_inference_server_active,
)

__all__ = [
    "InferenceServer", "is_inference_server_active", "ServerStartError", "free_port",
    "BaseModelConfig", "BaseServerConfig", "InferenceBackend",
    "LlamaCppModelConfig", "LlamaCppServerConfig", "LlamaCppBackend",
]

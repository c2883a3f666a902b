"""curator-llm: models in the loop for Curator.

Clients of OpenAI-compatible model servers (:class:`OpenAIClient`, :class:`AsyncOpenAIClient`:
bounded concurrency, one retry policy, typed failures, an on-disk response cache, request
accounting), :class:`InferenceServer` (a llama.cpp server owned by a run) and NeMo Curator's
synthetic-data stages built on them. NeMo's ``nemo_curator.models.client`` and
``nemo_curator.core.serve`` map here through ``curator migrate``.
"""

from curator_llm.client import (
    AsyncLLMClient,
    AsyncOpenAIClient,
    ClientStats,
    ConversationFormatter,
    Generated,
    GenerationConfig,
    LLMClient,
    LLMRequestError,
    OpenAIClient,
    RequestFailure,
    ResponseCache,
    RetryPolicy,
    generate_batch,
)
from curator_llm.serve import (
    InferenceServer,
    LlamaCppModelConfig,
    LlamaCppServerConfig,
    is_inference_server_active,
)

__all__ = [
    "LLMClient", "AsyncLLMClient", "OpenAIClient", "AsyncOpenAIClient", "GenerationConfig",
    "ConversationFormatter", "LLMRequestError", "RetryPolicy", "ResponseCache", "ClientStats",
    "Generated", "RequestFailure", "generate_batch",
    "InferenceServer", "LlamaCppModelConfig", "LlamaCppServerConfig",
    "is_inference_server_active",
]

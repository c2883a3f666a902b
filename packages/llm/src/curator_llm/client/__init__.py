"""Clients of model servers (NeMo Curator's ``nemo_curator.models.client``).

:class:`OpenAIClient` / :class:`AsyncOpenAIClient` talk OpenAI's chat-completions API to any
compatible server; :func:`generate_batch` sends many conversations at once and returns an
answer or a typed failure for each.
"""

from curator_llm.client.batch import (
    Generated,
    RequestFailure,
    agenerate_batch,
    generate_batch,
    run_coroutine,
)
from curator_llm.client.cache import ResponseCache, request_key
from curator_llm.client.errors import LLMRequestError
from curator_llm.client.llm_client import (
    AsyncLLMClient,
    ConversationFormatter,
    GenerationConfig,
    LLMClient,
    as_generation_config,
)
from curator_llm.client.openai_client import AsyncOpenAIClient, OpenAIClient
from curator_llm.client.retry import RetryPolicy, parse_retry_after
from curator_llm.client.stats import ClientStats, StatsSnapshot

__all__ = [
    "LLMClient", "AsyncLLMClient", "OpenAIClient", "AsyncOpenAIClient", "GenerationConfig",
    "ConversationFormatter", "as_generation_config",
    "LLMRequestError", "RetryPolicy", "parse_retry_after",
    "ResponseCache", "request_key", "ClientStats", "StatsSnapshot",
    "Generated", "RequestFailure", "generate_batch", "agenerate_batch", "run_coroutine",
]

"""Client interfaces with NeMo Curator's names (``nemo_curator.models.client.llm_client``):
:class:`LLMClient` (blocking), :class:`AsyncLLMClient` (asyncio), :class:`GenerationConfig`,
:class:`ConversationFormatter`.

What every client adds over NeMo's: one :class:`~curator_llm.client.retry.RetryPolicy`
(exponential backoff with jitter, ``Retry-After``), typed failures
(:class:`~curator_llm.client.errors.LLMRequestError`), an optional on-disk response cache
(:class:`~curator_llm.client.cache.ResponseCache`) and request accounting
(:class:`~curator_llm.client.stats.ClientStats`).
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from curator_llm.client.cache import ResponseCache, as_cache, request_key
from curator_llm.client.errors import LLMRequestError
from curator_llm.client.retry import RetryPolicy
from curator_llm.client.stats import ClientStats

__all__ = ["ConversationFormatter", "GenerationConfig", "LLMClient", "AsyncLLMClient",
           "LLMRequestError", "as_generation_config"]

logger = logging.getLogger(__name__)


class ConversationFormatter(ABC):
    """Turns a conversation (a list of ``{"role", "content"}`` messages) into one prompt string,
    for servers that take raw text rather than chat messages."""

    @abstractmethod
    def format_conversation(self, conv: list[dict]) -> str:
        raise NotImplementedError("format_conversation must be implemented by subclasses")


@dataclass
class GenerationConfig:
    """Sampling parameters of a request (NeMo Curator's fields and defaults). ``seed`` is part
    of the response-cache key like every other field; ``extra_kwargs`` are passed to the
    server as they are (e.g. ``response_format``)."""

    max_tokens: int | None = 2048
    n: int | None = 1
    seed: int | None = 0
    stop: str | None | list[str] = None
    stream: bool = False
    temperature: float | None = 0.0
    top_k: int | None = None
    top_p: float | None = 0.95
    extra_kwargs: dict | None = None


def as_generation_config(config: GenerationConfig | dict | None) -> GenerationConfig:
    """A :class:`GenerationConfig` from None (the defaults), a dict of its fields, or itself."""
    if config is None:
        return GenerationConfig()
    if isinstance(config, dict):
        return GenerationConfig(**config)
    return config


class _Accounting:
    """Retry policy, cache and counters shared by both client kinds. Set lazily, so NeMo-style
    subclasses that never call ``super().__init__()`` still work."""

    max_retries: int = 3
    base_delay: float = 1.0

    @property
    def stats(self) -> ClientStats:
        """This client's request counts in this process."""
        stats = self.__dict__.get("_stats")
        if stats is None:
            stats = self.__dict__["_stats"] = ClientStats()
        return stats

    @property
    def cache(self) -> ResponseCache | None:
        """Where answers are kept across runs (None: not kept)."""
        return self.__dict__.get("_cache")

    @cache.setter
    def cache(self, value: ResponseCache | str | None) -> None:
        self.__dict__["_cache"] = as_cache(value)

    @property
    def retry_policy(self) -> RetryPolicy:
        """The backoff used for every request (from ``max_retries`` / ``base_delay`` unless
        set)."""
        policy = self.__dict__.get("_retry_policy")
        if policy is not None:
            return policy
        return RetryPolicy(max_retries=self.max_retries, base_delay=self.base_delay)

    @retry_policy.setter
    def retry_policy(self, policy: RetryPolicy | None) -> None:
        self.__dict__["_retry_policy"] = policy
        if policy is not None:
            self.max_retries, self.base_delay = policy.max_retries, policy.base_delay

    def _cached(self, model: str, messages: Any, config: GenerationConfig
                ) -> tuple[str | None, list[str] | None]:
        self.stats.record_query()
        cache = self.cache
        if cache is None:
            return None, None
        key = request_key(model, messages, config)
        hit = cache.get(key)
        if hit is not None:
            self.stats.record_cached()
        return key, hit

    def _store(self, key: str | None, model: str, choices: list[str]) -> None:
        if key is not None and self.cache is not None:
            self.cache.put(key, choices, model=model)


class LLMClient(_Accounting, ABC):
    """A blocking client of an inference server. Subclasses implement :meth:`setup` and
    :meth:`query_model` (returning one string per choice); :class:`OpenAIClient` is the one
    Curator ships."""

    @abstractmethod
    def setup(self) -> None:
        """Make the connection objects (called once per worker, or lazily on first use)."""

    @abstractmethod
    def query_model(self, *, messages: Iterable, model: str,
                    conversation_formatter: ConversationFormatter | None = None,
                    generation_config: GenerationConfig | dict | None = None) -> list[str]:
        raise NotImplementedError("Subclass of LLMClient must implement 'query_model'")


class AsyncLLMClient(_Accounting, ABC):
    """An asyncio client of an inference server. Subclasses implement :meth:`setup` and
    :meth:`_query_model_impl`; :meth:`query_model` adds the response cache, at most
    ``max_concurrent_requests`` requests in flight per client and event loop, and the retry
    policy (``max_retries`` retries, backoff from ``base_delay`` seconds)."""

    def __init__(self, max_concurrent_requests: int = 5, max_retries: int = 3,
                 base_delay: float = 1.0) -> None:
        if max_concurrent_requests < 1:
            raise ValueError(f"max_concurrent_requests must be >= 1, got "
                             f"{max_concurrent_requests}")
        self.max_concurrent_requests = max_concurrent_requests
        self.max_retries = max_retries
        self.base_delay = base_delay
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_loop: asyncio.AbstractEventLoop | None = None

    @abstractmethod
    def setup(self) -> None:
        """Make the connection objects (called once per worker, or lazily on first use)."""

    @abstractmethod
    async def _query_model_impl(self, *, messages: Iterable, model: str,
                                conversation_formatter: ConversationFormatter | None = None,
                                generation_config: GenerationConfig | dict | None = None
                                ) -> list[str]:
        """One request, without cache, retries or concurrency control."""
        raise NotImplementedError("Subclass of AsyncLLMClient must implement '_query_model_impl'")

    def _loop_semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if getattr(self, "_semaphore", None) is None or self._semaphore_loop is not loop:
            self._semaphore = asyncio.Semaphore(getattr(self, "max_concurrent_requests", 5))
            self._semaphore_loop = loop
        return self._semaphore

    async def query_model(self, *, messages: Iterable, model: str,
                          conversation_formatter: ConversationFormatter | None = None,
                          generation_config: GenerationConfig | dict | None = None
                          ) -> list[str]:
        """The model's answers (one per choice). Answered from the cache when this request was
        answered before; otherwise sent under the concurrency bound and the retry policy. A
        request that still fails raises its last error (:class:`LLMRequestError` for the
        clients Curator ships)."""
        config = as_generation_config(generation_config)
        key, hit = self._cached(model, messages, config)
        if hit is not None:
            return hit
        async with self._loop_semaphore():
            choices = await self.retry_policy.acall(
                lambda: self._query_model_impl(messages=messages, model=model,
                                               conversation_formatter=conversation_formatter,
                                               generation_config=config),
                stats=self.stats, log=logger)
        self._store(key, model, choices)
        return choices

"""Clients of any server that speaks OpenAI's chat-completions API — OpenAI, vLLM, llama.cpp's
server (:class:`~curator_llm.serve.InferenceServer`), NIM — with NeMo Curator's names
(``nemo_curator.models.client.openai_client``).

The ``openai`` package is the transport; its own retries are switched off so that the one
:class:`~curator_llm.client.retry.RetryPolicy` decides, and its errors become
:class:`~curator_llm.client.errors.LLMRequestError` with the HTTP status and message.

A user's own endpoint: ``OpenAIClient(base_url=..., api_key=...)``, or nothing at all with
``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` set in the environment (read by ``openai``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import warnings
from collections.abc import Iterable
from typing import Any

import openai
from openai import AsyncOpenAI, OpenAI

from curator_llm.client.cache import as_cache
from curator_llm.client.errors import LLMRequestError
from curator_llm.client.llm_client import (
    AsyncLLMClient,
    ConversationFormatter,
    GenerationConfig,
    LLMClient,
    as_generation_config,
)
from curator_llm.client.retry import parse_retry_after, retryable_status

__all__ = ["OpenAIClient", "AsyncOpenAIClient", "to_request_error"]

logger = logging.getLogger(__name__)

#: a key sent to servers that need none (a local llama.cpp or vLLM without ``--api-key``)
PLACEHOLDER_API_KEY = "not-needed"


def to_request_error(exc: BaseException) -> LLMRequestError | None:
    """The :class:`LLMRequestError` for an ``openai`` / transport / parsing error; None for an
    error of another kind (raised as it is)."""
    if isinstance(exc, LLMRequestError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = parse_retry_after(exc.response.headers.get("retry-after"))
        return LLMRequestError(f"http_{status}", _message(exc), status=status,
                               retryable=retryable_status(status), retry_after=retry_after)
    if isinstance(exc, openai.APITimeoutError):
        return LLMRequestError("timeout", str(exc) or "request timed out", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return LLMRequestError("connection", f"{type(cause).__name__}: {cause}",
                               retryable=True)
    if isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError):
        return LLMRequestError("invalid_response", f"{type(exc).__name__}: {exc}",
                               status=getattr(exc, "status_code", None), retryable=True)
    return None


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
    return getattr(exc, "message", None) or str(exc)


def _choices(response: Any, stats: Any) -> list[str]:
    """The text of every choice, checked: a response that is not chat-completions JSON, or a
    choice without text, is an :class:`LLMRequestError` — never an empty answer."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        shown = response if isinstance(response, str) else type(response).__name__
        raise LLMRequestError("invalid_response",
                              f"no choices in the response: {str(shown)[:200]!r}",
                              retryable=True)
    stats.record_usage(getattr(response, "usage", None))
    out = []
    for i, choice in enumerate(choices):
        content = getattr(getattr(choice, "message", None), "content", None)
        if not isinstance(content, str):
            reason = getattr(choice, "finish_reason", None)
            raise LLMRequestError("no_content", f"choice {i} has no text "
                                  f"(finish_reason={reason!r})")
        out.append(content)
    return out


def _create_kwargs(messages: Iterable, model: str, config: GenerationConfig,
                   timeout: float | None) -> dict[str, Any]:
    if config.stream:
        raise ValueError("GenerationConfig(stream=True) is not supported by Curator's clients: "
                         "a stage needs the whole answer; leave stream=False")
    kwargs = {"messages": messages, "model": model, "max_tokens": config.max_tokens,
              "n": config.n, "seed": config.seed, "stop": config.stop, "stream": config.stream,
              "temperature": config.temperature, "top_p": config.top_p, "timeout": timeout}
    if config.extra_kwargs:
        overlapping = set(config.extra_kwargs) & set(kwargs)
        if overlapping:
            logger.warning("extra_kwargs will overwrite existing parameter(s): %s",
                           sorted(overlapping))
        kwargs.update(config.extra_kwargs)
    return kwargs


def _check_unused(who: str, formatter: ConversationFormatter | None,
                  config: GenerationConfig) -> None:
    if formatter is not None:
        warnings.warn(f"conversation_formatter is not used in an {who}", stacklevel=3)
    if config.top_k is not None:
        warnings.warn(f"top_k is not used in an {who}", stacklevel=3)


def _sdk_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    if kwargs.get("base_url") and "api_key" not in kwargs and not os.environ.get(
            "OPENAI_API_KEY"):
        return {**kwargs, "api_key": PLACEHOLDER_API_KEY}
    return kwargs


def _no_sdk_retries(client: Any) -> None:
    # the openai SDK would retry on its own too; one policy decides (ours)
    try:
        client.max_retries = 0
    except AttributeError:
        pass


class OpenAIClient(LLMClient):
    """A blocking client of an OpenAI-compatible server.

    ``OpenAIClient(base_url=..., api_key=..., timeout=120, max_retries=3, base_delay=1.0,
    cache_dir=None)``: ``timeout`` seconds per request; ``max_retries`` / ``base_delay`` set the
    retry policy (backoff with jitter, ``Retry-After`` honoured); ``cache_dir`` keeps answers on
    disk so a re-run sends no request that already completed. Every other keyword goes to
    ``openai.OpenAI``. Without ``api_key`` and ``OPENAI_API_KEY``, a ``base_url`` gets a
    placeholder key (local servers need none).
    """

    def __init__(self, **kwargs: Any) -> None:
        self.timeout = kwargs.pop("timeout", 120)
        self.max_retries = kwargs.pop("max_retries", 3)
        self.base_delay = kwargs.pop("base_delay", 1.0)
        self.cache = as_cache(kwargs.pop("cache_dir", None))
        self.openai_kwargs = kwargs

    def __getstate__(self) -> dict[str, Any]:  # ships to workers without its connection pool
        return {k: v for k, v in self.__dict__.items() if k != "client"}

    def setup(self) -> None:
        """Make the ``openai.OpenAI`` client."""
        self.client = OpenAI(**_sdk_kwargs(self.openai_kwargs))
        _no_sdk_retries(self.client)

    def query_model(self, *, messages: Iterable, model: str,
                    conversation_formatter: ConversationFormatter | None = None,
                    generation_config: GenerationConfig | dict | None = None) -> list[str]:
        """The model's answers, one per choice (see :class:`AsyncLLMClient.query_model` for the
        cache and the retries). Raises :class:`LLMRequestError` when the request still fails
        after its retries."""
        config = as_generation_config(generation_config)
        _check_unused("OpenAIClient", conversation_formatter, config)
        create_kwargs = _create_kwargs(messages, model, config, self.timeout)
        key, hit = self._cached(model, messages, config)
        if hit is not None:
            return hit
        if not hasattr(self, "client"):
            self.setup()

        def once() -> list[str]:
            try:
                response = self.client.chat.completions.create(**create_kwargs)
            except Exception as exc:
                typed = to_request_error(exc)
                if typed is None:
                    raise
                raise typed from exc
            return _choices(response, self.stats)

        from curator_llm.client.llm_client import logger as client_logger

        choices = self.retry_policy.call(once, stats=self.stats, log=client_logger)
        self._store(key, model, choices)
        return choices


class AsyncOpenAIClient(AsyncLLMClient):
    """An asyncio client of an OpenAI-compatible server: at most ``max_concurrent_requests``
    requests in flight, ``max_retries`` retries with backoff from ``base_delay`` seconds
    (``Retry-After`` honoured), ``timeout`` seconds per request, answers kept in ``cache_dir``
    when given. Every other keyword goes to ``openai.AsyncOpenAI``."""

    def __init__(self, max_concurrent_requests: int = 5, max_retries: int = 3,
                 base_delay: float = 1.0, **kwargs: Any) -> None:
        super().__init__(max_concurrent_requests, max_retries, base_delay)
        self.timeout = kwargs.pop("timeout", 120)
        self.cache = as_cache(kwargs.pop("cache_dir", None))
        self.openai_kwargs = kwargs
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def __getstate__(self) -> dict[str, Any]:  # ships without connections bound to a loop
        skip = {"client", "_client_loop", "_semaphore", "_semaphore_loop"}
        state = {k: v for k, v in self.__dict__.items() if k not in skip}
        state.update(_client_loop=None, _semaphore=None, _semaphore_loop=None)
        return state

    def setup(self) -> None:
        """Make the ``openai.AsyncOpenAI`` client (bound to the running event loop, if any)."""
        self.client = AsyncOpenAI(**_sdk_kwargs(self.openai_kwargs))
        _no_sdk_retries(self.client)
        try:
            self._client_loop = asyncio.get_running_loop()
        except RuntimeError:
            self._client_loop = None

    async def _query_model_impl(self, *, messages: Iterable, model: str,
                                conversation_formatter: ConversationFormatter | None = None,
                                generation_config: GenerationConfig | dict | None = None
                                ) -> list[str]:
        config = as_generation_config(generation_config)
        _check_unused("AsyncOpenAIClient", conversation_formatter, config)
        create_kwargs = _create_kwargs(messages, model, config, self.timeout)
        loop = asyncio.get_running_loop()
        if not hasattr(self, "client"):
            self.setup()
        elif getattr(self, "_client_loop", None) is None:
            self._client_loop = loop
        elif self._client_loop is not loop:
            # an httpx pool belongs to the loop that opened it: a new loop needs a new client
            self.setup()
        try:
            response = await self.client.chat.completions.create(**create_kwargs)
        except Exception as exc:
            typed = to_request_error(exc)
            if typed is None:
                raise
            raise typed from exc
        return _choices(response, self.stats)

"""Many requests at once, each ending as an answer or a typed failure — never an exception that
loses the batch. What the synthetic-data stages call from ``process_batch``."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from curator_llm.client.errors import LLMRequestError
from curator_llm.client.llm_client import (
    AsyncLLMClient,
    GenerationConfig,
    LLMClient,
    as_generation_config,
)

__all__ = ["Generated", "RequestFailure", "generate_batch", "agenerate_batch", "run_coroutine"]

T = TypeVar("T")


@dataclass(frozen=True)
class Generated:
    """The answers to one conversation, one string per choice (``GenerationConfig.n``)."""

    texts: list[str]

    @property
    def text(self) -> str:
        """The first choice."""
        return self.texts[0]

    ok = True


@dataclass(frozen=True)
class RequestFailure:
    """A conversation whose request failed after its retries: what goes to the rejected sink.
    ``reason`` as :class:`LLMRequestError` (``http_429``, ``timeout``, ``connection``, …, or
    ``error`` for an exception of another type), ``status`` the HTTP status if the server
    answered, ``message`` the server's or transport's message, ``attempts`` requests sent."""

    reason: str
    message: str
    status: int | None = None
    attempts: int = 1
    error: str = field(default="", repr=False)

    ok = False

    @classmethod
    def from_exception(cls, exc: BaseException) -> RequestFailure:
        if isinstance(exc, LLMRequestError):
            return cls(exc.reason, exc.message, exc.status, exc.attempts, str(exc))
        return cls("error", f"{type(exc).__name__}: {exc}", None, 1,
                   f"{type(exc).__name__}: {exc}")

    def __str__(self) -> str:
        return self.error or f"{self.reason}: {self.message}"


Outcome = Generated | RequestFailure


class _LoopThread:
    """One event loop per process, in a daemon thread, that async clients live on between
    batches (their connection pools stay open and bound to one loop)."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None
    _pid: int | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None or cls._pid != os.getpid() or cls._loop.is_closed():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="curator-llm-loop",
                                 daemon=True).start()
                cls._loop, cls._pid = loop, os.getpid()
            return cls._loop


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on the process's client loop and return its result (usable
    from plain code and from inside another running loop alike)."""
    return asyncio.run_coroutine_threadsafe(coro, _LoopThread.get()).result()


async def agenerate_batch(client: AsyncLLMClient, conversations: Sequence[Any], *, model: str,
                          generation_config: GenerationConfig | dict | None = None
                          ) -> list[Outcome]:
    """:func:`generate_batch` for async callers (on the caller's loop)."""
    config = as_generation_config(generation_config)

    async def one(messages: Any) -> Outcome:
        try:
            return Generated(await client.query_model(messages=messages, model=model,
                                                      generation_config=config))
        except Exception as exc:
            return RequestFailure.from_exception(exc)

    return list(await asyncio.gather(*(one(m) for m in conversations)))


def generate_batch(client: LLMClient | AsyncLLMClient, conversations: Sequence[Any], *,
                   model: str, generation_config: GenerationConfig | dict | None = None,
                   max_concurrent_requests: int | None = None) -> list[Outcome]:
    """Ask ``model`` for every conversation (a list of chat messages each); return, in order,
    a :class:`Generated` or a :class:`RequestFailure` per conversation.

    Requests run concurrently: an :class:`AsyncLLMClient` bounds them by its own
    ``max_concurrent_requests`` (on a per-process event loop that keeps its connections
    between batches); a blocking :class:`LLMClient` runs in at most
    ``max_concurrent_requests`` threads (default 1). Answers come from the client's cache when
    it has one; the counts are in ``client.stats``.
    """
    if isinstance(client, AsyncLLMClient):
        return run_coroutine(agenerate_batch(client, conversations, model=model,
                                             generation_config=generation_config))
    config = as_generation_config(generation_config)

    def one(messages: Any) -> Outcome:
        try:
            return Generated(client.query_model(messages=messages, model=model,
                                                generation_config=config))
        except Exception as exc:
            return RequestFailure.from_exception(exc)

    workers = max(1, max_concurrent_requests or 1)
    if workers == 1 or len(conversations) <= 1:
        return [one(m) for m in conversations]
    with ThreadPoolExecutor(max_workers=min(workers, len(conversations))) as pool:
        return list(pool.map(one, conversations))

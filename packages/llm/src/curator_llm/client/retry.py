"""The one retry policy for model requests: exponential backoff with jitter, at least the
server's ``Retry-After``, on 429 / 408 / 409 / 5xx, timeouts, connection errors and invalid
responses. Any other error is raised at once.

Core's :func:`curator.executors.retry.run_with_retries` retries whole *tasks* (split the batch,
keep a failing task whole); this retries one *request* inside a task, so a 429 costs a short
wait and not the batch.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from curator_llm.client.errors import LLMRequestError

if TYPE_CHECKING:
    from curator_llm.client.stats import ClientStats

__all__ = ["RetryPolicy", "is_retryable", "parse_retry_after"]

T = TypeVar("T")

_RETRYABLE_STATUS = frozenset({408, 409, 429})
# How foreign exceptions (a user's own _query_model_impl) are recognised as transient: by
# their text, as NeMo Curator does, since they carry no status.
_TRANSIENT_WORDS = ("429", "rate", "connection", "readerror", "brokenresourceerror",
                    "apiconnectionerror", "timeout", "timed out")


def retryable_status(status: int) -> bool:
    """Whether an HTTP status is worth another try."""
    return status in _RETRYABLE_STATUS or status >= 500


def is_retryable(exc: BaseException) -> bool:
    """Whether the policy tries ``exc`` again: an :class:`LLMRequestError` says so itself;
    another exception is retried when its text names a rate limit or a connection problem."""
    if isinstance(exc, LLMRequestError):
        return exc.retryable
    if isinstance(exc, ConnectionError | TimeoutError | asyncio.TimeoutError):
        return True
    text = f"{type(exc).__name__} {exc}".lower()
    return any(w in text for w in _TRANSIENT_WORDS)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None if absent
    or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for one request: retry ``i`` (1-based) waits
    ``min(max_delay, base_delay * 2**(i-1)) * (1 + jitter * U[0,1))`` seconds, and never less
    than the server's ``Retry-After`` (capped at ``max_retry_after``)."""

    max_retries: int = 3
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: float = 0.5
    max_retry_after: float = 300.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_delay < 0 or self.max_delay < 0 or self.jitter < 0:
            raise ValueError(f"RetryPolicy needs non-negative values, got {self!r}")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first retry)."""
        backoff = min(self.max_delay, self.base_delay * 2 ** max(0, retry - 1))
        backoff *= 1.0 + self.jitter * random.random()
        if retry_after is not None:
            backoff = max(backoff, min(retry_after, self.max_retry_after))
        return backoff

    # -- running a request under the policy --------------------------------------------------
    def _after_failure(self, exc: BaseException, attempt: int, stats: ClientStats | None,
                       log: logging.Logger) -> float | None:
        """The wait before the next attempt, or None to give up (the caller raises)."""
        if not is_retryable(exc) or attempt > self.max_retries:
            if isinstance(exc, LLMRequestError):
                exc.attempts = attempt
            if stats is not None:
                stats.record_failed()
            return None
        retry_after = exc.retry_after if isinstance(exc, LLMRequestError) else None
        wait = self.delay(attempt, retry_after)
        if stats is not None:
            stats.record_retried()
        log.warning("model request failed (%s); attempt %d/%d, retrying in %.2fs",
                    str(exc)[:200], attempt, self.max_retries + 1, wait)
        return wait

    def call(self, fn: Callable[[], T], *, stats: ClientStats | None = None,
             log: logging.Logger | None = None) -> T:
        """``fn()`` under the policy (blocking waits)."""
        log = log or logging.getLogger(__name__)
        attempt = 0
        while True:
            attempt += 1
            if stats is not None:
                stats.record_sent()
            try:
                out = fn()
            except Exception as exc:
                wait = self._after_failure(exc, attempt, stats, log)
                if wait is None:
                    raise
                time.sleep(wait)
                continue
            if stats is not None:
                stats.record_succeeded()
            return out

    async def acall(self, fn: Callable[[], Awaitable[T]], *, stats: ClientStats | None = None,
                    log: logging.Logger | None = None) -> T:
        """``await fn()`` under the policy (waits yield to the event loop)."""
        log = log or logging.getLogger(__name__)
        attempt = 0
        while True:
            attempt += 1
            if stats is not None:
                stats.record_sent()
            try:
                out = await fn()
            except Exception as exc:
                wait = self._after_failure(exc, attempt, stats, log)
                if wait is None:
                    raise
                await asyncio.sleep(wait)
                continue
            if stats is not None:
                stats.record_succeeded()
            return out

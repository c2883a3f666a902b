"""Request accounting of one client in one process, for the run report."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["ClientStats", "StatsSnapshot"]


@dataclass(frozen=True)
class StatsSnapshot:
    """Counts since the client was made (or since the last :meth:`ClientStats.drain`).

    ``queries``: answers asked for (``query_model`` calls); ``cached``: answered from the
    response cache without a request; ``sent``: HTTP requests sent, retries included;
    ``retried``: of those, the repeats; ``succeeded`` / ``failed``: queries that ended with an
    answer / with an error after their retries; ``prompt_tokens`` / ``completion_tokens``: as
    the server reported them; ``request_seconds``: wall time during which at least one request
    was in flight (so ``requests_per_s`` is the rate while the client was busy)."""

    queries: int = 0
    cached: int = 0
    sent: int = 0
    retried: int = 0
    succeeded: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    request_seconds: float = 0.0

    @property
    def requests_per_s(self) -> float:
        """Queries answered by the server (succeeded) per second of request time."""
        return self.succeeded / self.request_seconds if self.request_seconds > 0 else 0.0

    def counts(self) -> dict[str, int]:
        """The integer counters (for :meth:`ProcessingStage.publish_counts`)."""
        return {"queries": self.queries, "cached": self.cached, "sent": self.sent,
                "retried": self.retried, "succeeded": self.succeeded, "failed": self.failed,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}

    def as_dict(self) -> dict[str, Any]:
        return {**self.counts(), "request_seconds": round(self.request_seconds, 6),
                "requests_per_s": round(self.requests_per_s, 3)}


class ClientStats:
    """Thread-safe counters a client updates as it works (see :class:`StatsSnapshot`).

    A stage publishes them into the run report after each batch with :meth:`publish`:
    the counters go to ``publish_counts("llm_requests", ...)`` (summed over workers, shown per
    stage in the summary and the run report) and the busy time to the custom metric
    ``llm_request_seconds``."""

    _FIELDS = ("queries", "cached", "sent", "retried", "succeeded", "failed", "prompt_tokens",
               "completion_tokens")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(self._FIELDS, 0)
        self._seconds = 0.0
        self._in_flight = 0
        self._busy_since = 0.0

    def __getstate__(self) -> dict[str, Any]:  # a copy shipped to a worker starts at zero
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()

    def _add(self, name: str, n: int = 1) -> None:
        with self._lock:
            self._counts[name] += n

    def record_query(self) -> None:
        self._add("queries")

    def record_cached(self) -> None:
        self._add("cached")

    def record_sent(self) -> None:
        with self._lock:
            self._counts["sent"] += 1
            if self._in_flight == 0:
                self._busy_since = time.perf_counter()
            self._in_flight += 1

    def _done(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1
            self._end_one()

    def _end_one(self) -> None:
        self._in_flight -= 1
        if self._in_flight == 0:
            self._seconds += time.perf_counter() - self._busy_since

    def record_retried(self) -> None:
        with self._lock:
            self._counts["retried"] += 1
            self._end_one()  # the failed attempt is over; the retry counts as a new send

    def record_succeeded(self) -> None:
        self._done("succeeded")

    def record_failed(self) -> None:
        self._done("failed")

    def record_usage(self, usage: Any) -> None:
        """Add the ``usage`` of a chat-completions response (an object or a dict)."""
        if usage is None:
            return
        get = usage.get if isinstance(usage, dict) else (lambda k: getattr(usage, k, None))
        prompt, completion = get("prompt_tokens"), get("completion_tokens")
        with self._lock:
            if isinstance(prompt, int):
                self._counts["prompt_tokens"] += prompt
            if isinstance(completion, int):
                self._counts["completion_tokens"] += completion

    def snapshot(self) -> StatsSnapshot:
        with self._lock:
            seconds = self._seconds
            if self._in_flight:
                seconds += time.perf_counter() - self._busy_since
            return StatsSnapshot(**self._counts, request_seconds=seconds)

    def drain(self) -> StatsSnapshot:
        """The counts since the last drain, then start again from zero."""
        with self._lock:
            now = time.perf_counter()
            seconds = self._seconds
            if self._in_flight:
                seconds += now - self._busy_since
                self._busy_since = now
            snap = StatsSnapshot(**self._counts, request_seconds=seconds)
            self._counts = dict.fromkeys(self._FIELDS, 0)
            self._seconds = 0.0
            return snap

    def publish(self, stage: Any, counter: str = "llm_requests") -> StatsSnapshot:
        """Drain into ``stage``'s run-report counters (``stage.publish_counts``) and its custom
        metric ``llm_request_seconds``; returns what was published."""
        snap = self.drain()
        publish = getattr(stage, "publish_counts", None)
        if publish is not None:
            publish(counter, snap.counts())
        log_metrics = getattr(stage, "_log_metrics", None)
        if log_metrics is not None and snap.request_seconds:
            log_metrics({"llm_request_seconds": snap.request_seconds})
        return snap

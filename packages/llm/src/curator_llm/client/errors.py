"""The typed failure of a model request: what a stage turns into a rejected record."""

from __future__ import annotations

__all__ = ["LLMRequestError"]


class LLMRequestError(Exception):
    """A model request that failed, with the reason a rejected record carries.

    ``reason``: a short machine-readable cause — ``"http_<status>"`` (the server answered with
    an error status), ``"timeout"``, ``"connection"`` (refused, reset or dropped),
    ``"invalid_response"`` (not the chat-completions JSON) or ``"no_content"`` (a choice without
    text). ``status``: the HTTP status when the server answered. ``message``: the server's or
    the transport's message. ``retryable``: whether the retry policy tries it again (429, 408,
    409, 5xx, timeouts, connection errors, invalid responses). ``retry_after``: seconds the
    server asked to wait (``Retry-After``). ``attempts``: requests sent for this query when it
    was given up.
    """

    def __init__(self, reason: str, message: str, *, status: int | None = None,
                 retryable: bool = False, retry_after: float | None = None,
                 attempts: int = 1) -> None:
        self.reason = reason
        self.message = message
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.attempts = attempts
        super().__init__(reason, message)

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status is not None else ""
        tries = f" after {self.attempts} attempt(s)" if self.attempts > 1 else ""
        return f"{self.reason}{status}: {self.message}{tries}"

    def __reduce__(self):  # picklable across worker processes with its fields
        return (_rebuild, (self.reason, self.message, self.status, self.retryable,
                           self.retry_after, self.attempts))


def _rebuild(reason, message, status, retryable, retry_after, attempts) -> LLMRequestError:
    return LLMRequestError(reason, message, status=status, retryable=retryable,
                           retry_after=retry_after, attempts=attempts)

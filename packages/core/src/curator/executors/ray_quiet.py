"""Known harmless lines Ray logs at WARNING level on every successful run, dropped at the driver.

Only these exact messages of these loggers are dropped; Ray's other messages, and the workers'
logs, are left alone. Each is a notice about a default Curator chose on purpose:

- "Token authentication is enabled for this Ray cluster": the cluster Curator starts for a run
  uses token authentication (Ray's secure default); the opposite warning, that a cluster runs
  *without* it, is kept.
- "Progress bars disabled": Curator draws its own progress and turns Ray Data's off.
"""

from __future__ import annotations

import logging

__all__ = ["KNOWN_HARMLESS", "quiet_known_ray_lines"]

KNOWN_HARMLESS: dict[str, tuple[str, ...]] = {
    "ray._private.authentication.authentication_token_setup": (
        "Token authentication is enabled for this Ray cluster",),
    "ray.data._internal.progress": ("Progress bars disabled",),
}
"""Logger name -> the starts of the messages dropped from it."""


class _DropKnown(logging.Filter):
    def __init__(self, starts: tuple[str, ...]) -> None:
        super().__init__()
        self.starts = starts

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.starts)


def quiet_known_ray_lines() -> None:
    """Drop the :data:`KNOWN_HARMLESS` messages in this process (idempotent)."""
    for name, starts in KNOWN_HARMLESS.items():
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropKnown) for f in logger.filters):
            logger.addFilter(_DropKnown(starts))

"""Known harmless lines Ray logs on every successful run, dropped at the driver.

Only these exact messages are dropped; Ray's other messages, and the workers' logs, are left
alone. Each is a notice about a default Curator or Ray Data chose on purpose:

- "Token authentication is enabled for this Ray cluster": the cluster Curator starts for a run
  uses token authentication (Ray's secure default); the opposite warning, that a cluster runs
  *without* it, is kept.
- "Progress bars disabled": Curator draws its own progress and turns Ray Data's off.
- "Actor ... has constructor arguments in the object store and max_restarts > 0" (ERROR, from
  Ray's C++ core worker, once per driver process): Ray Data passes every actor of a pool its
  own object refs (its ``DataContext`` and map transformer, whatever the UDF's arguments
  and their size) and restarts dead actors (``max_restarts=-1``), which the dead-worker policy
  relies on. Ray Data holds those refs for the whole run, so the restart the line warns about
  works (ray-project/ray#53727). It cannot be filtered by a logging filter, and filtering
  stderr for the whole run would make it a pipe (no live bars), so
  :func:`quiet_actor_restart_notice` spends Ray's once-per-process line on a probe actor.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Iterator

__all__ = ["ACTOR_RESTART_NOTICE", "KNOWN_HARMLESS", "quiet_actor_restart_notice",
           "quiet_known_ray_lines"]

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


ACTOR_RESTART_NOTICE = b"has constructor arguments in the object store and max_restarts > 0"
"""The part of Ray's C++ line that :func:`quiet_actor_restart_notice` drops."""

_notice_spent = False


def quiet_actor_restart_notice() -> None:
    """Spend Ray's once-per-process :data:`ACTOR_RESTART_NOTICE` line before Ray Data starts an
    actor pool, so a successful run does not print it (idempotent; needs a Ray connection).

    A probe actor with an ``ObjectRef`` argument and ``max_restarts=1`` is created, and dropped
    before anything schedules it (it asks for a resource no node has, so no worker starts).
    Ray logs the line synchronously while creating it; file descriptor 2 goes to a temporary
    file for that call only, and everything else written meanwhile is written back. The line
    stays in Ray's driver log file (``python-core-driver-*.log``). Any failure leaves Ray's
    line as it was.
    """
    global _notice_spent
    if _notice_spent:
        return
    _notice_spent = True
    with contextlib.suppress(Exception):
        import ray

        probe = ray.remote(_RestartNoticeProbe).options(
            num_cpus=0, resources={"curator_restart_notice_probe": 1}, max_restarts=1)
        arg = ray.put(None)
        with _stderr_without(ACTOR_RESTART_NOTICE):
            actor = probe.remote(arg)
        ray.kill(actor, no_restart=True)


class _RestartNoticeProbe:
    def __init__(self, _arg: object) -> None:  # never runs: nothing can schedule it
        pass


@contextlib.contextmanager
def _stderr_without(needle: bytes) -> Iterator[None]:
    """Send file descriptor 2 to a temporary file inside the block, then write back every line
    that does not contain ``needle``."""
    with tempfile.TemporaryFile() as held:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(held.fileno(), 2)
            yield
        finally:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            kept = b"".join(line for line in held.read().splitlines(keepends=True)
                            if needle not in line)
            if kept:
                os.write(2, kept)

"""Child processes that never outlive the process that started them."""

from __future__ import annotations

import ctypes
import signal
import sys

__all__ = ["die_with_parent"]

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """In a child between fork and exec (``subprocess.Popen(..., preexec_fn=die_with_parent)``):
    ask Linux to send ``sig`` when the parent dies, so a server never outlives a driver killed
    with SIGKILL (no orphan). The parent is the thread that started the child: start it from a
    thread that lives as long as the child should. A no-op elsewhere."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        pass

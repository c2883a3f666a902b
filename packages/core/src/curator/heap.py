"""The C heap under the decoders: keep big buffers out of malloc's arenas, trim after a task.

glibc serves a block from its per-thread arenas unless it is bigger than the mmap threshold,
and it raises that threshold to the size of every mapped block freed (up to 32 MiB). After the
first decoded image, video frame or batch buffer is freed, buffers of every size up to it come
from the arenas of the threads that decode (the image reader's decoding threads, decord's
thread started at every seek, FFmpeg's frame threads), and what they free stays resident: a
run's memory creeps up by every arena's high-water mark. Used by the image reader, the video
stages and the deduplication tasks; no-ops where the C library is not glibc.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["keep_big_blocks_mapped", "trim_heap", "MMAP_THRESHOLD"]

MMAP_THRESHOLD = 2**20
"""Blocks of at least this many bytes are mapped and unmapped on their own (glibc's fixed
``M_MMAP_THRESHOLD``; setting it turns off the sliding threshold)."""

_M_MMAP_THRESHOLD = -3  # from glibc's malloc.h
_STATE: dict[str, Any] = {}


def _libc() -> Any:
    if "libc" not in _STATE:
        import ctypes

        try:  # the process's own symbols (ctypes.util.find_library would fork ldconfig)
            libc = ctypes.CDLL(None)
            _STATE["libc"] = libc if hasattr(libc, "malloc_trim") else None
        except OSError:
            _STATE["libc"] = None
    return _STATE["libc"]


def keep_big_blocks_mapped() -> None:
    """Fix this process's mmap threshold at :data:`MMAP_THRESHOLD` (once; left alone when the
    user set ``MALLOC_MMAP_THRESHOLD_``), so a freed frame buffer goes back to the OS at once."""
    if _STATE.get("mapped") or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return
    libc = _libc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    _STATE["mapped"] = True


def trim_heap() -> None:
    """Give the free pages of every arena back to the OS (``malloc_trim(0)``)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)

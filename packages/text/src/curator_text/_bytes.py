"""The numba helpers of the FineWeb kernels (``filters/fineweb/_kernels.py``, cached on disk):
compile options, an 8-byte load and the whitespace characters ``str.split()`` splits on. The
kernels of the default path (word counts, characters, byte classes, URLs, JSON strings, word
n-grams) are C, built at install time: ``curator_text._native``. Import this module only where a
numba kernel runs: it imports numba."""

from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from curator_text import _numba_cache

__all__ = ["jit", "inline", "load8", "SPACE_CLASSES", "SPACE_E2_80", "space_width"]

_numba_cache.install()  # cache fallback for a read-only install; the notice while compiling
_CACHE = _numba_cache.can_cache()
jit = nb.njit(cache=_CACHE, nogil=True)
"""The compile options of every numba text kernel: cached on disk, and releasing the GIL."""
inline = nb.njit(cache=_CACHE, nogil=True, inline="always")
"""A helper numba inlines into the kernel that calls it (no call cost)."""

@intrinsic
def load8(typingctx, arr, idx):
    """The 8 bytes of the uint8 array ``arr`` from ``idx`` as one little-endian uint64 (an
    unaligned load; the caller keeps ``idx + 8 <= len(arr)``)."""
    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), ir.IntType(64).as_pointer())
        return builder.load(ptr, align=1)
    return types.uint64(arr, idx), codegen


def _space_classes() -> np.ndarray:
    """Per byte value: 1 for the ASCII whitespace ``str.split()`` splits on, 2 for the first byte
    of the multi-byte characters that may be whitespace (U+0085, U+00A0, U+1680, U+2000-U+200A,
    U+2028, U+2029, U+202F, U+205F, U+3000), 0 otherwise."""
    classes = np.zeros(256, dtype=np.uint8)
    classes[[*range(9, 14), *range(28, 33)]] = 1
    classes[[0xC2, 0xE1, 0xE2, 0xE3]] = 2
    return classes


SPACE_CLASSES = _space_classes()
SPACE_E2_80 = np.zeros(256, dtype=np.bool_)
"""The third bytes of the spaces E2 80 xx (U+2000-U+200A, U+2028, U+2029, U+202F)."""
SPACE_E2_80[[*range(0x80, 0x8B), 0xA8, 0xA9, 0xAF]] = True


@inline
def space_width(buf, p, hi, classes, e2_80) -> int:
    """The bytes of the whitespace character at ``buf[p]`` (before ``hi``), or 0."""
    b0 = buf[p]
    kind = classes[b0]
    if kind != 2:
        return np.int64(kind)
    b1 = buf[p + 1] if p + 1 < hi else 0
    if b0 == 0xC2:
        return 2 if b1 == 0x85 or b1 == 0xA0 else 0
    b2 = buf[p + 2] if p + 2 < hi else 0
    if ((b0 == 0xE1 and b1 == 0x9A and b2 == 0x80) or (b0 == 0xE2 and b1 == 0x80 and e2_80[b2])
            or (b0 == 0xE2 and b1 == 0x81 and b2 == 0x9F)
            or (b0 == 0xE3 and b1 == 0x80 and b2 == 0x80)):
        return 3
    return 0

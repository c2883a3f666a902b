"""Vectorised helpers over Arrow string columns: ``pyarrow.compute`` kernels, and NumPy over the
UTF-8 bytes of a column (words exactly as ``str.split()`` finds them, character classes), so no
filter loops over documents in Python; the compiled kernels are in ``curator_text._native``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, wraps

import numpy as np
import pyarrow as pa
from curator._lazy import LazyModule

from curator_text import _native

__all__ = ["pc", "URL_REGEX", "NEMO_URL_REGEX", "WORD_SPLIT", "CHUNK_BYTES", "chunked", "np_bool",
           "lengths", "url_chars", "regex_count", "word_lists", "word_counts", "per_doc_sum", "ratio", "le",
           "between", "ge", "ASCII_WS", "ASCII_ALNUM", "text_bytes", "ASCII_LETTERS", "class_count",
           "class_count_and_lengths",
           "segment_counts", "ws_mask", "nonblank", "Tokens", "word_stats", "fast_word_counts",
           "spans", "per_text", "TextView", "text_view", "to_arrow", "to_numpy"]

URL_REGEX = r'(?:https?|ftp)://[^\s/$.?#<>"][^\s<>"]*|www\.[^\s<>"]+\.[^\s<>"]+'
"""A general URL pattern; a URL ends at whitespace, ``<``, ``>`` or ``"``."""
NEMO_URL_REGEX = r"https?://(?:[A-Za-z0-9$\-_@.&+/:=?#~]|[!*\(\),]|(?:%[0-9A-Fa-f]{2}))+"
"""NeMo Curator's URL pattern (used by the URL filters): it stops at ``<``, quotes and spaces."""
WORD_SPLIT = r"\s+"

pc = LazyModule("pyarrow.compute")
"""``pyarrow.compute``, imported when a filter first needs a kernel of it: the default text path
(compiled kernels, NumPy) runs without it, and a small run saves its ~50 ms of import and exit."""


CHUNK_BYTES = 1 << 18
"""Text bytes scored together by a ``chunked`` method: bounds its temporary arrays (a few bytes
per byte of text) whatever the batch size, and keeps them nearer the CPU caches (faster than
larger slices on the benchmark corpus)."""


@dataclass(frozen=True)
class TextView:
    """Texts as their UTF-8 bytes and where each starts and ends in them: a whole Arrow string
    array, or some of its rows, without a copy (what the compiled kernels read)."""

    buf: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)

    def slice(self, a: int, b: int) -> TextView:
        return TextView(self.buf, self.starts[a:b], self.ends[a:b])

    @property
    def args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(buf, starts, ends)``: a kernel's first arguments."""
        return self.buf, self.starts, self.ends


def text_view(texts: pa.Array | pa.ChunkedArray, rows: np.ndarray | None = None) -> TextView:
    """The :class:`TextView` of ``texts`` (only its ``rows``, in that order, when given)."""
    buf, offsets = text_bytes(texts)
    if rows is None:
        return TextView(buf, offsets[:-1], offsets[1:])
    return TextView(buf, offsets[rows], offsets[rows + 1])


def chunked(method: Callable) -> Callable:
    """Makes a ``score(self, texts) -> np.ndarray`` method (texts: an Arrow array or a
    :class:`TextView`) run on slices of about ``self.chunk_bytes`` (default ``CHUNK_BYTES``)
    text bytes each and concatenate the scores."""
    @wraps(method)
    def score(self, texts: pa.Array | TextView) -> np.ndarray:
        if isinstance(texts, pa.ChunkedArray):
            texts = texts.combine_chunks()
        if isinstance(texts, TextView):
            lens = texts.ends - texts.starts
        else:
            lens = np.diff(text_bytes(texts)[1])
        size = getattr(self, "chunk_bytes", None) or CHUNK_BYTES
        ends = np.cumsum(lens)
        if not len(ends) or ends[-1] <= size:
            return method(self, texts)
        cuts = np.searchsorted(ends, np.arange(size, ends[-1], size), side="right")
        cuts = np.r_[0, cuts[(cuts > 0) & (cuts < len(texts))], len(texts)]  # sorted
        cuts = cuts[np.r_[True, cuts[1:] != cuts[:-1]]]  # np.unique would import numpy.ma
        parts = (texts.slice(a, b) if isinstance(texts, TextView) else texts.slice(a, b - a)
                 for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True))
        return np.concatenate([np.asarray(method(self, part)) for part in parts])
    return score


def per_text(kernel: Callable, texts: pa.Array | TextView, *args: object,
             dtype: type = np.int64) -> np.ndarray:
    """``kernel(buf, starts, ends, *args, out)`` of :mod:`curator_text._native` on ``texts``
    (an Arrow string array or a :class:`TextView`): one value per text."""
    view = texts if isinstance(texts, TextView) else text_view(texts)
    out = np.empty(len(view), dtype=dtype)
    kernel(*view.args, *args, out)
    return out


# pyarrow imports pandas (~0.3 s, under the GIL) the first time it converts a NumPy array or a
# Python object (``pa.array(ndarray)``, ``pa.scalar``, ``Array.to_numpy()``, a compute call with a
# Python number): the filters' hot path converts through buffers instead, so a text pipeline that
# never asks for pandas never loads it.
_NUMPY_DTYPES = {"double": "float64", "float": "float32", "halffloat": "float16"}


def to_arrow(values: object) -> pa.Array:
    """``values`` as one Arrow array: a 1-D NumPy bool or number array through its buffer (no
    copy for numbers, NaN kept as NaN as ``pa.array`` does), Arrow arrays as they are."""
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    if isinstance(values, pa.Array):
        return values
    if isinstance(values, np.ndarray) and values.ndim == 1:
        if values.dtype == np.bool_:
            bits = np.packbits(values, bitorder="little")
            return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
        if values.dtype.kind in "iuf" and values.dtype.byteorder in "=|<":
            arr = np.ascontiguousarray(values)
            return pa.Array.from_buffers(pa.from_numpy_dtype(arr.dtype), len(arr),
                                         [None, pa.py_buffer(arr)])
    return pa.array(values)


def to_numpy(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A bool or number Arrow array without nulls as NumPy through its buffer (numbers: no
    copy); anything else through ``to_numpy``."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if arr.null_count == 0:
        data, n, off = arr.buffers()[1], len(arr), arr.offset
        if pa.types.is_boolean(t):
            if data is None:
                return np.zeros(n, dtype=bool)
            bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little",
                                 count=off + n)
            return bits[off:].astype(bool)
        if pa.types.is_integer(t) or pa.types.is_floating(t):
            dtype = np.dtype(_NUMPY_DTYPES.get(str(t), str(t)))
            return np.frombuffer(data, dtype=dtype, count=off + n)[off:]
    return arr.to_numpy(zero_copy_only=False)


def np_bool(arr: pa.Array) -> np.ndarray:
    """A boolean Arrow array as NumPy (nulls as False) without pyarrow's pandas-backed path."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.null_count:
        arr = pc.fill_null(arr, pa.Array.from_buffers(pa.bool_(), 1, [None, _FALSE_BIT])[0])
    return to_numpy(arr)


_FALSE_BIT = pa.py_buffer(b"\x00")


def lengths(texts: pa.Array | TextView) -> np.ndarray:
    """The characters of every text (float64; a null: NaN), by one compiled pass."""
    if isinstance(texts, TextView):
        return per_text(_native.char_counts, texts).astype(np.float64)
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if texts.null_count:
        return pc.utf8_length(texts).to_numpy(zero_copy_only=False).astype(np.float64)
    return per_text(_native.char_counts, texts).astype(np.float64)


def url_chars(texts: pa.Array | TextView) -> np.ndarray:
    """The characters of every text that removing NeMo Curator's URLs (``NEMO_URL_REGEX``)
    removes, by one compiled pass (float64; nulls count 0)."""
    return per_text(_native.url_chars, texts).astype(np.float64)


def regex_count(texts: pa.Array, pattern: str, ignore_case: bool = False) -> np.ndarray:
    return pc.count_substring_regex(texts, pattern, ignore_case=ignore_case).to_numpy(
        zero_copy_only=False).astype(np.float64)


def word_lists(texts: pa.Array) -> pa.ListArray:
    return pc.utf8_split_whitespace(texts)


def word_counts(texts: pa.Array | TextView) -> np.ndarray:
    return fast_word_counts(texts)


def per_doc_sum(lists: pa.ListArray, values: np.ndarray, n: int) -> np.ndarray:
    """The sum of ``values`` (one per list element) for each of the ``n`` lists."""
    if len(values) == 0:
        return np.zeros(n, dtype=np.float64)
    idx = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    return np.bincount(idx, weights=np.asarray(values, dtype=np.float64), minlength=n)


def ratio(num: np.ndarray, den: np.ndarray, empty: float) -> np.ndarray:
    out = np.full(len(num), empty, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def le(scores: pa.Array, bound: float) -> pa.Array:
    return _compare(scores, bound, np.less_equal, "less_equal")


def ge(scores: pa.Array, bound: float) -> pa.Array:
    return _compare(scores, bound, np.greater_equal, "greater_equal")


def between(scores: pa.Array, low: float, high: float) -> pa.Array:
    """``low <= scores <= high`` (nulls stay null)."""
    values = _null_free_numbers(scores)
    if values is None:
        return pc.and_(ge(scores, low), le(scores, high))
    return to_arrow((values >= low) & (values <= high))


def _compare(scores: pa.Array, bound: float, np_op: Callable, pc_op: str) -> pa.Array:
    values = _null_free_numbers(scores)
    if values is None:
        return getattr(pc, pc_op)(scores, bound)  # nulls stay null
    return to_arrow(np_op(values, bound))


def _null_free_numbers(scores: pa.Array | np.ndarray) -> np.ndarray | None:
    """``scores`` as NumPy when they are numbers without nulls (compared there, without
    ``pyarrow.compute``), else ``None``."""
    if isinstance(scores, np.ndarray):
        return scores
    if scores.null_count == 0 and (pa.types.is_integer(scores.type)
                                   or pa.types.is_floating(scores.type)):
        return to_numpy(scores)
    return None


ASCII_WS = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
"""The ASCII characters ``str.split()`` splits on (including the separators \\x1c-\\x1f)."""
ASCII_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _ascii_bytes(texts: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(is_ascii mask, the data bytes, offsets relative to the bytes) of a string array."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    return (np_bool(pc.string_is_ascii(texts)), *text_bytes(texts))


def text_bytes(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(the UTF-8 bytes of every text one after another, offsets into them: ``len(texts) + 1``)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if not len(texts):
        return np.zeros(0, np.uint8), np.zeros(1, np.int64)
    off_type = np.int64 if pa.types.is_large_string(texts.type) else np.int32
    offsets = np.frombuffer(texts.buffers()[1], dtype=off_type)[
        texts.offset:texts.offset + len(texts) + 1].astype(np.int64)
    data = texts.buffers()[2]
    buf = (np.frombuffer(data, dtype=np.uint8) if data is not None
           else np.zeros(0, np.uint8))[offsets[0]:offsets[-1]]
    return buf, offsets - offsets[0]


def _count_type(buf: np.ndarray) -> type:
    return np.int32 if len(buf) < 2**31 - 1 else np.int64


ASCII_LETTERS = ASCII_ALNUM[:52]


def class_count(texts: pa.Array, ascii_chars: str, char_class: str | None = None) -> np.ndarray:
    """How many characters of each text belong to a class: ``ascii_chars`` (its ASCII members,
    counted on the raw bytes of ASCII-only texts) or the RE2 class ``char_class`` (e.g.
    ``[\\p{L}\\p{N}]``) for the other texts. ``char_class=None``: the class has no non-ASCII
    member, so every text is counted on its bytes (UTF-8 multi-byte characters never match)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    n = len(texts)
    if char_class is None or n == 0:
        return class_count_and_lengths(texts, ascii_chars)[0]
    out = np.zeros(n, dtype=np.float64)
    is_ascii, buf, offsets = _ascii_bytes(texts)
    if is_ascii.any():
        out[is_ascii] = class_count_and_lengths(texts, ascii_chars)[0][is_ascii]
    if not is_ascii.all():
        mask = ~is_ascii
        sub = texts.filter(pa.array(mask))
        rest = pc.utf8_length(pc.replace_substring_regex(sub, f"{char_class}+", ""))
        out[mask] = lengths(sub) - rest.to_numpy(zero_copy_only=False)
    return out


def class_count_and_lengths(texts: pa.Array | TextView,
                            ascii_chars: str) -> tuple[np.ndarray, np.ndarray]:
    """(``class_count(texts, ascii_chars)``, ``lengths(texts)``) from one pass over the bytes,
    16 at a time (the class as ranges of bytes)."""
    view = texts if isinstance(texts, TextView) else text_view(texts)
    in_class = np.empty(len(view), dtype=np.int64)
    chars = np.empty(len(view), dtype=np.int64)
    _native.range_counts(*view.args, _byte_ranges(ascii_chars), in_class, chars)
    return in_class.astype(np.float64), chars.astype(np.float64)


@cache
def _ascii_mask(chars: str) -> np.ndarray:
    """True for the bytes of the ASCII ``chars``."""
    mask = np.zeros(256, dtype=bool)
    mask[[ord(c) for c in chars]] = True
    mask.flags.writeable = False
    return mask


@cache
def _byte_ranges(chars: str) -> bytes:
    """The ASCII ``chars`` as runs of consecutive bytes: ``lo, hi`` pairs (inclusive)."""
    codes = sorted({ord(c) for c in chars})
    if not codes or codes[-1] > 127:
        raise ValueError(f"expected ASCII characters, got {chars!r}")
    runs = [[codes[0], codes[0]]]
    for c in codes[1:]:
        if c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return bytes(b for run in runs for b in run)


def segment_counts(mask: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """How many bytes of ``mask`` are set in each ``offsets[i]:offsets[i + 1]`` (as float64):
    the set positions (or, when most are set, the unset ones) found by ``searchsorted``."""
    if mask.size and 2 * np.count_nonzero(mask) > mask.size:
        return np.diff(offsets).astype(np.float64) - segment_counts(~mask, offsets)
    return np.diff(np.searchsorted(np.flatnonzero(mask), offsets)).astype(np.float64)


# the multi-byte UTF-8 characters str.split() splits on: U+0085, U+00A0 (lead C2), U+1680 (E1),
# U+2000-U+200A, U+2028, U+2029, U+202F, U+205F (E2), U+3000 (E3)
_WS_E2_80 = np.zeros(256, dtype=bool)
_WS_E2_80[[*range(0x80, 0x8B), 0xA8, 0xA9, 0xAF]] = True


def ws_mask(buf: np.ndarray) -> np.ndarray:
    """True at every byte (of UTF-8 ``buf``) that belongs to a whitespace character, exactly the
    characters ``str.split()`` splits on (ASCII ones and the Unicode spaces)."""
    ws = (buf == 32) | ((buf - np.uint8(9)) <= 4) | ((buf - np.uint8(28)) <= 3)
    lead = np.flatnonzero((buf >= 0xC2) & (buf <= 0xE3))
    if len(lead):
        pad = np.concatenate([buf, np.zeros(2, dtype=np.uint8)])
        b0, b1, b2 = pad[lead], pad[lead + 1], pad[lead + 2]
        two = (b0 == 0xC2) & ((b1 == 0x85) | (b1 == 0xA0))
        three = (((b0 == 0xE1) & (b1 == 0x9A) & (b2 == 0x80))
                 | ((b0 == 0xE2) & (b1 == 0x80) & _WS_E2_80[b2])
                 | ((b0 == 0xE2) & (b1 == 0x81) & (b2 == 0x9F))
                 | ((b0 == 0xE3) & (b1 == 0x80) & (b2 == 0x80)))
        for k, hit in ((0, two | three), (1, two | three), (2, three)):
            ws[lead[hit] + k] = True
    return ws


def nonblank(texts: pa.Array) -> np.ndarray:
    """True for every text with a character that is not whitespace (``text.strip() != ""``):
    the first byte decides most texts, the bytes of the others are looked at together."""
    buf, offsets = text_bytes(texts)
    ws = ws_mask(buf)
    lens = np.diff(offsets)
    out = lens > 0
    out[out] = ~ws[offsets[:-1][out]]
    rest = np.flatnonzero(~out & (lens > 1))
    if len(rest):
        pos, heads = spans(offsets[rest] + 1, lens[rest] - 1)
        out[rest] = ~np.logical_and.reduceat(ws[pos], heads)
    return out


def _word_starts(word: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """True at the first byte of every word: a word byte after a space or at a text's start."""
    start = word.copy()
    start[1:] &= ~word[:-1]
    inner = offsets[:-1][offsets[:-1] < len(word)]
    start[inner] = word[inner]
    return start


class Tokens:
    """The whitespace-separated words of a column of texts, exactly as ``str.split()`` finds them,
    from the UTF-8 bytes with NumPy (no per-document Python). ``doc``: each word's document;
    ``chars``: each word's length in characters; ``n_words``: words per document; ``first``:
    each document's first word; ``words`` (made on first use): every word as one Arrow string
    array, document after document."""

    __slots__ = ("_buf", "_ends", "_starts", "_word", "_words", "chars", "doc", "first",
                 "n_words")

    def __init__(self, texts: pa.Array) -> None:
        buf, offsets = text_bytes(texts)
        word = ~ws_mask(buf)
        end = word.copy()
        end[:-1] &= ~word[1:]
        last = offsets[1:][offsets[1:] > offsets[:-1]] - 1
        end[last] = word[last]
        self._buf, self._word, self._words = buf, word, None
        self._starts = np.flatnonzero(_word_starts(word, offsets))  # byte positions in ``buf``
        self._ends = np.flatnonzero(end) + 1
        bounds = np.searchsorted(self._starts, offsets)
        self.first, self.n_words = bounds[:-1], np.diff(bounds)
        self.doc = np.repeat(np.arange(len(offsets) - 1), self.n_words)
        self.chars = self._ends - self._starts
        if len(buf) and buf.max() >= 0x80:  # characters: bytes that do not continue one
            self.chars -= self._count((buf & 0xC0) == 0x80)

    def _count(self, mask: np.ndarray) -> np.ndarray:
        """How many bytes of each word are set in ``mask`` (quickest when few are)."""
        hits = np.flatnonzero(mask & self._word)
        if len(hits) > len(self._starts) // 4:
            cs = np.r_[0, np.cumsum(mask, dtype=_count_type(mask))]
            return (cs[self._ends] - cs[self._starts]).astype(np.int64)
        return np.bincount(np.searchsorted(self._starts, hits, side="right") - 1,
                           minlength=len(self._starts))

    @property
    def words(self) -> pa.Array:
        if self._words is None:
            starts, ends = self._starts, self._ends
            data = self._buf[self._word]
            offs = np.r_[0, np.cumsum(ends - starts)]
            wide = len(data) >= 2**31 - 1
            self._words = (pa.LargeStringArray if wide else pa.StringArray).from_buffers(
                len(starts), pa.py_buffer(offs.astype(np.int64 if wide else np.int32)),
                pa.py_buffer(data))
        return self._words

    def has_byte(self, chars: str) -> np.ndarray:
        """True for every word with a byte among the ASCII ``chars``:
        the first byte decides most words, the bytes of the others are looked at together."""
        lut, buf, starts = _ascii_mask(chars), self._buf, self._starts
        out = lut[buf[starts]]
        rest = np.flatnonzero(~out & (self.n_bytes > 1))
        if len(rest):
            pos, heads = spans(starts[rest] + 1, self.n_bytes[rest] - 1)
            out[rest] = np.logical_or.reduceat(lut[buf[pos]], heads)
        return out

    def words_at(self, idx: np.ndarray) -> pa.Array:
        """The words ``idx`` as an Arrow string array (without making ``words``)."""
        lens = self.n_bytes[idx]
        pos, heads = spans(self._starts[idx], lens)
        return pa.StringArray.from_buffers(len(idx), pa.py_buffer(
            np.r_[heads, len(pos)].astype(np.int64 if len(pos) >= 2**31 - 1 else np.int32)),
            pa.py_buffer(self._buf[pos]))

    @property
    def n_bytes(self) -> np.ndarray:
        """Each word's length in bytes."""
        return self._ends - self._starts

    def per_doc_sum(self, values: np.ndarray) -> np.ndarray:
        """The sum of ``values`` (one per word) for every document."""
        return np.bincount(self.doc, weights=values, minlength=len(self.n_words))

    def per_doc_max(self, values: np.ndarray) -> np.ndarray:
        """The max of ``values`` (one per word) for every document (0 without words)."""
        out = np.zeros(len(self.n_words), dtype=np.float64)
        has = self.n_words > 0
        if has.any():
            out[has] = np.maximum.reduceat(values, self.first[has])
        return out


def word_stats(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(words, characters that are not whitespace) of every text, as ``str.split()`` sees them."""
    buf, offsets = text_bytes(texts)
    word = ~ws_mask(buf)
    chars = word & ((buf & 0xC0) != 0x80)
    return segment_counts(_word_starts(word, offsets), offsets), segment_counts(chars, offsets)


def fast_word_counts(texts: pa.Array | TextView) -> np.ndarray:
    """Whitespace-separated word counts (like ``len(text.split())``), as float64."""
    return per_text(_native.word_counts, texts).astype(np.float64)


def spans(starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the positions ``starts[i]`` … ``starts[i] + lens[i] - 1`` for every ``i`` one after
    another, where each span begins in them)."""
    heads = np.r_[0, np.cumsum(lens)[:-1]].astype(np.int64)
    total = int(heads[-1] + lens[-1]) if len(lens) else 0
    return np.arange(total) + np.repeat(starts - heads, lens), heads

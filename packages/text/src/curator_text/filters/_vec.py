"""Vectorised helpers over Arrow string columns (pyarrow.compute)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

URL_REGEX = r"(?:https?|ftp)://[^\s/$.?#][^\s]*|www\.[^\s]+\.[^\s]+"
NEMO_URL_REGEX = r"https?://(?:[A-Za-z0-9$\-_@.&+/:=?#~]|[!*\(\),]|(?:%[0-9A-Fa-f]{2}))+"
"""NeMo Curator's URL pattern (used by the URL filters): it stops at ``<``, quotes and spaces."""
WORD_SPLIT = r"\s+"


def np_bool(arr: pa.Array) -> np.ndarray:
    """A boolean Arrow array as NumPy (nulls as False) without pyarrow's pandas-backed path."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return pc.fill_null(arr, False).cast(pa.uint8()).to_numpy(zero_copy_only=False).astype(bool)


def lengths(texts: pa.Array) -> np.ndarray:
    return pc.utf8_length(texts).to_numpy(zero_copy_only=False).astype(np.float64)


def regex_count(texts: pa.Array, pattern: str, ignore_case: bool = False) -> np.ndarray:
    return pc.count_substring_regex(texts, pattern, ignore_case=ignore_case).to_numpy(
        zero_copy_only=False).astype(np.float64)


def word_lists(texts: pa.Array) -> pa.ListArray:
    return pc.utf8_split_whitespace(texts)


def word_counts(texts: pa.Array) -> np.ndarray:
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


def per_doc_max(lists: pa.ListArray, values: pa.Array, n: int) -> np.ndarray:
    """The max of ``values`` (one per list element) for each of the ``n`` lists (0 if empty)."""
    out = np.zeros(n, dtype=np.float64)
    if len(values) == 0:
        return out
    idx = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
    np.maximum.at(out, idx, values.to_numpy(zero_copy_only=False).astype(np.float64))
    return out


def le(scores: pa.Array, bound: float) -> pa.Array:
    return pc.less_equal(scores, bound)


def ge(scores: pa.Array, bound: float) -> pa.Array:
    return pc.greater_equal(scores, bound)


ASCII_WS = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
"""The ASCII characters ``str.split()`` splits on (including the separators \\x1c-\\x1f)."""
ASCII_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _ascii_bytes(texts: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(is_ascii mask, the data bytes, offsets relative to the bytes) of a string array."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    is_ascii = np_bool(pc.string_is_ascii(texts))
    off_type = np.int64 if pa.types.is_large_string(texts.type) else np.int32
    offsets = np.frombuffer(texts.buffers()[1], dtype=off_type)[
        texts.offset:texts.offset + len(texts) + 1].astype(np.int64)
    data = texts.buffers()[2]
    buf = (np.frombuffer(data, dtype=np.uint8) if data is not None
           else np.zeros(0, np.uint8))[offsets[0]:offsets[-1]]
    return is_ascii, buf, offsets - offsets[0]


def _count_type(buf: np.ndarray) -> type:
    return np.int32 if len(buf) < 2**31 - 1 else np.int64


def _lut(chars: str) -> np.ndarray:
    lut = np.zeros(256, dtype=bool)
    lut[[ord(c) for c in chars]] = True
    return lut


def class_count(texts: pa.Array, ascii_chars: str, char_class: str) -> np.ndarray:
    """How many characters of each text belong to a class: ``ascii_chars`` (its ASCII members,
    counted on the raw bytes of ASCII-only texts) or the RE2 class ``char_class`` (e.g.
    ``[\\p{L}\\p{N}]``) for the other texts."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    n = len(texts)
    out = np.zeros(n, dtype=np.float64)
    if n == 0:
        return out
    is_ascii, buf, offsets = _ascii_bytes(texts)
    if is_ascii.any():
        cs = np.zeros(len(buf) + 1, dtype=_count_type(buf))
        np.cumsum(_lut(ascii_chars)[buf], out=cs[1:])
        out[is_ascii] = (cs[offsets[1:]] - cs[offsets[:-1]])[is_ascii]
    if not is_ascii.all():
        mask = ~is_ascii
        sub = texts.filter(pa.array(mask))
        rest = pc.utf8_length(pc.replace_substring_regex(sub, f"{char_class}+", ""))
        out[mask] = lengths(sub) - rest.to_numpy(zero_copy_only=False)
    return out


def fast_word_counts(texts: pa.Array) -> np.ndarray:
    """Whitespace-separated word counts (like ``len(text.split())``)."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    n = len(texts)
    out = np.zeros(n, dtype=np.float64)
    if n == 0:
        return out
    is_ascii, buf, offsets = _ascii_bytes(texts)
    if is_ascii.any():
        # ASCII_WS by comparisons (several times faster than a table look-up)
        word = ~((buf == 32) | ((buf - np.uint8(9)) <= 4) | ((buf - np.uint8(28)) <= 3))
        start = word.copy()
        start[1:] &= ~word[:-1]
        inner = offsets[:-1][offsets[:-1] < len(buf)]
        start[inner] = word[inner]
        cs = np.zeros(len(buf) + 1, dtype=_count_type(buf))
        np.cumsum(start, out=cs[1:])
        out[is_ascii] = (cs[offsets[1:]] - cs[offsets[:-1]])[is_ascii]
    if not is_ascii.all():
        mask = ~is_ascii
        sub = pc.utf8_trim_whitespace(texts.filter(pa.array(mask)))
        cnt = pc.list_value_length(pc.utf8_split_whitespace(sub)).to_numpy(
            zero_copy_only=False) - (lengths(sub) == 0)
        out[mask] = cnt
    return out

"""Compiled kernels (numba; compiled once, then loaded from numba's on-disk cache) that score the
word n-gram filters. Per document: its words (runs of bytes that are not whitespace, as
``str.split()`` finds them, given ``_vec.ws_mask``) are numbered exactly with a hash table (equal
hashes are confirmed on the bytes), its n-grams are counted with another one (confirmed on the
word numbers), and the top n-gram's occurrences are counted with Knuth-Morris-Pratt as
``str.count`` does. Linear in the bytes; no Python per document.

``hash_mask`` keeps only some bits of every hash: tests pass a small one to make collisions
certain; it is all ones otherwise."""

from __future__ import annotations

import numba as nb
import numpy as np
import pyarrow as pa

from curator_text._bytes import jit
from curator_text.filters._vec import text_bytes, ws_mask

__all__ = ["top_ngram_scores", "duplicate_ngram_scores", "ALL_BITS"]

ALL_BITS = np.uint64(0xFFFFFFFFFFFFFFFF)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_jit = jit
_inline = nb.njit(cache=True, nogil=True, inline="always")  # inlined by numba: no call costs


def top_ngram_scores(texts: pa.Array, n: int, hash_mask: np.uint64 = ALL_BITS) -> np.ndarray:
    """``RepeatingTopNGramsFilter.score_document`` of every text: the top n-gram (most
    frequent, then most characters, then first) joined by spaces, its occurrences times its
    characters over the text's."""
    buf, offsets = text_bytes(texts)
    return _top(buf, ws_mask(buf), offsets, n, hash_mask)


def duplicate_ngram_scores(texts: pa.Array, n: int,
                           hash_mask: np.uint64 = ALL_BITS) -> np.ndarray:
    """``RepeatingDuplicateNGramsFilter.score_document`` of every text: the characters of the
    n-grams seen before in the text, each counted once, plus the spaces between their words,
    over the text's characters."""
    buf, offsets = text_bytes(texts)
    return _duplicates(buf, ws_mask(buf), offsets, n, hash_mask)


@_jit
def _table_mask(m: int) -> int:
    """The slot mask of a hash table for ``m`` entries (at most half full)."""
    size = 16
    while size < 2 * m:
        size *= 2
    return size - 1


@_inline
def _slot(h: np.uint64, mask: int) -> int:
    """A table slot for hash ``h`` (its bits mixed as by MurmurHash3's finaliser)."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    return np.int64(h & np.uint64(mask))


@_inline
def _same_bytes(buf, a0, a1, b0, b1) -> bool:  # noqa: ANN001
    if a1 - a0 != b1 - b0:
        return False
    for k in range(a1 - a0):
        if buf[a0 + k] != buf[b0 + k]:
            return False
    return True


@_jit
def _words(buf, ws, lo, hi, n_words, starts, ends, ids, whash, cs, table, used, hash_mask):  # noqa: ANN001, ANN202, E501
    """The ``n_words`` words of ``buf[lo:hi]``: ``starts``/``ends``, ``ids[w]`` (the first word
    equal to word ``w``), ``whash[w]`` (its hash), ``cs[w + 1]`` (the characters of words
    ``0 … w``). ``table`` (all -1) is left all -1 (the slots used are noted in ``used``).
    Returns the characters of ``buf[lo:hi]``."""
    mask = _table_mask(n_words)
    w, distinct, chars, inside, h, word_chars = 0, 0, 0, False, _FNV_OFFSET, 0
    cs[0] = 0
    for p in range(lo, hi + 1):
        if p < hi:
            b = buf[p]
            new = (b & 0xC0) != 0x80  # a byte that starts a character
            chars += new
            if not ws[p]:
                if not inside:
                    starts[w], inside, h, word_chars = p, True, _FNV_OFFSET, 0
                h = (h ^ np.uint64(b)) * _FNV_PRIME
                word_chars += new
                continue
        if not inside:
            continue
        ends[w], inside = p, False  # a word ends: number it
        h &= hash_mask
        whash[w], cs[w + 1] = h, cs[w] + word_chars
        slot = _slot(h, mask)
        while True:
            r = table[slot]
            if r < 0:
                table[slot], ids[w], used[distinct] = w, w, slot
                distinct += 1
                break
            if whash[r] == h and _same_bytes(buf, starts[r], ends[r], starts[w], p):
                ids[w] = r
                break
            slot = (slot + 1) & mask
        w += 1
    for k in range(distinct):
        table[used[k]] = -1
    return chars


@_inline
def _seen_before(j, n, ids, whash, ghash, table, mask, hash_mask):  # noqa: ANN001, ANN202
    """The slot of the first n-gram equal to the n-gram at word ``j`` (its first word is
    ``table[slot]``), or ``-1 - slot`` when there is none (then ``j`` is put in that slot)."""
    h = _FNV_OFFSET
    for k in range(n):
        h = (h ^ whash[j + k]) * _FNV_PRIME
    h &= hash_mask
    ghash[j] = h
    slot = _slot(h, mask)
    while True:
        r = table[slot]
        if r < 0:
            table[slot] = j
            return -1 - slot
        if ghash[r] == h:
            k = 0
            while k < n and ids[r + k] == ids[j + k]:
                k += 1
            if k == n:
                return slot
        slot = (slot + 1) & mask


@_jit
def _count_occurrences(buf, lo, hi, pat, m, fail) -> int:  # noqa: ANN001
    """Non-overlapping occurrences of ``pat[:m]`` in ``buf[lo:hi]``, leftmost first, as
    ``str.count`` (Knuth-Morris-Pratt: linear in both)."""
    fail[0] = 0
    q = 0
    for i in range(1, m):
        while q > 0 and pat[i] != pat[q]:
            q = fail[q - 1]
        if pat[i] == pat[q]:
            q += 1
        fail[i] = q
    found, q = 0, 0
    for i in range(lo, hi):
        c = buf[i]
        while q > 0 and pat[q] != c:
            q = fail[q - 1]
        if pat[q] == c:
            q += 1
            if q == m:
                found += 1
                q = 0  # the next occurrence starts after this one
    return found


@_jit
def _word_counts(ws, offsets):  # noqa: ANN001, ANN202
    """The words of every text: its non-whitespace bytes after whitespace or at its start."""
    out = np.zeros(len(offsets) - 1, dtype=np.int64)
    space = ws.view(np.uint8)
    for d in range(len(offsets) - 1):
        count, before = 0, np.uint8(1)
        for p in range(offsets[d], offsets[d + 1]):
            count += before > space[p]
            before = space[p]
        out[d] = count
    return out


@_jit
def _scratch(counts):  # noqa: ANN001, ANN202
    """Arrays for the most words ``counts`` has, and a hash table of -1s for them."""
    cap = counts.max() + 2 if len(counts) else 2
    i64 = np.empty((6, cap), dtype=np.int64)  # starts, ends, ids, character sums, counts, used
    u64 = np.empty((2, cap), dtype=np.uint64)  # word hashes, n-gram hashes
    return i64, u64, np.full(_table_mask(cap) + 1, -1, dtype=np.int64)


@_jit
def _top(buf, ws, offsets, n, hash_mask):  # noqa: ANN001, ANN202
    """``top_ngram_scores`` of the texts ``buf[offsets[d]:offsets[d + 1]]`` (UTF-8; ``ws``:
    the whitespace mask of ``buf``)."""
    out = np.ones(len(offsets) - 1)
    words_of = _word_counts(ws, offsets)
    i64, u64, table = _scratch(words_of)
    starts, ends, ids, cs, counts, used = i64[0], i64[1], i64[2], i64[3], i64[4], i64[5]
    whash, ghash = u64[0], u64[1]
    pat, fail = np.empty(64, dtype=np.uint8), np.empty(64, dtype=np.int64)  # grown as needed
    for d in range(len(offsets) - 1):
        lo, hi = offsets[d], offsets[d + 1]
        n_words = words_of[d]
        if n_words < n:
            continue
        length = _words(buf, ws, lo, hi, n_words, starts, ends, ids, whash, cs, table, used,
                        hash_mask)
        m = n_words - n + 1
        mask, distinct = _table_mask(m), 0
        for j in range(m):
            slot = _seen_before(j, n, ids, whash, ghash, table, mask, hash_mask)
            if slot < 0:
                counts[j], used[distinct] = 1, -1 - slot
                distinct += 1
            else:
                counts[table[slot]] += 1
                counts[j] = 0
        best, best_count, best_chars = 0, 0, -1
        for k in range(distinct):  # in the order of first occurrence: the first wins ties
            j = table[used[k]]
            table[used[k]] = -1
            c, chars = counts[j], cs[j + n] - cs[j]
            if c > best_count or (c == best_count and chars > best_chars):
                best, best_count, best_chars = j, c, chars
        size = ends[best + n - 1] - starts[best]  # at least the top n-gram joined by spaces
        if size > len(pat):
            pat, fail = np.empty(size, dtype=np.uint8), np.empty(size, dtype=np.int64)
        size = 0
        for k in range(n):
            if k:
                pat[size] = 32
                size += 1
            for p in range(starts[best + k], ends[best + k]):
                pat[size] = buf[p]
                size += 1
        found = _count_occurrences(buf, lo, hi, pat, size, fail)
        out[d] = np.float64(found * (best_chars + n - 1)) / np.float64(length)
    return out


@_jit
def _duplicates(buf, ws, offsets, n, hash_mask):  # noqa: ANN001, ANN202
    """``duplicate_ngram_scores`` of the texts (as ``_top``)."""
    out = np.ones(len(offsets) - 1)
    words_of = _word_counts(ws, offsets)
    i64, u64, table = _scratch(words_of)
    starts, ends, ids, cs, used = i64[0], i64[1], i64[2], i64[3], i64[5]
    whash, ghash = u64[0], u64[1]
    for d in range(len(offsets) - 1):
        lo, hi = offsets[d], offsets[d + 1]
        n_words = words_of[d]
        if n_words < n:
            continue
        length = _words(buf, ws, lo, hi, n_words, starts, ends, ids, whash, cs, table, used,
                        hash_mask)
        m = n_words - n + 1
        mask, distinct, dup, overlap = _table_mask(m), 0, 0, 0
        for j in range(m):
            slot = _seen_before(j, n, ids, whash, ghash, table, mask, hash_mask)
            if slot < 0:
                used[distinct] = -1 - slot
                distinct += 1
            else:
                dup += cs[j + n] - cs[j + overlap] + min(n - overlap, n - 1)
                overlap = n
            overlap = max(overlap - 1, 0)
        for k in range(distinct):
            table[used[k]] = -1
        out[d] = np.float64(dup) / np.float64(length)
    return out

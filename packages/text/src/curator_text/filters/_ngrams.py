"""Compiled kernels (numba; compiled once, then loaded from numba's on-disk cache) that score the
word n-gram filters. Per document, in one pass over its bytes: where its words start and end
(runs of bytes that are not whitespace, exactly as ``str.split()`` finds them) and its
characters. Then its words are numbered exactly with a hash table (a word of up to 8 bytes is its
own key, read as one integer; longer ones are hashed and confirmed on the bytes), its n-grams are
counted with another table (confirmed on the word numbers), and the top n-gram's occurrences are
counted as ``str.count`` does: from the words for two or more words joined by spaces (see
``_count_joined``), with Knuth-Morris-Pratt over the bytes for one word (``_count_words``, a
second pass compiled only when a filter counts single words). Linear in the bytes; no Python
per document. Arrays are allocated in Python, not in the kernels: numba's compile time, paid on
a machine's first run, grows with every function and specialisation it compiles.

``hash_mask`` keeps only some bits of every hash: tests pass a small one to make collisions
certain; it is all ones otherwise."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from curator_text._bytes import (
    HIGH_BITS,
    SPACE_CLASSES,
    SPACE_E2_80,
    ascii_words,
    inline,
    jit,
    load8,
    space_width,
    trailing_zeros,
)
from curator_text.filters._vec import text_bytes

__all__ = ["top_ngram_scores", "duplicate_ngram_scores", "ALL_BITS"]

ALL_BITS = np.uint64(0xFFFFFFFFFFFFFFFF)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def top_ngram_scores(texts: pa.Array, n: int, hash_mask: np.uint64 = ALL_BITS) -> np.ndarray:
    """``RepeatingTopNGramsFilter.score_document`` of every text: the top n-gram (most
    frequent, then most characters, then first) joined by spaces, its occurrences times its
    characters over the text's."""
    buf, offsets = text_bytes(texts)
    res = np.zeros((5, len(offsets) - 1), dtype=np.int64)
    _top(buf, offsets, n, hash_mask, SPACE_CLASSES, SPACE_E2_80, *_scratch(offsets), res)
    found, chars, length, first, end = res
    if n == 1:  # one word: found inside other words too, so searched for in the bytes
        _count_words(buf, offsets, first, end, length, found,
                     np.empty(max(int((end - first).max(initial=0)), 1), np.int64))
    # texts of fewer than n words score 1.0 (length 0 here)
    return np.divide(found * (chars + (n - 1)), length, out=np.ones(len(length)),
                     where=length > 0)


def duplicate_ngram_scores(texts: pa.Array, n: int,
                           hash_mask: np.uint64 = ALL_BITS) -> np.ndarray:
    """``RepeatingDuplicateNGramsFilter.score_document`` of every text: the characters of the
    n-grams seen before in the text, each counted once, plus the spaces between their words,
    over the text's characters."""
    buf, offsets = text_bytes(texts)
    out = np.ones(len(offsets) - 1)
    _duplicates(buf, offsets, n, hash_mask, SPACE_CLASSES, SPACE_E2_80, *_scratch(offsets), out)
    return out


@jit
def _table_mask(m: int) -> int:
    """The slot mask of a hash table for ``m`` entries (at most half full)."""
    size = 16
    while size < 2 * m:
        size *= 2
    return size - 1


@inline
def _mix(h: np.uint64) -> np.uint64:
    """``h`` with its bits mixed (as by MurmurHash3's finaliser): any of its bits make a slot."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    return h


@inline
def _same_bytes(buf, a0, a1, b0, b1) -> bool:
    if a1 - a0 != b1 - b0:
        return False
    for k in range(a1 - a0):
        if buf[a0 + k] != buf[b0 + k]:
            return False
    return True


@inline
def _bounds(buf, lo, hi, starts, ends, classes, e2_80):
    """The words of ``buf[lo:hi]`` in ``starts``/``ends``; returns (words, characters). ASCII is
    read 8 bytes at a time: the word edges in them are bits, written out with few branches;
    other bytes a character at a time."""
    n_starts, n_ends, before, continuations, p = 0, 0, np.uint64(1), 0, lo
    while p < hi:
        if p + 8 <= hi:
            x = load8(buf, p)
            if not x & HIGH_BITS:
                first, last, next_before = ascii_words(x, before)
                for _ in range(2):  # most 8 bytes hold at most 2 of each: no branch
                    starts[n_starts] = p + (trailing_zeros(first) >> np.uint64(3))
                    n_starts += first != 0
                    first &= first - np.uint64(1)
                    ends[n_ends] = p + (trailing_zeros(last) >> np.uint64(3))
                    n_ends += last != 0
                    last &= last - np.uint64(1)
                while first:
                    starts[n_starts] = p + (trailing_zeros(first) >> np.uint64(3))
                    n_starts += 1
                    first &= first - np.uint64(1)
                while last:
                    ends[n_ends] = p + (trailing_zeros(last) >> np.uint64(3))
                    n_ends += 1
                    last &= last - np.uint64(1)
                before = next_before
                p += 8
                continue
        width = space_width(buf, p, hi, classes, e2_80)
        space = np.uint64(1) if width else np.uint64(0)
        starts[n_starts] = p
        n_starts += before > space
        ends[n_ends] = p
        n_ends += space > before
        before = space
        continuations += (buf[p] & 0xC0) == 0x80 if not width else width - 1
        p += max(width, 1)
    ends[n_ends] = hi
    return n_starts, (hi - lo) - continuations


@jit
def _words(buf, lo, hi, starts, ends, ids, whash, keys, cs, table, used, hash_mask,
           classes, e2_80):
    """The words of ``buf[lo:hi]``: ``starts``/``ends``, ``ids[w]`` (the first word equal to
    word ``w``), ``whash[w]`` (its hash), ``keys[w]`` (its bytes when it has at most 8),
    ``cs[w + 1]`` (the characters of words ``0 … w``). ``table`` (all -1) is left all -1 (the
    slots used are noted in ``used``). Returns (words, characters of ``buf[lo:hi]``)."""
    n_words, chars_all = _bounds(buf, lo, hi, starts, ends, classes, e2_80)
    mask, distinct, size = _table_mask(n_words), 0, len(buf)
    cs[0] = 0
    for w in range(n_words):
        s, e = starts[w], ends[w]
        length = e - s
        if length <= 8:  # the word is its own key: equal keys (and lengths) are equal words
            if s + 8 <= size:
                v = load8(buf, s)
                if length < 8:
                    v &= (np.uint64(1) << np.uint64(8 * length)) - np.uint64(1)
            else:
                v = np.uint64(0)
                for k in range(length):
                    v |= np.uint64(buf[s + k]) << np.uint64(8 * k)
            h = _mix(v ^ np.uint64(length))
            chars = length
            if v & HIGH_BITS:
                for k in range(s, e):
                    chars -= (buf[k] & 0xC0) == 0x80
        else:
            v, h, chars = np.uint64(0), _FNV_OFFSET, length
            for k in range(s, e):
                b = buf[k]
                h = (h ^ np.uint64(b)) * _FNV_PRIME
                chars -= (b & 0xC0) == 0x80
            h = _mix(h)
        h &= hash_mask
        whash[w], keys[w], cs[w + 1] = h, v, cs[w] + chars
        slot = np.int64(h & np.uint64(mask))
        while True:
            r = table[slot]
            if r < 0:
                table[slot], ids[w], used[distinct] = w, w, slot
                distinct += 1
                break
            if whash[r] == h and ends[r] - starts[r] == length and (
                    keys[r] == v if length <= 8 else _same_bytes(buf, starts[r], ends[r], s, e)):
                ids[w] = r
                break
            slot = (slot + 1) & mask
    for k in range(distinct):
        table[used[k]] = -1
    return n_words, chars_all


@inline
def _seen_before(j, n, ids, whash, ghash, table, mask, hash_mask):
    """The slot of the first n-gram equal to the n-gram at word ``j`` (its first word is
    ``table[slot]``), or ``-1 - slot`` when there is none (then ``j`` is put in that slot)."""
    h = _FNV_OFFSET
    for k in range(n):
        h = (h ^ whash[j + k]) * _FNV_PRIME
    h &= hash_mask
    ghash[j] = h
    slot = np.int64(_mix(h) & np.uint64(mask))
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


@jit
def _count_words(buf, offsets, first, end, length, found, fail):
    """``found[d]``: non-overlapping occurrences, leftmost first, as ``str.count``, of the bytes
    ``buf[first[d]:end[d]]`` in text ``d`` (where ``length[d] > 0``), by Knuth-Morris-Pratt
    (linear in both)."""
    for d in range(len(offsets) - 1):
        if length[d] == 0:
            continue
        p0, m = first[d], end[d] - first[d]
        fail[0] = 0
        q = 0
        for i in range(1, m):
            while q > 0 and buf[p0 + i] != buf[p0 + q]:
                q = fail[q - 1]
            if buf[p0 + i] == buf[p0 + q]:
                q += 1
            fail[i] = q
        hits, q = 0, 0
        for i in range(offsets[d], offsets[d + 1]):
            c = buf[i]
            while q > 0 and buf[p0 + q] != c:
                q = fail[q - 1]
            if buf[p0 + q] == c:
                q += 1
                if q == m:
                    hits += 1
                    q = 0  # the next occurrence starts after this one
        found[d] = hits


@jit
def _count_joined(buf, starts, ends, ids, n_words, best, n) -> int:
    """``str.count`` of words ``best … best + n - 1`` joined by single spaces (``n >= 2``) in
    the text of the ``n_words`` words, from the words, not the bytes. An occurrence's first
    word ends a text word (a space follows it), its last word starts one (a space precedes it),
    the ones between are whole text words, and one space byte separates each: every occurrence
    is found at the text word its first word ends. Counted as ``str.count``: non-overlapping,
    leftmost first."""
    f0, f1 = starts[best], ends[best]
    l0 = f1 - f0
    last0, last1 = starts[best + n - 1], ends[best + n - 1]
    l_last = last1 - last0
    tail = buf[f1 - 1]
    found, free_from = 0, -1
    for a in range(n_words - n + 1):
        e = ends[a]
        if buf[e - 1] != tail or e - starts[a] < l0:
            continue
        ok = True
        for k in range(n - 1):
            gap = ends[a + k]
            if starts[a + k + 1] != gap + 1 or buf[gap] != 32:
                ok = False
                break
            if 0 < k + 1 < n - 1 and ids[a + k + 1] != ids[best + k + 1]:
                ok = False
                break
        if not ok:
            continue
        z = starts[a + n - 1]
        if ends[a + n - 1] - z < l_last:
            continue
        if ids[a] != ids[best]:
            for k in range(l0):
                if buf[e - l0 + k] != buf[f0 + k]:
                    ok = False
                    break
        if ok and ids[a + n - 1] != ids[best + n - 1]:
            for k in range(l_last):
                if buf[z + k] != buf[last0 + k]:
                    ok = False
                    break
        if ok and e - l0 >= free_from:
            found += 1
            free_from = z + l_last
    return found


def _scratch(offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Arrays for the most words a text of ``offsets`` can have, and a hash table of -1s."""
    cap = int(np.diff(offsets).max(initial=0)) // 2 + 3
    i64 = np.empty((6, cap), dtype=np.int64)  # starts, ends, ids, character sums, counts, used
    u64 = np.empty((3, cap), dtype=np.uint64)  # word hashes, n-gram hashes, word keys
    return i64, u64, np.full(_table_mask(cap) + 1, -1, dtype=np.int64)


@jit
def _top(buf, offsets, n, hash_mask, classes, e2_80, i64, u64, table, res):
    """Per text ``buf[offsets[d]:offsets[d + 1]]`` (UTF-8) of at least ``n`` words, in the
    rows of ``res``: its top n-gram's occurrences ``found`` (``n >= 2``; ``_count_words``
    counts one word), the characters of its words ``chars``, the text's characters ``length``,
    its bytes ``first:end`` (the rows stay 0 for shorter texts). Scratch: ``i64``, ``u64``,
    ``table`` (see ``_scratch``)."""
    starts, ends, ids, cs, counts, used = i64[0], i64[1], i64[2], i64[3], i64[4], i64[5]
    whash, ghash, keys = u64[0], u64[1], u64[2]
    found, chars, length, first, end = res[0], res[1], res[2], res[3], res[4]
    for d in range(len(offsets) - 1):
        n_words, size = _words(buf, offsets[d], offsets[d + 1], starts, ends, ids, whash, keys,
                               cs, table, used, hash_mask, classes, e2_80)
        if n_words < n:
            continue
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
        top, top_count, top_chars = np.int64(0), np.int64(0), np.int64(-1)
        for k in range(distinct):  # in the order of first occurrence: the first wins ties
            j = table[used[k]]
            table[used[k]] = -1
            c, w_chars = counts[j], cs[j + n] - cs[j]
            if c > top_count or (c == top_count and w_chars > top_chars):
                top, top_count, top_chars = j, c, w_chars
        if n > 1:
            found[d] = _count_joined(buf, starts, ends, ids, n_words, top, n)
        chars[d], length[d], first[d], end[d] = top_chars, size, starts[top], ends[top]


@jit
def _duplicates(buf, offsets, n, hash_mask, classes, e2_80, i64, u64, table, out):
    """``out[d]``: ``duplicate_ngram_scores`` of the texts (as ``_top``) of at least ``n``
    words."""
    starts, ends, ids, cs, used = i64[0], i64[1], i64[2], i64[3], i64[5]
    whash, ghash, keys = u64[0], u64[1], u64[2]
    for d in range(len(offsets) - 1):
        lo, hi = offsets[d], offsets[d + 1]
        n_words, length = _words(buf, lo, hi, starts, ends, ids, whash, keys, cs, table, used,
                                 hash_mask, classes, e2_80)
        if n_words < n:
            continue
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

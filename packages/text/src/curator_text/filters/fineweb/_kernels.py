"""Compiled kernels (numba, cached on disk) over the word numbers of a tokenized batch
(:class:`~curator_text.filters._english_words.TokenizedBatch`): Gopher's n-gram repetition
rules and the word statistics of Gopher's quality rules. An n-gram is identified by a polynomial
hash of its words' 63-bit hashes (computed in O(1) per n-gram from prefix hashes), then mixed;
64-bit collisions are the only way two different n-grams can be taken as equal."""

from __future__ import annotations

import numpy as np

from curator_text._bytes import inline, jit

__all__ = ["repetition_codes", "quality_stats", "sentence_counts"]

_BASE = np.uint64(0x9E3779B97F4A7C15)


@inline
def _mix(h):
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@jit
def _table_size(m: int) -> int:
    size = 16
    while size < 2 * m:
        size *= 2
    return size


@jit
def repetition_codes(ids, offsets, lengths, hashes, text_len, top_ns, top_fracs, dup_ns,
                     dup_fracs):
    """Per text: 0 if it passes Gopher's n-gram rules, ``1 + i`` for the first failing
    ``top_ns[i]`` rule (top n-gram characters times occurrences over the text's characters),
    ``1 + len(top_ns) + j`` for the first failing ``dup_ns[j]`` rule (characters of the n-grams
    seen before, scanning as datatrove does: skip ``n`` words after a repeat)."""
    n_docs = len(offsets) - 1
    out = np.zeros(n_docs, np.int8)
    max_words = 0
    for d in range(n_docs):
        max_words = max(max_words, offsets[d + 1] - offsets[d])
    size = _table_size(max_words + 1)
    keys = np.zeros(size, np.uint64)
    counts = np.zeros(size, np.int64)
    stamp = np.zeros(size, np.int64)
    gen = 0
    prefix = np.zeros(max_words + 1, np.uint64)
    cum = np.zeros(max_words + 1, np.int64)
    grams = np.zeros(max_words + 1, np.uint64)
    max_n = 1
    for n in top_ns:
        max_n = max(max_n, n)
    for n in dup_ns:
        max_n = max(max_n, n)
    powers = np.ones(max_n + 1, np.uint64)
    for k in range(1, max_n + 1):
        powers[k] = powers[k - 1] * _BASE
    for d in range(n_docs):
        w0 = offsets[d]
        nw = offsets[d + 1] - w0
        total = float(text_len[d])
        if nw == 0 or total == 0.0:
            continue
        for i in range(nw):
            t = ids[w0 + i]
            prefix[i + 1] = prefix[i] * _BASE + np.uint64(hashes[t])
            cum[i + 1] = cum[i] + lengths[t]
        code = 0
        for r in range(len(top_ns)):
            n = top_ns[r]
            m = nw - n + 1
            if m <= 0:
                continue
            gen += 1
            mask = _table_size(m) - 1
            best = 0
            for i in range(m):
                g = _mix(prefix[i + n] - prefix[i] * powers[n])
                grams[i] = g
                s = np.int64(g & np.uint64(mask))
                while stamp[s] == gen and keys[s] != g:
                    s = (s + 1) & mask
                if stamp[s] != gen:
                    stamp[s] = gen
                    keys[s] = g
                    counts[s] = 0
                counts[s] += 1
                best = max(best, counts[s])
            top_chars = 0
            for i in range(m):  # the first n-gram with the top count (Counter.most_common)
                g = grams[i]
                s = np.int64(g & np.uint64(mask))
                while keys[s] != g:
                    s = (s + 1) & mask
                if counts[s] == best:
                    top_chars = (cum[i + n] - cum[i] + n - 1) * best
                    break
            if top_chars / total > top_fracs[r]:
                code = 1 + r
                break
        if code == 0:
            for r in range(len(dup_ns)):
                n = dup_ns[r]
                gen += 1
                mask = _table_size(max(nw - n + 1, 1)) - 1
                repeated = 0
                i = 0
                while i < nw - n + 1:
                    g = _mix(prefix[i + n] - prefix[i] * powers[n])
                    s = np.int64(g & np.uint64(mask))
                    while stamp[s] == gen and keys[s] != g:
                        s = (s + 1) & mask
                    if stamp[s] == gen:
                        repeated += cum[i + n] - cum[i]
                        i += n
                    else:
                        stamp[s] = gen
                        keys[s] = g
                        i += 1
                if repeated / total > dup_fracs[r]:
                    code = 1 + len(top_ns) + r
                    break
        out[d] = code
    return out


@jit
def quality_stats(ids, offsets, lengths, flags, stop_index, n_stop):
    """Per text: words, non-symbol words, their characters, words with a letter, and distinct
    stop words (``stop_index[id]`` >= 0 for a stop word)."""
    n_docs = len(offsets) - 1
    out = np.zeros((n_docs, 5), np.int64)
    seen = np.zeros(max(n_stop, 1), np.int64)
    for d in range(n_docs):
        n_nonsym = 0
        chars = 0
        alpha = 0
        stops = 0
        for j in range(offsets[d], offsets[d + 1]):
            t = ids[j]
            f = flags[t]
            if not f & 1:
                n_nonsym += 1
                chars += lengths[t]
            if f & 2:
                alpha += 1
            k = stop_index[t] if t < len(stop_index) else -1
            if k >= 0 and seen[k] != d + 1:
                seen[k] = d + 1
                stops += 1
        out[d, 0] = offsets[d + 1] - offsets[d]
        out[d, 1] = n_nonsym
        out[d, 2] = chars
        out[d, 3] = alpha
        out[d, 4] = stops
    return out


@jit
def sentence_counts(ids, offsets, flags):
    """Per line: its sentences as spaCy's sentencizer splits them (a new sentence starts at the
    first word after a sentence-ending character that is not itself punctuation)."""
    n = len(offsets) - 1
    out = np.zeros(n, np.int64)
    for d in range(n):
        if offsets[d + 1] == offsets[d]:
            continue
        count = 1
        seen_end = False
        for j in range(offsets[d], offsets[d + 1]):
            f = flags[ids[j]]
            terminal = f & 4
            if seen_end and not f & 8 and not terminal:
                count += 1
                seen_end = False
            elif terminal:
                seen_end = True
        out[d] = count
    return out

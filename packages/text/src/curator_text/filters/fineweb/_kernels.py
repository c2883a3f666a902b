"""Compiled kernels (numba, cached on disk) over the word numbers of a tokenized batch
(:class:`~curator_text.filters._english_words.TokenizedBatch`): Gopher's n-gram repetition
rules and the word statistics of Gopher's quality rules. An n-gram is identified by a polynomial
hash of its words' 63-bit hashes (computed in O(1) per n-gram from prefix hashes), then mixed;
64-bit collisions are the only way two different n-grams can be taken as equal."""

from __future__ import annotations

import numpy as np

from curator_text._bytes import inline, jit, load8, space_width

__all__ = ["repetition_codes", "line_repetition", "line_stats", "quality_stats", "sentence_counts", "chunk_scan", "chunk_rehash",
           "chunk_words", "word_attributes", "text_hashes", "permutation_minima"]

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
            clean_from = max_n + 1  # no n-gram of this many words repeats (nor any longer one)
            for r in range(len(dup_ns)):
                n = dup_ns[r]
                if n >= clean_from:
                    continue
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
                if repeated == 0:
                    clean_from = min(clean_from, n)
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


@inline
def _space_before(buf, lo, q, classes, e2_80):
    """The bytes of the whitespace character that ends at ``q`` (not before ``lo``), or 0."""
    b = buf[q - 1]
    if b < 128:
        return np.int64(classes[b])
    if q - 2 >= lo and space_width(buf, q - 2, q, classes, e2_80) == 2:
        return 2
    if q - 3 >= lo and space_width(buf, q - 3, q, classes, e2_80) == 3:
        return 3
    return 0


@inline
def _chars(buf, a, b):
    n = 0
    for p in range(a, b):
        if buf[p] & 0xC0 != 0x80:
            n += 1
    return n


@jit
def _segments(buf, lo, hi, seg_s, seg_e, paragraphs):
    """Cut ``buf[lo:hi]`` at line breaks (``paragraphs``: at blank lines) into ``seg_s``/``seg_e``;
    a run of newlines ends one segment. Returns the number of segments."""
    n = 0
    start = lo
    p = lo
    while p < hi:
        if buf[p] == 10 and (not paragraphs or (p + 1 < hi and buf[p + 1] == 10)):
            seg_s[n] = start
            seg_e[n] = p
            n += 1
            while p < hi and buf[p] == 10:
                p += 1
            start = p
        else:
            p += 1
    seg_s[n] = start
    seg_e[n] = hi
    return n + 1


@jit
def _segment_duplicates(buf, seg_s, seg_e, n_seg, keys, first, stamp, gen):
    """(segments equal to an earlier one, their characters): datatrove's ``find_duplicates``.
    Segments are compared in full (a hash finds the candidates)."""
    mask = len(keys) - 1
    dups = 0
    chars = 0
    for i in range(n_seg):
        a, b = seg_s[i], seg_e[i]
        h = _mix(np.uint64(b - a) + _FNV_OFFSET)
        for p in range(a, b):
            h = (h ^ np.uint64(buf[p])) * _FNV_PRIME
        h = _mix(h)
        s = np.int64(h & np.uint64(mask))
        seen = False
        while stamp[s] == gen:
            if keys[s] == h:
                j = first[s]
                if seg_e[j] - seg_s[j] == b - a:
                    same = True
                    for k in range(b - a):
                        if buf[seg_s[j] + k] != buf[a + k]:
                            same = False
                            break
                    if same:
                        seen = True
                        break
            s = (s + 1) & mask
        if seen:
            dups += 1
            chars += _chars(buf, a, b)
        else:
            stamp[s] = gen
            keys[s] = h
            first[s] = i
    return dups, chars


@jit
def line_repetition(buf, offsets, classes, e2_80, para_frac, para_char_frac, line_frac,
                    line_char_frac):
    """Gopher's duplicate paragraph and line rules as datatrove applies them, per text of UTF-8
    ``buf``: paragraphs are the stripped text split at runs of two or more newlines, lines the
    text split at runs of newlines; 1 ``dup_para_frac``, 2 ``dup_para_char_frac``, 3
    ``dup_line_frac``, 4 ``dup_line_char_frac`` (a fraction of 0 turns a rule off), else 0."""
    n = len(offsets) - 1
    out = np.zeros(n, np.int8)
    longest = 0
    for d in range(n):
        longest = max(longest, offsets[d + 1] - offsets[d])
    seg_s = np.empty(longest + 2, np.int64)
    seg_e = np.empty(longest + 2, np.int64)
    size = _table_size(longest + 2)
    keys = np.zeros(size, np.uint64)
    first = np.zeros(size, np.int64)
    stamp = np.zeros(size, np.int64)
    gen = 0
    for d in range(n):
        lo, hi = offsets[d], offsets[d + 1]
        if lo == hi:
            continue  # datatrove divides by the length: an empty text raises there
        total = _chars(buf, lo, hi)
        a = lo
        while a < hi:
            w = space_width(buf, a, hi, classes, e2_80)
            if w == 0:
                break
            a += w
        b = hi
        while b > a:
            w = _space_before(buf, a, b, classes, e2_80)
            if w == 0:
                break
            b -= w
        n_seg = _segments(buf, a, b, seg_s, seg_e, True)
        gen += 1
        dups, chars = _segment_duplicates(buf, seg_s, seg_e, n_seg, keys, first, stamp, gen)
        if para_frac > 0 and dups / n_seg > para_frac:
            out[d] = 1
            continue
        if para_char_frac > 0 and chars / total > para_char_frac:
            out[d] = 2
            continue
        n_seg = _segments(buf, lo, hi, seg_s, seg_e, False)
        gen += 1
        dups, chars = _segment_duplicates(buf, seg_s, seg_e, n_seg, keys, first, stamp, gen)
        if line_frac > 0 and dups / n_seg > line_frac:
            out[d] = 3
        elif line_char_frac > 0 and chars / total > line_char_frac:
            out[d] = 4
    return out


_BREAK_LEAD = np.zeros(256, np.bool_)
_BREAK_LEAD[[10, 11, 12, 13, 28, 29, 30, 0xC2, 0xE2]] = True
"""The bytes a line boundary can start with."""


@inline
def _line_break(buf, p, hi):
    """The bytes of the ``str.splitlines()`` line boundary at ``buf[p]`` ("\\r\\n" is one),
    or 0."""
    b = buf[p]
    if b == 10 or b == 11 or b == 12 or b == 28 or b == 29 or b == 30:
        return 1
    if b == 13:
        return 2 if p + 1 < hi and buf[p + 1] == 10 else 1
    if b == 0xC2 and p + 1 < hi and buf[p + 1] == 0x85:
        return 2
    if b == 0xE2 and p + 2 < hi and buf[p + 1] == 0x80 and (buf[p + 2] == 0xA8
                                                             or buf[p + 2] == 0xA9):
        return 3
    return 0


@inline
def _inline_space(buf, p, hi):
    """The bytes of the whitespace character at ``buf[p]`` that is not a line boundary, or 0."""
    b = buf[p]
    if b == 9 or b == 32 or b == 31:
        return 1
    if b < 128:
        return 0
    b1 = buf[p + 1] if p + 1 < hi else 0
    if b == 0xC2:
        return 2 if b1 == 0xA0 else 0
    b2 = buf[p + 2] if p + 2 < hi else 0
    if ((b == 0xE1 and b1 == 0x9A and b2 == 0x80)
            or (b == 0xE2 and b1 == 0x80 and (0x80 <= b2 <= 0x8A or b2 == 0xAF))
            or (b == 0xE2 and b1 == 0x81 and b2 == 0x9F)
            or (b == 0xE3 and b1 == 0x80 and b2 == 0x80)):
        return 3
    return 0


@inline
def _inline_space_before(buf, lo, q):
    b = buf[q - 1]
    if b < 128:
        return 1 if b == 9 or b == 32 or b == 31 else 0
    if q - 2 >= lo and _inline_space(buf, q - 2, q) == 2:
        return 2
    if q - 3 >= lo and _inline_space(buf, q - 3, q) == 3:
        return 3
    return 0


@jit
def line_stats(buf, offsets):
    """Per text of UTF-8 ``buf``: "#" characters, ellipses ("..." counted without overlap, and
    "…"), lines (``str.splitlines()``), lines that start with "•" or "-" after whitespace, and
    lines that end with "..." or "…" before whitespace: ``(len, 5)`` int64."""
    n = len(offsets) - 1
    out = np.zeros((n, 5), np.int64)
    for d in range(n):
        lo, hi = offsets[d], offsets[d + 1]
        hashes = 0
        ellipses = 0
        dots = 0
        for p in range(lo, hi):
            b = buf[p]
            if b == 46:
                dots += 1
                continue
            if dots:
                ellipses += dots // 3
                dots = 0
            if b == 35:
                hashes += 1
            elif b == 0xE2 and p + 2 < hi and buf[p + 1] == 0x80 and buf[p + 2] == 0xA6:
                ellipses += 1
        ellipses += dots // 3
        lines = 0
        bullets = 0
        ends = 0
        p = lo
        while p < hi:
            ls = p
            while p < hi and (not _BREAK_LEAD[buf[p]] or _line_break(buf, p, hi) == 0):
                p += 1
            le = p
            lines += 1
            q = ls
            while q < le:
                w = _inline_space(buf, q, le)
                if w == 0:
                    break
                q += w
            if q < le and (buf[q] == 45 or (q + 3 <= le and buf[q] == 0xE2 and buf[q + 1] == 0x80
                                            and buf[q + 2] == 0xA2)):
                bullets += 1
            r = le
            while r > q:
                w = _inline_space_before(buf, q, r)
                if w == 0:
                    break
                r -= w
            if r - ls >= 3 and ((buf[r - 3] == 46 and buf[r - 2] == 46 and buf[r - 1] == 46) or (
                    buf[r - 3] == 0xE2 and buf[r - 2] == 0x80 and buf[r - 1] == 0xA6)):
                ends += 1
            if p < hi:
                p += _line_break(buf, p, hi)
        out[d, 0] = hashes
        out[d, 1] = ellipses
        out[d, 2] = lines
        out[d, 3] = bullets
        out[d, 4] = ends
    return out


# ---- the word tokenizer's chunk table ----------------------------------------------------------
# A whitespace-separated chunk's words depend on the chunk alone, so every distinct chunk is
# tokenized once (in Python, by the rules) and remembered in an open-addressing table keyed by
# its UTF-8 bytes (compared in full: no hash collision can merge two chunks).

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@jit
def chunk_scan(buf, offsets, d0, classes, e2_80, slots, ents, store, n_entries, store_used,
               out_entry, doc_chunks, new, n_new):
    """Split the texts ``offsets[d]:offsets[d + 1]`` (from ``d0``) of UTF-8 ``buf`` as
    ``str.split()`` does and find each chunk in the table: ``slots`` holds pairs (hash, entry
    or -1), ``ents`` four numbers per entry (start of its bytes in ``store``, their length, start
    of its words, their count). A chunk not there is added as a new entry (listed in ``new``;
    its words are filled in later). Writes each chunk's entry to ``out_entry`` and the chunks
    before each text to ``doc_chunks``. Stops at the start of the text where the table, the
    entries or the store is full (the caller grows them and goes on from there). Returns (texts
    done, entries, store bytes used, new entries)."""
    n_slots = len(slots) // 2
    mask = n_slots - 1
    cap = min(len(ents) // 4, n_slots // 2)
    for d in range(d0, len(offsets) - 1):
        p, hi = offsets[d], offsets[d + 1]
        c = doc_chunks[d]
        while p < hi:
            b = buf[p]
            w = np.int64(classes[b]) if b < 128 else space_width(buf, p, hi, classes, e2_80)
            if w:
                p += w
                continue
            start = p
            h = _FNV_OFFSET
            while p < hi:
                b = buf[p]
                if b < 128:  # the common case first: an ASCII byte is whitespace or not
                    if classes[b]:
                        break
                elif space_width(buf, p, hi, classes, e2_80):
                    break
                h = (h ^ np.uint64(b)) * _FNV_PRIME
                p += 1
            h = _mix(h)
            key = np.int64(h >> np.uint64(1))
            size = p - start
            s = key & mask
            while True:
                e = slots[2 * s + 1]
                if e < 0:
                    if n_entries >= cap or store_used + size > len(store):
                        return d, n_entries, store_used, n_new
                    e = n_entries
                    n_entries += 1
                    slots[2 * s] = key
                    slots[2 * s + 1] = e
                    ents[4 * e] = store_used
                    ents[4 * e + 1] = size
                    ents[4 * e + 3] = -1
                    store[store_used:store_used + size] = buf[start:p]
                    store_used += size
                    new[n_new] = e
                    n_new += 1
                    break
                if slots[2 * s] == key and ents[4 * e + 1] == size:
                    q = ents[4 * e]
                    same = True
                    for k in range(size):
                        if store[q + k] != buf[start + k]:
                            same = False
                            break
                    if same:
                        break
                s = (s + 1) & mask
            out_entry[c] = e
            c += 1
        doc_chunks[d + 1] = c
    return len(offsets) - 1, n_entries, store_used, n_new


@jit
def chunk_rehash(old, slots):
    """Move the pairs of the table ``old`` into the empty (all -1) larger table ``slots``."""
    mask = len(slots) // 2 - 1
    for i in range(len(old) // 2):
        e = old[2 * i + 1]
        if e < 0:
            continue
        s = old[2 * i] & mask
        while slots[2 * s + 1] >= 0:
            s = (s + 1) & mask
        slots[2 * s] = old[2 * i]
        slots[2 * s + 1] = e


@jit
def chunk_words(chunk_entry, doc_chunks, ents, toks):
    """The word numbers of every text from its chunks' entries: (ids, offsets per text)."""
    n_docs = len(doc_chunks) - 1
    offsets = np.zeros(n_docs + 1, np.int64)
    total = 0
    for d in range(n_docs):
        for c in range(doc_chunks[d], doc_chunks[d + 1]):
            total += ents[4 * chunk_entry[c] + 3]
        offsets[d + 1] = total
    ids = np.empty(total, np.int64)
    j = 0
    for c in range(len(chunk_entry)):
        e = chunk_entry[c]
        t = ents[4 * e + 2]
        for k in range(ents[4 * e + 3]):
            ids[j] = toks[t + k]
            j += 1
    return ids, offsets


@jit
def word_attributes(buf, offsets, lut):
    """Per word ``offsets[i]:offsets[i + 1]`` of UTF-8 ``buf``: its characters, a stable 63-bit
    hash of its bytes, and its flags for an ASCII word from ``lut`` (per byte: 1 symbol, 2
    letter, 4 sentence end, 8 punctuation; see ``_english_words.FLAG_*``) or -1 for a word
    with other characters (flagged in Python)."""
    n = len(offsets) - 1
    lengths = np.zeros(n, np.int64)
    hashes = np.zeros(n, np.int64)
    flags = np.zeros(n, np.int8)
    for i in range(n):
        h = _FNV_OFFSET
        chars = 0
        every = 15
        some = 0
        ascii_only = True
        for p in range(offsets[i], offsets[i + 1]):
            b = buf[p]
            h = (h ^ np.uint64(b)) * _FNV_PRIME
            if b & 0xC0 != 0x80:
                chars += 1
            if b >= 128:
                ascii_only = False
            else:
                every &= lut[b]
                some |= lut[b]
        lengths[i] = chars
        hashes[i] = np.int64(_mix(h) >> np.uint64(1))
        if not ascii_only:
            flags[i] = -1
        else:
            f = (every & 1) | (some & 2) | (every & 8)
            if chars == 1:
                f |= every & 4
            flags[i] = f
    return lengths, hashes, flags


@jit
def text_hashes(buf, offsets):
    """A 64-bit hash of every text ``offsets[d]:offsets[d + 1]`` of ``buf`` (8 bytes a step),
    its length mixed in."""
    n = len(offsets) - 1
    out = np.empty(n, np.uint64)
    for d in range(n):
        p, hi = offsets[d], offsets[d + 1]
        h = _mix(np.uint64(hi - p) + _FNV_OFFSET)
        while p + 8 <= hi:
            h = _mix(h ^ load8(buf, p)) + _FNV_PRIME
            p += 8
        while p < hi:
            h = (h ^ np.uint64(buf[p])) * _FNV_PRIME
            p += 1
        out[d] = _mix(h)
    return out


# ---- MinHash as datatrove computes it ----------------------------------------------------------

_MERSENNE_61 = np.uint64((1 << 61) - 1)


@jit
def permutation_minima(x, counts, a, b):
    """Per document, the minimum over its shingle hashes ``x`` of ``(x * a[j] + b[j]) mod
    (2**61 - 1)`` for every ``j``, the products and sums wrapping at 64 bits first (datatrove's
    uint64 arithmetic): ``(len(counts), len(a))`` uint64; all ones for a document without
    shingles."""
    n_docs = len(counts)
    k = len(a)
    out = np.full((n_docs, k), np.uint64(0xFFFFFFFFFFFFFFFF), np.uint64)
    pos = 0
    for d in range(n_docs):
        for i in range(pos, pos + counts[d]):
            v = x[i]
            for j in range(k):
                h = (v * a[j] + b[j]) % _MERSENNE_61
                if h < out[d, j]:
                    out[d, j] = h
        pos += counts[d]
    return out

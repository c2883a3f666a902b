"""Vectorised MinHash over character n-grams, and LSH band hashes.

All shingles of a batch of documents are hashed at once: the texts are concatenated as UTF-32
code points, a polynomial hash of every window of ``char_ngrams`` code points is computed with
``char_ngrams`` vector operations, and windows that cross a document boundary are dropped. Each
of the ``num_perm`` hash functions is ``(a * x + b) mod 2**64`` (``a`` odd, keeping the top 32
bits: a multiply-shift universal family) applied to the 32-bit shingle hashes, and the minimum per
document is taken with ``np.minimum.reduceat``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

__all__ = ["shingle_hashes", "minhash_signatures", "band_hashes", "doc_shingle_sets",
           "shingle_set_table", "hash_params"]

_BASE = np.uint64(0x100000001B3)
_BASE_INV = np.uint64(pow(0x100000001B3, -1, 2**64))
_CHUNK = 1 << 14  # shingles per block: bounds the (block, num_perm) matrix to ~34 MB


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser (in place): spreads the polynomial hash over all bits."""
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


_POWERS: dict[int, np.ndarray] = {}


def _powers(base: np.uint64, n: int) -> np.ndarray:
    """``base ** [0, 1, …, n-1]`` modulo 2**64 (cached; grown by doubling)."""
    cached = _POWERS.get(int(base))
    if cached is None or len(cached) < n:
        size = max(n, 2 * len(cached) if cached is not None else 1 << 16)
        p = np.full(size, base, dtype=np.uint64)
        p[0] = 1
        with np.errstate(over="ignore"):
            cached = np.cumprod(p, dtype=np.uint64)
        _POWERS[int(base)] = cached
    return cached[:n]


def shingle_hashes(texts: Sequence[str], char_ngrams: int) -> tuple[np.ndarray, np.ndarray]:
    """64-bit polynomial hashes (not yet mixed) of every character n-gram of ``texts``.

    The polynomial hash of each window is read off prefix sums (``B`` is odd, so it has an inverse
    modulo 2**64), a constant number of vector passes whatever ``char_ngrams`` is.

    Returns ``(hashes, counts)``: ``counts[i]`` shingles belong to document ``i`` (0 for a
    document shorter than ``char_ngrams``), in order.
    """
    n = int(char_ngrams)
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    counts = np.maximum(lengths - n + 1, 0)
    total = int(counts.sum())
    if total == 0:
        return np.empty(0, np.uint64), counts
    codes = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    t = len(codes)
    w = t - n + 1  # windows over the concatenation; those crossing a document edge are dropped
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    has = counts > 0
    edge = np.zeros(w + 1, dtype=np.int32)
    np.add.at(edge, starts[has], 1)
    np.add.at(edge, starts[has] + counts[has], -1)
    inside = np.cumsum(edge[:-1], dtype=np.int32).astype(bool)
    with np.errstate(over="ignore"):
        codes += np.uint64(1)
        codes *= _powers(_BASE_INV, t)
        prefix = np.empty(t + 1, dtype=np.uint64)
        prefix[0] = 0
        np.cumsum(codes, out=prefix[1:])
        h = prefix[n:] - prefix[:w]  # slices, not gathers: every window, then the inside ones
        h *= _powers(_BASE, t)[n - 1:]
        return h[inside], counts


def hash_params(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``(a, b)`` uint64 coefficients of the ``num_perm`` hash functions (``a`` odd)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2**63, size=num_perm, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    b = rng.integers(0, 2**63, size=num_perm, dtype=np.uint64)
    return a, b


def _oph(x: np.ndarray, counts: np.ndarray, num_perm: int, seed: int) -> np.ndarray:
    """One-permutation hashing with optimal densification: ``(N, num_perm)`` uint64 minima."""
    n_docs, k = len(counts), num_perm
    empty = np.uint64(1 << 32)
    sig = np.full(n_docs * k, empty, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h = x ^ _mix(np.array([seed + 0x9E3779B97F4A7C15], dtype=np.uint64))[0]
        _mix(h)  # the one mixing pass: seeded, spreads the polynomial hash over all 64 bits
        bins = ((h >> np.uint64(32)) * np.uint64(k)) >> np.uint64(32)
        key = np.repeat(np.arange(n_docs, dtype=np.uint64) * np.uint64(k), counts) + bins
        np.minimum.at(sig, key.astype(np.int64), h & np.uint64(0xFFFFFFFF))
    sig = sig.reshape(n_docs, k)
    orig = sig.copy()
    rows, cols = np.nonzero((sig == empty) & (counts > 0)[:, None])
    attempt, last = 1, 50 * k
    while len(rows) and attempt < last:
        # several probe attempts per pass (a short document needs hundreds): each empty bin
        # takes the first attempt that lands on a filled one, as one attempt per pass would
        step = max(1, min(_PROBES_PER_PASS, last - attempt, (1 << 22) // len(rows)))
        cand = _probes(k, seed, attempt, step)[:, cols].T
        vals = orig[rows[:, None], cand]
        ok = vals != empty
        hit = ok.any(axis=1)
        first = ok.argmax(axis=1)
        sig[rows[hit], cols[hit]] = vals[hit, first[hit]]
        rows, cols = rows[~hit], cols[~hit]
        attempt += step
    return sig


_PROBES_PER_PASS = 32


@functools.lru_cache(maxsize=64)  # the first passes repeat in every call: ~4 MB at most
def _probes(k: int, seed: int, start: int, count: int) -> np.ndarray:
    """Densification probe bins ``(count, k)`` of attempts ``start …``: attempt ``a`` sends an
    empty bin ``j`` to bin ``mix(j * C + a * 0x9E3779B1 + seed) mod k``."""
    kk = np.arange(k, dtype=np.uint64)
    offsets = np.array([a * 0x9E3779B1 + seed for a in range(start, start + count)],
                       dtype=np.uint64)
    with np.errstate(over="ignore"):
        probe = _mix(kk[None, :] * np.uint64(0xD6E8FEB86659FD93) + offsets[:, None])
    out = (probe % np.uint64(k)).astype(np.int64)
    out.flags.writeable = False
    return out


def _permutations(x: np.ndarray, counts: np.ndarray, num_perm: int, seed: int) -> np.ndarray:
    """Classic MinHash: ``num_perm`` hash functions over every shingle (slower, exact scheme)."""
    a, b = hash_params(num_perm, seed)
    n_docs = len(counts)
    sig = np.full((n_docs, num_perm), np.iinfo(np.uint64).max, dtype=np.uint64)
    doc_of = np.repeat(np.arange(n_docs), counts)
    with np.errstate(over="ignore"):
        x32 = _mix(x.copy()) >> np.uint64(32)
    with np.errstate(over="ignore"):
        for s in range(0, len(x32), _CHUNK):
            e = min(s + _CHUNK, len(x32))
            block = a[:, None] * x32[None, s:e]
            block += b[:, None]
            docs = doc_of[s:e]
            seg = np.flatnonzero(np.concatenate(([True], docs[1:] != docs[:-1])))
            red = np.minimum.reduceat(block, seg, axis=1).T
            d = docs[seg]
            sig[d] = np.minimum(sig[d], red)
    return sig >> np.uint64(32)


def minhash_signatures(texts: Sequence[str], *, char_ngrams: int = 24, num_perm: int = 260,
                       seed: int = 42, method: str = "oph", word_ngrams: int | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """MinHash signatures of ``texts``: ``(signatures (N, num_perm) uint32, has_shingles)``.

    ``method="oph"`` (default) is one-permutation hashing with optimal densification (each
    shingle is hashed once into one of ``num_perm`` bins; empty bins borrow from a fixed probe
    sequence): every signature position still collides with probability equal to the Jaccard
    similarity, at a cost independent of ``num_perm``. ``method="permutations"`` applies
    ``num_perm`` multiply-shift hash functions to every shingle (about ``num_perm / 10`` times
    slower). Documents shorter than ``char_ngrams`` characters have no shingles; their row is
    all ``0xFFFFFFFF`` and ``has_shingles`` is False for them. With ``word_ngrams`` the shingles
    are word n-grams of the simplified text instead (datatrove's, see ``dedup.words``).
    ``method="datatrove"`` (with ``word_ngrams``) computes datatrove's own 64-bit signatures
    (uint64; see ``dedup.words.datatrove_signatures``).
    """
    if method == "datatrove":
        from curator_text.dedup.words import datatrove_signatures

        if not word_ngrams:
            raise ValueError("minhash_signatures: method='datatrove' needs word_ngrams")
        return datatrove_signatures(texts, word_ngrams, num_perm, seed)
    if method not in ("oph", "permutations"):
        raise ValueError(f"minhash_signatures: method must be 'oph', 'permutations' or "
                         f"'datatrove', got {method!r}")
    x, counts = _shingles(texts, char_ngrams, word_ngrams)
    fn = _oph if method == "oph" else _permutations
    sig = fn(x, counts, num_perm, seed)
    sig[counts == 0] = 0xFFFFFFFF
    return sig.astype(np.uint32), counts > 0


def band_hashes(signatures: np.ndarray, num_bands: int, minhashes_per_band: int) -> np.ndarray:
    """One 64-bit hash per band of each signature: ``(N, num_bands)`` uint64."""
    n = len(signatures)
    need = num_bands * minhashes_per_band
    if signatures.shape[1] < need:
        raise ValueError(f"signatures have {signatures.shape[1]} values, bands need {need}")
    s = signatures[:, :need].astype(np.uint64).reshape(n, num_bands, minhashes_per_band)
    with np.errstate(over="ignore"):
        h = np.zeros((n, num_bands), dtype=np.uint64)
        for r in range(minhashes_per_band):
            h *= _BASE
            h += s[:, :, r]
            _mix(h)
        h ^= np.arange(num_bands, dtype=np.uint64)[None, :]
    return h


_BLOCK_CHARS = 1 << 18
"""Characters hashed together by :func:`shingle_set_table` (bounds its temporary memory)."""


def _shingles(texts: Sequence[str], char_ngrams: int,
              word_ngrams: int | None) -> tuple[np.ndarray, np.ndarray]:
    if word_ngrams:
        from curator_text.dedup.words import word_shingle_hashes

        return word_shingle_hashes(texts, word_ngrams)
    return shingle_hashes(texts, char_ngrams)


def shingle_set_table(texts: Sequence[str], char_ngrams: int,
                      word_ngrams: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The sorted unique 32-bit shingle hashes of each text (for exact Jaccard similarity), as
    one array: ``(values, offsets)``, text ``i``'s set is ``values[offsets[i]:offsets[i + 1]]``.

    Texts are hashed in blocks of about ``_BLOCK_CHARS`` characters, so the temporary arrays
    do not grow with the number of texts; one array instead of one per text gives its memory
    back whole when freed."""
    values: list[np.ndarray] = []
    sizes: list[np.ndarray] = []
    ends = np.cumsum(np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts)))
    start = 0
    while start < len(texts):
        before = int(ends[start - 1]) if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, before + _BLOCK_CHARS, side="right")))
        v, n = _shingle_sets(texts[start:stop], char_ngrams, word_ngrams)
        values.append(v)
        sizes.append(n)
        start = stop
    offsets = np.zeros(len(texts) + 1, np.int64)
    if sizes:
        np.cumsum(np.concatenate(sizes), out=offsets[1:])
    return (np.concatenate(values) if values else np.empty(0, np.uint32)), offsets


def doc_shingle_sets(texts: Sequence[str], char_ngrams: int,
                     word_ngrams: int | None = None) -> list[np.ndarray]:
    """The sorted unique 32-bit shingle hashes of each text (:func:`shingle_set_table` split
    into one array per text)."""
    values, offsets = shingle_set_table(texts, char_ngrams, word_ngrams)
    return np.split(values, offsets[1:-1])


def _shingle_sets(texts: Sequence[str], char_ngrams: int,
                  word_ngrams: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The sets of ``texts`` back to back and their sizes: one sort of ``text << 32 | hash``
    (each text's hashes sorted, repeats dropped)."""
    x, counts = _shingles(texts, char_ngrams, word_ngrams)
    with np.errstate(over="ignore"):
        x = _mix(x) >> np.uint64(32)
    x |= np.repeat(np.arange(len(counts), dtype=np.uint64), counts) << np.uint64(32)
    x.sort()
    keep = np.ones(len(x), bool)
    np.not_equal(x[1:], x[:-1], out=keep[1:])
    x = x[keep]
    sizes = np.bincount((x >> np.uint64(32)).astype(np.int64), minlength=len(counts))
    return x.astype(np.uint32), sizes

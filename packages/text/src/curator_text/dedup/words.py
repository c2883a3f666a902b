"""Word n-gram shingles and MinHash signatures as datatrove's MinHash makes them (FineWeb's
settings): the text is simplified (lower case, numbers to ``0``, punctuation to spaces,
whitespace collapsed, diacritics removed) with ``pyarrow.compute`` over the whole batch, split
into English words (``curator_text.filters._english_words``), and every run of ``n``
consecutive words is one shingle (a document with fewer than ``n`` words has none and is never
grouped). :func:`datatrove_signatures` hashes each shingle (its words joined by spaces) with
SHA-1 (the first 8 bytes, little-endian: datatrove's 64-bit ``sha1`` hash) and applies the
``(a * x + b) mod (2**61 - 1)`` permutations whose parameters datatrove draws from
``numpy.random.RandomState(seed)``, so the signatures are datatrove's own: the same documents
share a band (and are removed) as in datatrove."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curator_text.filters._english_words import PUNCTUATION_CHARS, shared_tokenizer

__all__ = ["FINEWEB_MINHASH", "simplify_texts", "word_shingle_hashes", "word_shingle_sha1",
           "datatrove_signatures", "datatrove_parameters"]

FINEWEB_MINHASH = {"word_ngrams": 5, "num_bands": 14, "minhashes_per_band": 8,
                   "use_jaccard": False, "minhash_method": "datatrove", "seed": 1}
"""datatrove's FineWeb MinHash settings for :class:`FuzzyDeduplicationWorkflow`
(``preset="fineweb"``): word 5-gram shingles, 14 bands x 8 hashes, candidates not verified,
datatrove's shingle hash and permutations with its default seed (1)."""

_NUMBERS = r"\p{Nd}+(?:[.,،٫⎖⎗⎘]\p{Nd}+)?"
_WS = (r"[\s\x0b\x{1c}-\x{1f}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}"
       r"\x{202f}\x{205f}\x{3000}]+")
"""Python's Unicode ``\\s`` (RE2's ``\\s`` is ASCII only)."""


def _punctuation_class() -> str:
    chars = sorted(PUNCTUATION_CHARS)  # datatrove's PUNCTUATION (terminal signs stay)
    return "[" + "".join(f"\\x{{{ord(c):x}}}" for c in chars) + "]"


def simplify_texts(texts: pa.Array) -> pa.Array:
    """datatrove's ``simplify_text`` (default ``TextNormConfig``) of every text."""
    out = pc.utf8_lower(texts)
    out = pc.replace_substring_regex(out, _NUMBERS, "0")
    out = pc.replace_substring_regex(out, _punctuation_class(), " ")
    out = pc.replace_substring_regex(pc.utf8_trim_whitespace(out), _WS, " ")
    out = pc.utf8_normalize(out, "NFD")
    out = pc.replace_substring_regex(out, r"\p{Mn}", "")
    return pc.utf8_trim_whitespace(out)


_BASE = np.uint64(0x100000001B3)


def word_shingle_hashes(texts: Sequence[str], n: int) -> tuple[np.ndarray, np.ndarray]:
    """64-bit hashes of every word ``n``-gram of the simplified ``texts`` (in order) and the
    number per text, like :func:`curator_text.dedup.minhash.shingle_hashes`."""
    simple = simplify_texts(pa.array(list(texts), type=pa.string())).to_pylist()
    tok = shared_tokenizer().tokenize(simple)
    counts = np.maximum(np.diff(tok.offsets) - n + 1, 0)
    total = len(tok.ids) - n + 1
    if counts.sum() == 0 or total <= 0:
        return np.empty(0, np.uint64), counts
    h = tok.hashes.astype(np.uint64)[tok.ids]
    g = np.zeros(total, np.uint64)
    with np.errstate(over="ignore"):
        for k in range(n):  # a polynomial hash of each window of n words, n vector passes
            g *= _BASE
            g += h[k:k + total]
    # the windows that start in a document and end in it (not across into the next)
    inside = np.zeros(total + 1, np.int64)
    has = counts > 0
    np.add.at(inside, tok.offsets[:-1][has], 1)
    np.add.at(inside, tok.offsets[:-1][has] + counts[has], -1)
    return g[np.cumsum(inside[:-1]).astype(bool)], counts


def word_shingle_sha1(texts: Sequence[str], n: int) -> tuple[np.ndarray, np.ndarray]:
    """datatrove's shingle hashes: the first 8 bytes (little-endian) of the SHA-1 of every
    word ``n``-gram of the simplified ``texts``, its words joined by single spaces; and the
    number per text."""
    import hashlib

    simple = simplify_texts(pa.array(list(texts), type=pa.string()))
    tokenizer = shared_tokenizer()
    tok = tokenizer.tokenize(simple)
    counts = np.maximum(np.diff(tok.offsets) - n + 1, 0)
    words = tokenizer.words(tok.ids)
    sha1 = hashlib.sha1
    digests: list[bytes] = []
    for d in np.flatnonzero(counts).tolist():
        ws = words[tok.offsets[d]:tok.offsets[d + 1]]
        digests += [sha1(" ".join(ws[i:i + n]).encode()).digest()[:8]
                    for i in range(len(ws) - n + 1)]
    return np.frombuffer(b"".join(digests), dtype="<u8").astype(np.uint64), counts


def datatrove_parameters(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``(a, b)`` of datatrove's ``num_perm`` permutations for ``seed``: ``a`` in
    ``[1, 2**61 - 1)`` then ``b`` in ``[0, 2**61 - 1)``, drawn by
    ``numpy.random.RandomState(seed)``."""
    prime = np.uint64((1 << 61) - 1)
    gen = np.random.RandomState(seed)
    a = gen.randint(1, prime, dtype=np.uint64, size=num_perm)
    b = gen.randint(0, prime, dtype=np.uint64, size=num_perm)
    return a, b


def datatrove_signatures(texts: Sequence[str], n: int, num_perm: int, seed: int
                         ) -> tuple[np.ndarray, np.ndarray]:
    """datatrove's MinHash signatures of ``texts`` (word ``n``-grams): ``(signatures (N,
    num_perm) uint64, has_shingles)``."""
    from curator_text.filters.fineweb import _kernels as kernels

    x, counts = word_shingle_sha1(texts, n)
    a, b = datatrove_parameters(num_perm, seed)
    return kernels.permutation_minima(x, counts, a, b), counts > 0

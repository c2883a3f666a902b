"""The word n-gram filters' scores, by compiled kernels (``curator_text._native``, built at
install time). Per document, in one pass over its bytes: where its words start and end (runs of
bytes that are not whitespace, exactly as ``str.split()`` finds them) and its characters. Then its
words are numbered exactly with a hash table (a word of up to 8 bytes is its own key; longer ones
are hashed and confirmed on the bytes), its n-grams are counted with another table (confirmed on
the word numbers), and the top n-gram's occurrences are counted as ``str.count`` does: from the
words for two or more words joined by spaces, with Knuth-Morris-Pratt over the bytes for one word.
Linear in the bytes; no Python per document.

``hash_mask`` keeps only some bits of every hash: tests pass a small one to make collisions
certain; it is all ones otherwise."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from curator_text import _native
from curator_text.filters._vec import TextView, per_text

__all__ = ["top_ngram_scores", "duplicate_ngram_scores", "ALL_BITS"]

ALL_BITS = np.uint64(0xFFFFFFFFFFFFFFFF)


def top_ngram_scores(texts: pa.Array | TextView, n: int,
                     hash_mask: np.uint64 = ALL_BITS) -> np.ndarray:
    """``RepeatingTopNGramsFilter.score_document`` of every text: the top n-gram (most
    frequent, then most characters, then first) joined by spaces, its occurrences times its
    characters over the text's (texts of fewer than ``n`` words: 1.0)."""
    return _scores(_native.top_ngram_scores, texts, n, hash_mask)


def duplicate_ngram_scores(texts: pa.Array | TextView, n: int,
                           hash_mask: np.uint64 = ALL_BITS) -> np.ndarray:
    """``RepeatingDuplicateNGramsFilter.score_document`` of every text: the characters of the
    n-grams seen before in the text, each counted once, plus the spaces between their words,
    over the text's characters."""
    return _scores(_native.duplicate_ngram_scores, texts, n, hash_mask)


def _scores(kernel, texts: pa.Array | TextView, n: int, hash_mask: np.uint64) -> np.ndarray:
    return per_text(kernel, texts, int(n), int(hash_mask), dtype=np.float64)

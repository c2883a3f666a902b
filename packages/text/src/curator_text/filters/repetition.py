"""Repetition and boilerplate filters (Gopher-style), with NeMo Curator's names and defaults.
``score_batch`` scores a whole column with Arrow kernels and NumPy, the n-gram filters with
compiled kernels (``_ngrams``); ``score_document`` is the per-document reference. Ties are broken
deterministically."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa

from curator_text import _native
from curator_text.filters import _ngrams
from curator_text.filters import _vec as v
from curator_text.filters._vec import pc
from curator_text.filters.base import DocumentFilter
from curator_text.filters.words import needs_segmenter, split_words

__all__ = [
    "RepeatedLinesFilter", "RepeatedParagraphsFilter", "RepeatedLinesByCharFilter",
    "RepeatedParagraphsByCharFilter", "RepeatingTopNGramsFilter",
    "RepeatingDuplicateNGramsFilter", "BoilerPlateStringFilter", "BOILERPLATE_STRINGS",
    "POLICY_SUBSTRINGS",
]

POLICY_SUBSTRINGS = (
    "terms of use", "privacy policy", "cookie policy", "uses cookies", "privacy overview",
    "use of cookies", "use cookies", "privacy & cookies policy", "privacy and cookies policy",
    "this website uses cookies to improve your experience while you navigate through the "
    "website. out of these cookies, the cookies that are categorized as necessary are stored on "
    "your browser as they are essential for the working of basic functionalities of the website. "
    "we also use third-party cookies that help us analyze and understand how you use this "
    "website. these cookies will be stored in your browser only with your consent. you also have "
    "the option to opt-out of these cookies. but opting out of some of these cookies may have an "
    "effect on your browsing experience.",
    "necessary cookies are absolutely essential for the website to function properly. this "
    "category only includes cookies that ensures basic functionalities and security features of "
    "the website. these cookies do not store any personal information.",
    "any cookies that may not be particularly necessary for the website to function and is used "
    "specifically to collect user personal data via analytics, ads, other embedded contents are "
    "termed as non-necessary cookies. it is mandatory to procure user consent prior to running "
    "these cookies on your website.",
    "this site uses cookies, including for analytics, personalization, and advertising purposes. "
    "for more information or to change your cookie settings, click here.",
    "if you continue to browse this site without changing your cookie settings, you agree to this "
    "use. acceptread more",
)
"""NeMo Curator's policy strings (lowercase): a paragraph containing one is boilerplate."""
BOILERPLATE_STRINGS = ("lorem ipsum", *POLICY_SUBSTRINGS)
"""Every string that makes a paragraph boilerplate ("lorem ipsum" makes the document score 1)."""


class _MinScore(DocumentFilter):
    """Keeps documents whose score is at least ``self._min``."""

    _min: float = 0.0

    def keep_document(self, score: float) -> bool:
        return score >= self._min

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return v.ge(scores, self._min)


class _MaxScore(DocumentFilter):
    _max: float = 0.0

    def keep_document(self, score: float) -> bool:
        return score <= self._max

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return v.le(scores, self._max)


def _nonblank_lines(text: str) -> list[str]:
    return [x for x in text.split("\n") if x.strip()]


def _unique_fraction(parts: list[str]) -> float:
    return len(set(parts)) / len(parts) if parts else 1.0


def _unique_char_fraction(parts: list[str]) -> float:
    total = sum(map(len, parts))
    return sum(map(len, set(parts))) / total if total else 1.0


def _parts(texts: pa.Array, sep: str, nonblank: bool) -> tuple[np.ndarray, ...]:
    """Per text, for its parts ``text.split(sep)`` (only those with a non-whitespace character
    when ``nonblank``): (parts, distinct parts, characters of the parts, characters of the
    distinct parts). Parts are compared with Arrow's hash kernel, not per document."""
    n = len(texts)
    lists = pc.split_pattern(texts, sep)
    parts = pc.list_flatten(lists)
    doc = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False).astype(np.int64)
    chars = v.lengths(parts)
    if nonblank:
        keep = v.nonblank(parts)
        parts, doc, chars = parts.filter(pa.array(keep)), doc[keep], chars[keep]
    ids = pc.dictionary_encode(parts).indices.to_numpy(zero_copy_only=False).astype(np.int64)
    _, first = np.unique(doc * (int(ids.max(initial=0)) + 1) + ids, return_index=True)
    return (np.bincount(doc, minlength=n), np.bincount(doc[first], minlength=n),
            np.bincount(doc, weights=chars, minlength=n),
            np.bincount(doc[first], weights=chars[first], minlength=n))


class _Repeated(_MinScore):
    """The share of distinct parts (``text.split(_sep)``, only non-blank ones when ``_nonblank``)
    by count or, with ``_by_char``, by characters; texts without parts (or characters) score 1."""

    vectorized = True
    _sep, _nonblank, _by_char = "\n", True, False

    def _split(self, text: str) -> list[str]:
        return _nonblank_lines(text) if self._nonblank else text.split(self._sep)

    def score_document(self, text: str) -> float:
        fraction = _unique_char_fraction if self._by_char else _unique_fraction
        return fraction(self._split(text))

    @v.chunked
    def score_batch(self, texts: pa.Array) -> np.ndarray:
        parts, distinct, chars, distinct_chars = _parts(texts, self._sep, self._nonblank)
        if self._by_char:
            return v.ratio(distinct_chars, chars, 1.0)
        return v.ratio(distinct.astype(np.float64), parts.astype(np.float64), 1.0)


class RepeatedLinesFilter(_Repeated):
    """Keeps documents whose share of unique non-blank lines is at least
    ``max_repeated_line_fraction``."""

    def __init__(self, max_repeated_line_fraction: float = 0.7) -> None:
        super().__init__()
        self._min = max_repeated_line_fraction


class RepeatedParagraphsFilter(_Repeated):
    """Keeps documents whose share of unique paragraphs is at least
    ``max_repeated_paragraphs_ratio``."""

    _sep, _nonblank = "\n\n", False

    def __init__(self, max_repeated_paragraphs_ratio: float = 0.7) -> None:
        super().__init__()
        self._min = max_repeated_paragraphs_ratio


class RepeatedLinesByCharFilter(_Repeated):
    """Keeps documents whose unique non-blank lines hold at least
    ``max_repeated_lines_char_ratio`` of the characters of the non-blank lines."""

    _by_char = True

    def __init__(self, max_repeated_lines_char_ratio: float = 0.8) -> None:
        super().__init__()
        self._min = max_repeated_lines_char_ratio


class RepeatedParagraphsByCharFilter(_Repeated):
    """Keeps documents whose unique paragraphs hold at least
    ``max_repeated_paragraphs_char_ratio`` of the characters."""

    _sep, _nonblank, _by_char = "\n\n", False, True

    def __init__(self, max_repeated_paragraphs_char_ratio: float = 0.8) -> None:
        super().__init__()
        self._min = max_repeated_paragraphs_char_ratio


class RepeatingTopNGramsFilter(_MaxScore):
    """Removes documents where the most frequent word ``n``-gram, joined by spaces, makes up more
    than ``max_repeating_ngram_ratio`` of the characters (its occurrences in the text times its
    length, over the length; case-sensitive; fewer than ``n`` words score 1), as NeMo Curator.
    Among equally frequent n-grams the longest, then the first in the document, is taken (NeMo
    takes any of them), so results never depend on order. ``lang="zh"``/``"ja"``: words by
    jieba/MeCab (per document)."""

    vectorized = True

    def __init__(self, n: int = 2, max_repeating_ngram_ratio: float = 0.2,
                 lang: str = "en") -> None:
        super().__init__()
        if n < 1:
            raise ValueError(f"RepeatingTopNGramsFilter: n must be >= 1, got {n}")
        self._n, self._max, self._lang = n, max_repeating_ngram_ratio, lang
        if needs_segmenter(lang):
            self.vectorized = False

    def score_document(self, text: str) -> float:
        words, n = split_words(text, self._lang), self._n
        if len(words) < n or not text:
            return 1.0
        counts = Counter(zip(*(words[i:] for i in range(n)), strict=False))
        top = max(counts.items(), key=lambda kv: (kv[1], sum(map(len, kv[0]))))[0]
        return _covered(text, " ".join(top))

    chunk_bytes: int = 8 << 20
    """Text bytes scored together (the kernel's scratch is sized by the longest text, not by
    the slice)."""

    def score_batch(self, texts: pa.Array) -> np.ndarray | list:
        """The same scores for a whole column at once, by a compiled kernel (``_ngrams``)."""
        if not self.vectorized:
            return [self.score_document(t) for t in texts.to_pylist()]
        return self._score_chunk(texts)

    @v.chunked
    def _score_chunk(self, texts: pa.Array | v.TextView) -> np.ndarray:
        return _ngrams.top_ngram_scores(texts, self._n)

    _score_view = _score_chunk


def _covered(text: str, ngram: str) -> float:
    """The share of ``text`` that removing every (non-overlapping) ``ngram`` would remove."""
    return text.count(ngram) * len(ngram) / len(text) if text else 1.0


class RepeatingDuplicateNGramsFilter(_MaxScore):
    """Removes documents where the word ``n``-grams that repeat an earlier one cover more than
    ``max_repeating_duplicate_ngram_ratio`` of the characters (NeMo Curator's count: the
    repeated n-grams' characters not counted yet plus the spaces between their words, over the
    document's length; fewer than ``n`` words score 1). ``lang="zh"``/``"ja"``: words by
    jieba/MeCab."""

    vectorized = True

    def __init__(self, n: int = 2, max_repeating_duplicate_ngram_ratio: float = 0.2,
                 lang: str = "en") -> None:
        super().__init__()
        self._n, self._max, self._lang = n, max_repeating_duplicate_ngram_ratio, lang
        if needs_segmenter(lang):
            self.vectorized = False

    chunk_bytes: int = 8 << 20
    """Text bytes scored together (the kernel's scratch is sized by the longest text, not by
    the slice)."""

    def score_batch(self, texts: pa.Array) -> np.ndarray | list:
        """The same scores as ``score_document`` for a whole column at once, by a compiled
        kernel (``_ngrams``)."""
        if not self.vectorized:
            return [self.score_document(t) for t in texts.to_pylist()]
        return self._score_chunk(texts)

    @v.chunked
    def _score_chunk(self, texts: pa.Array | v.TextView) -> np.ndarray:
        return _ngrams.duplicate_ngram_scores(texts, self._n)

    _score_view = _score_chunk

    def score_document(self, text: str) -> float:
        words, n = split_words(text, getattr(self, "_lang", "en")), self._n
        if len(words) < n:
            return 1.0
        seen: set[tuple[str, ...]] = set()
        dup_chars = overlap = 0
        for i in range(len(words) - n + 1):
            gram = tuple(words[i:i + n])
            if gram in seen:
                dup_chars += sum(map(len, gram[overlap:])) + min(n - overlap, n - 1)
                overlap = n
            seen.add(gram)
            overlap = max(overlap - 1, 0)
        return dup_chars / len(text) if text else 1.0


def _boilerplate_score(text: str) -> float:
    paragraphs = text.split("\n\n")
    bad = 0
    for para in paragraphs:
        low = para.strip().lower()
        if "lorem ipsum" in low:
            return 1.0
        bad += any(p in low for p in POLICY_SUBSTRINGS)
    return bad / len(paragraphs)


_POLICY_BYTES = tuple(p.encode("ascii") for p in POLICY_SUBSTRINGS)


class BoilerPlateStringFilter(_MaxScore):
    """Removes documents where more than ``max_boilerplate_string_ratio`` of the paragraphs
    (split on blank lines) contain a policy string ("terms of use", "privacy policy",
    "privacy & cookies policy" …); "lorem ipsum" anywhere scores 1. ``remove_if_at_top_or_bottom``
    is accepted and, as in NeMo Curator, does not change the score."""

    vectorized = True
    chunk_bytes: int = 8 << 20
    """Text bytes scored together (most texts are only searched once, so large slices)."""

    def __init__(self, remove_if_at_top_or_bottom: bool = True,
                 max_boilerplate_string_ratio: float = 0.4) -> None:
        super().__init__()
        self._top_bottom, self._max = remove_if_at_top_or_bottom, max_boilerplate_string_ratio

    def score_document(self, text: str) -> float:
        return _boilerplate_score(text)

    @v.chunked
    def score_batch(self, texts: pa.Array) -> np.ndarray:
        """The same scores for a column, by one compiled pass (``_native.boilerplate_scores``:
        each text is searched for the words every policy string holds, then each string is
        matched where one is found, as ``str.lower`` sees it)."""
        return v.per_text(_native.boilerplate_scores, texts, _POLICY_BYTES, dtype=np.float64)

    _score_view = score_batch

"""Repetition and boilerplate filters (Gopher-style), with NeMo Curator's names and defaults.
``score_batch`` scores a whole column with Arrow kernels and NumPy (``score_document`` is the
per-document reference); ties are broken deterministically."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curator_text.filters import _vec as v
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


_RANK_LIMIT = 2**62
"""Top n-grams are ranked with one int64 per n-gram while (count, characters, start) fit in it."""


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

    chunk_bytes: int = 1 << 17
    """Text bytes scored together: small enough for the CPU caches (faster than larger ones)."""

    def score_batch(self, texts: pa.Array) -> np.ndarray | list:
        """The same scores for a whole column at once: n-grams of ``chunk_bytes`` of documents
        at a time are numbered and counted with NumPy and Arrow kernels instead of per document
        in Python, and the chosen n-gram's occurrences are counted on the bytes."""
        if not self.vectorized:
            return [self.score_document(t) for t in texts.to_pylist()]
        return self._score_chunk(texts)

    @v.chunked
    def _score_chunk(self, texts: pa.Array) -> np.ndarray:
        scores = np.ones(len(texts), dtype=np.float64)  # fewer than n words
        g = _NGrams.of(texts, self._n)
        if g is None:
            return scores
        n, ids, enc = g.n, g.ids, g.enc
        start = g.pos[g.ufirst]  # where each distinct n-gram first occurs
        cs = np.concatenate([[0], np.cumsum(g.wlen)])
        uchars = cs[start + n] - cs[start]
        # distinct n-grams come grouped by document; per document: the highest count, then the
        # most characters, then the first occurrence, as the largest of one int64 per n-gram
        heads = np.flatnonzero(np.r_[True, g.udoc[1:] != g.udoc[:-1]])
        chosen_doc, last = g.udoc[heads], len(ids)
        span, most = int(cs[-1]) + 1, int(g.ucount.max()) + 1
        if float(most) * span * (last + 1) < _RANK_LIMIT:
            rank = (g.ucount * span + uchars) * (last + 1) + (last - start)
            chosen_start = last - np.maximum.reduceat(rank, heads) % (last + 1)
        else:  # too large for one int64: step by step
            group = np.repeat(np.arange(len(heads)), np.diff(np.r_[heads, len(g.udoc)]))
            top = np.maximum.reduceat(g.ucount, heads)[group]
            chars = np.where(g.ucount == top, uchars, -1)
            best = np.maximum.reduceat(chars, heads)[group]
            chosen_start = np.minimum.reduceat(np.where(chars == best, start, last), heads)
        # the chosen n-grams joined by spaces, counted in their documents as ``str.count`` does
        cols = [enc.dictionary.take(pa.array(ids[chosen_start + k])) for k in range(n)]
        ngrams = pc.binary_join_element_wise(*cols, " ") if n > 1 else cols[0]
        found = v.count_substrings(texts, ngrams, chosen_doc)
        ngram_chars = cs[chosen_start + n] - cs[chosen_start] + (n - 1)
        scores[chosen_doc] = v.ratio(found * ngram_chars, v.lengths(texts)[chosen_doc], 1.0)
        return scores


class _NGrams:
    """The word n-grams of a column of texts (words split on whitespace, as ``str.split``): the
    n-gram ``j`` starts at word ``pos[j]`` of document ``doc[j]``; ``first[j]`` is True where that
    (document, n-gram) pair occurs for the first time. The distinct pairs, grouped by document:
    ``udoc`` their document, ``ucount`` their count, ``ufirst`` the ``j`` of their first
    occurrence. ``ids``/``wlen``: every word's vocabulary id (Arrow dictionary encoding ``enc``)
    and length; ``n_words`` the words per document."""

    __slots__ = ("doc", "enc", "first", "ids", "n", "n_words", "pos", "ucount", "udoc", "ufirst",
                 "wlen")

    @classmethod
    def of(cls, texts: pa.Array, n: int) -> _NGrams | None:
        """The n-grams of ``texts``, or None when no document has ``n`` words."""
        n_docs = len(texts)
        tok = v.Tokens(texts)
        if not len(tok.chars):
            return None
        doc, wlen = tok.doc, tok.chars
        enc = pc.dictionary_encode(tok.words)
        ids = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        vocab = len(enc.dictionary)
        m = len(ids) - n + 1
        if m <= 0:
            return None
        valid = doc[:m] == doc[n - 1:]  # the n-gram stays inside one document
        pos = np.flatnonzero(valid)  # where each counted n-gram starts in ``ids``
        if not len(pos):
            return None
        gdoc = doc[:m][valid]
        if n_docs * float(vocab) ** n < 2**62:  # one int64 key per (document, n-gram)
            key = doc[:m].copy()
            for k in range(n):
                key = key * vocab + ids[k:k + m]
            key = key[valid]
        else:  # number the n-grams step by step to keep keys small
            gram = ids[:m]
            for k in range(1, n):
                _, gram = np.unique(gram * vocab + ids[k:k + m], return_inverse=True)
                gram = gram.astype(np.int64)
            gram = gram[valid]
            key = gdoc * (int(gram.max()) + 1) + gram
        # the distinct keys (sorted; grouped by document): their first occurrences and counts
        order = np.argsort(key)
        sk = key[order]
        heads = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
        self = cls()
        self.ufirst = np.minimum.reduceat(order, heads)
        self.ucount = np.diff(np.r_[heads, len(sk)])
        self.udoc = gdoc[self.ufirst]
        self.first = np.zeros(len(key), dtype=bool)
        self.first[self.ufirst] = True
        self.n, self.doc, self.pos, self.wlen, self.ids, self.enc = n, gdoc, pos, wlen, ids, enc
        self.n_words = tok.n_words
        return self


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
    chunk_bytes: int = 1 << 17
    """Text bytes scored together: small enough for the CPU caches (faster than larger ones)."""

    def __init__(self, n: int = 2, max_repeating_duplicate_ngram_ratio: float = 0.2,
                 lang: str = "en") -> None:
        super().__init__()
        self._n, self._max, self._lang = n, max_repeating_duplicate_ngram_ratio, lang
        if needs_segmenter(lang):
            self.vectorized = False

    def score_batch(self, texts: pa.Array) -> np.ndarray | list:
        """The same scores as ``score_document`` for a whole column, ``chunk_bytes`` of
        documents at a time: repeats are the (document, n-gram) pairs seen before, and each
        repeat's new characters follow from the distance to the previous repeat."""
        if not self.vectorized:
            return [self.score_document(t) for t in texts.to_pylist()]
        return self._score_chunk(texts)

    @v.chunked
    def _score_chunk(self, texts: pa.Array) -> np.ndarray:
        n_docs, n = len(texts), self._n
        g = _NGrams.of(texts, n)
        if g is None:
            return np.ones(n_docs, dtype=np.float64)
        dup = ~g.first
        dpos, ddoc = g.pos[dup], g.doc[dup]
        # ``overlap`` of score_document at a repeat: n minus the distance to the previous repeat
        # of the same document (0 when far or none)
        gap = np.full(len(dpos), n, dtype=np.int64)
        same = np.zeros(len(ddoc), dtype=bool)  # (no repeats at all: empty)
        same[1:] = ddoc[1:] == ddoc[:-1]
        gap[same] = (dpos[1:] - dpos[:-1])[same[1:]]
        overlap = np.clip(n - gap, 0, n)
        cs = np.concatenate([[0], np.cumsum(g.wlen)])
        new_chars = cs[dpos + n] - cs[dpos + overlap] + np.minimum(n - overlap, n - 1)
        dup_chars = np.bincount(ddoc, weights=new_chars, minlength=n_docs)
        scores = v.ratio(dup_chars, v.lengths(texts), 1.0)
        scores[g.n_words < n] = 1.0
        return scores

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


_BOILERPLATE_RE = "|".join(re.escape(b) for b in BOILERPLATE_STRINGS)
_POLICY_RE = "|".join(re.escape(b) for b in POLICY_SUBSTRINGS)


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
        """The same scores for a column: only texts that may hold a policy string (RE2, any
        case) are split into paragraphs, which are lowercased as ``str.lower`` does for these
        ASCII strings (ASCII letters, the Kelvin sign, dotted capital I) and matched together."""
        hits = pc.match_substring_regex(texts, _BOILERPLATE_RE, ignore_case=True)
        scores = np.zeros(len(texts), dtype=np.float64)
        idx = np.flatnonzero(v.np_bool(hits))
        if not len(idx):
            return scores
        lists = pc.split_pattern(texts.take(pa.array(idx)), "\n\n")
        doc = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
        low = pc.list_flatten(lists)
        for upper, lower in (("\u212a", "k"), ("\u0130", "i\u0307")):
            low = pc.replace_substring(low, upper, lower)
        low = pc.ascii_lower(low)
        bad = v.np_bool(pc.match_substring_regex(low, _POLICY_RE))
        lorem = v.np_bool(pc.match_substring(low, "lorem ipsum"))
        n = len(idx)
        sub = v.ratio(np.bincount(doc, weights=bad, minlength=n),
                      np.bincount(doc, minlength=n).astype(np.float64), 0.0)
        sub[np.bincount(doc, weights=lorem, minlength=n) > 0] = 1.0
        scores[idx] = sub
        return scores

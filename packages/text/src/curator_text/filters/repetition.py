"""Repetition and boilerplate filters (Gopher-style), with NeMo Curator's names and defaults.
They run per document in Python; ties are broken deterministically."""

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


class RepeatedLinesFilter(_MinScore):
    """Keeps documents whose share of unique non-blank lines is at least
    ``max_repeated_line_fraction``."""

    def __init__(self, max_repeated_line_fraction: float = 0.7) -> None:
        super().__init__()
        self._min = max_repeated_line_fraction

    def score_document(self, text: str) -> float:
        return _unique_fraction(_nonblank_lines(text))


class RepeatedParagraphsFilter(_MinScore):
    """Keeps documents whose share of unique paragraphs is at least
    ``max_repeated_paragraphs_ratio``."""

    def __init__(self, max_repeated_paragraphs_ratio: float = 0.7) -> None:
        super().__init__()
        self._min = max_repeated_paragraphs_ratio

    def score_document(self, text: str) -> float:
        return _unique_fraction(text.split("\n\n"))


class RepeatedLinesByCharFilter(_MinScore):
    """Keeps documents whose unique non-blank lines hold at least
    ``max_repeated_lines_char_ratio`` of the characters of the non-blank lines."""

    def __init__(self, max_repeated_lines_char_ratio: float = 0.8) -> None:
        super().__init__()
        self._min = max_repeated_lines_char_ratio

    def score_document(self, text: str) -> float:
        return _unique_char_fraction(_nonblank_lines(text))


class RepeatedParagraphsByCharFilter(_MinScore):
    """Keeps documents whose unique paragraphs hold at least
    ``max_repeated_paragraphs_char_ratio`` of the characters."""

    def __init__(self, max_repeated_paragraphs_char_ratio: float = 0.8) -> None:
        super().__init__()
        self._min = max_repeated_paragraphs_char_ratio

    def score_document(self, text: str) -> float:
        return _unique_char_fraction(text.split("\n\n"))


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

    chunk_docs: int = 512
    """Documents scored together (bounds the temporary memory of one call)."""

    def score_batch(self, texts: pa.Array) -> np.ndarray | list:
        """The same scores for a whole column at once: n-grams of ``chunk_docs`` documents at a
        time are numbered and counted with Arrow hash kernels instead of per document in
        Python; only the chosen n-gram's occurrences are counted per document."""
        if not self.vectorized:
            return [self.score_document(t) for t in texts.to_pylist()]
        if len(texts) <= self.chunk_docs:
            return self._score_chunk(texts)
        return np.concatenate([self._score_chunk(texts.slice(i, self.chunk_docs))
                               for i in range(0, len(texts), self.chunk_docs)])

    def _score_chunk(self, texts: pa.Array) -> np.ndarray:
        scores = np.ones(len(texts), dtype=np.float64)  # fewer than n words
        g = _NGrams.of(texts, self._n)
        if g is None:
            return scores
        n, num, gdoc, pos, wlen, ids, enc = g.n, g.num, g.doc, g.pos, g.wlen, g.ids, g.enc
        counts = np.bincount(num)
        first = np.flatnonzero(g.first)
        udoc = gdoc[first]
        start = pos[first]  # where each distinct n-gram first occurs
        cs = np.concatenate([[0], np.cumsum(wlen)])
        uchars = cs[start + n] - cs[start]
        # distinct n-grams come grouped by document, each group in order of first occurrence;
        # per document: the highest count, then the most characters, then the first occurrence
        heads = np.flatnonzero(np.r_[True, udoc[1:] != udoc[:-1]])
        group = np.repeat(np.arange(len(heads)), np.diff(np.r_[heads, len(udoc)]))
        top = np.maximum.reduceat(counts, heads)[group]
        chars = np.where(counts == top, uchars, -1)
        cand = np.flatnonzero(chars == np.maximum.reduceat(chars, heads)[group])
        chosen = cand[np.r_[True, group[cand][1:] != group[cand][:-1]]]
        chosen_doc, chosen_start = udoc[chosen], start[chosen]
        vocab_words = enc.dictionary.to_pylist()
        py_texts = texts.to_pylist()
        for d, st in zip(chosen_doc.tolist(), chosen_start.tolist(), strict=True):
            joined = " ".join(vocab_words[i] for i in ids[st:st + n])
            scores[d] = _covered(py_texts[d], joined)
        return scores


class _NGrams:
    """The word n-grams of a column of texts (words split on whitespace, as ``str.split``),
    numbered with Arrow hash kernels: ``num[j]`` numbers the (document, n-gram) starting at word
    ``pos[j]`` of document ``doc[j]`` in first-seen order, ``first[j]`` is True where that pair
    occurs for the first time. ``ids``/``wlen``: every word's vocabulary id and length, ``enc``
    the dictionary encoding; ``n_words`` the words per document."""

    __slots__ = ("doc", "enc", "first", "ids", "n", "n_words", "num", "pos", "wlen")

    @classmethod
    def of(cls, texts: pa.Array, n: int) -> _NGrams | None:
        """The n-grams of ``texts``, or None when no document has ``n`` words."""
        n_docs = len(texts)
        lists = pc.utf8_split_whitespace(texts)
        words = pc.list_flatten(lists)
        doc = pc.list_parent_indices(lists).to_numpy(zero_copy_only=False)
        wlen = pc.utf8_length(words).to_numpy(zero_copy_only=False).astype(np.int64)
        keep = wlen > 0  # Arrow yields "" around leading/trailing whitespace; str.split does not
        if not keep.any():
            return None
        doc, wlen = doc[keep], wlen[keep]
        enc = pc.dictionary_encode(words.filter(pa.array(keep)))
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
        # number the distinct keys in first-seen order (hash-based): their first occurrences
        # are where the number exceeds every earlier one
        num = pc.dictionary_encode(pa.array(key)).indices.to_numpy(
            zero_copy_only=False).astype(np.int64)
        self = cls()
        self.n, self.num, self.doc, self.pos, self.wlen, self.ids, self.enc = (
            n, num, gdoc, pos, wlen, ids, enc)
        self.first = num > np.maximum.accumulate(np.r_[-1, num[:-1]])
        self.n_words = np.bincount(doc, minlength=n_docs)
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
    chunk_docs: int = 512
    """Documents scored together (bounds the temporary memory of one call)."""

    def __init__(self, n: int = 2, max_repeating_duplicate_ngram_ratio: float = 0.2,
                 lang: str = "en") -> None:
        super().__init__()
        self._n, self._max, self._lang = n, max_repeating_duplicate_ngram_ratio, lang
        if needs_segmenter(lang):
            self.vectorized = False

    def score_batch(self, texts: pa.Array) -> np.ndarray | list:
        """The same scores as ``score_document`` for a whole column, ``chunk_docs`` documents at
        a time: repeats are the (document, n-gram) pairs seen before (Arrow hash kernels), and
        each repeat's new characters follow from the distance to the previous repeat."""
        if not self.vectorized:
            return [self.score_document(t) for t in texts.to_pylist()]
        return np.concatenate([self._score_chunk(texts.slice(i, self.chunk_docs))
                               for i in range(0, len(texts), self.chunk_docs)] or [np.ones(0)])

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
        same = np.r_[False, ddoc[1:] == ddoc[:-1]]
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


class BoilerPlateStringFilter(_MaxScore):
    """Removes documents where more than ``max_boilerplate_string_ratio`` of the paragraphs
    (split on blank lines) contain a policy string ("terms of use", "privacy policy",
    "privacy & cookies policy" …); "lorem ipsum" anywhere scores 1. ``remove_if_at_top_or_bottom``
    is accepted and, as in NeMo Curator, does not change the score."""

    vectorized = True

    def __init__(self, remove_if_at_top_or_bottom: bool = True,
                 max_boilerplate_string_ratio: float = 0.4) -> None:
        super().__init__()
        self._top_bottom, self._max = remove_if_at_top_or_bottom, max_boilerplate_string_ratio

    def score_document(self, text: str) -> float:
        return _boilerplate_score(text)

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        hits = pc.match_substring_regex(texts, _BOILERPLATE_RE, ignore_case=True)
        scores = np.zeros(len(texts), dtype=np.float64)
        idx = np.flatnonzero(v.np_bool(hits))
        if len(idx):
            for i, t in zip(idx, texts.take(pa.array(idx)).to_pylist(), strict=True):
                scores[i] = _boilerplate_score(t)
        return scores

"""Heuristic text filters with NeMo Curator's names, parameters and default thresholds.

Filters marked ``vectorized`` score whole Arrow columns with ``pyarrow.compute``; the others
run per document in Python (the stage then uses worker processes)."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa

from curator_text.filters import _vec as v
from curator_text.filters._vec import pc
from curator_text.filters.base import DocumentFilter
from curator_text.filters.words import needs_segmenter, split_words

__all__ = [
    "WordCountFilter", "NonAlphaNumericFilter", "SymbolsToWordsFilter", "NumbersFilter",
    "UrlsFilter", "BulletsFilter", "WhiteSpaceFilter", "ParenthesesFilter", "LongWordFilter",
    "MeanWordLengthFilter", "PunctuationFilter", "EllipsisFilter", "CommonEnglishWordsFilter",
    "WordsWithoutAlphabetsFilter", "PornographicUrlsFilter", "SubstringFilter",
    "IncompleteStoryFilter",
]


class _MaxRatio(DocumentFilter):
    """Keeps documents whose score is at most ``self._max``."""

    vectorized = True
    _max: float = 0.0

    def keep_document(self, score: float) -> bool:
        return score <= self._max

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return v.le(scores, self._max)

    def score_document(self, text: str) -> float:
        return float(self.score_batch(pa.array([text]))[0])


class _Words(DocumentFilter):
    """Base of the filters that look at words. ``lang="zh"``/``"ja"`` segments each document with
    jieba/MeCab (per document, in worker processes); other languages split on whitespace, scored
    by the vectorised ``_score_ws`` path. ``_score_words`` is NeMo Curator's per-document formula."""

    vectorized = True

    def _set_lang(self, lang: str) -> None:
        self._lang = lang
        if needs_segmenter(lang):
            self.vectorized = False

    def _score_words(self, words: list[str]) -> float:
        raise NotImplementedError(f"{type(self).__name__} must implement _score_words")

    def _score_ws(self, texts: pa.Array) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must implement _score_ws")

    def score_document(self, text: str) -> float:
        return self._score_words(split_words(text, self._lang))

    def score_batch(self, texts: pa.Array) -> np.ndarray | list:
        if self.vectorized:
            return self._score_ws(texts)
        return [self.score_document(t) for t in texts.to_pylist()]


class WordCountFilter(_Words):
    """Keeps documents with ``min_words`` to ``max_words`` words.

    ``lang``: ``"zh"`` and ``"ja"`` split each document into words with jieba / MeCab; any other
    language splits on whitespace."""

    def __init__(self, min_words: int = 50, max_words: int = 100000, lang: str = "en") -> None:
        super().__init__()
        self._min_words, self._max_words = min_words, max_words
        self._set_lang(lang)

    def _score_words(self, words: list[str]) -> int:
        return len(words)

    @v.chunked
    def _score_ws(self, texts: pa.Array | v.TextView) -> np.ndarray:
        return v.word_counts(texts).astype(np.int64)

    _score_view = _score_ws  # a selection of a batch's rows (see filters.base._view_scorer)

    def keep_document(self, score: int) -> bool:
        return self._min_words <= score <= self._max_words

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return v.between(scores, self._min_words, self._max_words)


ALNUM_CHARS = v.ASCII_ALNUM + "\n?!,."


class NonAlphaNumericFilter(_MaxRatio):
    """Removes documents whose share of characters other than ASCII letters, digits, newline and
    ``?!,.`` exceeds ``max_non_alpha_numeric_to_text_ratio`` (empty documents score 1)."""

    def __init__(self, max_non_alpha_numeric_to_text_ratio: float = 0.25) -> None:
        super().__init__()
        self._max = max_non_alpha_numeric_to_text_ratio

    @v.chunked
    def score_batch(self, texts: pa.Array | v.TextView) -> np.ndarray:
        alnum, lens = v.class_count_and_lengths(texts, ALNUM_CHARS)
        return v.ratio(lens - alnum, lens, 1.0)

    _score_view = score_batch


ELLIPSIS_MARKS = ("...", "[...]", "…", "(...)", "[…]", "-»", "read more..", "read more")
"""NeMo Curator's ellipsis marks (a word equal to one, or a line ending with one)."""


def _is_symbol_word(word: str) -> bool:
    word = word.strip()
    if word in ELLIPSIS_MARKS:
        return True
    return bool(word) and 2 * len(_HASH_RUNS.findall(word)) > len(word)


_HASH_RUNS = re.compile("#+")


class SymbolsToWordsFilter(_Words, _MaxRatio):
    """Removes documents where more than ``max_symbol_to_word_ratio`` of the words are symbol
    words: an ellipsis mark (``...``, ``…``, ``[...]`` …) or a word that is mostly ``#`` runs."""

    def __init__(self, max_symbol_to_word_ratio: float = 0.1, lang: str = "en") -> None:
        super().__init__()
        self._max = max_symbol_to_word_ratio
        self._set_lang(lang)

    def _score_words(self, words: list[str]) -> float:
        return sum(map(_is_symbol_word, words)) / len(words) if words else 0.0

    @v.chunked
    def _score_ws(self, texts: pa.Array) -> np.ndarray:
        n = len(texts)
        out = np.zeros(n, dtype=np.float64)
        has = v.np_bool(pc.match_substring_regex(texts, r"#|\.\.\.|…|-»"))
        if not has.any():
            return out
        sub = texts.filter(pa.array(has))
        words = v.word_lists(sub)
        flat = pc.list_flatten(words)
        cand = v.np_bool(pc.match_substring_regex(flat, r"#|\.\.\.|…|-»"))
        words_c = flat.filter(pa.array(cand))
        sym = np.zeros(len(flat), dtype=bool)
        sym[cand] = v.np_bool(pc.is_in(words_c, value_set=pa.array(ELLIPSIS_MARKS))) | (
            2 * v.regex_count(words_c, "#+") > v.lengths(words_c))
        out[has] = v.ratio(v.per_doc_sum(words, sym, len(sub)), v.word_counts(sub), 0.0)
        return out


class NumbersFilter(_MaxRatio):
    """Removes documents whose share of digits exceeds ``max_number_to_text_ratio``."""

    def __init__(self, max_number_to_text_ratio: float = 0.15) -> None:
        super().__init__()
        self._max = max_number_to_text_ratio

    @v.chunked
    def score_batch(self, texts: pa.Array) -> np.ndarray:
        return v.ratio(v.class_count(texts, "0123456789", r"\p{Nd}"), v.lengths(texts), 1.0)


class UrlsFilter(_MaxRatio):
    """Removes documents whose URLs make up more than ``max_url_to_text_ratio`` of the
    characters (empty documents score 1). ``url_regex``: another URL pattern (a string or a
    compiled pattern; then scored per document with Python's ``re``)."""

    def __init__(self, max_url_to_text_ratio: float = 0.2,
                 url_regex: re.Pattern | str | None = None) -> None:
        super().__init__()
        self._max = max_url_to_text_ratio
        self._url_regex = re.compile(url_regex) if isinstance(url_regex, str) else url_regex
        if self._url_regex is not None:
            self.vectorized = False

    def score_document(self, text: str) -> float:
        if self._url_regex is None:
            return super().score_document(text)
        return sum(map(len, self._url_regex.findall(text))) / len(text) if text else 1.0

    def score_batch(self, texts: pa.Array) -> np.ndarray | list:
        if self._url_regex is not None:
            return [self.score_document(t) for t in texts.to_pylist()]
        return self._scores(texts)

    def _scores(self, texts: pa.Array | v.TextView) -> np.ndarray:
        """The characters of NeMo's URLs (what removing them removes) over the text's, both
        counted by one compiled pass each (``_native.url_chars``, ``_vec.lengths``)."""
        return v.ratio(v.url_chars(texts), v.lengths(texts), 1.0)

    _score_view = _scores


BULLETS = "•‣⁃⁌⁍∙○●◘◦⦾⦿"
"""NeMo Curator's bullet characters."""
_WS = r"[ \t\r\f\x0b\x1c-\x1f\x85\p{Z}]"  # Python's whitespace except the newline
_CONTENT = r"[^\s\x0b\x1c-\x1f\x85\p{Z}]"
_LINE_END = f"{_WS}*(?:\n|\\z)"


def nonblank_lines(texts: pa.Array) -> np.ndarray:
    """How many lines (split on ``\\n``) of each text have a non-whitespace character."""
    first = v.np_bool(pc.match_substring_regex(texts, f"^{_WS}*{_CONTENT}"))
    return v.regex_count(texts, f"\n{_WS}*{_CONTENT}") + first


class BulletsFilter(_MaxRatio):
    """Removes documents where more than ``max_bullet_lines_ratio`` of the non-blank lines start
    with a bullet (``•``, ``●``, ``○``, ``◦`` …; not ``-`` or ``*``)."""

    def __init__(self, max_bullet_lines_ratio: float = 0.9) -> None:
        super().__init__()
        self._max = max_bullet_lines_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        bullets = v.regex_count(texts, f"(?:\\A|\n){_WS}*[{BULLETS}]")
        return v.ratio(bullets, nonblank_lines(texts), 0.0)


class WhiteSpaceFilter(_MaxRatio):
    """Removes documents whose share of whitespace (tab, newline, carriage return, backspace,
    space) exceeds ``max_white_space_ratio`` (empty documents score 1)."""

    def __init__(self, max_white_space_ratio: float = 0.25) -> None:
        super().__init__()
        self._max = max_white_space_ratio

    @v.chunked
    def score_batch(self, texts: pa.Array) -> np.ndarray:
        ws = v.class_count(texts, "\t\n\r\b ")
        return v.ratio(ws, v.lengths(texts), 1.0)


class ParenthesesFilter(_MaxRatio):
    """Removes documents whose share of brackets ``()[]{}⟨⟩`` exceeds ``max_parentheses_ratio``
    (empty documents score 1)."""

    def __init__(self, max_parentheses_ratio: float = 0.1) -> None:
        super().__init__()
        self._max = max_parentheses_ratio

    @v.chunked
    def score_batch(self, texts: pa.Array) -> np.ndarray:
        return v.ratio(v.class_count(texts, "()[]{}", r"[()\[\]{}⟨⟩]"), v.lengths(texts), 1.0)


class LongWordFilter(_Words, _MaxRatio):
    """Removes documents containing a word longer than ``max_word_length`` characters."""

    def __init__(self, max_word_length: int = 1000, lang: str = "en") -> None:
        super().__init__()
        self._max = max_word_length
        self._set_lang(lang)

    def _score_words(self, words: list[str]) -> float:
        return max(map(len, words), default=0)

    @v.chunked
    def _score_ws(self, texts: pa.Array) -> np.ndarray:
        tok = v.Tokens(texts)
        return tok.per_doc_max(tok.chars)


class MeanWordLengthFilter(_Words):
    """Keeps documents whose mean word length is within [``min_mean_word_length``,
    ``max_mean_word_length``]."""

    def __init__(self, min_mean_word_length: int = 3, max_mean_word_length: int = 10,
                 lang: str = "en") -> None:
        super().__init__()
        self._min, self._max = min_mean_word_length, max_mean_word_length
        self._set_lang(lang)

    def _score_words(self, words: list[str]) -> float:
        lens = [len(w) for w in words if w]
        return sum(lens) / len(lens) if lens else 0.0

    @v.chunked
    def _score_ws(self, texts: pa.Array) -> np.ndarray:
        words, nonws = v.word_stats(texts)
        return v.ratio(nonws, words, 0.0)

    def keep_document(self, score: float) -> bool:
        return self._min <= score <= self._max

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return v.between(scores, self._min, self._max)


END_MARKS = (".", "?", "!", '"', "'")


class PunctuationFilter(_MaxRatio):
    """Removes documents where more than ``max_num_sentences_without_endmark_ratio`` of the
    non-blank lines do not end with ``. ? ! " '``."""

    def __init__(self, max_num_sentences_without_endmark_ratio: float = 0.85) -> None:
        super().__init__()
        self._max = max_num_sentences_without_endmark_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        lines = nonblank_lines(texts)
        ended = v.regex_count(texts, f"[.?!\"']{_LINE_END}")
        return v.ratio(lines - ended, lines, 0.0)


_ELLIPSIS_END = r"\.\.\.|\[\.\.\.\]|…|\(\.\.\.\)|\[…\]|-»|(?i:read more)(?:\.\.)?"


class EllipsisFilter(_MaxRatio):
    """Removes documents where more than ``max_num_lines_ending_with_ellipsis_ratio`` of the
    non-blank lines end with an ellipsis mark (``...``, ``…``, ``[...]``, ``read more`` …)."""

    def __init__(self, max_num_lines_ending_with_ellipsis_ratio: float = 0.3) -> None:
        super().__init__()
        self._max = max_num_lines_ending_with_ellipsis_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        ends = v.regex_count(texts, f"(?:{_ELLIPSIS_END}){_LINE_END}")
        return v.ratio(ends, nonblank_lines(texts), 0.0)


COMMON_ENGLISH_WORDS = ("the", "be", "to", "of", "and", "that", "have", "with")
_COMMON_RE = rf"(?:^|\s)(?:{'|'.join(COMMON_ENGLISH_WORDS)})(?:\s|$)"


class CommonEnglishWordsFilter(DocumentFilter):
    """Keeps documents containing at least ``min_num_common_words`` common English words (the,
    be, to, of, and, that, have, with; lowercase only, whole words). With ``stop_at_false`` the
    score stops counting at ``min_num_common_words``."""

    vectorized = True

    def __init__(self, min_num_common_words: int = 2, stop_at_false: bool = True) -> None:
        super().__init__()
        self._min, self._stop = min_num_common_words, stop_at_false

    def score_document(self, text: str) -> int:
        return int(self.score_batch(pa.array([text]))[0])

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        # a lower bound (common words next to each other share a separator); exact counts only
        # where it is below the cut-off, unless every count is wanted
        counts = v.regex_count(texts, _COMMON_RE).astype(np.int64)
        exact = counts < self._min if self._stop else np.ones(len(texts), dtype=bool)
        if exact.any():
            sub = texts.filter(pa.array(exact))
            words = v.word_lists(sub)
            hit = v.np_bool(pc.is_in(pc.list_flatten(words),
                                     value_set=pa.array(COMMON_ENGLISH_WORDS)))
            counts[exact] = v.per_doc_sum(words, hit, len(sub))
        return np.minimum(counts, self._min) if self._stop else counts

    def keep_document(self, score: int) -> bool:
        return score >= self._min

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return v.ge(scores, self._min)


class WordsWithoutAlphabetsFilter(_Words):
    """Keeps documents where at least ``min_words_with_alphabets`` of words contain a letter."""

    def __init__(self, min_words_with_alphabets: float = 0.8, lang: str = "en") -> None:
        super().__init__()
        self._min = min_words_with_alphabets
        self._set_lang(lang)

    def _score_words(self, words: list[str]) -> float:
        return sum(any(c.isalpha() for c in w) for w in words) / len(words) if words else 0.0

    @v.chunked
    def _score_ws(self, texts: pa.Array) -> np.ndarray:
        tok = v.Tokens(texts)
        alpha = tok.has_byte(v.ASCII_LETTERS)
        other = np.flatnonzero(~alpha & (tok.chars < tok.n_bytes))  # non-ASCII letters: by RE2
        if len(other):
            alpha[other] = v.np_bool(pc.match_substring_regex(tok.words_at(other), r"\p{L}"))
        return v.ratio(tok.per_doc_sum(alpha), tok.n_words, 0.0)

    def keep_document(self, score: float) -> bool:
        return score >= self._min

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return v.ge(scores, self._min)


class PornographicUrlsFilter(DocumentFilter):
    """Removes documents containing a URL with "porn" in it (score 1). ``url_regex``: another
    URL pattern (then scored per document with Python's ``re``)."""

    vectorized = True

    def __init__(self, url_regex: re.Pattern | str | None = None) -> None:
        super().__init__()
        self._url_regex = re.compile(url_regex) if isinstance(url_regex, str) else url_regex
        if self._url_regex is not None:
            self.vectorized = False

    def score_document(self, text: str) -> int:
        if self._url_regex is None:
            return int(self.score_batch(pa.array([text]))[0])
        return int(any("porn" in url for url in self._url_regex.findall(text)))

    def score_batch(self, texts: pa.Array) -> np.ndarray | list:
        if self._url_regex is not None:
            return [self.score_document(t) for t in texts.to_pylist()]
        url_head = v.NEMO_URL_REGEX.removesuffix("+") + "*porn"
        return v.np_bool(pc.match_substring_regex(texts, url_head)).astype(np.int64)

    def keep_document(self, score: int) -> bool:
        return score != 1

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return pc.not_equal(scores, 1)


class SubstringFilter(DocumentFilter):
    """Keeps documents that contain ``substring`` at ``position`` ("prefix", "suffix" or
    "any")."""

    vectorized = True

    def __init__(self, substring: str, position: str = "any") -> None:
        super().__init__()
        if position not in ("prefix", "suffix", "any"):
            raise ValueError(f"SubstringFilter: position must be prefix, suffix or any, got "
                             f"{position!r}")
        self._substring, self._position = substring, position

    def score_document(self, text: str) -> int:
        return int(self.score_batch(pa.array([text]))[0])

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        fn = {"prefix": pc.starts_with, "suffix": pc.ends_with, "any": pc.match_substring}
        return v.np_bool(fn[self._position](texts, self._substring)).astype(np.int64)

    def keep_document(self, score: int) -> bool:
        return score == 1

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return pc.equal(scores, 1)


_END_MARKS = (".", "!", "?", '"', "'", "”", "’")


class IncompleteStoryFilter(DocumentFilter):
    """Removes stories that do not end with sentence-ending punctuation (TinyStories)."""

    vectorized = True

    def score_document(self, text: str) -> bool:
        return text.strip().endswith(_END_MARKS)

    def score_batch(self, texts: pa.Array) -> pa.Array:
        return pc.match_substring_regex(texts, r"[.!?\"'”’]\s*$")

    def keep_document(self, score: bool) -> bool:
        return bool(score)

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return scores


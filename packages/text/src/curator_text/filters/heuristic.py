"""Heuristic text filters with NeMo Curator's names, parameters and default thresholds.

Filters marked ``vectorized`` score whole Arrow columns with ``pyarrow.compute``; the others
run per document in Python (the stage then uses worker processes)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curator_text.filters import _vec as v
from curator_text.filters.base import DocumentFilter

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


class WordCountFilter(DocumentFilter):
    """Keeps documents with ``min_words`` to ``max_words`` whitespace-separated words."""

    vectorized = True

    def __init__(self, min_words: int = 50, max_words: int = 100000, lang: str = "en") -> None:
        super().__init__()
        self._min_words, self._max_words, self._lang = min_words, max_words, lang

    def score_document(self, text: str) -> int:
        return len(text.split())

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        return v.word_counts(texts).astype(np.int64)

    def keep_document(self, score: int) -> bool:
        return self._min_words <= score <= self._max_words

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return pc.and_(v.ge(scores, self._min_words), v.le(scores, self._max_words))


class NonAlphaNumericFilter(_MaxRatio):
    """Removes documents whose share of non-alphanumeric characters exceeds
    ``max_non_alpha_numeric_to_text_ratio`` (empty documents score 100)."""

    def __init__(self, max_non_alpha_numeric_to_text_ratio: float = 0.25) -> None:
        super().__init__()
        self._max = max_non_alpha_numeric_to_text_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        lens = v.lengths(texts)
        alnum = v.class_count(texts, v.ASCII_ALNUM, r"[\p{L}\p{N}]")
        return v.ratio(lens - alnum, lens, 100.0)


class SymbolsToWordsFilter(_MaxRatio):
    """Removes documents with more than ``max_symbol_to_word_ratio`` symbols (#, ..., …) per
    word."""

    def __init__(self, max_symbol_to_word_ratio: float = 0.1, lang: str = "en") -> None:
        super().__init__()
        self._max = max_symbol_to_word_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        return v.ratio(v.regex_count(texts, r"#|\.\.\.|…"), v.word_counts(texts), 0.0)


class NumbersFilter(_MaxRatio):
    """Removes documents whose share of digits exceeds ``max_number_to_text_ratio``."""

    def __init__(self, max_number_to_text_ratio: float = 0.15) -> None:
        super().__init__()
        self._max = max_number_to_text_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        return v.ratio(v.class_count(texts, "0123456789", r"\p{Nd}"), v.lengths(texts), 1.0)


class UrlsFilter(_MaxRatio):
    """Removes documents whose URLs make up more than ``max_url_to_text_ratio`` of the
    characters."""

    def __init__(self, max_url_to_text_ratio: float = 0.2) -> None:
        super().__init__()
        self._max = max_url_to_text_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        total = v.lengths(texts)
        rest = v.lengths(pc.replace_substring_regex(texts, v.URL_REGEX, ""))
        return v.ratio(total - rest, total, 0.0)


class BulletsFilter(_MaxRatio):
    """Removes documents where more than ``max_bullet_lines_ratio`` of lines start with a
    bullet (●, •, *, -)."""

    def __init__(self, max_bullet_lines_ratio: float = 0.9) -> None:
        super().__init__()
        self._max = max_bullet_lines_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        bullets = v.regex_count(texts, r"(?m)^[ \t]*[●•*\-]")
        lines = v.regex_count(texts, "\n") + 1
        return v.ratio(bullets, lines, 0.0)


class WhiteSpaceFilter(_MaxRatio):
    """Removes documents whose share of whitespace exceeds ``max_white_space_ratio``."""

    def __init__(self, max_white_space_ratio: float = 0.25) -> None:
        super().__init__()
        self._max = max_white_space_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        if not pc.all(pc.string_is_ascii(texts)).as_py():
            texts = pc.utf8_normalize(texts, "NFKC")  # ASCII is NFKC already
        ws = v.class_count(texts, v.ASCII_WS, "[\t\n\r\x0b\x0c ]")
        return v.ratio(ws, v.lengths(texts), 100.0)


class ParenthesesFilter(_MaxRatio):
    """Removes documents whose share of brackets ``()[]{}`` exceeds ``max_parentheses_ratio``."""

    def __init__(self, max_parentheses_ratio: float = 0.1) -> None:
        super().__init__()
        self._max = max_parentheses_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        return v.ratio(v.class_count(texts, "()[]{}", r"[()\[\]{}]"), v.lengths(texts), 0.0)


class LongWordFilter(_MaxRatio):
    """Removes documents containing a word longer than ``max_word_length`` characters."""

    def __init__(self, max_word_length: int = 1000, lang: str = "en") -> None:
        super().__init__()
        self._max = max_word_length

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        words = v.word_lists(texts)
        return v.per_doc_max(words, pc.utf8_length(pc.list_flatten(words)), len(texts))


class MeanWordLengthFilter(DocumentFilter):
    """Keeps documents whose mean word length is within [``min_mean_word_length``,
    ``max_mean_word_length``]."""

    vectorized = True

    def __init__(self, min_mean_word_length: int = 3, max_mean_word_length: int = 10,
                 lang: str = "en") -> None:
        super().__init__()
        self._min, self._max = min_mean_word_length, max_mean_word_length

    def score_document(self, text: str) -> float:
        words = text.split()
        return sum(map(len, words)) / len(words) if words else 0.0

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        nonws = v.lengths(texts) - v.class_count(texts, v.ASCII_WS, r"\s")
        return v.ratio(nonws, v.word_counts(texts), 0.0)

    def keep_document(self, score: float) -> bool:
        return self._min <= score <= self._max

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return pc.and_(v.ge(scores, self._min), v.le(scores, self._max))


class PunctuationFilter(_MaxRatio):
    """Removes documents where more than ``max_num_sentences_without_endmark_ratio`` of lines
    do not end with ``. ? ! " '``."""

    def __init__(self, max_num_sentences_without_endmark_ratio: float = 0.85) -> None:
        super().__init__()
        self._max = max_num_sentences_without_endmark_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        lines = v.regex_count(texts, "\n") + 1
        ended = v.regex_count(texts, "(?m)[.?!\"'][ \t]*$")
        return v.ratio(lines - ended, lines, 0.0)


class EllipsisFilter(_MaxRatio):
    """Removes documents where more than ``max_num_lines_ending_with_ellipsis_ratio`` of lines
    end with an ellipsis."""

    def __init__(self, max_num_lines_ending_with_ellipsis_ratio: float = 0.3) -> None:
        super().__init__()
        self._max = max_num_lines_ending_with_ellipsis_ratio

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        lines = v.regex_count(texts, "\n") + 1
        return v.ratio(v.regex_count(texts, r"(?m)(?:\.\.\.|…)[ \t]*$"), lines, 0.0)


_COMMON_WORDS = frozenset({"the", "be", "to", "of", "and", "that", "have", "with"})


class CommonEnglishWordsFilter(DocumentFilter):
    """Keeps documents containing at least ``min_num_common_words`` common English words
    (the, be, to, of, and, that, have, with)."""

    vectorized = True

    def __init__(self, min_num_common_words: int = 2, stop_at_false: bool = True) -> None:
        super().__init__()
        self._min = min_num_common_words

    def score_document(self, text: str) -> int:
        return sum(w in _COMMON_WORDS for w in text.lower().split())

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        return v.regex_count(texts, r"(?:^|\s)(?:the|be|to|of|and|that|have|with)(?:\s|$)",
                             ignore_case=True)

    def keep_document(self, score: int) -> bool:
        return score >= self._min

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return v.ge(scores, self._min)


class WordsWithoutAlphabetsFilter(DocumentFilter):
    """Keeps documents where at least ``min_words_with_alphabets`` of words contain a letter."""

    vectorized = True

    def __init__(self, min_words_with_alphabets: float = 0.8, lang: str = "en") -> None:
        super().__init__()
        self._min = min_words_with_alphabets

    def score_document(self, text: str) -> float:
        words = text.split()
        return sum(any(c.isalpha() for c in w) for w in words) / len(words) if words else 0.0

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        words = v.word_lists(texts)
        alpha = pc.match_substring_regex(pc.list_flatten(words), r"\p{L}")
        idx = pc.list_parent_indices(words).to_numpy(zero_copy_only=False)
        counts = np.bincount(idx, weights=v.np_bool(alpha).astype(float),
                             minlength=len(texts))
        return v.ratio(counts, v.word_counts(texts), 0.0)

    def keep_document(self, score: float) -> bool:
        return score >= self._min

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return v.ge(scores, self._min)


class PornographicUrlsFilter(DocumentFilter):
    """Removes documents containing a URL with "porn" in it (score 1)."""

    vectorized = True

    def score_document(self, text: str) -> int:
        return int(self.score_batch(pa.array([text]))[0])

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        hit = pc.match_substring_regex(texts, r"(?:https?://|www\.)[^\s]*porn", ignore_case=True)
        return v.np_bool(hit).astype(np.int64)

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


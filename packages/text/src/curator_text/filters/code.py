"""Code-quality filters with NeMo Curator's names and defaults."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from curator_text.filters import _vec as v
from curator_text.filters.base import DocumentFilter

__all__ = ["PythonCommentToCodeFilter", "GeneralCommentToCodeFilter",
           "NumberOfLinesOfCodeFilter", "XMLHeaderFilter", "AlphaFilter",
           "HTMLBoilerplateFilter", "PerExtensionFilter"]


class _Range(DocumentFilter):
    _min: float = 0.0
    _max: float = float("inf")

    def keep_document(self, score: float) -> bool:
        return self._min <= score <= self._max

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return pc.and_(v.ge(scores, self._min), v.le(scores, self._max))


_PY_COMMENT = re.compile(r"#[^\n]*|\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''")
_COMMENTS = {
    "text/x-c": r"//[^\n]*|/\*[\s\S]*?\*/", "text/x-c++": r"//[^\n]*|/\*[\s\S]*?\*/",
    "text/x-java": r"//[^\n]*|/\*[\s\S]*?\*/", "text/javascript": r"//[^\n]*|/\*[\s\S]*?\*/",
    "text/x-ruby": r"#[^\n]*", "text/x-sh": r"#[^\n]*", "text/x-sql": r"--[^\n]*",
    "text/x-python": _PY_COMMENT.pattern,
}


def _comment_ratio(pattern: re.Pattern, text: str) -> float:
    if not text:
        return 0.0
    return sum(len(m) for m in pattern.findall(text)) / len(text)


class PythonCommentToCodeFilter(_Range):
    """Keeps Python files whose comment/docstring share of characters is within
    [``min_comment_to_code_ratio``, ``max_comment_to_code_ratio``]."""

    def __init__(self, min_comment_to_code_ratio: float = 0.01,
                 max_comment_to_code_ratio: float = 0.85) -> None:
        super().__init__()
        self._min, self._max = min_comment_to_code_ratio, max_comment_to_code_ratio

    def score_document(self, text: str) -> float:
        return _comment_ratio(_PY_COMMENT, text)


class GeneralCommentToCodeFilter(_Range):
    """Like :class:`PythonCommentToCodeFilter` for a ``language`` given as a MIME type
    (text/x-c, text/x-c++, text/x-java, text/javascript, text/x-ruby, text/x-sh, text/x-sql)."""

    def __init__(self, language: str, min_comment_to_code_ratio: float = 0.01,
                 max_comment_to_code_ratio: float = 0.85) -> None:
        super().__init__()
        if language not in _COMMENTS:
            raise ValueError(f"GeneralCommentToCodeFilter: unknown language {language!r}; "
                             f"use one of {sorted(_COMMENTS)}")
        self._pattern = re.compile(_COMMENTS[language])
        self._min, self._max = min_comment_to_code_ratio, max_comment_to_code_ratio

    def score_document(self, text: str) -> float:
        return _comment_ratio(self._pattern, text)


class NumberOfLinesOfCodeFilter(_Range):
    """Keeps files with ``min_lines`` to ``max_lines`` lines."""

    vectorized = True

    def __init__(self, min_lines: int = 10, max_lines: int = 20000) -> None:
        super().__init__()
        self._min, self._max = min_lines, max_lines

    def score_document(self, text: str) -> int:
        return len(text.splitlines())

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        newlines = v.regex_count(texts, "\n")
        trailing = v.np_bool(pc.ends_with(texts, "\n"))
        nonempty = v.lengths(texts) > 0
        return (newlines + (nonempty & ~trailing)).astype(np.int64)


class XMLHeaderFilter(DocumentFilter):
    """Removes files with an XML header (``<?xml version=``) in the first
    ``char_prefix_search_length`` characters (score 1)."""

    vectorized = True

    def __init__(self, char_prefix_search_length: int = 100) -> None:
        super().__init__()
        self._n = char_prefix_search_length

    def score_document(self, text: str) -> int:
        return int("<?xml version=" in text[: self._n])

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        head = pc.utf8_slice_codeunits(texts, 0, self._n)
        return v.np_bool(pc.match_substring(head, "<?xml version=")).astype(np.int64)

    def keep_document(self, score: int) -> bool:
        return score != 1

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return pc.not_equal(scores, 1)


class AlphaFilter(_Range):
    """Keeps files whose share of alphabetic characters is at least ``min_alpha_ratio``."""

    vectorized = True

    def __init__(self, min_alpha_ratio: float = 0.25) -> None:
        super().__init__()
        self._min = min_alpha_ratio

    def score_document(self, text: str) -> float:
        return sum(c.isalpha() for c in text) / len(text) if text else 0.0

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        letters = v.class_count(texts, v.ASCII_ALNUM[:52], r"\p{L}")
        return v.ratio(letters, v.lengths(texts), 0.0)


_TAGS = re.compile(r"<script[\s\S]*?</script>|<style[\s\S]*?</style>|<[^>]*>", re.I)


class HTMLBoilerplateFilter(DocumentFilter):
    """Keeps HTML files whose visible text is at least ``min_lang_content_ratio`` of the file
    and at least ``min_lang_content_num_chars`` characters (score: the visible-text ratio, or 0
    when there are too few visible characters)."""

    def __init__(self, min_lang_content_ratio: float = 0.2,
                 min_lang_content_num_chars: int = 100) -> None:
        super().__init__()
        self._ratio, self._chars = min_lang_content_ratio, min_lang_content_num_chars

    def score_document(self, text: str) -> float:
        if not text:
            return 0.0
        visible = " ".join(_TAGS.sub(" ", text).split())
        return len(visible) / len(text) if len(visible) >= self._chars else 0.0

    def keep_document(self, score: float) -> bool:
        return score >= self._ratio


_DEFAULT_EXTENSION_LIMITS = {"max_line_length": 1000, "mean_line_length": 100,
                             "min_alphanum_fraction": 0.25}


class PerExtensionFilter(DocumentFilter):
    """Keeps source files that pass per-extension limits: longest line ≤ ``max_line_length``,
    mean line length ≤ ``mean_line_length`` and alphanumeric share ≥ ``min_alphanum_fraction``
    (score 1 = pass). ``thresholds`` maps extensions (``".py"``) to overrides of these limits.
    """

    def __init__(self, lang: str = "en", extension: str = ".py",
                 thresholds: dict[str, dict[str, float]] | None = None,
                 metadata_file: str | None = None) -> None:
        super().__init__()
        if metadata_file is not None:
            raise ValueError("PerExtensionFilter: metadata_file is not supported; pass "
                             "thresholds={'.ext': {...}} instead")
        self._limits = {**_DEFAULT_EXTENSION_LIMITS, **(thresholds or {}).get(extension, {})}

    def score_document(self, text: str) -> int:
        lines = text.splitlines() or [""]
        lens = [len(x) for x in lines]
        alnum = sum(c.isalnum() for c in text) / len(text) if text else 0.0
        ok = (max(lens) <= self._limits["max_line_length"]
              and sum(lens) / len(lens) <= self._limits["mean_line_length"]
              and alnum >= self._limits["min_alphanum_fraction"])
        return int(ok)

    def keep_document(self, score: int) -> bool:
        return score == 1

"""Code-quality filters with NeMo Curator's names and defaults."""

from __future__ import annotations

import ast
import csv
import io
import os
import re
import tokenize
import warnings
from importlib.resources import files
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from curator.errors import ConfigError
from curator.stages.lifecycle import ensure_setup

from curator_text.filters import _vec as v
from curator_text.filters.base import DocumentFilter

__all__ = ["PythonCommentToCodeFilter", "GeneralCommentToCodeFilter",
           "NumberOfLinesOfCodeFilter", "XMLHeaderFilter", "AlphaFilter",
           "HTMLBoilerplateFilter", "PerExtensionFilter", "TokenizerFertilityFilter"]


class _Range(DocumentFilter):
    _min: float = 0.0
    _max: float = float("inf")

    def keep_document(self, score: float) -> bool:
        return self._min <= score <= self._max

    def keep_batch(self, scores: pa.Array) -> pa.Array:
        return v.between(scores, self._min, self._max)


_DOC_NODES = (ast.Module, ast.ClassDef, ast.FunctionDef)


def python_comment_chars(source: str) -> int | None:
    """Characters of the docstrings (``ast.get_docstring`` of the module, classes and functions,
    joined by newlines) plus the ``#`` comments (``tokenize``, untokenized) of Python source, as
    NeMo Curator counts them; None when the source does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(source)
        docs = [d for n in ast.walk(tree) if isinstance(n, _DOC_NODES) and (d := ast.get_docstring(n))]
        comments = [(tokenize.COMMENT, t.string) for t in
                    tokenize.generate_tokens(io.StringIO(source).readline)
                    if t.type == tokenize.COMMENT]
        return len("\n".join(docs)) + len(tokenize.untokenize(comments))
    except (SyntaxError, ValueError, tokenize.TokenError, IndentationError, RecursionError):
        return None


_STRINGS = r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
_C_LIKE = _STRINGS + r"|//([^\n]*)|/\*([\s\S]*?)\*/"
_HASH = _STRINGS + r"|#([^\n]*)"
_MARKUP = r"<!--([\s\S]*?)-->"
_COMMENTS = {
    **dict.fromkeys(["text/x-c", "text/x-c++", "text/x-java", "text/x-java-source",
                     "text/javascript", "text/x-javascript", "application/javascript",
                     "text/x-go"], _C_LIKE),
    **dict.fromkeys(["text/x-ruby", "text/x-sh", "text/x-shellscript"], _HASH),
    **dict.fromkeys(["text/html", "text/xml"], _MARKUP),
    "text/x-sql": _STRINGS + r"|--([^\n]*)",
}
_PYTHON_MIMES = ("text/x-python", "text/x-script.python")


class PythonCommentToCodeFilter(_Range):
    """Keeps Python files whose docstring and comment characters are within
    [``min_comment_to_code_ratio``, ``max_comment_to_code_ratio``] of the file (score 0 when the
    file does not parse)."""

    def __init__(self, min_comment_to_code_ratio: float = 0.01,
                 max_comment_to_code_ratio: float = 0.85) -> None:
        super().__init__()
        self._min, self._max = min_comment_to_code_ratio, max_comment_to_code_ratio

    def score_document(self, text: str) -> float:
        chars = python_comment_chars(text) if text else None
        return chars / len(text) if chars is not None else 0.0


class GeneralCommentToCodeFilter(_Range):
    """Like :class:`PythonCommentToCodeFilter` for a ``language`` given as a MIME type (C, C++,
    Java, JavaScript, Go, Ruby, shell, HTML/XML, Python, SQL). The score counts the comment
    texts without their markers (``//``, ``/* */``, ``#``, ``<!-- -->``) joined by spaces, as
    NeMo Curator's ``comment_parser`` does; markers inside string literals are not comments.
    Another MIME type (``text/x-asm``) warns when the filter is built and scores every document
    9999, so all are filtered out with that score, as in NeMo Curator."""

    def __init__(self, language: str, min_comment_to_code_ratio: float = 0.01,
                 max_comment_to_code_ratio: float = 0.85) -> None:
        super().__init__()
        self._known = language in _COMMENTS or language in _PYTHON_MIMES
        if not self._known:  # NeMo Curator accepts it and drops every document (score 9999)
            warnings.warn(f"GeneralCommentToCodeFilter: no comment syntax for {language!r}; "
                          "every document scores 9999 and is filtered out (as in NeMo Curator). "
                          f"Use one of {sorted([*_COMMENTS, *_PYTHON_MIMES])} to score comments",
                          UserWarning, stacklevel=2)
        self._language = language
        self._pattern = re.compile(_COMMENTS.get(language, ""))
        self._min, self._max = min_comment_to_code_ratio, max_comment_to_code_ratio

    def _comments(self, text: str) -> list[str]:
        if self._language in _PYTHON_MIMES:
            tokens = tokenize.generate_tokens(io.StringIO(text).readline)
            return [t.string[1:] for t in tokens if t.type == tokenize.COMMENT]
        return [next((g for g in m.groups() if g is not None), "")
                for m in self._pattern.finditer(text) if any(g is not None for g in m.groups())]

    def score_document(self, text: str) -> float:
        if not self._known:
            return 9999.0  # NeMo Curator: comment_parser's UnsupportedError scores 9999
        if not text:
            return 0.0
        try:
            comments = self._comments(text)
        except (tokenize.TokenError, SyntaxError):
            return 9999.0  # NeMo Curator's score when comments cannot be extracted
        return len(" ".join(comments)) / len(text)


class NumberOfLinesOfCodeFilter(_Range):
    """Keeps files with ``min_lines`` to ``max_lines`` lines (newlines + 1, as NeMo Curator)."""

    vectorized = True

    def __init__(self, min_lines: int = 10, max_lines: int = 20000) -> None:
        super().__init__()
        self._min, self._max = min_lines, max_lines

    def score_document(self, text: str) -> int:
        return text.count("\n") + 1

    def score_batch(self, texts: pa.Array) -> np.ndarray:
        return pc.count_substring(texts, "\n").to_numpy(zero_copy_only=False).astype(np.int64) + 1


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


class HTMLBoilerplateFilter(DocumentFilter):
    """Keeps HTML files whose visible text (BeautifulSoup's ``get_text()`` after removing
    ``<script>`` and ``<style>``, whitespace kept as is) is at least ``min_lang_content_ratio``
    of the file; the score is 0 when the visible text has fewer than
    ``min_lang_content_num_chars`` characters, and None when the file cannot be parsed."""

    def __init__(self, min_lang_content_ratio: float = 0.2,
                 min_lang_content_num_chars: int = 100) -> None:
        super().__init__()
        self._ratio, self._chars = min_lang_content_ratio, min_lang_content_num_chars

    def score_document(self, text: str) -> float | None:
        from bs4 import BeautifulSoup

        if not text:
            return 0.0
        try:
            soup = BeautifulSoup(text, features="html.parser")
        except (TypeError, UnboundLocalError):
            return None
        for element in soup(["script", "style"]):
            element.extract()
        visible = soup.get_text()
        return len(visible) / len(text) if len(visible) >= self._chars else 0.0

    def keep_document(self, score: float | None) -> bool:
        return score is not None and score >= self._ratio


_ALNUM = re.compile("[a-zA-Z0-9\n?!,.]")
_LANG_ALIASES = {"C#": "c-sharp", "F#": "f-sharp"}


def _extension_limits(path: str, lang: str) -> dict[str, tuple]:
    """{extension: (include, max_line, mean_line, min_alnum, min_alpha)} of ``lang``'s rows."""

    def num(value: str, kind: type) -> float | None:
        try:
            return kind(value)
        except ValueError:
            return None

    limits = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["language"] == lang:
                line_max = num(row["Long_line_threshold"], int)
                limits[row["extension"]] = (row["Include"] == "1", line_max,
                                            100 if line_max else None,
                                            num(row["Alphanum_threshold"], float),
                                            num(row["Alpha filter"], float))
    return limits


class PerExtensionFilter(DocumentFilter):
    """Keeps source files that pass the limits of their (language, extension) row in
    ``metadata_file`` (default: the packaged ``code_meta.csv``, NeMo Curator's table): the row
    must be included, the longest line at most ``Long_line_threshold`` (mean line length at most
    100), the share of ``[a-zA-Z0-9\\n?!,.]`` at least ``Alphanum_threshold`` and the share of
    letters at least ``Alpha filter``. Score 1 = pass, 0 = fail (unknown extensions fail).

    Parameters:
        lang: the file's language as in the dataset (``"Python"``, ``"C#"`` …).
        extension: the file extension without the dot (``"py"``; a leading dot is ignored).
        metadata_file: a CSV with columns ``language, extension, Include, Alphanum_threshold,
            Long_line_threshold, Alpha filter``.
    """

    def __init__(self, lang: str = "python", extension: str = "py",
                 metadata_file: str | None = None) -> None:
        super().__init__()
        path = metadata_file or str(files("curator_text") / "data" / "code_meta.csv")
        self._lang = _LANG_ALIASES.get(lang, lang.lower().replace(" ", "-"))
        self._extension = (extension or "").removeprefix(".")
        self._limits = _extension_limits(path, self._lang)
        if not self._limits:
            raise ConfigError(f"PerExtensionFilter: no rows for language {lang!r} in {path}; "
                              "pass a language listed there or your own metadata_file")

    def score_document(self, text: str) -> int:
        limits = self._limits.get(self._extension)
        if limits is None or not limits[0] or not text:
            return 0
        _, line_max, line_mean, min_alnum, min_alpha = limits
        longest, mean = self._line_statistics(text)
        fails = ((line_max and longest > line_max)
                 or (line_mean and mean > line_mean)
                 or (min_alnum and len(_ALNUM.findall(text)) / len(text) < min_alnum)
                 or (min_alpha and sum(map(str.isalpha, text)) < min_alpha * len(text)))
        return 0 if fails else 1

    @staticmethod
    def _line_statistics(text: str) -> tuple[int, float]:
        """The longest line's length and the mean line length, the line breaks not counted
        (NeMo Curator's name: ``""`` and ``"\\n"`` give ``(0, 0.0)``)."""
        lens = [len(x) for x in text.split("\n")]
        return max(lens), (len(text) + 1) / len(lens) - 1

    def keep_document(self, score: int | None) -> bool:
        return bool(score)


class TokenizerFertilityFilter(DocumentFilter):
    """Keeps documents with at least ``min_char_to_token_ratio`` characters per token (score:
    characters / tokens, -1 without tokens). ``path_to_tokenizer``: a SentencePiece ``.model``
    file (as NeMo Curator), or a Hugging Face ``tokenizer.json`` file or a directory holding
    one (tokens counted without special tokens). Loaded on first use."""

    def __init__(self, path_to_tokenizer: str | None = None,
                 min_char_to_token_ratio: float = 2.5) -> None:
        super().__init__()
        if not path_to_tokenizer or not os.path.exists(path_to_tokenizer):
            raise ConfigError(f"TokenizerFertilityFilter: path_to_tokenizer {path_to_tokenizer!r} "
                              "must be a local SentencePiece .model file or tokenizer directory")
        self._path, self._threshold = path_to_tokenizer, min_char_to_token_ratio
        self._tokenize: Any = None

    def setup(self) -> None:
        if self._tokenize is not None:
            return
        path = self._path
        if os.path.isdir(path) or path.endswith(".json"):
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(os.path.join(path, "tokenizer.json")
                                      if os.path.isdir(path) else path)
            self._tokenize = lambda t: tok.encode(t, add_special_tokens=False).tokens
        else:
            import sentencepiece

            sp = sentencepiece.SentencePieceProcessor()
            sp.Load(path)
            self._tokenize = sp.encode_as_pieces

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_tokenize": None}

    def score_document(self, text: str) -> float:
        ensure_setup(self)
        n = len(self._tokenize(text))
        return len(text) / n if n else -1

    def keep_document(self, score: float) -> bool:
        return score >= self._threshold

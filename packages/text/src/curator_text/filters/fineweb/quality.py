"""datatrove's FineWeb quality filters with its parameters, defaults, order of checks and reason
names: :class:`GopherRepetitionFilter`, :class:`GopherQualityFilter`, :class:`C4QualityFilter`
(which also removes lines from the documents it keeps) and :class:`FineWebQualityFilter`.

Words are datatrove's English words (``curator_text.filters._english_words``); n-gram and word
statistics, Gopher's paragraph/line repetition and line counts run in compiled kernels over the
UTF-8 bytes and word numbers of the whole batch; C4's and FineWeb's per-line rules use Python's
own string methods (the rules are defined by them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from curator.errors import ConfigError

from curator_text.filters._english_words import shared_tokenizer, terminal_punctuation
from curator_text.filters._vec import text_bytes
from curator_text.filters.fineweb.base import DatatroveFilter, char_lengths


def _kernels():
    # imported where a kernel runs: the module imports numba (``import curator_text`` stays light)
    from curator_text.filters.fineweb import _kernels as kernels

    return kernels

__all__ = ["GopherRepetitionFilter", "GopherQualityFilter", "C4QualityFilter",
           "FineWebQualityFilter", "GOPHER_STOP_WORDS", "C4_POLICY_SUBSTRINGS"]

GOPHER_STOP_WORDS = ("the", "be", "to", "of", "and", "that", "have", "with")
C4_POLICY_SUBSTRINGS = ("terms of use", "privacy policy", "cookie policy", "uses cookies",
                        "use of cookies", "use cookies")



def _check_language(stage: str, language: str) -> None:
    if language not in ("en", "eng"):
        raise ConfigError(f"{stage}: language={language!r} is not supported (English only: "
                          "'en')")


def _duplicates(items: list[str]) -> tuple[int, int]:
    """(items seen before, their characters), as datatrove's ``find_duplicates``."""
    if len(set(items)) == len(items):
        return 0, 0
    seen: set[str] = set()
    n = chars = 0
    for x in items:
        if x in seen:
            n += 1
            chars += len(x)
        else:
            seen.add(x)
    return n, chars


@dataclass
class GopherRepetitionFilter(DatatroveFilter):
    """Gopher's repetition rules (Rae et al. 2021, table A1) as datatrove applies them, in order:
    duplicate paragraphs (``dup_para_frac``, ``dup_para_char_frac``), duplicate lines
    (``dup_line_frac``, ``dup_line_char_frac``), top n-grams (``top_n_grams``: (n, max fraction
    of characters)) and duplicated n-grams (``dup_n_grams``). ``None`` or 0 turns a rule off.
    Reasons: ``dup_para_frac``, ``dup_para_char_frac``, ``dup_line_frac``,
    ``dup_line_char_frac``, ``top_{n}_gram``, ``duplicated_{n}_n_grams``."""

    dup_line_frac: float | None = 0.3
    dup_para_frac: float | None = 0.3
    dup_line_char_frac: float | None = 0.2
    dup_para_char_frac: float | None = 0.2
    top_n_grams: tuple[tuple[int, float], ...] = ((2, 0.2), (3, 0.18), (4, 0.16))
    dup_n_grams: tuple[tuple[int, float], ...] = (
        (5, 0.15), (6, 0.14), (7, 0.13), (8, 0.12), (9, 0.11), (10, 0.10))
    language: str = "en"
    text_field: str = "text"
    split: bool = False
    name: str = ""
    reasons: tuple[str, ...] = field(init=False, repr=False, default=())

    _FIXED: ClassVar[tuple[str, ...]] = (
        "dup_para_frac", "dup_para_char_frac", "dup_line_frac", "dup_line_char_frac")

    def __post_init__(self) -> None:
        self._init_name()
        _check_language(type(self).__name__, self.language)
        self.top_n_grams = tuple((int(n), float(f)) for n, f in self.top_n_grams)
        self.dup_n_grams = tuple((int(n), float(f)) for n, f in self.dup_n_grams)
        self.reasons = (*self._FIXED, *(f"top_{n}_gram" for n, _ in self.top_n_grams),
                        *(f"duplicated_{n}_n_grams" for n, _ in self.dup_n_grams))

    def decide(self, texts: pa.Array) -> tuple[np.ndarray, None]:
        from curator_text._bytes import SPACE_CLASSES, SPACE_E2_80  # imports numba

        buf, offsets = text_bytes(texts)
        codes = _kernels().line_repetition(
            buf, offsets, SPACE_CLASSES, SPACE_E2_80, float(self.dup_para_frac or 0),
            float(self.dup_para_char_frac or 0), float(self.dup_line_frac or 0),
            float(self.dup_line_char_frac or 0))
        todo = np.flatnonzero(codes == 0)
        if len(todo):
            tok = shared_tokenizer().tokenize(texts.take(pa.array(todo)))
            lens = char_lengths(texts)[todo]
            top = [(n, f) for n, f in self.top_n_grams if f]
            dup = [(n, f) for n, f in self.dup_n_grams if f]
            grams = _kernels().repetition_codes(
                tok.ids, tok.offsets, tok.lengths, tok.hashes, lens,
                np.array([n for n, _ in top], np.int64), np.array([f for _, f in top]),
                np.array([n for n, _ in dup], np.int64), np.array([f for _, f in dup]))
            names = [f"top_{n}_gram" for n, _ in top] + [f"duplicated_{n}_n_grams" for n, _ in dup]
            index = np.array([0] + [self.reasons.index(r) + 1 for r in names], np.int8)
            codes[todo] = index[grams]
        return codes, None


@dataclass
class GopherQualityFilter(DatatroveFilter):
    """Gopher's quality rules as datatrove applies them, in order. Reasons:
    ``gopher_short_doc`` / ``gopher_long_doc`` (non-symbol words outside ``min_doc_words`` ..
    ``max_doc_words``), ``gopher_below_avg_threshold`` / ``gopher_above_avg_threshold`` (mean
    non-symbol word length), ``gopher_too_many_hashes`` / ``gopher_too_many_ellipsis`` (per
    word, ``max_symbol_word_ratio``), ``gopher_too_many_bullets`` (``max_bullet_lines_ratio``),
    ``gopher_too_many_end_ellipsis`` (``max_ellipsis_lines_ratio``),
    ``gopher_below_alpha_threshold`` (fewer than ``max_non_alpha_words_ratio`` of the words with
    a letter) and ``gopher_enough_stop_words`` (fewer than ``min_stop_words`` distinct
    ``stop_words``). ``None`` or 0 turns a rule off."""

    min_doc_words: int | None = 50
    max_doc_words: int | None = 100000
    min_avg_word_length: int | None = 3
    max_avg_word_length: int | None = 10
    max_symbol_word_ratio: float | None = 0.1
    max_bullet_lines_ratio: float | None = 0.9
    max_ellipsis_lines_ratio: float | None = 0.3
    max_non_alpha_words_ratio: float | None = 0.8
    min_stop_words: int | None = 2
    stop_words: list[str] | None = None
    language: str = "en"
    text_field: str = "text"
    split: bool = False
    name: str = ""

    reasons: ClassVar[tuple[str, ...]] = (
        "gopher_short_doc", "gopher_long_doc", "gopher_below_avg_threshold",
        "gopher_above_avg_threshold", "gopher_too_many_hashes", "gopher_too_many_ellipsis",
        "gopher_too_many_bullets", "gopher_too_many_end_ellipsis",
        "gopher_below_alpha_threshold", "gopher_enough_stop_words")

    def __post_init__(self) -> None:
        self._init_name()
        _check_language(type(self).__name__, self.language)
        self._stop = tuple(dict.fromkeys(
            GOPHER_STOP_WORDS if self.stop_words is None else self.stop_words))

    def _stop_index(self, size: int) -> np.ndarray:
        tok = shared_tokenizer()
        index = np.full(size, -1, np.int16)
        for k, word in enumerate(self._stop):
            i = tok.id_of(word)
            if i is not None and i < size:
                index[i] = k
        return index

    def decide(self, texts: pa.Array) -> tuple[np.ndarray, None]:
        tok = shared_tokenizer().tokenize(texts)
        stats = _kernels().quality_stats(tok.ids, tok.offsets, tok.lengths, tok.flags,
                                self._stop_index(len(tok.lengths)), len(self._stop))
        n_words, nonsym, chars, alpha, stops = (stats[:, k].astype(np.float64) for k in range(5))
        counts = _kernels().line_stats(*text_bytes(texts)).astype(np.float64)
        hashes, ellipses, lines, bullets, end_ellipsis = (counts[:, k] for k in range(5))
        with np.errstate(divide="ignore", invalid="ignore"):
            avg = np.where(nonsym > 0, chars / np.maximum(nonsym, 1), np.nan)
            per_word = lambda x: np.where(n_words > 0, x / np.maximum(n_words, 1), 0.0)  # noqa: E731
            per_line = lambda x: np.where(lines > 0, x / np.maximum(lines, 1), 0.0)  # noqa: E731
            rules = [
                (self.min_doc_words, nonsym < (self.min_doc_words or 0)),
                (self.max_doc_words, nonsym > (self.max_doc_words or 0)),
                (self.min_avg_word_length, avg < (self.min_avg_word_length or 0)),
                (self.max_avg_word_length, avg > (self.max_avg_word_length or 0)),
                (self.max_symbol_word_ratio,
                 per_word(hashes) > (self.max_symbol_word_ratio or 0)),
                (self.max_symbol_word_ratio,
                 per_word(ellipses.astype(float)) > (self.max_symbol_word_ratio or 0)),
                (self.max_bullet_lines_ratio,
                 per_line(bullets) > (self.max_bullet_lines_ratio or 0)),
                (self.max_ellipsis_lines_ratio,
                 per_line(end_ellipsis) > (self.max_ellipsis_lines_ratio or 0)),
                (self.max_non_alpha_words_ratio,
                 (n_words > 0) & (per_word(alpha) < (self.max_non_alpha_words_ratio or 0))),
                (self.min_stop_words, stops < (self.min_stop_words or 0)),
            ]
        codes = np.zeros(len(texts), np.int8)
        for k in range(len(rules) - 1, -1, -1):  # the first failing rule wins
            on, failed = rules[k]
            if on:
                codes[failed] = k + 1
        return codes, None


_CITATION = re.compile(r"\[\d*]|\[edit]|\[citation needed]")
_END_PUNCTUATION = (".", "?", "!", '"', "'")


@dataclass
class C4QualityFilter(DatatroveFilter):
    """C4's rules (Raffel et al. 2020) as datatrove applies them line by line (lines:
    ``str.splitlines()``, each stripped): lines with a word over ``max_word_length``
    characters, without terminal punctuation (``filter_no_terminal_punct``; a line ending with
    "..." counts as without), with fewer than ``min_words_per_line`` words, mentioning
    "javascript" or a cookie/terms policy are removed (Wikipedia citations such as ``[1]`` are
    cut out of lines first with ``remove_citations``); a document with "lorem ipsum"
    (``lorem_ipsum``) or a curly bracket (``curly_bracket``) in a line kept so far, or fewer
    than ``min_num_sentences`` sentences left (``too_few_sentences``), is removed. The documents
    kept hold only their kept lines, joined by newlines.

    ``split_paragraph=False`` (datatrove's sentence mode) is not supported."""

    split_paragraph: bool = True
    remove_citations: bool = True
    filter_no_terminal_punct: bool = True
    min_num_sentences: int = 5
    min_words_per_line: int = 3
    max_word_length: int = 1000
    filter_lorem_ipsum: bool = True
    filter_javascript: bool = True
    filter_curly_bracket: bool = True
    filter_policy: bool = True
    language: str = "en"
    text_field: str = "text"
    split: bool = False
    name: str = ""

    reasons: ClassVar[tuple[str, ...]] = ("lorem_ipsum", "curly_bracket", "too_few_sentences")

    def __post_init__(self) -> None:
        self._init_name()
        _check_language(type(self).__name__, self.language)
        if not self.split_paragraph:
            raise ConfigError(f"{type(self).__name__}: split_paragraph=False (sentence mode) is "
                              "not supported; use the default split_paragraph=True")

    def _lines(self, text: str) -> tuple[int, list[str]]:
        """(reason code or 0, the kept lines)."""
        kept: list[str] = []
        for line in text.splitlines():
            line = line.strip()
            words = line.split()
            if self.max_word_length != -1 and len(line) > self.max_word_length and any(
                    len(w) > self.max_word_length for w in words):
                continue
            if self.remove_citations and "[" in line:
                line = _CITATION.sub("", line)
            if self.filter_no_terminal_punct and (
                    not line.endswith(_END_PUNCTUATION) or line.endswith("...")):
                continue
            if len(words) < self.min_words_per_line:
                continue
            low = line.lower()
            if self.filter_lorem_ipsum and "lorem ipsum" in low:
                return 1, []
            if self.filter_javascript and "javascript" in low:
                continue
            if self.filter_curly_bracket and "{" in line:
                return 2, []
            if self.filter_policy and any(p in low for p in C4_POLICY_SUBSTRINGS):
                continue
            kept.append(line)
        return 0, kept

    def outputs(self):
        return ["data"], [self.text_field]  # the kept documents' text is rewritten

    def decide(self, texts: pa.Array) -> tuple[np.ndarray, pa.Array]:
        strings = texts.to_pylist()
        codes = np.zeros(len(strings), np.int8)
        kept_lines: list[list[str]] = []
        for i, text in enumerate(strings):
            code, kept = self._lines(text)
            codes[i] = code
            kept_lines.append(kept)
        if self.min_num_sentences != -1:
            flat = [line for lines in kept_lines for line in lines]
            tok = shared_tokenizer().tokenize(flat)
            per_line = _kernels().sentence_counts(tok.ids, tok.offsets, tok.flags)
            ends = np.cumsum([0] + [len(lines) for lines in kept_lines])
            sentences = np.add.reduceat(np.r_[per_line, 0], ends[:-1]) if len(flat) else \
                np.zeros(len(strings), np.int64)
            sentences = np.where(np.diff(ends) > 0, sentences, 0)
            codes[(codes == 0) & (sentences < self.min_num_sentences)] = 3
        new = ["\n".join(lines).strip() if code == 0 else text
               for lines, code, text in zip(kept_lines, codes.tolist(), strings, strict=True)]
        return codes, pa.array(new, type=texts.type)


@dataclass
class FineWebQualityFilter(DatatroveFilter):
    """FineWeb's own rules (Penedo et al. 2024) as datatrove applies them to the non-blank lines
    (``text.split("\\n")``): ``empty`` (none), ``line_punct_ratio`` (fewer than
    ``line_punct_thr`` of the lines end with one of ``stop_chars``, default: terminal
    punctuation), ``short_line_ratio`` (more than ``short_line_thr`` of the lines have at most
    ``short_line_length`` characters), ``char_dup_ratio`` (characters of repeated lines over the
    text's without newlines above ``char_duplicates_ratio``) and ``list_ratio`` (newlines per
    word above ``new_line_ratio``)."""

    line_punct_thr: float = 0.12
    line_punct_exclude_zero: bool = False
    stop_chars: tuple[str, ...] | None = None
    short_line_thr: float = 0.67
    short_line_length: int = 30
    char_duplicates_ratio: float = 0.01
    new_line_ratio: float = 0.3
    language: str = "en"
    text_field: str = "text"
    split: bool = False
    name: str = ""

    reasons: ClassVar[tuple[str, ...]] = (
        "empty", "line_punct_ratio", "short_line_ratio", "char_dup_ratio", "list_ratio")

    def __post_init__(self) -> None:
        self._init_name()
        _check_language(type(self).__name__, self.language)
        if self.stop_chars is not None:
            self.stop_chars = tuple(self.stop_chars)

    def decide(self, texts: pa.Array) -> tuple[np.ndarray, None]:
        strings = texts.to_pylist()
        stop = self.stop_chars if self.stop_chars is not None else tuple(terminal_punctuation())
        codes = np.zeros(len(strings), np.int8)
        short = self.short_line_length
        for i, text in enumerate(strings):
            lines = [line for line in text.split("\n") if line.strip()]
            if not lines:
                codes[i] = 1
                continue
            ratio = sum(1 for line in lines if line.endswith(stop)) / len(lines)
            if ratio < self.line_punct_thr and not (ratio == 0 and self.line_punct_exclude_zero):
                codes[i] = 2
                continue
            if sum(1 for line in lines if len(line) <= short) / len(lines) > self.short_line_thr:
                codes[i] = 3
                continue
            if _duplicates(lines)[1] / (len(text) - text.count("\n")) > self.char_duplicates_ratio:
                codes[i] = 4
        todo = np.flatnonzero(codes == 0)
        if len(todo):
            tok = shared_tokenizer().tokenize(texts.take(pa.array(todo)))
            words = np.diff(tok.offsets).astype(np.float64)
            newlines = pc.count_substring(texts, "\n").to_numpy(zero_copy_only=False)[todo]
            with np.errstate(divide="ignore", invalid="ignore"):
                fails = np.where(words > 0, newlines / np.maximum(words, 1), np.inf) > \
                    self.new_line_ratio
            codes[todo[fails]] = 5
        return codes, None

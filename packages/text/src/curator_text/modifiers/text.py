"""Text modifiers with NeMo Curator's names and behaviour."""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from curator.stages.lifecycle import ensure_setup

from curator_text.filters.repetition import POLICY_SUBSTRINGS
from curator_text.modifiers.base import DocumentModifier

__all__ = ["UnicodeReformatter", "QuotationUnifier", "NewlineNormalizer", "UrlRemover",
           "LineRemover", "MarkdownRemover", "BoilerPlateStringModifier", "Slicer",
           "QuotationRemover", "FastTextLabelModifier"]

# Python's ``\s`` (str.isspace) spelled out for RE2, whose ``\s`` is ASCII-only
_NON_SPACE = ("[^\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f"
              "\u205f\u3000]")
_URL_CHAR = _NON_SPACE[:-1] + '<>"]'
URL_PATTERN = rf"(?i)https?://{_URL_CHAR}+|www\.{_URL_CHAR}+"
"""URLs as NeMo Curator's remover finds them (``https?://\\S+|www\\.\\S+``, any case),
except that a URL ends at ``<``, ``>`` or ``"`` (characters a URL cannot hold): ``<bad>`` or
``">`` right after a URL are text, not part of the URL."""
NEMO_URL_PATTERN = rf"(?i)https?://{_NON_SPACE}+|www\.{_NON_SPACE}+"
"""NeMo Curator's own remover pattern, up to the next whitespace whatever comes before it."""

# NeMo Curator's UnicodeReformatter defaults (they differ from ftfy's own defaults)
_NEMO_FTFY = {"unescape_html": "auto", "remove_terminal_escapes": True, "fix_encoding": True,
              "restore_byte_a0": True, "replace_lossy_sequences": True,
              "decode_inconsistent_utf8": True, "fix_c1_controls": True,
              "fix_latin_ligatures": False, "fix_character_width": False, "uncurl_quotes": False,
              "fix_line_breaks": False, "fix_surrogates": True, "remove_control_chars": True,
              "normalization": None, "max_decode_length": 1000000, "explain": True}


class UnicodeReformatter(DocumentModifier):
    """Fixes broken Unicode (mojibake, bad escapes) with ``ftfy.fix_text``.

    Parameters are ftfy's ``TextFixerConfig`` options with NeMo Curator's defaults (no
    ligature, width, quote or line-break fixes, no normalization); ``config`` gives a whole
    ``TextFixerConfig`` instead.
    """

    def __init__(self, config: Any = None, **ftfy_options: Any) -> None:
        unknown = set(ftfy_options) - set(_NEMO_FTFY)
        if unknown:
            raise TypeError(f"UnicodeReformatter: unknown ftfy option(s) {sorted(unknown)}; "
                            f"known: {sorted(_NEMO_FTFY)}")
        self._config = config
        self._options = {**_NEMO_FTFY, **ftfy_options}
        self._fix = None

    def setup(self) -> None:
        import ftfy

        config = self._config or ftfy.TextFixerConfig(**self._options)
        self._fix = lambda t: ftfy.fix_text(t, config=config)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_fix": None}

    def modify_document(self, text: str) -> str:
        ensure_setup(self)
        return self._fix(text)

    def modify_batch(self, texts: pa.Array) -> pa.Array:
        # plain printable ASCII without '&' (HTML entities) has nothing for ftfy to fix
        needs = pc.match_substring_regex(texts, r"[^\x20-\x25\x27-\x7e\n\t]")
        if not pc.any(needs).as_py():
            return texts
        values = texts.to_pylist()
        for i in pc.indices_nonzero(needs).to_pylist():
            values[i] = self.modify_document(values[i])
        return pa.array(values, pa.string())


class QuotationUnifier(DocumentModifier):
    """Replaces curly quotes with straight ones (‘’ → ', “” → ")."""

    vectorized = True

    def modify_document(self, text: str) -> str:
        return text.replace("‘", "'").replace("’", "'").replace("“", '"').replace("”", '"')

    def modify_batch(self, texts: pa.Array) -> pa.Array:
        texts = pc.replace_substring_regex(texts, "[‘’]", "'")
        return pc.replace_substring_regex(texts, "[“”]", '"')


class NewlineNormalizer(DocumentModifier):
    """Replaces three or more consecutive ``\\n`` by two, then three or more consecutive
    ``\\r\\n`` by two (as NeMo Curator: other ``\\r`` are kept)."""

    vectorized = True

    def modify_document(self, text: str) -> str:
        return re.sub(r"(\r\n){3,}", "\r\n\r\n", re.sub(r"\n{3,}", "\n\n", text))

    def modify_batch(self, texts: pa.Array) -> pa.Array:
        texts = pc.replace_substring_regex(texts, r"\n{3,}", "\n\n")
        return pc.replace_substring_regex(texts, r"(\r\n){3,}", "\r\n\r\n")


class UrlRemover(DocumentModifier):
    """Removes URLs (``http://``, ``https://`` and ``www.`` up to the next whitespace, ``<``,
    ``>`` or ``"``; any letter case). ``url_regex``: another pattern (RE2 syntax), e.g.
    :data:`NEMO_URL_PATTERN` for NeMo Curator's, which also removes ``<bad>`` after a URL."""

    vectorized = True

    def __init__(self, url_regex: str | None = None) -> None:
        self._pattern = url_regex or URL_PATTERN

    def modify_document(self, text: str) -> str:
        return self.modify_batch(pa.array([text], pa.string()))[0].as_py()

    def modify_batch(self, texts: pa.Array) -> pa.Array:
        return pc.replace_substring_regex(texts, self._pattern, "")


class LineRemover(DocumentModifier):
    """Removes the lines (split on ``\\n``) exactly equal to one of ``patterns`` (no
    stripping: ``"  x"`` is not ``"x"``)."""

    def __init__(self, patterns: list[str]) -> None:
        self._patterns = set(patterns)

    def modify_document(self, text: str) -> str:
        return "\n".join(x for x in text.split("\n") if x not in self._patterns)


class MarkdownRemover(DocumentModifier):
    """Removes Markdown bold (``**x**``), italic (``*x*``) and underline (``_x_``) marks and
    replaces links ``[text](url)`` by their url, line by line, as NeMo Curator does."""

    vectorized = True
    # applied in order; ``.`` never crosses a newline, so this is NeMo's line-by-line result
    _RULES = ((r"\*\*(.*?)\*\*", r"\1"), (r"\*(.*?)\*", r"\1"), (r"_(.*?)_", r"\1"),
              (r"\[.*?\]\((.*?)\)", r"\1"))

    def modify_document(self, text: str) -> str:
        return self.modify_batch(pa.array([text], pa.string()))[0].as_py()

    def modify_batch(self, texts: pa.Array) -> pa.Array:
        for pattern, repl in self._RULES:
            texts = pc.replace_substring_regex(texts, pattern, repl)
        return texts


class BoilerPlateStringModifier(DocumentModifier):
    """Removes boilerplate paragraphs (split on a blank line) that contain one of
    NeMo Curator's C4 ``policy_substrings`` (``POLICY_SUBSTRINGS``, shared with
    ``BoilerPlateStringFilter``).

    A paragraph with "lorem ipsum" empties the document. With ``remove_if_at_top_or_bottom``
    (default) the boilerplate paragraphs are removed only when they form one run at the top
    or bottom and are not all paragraphs (otherwise the text is kept); without it any
    boilerplate paragraph empties the document.
    """

    def __init__(self, remove_if_at_top_or_bottom: bool = True) -> None:
        self._top_bottom = remove_if_at_top_or_bottom

    def modify_document(self, text: str) -> str:
        paras = text.split("\n\n")
        bad: list[int] = []
        for i, p in enumerate(paras):
            low = p.strip().lower()
            if "lorem ipsum" in low:
                return ""
            if any(s in low for s in POLICY_SUBSTRINGS):
                if not self._top_bottom:
                    return ""
                bad.append(i)
        if not bad or not _top_or_bottom_run(bad, len(paras)):
            return text
        drop = set(bad)
        return "\n\n".join(p for i, p in enumerate(paras) if i not in drop)


def _top_or_bottom_run(indices: list[int], n: int) -> bool:
    """Whether sorted ``indices`` are one contiguous run touching the first or last of ``n``
    paragraphs, and not all of them."""
    if len(indices) == n:
        return False
    contiguous = all(b == a + 1 for a, b in zip(indices, indices[1:], strict=False))
    return contiguous and (indices[0] == 0 or indices[-1] == n - 1)


class QuotationRemover(DocumentModifier):
    """Removes the quotation marks around a whole document: when the text (longer than two
    characters once stripped) starts and ends with ``"`` and either has no newline or its first
    line does not end with ``"``."""

    def modify_document(self, text: str) -> str:
        if len(text.strip()) > 2 and text[0] == '"' and text[-1] == '"' and (
                "\n" not in text.strip() or text.split("\n")[0][-1] != '"'):
            return text[1:-1]
        return text


class FastTextLabelModifier(DocumentModifier):
    """Formats a document as a fastText training line: ``f"{label} {text}"`` with newlines
    replaced by spaces and ``__label__`` inside the text replaced by a space."""

    def __init__(self, label: str) -> None:
        self.label = label

    def modify_document(self, text: str) -> str:
        text = text.replace("\n", " ").replace("__label__", " ")
        return f"{self.label} {text}"


class Slicer(DocumentModifier):
    """Keeps the text between ``left`` and ``right`` (indices or substrings; the first match
    of a left substring, the last of a right one). ``include_left`` / ``include_right`` keep the
    substrings themselves; ``strip`` trims whitespace."""

    def __init__(self, left: int | str | None = 0, right: int | str | None = None,
                 include_left: bool = True, include_right: bool = True,
                 strip: bool = True) -> None:
        self._left, self._right = left, right
        self._inc_l, self._inc_r, self._strip = include_left, include_right, strip

    def modify_document(self, text: str) -> str:
        start, end = 0, len(text)
        if isinstance(self._left, int):
            start = self._left
        elif isinstance(self._left, str):
            i = text.find(self._left)
            if i < 0:
                return ""
            start = i if self._inc_l else i + len(self._left)
        if isinstance(self._right, int):
            end = self._right
        elif isinstance(self._right, str):
            j = text.rfind(self._right)
            if j < 0:
                return ""
            end = j + len(self._right) if self._inc_r else j
        out = text[start:end]
        return out.strip() if self._strip else out

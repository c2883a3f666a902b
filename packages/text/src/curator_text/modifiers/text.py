"""Text modifiers with NeMo Curator's names."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from curator_text.filters._vec import URL_REGEX
from curator_text.filters.repetition import BOILERPLATE_STRINGS
from curator_text.modifiers.base import DocumentModifier

__all__ = ["UnicodeReformatter", "QuotationUnifier", "NewlineNormalizer", "UrlRemover",
           "LineRemover", "MarkdownRemover", "BoilerPlateStringModifier", "Slicer"]


class UnicodeReformatter(DocumentModifier):
    """Fixes broken Unicode (mojibake, bad escapes) with ``ftfy.fix_text``; keyword arguments
    go to ftfy's ``TextFixerConfig``."""

    def __init__(self, **ftfy_config) -> None:
        self._config = ftfy_config
        self._fix = None

    def setup(self) -> None:
        import ftfy  # noqa: PLC0415

        config = ftfy.TextFixerConfig(**self._config)
        self._fix = lambda t: ftfy.fix_text(t, config=config)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_fix": None}

    def modify_document(self, text: str) -> str:
        if self._fix is None:
            self.setup()
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
    """Collapses runs of three or more newlines into a blank line."""

    vectorized = True

    def modify_document(self, text: str) -> str:
        return re.sub(r"(\r?\n){3,}", "\n\n", text)

    def modify_batch(self, texts: pa.Array) -> pa.Array:
        return pc.replace_substring_regex(texts, r"(\r?\n){3,}", "\n\n")


class UrlRemover(DocumentModifier):
    """Removes URLs."""

    vectorized = True

    def modify_document(self, text: str) -> str:
        return self.modify_batch(pa.array([text]))[0].as_py()

    def modify_batch(self, texts: pa.Array) -> pa.Array:
        return pc.replace_substring_regex(texts, URL_REGEX, "")


class LineRemover(DocumentModifier):
    """Removes lines equal (after stripping) to one of ``patterns``."""

    def __init__(self, patterns: list[str]) -> None:
        self._patterns = set(patterns)

    def modify_document(self, text: str) -> str:
        return "\n".join(x for x in text.split("\n") if x.strip() not in self._patterns)


class MarkdownRemover(DocumentModifier):
    """Removes Markdown formatting: bold, italic, underline, inline code and links (keeps the
    link text) and heading marks."""

    vectorized = True
    _RULES = ((r"\*\*([^*]+)\*\*", r"\1"), (r"__([^_]+)__", r"\1"), (r"\*([^*\n]+)\*", r"\1"),
              (r"_([^_\n]+)_", r"\1"), (r"`([^`]+)`", r"\1"), (r"\[([^\]]*)\]\([^)]*\)", r"\1"),
              (r"(?m)^#{1,6}[ \t]+", ""))

    def modify_document(self, text: str) -> str:
        return self.modify_batch(pa.array([text]))[0].as_py()

    def modify_batch(self, texts: pa.Array) -> pa.Array:
        for pattern, repl in self._RULES:
            texts = pc.replace_substring_regex(texts, pattern, repl)
        return texts


class BoilerPlateStringModifier(DocumentModifier):
    """Removes paragraphs containing boilerplate (privacy policy, terms of use, lorem ipsum,
    cookies); with ``remove_if_at_top_or_bottom`` only the first and last paragraphs."""

    def __init__(self, remove_if_at_top_or_bottom: bool = True) -> None:
        self._top_bottom = remove_if_at_top_or_bottom

    def modify_document(self, text: str) -> str:
        paras = text.split("\n\n")
        last = len(paras) - 1
        keep = []
        for i, p in enumerate(paras):
            bad = any(b in p.lower() for b in BOILERPLATE_STRINGS)
            if bad and (not self._top_bottom or i in (0, last)):
                continue
            keep.append(p)
        return "\n\n".join(keep)


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
            j = text.rfind(self._right, start)
            if j < 0:
                return ""
            end = j + len(self._right) if self._inc_r else j
        out = text[start:end]
        return out.strip() if self._strip else out

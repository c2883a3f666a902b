"""datatrove's URL filter with block lists the user supplies (in datatrove's block-list format:
one entry per line, lines starting with ``#`` ignored)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from curator.errors import ConfigError

from curator_text.filters.fineweb.base import DatatroveFilter

__all__ = ["URLFilter", "read_block_list"]

_NON_ALNUM = "[^a-zA-Z0-9]+"
_FILES = {"extra_domains": "domains", "extra_urls": "urls", "banned_words": "banned_words.txt",
          "banned_subwords": "banned_subwords.txt",
          "soft_banned_words": "soft_banned_words.txt"}
"""The file of each list in a block-list directory (datatrove's names)."""


def _normalize(text: str) -> str:
    import re

    return re.sub(_NON_ALNUM, "", text).lower()


def read_block_list(path: str) -> list[str]:
    """The entries of a block-list file: one per line, ``#`` lines ignored (fsspec paths)."""
    import fsspec

    with fsspec.open(path, "rt", encoding="utf-8") as f:
        return [line for line in f if line.strip() and not line.startswith("#")]


def _entries(items: Iterable[str] | None, normalize: bool) -> frozenset[str]:
    out = set()
    for x in items or ():
        if not x or x[0] == "#":
            continue
        value = _normalize(x) if normalize else x.strip()
        if value:
            out.add(value)
    return frozenset(out)


@cache
def _extractor():
    try:
        import tldextract
    except ImportError as e:  # pragma: no cover - tldextract comes with curator-web
        raise ImportError("URLFilter needs tldextract: pip install tldextract") from e
    # the public-suffix snapshot bundled with tldextract: nothing is fetched at run time
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


@dataclass
class URLFilter(DatatroveFilter):
    """Removes documents by their URL (column ``url_field``), checked in datatrove's order:
    ``domain`` (its registered domain is in ``extra_domains``), ``subdomain`` (its full host
    is), ``url`` (the URL is in ``extra_urls``), ``hard_blacklisted`` (a word of the URL,
    split on non-alphanumerics, is in ``banned_words``), ``soft_blacklisted`` (at least
    ``soft_word_threshold`` of ``soft_banned_words`` are) and ``blacklisted_subword`` (the URL
    lower-cased with non-alphanumerics removed contains one of ``banned_subwords``). A document
    without a URL is removed as ``no_url`` (datatrove stops the task).

    The lists are given as Python lists or read from ``block_list_dir``, a directory laid out
    like datatrove's (``domains``, ``urls``, ``banned_words.txt``, ``banned_subwords.txt``,
    ``soft_banned_words.txt``; missing files are empty lists). Curator ships no lists:
    datatrove's bundled ones (``use_integrated_lists=True``) can be pointed at with
    ``block_list_dir``."""

    soft_word_threshold: int = 2
    extra_domains: list[str] | None = None
    extra_urls: list[str] | None = None
    banned_words: list[str] | None = None
    banned_subwords: list[str] | None = None
    soft_banned_words: list[str] | None = None
    block_list_dir: str | None = None
    use_integrated_lists: bool = False
    url_field: str = "url"
    text_field: str = "text"
    split: bool = False
    name: str = ""

    reasons: ClassVar[tuple[str, ...]] = (
        "domain", "subdomain", "url", "hard_blacklisted", "soft_blacklisted",
        "blacklisted_subword", "no_url")

    def __post_init__(self) -> None:
        self._init_name()
        if self.use_integrated_lists:
            raise ConfigError(f"{self.name}: Curator does not ship datatrove's block lists; "
                              "set block_list_dir to a directory of lists in its format "
                              "(domains, urls, banned_words.txt, ...) and "
                              "use_integrated_lists=False")
        lists = {k: list(getattr(self, k) or ()) for k in _FILES}
        if self.block_list_dir:
            for key, fname in _FILES.items():
                path = os.path.join(self.block_list_dir, fname)
                if os.path.exists(path) or "://" in path:
                    try:
                        lists[key] += read_block_list(path)
                    except FileNotFoundError:
                        pass
        self._domains = _entries(lists["extra_domains"], False)
        self._urls = _entries(lists["extra_urls"], False)
        self._banned = _entries(lists["banned_words"], True)
        self._subwords = _entries(lists["banned_subwords"], True)
        self._soft = sorted(_entries(lists["soft_banned_words"], True))

    def inputs(self):
        return ["data"], [self.url_field]

    def column(self, table: pa.Table) -> pa.Array:
        if self.url_field not in table.column_names:
            raise KeyError(f"{self.name}: url_field {self.url_field!r} not in columns "
                           f"{table.column_names}")
        col = table[self.url_field].combine_chunks()
        return col if pa.types.is_string(col.type) else col.cast(pa.string())

    def decide(self, urls: pa.Array) -> tuple[np.ndarray, None]:
        n = len(urls)
        codes = np.zeros(n, np.int8)
        values = urls.to_pylist()
        missing = np.array([not u for u in values], bool)
        if self._domains:
            ext = _extractor()
            for i, url in enumerate(values):
                if not url:
                    continue
                info = ext(url)
                registered = f"{info.domain}.{info.suffix}" if info.domain and info.suffix \
                    else ""
                if registered in self._domains:
                    codes[i] = 1
                elif info.fqdn in self._domains:
                    codes[i] = 2
        urls = pc.fill_null(urls, "")
        if self._urls:
            hit = pc.is_in(urls, value_set=pa.array(sorted(self._urls))).to_numpy(
                zero_copy_only=False)
            codes[(codes == 0) & hit] = 3
        if self._banned or self._soft:
            words = pc.split_pattern_regex(urls, _NON_ALNUM)
            flat = pc.list_flatten(words)
            parents = pc.list_parent_indices(words).to_numpy(zero_copy_only=False)
            if self._banned:
                hit = pc.is_in(flat, value_set=pa.array(sorted(self._banned))).to_numpy(
                    zero_copy_only=False)
                hard = np.bincount(parents[hit], minlength=n) > 0
                codes[(codes == 0) & hard] = 4
            if self._soft:
                idx = pc.index_in(flat, value_set=pa.array(self._soft))
                valid = idx.is_valid().to_numpy(zero_copy_only=False)
                pairs = np.unique(parents[valid] * len(self._soft)
                                  + idx.drop_null().to_numpy(zero_copy_only=False))
                soft = np.bincount(pairs // len(self._soft), minlength=n)
                codes[(codes == 0) & (soft >= self.soft_word_threshold)] = 5
        if self._subwords:
            import re

            norm = pc.utf8_lower(pc.replace_substring_regex(urls, _NON_ALNUM, ""))
            pattern = "|".join(re.escape(w) for w in sorted(self._subwords))
            hit = pc.match_substring_regex(norm, pattern).to_numpy(zero_copy_only=False)
            codes[(codes == 0) & hit] = 6
        codes[missing] = 7
        return codes, None

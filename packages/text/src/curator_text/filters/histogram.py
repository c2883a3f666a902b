"""HistogramFilter: NLLB's cheap language check by character histograms (NeMo Curator's names
and file layout; histograms are read from a local directory and never downloaded)."""

from __future__ import annotations

import os

from curator_text.filters.base import DocumentFilter

__all__ = ["HistogramFilter", "HISTOGRAM_SUBDIR"]

HISTOGRAM_SUBDIR = os.path.join("histograms", "checkpoint", "edunov", "cc60_multilingual",
                                "clean_hists")
"""Where the per-language histogram files sit under ``cache_dir`` (the layout of fairseq's
``histograms.tar.gz`` extracted into ``cache_dir/histograms``)."""


class HistogramFilter(DocumentFilter):
    """Keeps documents where more than ``threshold`` of the characters are in the character
    histogram of ``lang`` (score 1 = keep, 0 = drop).

    Parameters:
        lang: the expected language; names the histogram file.
        threshold: the minimum share of characters found in the histogram.
        cache_dir: the directory holding ``histograms/checkpoint/edunov/cc60_multilingual/
            clean_hists/<lang>`` (download fairseq's ``histograms.tar.gz`` once and extract it
            into ``cache_dir/histograms``). Nothing is downloaded at run time.
        threshold_char: the line-initial character that ends the histogram's character list.
    """

    def __init__(self, lang: str = "en", threshold: float = 0.8, cache_dir: str = "",
                 threshold_char: str = "]") -> None:
        super().__init__()
        self._lang, self._threshold, self._threshold_char = lang, threshold, threshold_char
        self._path = os.path.join(cache_dir, HISTOGRAM_SUBDIR, lang)
        if not cache_dir or not os.path.isfile(self._path):
            raise FileNotFoundError(
                f"HistogramFilter: no histogram for lang {lang!r} at {self._path!r}; set cache_dir "
                "to a directory where fairseq's histograms.tar.gz "
                "(https://dl.fbaipublicfiles.com/m2m_100/histograms.tar.gz) is extracted into "
                "'histograms/' (it is never downloaded at run time)")
        self._chars = self._read()

    def _read(self) -> frozenset[str]:
        chars = []
        with open(self._path, encoding="utf-8") as f:
            for line in f:
                if line[0] == self._threshold_char:
                    break
                chars.append(line[0])
        return frozenset(chars)

    def score_document(self, text: str) -> int:
        if not text:
            return 0
        found = sum(c in self._chars for c in text.strip())
        return 1 if found / len(text) > self._threshold else 0

    def keep_document(self, score: int) -> bool:
        return score == 1

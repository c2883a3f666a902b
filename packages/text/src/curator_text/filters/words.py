"""Word segmentation by language, as NeMo Curator does it: Chinese (``zh``) with jieba, Japanese
(``ja``) with MeCab (the ``unidic-lite`` dictionary), every other language on whitespace
(``str.split``). jieba and MeCab are imported on first use."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import cache

__all__ = ["SEGMENTED_LANGS", "get_word_splitter", "split_words", "needs_segmenter"]

SEGMENTED_LANGS = frozenset({"zh", "ja"})
"""Languages whose words are found by a segmenter rather than by whitespace."""


def needs_segmenter(lang: str) -> bool:
    """True when ``lang`` (an ISO 639-1 code, any case) is segmented by jieba or MeCab."""
    return lang.lower() in SEGMENTED_LANGS


def _split_whitespace(text: str) -> list[str]:
    return text.split()


@cache
def _jieba():
    with warnings.catch_warnings():  # jieba 0.42 imports the deprecated pkg_resources
        warnings.filterwarnings("ignore", message="pkg_resources is deprecated")
        import jieba
    return jieba


def _split_zh(text: str) -> list[str]:
    return list(_jieba().cut(text))


@cache
def _mecab():
    import MeCab

    return MeCab.Tagger()


def _split_ja(text: str) -> list[str]:
    lines = _mecab().parse(text).strip().split("\n")
    return [line.split("\t")[0] for line in lines if line and line != "EOS"]


def get_word_splitter(lang: str) -> Callable[[str], list[str]]:
    """The function that splits a text of language ``lang`` into words (picklable)."""
    return {"zh": _split_zh, "ja": _split_ja}.get(lang.lower(), _split_whitespace)


def split_words(text: str, lang: str = "en") -> list[str]:
    """The words of ``text`` (stripped first, as NeMo Curator's filters do)."""
    return get_word_splitter(lang)(text.strip())

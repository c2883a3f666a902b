"""HTML -> text: charset decoding, language identification, stop lists and the three HTML
extraction algorithms NeMo Curator ships (jusText, Resiliparse, Trafilatura) with its defaults."""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from copy import deepcopy
from functools import lru_cache
from typing import Any

__all__ = ["HTMLExtractorAlgorithm", "JusTextExtractor", "ResiliparseExtractor",
           "TrafilaturaExtractor", "HTML_EXTRACTORS", "get_html_extractor", "decode_html",
           "lang_detect", "get_stop_list_dict", "NON_SPACED_LANGUAGES"]

log = logging.getLogger(__name__)

NON_SPACED_LANGUAGES = frozenset({"THAI", "CHINESE", "JAPANESE", "KOREAN"})
"""Languages written without spaces: stop-word density is not used for them."""

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.I)


def decode_html(content: bytes, declared: str | None = None) -> str | None:
    """Decode an HTML payload: UTF-8 first, then the charset the HTTP header or a ``<meta>``
    tag declares, then Resiliparse's charset detector. ``None`` when nothing decodes cleanly."""
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        pass
    candidates = []
    if declared:
        candidates.append(declared)
    m = _META_CHARSET.search(content[:4096])
    if m:
        candidates.append(m.group(1).decode("ascii", "ignore"))
    from resiliparse.parse.encoding import detect_encoding  # noqa: PLC0415

    candidates.append(detect_encoding(content))
    for enc in candidates:
        try:
            return content.decode(enc.strip().lower())
        except (LookupError, UnicodeDecodeError):
            continue
    return None


# ISO 639 code (Resiliparse's detector) -> NeMo Curator's language name (pycld2 style).
_NAMES = {
    "af": "Afrikaans", "sq": "Albanian", "ar": "Arabic", "an": "Aragonese", "hy": "Armenian",
    "ast": "Asturian", "az": "Azerbaijani", "eu": "Basque", "be": "Belarusian", "bn": "Bengali",
    "bs": "Bosnian", "br": "Breton", "bg": "Bulgarian", "ca": "Catalan", "ceb": "Cebuano",
    "cv": "Chuvash", "hr": "Croatian", "cs": "Czech", "da": "Danish", "nl": "Dutch",
    "en": "English", "eo": "Esperanto", "et": "Estonian", "fi": "Finnish", "fr": "French",
    "gl": "Galician", "ka": "Georgian", "de": "German", "el": "Greek", "gu": "Gujarati",
    "ht": "Haitian", "he": "Hebrew", "hi": "Hindi", "hu": "Hungarian", "is": "Icelandic",
    "io": "Ido", "ig": "Igbo", "id": "Indonesian", "ga": "Irish", "it": "Italian",
    "jv": "Javanese", "kn": "Kannada", "kk": "Kazakh", "ko": "Korean", "ku": "Kurdish",
    "ky": "Kyrgyz", "la": "Latin", "lv": "Latvian", "lt": "Lithuanian", "lb": "Luxembourgish",
    "mk": "Macedonian", "ms": "Malay", "ml": "Malayalam", "mt": "Maltese", "mr": "Marathi",
    "ne": "Nepali", "no": "Norwegian_Bokmal", "nb": "Norwegian_Bokmal",
    "nn": "Norwegian_Nynorsk", "oc": "Occitan", "fa": "Persian", "pl": "Polish",
    "pt": "Portuguese", "qu": "Quechua", "ro": "Romanian", "ru": "Russian", "sr": "Serbian",
    "sh": "Serbo_Croatian", "sk": "Slovak", "sl": "Slovenian", "es": "Spanish",
    "su": "Sundanese", "sw": "Swahili", "sv": "Swedish", "tl": "Tagalog", "ta": "Tamil",
    "te": "Telugu", "tr": "Turkish", "tk": "Turkmen", "uk": "Ukrainian", "ur": "Urdu",
    "uz": "Uzbek", "vi": "Vietnamese", "vo": "Volapuk", "wa": "Walloon", "war": "Waray_Waray",
    "cy": "Welsh", "fy": "West_Frisian", "yo": "Yoruba", "ja": "Japanese", "zh": "Chinese",
    "th": "Thai",
}
_SPECIAL = {"Norwegian_Bokmal": "NORWEGIAN", "Norwegian_Nynorsk": "NORWEGIAN_N",
            "Waray_Waray": "WARAY_PHILIPPINES"}


def _upper_name(justext_name: str) -> str:
    return _SPECIAL.get(justext_name, justext_name.upper())


_SCRIPTS = (("JAPANESE", re.compile(r"[\u3040-\u30ff]")), ("KOREAN", re.compile(r"[\uac00-\ud7af]")),
            ("THAI", re.compile(r"[\u0e00-\u0e7f]")), ("CHINESE", re.compile(r"[\u4e00-\u9fff]")))


def lang_detect(text: str) -> str:
    """The language of ``text`` as NeMo Curator names it (``"ENGLISH"``, ``"RUSSIAN"`` …), from
    Resiliparse's n-gram detector; scripts without spaces (kana, hangul, Thai, Han) are
    recognised by their characters. ``"UNKNOWN"`` when neither decides."""
    from resiliparse.parse.lang import detect_fast  # noqa: PLC0415

    sample = text[:20000]
    letters = sum(ch.isalpha() for ch in sample) or 1
    for name, pattern in _SCRIPTS:  # kana before Han: Japanese text also uses kanji
        if len(pattern.findall(sample)) / letters > (0.05 if name == "JAPANESE" else 0.3):
            return name
    code, _score = detect_fast(sample)
    name = _NAMES.get(code)
    return _upper_name(name) if name else "UNKNOWN"


# Short, common stop lists for the languages jusText has none for (particles and function words).
_EXTRA_STOP_LISTS = {
    "JAPANESE": "の に は を た が で て と し れ さ ある いる も する から な こと として い や れる "
                "など ない この ため その よう また もの という あり まで られ により より ず なり "
                "られる において ば なく しかし について できる それ ので なお のみ でき および "
                "いう さらに でも ら たり ます です ん これ ここ そして とき では ほど ところ",
    "CHINESE": "的 了 和 是 就 都 而 及 与 着 或 一个 没有 我们 你们 他们 它们 这个 那个 在 有 "
               "也 不 人 这 中 大 为 上 个 国 我 以 要 他 时 来 用 们 生 到 作 地 于 出 会",
    "THAI": "และ ที่ ของ ใน เป็น มี ได้ ไม่ ให้ การ ว่า จะ กับ แต่ ก็ นี้ จาก โดย ความ ไป มา อยู่",
}


@lru_cache(maxsize=1)
def _all_stop_lists() -> dict[str, frozenset[str]]:
    import justext  # noqa: PLC0415

    out = {_upper_name(lang): frozenset(justext.get_stoplist(lang))
           for lang in justext.get_stoplists()}
    out.update({k: frozenset(v.split()) for k, v in _EXTRA_STOP_LISTS.items()})
    return out


def get_stop_list_dict(languages: list[str] | None = None) -> dict[str, frozenset[str]]:
    """Language name (``"ENGLISH"`` …) -> stop words: jusText's lists plus Japanese, Chinese and
    Thai. ``languages`` keeps only those."""
    lists = _all_stop_lists()
    if languages is None:
        return dict(lists)
    return {k: lists[k] for k in (x.upper() for x in languages) if k in lists}


def _stopword_paragraphs(paragraphs: list[str], stop_words: frozenset[str], language: str,
                         density: float) -> list[str]:
    """Paragraphs whose share of stop words is at least ``density`` (all of them for languages
    without spaces)."""
    if language in NON_SPACED_LANGUAGES:
        return paragraphs
    kept = []
    for paragraph in paragraphs:
        words = paragraph.split()
        if words and sum(w in stop_words for w in words) / len(words) >= density:
            kept.append(paragraph)
    return kept


class HTMLExtractorAlgorithm(ABC):
    """Extracts the main text of an HTML page as a list of paragraphs."""

    NON_SPACED_LANGUAGES = NON_SPACED_LANGUAGES

    @abstractmethod
    def extract_text(self, html: str, stop_words: frozenset[str],
                     language: str) -> list[str] | None:
        """The page's paragraphs of main content, or ``None`` when there is none."""


class JusTextExtractor(HTMLExtractorAlgorithm):
    """jusText (paragraph classification by length, link density and stop-word density) with
    NeMo Curator's defaults. For languages without spaces the stop-word criteria are off."""

    def __init__(self, length_low: int = 70, length_high: int = 200,
                 stopwords_low: float = 0.30, stopwords_high: float = 0.32,
                 max_link_density: float = 0.2, max_heading_distance: int = 200,
                 no_headings: bool = False,
                 is_boilerplate: Callable[[Any], bool] | None = None) -> None:
        self.length_low, self.length_high = length_low, length_high
        self.stopwords_low, self.stopwords_high = stopwords_low, stopwords_high
        self.max_link_density = max_link_density
        self.max_heading_distance = max_heading_distance
        self.no_headings = no_headings
        self.is_boilerplate = is_boilerplate

    def extract_text(self, html: str, stop_words: frozenset[str],
                     language: str) -> list[str] | None:
        import justext  # noqa: PLC0415

        if not html.strip():
            return None
        spaced = language not in NON_SPACED_LANGUAGES
        paragraphs = justext.justext(
            html, stop_words, length_low=self.length_low, length_high=self.length_high,
            stopwords_low=self.stopwords_low if spaced else 0.0,
            stopwords_high=self.stopwords_high if spaced else 0.0,
            max_link_density=self.max_link_density,
            max_heading_distance=self.max_heading_distance, no_headings=self.no_headings)
        boiler = self.is_boilerplate or (lambda p: p.is_boilerplate)
        kept = [p.text for p in paragraphs if not boiler(p)]
        return kept or None


class ResiliparseExtractor(HTMLExtractorAlgorithm):
    """Resiliparse's main-content extraction, then NeMo Curator's stop-word density filter on
    each paragraph (``required_stopword_density``)."""

    def __init__(self, required_stopword_density: float = 0.32, main_content: bool = True,
                 alt_texts: bool = False) -> None:
        self.required_stopword_density = required_stopword_density
        self.main_content = main_content
        self.alt_texts = alt_texts

    def extract_text(self, html: str, stop_words: frozenset[str],
                     language: str) -> list[str] | None:
        from resiliparse.extract.html2text import extract_plain_text  # noqa: PLC0415

        text = extract_plain_text(html, main_content=self.main_content, alt_texts=self.alt_texts)
        paragraphs = [p for p in text.split("\n") if p.strip()]
        kept = _stopword_paragraphs(paragraphs, stop_words, language,
                                    self.required_stopword_density)
        return kept or None


class TrafilaturaExtractor(HTMLExtractorAlgorithm):
    """Trafilatura with NeMo Curator's settings (``deduplicate=True``, its size limits) and
    the same stop-word density filter; ``extract_kwargs`` go to ``trafilatura.extract``."""

    def __init__(self, required_stopword_density: float = 0.32, min_extracted_size: int = 250,
                 min_extracted_comm_size: int = 1, min_output_size: int = 1,
                 min_output_comm_size: int = 1, max_tree_size: int | None = None,
                 min_duplcheck_size: int = 100, max_repetitions: int = 2,
                 **extract_kwargs: Any) -> None:
        self.required_stopword_density = required_stopword_density
        self.settings = {"MIN_EXTRACTED_SIZE": min_extracted_size,
                         "MIN_EXTRACTED_COMM_SIZE": min_extracted_comm_size,
                         "MIN_OUTPUT_SIZE": min_output_size,
                         "MIN_OUTPUT_COMM_SIZE": min_output_comm_size,
                         "MIN_DUPLCHECK_SIZE": min_duplcheck_size,
                         "MAX_REPETITIONS": max_repetitions}
        if max_tree_size:
            self.settings["MAX_TREE_SIZE"] = max_tree_size
        self.extract_kwargs = {"deduplicate": True, **extract_kwargs}
        self._config = None

    def extract_text(self, html: str, stop_words: frozenset[str],
                     language: str) -> list[str] | None:
        import trafilatura  # noqa: PLC0415

        if self._config is None:
            from trafilatura.settings import DEFAULT_CONFIG  # noqa: PLC0415

            self._config = deepcopy(DEFAULT_CONFIG)
            for key, value in self.settings.items():
                self._config["DEFAULT"][key] = str(value)
        text = trafilatura.extract(html, config=self._config, **self.extract_kwargs)
        if text is None:
            return None
        paragraphs = [p for p in text.split("\n") if p.strip()]
        kept = _stopword_paragraphs(paragraphs, stop_words, language,
                                    self.required_stopword_density)
        return kept or None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_config": None}


HTML_EXTRACTORS: dict[str, type[HTMLExtractorAlgorithm]] = {
    "justext": JusTextExtractor, "resiliparse": ResiliparseExtractor,
    "trafilatura": TrafilaturaExtractor}
"""The HTML extraction algorithms selectable by name."""


def get_html_extractor(algorithm: HTMLExtractorAlgorithm | str | None = None,
                       algorithm_kwargs: dict[str, Any] | None = None,
                       where: str = "html_extraction") -> HTMLExtractorAlgorithm:
    """An extraction algorithm from a name (``"justext"`` — the default —, ``"resiliparse"``,
    ``"trafilatura"``) or an instance; ``algorithm_kwargs`` configure a named one."""
    if algorithm is None:
        algorithm = "justext"
    if isinstance(algorithm, HTMLExtractorAlgorithm):
        if algorithm_kwargs:
            log.warning("%s: algorithm kwargs are ignored when an instance is given", where)
        return algorithm
    if isinstance(algorithm, str) and algorithm.lower() in HTML_EXTRACTORS:
        try:
            return HTML_EXTRACTORS[algorithm.lower()](**(algorithm_kwargs or {}))
        except TypeError as exc:
            from curator.errors import ConfigError  # noqa: PLC0415

            raise ConfigError(f"{where}_kwargs for {algorithm!r}: {exc}") from exc
    from curator.errors import ConfigError  # noqa: PLC0415

    raise ConfigError(f"{where}={algorithm!r} is not an HTML extractor: use one of "
                      f"{sorted(HTML_EXTRACTORS)} or an HTMLExtractorAlgorithm instance")

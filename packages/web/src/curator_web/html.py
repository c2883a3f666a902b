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

from curator.params import init_signature, typed_new

__all__ = ["HTMLExtractorAlgorithm", "JusTextExtractor", "ResiliparseExtractor",
           "TrafilaturaExtractor", "HTML_EXTRACTORS", "get_html_extractor", "decode_html",
           "lang_detect", "get_stop_list_dict", "NON_SPACED_LANGUAGES",
           "visible_text_prefix", "PREFIX_CHARS"]

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
    from resiliparse.parse.encoding import detect_encoding

    candidates.append(detect_encoding(content))
    for enc in candidates:
        try:
            return content.decode(enc.strip().lower())
        except (LookupError, UnicodeDecodeError):
            continue
    return None


_BODY = re.compile(r"<body[\s>]", re.I)
# text after a tag, long enough to be prose; the tag tells script and style content apart
_LONG_RUN = re.compile(r"<(/?[A-Za-z][\w-]*)[^>]*>([^<]{40,})")
_HIDDEN_TAGS = frozenset({"script", "style", "noscript", "template", "textarea", "svg", "title"})
_SHORT_RUN = re.compile(r">\s*([^<\s][^<]*)")
_SPACE = re.compile(r"\s+")
_CODE = re.compile(r"[{}();=<>\[\]|\\\"]")  # script, style and JSON text is dense in these
_WINDOW = 1 << 16
PREFIX_CHARS = 4000
"""How many characters of a page's visible text language detection before extraction reads."""


def visible_text_prefix(html: str, limit: int = PREFIX_CHARS) -> str:
    """The first ``limit`` characters of the page's visible prose: text runs between tags from
    ``<body>`` on, leaving out short runs (navigation) and code (scripts, styles, JSON). The
    page is scanned in windows only until ``limit`` characters are found, so the cost is
    bounded by where the prose starts, not by a parse of the page."""
    from html import unescape

    m = _BODY.search(html)
    start = pos = m.start() if m else 0
    prose: list[str] = []
    found = 0
    while pos < len(html) and found < limit:
        for tag, run in _LONG_RUN.findall(html, pos, pos + _WINDOW):
            if tag.lower() in _HIDDEN_TAGS:
                continue
            run = _SPACE.sub(" ", unescape(run) if "&" in run else run).strip()
            if len(run) >= 40 and len(_CODE.findall(run)) <= len(run) // 50:
                prose.append(run)
                found += len(run) + 1
        pos += _WINDOW
    if found < 200:  # a page of short runs only (lists, tables): take them as they come
        prose += [_SPACE.sub(" ", unescape(r)).strip()
                  for r in _SHORT_RUN.findall(html, start, start + 4 * _WINDOW)
                  if len(_CODE.findall(r)) <= len(r) // 50][:400]
    return " ".join(prose)[:limit]


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


_SCRIPTS = (("JAPANESE", re.compile(r"[\u3040-\u30ff]+")),
            ("KOREAN", re.compile(r"[\uac00-\ud7af]+")),
            ("THAI", re.compile(r"[\u0e00-\u0e7f]+")), ("CHINESE", re.compile(r"[\u4e00-\u9fff]+")))
_LETTERS = re.compile(r"[^\W\d_]+")
_NO_SPACES_ANY = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")


def lang_detect(text: str) -> str:
    """The language of ``text`` as NeMo Curator names it (``"ENGLISH"``, ``"RUSSIAN"`` …), from
    Resiliparse's n-gram detector; scripts without spaces (kana, hangul, Thai, Han) are
    recognised by their characters. ``"UNKNOWN"`` when neither decides."""
    from resiliparse.parse.lang import detect_fast

    sample = text[:20000]
    if not sample.isascii() and _NO_SPACES_ANY.search(sample):
        letters = sum(map(len, _LETTERS.findall(sample))) or 1
        for name, pattern in _SCRIPTS:  # kana before Han: Japanese text also uses kanji
            share = sum(map(len, pattern.findall(sample))) / letters
            if share > (0.05 if name == "JAPANESE" else 0.3):
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
    import justext

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
    """Extracts the main text of an HTML page as a list of paragraphs.

    ``nemo_compat=True`` keeps NeMo Curator's post-processing (a per-paragraph stop-word
    density filter, and for Trafilatura its settings and cross-document dedup cache); the
    default is the wrapped library's own behaviour, which keeps more of the article text and
    is deterministic."""

    __new__, __signature__ = typed_new, init_signature  # types checked as in specs

    NON_SPACED_LANGUAGES = NON_SPACED_LANGUAGES
    nemo_compat: bool = False

    def needs_stop_words(self) -> bool:
        """Whether :meth:`extract_text` uses the page's stop list (the language must then be
        known before extraction)."""
        return True

    @abstractmethod
    def extract_text(self, html: str, stop_words: frozenset[str] | None,
                     language: str | None) -> list[str] | None:
        """The page's paragraphs of main content, or ``None`` when there is none."""


class JusTextExtractor(HTMLExtractorAlgorithm):
    """jusText (paragraph classification by length, link density and stop-word density) with
    its own defaults, which are NeMo Curator's. For languages without spaces the stop-word
    criteria are off. ``nemo_compat`` changes nothing here (kept for a uniform signature)."""

    def __init__(self, length_low: int = 70, length_high: int = 200,
                 stopwords_low: float = 0.30, stopwords_high: float = 0.32,
                 max_link_density: float = 0.2, max_heading_distance: int = 200,
                 no_headings: bool = False,
                 is_boilerplate: Callable[[Any], bool] | None = None,
                 nemo_compat: bool = False) -> None:
        self.length_low, self.length_high = length_low, length_high
        self.stopwords_low, self.stopwords_high = stopwords_low, stopwords_high
        self.max_link_density = max_link_density
        self.max_heading_distance = max_heading_distance
        self.no_headings = no_headings
        self.is_boilerplate = is_boilerplate
        self.nemo_compat = nemo_compat

    def extract_text(self, html: str, stop_words: frozenset[str] | None,
                     language: str | None) -> list[str] | None:
        import justext

        if not html.strip():
            return None
        spaced = language not in NON_SPACED_LANGUAGES
        paragraphs = justext.justext(
            html, stop_words or frozenset(), length_low=self.length_low,
            length_high=self.length_high,
            stopwords_low=self.stopwords_low if spaced else 0.0,
            stopwords_high=self.stopwords_high if spaced else 0.0,
            max_link_density=self.max_link_density,
            max_heading_distance=self.max_heading_distance, no_headings=self.no_headings)
        boiler = self.is_boilerplate or (lambda p: p.is_boilerplate)
        kept = [p.text for p in paragraphs if not boiler(p)]
        return kept or None


_NEMO_DENSITY = 0.32


class _StopwordFiltered(HTMLExtractorAlgorithm):
    """An extractor whose output NeMo filters by per-paragraph stop-word density."""

    required_stopword_density: float | None = None

    def needs_stop_words(self) -> bool:
        return self.required_stopword_density is not None

    def _filter(self, paragraphs: list[str], stop_words: frozenset[str] | None,
                language: str | None) -> list[str] | None:
        if self.required_stopword_density is not None and stop_words is not None:
            paragraphs = _stopword_paragraphs(paragraphs, stop_words, language or "",
                                              self.required_stopword_density)
        return paragraphs or None


class ResiliparseExtractor(_StopwordFiltered):
    """Resiliparse's main-content extraction (``extract_plain_text(main_content=True)``), as
    the library returns it. ``nemo_compat=True`` (or a ``required_stopword_density``) adds
    NeMo Curator's stop-word density filter on each paragraph (default density 0.32)."""

    def __init__(self, required_stopword_density: float | None = None,
                 main_content: bool = True, alt_texts: bool = False,
                 nemo_compat: bool = False) -> None:
        if required_stopword_density is None and nemo_compat:
            required_stopword_density = _NEMO_DENSITY
        self.required_stopword_density = required_stopword_density
        self.main_content = main_content
        self.alt_texts = alt_texts
        self.nemo_compat = nemo_compat

    def extract_text(self, html: str, stop_words: frozenset[str] | None,
                     language: str | None) -> list[str] | None:
        from resiliparse.extract.html2text import extract_plain_text

        text = extract_plain_text(html, main_content=self.main_content, alt_texts=self.alt_texts)
        return self._filter([p for p in text.split("\n") if p.strip()], stop_words, language)


# NeMo Curator's Trafilatura settings (nemo_compat=True); the default is Trafilatura's own.
_NEMO_TRAFILATURA = {"min_extracted_size": 250, "min_extracted_comm_size": 1,
                     "min_output_size": 1, "min_output_comm_size": 1, "max_tree_size": None,
                     "min_duplcheck_size": 100, "max_repetitions": 2}


class TrafilaturaExtractor(_StopwordFiltered):
    """Trafilatura with its own defaults and without its process-wide dedup cache
    (``deduplicate=False``: a page's text does not depend on the pages a worker saw before).
    ``nemo_compat=True`` uses NeMo Curator's settings (``deduplicate=True``, its size limits)
    and its stop-word density filter; explicit arguments override either;
    ``extract_kwargs`` go to ``trafilatura.extract``."""

    def __init__(self, required_stopword_density: float | None = None,
                 min_extracted_size: int | None = None,
                 min_extracted_comm_size: int | None = None, min_output_size: int | None = None,
                 min_output_comm_size: int | None = None, max_tree_size: int | None = None,
                 min_duplcheck_size: int | None = None, max_repetitions: int | None = None,
                 nemo_compat: bool = False, **extract_kwargs: Any) -> None:
        if required_stopword_density is None and nemo_compat:
            required_stopword_density = _NEMO_DENSITY
        self.required_stopword_density = required_stopword_density
        self.nemo_compat = nemo_compat
        given = {"min_extracted_size": min_extracted_size,
                 "min_extracted_comm_size": min_extracted_comm_size,
                 "min_output_size": min_output_size, "min_output_comm_size": min_output_comm_size,
                 "max_tree_size": max_tree_size, "min_duplcheck_size": min_duplcheck_size,
                 "max_repetitions": max_repetitions}
        base = _NEMO_TRAFILATURA if nemo_compat else {}
        merged = {k: v if v is not None else base.get(k) for k, v in given.items()}
        self.settings = {k.upper(): v for k, v in merged.items() if v is not None}
        self.extract_kwargs = {"deduplicate": nemo_compat, **extract_kwargs}
        self._config = None

    def extract_text(self, html: str, stop_words: frozenset[str] | None,
                     language: str | None) -> list[str] | None:
        import trafilatura

        if self._config is None:
            from trafilatura.settings import DEFAULT_CONFIG

            self._config = deepcopy(DEFAULT_CONFIG)
            for key, value in self.settings.items():
                self._config["DEFAULT"][key] = str(value)
        text = trafilatura.extract(html, config=self._config, **self.extract_kwargs)
        if text is None:
            return None
        return self._filter([p for p in text.split("\n") if p.strip()], stop_words, language)

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
            from curator.errors import ConfigError

            raise ConfigError(f"{where}_kwargs for {algorithm!r}: {exc}") from exc
    from curator.errors import ConfigError

    raise ConfigError(f"{where}={algorithm!r} is not an HTML extractor: use one of "
                      f"{sorted(HTML_EXTRACTORS)} or an HTMLExtractorAlgorithm instance")

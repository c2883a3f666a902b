"""Document filters and the stages that apply them.

Names are imported on first use (:func:`curator._lazy.lazy_exports`): a pipeline that uses
``WordCountFilter`` loads the heuristic filters, not the FineWeb word lists, fastText or the
tokenizer filters."""

from __future__ import annotations

from typing import Any

from curator._lazy import lazy_exports

_BASE = "curator_text.filters.base"
_CODE = "curator_text.filters.code"
_HEURISTIC = "curator_text.filters.heuristic"
_REPETITION = "curator_text.filters.repetition"
_FINEWEB = "curator_text.filters.fineweb"

_EXPORTS = {
    **dict.fromkeys(["DocumentFilter", "Filter", "FunctionFilter", "Score", "ScoreFilter"], _BASE),
    "ScoreBucketer": "curator_text.filters.bucket",
    **dict.fromkeys(["AlphaFilter", "GeneralCommentToCodeFilter", "HTMLBoilerplateFilter",
                     "NumberOfLinesOfCodeFilter", "PerExtensionFilter",
                     "PythonCommentToCodeFilter", "TokenizerFertilityFilter", "XMLHeaderFilter"],
                    _CODE),
    **dict.fromkeys(["FastTextLangId", "FastTextQualityFilter"], "curator_text.filters.fasttext"),
    **dict.fromkeys(["FINEWEB_FILTERS", "C4QualityFilter", "FineWebQualityFilter",
                     "GopherQualityFilter", "GopherRepetitionFilter", "URLFilter"], _FINEWEB),
    **dict.fromkeys(["BulletsFilter", "CommonEnglishWordsFilter", "EllipsisFilter",
                     "IncompleteStoryFilter", "LongWordFilter", "MeanWordLengthFilter",
                     "NonAlphaNumericFilter", "NumbersFilter", "ParenthesesFilter",
                     "PornographicUrlsFilter", "PunctuationFilter", "SubstringFilter",
                     "SymbolsToWordsFilter", "UrlsFilter", "WhiteSpaceFilter", "WordCountFilter",
                     "WordsWithoutAlphabetsFilter"], _HEURISTIC),
    "HistogramFilter": "curator_text.filters.histogram",
    **dict.fromkeys(["BoilerPlateStringFilter", "RepeatedLinesByCharFilter",
                     "RepeatedLinesFilter", "RepeatedParagraphsByCharFilter",
                     "RepeatedParagraphsFilter", "RepeatingDuplicateNGramsFilter",
                     "RepeatingTopNGramsFilter"], _REPETITION),
    "TokenCountFilter": "curator_text.filters.token",
    "get_word_splitter": "curator_text.filters.words",
}

_HEURISTIC_NAMES = [
    "WordCountFilter", "NonAlphaNumericFilter", "SymbolsToWordsFilter", "NumbersFilter",
    "UrlsFilter", "BulletsFilter", "WhiteSpaceFilter", "ParenthesesFilter", "LongWordFilter",
    "BoilerPlateStringFilter", "MeanWordLengthFilter", "PunctuationFilter", "EllipsisFilter",
    "CommonEnglishWordsFilter", "WordsWithoutAlphabetsFilter", "PornographicUrlsFilter",
    "SubstringFilter", "RepeatedLinesFilter", "RepeatedParagraphsFilter",
    "RepeatedLinesByCharFilter", "RepeatedParagraphsByCharFilter", "RepeatingTopNGramsFilter",
    "RepeatingDuplicateNGramsFilter", "IncompleteStoryFilter", "PythonCommentToCodeFilter",
    "GeneralCommentToCodeFilter", "NumberOfLinesOfCodeFilter", "XMLHeaderFilter", "AlphaFilter",
    "HTMLBoilerplateFilter", "PerExtensionFilter"]
_MODEL_NAMES = ["FastTextQualityFilter", "FastTextLangId", "HistogramFilter", "TokenCountFilter",
                "TokenizerFertilityFilter"]
#: the class lists, built on first use: ``HEURISTIC_FILTERS`` (every heuristic document filter
#: class, used by the plugin and ``curator analyze``) and ``MODEL_FILTERS`` (filters that need a
#: local model, tokenizer or histogram file)
_LISTS = {"HEURISTIC_FILTERS": _HEURISTIC_NAMES, "MODEL_FILTERS": _MODEL_NAMES}

__all__ = ["DocumentFilter", "FunctionFilter", "ScoreFilter", "Score", "Filter", "ScoreBucketer",
           "HEURISTIC_FILTERS", "MODEL_FILTERS", "FINEWEB_FILTERS", "get_word_splitter",
           "URLFilter", "GopherRepetitionFilter", "GopherQualityFilter", "C4QualityFilter",
           "FineWebQualityFilter", *_HEURISTIC_NAMES, *_MODEL_NAMES]

_getattr, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


def __getattr__(name: str) -> Any:
    names = _LISTS.get(name)
    if names is None:
        return _getattr(name)
    value = [globals()[n] if n in globals() else _getattr(n) for n in names]
    globals()[name] = value
    return value

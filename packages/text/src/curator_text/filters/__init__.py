"""Document filters and the stages that apply them."""

from curator_text.filters.base import DocumentFilter, Filter, FunctionFilter, Score, ScoreFilter
from curator_text.filters.bucket import ScoreBucketer
from curator_text.filters.code import (
    AlphaFilter,
    GeneralCommentToCodeFilter,
    HTMLBoilerplateFilter,
    NumberOfLinesOfCodeFilter,
    PerExtensionFilter,
    PythonCommentToCodeFilter,
    TokenizerFertilityFilter,
    XMLHeaderFilter,
)
from curator_text.filters.fasttext import FastTextLangId, FastTextQualityFilter
from curator_text.filters.fineweb import (
    FINEWEB_FILTERS,
    C4QualityFilter,
    FineWebQualityFilter,
    GopherQualityFilter,
    GopherRepetitionFilter,
    URLFilter,
)
from curator_text.filters.heuristic import (
    BulletsFilter,
    CommonEnglishWordsFilter,
    EllipsisFilter,
    IncompleteStoryFilter,
    LongWordFilter,
    MeanWordLengthFilter,
    NonAlphaNumericFilter,
    NumbersFilter,
    ParenthesesFilter,
    PornographicUrlsFilter,
    PunctuationFilter,
    SubstringFilter,
    SymbolsToWordsFilter,
    UrlsFilter,
    WhiteSpaceFilter,
    WordCountFilter,
    WordsWithoutAlphabetsFilter,
)
from curator_text.filters.histogram import HistogramFilter
from curator_text.filters.repetition import (
    BoilerPlateStringFilter,
    RepeatedLinesByCharFilter,
    RepeatedLinesFilter,
    RepeatedParagraphsByCharFilter,
    RepeatedParagraphsFilter,
    RepeatingDuplicateNGramsFilter,
    RepeatingTopNGramsFilter,
)
from curator_text.filters.token import TokenCountFilter
from curator_text.filters.words import get_word_splitter

HEURISTIC_FILTERS = [
    WordCountFilter, NonAlphaNumericFilter, SymbolsToWordsFilter, NumbersFilter, UrlsFilter,
    BulletsFilter, WhiteSpaceFilter, ParenthesesFilter, LongWordFilter, BoilerPlateStringFilter,
    MeanWordLengthFilter, PunctuationFilter, EllipsisFilter, CommonEnglishWordsFilter,
    WordsWithoutAlphabetsFilter, PornographicUrlsFilter, SubstringFilter, RepeatedLinesFilter,
    RepeatedParagraphsFilter, RepeatedLinesByCharFilter, RepeatedParagraphsByCharFilter,
    RepeatingTopNGramsFilter, RepeatingDuplicateNGramsFilter, IncompleteStoryFilter,
    PythonCommentToCodeFilter, GeneralCommentToCodeFilter, NumberOfLinesOfCodeFilter,
    XMLHeaderFilter, AlphaFilter, HTMLBoilerplateFilter, PerExtensionFilter,
]
"""Every heuristic document filter class (used by the plugin and ``curator analyze``)."""

MODEL_FILTERS = [FastTextQualityFilter, FastTextLangId, HistogramFilter, TokenCountFilter,
                 TokenizerFertilityFilter]
"""Filters that need a local model, tokenizer or histogram file."""

__all__ = ["DocumentFilter", "FunctionFilter", "ScoreFilter", "Score", "Filter", "ScoreBucketer",
           "HEURISTIC_FILTERS", "MODEL_FILTERS", "FINEWEB_FILTERS", "get_word_splitter",
           "URLFilter", "GopherRepetitionFilter", "GopherQualityFilter", "C4QualityFilter",
           "FineWebQualityFilter", *[c.__name__ for c in HEURISTIC_FILTERS + MODEL_FILTERS]]

"""Document filters and the stages that apply them."""

from curator_text.filters.base import DocumentFilter, Filter, Score, ScoreFilter
from curator_text.filters.bucket import ScoreBucketer
from curator_text.filters.code import (
    AlphaFilter,
    GeneralCommentToCodeFilter,
    HTMLBoilerplateFilter,
    NumberOfLinesOfCodeFilter,
    PerExtensionFilter,
    PythonCommentToCodeFilter,
    XMLHeaderFilter,
)
from curator_text.filters.fasttext import FastTextLangId, FastTextQualityFilter
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
from curator_text.filters.repetition import (
    BoilerPlateStringFilter,
    RepeatedLinesByCharFilter,
    RepeatedLinesFilter,
    RepeatedParagraphsByCharFilter,
    RepeatedParagraphsFilter,
    RepeatingDuplicateNGramsFilter,
    RepeatingTopNGramsFilter,
)

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
"""Every document filter class (used by the plugin and ``curator analyze``)."""

__all__ = ["DocumentFilter", "ScoreFilter", "Score", "Filter", "ScoreBucketer",
           "FastTextQualityFilter", "FastTextLangId", "HEURISTIC_FILTERS",
           *[c.__name__ for c in HEURISTIC_FILTERS]]

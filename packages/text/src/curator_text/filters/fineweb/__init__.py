"""datatrove's FineWeb filters (URL, Gopher repetition, Gopher quality, C4 quality, FineWeb
quality) with its parameters, defaults, decisions and reason names."""

from curator_text.filters.fineweb.base import REASONS_COUNTER, DatatroveFilter
from curator_text.filters.fineweb.quality import (
    C4QualityFilter,
    FineWebQualityFilter,
    GopherQualityFilter,
    GopherRepetitionFilter,
)
from curator_text.filters.fineweb.url import URLFilter, read_block_list

FINEWEB_FILTERS = [URLFilter, GopherRepetitionFilter, GopherQualityFilter, C4QualityFilter,
                   FineWebQualityFilter]
"""The FineWeb filter stages (registered by the text plugin)."""

__all__ = ["DatatroveFilter", "REASONS_COUNTER", "URLFilter", "GopherRepetitionFilter",
           "GopherQualityFilter", "C4QualityFilter", "FineWebQualityFilter", "FINEWEB_FILTERS",
           "read_block_list"]

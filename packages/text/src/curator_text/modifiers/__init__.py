"""Text modifiers and the Modify stage."""

from curator_text.modifiers.base import DocumentModifier, Modify
from curator_text.modifiers.text import (
    BoilerPlateStringModifier,
    FastTextLabelModifier,
    LineRemover,
    MarkdownRemover,
    NewlineNormalizer,
    QuotationRemover,
    QuotationUnifier,
    Slicer,
    UnicodeReformatter,
    UrlRemover,
)

MODIFIERS = [UnicodeReformatter, QuotationUnifier, NewlineNormalizer, UrlRemover, LineRemover,
             MarkdownRemover, BoilerPlateStringModifier, Slicer, QuotationRemover,
             FastTextLabelModifier]

__all__ = ["DocumentModifier", "Modify", "MODIFIERS", *[c.__name__ for c in MODIFIERS]]

"""Text modifiers and the Modify stage (imported on first use)."""

from __future__ import annotations

from typing import Any

from curator._lazy import lazy_exports

_MODIFIER_NAMES = ["UnicodeReformatter", "QuotationUnifier", "NewlineNormalizer", "UrlRemover",
                   "LineRemover", "MarkdownRemover", "BoilerPlateStringModifier", "Slicer",
                   "QuotationRemover", "FastTextLabelModifier"]

_EXPORTS = {"DocumentModifier": "curator_text.modifiers.base",
            "Modify": "curator_text.modifiers.base",
            **dict.fromkeys(_MODIFIER_NAMES, "curator_text.modifiers.text")}

#: ``MODIFIERS`` (built on first use): every modifier class the plugin registers
__all__ = ["DocumentModifier", "Modify", "MODIFIERS", *_MODIFIER_NAMES]

_getattr, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


def __getattr__(name: str) -> Any:
    if name != "MODIFIERS":
        return _getattr(name)
    value = [globals()[n] if n in globals() else _getattr(n) for n in _MODIFIER_NAMES]
    globals()[name] = value
    return value

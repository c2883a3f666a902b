"""Forward text normalisation for WER: numbers written as words (num2words), so "3 cats" and
"three cats" score alike."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["numbers_to_words"]

_NUMBER = re.compile(
    r"(?P<cur>[$€£])?(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?P<dec>\.\d+)?"
    r"(?P<ord>st|nd|rd|th)?(?P<pct>%)?(?![\w])")
_CURRENCY = {"$": "dollars", "€": "euros", "£": "pounds"}


@lru_cache(maxsize=16)
def _lang_ok(lang: str) -> bool:
    from num2words import num2words

    try:
        num2words(1, lang=lang)
    except NotImplementedError:
        return False
    return True


def numbers_to_words(text: str, lang: str = "en") -> str:
    """``text`` with each number spelt out by num2words in ``lang``: cardinals (``1,234``),
    decimals (``3.5``), English ordinals (``21st``), percentages (``50%``) and amounts in
    dollars, euros or pounds (``$5``). Hyphens between number words become spaces. A language
    num2words does not know leaves the text unchanged."""
    from num2words import num2words

    if not _lang_ok(lang):
        return text

    def spell(m: re.Match[str]) -> str:
        digits = m["num"].replace(",", "")
        value = f"{digits}{m['dec'] or ''}"
        if m["ord"] and not m["dec"]:
            words = num2words(int(digits), lang=lang, to="ordinal")
        else:
            words = num2words(float(value) if m["dec"] else int(digits), lang=lang)
        if m["pct"]:
            words += " percent"
        if m["cur"]:
            words += f" {_CURRENCY[m['cur']]}"
        return words.replace("-", " ").replace(",", "")

    return _NUMBER.sub(spell, text)

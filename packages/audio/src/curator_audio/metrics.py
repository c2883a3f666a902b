"""Word and character error rates (edit distance) with text normalisation."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = ["normalize_text", "edit_distance", "word_error_rate", "char_error_rate"]

_PUNCT = re.compile(r"[^\w\s']|(?<!\w)'|'(?!\w)")


def normalize_text(text: str, *, lowercase: bool = True, remove_punctuation: bool = True,
                   collapse_whitespace: bool = True) -> str:
    """Lower-case, strip punctuation (keeping in-word apostrophes: ``don't``) and collapse runs
    of whitespace, each optional."""
    text = unicodedata.normalize("NFC", text)
    if lowercase:
        text = text.lower()
    if remove_punctuation:
        text = _PUNCT.sub(" ", text)
        text = "".join(" " if unicodedata.category(c).startswith("P") and c != "'" else c
                       for c in text)
    if collapse_whitespace:
        text = " ".join(text.split())
    return text


def edit_distance(ref: Sequence, hyp: Sequence) -> int:
    """Levenshtein distance (substitutions, insertions, deletions) between two sequences."""
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def _rate(errors: int, n: int, hyp_len: int) -> float:
    if n == 0:
        return 0.0 if hyp_len == 0 else 1.0
    return errors / n


def word_error_rate(reference: str, hypothesis: str, **normalize: bool) -> float:
    """Word edits / reference words (a fraction; 0.25 = 25 %). Keyword options go to
    :func:`normalize_text`. An empty reference scores 0 against an empty hypothesis, else 1."""
    ref = normalize_text(reference, **normalize).split()
    hyp = normalize_text(hypothesis, **normalize).split()
    return _rate(edit_distance(ref, hyp), len(ref), len(hyp))


def char_error_rate(reference: str, hypothesis: str, **normalize: bool) -> float:
    """Character edits / reference characters (spaces count), after normalisation."""
    ref = normalize_text(reference, **normalize)
    hyp = normalize_text(hypothesis, **normalize)
    return _rate(edit_distance(ref, hyp), len(ref), len(hyp))



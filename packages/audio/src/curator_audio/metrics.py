"""Word and character error rates with text normalisation; the edit distances are computed by
jiwer (rapidfuzz's C++ Levenshtein), not in Python."""

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
    """Levenshtein distance (substitutions, insertions, deletions) between two sequences
    (strings, or lists of hashable tokens such as words)."""
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(ref, hyp))


def _errors(ref: str, hyp: str, unit: str) -> int:
    """Substitutions + deletions + insertions between two normalised strings, counted by jiwer
    over words (split on spaces) or characters (spaces count)."""
    import jiwer

    if not ref or not hyp:  # jiwer refuses empty references; every token is an edit
        return len(ref.split() if unit == "words" else ref) + len(
            hyp.split() if unit == "words" else hyp)
    if unit == "words":
        t = jiwer.ReduceToListOfListOfWords()
        out = jiwer.process_words(ref, hyp, reference_transform=t, hypothesis_transform=t)
    else:
        t = jiwer.ReduceToListOfListOfChars()
        out = jiwer.process_characters(ref, hyp, reference_transform=t, hypothesis_transform=t)
    return out.substitutions + out.deletions + out.insertions


def _rate(errors: int, n: int, hyp_len: int) -> float:
    if n == 0:
        return 0.0 if hyp_len == 0 else 1.0
    return errors / n


def word_error_rate(reference: str, hypothesis: str, **normalize: bool) -> float:
    """Word edits / reference words (a fraction; 0.25 = 25 %). Keyword options go to
    :func:`normalize_text`. An empty reference scores 0 against an empty hypothesis, else 1."""
    ref = " ".join(normalize_text(reference, **normalize).split())
    hyp = " ".join(normalize_text(hypothesis, **normalize).split())
    return _rate(_errors(ref, hyp, "words"), len(ref.split()), len(hyp.split()))


def char_error_rate(reference: str, hypothesis: str, **normalize: bool) -> float:
    """Character edits / reference characters (spaces count), after normalisation."""
    ref = normalize_text(reference, **normalize)
    hyp = normalize_text(hypothesis, **normalize)
    return _rate(_errors(ref, hyp, "chars"), len(ref), len(hyp))



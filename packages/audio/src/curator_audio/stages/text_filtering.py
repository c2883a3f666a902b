"""WhisperHallucinationStage: flag transcripts with the usual ASR hallucination patterns."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from curator import Resources
from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.stages.base import AudioRecordStage

__all__ = ["WhisperHallucinationStage", "AGGLUTINATIVE_COMPOUNDING_LANGS"]

logger = logging.getLogger(__name__)

AGGLUTINATIVE_COMPOUNDING_LANGS = frozenset({"fi", "hu", "et", "de", "nl", "da", "sv", "no"})
"""Languages whose long compounds are normal: only the absolute long-word bar applies."""

_PREFIX_MATCH_MIN_LEN = 8


def _strip_punct(text: str) -> str:
    return text.strip().replace(".", "").replace("?", "").replace("!", "").replace(",", "")


@dataclass
class WhisperHallucinationStage(AudioRecordStage):
    """Flags transcripts that look hallucinated; any one of four checks flags a row:

    - repeated n-grams: unique words / words at or below ``unique_words_threshold``;
    - a long word: one of ``long_word_threshold`` characters or more
      (``agglutinative_long_word_threshold`` for Finnish, Hungarian, Estonian, German, Dutch,
      Danish, Swedish, Norwegian), or, outside those languages, one
      ``long_word_rel_threshold`` times longer than the next longest;
    - a phrase match: the transcript (punctuation dropped) is a line of ``common_hall_file``
      or starts with one of 8 characters or more ("Thank you for watching" over silence);
    - characters per second above ``max_char_rate``.

    A flagged row gets ``skip_me_key = "Hallucination:{name}"`` (an existing flag from another
    filter is kept) and a note under ``notes_key[name]`` naming the checks hit; rows are never
    dropped. ``overwrite=True`` re-checks flagged rows and clears a hallucination flag when the
    transcript now passes (note ``recovery_value`` lower-cased, or ``recovered``).

    Args:
        common_hall_file: text file of known hallucination phrases, one a line.
        unique_words_threshold, long_word_threshold, agglutinative_long_word_threshold,
        long_word_rel_threshold, max_char_rate: the checks' bars.
        language_key, duration_key, text_key, skip_me_key, notes_key: field names.
        overwrite: re-check (and possibly clear) flagged rows.
        recovery_value: the note written when a flag is cleared.
    """

    common_hall_file: str = ""
    unique_words_threshold: float = 0.4
    long_word_threshold: int = 25
    agglutinative_long_word_threshold: int = 35
    long_word_rel_threshold: float = 3.0
    max_char_rate: float = 40.0
    language_key: str = "language"
    duration_key: str = "duration"
    text_key: str = "pred_text"
    skip_me_key: str = "_skipme"
    notes_key: str = "additional_notes"
    overwrite: bool = False
    recovery_value: str = ""
    name: str = "WhisperHallucination"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))
    reject_reason = "hallucination_check_error"

    def __post_init__(self) -> None:
        if not self.common_hall_file:
            raise ConfigError(f"{self.name}: common_hall_file (a file of known hallucination "
                              f"phrases, one a line) is required")
        self._phrases: set[str] | None = None

    def inputs(self) -> StageIO:
        return ["data"], [self.text_key]

    def outputs(self) -> StageIO:
        return ["data"], [self.skip_me_key, self.notes_key]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        from curator.io import get_fs

        fs, path = get_fs(self.common_hall_file)
        with fs.open(path, "rt", encoding="utf-8") as fh:
            self._phrases = {_strip_punct(line) for line in fh if line.strip()}

    def checks(self, text: str, duration: float, language: str = "") -> list[str]:
        """The names of the checks ``text`` fails (empty: it looks clean)."""
        if self._phrases is None:
            self.setup()
        words = text.split()
        agglutinative = language.lower().strip() in AGGLUTINATIVE_COMPOUNDING_LANGS
        bar = self.agglutinative_long_word_threshold if agglutinative else self.long_word_threshold
        lengths = sorted(len(w) for w in words)
        long_word = bool(lengths) and (lengths[-1] >= bar or (
            not agglutinative and len(lengths) > 1 and lengths[-2] > 0
            and (lengths[-1] - lengths[-2]) / lengths[-2] >= self.long_word_rel_threshold))
        cleaned = _strip_punct(text)
        candidates = {cleaned, cleaned.replace("-", " ")}
        phrases = self._phrases or set()
        phrase = bool(candidates & phrases) or any(
            len(p) >= _PREFIX_MATCH_MIN_LEN and c.startswith(p) for p in phrases for c in candidates)
        hits = {"repeated_ngrams": bool(words) and len(set(words)) / len(words)
                <= self.unique_words_threshold,
                "long_word": long_word, "phrase_match": phrase,
                "high_char_rate": duration > 0 and sum(lengths) / duration > self.max_char_rate}
        return [k for k, v in hits.items() if v]

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        record = dict(record)
        notes = dict(record.get(self.notes_key) or {})
        flag = str(record.get(self.skip_me_key, "") or "")
        text = record.get(self.text_key)
        if flag and not self.overwrite:
            notes[self.name] = "skipped (flagged)"
        elif not isinstance(text, str) or not text.strip():
            notes[self.name] = "skipped (empty text)"
        else:
            hits = self.checks(text, float(record.get(self.duration_key) or 0.0),
                               str(record.get(self.language_key, "") or ""))
            was_flagged = flag.startswith("Hallucination")
            if hits:
                if was_flagged or not flag:
                    record[self.skip_me_key] = f"Hallucination:{self.name}"
                notes[self.name] = f"hallucination ({', '.join(hits)})"
            elif self.overwrite and was_flagged:
                record[self.skip_me_key] = ""
                notes[self.name] = self.recovery_value.lower() or "recovered"
            else:
                notes[self.name] = "passed"
        record[self.notes_key] = notes
        return record

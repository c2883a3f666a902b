"""GetPairwiseWerStage: word (and character) error rate of a prediction against a reference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curator.stages.base import StageIO

from curator_audio.metrics import char_error_rate, word_error_rate
from curator_audio.stages.base import AudioRecordStage

__all__ = ["GetPairwiseWerStage"]


@dataclass
class GetPairwiseWerStage(AudioRecordStage):
    """Sets ``wer_key`` to the WER (in percent, as NeMo Curator) between ``text_key`` and
    ``pred_text_key``, and ``cer_key`` to the CER when given. A record missing either text is
    rejected.

    Args:
        text_key: reference transcript field.
        pred_text_key: predicted transcript field.
        wer_key: output field for WER in percent.
        cer_key: output field for CER in percent (``""``: not computed).
        lowercase, remove_punctuation, collapse_whitespace: text normalisation.
    """

    text_key: str = "text"
    pred_text_key: str = "pred_text"
    wer_key: str = "wer"
    cer_key: str = ""
    lowercase: bool = True
    remove_punctuation: bool = True
    collapse_whitespace: bool = True
    name: str = "GetPairwiseWerStage"
    reject_reason = "missing_text"

    def inputs(self) -> StageIO:
        return ["data"], [self.text_key, self.pred_text_key]

    def outputs(self) -> StageIO:
        return ["data"], [self.wer_key] + ([self.cer_key] if self.cer_key else [])

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        ref, hyp = record.get(self.text_key), record.get(self.pred_text_key)
        if not isinstance(ref, str) or not isinstance(hyp, str):
            raise ValueError(f"needs strings in {self.text_key!r} and {self.pred_text_key!r}, "
                             f"got {type(ref).__name__} and {type(hyp).__name__}")
        norm = {"lowercase": self.lowercase, "remove_punctuation": self.remove_punctuation,
                "collapse_whitespace": self.collapse_whitespace}
        out = {**record, self.wer_key: round(100.0 * word_error_rate(ref, hyp, **norm), 2)}
        if self.cer_key:
            out[self.cer_key] = round(100.0 * char_error_rate(ref, hyp, **norm), 2)
        return out

"""ComputeWERStage: WER, CER and edge CER after forward text normalisation."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.stages.base import AudioRecordStage
from curator_audio.text_normalization import numbers_to_words

__all__ = ["ComputeWERStage", "error_rate_detail"]

_INVALID = '/*":=_-{|}~¨«·»¡¿…‧‹›≪≫!:;ː→'
_BLANK_PNC = '`¨´‘“”`ʻ‘“"‘”'
_BLANK_NO_PNC = '`¨´‘’“”`ʻ‘’“-"‘”'
_APOSTROPHES = "‘’ʻ‘’‘’’"


def error_rate_detail(hypothesis: str, reference: str, use_cer: bool = False) -> dict[str, Any]:
    """Edit-distance rate of ``hypothesis`` against ``reference`` over words (or characters,
    spaces included, with ``use_cer``): ``{"wer"|"cer": rate, "tokens": reference tokens,
    "ins_rate", "del_rate", "sub_rate"}`` (each a fraction of the reference tokens, rounded to 4
    places; NeMo's ``word_error_rate_detail`` for one pair)."""
    import jiwer

    ref = list(reference) if use_cer else reference.split()
    hyp = list(hypothesis) if use_cer else hypothesis.split()
    key = "cer" if use_cer else "wer"
    if not ref:
        rate = float(len(hyp) > 0)
        return {key: rate, "tokens": 0, "ins_rate": rate, "del_rate": 0.0, "sub_rate": 0.0}
    if not hyp:
        return {key: 1.0, "tokens": len(ref), "ins_rate": 0.0, "del_rate": 1.0, "sub_rate": 0.0}
    if use_cer:
        t = jiwer.ReduceToListOfListOfChars()
        out = jiwer.process_characters(reference, hypothesis, reference_transform=t,
                                       hypothesis_transform=t)
    else:
        t = jiwer.ReduceToListOfListOfWords()
        out = jiwer.process_words(reference, hypothesis, reference_transform=t,
                                  hypothesis_transform=t)
    n = len(ref)
    errors = out.insertions + out.deletions + out.substitutions
    return {key: round(errors / n, 4), "tokens": n, "ins_rate": round(out.insertions / n, 4),
            "del_rate": round(out.deletions / n, 4), "sub_rate": round(out.substitutions / n, 4)}


@dataclass
class ComputeWERStage(AudioRecordStage):
    """Scores ``hypothesis_text_key`` against ``reference_text_key`` on each record (or each of
    its ``segments``) into ``metrics``: ``wer`` and ``cer`` (each ``{"wer"|"cer", "tokens",
    "ins_rate", "del_rate", "sub_rate"}``), ``start_cer`` / ``end_cer`` (the first / last
    ``edge_length`` characters), ``char_rate`` / ``word_rate`` (per second of ``end - start`` or
    ``duration``) and, with ``compute_pnc_wer``, ``wer_pnc`` / ``cer_pnc`` with punctuation
    kept. An empty reference gives ``wer = cer = None`` and ``metric_skip_reason``.

    Both texts are normalised first: ASR markers (``<unk>``, ``|``, ``⁇``) removed, numbers
    spelt out (num2words in ``language``: cardinals, decimals, ordinals, percentages, currency),
    quotes and symbols dropped, lower-cased and punctuation removed (NeMo uses
    ``nemo_text_processing``'s full normaliser, which also verbalises dates, times and measures).

    Args:
        language: the texts' language (num2words code).
        hypothesis_text_key, reference_text_key: the compared fields.
        num_words_threshold, num_words_look_back: NeMo's normaliser chunking (validated; a
            regular expression needs no chunking).
        compute_pnc_wer: also score with punctuation and case.
        pnc_chars: punctuation kept for the PnC scores.
        edge_length: characters scored at each edge.
        segments_key: the nested segments field.
    """

    language: str = "en"
    hypothesis_text_key: str = "text"
    reference_text_key: str = "text_ref"
    num_words_threshold: int = 200
    num_words_look_back: int = 5
    compute_pnc_wer: bool = False
    pnc_chars: str = "،؟.、？¿!,?।"
    edge_length: int = 12
    segments_key: str = "segments"
    name: str = "ComputeWER"
    reject_reason = "wer_error"

    def __post_init__(self) -> None:
        if self.num_words_look_back >= self.num_words_threshold:
            raise ConfigError(f"{self.name}: num_words_look_back ({self.num_words_look_back}) "
                              f"must be less than num_words_threshold "
                              f"({self.num_words_threshold})")

    def inputs(self) -> StageIO:
        return ["data"], []

    def outputs(self) -> StageIO:
        return ["data"], ["metrics"]

    def normalize_text(self, text: str) -> str:
        """ASR markers removed, whitespace collapsed, numbers spelt out."""
        for marker in ("<unk>", "|", "⁇", "<", ">"):
            text = text.replace(marker, "")
        return numbers_to_words(re.sub(r"\s+", " ", text).strip(), self.language)

    def clean_text(self, text: str, retain_pncs: bool = True) -> str:
        """NeMo's character clean-up; without ``retain_pncs`` also lower-cased and
        ``pnc_chars`` removed."""
        if retain_pncs:
            spaced, blank = _INVALID, _BLANK_PNC
        else:
            spaced, blank = _INVALID + self.pnc_chars, _BLANK_NO_PNC
            text = text.lower()
        text = text.strip()
        for c in blank:
            text = text.replace(c, "")
        for c in spaced:
            text = text.replace(c, " ")
        for c in _APOSTROPHES:
            text = text.replace(c, "'")
        if retain_pncs:
            text = re.sub(f"(\\w)\\s+([{re.escape(self.pnc_chars)}])", r"\1\2", text)
        return " ".join(text.split())

    def _score(self, item: dict[str, Any]) -> None:
        if self.hypothesis_text_key not in item or self.reference_text_key not in item:
            return
        metrics = dict(item.get("metrics") or {})
        hyp_text, ref_text = str(item[self.hypothesis_text_key]), str(item[self.reference_text_key])
        hyp_norm, ref_norm = self.normalize_text(hyp_text), self.normalize_text(ref_text)
        hyp, ref = self.clean_text(hyp_norm, False), self.clean_text(ref_norm, False)
        if not ref:
            metrics.update(wer=None, cer=None, metric_skip_reason="empty_reference")
            item["metrics"] = metrics
            return
        duration = float(item.get("end", item.get("duration", 0)) or 0) - float(
            item.get("start", 0) or 0)
        metrics["char_rate"] = round(len(hyp_text.replace(" ", "")) / duration, 2) \
            if duration > 0 else 0.0
        metrics["word_rate"] = round(len(hyp_text.split()) / duration, 2) if duration > 0 else 0.0
        metrics["wer"] = error_rate_detail(hyp, ref)
        metrics["cer"] = error_rate_detail(hyp, ref, use_cer=True)
        n = self.edge_length
        metrics["start_cer"] = error_rate_detail(hyp[:n], ref[:n], use_cer=True)
        metrics["end_cer"] = error_rate_detail(hyp[-n:], ref[-n:], use_cer=True)
        if self.compute_pnc_wer:
            hyp_p, ref_p = self.clean_text(hyp_norm, True), self.clean_text(ref_norm, True)
            metrics["wer_pnc"] = error_rate_detail(hyp_p, ref_p)
            metrics["cer_pnc"] = error_rate_detail(hyp_p, ref_p, use_cer=True)
        item["metrics"] = metrics

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        record = dict(record)
        segments = record.get(self.segments_key)
        if isinstance(segments, list):
            record[self.segments_key] = [dict(s) for s in segments]
            for seg in record[self.segments_key]:
                try:
                    self._score(seg)
                except (KeyError, ValueError, TypeError) as exc:
                    seg.setdefault("metrics", {})["metric_skip_reason"] = str(exc)
        else:
            self._score(record)
        return record

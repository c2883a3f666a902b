"""BandwidthEstimationStage: the highest frequency with energy within ``frequency_threshold`` dB
of the spectrum's peak."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from curator.stages.base import StageIO

from curator_audio.dsp import power_to_db, stft
from curator_audio.stages.common import SEGMENTS, item_waveform
from curator_audio.stages.preprocessing import _RejectingStage

__all__ = ["BandwidthEstimationStage", "estimate_bandwidth"]


def estimate_bandwidth(audio: np.ndarray, sample_rate: int, n_fft: int = 512,
                       stride_seconds: float = 0.01, top_db: float = 100.0,
                       frequency_threshold: float = -50.0) -> int:
    """NeMo's estimate (Hz): the time-averaged power spectrum (Blackman-Harris windows of
    ``n_fft``, one every ``stride_seconds``) in dB re ``n_fft``, floored ``top_db`` below its peak;
    the highest bin whose level is within ``frequency_threshold`` dB of the peak, times the bin
    width."""
    hop = max(1, int(sample_rate * stride_seconds))
    power = np.mean(np.abs(stft(audio, n_fft=n_fft, hop_length=hop, window="blackmanharris"))
                    ** 2, axis=1)
    db = power_to_db(power, ref=n_fft, top_db=top_db)
    above = np.nonzero(db - db.max() > frequency_threshold)[0]
    return int(above[-1] * sample_rate / n_fft) if len(above) else 0


@dataclass
class BandwidthEstimationStage(_RejectingStage):
    """Estimates each record's audio bandwidth (:func:`estimate_bandwidth`) into
    ``metrics["bandwidth"]`` (Hz). A record with ``segments`` (each with ``start``/``end`` in
    seconds into the audio) gets one estimate per segment; a segment with an invalid range gets
    ``metrics["metric_skip_reason"]`` instead, and segments of speaker ``no-speaker`` or with
    empty ``text`` are skipped, as in NeMo. Uses the decoded ``waveform`` when present, else
    decodes the file; undecodable audio is rejected.

    Args:
        n_fft: FFT size.
        stride_seconds: time between FFT windows (s).
        top_db: floor of the spectrum below its peak (dB).
        frequency_threshold: level relative to the peak that still counts (dB).
        audio_filepath_key: the audio path field.
        segments_key: the nested segments field.
    """

    n_fft: int = 512
    stride_seconds: float = 0.01
    top_db: float = 100.0
    frequency_threshold: float = -50.0
    audio_filepath_key: str = "audio_filepath"
    segments_key: str = SEGMENTS
    name: str = "BandwidthEstimation"
    reject_reason = "undecodable_audio"

    def __post_init__(self) -> None:
        self.filepath_key = self.audio_filepath_key

    def inputs(self) -> StageIO:
        return ["data"], []

    def outputs(self) -> StageIO:
        return ["data"], ["metrics"]

    def _estimate(self, item: dict[str, Any], audio: np.ndarray, sr: int) -> None:
        if item.get("speaker") == "no-speaker" or (
                item.get("text") is not None and str(item["text"]).strip() == ""):
            return
        start = float(item.get("start", 0.0) or 0.0)
        end = item.get("end", item.get("duration"))
        metrics = dict(item.get("metrics") or {})
        if end is None or start >= float(end):
            metrics["metric_skip_reason"] = f"invalid segment time range: start={start}, end={end}"
        else:
            piece = audio[int(start * sr):int(float(end) * sr)]
            metrics["bandwidth"] = estimate_bandwidth(piece, sr, self.n_fft, self.stride_seconds,
                                                      self.top_db, self.frequency_threshold)
        item["metrics"] = metrics

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        audio, sr = item_waveform(record, self.audio_filepath_key)
        record = dict(record)
        if isinstance(record.get(self.segments_key), list):
            record[self.segments_key] = [dict(s) for s in record[self.segments_key]]
            for seg in record[self.segments_key]:
                self._estimate(seg, audio, sr)
        else:
            if "end" not in record and "duration" not in record:
                record["duration"] = len(audio) / sr
            self._estimate(record, audio, sr)
        return record

"""Signal quality measures as stages: RMS level, clipping, silence fraction, SNR."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from curator.stages.base import StageIO

from curator_audio import vad
from curator_audio.decode import record_waveform
from curator_audio.stages.base import AudioRecordStage

__all__ = ["AudioMeasureStage", "AudioRMSStage", "AudioClippingStage",
           "AudioSilenceFractionStage", "AudioSNRStage"]


class AudioMeasureStage(AudioRecordStage):
    """Base for stages that put one number computed from the waveform into ``output_key``.
    Uses the decoded waveform when present, else decodes the file (undecodable: rejected)."""

    output_key: str = ""
    filepath_key: str = "audio_filepath"
    reject_reason = "undecodable_audio"

    def outputs(self) -> StageIO:
        return ["data"], [self.output_key]

    def measure(self, wave: np.ndarray, sr: int) -> float:
        raise NotImplementedError

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        wave, sr = record_waveform(record, self.filepath_key)
        return {**record, self.output_key: round(float(self.measure(wave, sr)), 6)}


@dataclass
class AudioRMSStage(AudioMeasureStage):
    """RMS level in dBFS (a full-scale sine is about -3; digital silence about -200).

    Args:
        output_key: field for the level.
    """

    output_key: str = "rms_db"
    filepath_key: str = "audio_filepath"
    name: str = "AudioRMSStage"

    def measure(self, wave: np.ndarray, sr: int) -> float:
        return vad.rms_dbfs(wave)


@dataclass
class AudioClippingStage(AudioMeasureStage):
    """Fraction of samples at or above ``threshold`` in magnitude (clipped).

    Args:
        threshold: magnitude counted as clipped (full scale is 1.0).
        output_key: field for the fraction.
    """

    threshold: float = 0.999
    output_key: str = "clipping_fraction"
    filepath_key: str = "audio_filepath"
    name: str = "AudioClippingStage"

    def measure(self, wave: np.ndarray, sr: int) -> float:
        return vad.clipping_fraction(wave, self.threshold)


@dataclass
class AudioSilenceFractionStage(AudioMeasureStage):
    """Fraction of 25 ms frames whose energy is below ``threshold_db`` dBFS (energy VAD).

    Args:
        threshold_db: frame energy under which a frame is silent.
        output_key: field for the fraction.
    """

    threshold_db: float = -40.0
    output_key: str = "silence_fraction"
    filepath_key: str = "audio_filepath"
    name: str = "AudioSilenceFractionStage"

    def measure(self, wave: np.ndarray, sr: int) -> float:
        return vad.silence_fraction(wave, sr, self.threshold_db)


@dataclass
class AudioSNRStage(AudioMeasureStage):
    """Signal-to-noise estimate in dB: power of the loudest frames over the quietest
    (percentiles of the frame energy); needs no clean reference.

    Args:
        noise_percentile, speech_percentile: the frame-energy percentiles for noise and signal.
        output_key: field for the estimate.
    """

    noise_percentile: float = 10.0
    speech_percentile: float = 90.0
    output_key: str = "snr_db"
    filepath_key: str = "audio_filepath"
    name: str = "AudioSNRStage"

    def measure(self, wave: np.ndarray, sr: int) -> float:
        return vad.snr_estimate(wave, sr, self.noise_percentile, self.speech_percentile)

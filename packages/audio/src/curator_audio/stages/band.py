"""BandFilterStage: full-band / narrow-band classification by NeMo's scikit-learn classifier
(a ``.joblib`` file) on band-energy features."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np
from curator import Resources
from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.dsp import power_to_db, stft
from curator_audio.stages.common import SegmentAwareStage, item_waveform

__all__ = ["BandFilterStage", "BAND_DEFINITIONS", "band_energy_features", "feature_vector",
           "load_band_classifier", "HF_REPO_ID", "HF_MODEL_FILENAME"]

HF_REPO_ID = "nvidia/nemocurator-speech-bandwidth-filter"
HF_MODEL_FILENAME = "band_classifier_model_band_7000_samples.joblib"

BAND_DEFINITIONS: dict[str, tuple[int, int]] = {
    **{f"low{i + 1}": (i * 1000, (i + 1) * 1000) for i in range(3)},
    **{f"mid{i + 1}": (3000 + i * 1000, 4000 + i * 1000) for i in range(10)},
    "high": (13000, 14000),
    **{f"high{i + 1}": (14000 + i * 1000, 15000 + i * 1000) for i in range(10)},
}
"""The 24 one-kHz bands (0-24 kHz) of NeMo's band classifier, by its feature names."""

_HIGH_FREQ_CUTOFF = 10000
_MIN_LOUDNESS = -100.0
_TARGET_LUFS = -25.0


def band_energy_features(y: np.ndarray, sr: int) -> dict[str, float]:
    """``band_energy_<band>`` for each band of :data:`BAND_DEFINITIONS`: the audio normalised to
    -25 LUFS (ITU-R BS.1770 by pyloudnorm), its 4096-point STFT power averaged over each band in
    dB re the spectrogram's maximum, minus 12 dB per 14 kHz above 10 kHz; -120 for bands above
    Nyquist or when the features cannot be computed (NeMo's layout and values)."""
    import pyloudnorm

    out: dict[str, float] = {}
    try:
        y = np.asarray(y, dtype=np.float64)
        loudness = pyloudnorm.Meter(sr).integrated_loudness(y)
        if loudness > _MIN_LOUDNESS:
            y = y * (10.0 ** ((_TARGET_LUFS - loudness) / 20.0))
        n_fft = 4096
        power = np.abs(stft(y, n_fft=n_fft)) ** 2
        freqs = np.linspace(0, sr / 2, 1 + n_fft // 2)
        peak = float(power.max()) or 1e-10
        for band, (lo, hi) in BAND_DEFINITIONS.items():
            mask = (freqs >= lo) & (freqs < hi)
            if not mask.any():
                out[f"band_energy_{band}"] = -120.0
                continue
            value = float(power_to_db(float(np.mean(power[mask, :])), ref=peak, top_db=None))
            if lo >= _HIGH_FREQ_CUTOFF:
                value -= (lo - _HIGH_FREQ_CUTOFF) / 14000 * 12
            out[f"band_energy_{band}"] = 0.0 if np.isnan(value) else value
    except Exception:  # NeMo's extractor gives every band -120 for audio it cannot measure
        out = {f"band_energy_{band}": -120.0 for band in BAND_DEFINITIONS}
    return out


def feature_vector(features: dict[str, float]) -> np.ndarray:
    """The classifier's input: the features ordered by name (NaN as 0)."""
    return np.nan_to_num(np.array([features[k] for k in sorted(features)], dtype=np.float64))


def load_band_classifier(path: str) -> Any:
    """The scikit-learn classifier stored with joblib at ``path`` (trees pickled before
    scikit-learn 1.4 get the ``monotonic_cst`` attribute newer versions read)."""
    import warnings

    import joblib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = joblib.load(path)
    for est in [*getattr(model, "estimators_", []), model]:
        if hasattr(est, "tree_") and not hasattr(est, "monotonic_cst"):
            est.monotonic_cst = None
    return model


@dataclass
class BandFilterStage(SegmentAwareStage):
    """Classifies each record (or each nested segment) as ``full_band`` or ``narrow_band`` with
    NeMo's band classifier and keeps those equal to ``band_value``; the label goes into
    ``band_prediction``. The classifier is the ``.joblib`` file of NeMo's model
    (``nvidia/nemocurator-speech-bandwidth-filter``, file
    ``band_classifier_model_band_7000_samples.joblib``) at ``model_path``, or that file name
    under ``cache_dir``: nothing is downloaded (fetch it once, e.g. ``huggingface-cli download``).

    Args:
        model_path: the ``.joblib`` classifier.
        cache_dir: a folder holding it under its published file name (when no ``model_path``).
        band_value: the label kept.
        split: send removed items to the rejected sink instead of dropping them.
    """

    model_path: str | None = None
    cache_dir: str | None = None
    band_value: Literal["full_band", "narrow_band"] = "full_band"
    split: bool = False
    filepath_key: str = "audio_filepath"
    name: str = "BandFilter"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))
    kind: ClassVar[str] = "filter"
    reject_reason = "band_filter_error"

    def __post_init__(self) -> None:
        if self.band_value not in ("full_band", "narrow_band"):
            raise ConfigError(f"{self.name}: band_value must be 'full_band' or 'narrow_band', "
                              f"got {self.band_value!r}")
        self._model: Any = None

    def outputs(self) -> StageIO:
        return ["data"], ["band_prediction"]

    def resolve_model_path(self) -> str:
        """The classifier file, or a :class:`ConfigError` saying where to put it."""
        for path in (self.model_path,
                     os.path.join(self.cache_dir, HF_MODEL_FILENAME) if self.cache_dir else None):
            if path and os.path.isfile(path):
                return path
        raise ConfigError(f"{self.name}: band classifier not found (model_path={self.model_path!r}"
                          f", cache_dir={self.cache_dir!r}); download {HF_MODEL_FILENAME} from "
                          f"the model hub repository {HF_REPO_ID} and pass model_path=")

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        if self._model is None:
            self._model = load_band_classifier(self.resolve_model_path())

    def predict(self, wave: np.ndarray, sr: int) -> str:
        """``full_band`` or ``narrow_band`` for one mono waveform."""
        if self._model is None:
            self.setup()
        label = self._model.predict(feature_vector(band_energy_features(wave, sr))[None, :])[0]
        return "full_band" if label == 1 else "narrow_band"

    def score_one(self, item: dict[str, Any]) -> tuple[bool, Any]:
        wave, sr = item_waveform(item, self.filepath_key)
        item["band_prediction"] = self.predict(wave, sr)
        return item["band_prediction"] == self.band_value, item["band_prediction"]

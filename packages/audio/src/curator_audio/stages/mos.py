"""MOS filters: UTMOS (UTokyo-SaruLab's ``utmos22_strong``, a torch.hub entry point) and SigMOS
(Microsoft's P.804 estimator, an ONNX model)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from curator import Resources
from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.decode import resample
from curator_audio.stages.common import SegmentAwareStage, item_waveform

__all__ = ["UTMOSFilterStage", "SIGMOSFilterStage", "SigMOS", "sigmos_features",
           "SIGMOS_MODEL_FILENAME", "SIGMOS_OUTPUTS", "UTMOS_REPO", "UTMOS_ENTRYPOINT"]

UTMOS_REPO = "tarepan/SpeechMOS:v1.2.0"
UTMOS_ENTRYPOINT = "utmos22_strong"
SIGMOS_MODEL_FILENAME = "model-sigmos_1697718653_41d092e8-epo-200.onnx"
SIGMOS_OUTPUTS = ("MOS_COL", "MOS_DISC", "MOS_LOUD", "MOS_NOISE", "MOS_REVERB", "MOS_SIG",
                  "MOS_OVRL")
"""The seven scores of the SigMOS model's output row, in order."""
_DEFAULT_SIGMOS_DIR = str(Path.home() / ".cache" / "nemo_curator" / "sigmos_model")


@dataclass
class UTMOSFilterStage(SegmentAwareStage):
    """Scores each record (or nested segment) with UTMOS (``utmos22_strong``) at 16 kHz into
    ``utmos_mos`` and keeps those scoring at least ``mos_threshold`` (``None``: keep all).

    The model is loaded as NeMo loads it, ``torch.hub.load(repo, "utmos22_strong")``, but from a
    local copy only: ``model_dir`` is a checkout of ``tarepan/SpeechMOS`` (its ``hubconf.py``
    entry point, whose weights torch.hub caches under ``$TORCH_HOME``); nothing is downloaded at
    run time. The entry point's model is called as ``model(waveform[1, N], sr=16000)``.

    Args:
        mos_threshold: the lowest MOS kept.
        sample_rate: the model's rate (audio is resampled to it).
        model_dir: the local ``tarepan/SpeechMOS`` checkout.
        split: send removed items to the rejected sink instead of dropping them.
    """

    mos_threshold: float | None = 3.5
    sample_rate: int = 16000
    model_dir: str | None = None
    split: bool = False
    filepath_key: str = "audio_filepath"
    name: str = "UTMOSFilter"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))
    kind: ClassVar[str] = "filter"
    filter_label: ClassVar[str] = ""
    reject_reason = "utmos_error"

    def __post_init__(self) -> None:
        self._model: Any = None

    def outputs(self) -> StageIO:
        return ["data"], ["utmos_mos"]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        import torch

        if self._model is not None:
            return
        if not self.model_dir or not os.path.isfile(os.path.join(self.model_dir, "hubconf.py")):
            raise ConfigError(f"{self.name}: model_dir={self.model_dir!r} is not a local checkout "
                              f"of {UTMOS_REPO.split(':')[0]} (no hubconf.py); clone it (tag "
                              f"{UTMOS_REPO.split(':')[1]}), load it once so torch.hub caches "
                              f"the weights, and pass model_dir=")
        model = torch.hub.load(self.model_dir, UTMOS_ENTRYPOINT, source="local", trust_repo=True)
        self._model = model.to(self.resources.torch_device()).eval()

    def teardown(self) -> None:
        self._model = None

    def score(self, wave: np.ndarray, sr: int) -> float:
        """The MOS of one mono waveform."""
        import torch

        if self._model is None:
            self.setup()
        wave = resample(wave, sr, self.sample_rate)
        device = next(iter(self._model.parameters())).device
        with torch.inference_mode():
            out = self._model(torch.from_numpy(np.ascontiguousarray(wave))[None].to(device),
                              sr=self.sample_rate)
        return float(out.item() if hasattr(out, "item") else out)

    def score_one(self, item: dict[str, Any]) -> tuple[bool, Any]:
        wave, sr = item_waveform(item, self.filepath_key)
        mos = self.score(wave, sr)
        kept = self.mos_threshold is None or mos >= self.mos_threshold
        if kept:
            item["utmos_mos"] = mos
        return kept, mos


def sigmos_features(audio: np.ndarray) -> np.ndarray:
    """SigMOS's input for 48 kHz mono audio: 960-point STFT frames every 480 samples (square
    root of a periodic Hann window), magnitude compressed to the power 0.3 with the real and
    imaginary parts scaled alike; shape ``(1, 3, frames, 481)`` float32."""
    import scipy.fft

    frame, win_len = 480, 960
    last = len(audio) % frame or frame
    padded = np.pad(np.asarray(audio, dtype=np.float32), (win_len - frame, win_len - last))
    n = 1 + (len(padded) - win_len) // frame
    view = np.lib.stride_tricks.as_strided(
        padded, shape=(n, win_len), strides=(padded.strides[0] * frame, padded.strides[0]),
        writeable=False)
    window = np.sqrt(np.hanning(win_len + 1)[:-1]).astype(np.float32)
    spec = scipy.fft.rfft(view * window, n=win_len).astype(np.complex64)
    parts = np.stack([spec.real, spec.imag], axis=1)             # (frames, 2, 481)
    power = np.maximum((parts * parts).sum(axis=1, keepdims=True), 1e-12)
    parts = np.power(power, (0.3 - 1) / 2) * parts
    mag = np.power(power, 0.3 / 2)
    feats = np.concatenate([mag, parts], axis=1).transpose(1, 0, 2)  # (3, frames, 481)
    return np.ascontiguousarray(feats[None], dtype=np.float32)


class SigMOS:
    """The SigMOS ONNX model in an onnxruntime session (one thread, as the reference code)."""

    sampling_rate = 48000

    def __init__(self, model_path: str, device: str = "cpu") -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.inter_op_num_threads = 1
        options.intra_op_num_threads = 1
        providers = ["CPUExecutionProvider"]
        if device == "cuda" and "CUDAExecutionProvider" in ort.get_available_providers():
            providers.insert(0, "CUDAExecutionProvider")
        self.session = ort.InferenceSession(model_path, options, providers=providers)

    def run(self, audio: np.ndarray, sr: int | None = None) -> dict[str, float]:
        """The seven MOS scores (``MOS_COL`` ... ``MOS_OVRL``) of mono audio at ``sr``."""
        if sr is not None and sr != self.sampling_rate:
            audio = resample(audio, sr, self.sampling_rate)
        feats = sigmos_features(audio)
        row = self.session.run(None, {i.name: feats for i in self.session.get_inputs()})[0][0]
        return {name: float(v) for name, v in zip(SIGMOS_OUTPUTS, row, strict=False)}


@dataclass
class SIGMOSFilterStage(SegmentAwareStage):
    """Scores each record (or nested segment) with SigMOS into ``sigmos_noise``, ``sigmos_ovrl``,
    ``sigmos_sig``, ``sigmos_col``, ``sigmos_disc``, ``sigmos_loud``, ``sigmos_reverb`` and keeps
    those reaching every threshold that is set (``None``: not checked). Audio is resampled to
    48 kHz.

    The model is Microsoft's ``model-sigmos_1697718653_41d092e8-epo-200.onnx``
    (SIG-Challenge, ICASSP 2024) at ``model_path``, or under that name in ``model_dir``
    (NeMo's cache folder by default); nothing is downloaded at run time.

    Args:
        model_dir: folder holding the ONNX file under its published name.
        model_path: the ONNX file (overrides ``model_dir``).
        noise_threshold, ovrl_threshold, sig_threshold, col_threshold, disc_threshold,
        loud_threshold, reverb_threshold: lowest score kept per dimension.
        split: send removed items to the rejected sink instead of dropping them.
    """

    model_dir: str = _DEFAULT_SIGMOS_DIR
    model_path: str | None = None
    noise_threshold: float | None = 4.0
    ovrl_threshold: float | None = 3.5
    sig_threshold: float | None = None
    col_threshold: float | None = None
    disc_threshold: float | None = None
    loud_threshold: float | None = None
    reverb_threshold: float | None = None
    split: bool = False
    filepath_key: str = "audio_filepath"
    name: str = "SIGMOSFilter"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))
    kind: ClassVar[str] = "filter"
    reject_reason = "sigmos_error"

    _KEYS: ClassVar[tuple[str, ...]] = ("noise", "ovrl", "sig", "col", "disc", "loud", "reverb")

    def __post_init__(self) -> None:
        self._model: SigMOS | None = None

    def outputs(self) -> StageIO:
        return ["data"], [f"sigmos_{k}" for k in self._KEYS]

    def resolve_model_path(self) -> str:
        """The ONNX file, or a :class:`ConfigError` saying where to put it."""
        for path in (self.model_path, os.path.join(self.model_dir or "", SIGMOS_MODEL_FILENAME)):
            if path and os.path.isfile(path) and os.path.getsize(path) > 0:
                return path
        raise ConfigError(f"{self.name}: SigMOS model not found (model_path={self.model_path!r}, "
                          f"model_dir={self.model_dir!r}); download {SIGMOS_MODEL_FILENAME} from "
                          f"microsoft/SIG-Challenge (ICASSP2024/sigmos) and pass model_path=")

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        if self._model is None:
            self._model = SigMOS(self.resolve_model_path(), self.resources.torch_device())

    def teardown(self) -> None:
        self._model = None

    def scores(self, wave: np.ndarray, sr: int) -> dict[str, float]:
        """``{"noise": ..., "ovrl": ..., ...}`` for one mono waveform."""
        if self._model is None:
            self.setup()
        raw = self._model.run(wave, sr)
        return {k: float(raw.get(f"MOS_{k.upper()}", 0.0)) for k in self._KEYS}

    def score_one(self, item: dict[str, Any]) -> tuple[bool, Any]:
        wave, sr = item_waveform(item, self.filepath_key)
        s = self.scores(wave, sr)
        failed = [f"{k} {s[k]:.3f} < {t}" for k in self._KEYS
                  if (t := getattr(self, f"{k}_threshold")) is not None and s[k] < t]
        if not failed:
            item.update({f"sigmos_{k}": v for k, v in s.items()})
        return not failed, "; ".join(failed) or s["ovrl"]

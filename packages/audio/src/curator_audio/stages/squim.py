"""Learned speech quality with torchaudio's SQUIM objective model: STOI, PESQ and SI-SDR
estimated from the audio alone (no clean reference), as a stage and as a filter.

The weights are a local file: the ``state_dict`` of ``torchaudio.models.squim_objective_base()``
(the file torchaudio's ``SQUIM_OBJECTIVE`` bundle downloads, ``squim_objective_dns2020.pth``).
Nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.decode import record_waveform
from curator_audio.stages.base import AudioRecordStage, public_record
from curator_audio.stages.filters import AudioFilterStage
from curator_audio.tasks import AudioBatch

__all__ = ["TorchSquimQualityMetricsStage", "TorchSquimQualityFilterStage", "SQUIM_SAMPLE_RATE",
           "load_squim_objective"]

SQUIM_SAMPLE_RATE = 16000


def load_squim_objective(model_path: str, device: str = "cpu",
                         model_config: dict[str, Any] | None = None) -> Any:
    """``squim_objective_base()`` (or ``squim_objective_model(**model_config)``) with the
    ``state_dict`` saved at ``model_path`` (any fsspec path), in eval mode on ``device``."""
    import io

    import fsspec
    import torch
    from torchaudio.models import squim_objective_base, squim_objective_model

    model = squim_objective_model(**model_config) if model_config else squim_objective_base()
    with fsspec.open(model_path, "rb") as fh:
        state = torch.load(io.BytesIO(fh.read()), map_location="cpu", weights_only=True)
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        raise ValueError(f"{model_path}: not a SQUIM objective state_dict for this architecture "
                         f"(model_config={model_config}): {exc}") from exc
    return model.eval().to(device)


@dataclass
class TorchSquimQualityMetricsStage(AudioRecordStage):
    """Adds ``stoi_squim``, ``pesq_squim`` and ``sisdr_squim`` (rounded to 3 decimals) estimated
    by the SQUIM objective model. Audio is decoded (or taken from ``waveform``) and resampled to
    16 kHz; waveforms of equal length run together in batches of ``compute_batch_size`` (no
    zero padding, so a record's scores never depend on its batch). Undecodable or empty audio
    is rejected. CUDA when the stage's resources ask for a GPU and one is present.

    Args:
        model_path: the ``state_dict`` file (e.g. ``squim_objective_dns2020.pth``).
        model_config: ``squim_objective_model`` arguments for a non-base architecture.
        compute_batch_size: waveforms per forward pass.
        stoi_key, pesq_key, sisdr_key: output fields.
    """

    model_path: str = ""
    path_params: ClassVar[tuple[str, ...]] = ("model_path",)
    model_config: dict[str, Any] = field(default_factory=dict)
    compute_batch_size: int = 16
    stoi_key: str = "stoi_squim"
    pesq_key: str = "pesq_squim"
    sisdr_key: str = "sisdr_squim"
    filepath_key: str = "audio_filepath"
    name: str = "TorchSquimQualityMetricsStage"
    kind: ClassVar[str] = "classifier"
    reject_reason = "undecodable_audio"

    def __post_init__(self) -> None:
        if not self.model_path:
            raise ConfigError(f"{self.name}: model_path is required (the SQUIM objective "
                              f"state_dict file, e.g. squim_objective_dns2020.pth)")
        if "://" not in self.model_path:
            import os

            if not os.path.isfile(self.model_path):
                raise ConfigError(f"{self.name}: model_path {self.model_path!r} is not a file; "
                                  f"build a test one with curator_audio.testing."
                                  f"make_squim_objective_weights(path)")
        if not isinstance(self.compute_batch_size, int) or self.compute_batch_size < 1:
            raise ConfigError(f"{self.name}: compute_batch_size must be an int >= 1")

    def outputs(self) -> StageIO:
        return ["data"], [self.stoi_key, self.pesq_key, self.sisdr_key]

    @property
    def device(self) -> str:
        """``"cuda"`` when the stage asks for a GPU and torch sees one, else ``"cpu"``."""
        return self.resources.torch_device()

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        self._model = load_squim_objective(self.model_path, self.device, self.model_config or None)

    def scores(self, waves: list[np.ndarray]) -> list[tuple[float, float, float]]:
        """(STOI, PESQ, SI-SDR) per 16 kHz waveform, in order."""
        import torch

        by_len: dict[int, list[int]] = {}
        for i, w in enumerate(waves):
            by_len.setdefault(len(w), []).append(i)
        out: dict[int, tuple[float, float, float]] = {}
        for idx in by_len.values():
            for b in range(0, len(idx), self.compute_batch_size):
                part = idx[b:b + self.compute_batch_size]
                x = torch.from_numpy(np.stack([waves[i] for i in part]).astype(np.float32))
                with torch.inference_mode():
                    stoi, pesq, sisdr = self._model(x.to(self.device))
                for k, i in enumerate(part):
                    out[i] = (round(float(stoi[k]), 3), round(float(pesq[k]), 3),
                              round(float(sisdr[k]), 3))
        return [out[i] for i in range(len(waves))]

    def score_records(self, task: AudioBatch) -> dict[int, dict[str, float]]:
        """The three scores of each decodable record, by its index (the others are rejected)."""
        waves: dict[int, np.ndarray] = {}
        for i, record in enumerate(task.data):
            try:
                wave = record_waveform(record, self.filepath_key, SQUIM_SAMPLE_RATE)[0]
                if len(wave) < 400:  # shorter than the model's 25 ms analysis window
                    raise ValueError(f"audio too short for SQUIM ({len(wave)} samples at 16 kHz)")
                waves[i] = np.asarray(wave, dtype=np.float32)
            except Exception as exc:
                self.reject(task, self.reject_reason, record=public_record(record), error=exc,
                            source=str(record.get(self.filepath_key, "")))
        keys = sorted(waves)
        results = self.scores([waves[i] for i in keys])
        return {i: {self.stoi_key: s, self.pesq_key: p, self.sisdr_key: d}
                for i, (s, p, d) in zip(keys, results, strict=True)}

    def scored(self, task: AudioBatch) -> list[dict[str, Any]]:
        """The task's decodable records with the three scores added (others rejected)."""
        return [{**task.data[i], **scores} for i, scores in self.score_records(task).items()]

    def process(self, task: AudioBatch) -> AudioBatch:
        return task.derive(self.scored(task))

    def teardown(self) -> None:
        self._model = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_model", None)  # loaded by setup(), never shipped
        return state


@dataclass
class TorchSquimQualityFilterStage(AudioFilterStage, TorchSquimQualityMetricsStage):
    """Scores records like :class:`TorchSquimQualityMetricsStage` and keeps those whose
    estimates reach every given minimum (``None``: not checked); the others are dropped
    (``split=True``: sent to the rejected sink, kind ``"filtered"``, with the three scores).

    Args:
        min_stoi: minimum STOI (0-1).
        min_pesq: minimum PESQ (1-4.5).
        min_sisdr: minimum SI-SDR in dB.
        split: send removed records to the rejected sink instead of dropping them.
    """

    min_stoi: float | None = None
    min_pesq: float | None = None
    min_sisdr: float | None = None
    split: bool = False
    name: str = "TorchSquimQualityFilterStage"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.min_stoi is None and self.min_pesq is None and self.min_sisdr is None:
            raise ConfigError(f"{self.name}: give at least one of min_stoi, min_pesq, min_sisdr "
                              f"(or use TorchSquimQualityMetricsStage to only score)")

    def score_items(self, task: AudioBatch, items: list[dict[str, Any]]
                    ) -> list[dict[str, float] | None]:
        by_index = self.score_records(task)
        for i, scores in by_index.items():
            items[i].update(scores)  # the kept records carry their scores on
        return [by_index.get(i) for i in range(len(items))]

    def keep(self, score: dict[str, float]) -> bool:
        """True when every configured minimum is reached."""
        return all(limit is None or score[key] >= limit for key, limit in
                   ((self.stoi_key, self.min_stoi), (self.pesq_key, self.min_pesq),
                    (self.sisdr_key, self.min_sisdr)))
